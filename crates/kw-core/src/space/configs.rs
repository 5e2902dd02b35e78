//! Between a [`TuningSpace`]'s points and configurations: the configuration of a point, the
//! point of a configuration (checked), the default, violated restrictions, keys and the
//! space's fingerprint.

use super::{Point, SpaceError, TuningSpace};
use crate::config::Config;

impl TuningSpace {
    /// The configuration (names and values) of a point.
    pub fn config(&self, point: &[u32]) -> Config {
        Config(
            self.params
                .iter()
                .zip(point)
                .map(|(p, &i)| (p.name.clone(), p.values[i as usize].clone()))
                .collect(),
        )
    }

    /// The point of a configuration given by names and values (every parameter must be present
    /// with one of its declared values, numbers compared by value: [`super::Parameter::index_of`]; extra
    /// names are refused). Validity is not checked.
    pub fn point(&self, config: &Config) -> Result<Point, String> {
        for (i, (name, _)) in config.iter().enumerate() {
            if !self.by_name.contains_key(name) {
                return Err(format!("`{name}` is not a parameter of this space"));
            }
            if config.iter().take(i).any(|(n, _)| n == name) {
                return Err(format!("parameter `{name}` is given twice"));
            }
        }
        self.params
            .iter()
            .zip(&self.index)
            .map(|(p, index)| {
                let v = config
                    .get(&p.name)
                    .ok_or_else(|| format!("parameter `{}` is missing", p.name))?;
                index
                    .index_of(&p.values, v)
                    .map(|i| i as u32)
                    .ok_or_else(|| format!("{v} is not a declared value of `{}`", p.name))
            })
            .collect()
    }

    /// The point of the parameters' defaults (which may break a restriction: see [`TuningSpace::violations`]).
    pub fn default_point(&self) -> Point {
        self.params
            .iter()
            .map(|p| p.values.iter().position(|v| *v == p.default).unwrap_or(0) as u32)
            .collect()
    }

    /// Checks that `config` is a valid configuration of this space: every parameter given
    /// with a declared value, and no restriction broken. Returns its point, or why not. The
    /// one check behind the runtime's explicit configurations and wisdom records.
    pub fn check_config(&self, config: &Config) -> Result<Point, String> {
        let point = self.point(config)?;
        if !self.contains(&point) {
            let broken = self.violations(&point).map_err(|e| e.to_string())?;
            return Err(format!("it breaks {}", broken.join(", ")));
        }
        Ok(point)
    }

    /// The restrictions (as text) that a full configuration breaks, or the evaluation error
    /// of one that cannot be evaluated there when no other is broken (as the space's count
    /// decides).
    pub fn violations(&self, point: &[u32]) -> Result<Vec<String>, SpaceError> {
        let mut out = Vec::new();
        let mut unevaluable = None;
        for ri in 0..self.restrictions.len() {
            match self.check(ri, point, self.params.len()) {
                Ok(true) => {}
                Ok(false) => out.push(self.restrictions[ri].quoted()),
                Err(e) => unevaluable = unevaluable.or(Some(e)),
            }
        }
        match unevaluable {
            Some(e) if out.is_empty() => Err(e),
            _ => Ok(out),
        }
    }

    /// Kernel Tuner's cache key of a point: values as Python prints them, joined by `,`.
    pub fn kt_key(&self, point: &[u32]) -> String {
        let parts: Vec<String> = self
            .params
            .iter()
            .zip(point)
            .map(|(p, &i)| p.values[i as usize].python_str())
            .collect();
        parts.join(",")
    }

    /// A fingerprint of the space: parameter names and values (not restrictions), as a stable hash.
    pub fn fingerprint(&self) -> String {
        let text = serde_json::to_string(
            &self
                .params
                .iter()
                .map(|p| (&p.name, &p.values))
                .collect::<Vec<_>>(),
        )
        .unwrap_or_default();
        format!("{:016x}", crate::config::fnv1a64(text.as_bytes()))
    }
}
