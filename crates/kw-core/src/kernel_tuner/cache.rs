use super::{json_value, parse_json, read_text, KtError};
use crate::space::Parameter;
use crate::value::Value;
use std::path::Path;

/// What a cache entry records for its configuration.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The objective value (e.g. time in ms).
    Value(f64),
    /// The configuration failed (compile, runtime or invalid), with Kernel Tuner's reason.
    Failed(String),
}

/// One configuration of a cache file.
#[derive(Debug, Clone)]
pub struct CacheEntry {
    /// The cache key (`"16,1,1,..."`).
    pub key: String,
    /// Parameter values, in `tune_params_keys` order.
    pub values: Vec<Value>,
    /// The objective value or the failure.
    pub outcome: Outcome,
    /// Per-repetition times (ms), when recorded.
    pub times: Vec<f64>,
}

/// A Kernel Tuner cache file: the parameters and every measured configuration.
#[derive(Debug, Clone)]
pub struct CacheFile {
    /// `device_name`.
    pub device_name: String,
    /// `kernel_name`.
    pub kernel_name: String,
    /// `problem_size`, as integers (a scalar becomes one dimension).
    pub problem_size: Vec<i64>,
    /// The objective (`time` unless the file says otherwise).
    pub objective: String,
    /// The file's `objective_higher_is_better` (false when absent): the objective is
    /// maximised (a throughput). Its entries' values are then kept as their reciprocals, so
    /// that lower is better in every entry, whatever the objective (what the simulation,
    /// priors and [`CacheFile::optimum`] assume); a value that is not positive is kept as it
    /// is, which the simulation and priors refuse.
    pub higher_is_better: bool,
    /// Parameters in `tune_params_keys` order (defaults: first values).
    pub params: Vec<Parameter>,
    /// The entries, in file order (keys sorted).
    pub entries: Vec<CacheEntry>,
}

impl CacheFile {
    /// Reads a cache file (`.json` or gzip-compressed), repairing a missing end after a crashed
    /// writer; a T4 results file is read as one (its results' configurations).
    pub fn load(path: &Path) -> Result<CacheFile, KtError> {
        let text = read_text(path)?;
        let json = parse_json(path, &text)?;
        CacheFile::from_json(path, &json, Some(&text))
    }

    /// The cache file (or T4 results file) `json`, read from `path`; `text`, its JSON text,
    /// gives a T4 file's parameters their order.
    pub(crate) fn from_json(
        path: &Path,
        json: &serde_json::Value,
        text: Option<&str>,
    ) -> Result<CacheFile, KtError> {
        let fmt = |m: String| KtError::format(path, m);
        let obj = json
            .as_object()
            .ok_or_else(|| fmt("expected a JSON object at the top level".into()))?;
        if super::t4::is_t4(obj) {
            return super::t4::from_t4(path, obj, text);
        }
        schema_note(path, "cache file", obj.get("schema_version"));
        let text_field = |name: &str| {
            obj.get(name)
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string()
        };
        let keys: Vec<String> = obj
            .get("tune_params_keys")
            .and_then(|v| v.as_array())
            .ok_or_else(|| fmt("missing `tune_params_keys` (a list of parameter names)".into()))?
            .iter()
            .map(|k| k.as_str().map(String::from))
            .collect::<Option<_>>()
            .ok_or_else(|| fmt("`tune_params_keys` must hold strings".into()))?;
        if keys.is_empty() {
            return Err(fmt(
                "`tune_params_keys` is empty: it must name the tuned parameters (every entry \
                 would be the same configuration)"
                    .into(),
            ));
        }
        let tune_params = obj
            .get("tune_params")
            .and_then(|v| v.as_object())
            .ok_or_else(|| fmt("missing `tune_params` (parameter name -> values)".into()))?;
        let mut params = Vec::new();
        for k in &keys {
            let values: Vec<Value> = tune_params
                .get(k)
                .and_then(|v| v.as_array())
                .ok_or_else(|| fmt(format!("`tune_params` has no list of values for `{k}`")))?
                .iter()
                .map(json_value)
                .collect::<Option<_>>()
                .ok_or_else(|| fmt(format!("values of `{k}` must be numbers, strings or bools")))?;
            params.push(Parameter::new(k, values));
        }
        let problem_size = match obj.get("problem_size") {
            Some(serde_json::Value::Array(a)) => a.iter().filter_map(|v| v.as_i64()).collect(),
            Some(v) => v.as_i64().into_iter().collect(),
            None => Vec::new(),
        };
        let objective = obj
            .get("objective")
            .and_then(|v| v.as_str())
            .unwrap_or("time")
            .to_string();
        let higher_is_better =
            direction(path, &objective, obj.get("objective_higher_is_better")).map_err(fmt)?;
        let mut entries = Vec::new();
        if let Some(cache) = obj.get("cache") {
            let cache = cache
                .as_object()
                .ok_or_else(|| fmt("`cache` must be an object".into()))?;
            for (key, rec) in cache {
                let rec = rec
                    .as_object()
                    .ok_or_else(|| fmt(format!("cache entry `{key}` is not an object")))?;
                let values: Vec<Value> = keys
                    .iter()
                    .map(|k| rec.get(k).and_then(json_value))
                    .collect::<Option<_>>()
                    .ok_or_else(|| fmt(format!("cache entry `{key}` lacks a parameter value")))?;
                let outcome = outcome(rec, &objective)
                    .ok_or_else(|| fmt(format!("cache entry `{key}` has no usable `{objective}`")))?
                    .lower_is_better(higher_is_better);
                let times = rec
                    .get("times")
                    .and_then(|t| t.as_array())
                    .map(|a| a.iter().filter_map(|x| x.as_f64()).collect())
                    .unwrap_or_default();
                entries.push(CacheEntry {
                    key: key.clone(),
                    values,
                    outcome,
                    times,
                });
            }
        }
        Ok(CacheFile {
            device_name: text_field("device_name"),
            kernel_name: text_field("kernel_name"),
            problem_size,
            objective,
            higher_is_better,
            params,
            entries,
        })
    }

    /// The best (lowest) objective value among successful entries.
    pub fn optimum(&self) -> Option<f64> {
        self.entries
            .iter()
            .filter_map(|e| match e.outcome {
                Outcome::Value(v) => Some(v),
                Outcome::Failed(_) => None,
            })
            .min_by(f64::total_cmp)
    }
}

fn outcome(rec: &serde_json::Map<String, serde_json::Value>, objective: &str) -> Option<Outcome> {
    if let Some(err) = rec.get("__error__") {
        let reason = err
            .as_str()
            .map(String::from)
            .unwrap_or_else(|| err.to_string());
        return Some(Outcome::Failed(reason));
    }
    match rec.get(objective)? {
        // Python's `NaN` / `Infinity` (made strings when read, `python_json`): no measurement.
        serde_json::Value::String(s) if matches!(s.as_str(), "NaN" | "Infinity" | "-Infinity") => {
            Some(Outcome::Failed(format!("{s} (not a finite value)")))
        }
        serde_json::Value::String(s) => Some(Outcome::Failed(s.clone())),
        serde_json::Value::Number(n) => n.as_f64().map(Outcome::measured),
        _ => None,
    }
}

impl Outcome {
    /// A measured value: a failure when not finite or 1e20 or more (older data's failure mark).
    pub(super) fn measured(v: f64) -> Outcome {
        if v >= 1e20 || !v.is_finite() {
            Outcome::Failed("InvalidConfig (1e20)".into())
        } else {
            Outcome::Value(v)
        }
    }

    /// The outcome with lower better: a maximised objective's positive value becomes its
    /// reciprocal; one that is not stays as it is, for the simulation and priors to refuse by
    /// name (`kw space stats` needs none).
    pub(super) fn lower_is_better(self, higher_is_better: bool) -> Outcome {
        match self {
            Outcome::Value(v) if higher_is_better && v > 0.0 => Outcome::Value(1.0 / v),
            other => other,
        }
    }
}

/// The cache schema versions this reader knows: Kernel Tuner writes `"schema_version":
/// "1.0.0"` in its cache files (older files have none, and read the same).
const KNOWN_SCHEMA_MAJOR: u64 = 1;

/// Warns once when a file's `schema_version` (a Kernel Tuner cache's, a T4 file's: `what`)
/// is not one this reader knows (a newer major version, or not a version at all): the file
/// is still read as version 1, which its fields may no longer mean, and the user is told so
/// rather than left to guess.
pub(super) fn schema_note(path: &Path, what: &str, version: Option<&serde_json::Value>) {
    let (text, why) = match version {
        None | Some(serde_json::Value::Null) => return,
        Some(serde_json::Value::String(s)) => (
            format!("`{}`", crate::diag::one_line(s, 40)),
            version_problem(s),
        ),
        Some(serde_json::Value::Number(n)) => {
            let newer = n
                .as_f64()
                .is_some_and(|v| v >= (KNOWN_SCHEMA_MAJOR + 1) as f64);
            let bad = n.as_f64().is_none_or(|v| v < 0.0);
            (
                n.to_string(),
                if newer {
                    Some("newer than the versions this program reads (1.x)")
                } else if bad {
                    Some("not a version number")
                } else {
                    None
                },
            )
        }
        Some(other) => (
            crate::diag::one_line(&other.to_string(), 40),
            Some("not a version number (a string such as \"1.0.0\")"),
        ),
    };
    if let Some(why) = why {
        crate::diag::warn_once(&format!(
            "{}: {what} `schema_version` {text} is {why}: read as version 1",
            crate::diag::one_line(&path.display().to_string(), 4000)
        ));
    }
}

/// What is wrong with a version string for this reader: `None` for `1`, `1.0`, `1.0.0`,
/// `01.2` (dot-separated numbers, major 1 or below).
fn version_problem(text: &str) -> Option<&'static str> {
    let parts: Vec<&str> = text.trim().split('.').collect();
    if text.trim().is_empty() {
        return Some("empty");
    }
    if parts
        .iter()
        .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return Some("not a version number (numbers separated by dots, such as 1.0.0)");
    }
    // Digits only: a major number too long for 64 bits is newer still.
    match parts[0].parse::<u64>() {
        Ok(m) if m <= KNOWN_SCHEMA_MAJOR => None,
        _ => Some("newer than the versions this program reads (1.x)"),
    }
}

/// The objective's direction from a file's `objective_higher_is_better` (`flag`): absent,
/// minimised, with a warning once when the objective is not `time` (Kernel Tuner's files
/// name the objective but not its direction).
pub(super) fn direction(
    path: &Path,
    objective: &str,
    flag: Option<&serde_json::Value>,
) -> Result<bool, String> {
    match flag {
        None | Some(serde_json::Value::Null) => {
            if objective != "time" {
                crate::diag::warn_once(&format!(
                    "{}: the objective `{objective}` is taken as minimised (lower is better): \
                     the file does not say (`objective_higher_is_better`)",
                    path.display()
                ));
            }
            Ok(false)
        }
        Some(serde_json::Value::Bool(b)) => Ok(*b),
        Some(other) => Err(format!(
            "`objective_higher_is_better` must be true or false, not {other}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::version_problem;

    #[test]
    fn schema_versions_are_read_as_dotted_numbers() {
        for ok in ["1", "1.0", "1.0.0", "01.2", "0.9"] {
            assert_eq!(version_problem(ok), None, "{ok}");
        }
        for newer in ["2.0.0", "10", "99999999999999999999.0"] {
            assert!(
                version_problem(newer).is_some_and(|w| w.starts_with("newer")),
                "{newer}"
            );
        }
        assert_eq!(version_problem(""), Some("empty"));
        for bad in ["1.5abc", "v1", "1..0", "one", "-1"] {
            assert!(
                version_problem(bad).is_some_and(|w| w.starts_with("not a version")),
                "{bad}"
            );
        }
    }
}
