use crate::config::Config;
use crate::space::{Parameter, TuningSpace};
use serde::{Deserialize, Serialize};

/// The device a record was tuned on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WisdomDevice {
    /// Device name as the driver reports it (`NVIDIA H100 80GB HBM3`).
    pub name: String,
    /// Vendor.
    #[serde(default)]
    pub vendor: String,
    /// Backend: `cuda` or `opencl`.
    pub backend: String,
    /// Architecture (`sm_90` for CUDA; the OpenCL backend's architecture string).
    pub architecture: String,
    /// Driver version.
    #[serde(default)]
    pub driver: String,
}

impl WisdomDevice {
    /// The record's description of `device`.
    pub fn of(device: &crate::device::DeviceInfo) -> WisdomDevice {
        WisdomDevice {
            name: device.name.clone(),
            vendor: device.vendor.clone(),
            backend: device.backend.as_str().into(),
            architecture: device.architecture.clone(),
            driver: device.driver_version.clone(),
        }
    }
}

/// The measured objective of a record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
pub struct Objective {
    /// Median kernel time in milliseconds (lower is better).
    pub median_ms: f64,
    /// Number of timed samples behind the median.
    pub samples: u32,
    /// The objective tuning optimised when it was not the time ([`crate::objective`]): its
    /// name (`GFLOP/s`). `None`: the time (and in records written before this field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// That objective's value for this configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// Whether higher values of that objective are better.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub maximize: bool,
    /// The winner re-measured against the default, interleaved, before the record was
    /// written. `None` in records written before this field and where none ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<Confirmation>,
}

/// The winner and the default measured in alternation (`kw tune`'s confirmation): how much
/// faster the record's configuration is than the default, with its spread.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
pub struct Confirmation {
    /// Rounds of alternating measurements (each round: both configurations, once each).
    pub rounds: u32,
    /// The default configuration's median time over the rounds, in milliseconds.
    pub default_median_ms: f64,
    /// The record's configuration's median time over the rounds, in milliseconds.
    pub median_ms: f64,
    /// The default's time over the record's (above 1: the record is faster), the median of
    /// the rounds' ratios.
    pub speedup: f64,
    /// The lower end of the confidence interval of [`Confirmation::speedup`].
    pub speedup_low: f64,
    /// The upper end of that interval.
    pub speedup_high: f64,
    /// The confidence of the interval (0.95: 95%).
    pub confidence: f64,
}

impl Objective {
    /// A score where lower is better, comparable between `self` and `other` when both were
    /// tuned for the same objective (its value, negated when maximised); else the median
    /// times.
    pub fn scores(&self, other: &Objective) -> (f64, f64) {
        match (&self.name, self.value, &other.name, other.value) {
            (Some(a), Some(x), Some(b), Some(y)) if a == b && self.maximize == other.maximize => {
                if self.maximize {
                    (-x, -y)
                } else {
                    (x, y)
                }
            }
            _ => (self.median_ms, other.median_ms),
        }
    }
}

/// The tuning space a record was tuned in: parameter names and values, and their hash.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpaceFingerprint {
    /// [`TuningSpace::fingerprint`].
    pub hash: String,
    /// The parameters (names, declared values, defaults), in order.
    pub parameters: Vec<Parameter>,
}

impl SpaceFingerprint {
    /// The fingerprint of a space.
    pub fn of(space: &TuningSpace) -> SpaceFingerprint {
        SpaceFingerprint {
            hash: space.fingerprint(),
            parameters: space.params().to_vec(),
        }
    }
}

/// Where a record came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
pub struct Provenance {
    /// When it was tuned (RFC 3339).
    #[serde(default)]
    pub date: String,
    /// Host name of the tuning machine.
    #[serde(default)]
    pub host: String,
    /// The tool that tuned it (`kernel-wisdom 0.1.0`; older records: `0.1.0`).
    #[serde(default)]
    pub tool_version: String,
    /// Search strategy.
    #[serde(default)]
    pub strategy: String,
    /// Configurations evaluated.
    #[serde(default)]
    pub evaluations: u64,
    /// Capture file the tuning replayed.
    #[serde(default)]
    pub capture_file: String,
    /// Checksum of that capture file.
    #[serde(default)]
    pub capture_checksum: String,
    /// Whether the tuning checked every configuration's output against the capture's
    /// reference: `Some(true)` verified; `Some(false)` tuned UNVERIFIED (`kw tune
    /// --allow-unverified` or `--no-verify`, reason in
    /// [`Provenance::unverified_reason`]); `None` in records written before this field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
    /// Why the record is unverified (empty when it is verified).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub unverified_reason: String,
    /// What "verified" meant: the tolerance each output buffer was compared with
    /// ([`crate::tolerance`]), by buffer name. Empty in records written before this field
    /// and in records tuned without verification.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub tolerances: std::collections::BTreeMap<String, crate::tolerance::Tolerance>,
    /// How the record was made: empty for offline tuning (`kw tune`, and records written
    /// before this field); [`ORIGIN_ONLINE`] for a record tuned inside a running application
    /// (`KW_TUNE=online`). Unknown values load as they are.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub origin: String,
    /// For an online record published to processes that share a wisdom directory
    /// (`KW_TUNE_RANKS=shared`): the launch index (of this kernel at this problem size, counted
    /// from 1 in each process) from which those processes use it. `None` elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adopt_at: Option<u64>,
}

/// [`Provenance::origin`] of records tuned inside a running application.
pub const ORIGIN_ONLINE: &str = "online";

impl Provenance {
    /// Whether the record was tuned online ([`ORIGIN_ONLINE`]).
    pub fn is_online(&self) -> bool {
        self.origin == ORIGIN_ONLINE
    }
}

/// Another configuration measured at a record's problem size on its device, with its time
/// there (the record's configuration was the fastest). The runtime may take one at a size
/// nobody tuned, where the record's configuration would leave more of the device idle in its
/// last wave of blocks ([`WisdomRecord::alternates`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Alternate {
    /// The configuration.
    pub config: Config,
    /// Its median time at the record's problem size, in milliseconds, on the same clock as
    /// the record's [`Objective::median_ms`].
    pub median_ms: f64,
}

/// One tuned configuration for (device, problem size).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WisdomRecord {
    /// The winning configuration.
    pub config: Config,
    /// The problem size it was tuned for.
    pub problem_size: Vec<i64>,
    /// The device it was tuned on.
    pub device: WisdomDevice,
    /// Its measured objective.
    pub objective: Objective,
    /// The tuning space it was tuned in.
    pub space: SpaceFingerprint,
    /// Where it came from.
    #[serde(default)]
    pub provenance: Provenance,
    /// Other configurations measured at this size (none in records written before this
    /// field, or by a tuning that kept none): the selection's candidates at sizes between
    /// records ([`Alternate`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternates: Vec<Alternate>,
}

impl WisdomRecord {
    /// True when both records are for the same device (name and backend) and problem size.
    pub fn same_slot(&self, other: &WisdomRecord) -> bool {
        self.device.name == other.device.name
            && self.device.backend == other.device.backend
            && trim_ones(&self.problem_size) == trim_ones(&other.problem_size)
    }

    /// Checks what every record must satisfy whatever the kernel: a time that is a positive
    /// finite number of milliseconds ([`crate::objective::valid_time`]), a problem size with at
    /// least one axis, each at least 1, and a recorded space (when there is one) that names
    /// each parameter once, with its default among its values. Returns why not.
    pub fn validate(&self) -> Result<(), String> {
        let ms = self.objective.median_ms;
        if !crate::objective::valid_time(ms) {
            return Err(format!("objective {ms} ms is not a positive finite time"));
        }
        if self.problem_size.is_empty() {
            return Err("the problem size has no axis".into());
        }
        if let Some(a) = self.problem_size.iter().find(|&&a| a < 1) {
            return Err(format!(
                "problem size {:?} has an axis of {a} (every axis must be at least 1)",
                self.problem_size
            ));
        }
        // The recorded space as a tuning space declares it (it names the defaults that
        // `kw wisdom show` and `explain` report).
        let recorded = &self.space.parameters;
        for (i, p) in recorded.iter().enumerate() {
            if recorded[..i].iter().any(|q| q.name == p.name) {
                return Err(format!(
                    "parameter `{}` is given twice in its recorded tuning space",
                    p.name
                ));
            }
            if !p
                .values
                .iter()
                .any(|v| v == &p.default || v.same(&p.default))
            {
                return Err(format!(
                    "the default {} of `{}` is not among its values in its recorded tuning space",
                    p.default, p.name
                ));
            }
        }
        for (i, a) in self.alternates.iter().enumerate() {
            if !crate::objective::valid_time(a.median_ms) {
                return Err(format!(
                    "alternate #{} ({}): {} ms is not a positive finite time",
                    i + 1,
                    a.config.key(),
                    a.median_ms
                ));
            }
        }
        Ok(())
    }

    /// Leaves out the alternates the runtime could never use well, and says why for each:
    /// a time that is not a positive finite number, the record's own configuration (or one
    /// given twice), a parameter or value the record's recorded space does not declare.
    pub fn drop_bad_alternates(&mut self) -> Vec<String> {
        let mut notes = Vec::new();
        let mut kept: Vec<Alternate> = Vec::with_capacity(self.alternates.len());
        for (i, a) in std::mem::take(&mut self.alternates).into_iter().enumerate() {
            let why = if !crate::objective::valid_time(a.median_ms) {
                Some(format!("{} ms is not a positive finite time", a.median_ms))
            } else if same_config(&a.config, &self.config) {
                Some("it is the record's own configuration".to_string())
            } else if kept.iter().any(|k| same_config(&k.config, &a.config)) {
                Some("it is given twice".to_string())
            } else {
                self.undeclared(&a.config)
            };
            match why {
                Some(why) => notes.push(format!(
                    "alternate #{} ({}) left out: {why}",
                    i + 1,
                    a.config.key()
                )),
                None => kept.push(a),
            }
        }
        self.alternates = kept;
        notes
    }

    /// A parameter or value of `config` that the record's recorded space does not declare
    /// (`None` when every one is declared, or no space is recorded).
    fn undeclared(&self, config: &Config) -> Option<String> {
        if self.space.parameters.is_empty() {
            return None; // no recorded space to check against
        }
        for (name, value) in config.iter() {
            match self.space.parameters.iter().find(|p| p.name == name) {
                None => {
                    return Some(format!(
                        "parameter `{name}` is not in the record's own tuning space"
                    ))
                }
                Some(p) if !p.values.contains(value) => {
                    return Some(format!(
                        "value {value} of `{name}` is not declared in the record's own tuning space"
                    ))
                }
                Some(_) => {}
            }
        }
        None
    }

    /// What makes the record unusable whatever the current space is: what
    /// [`WisdomRecord::validate`] refuses, or a configuration value its own recorded tuning
    /// space does not declare. `None` for a sound record.
    pub fn defect(&self) -> Option<String> {
        if let Err(why) = self.validate() {
            return Some(why);
        }
        self.undeclared(&self.config)
    }

    /// Gives the record the default value of each parameter of `space` its configuration
    /// lacks: a parameter added to a kernel after its records were written (gemm's `KSPLIT`)
    /// has the default that does what the kernel did before, so old records keep their
    /// meaning. The record's own recorded space gets the parameter too, with that one value (as
    /// it was, in effect). Parameters the record has that the space lacks are left, and make it
    /// unusable ([`WisdomRecord::check_against`]).
    pub fn add_new_parameters(&mut self, space: &TuningSpace) {
        self.add_new_parameters_noting(space, &mut |_| {});
    }

    /// [`WisdomRecord::add_new_parameters`], calling `lacked` with each parameter of `space`
    /// the configuration lacks although its recorded space declares it: no parameter added
    /// since, but a record written or edited without it (an empty configuration), which then
    /// takes the default too.
    pub fn add_new_parameters_noting(
        &mut self,
        space: &TuningSpace,
        lacked: &mut dyn FnMut(&Parameter),
    ) {
        for p in space.params() {
            if self.config.get(&p.name).is_none()
                && self.space.parameters.iter().any(|q| q.name == p.name)
            {
                lacked(p);
            }
        }
        for a in &mut self.alternates {
            for p in space.params() {
                if a.config.get(&p.name).is_none() {
                    a.config.set(&p.name, p.default.clone());
                }
            }
        }
        for p in space.params() {
            if self.config.get(&p.name).is_some() {
                continue;
            }
            self.config.set(&p.name, p.default.clone());
            let recorded = &mut self.space.parameters;
            if !recorded.is_empty() && !recorded.iter().any(|q| q.name == p.name) {
                recorded.push(Parameter {
                    values: vec![p.default.clone()],
                    ..p.clone()
                });
            }
        }
    }

    /// Checks that the record's configuration is a valid configuration of `space` made only of
    /// declared parameter values (wisdom is data, never code). Returns why not.
    pub fn check_against(&self, space: &TuningSpace) -> Result<crate::space::Point, String> {
        space.check_config(&self.config)
    }
}

/// Whether two configurations set the same parameters to the same values, in any order.
fn same_config(a: &Config, b: &Config) -> bool {
    a.iter().count() == b.iter().count() && a.iter().all(|(name, value)| b.get(name) == Some(value))
}

/// A problem size without trailing 1s (so `[1024]` and `[1024, 1, 1]` are the same size).
pub(crate) fn trim_ones(size: &[i64]) -> &[i64] {
    let mut end = size.len();
    while end > 0 && size[end - 1] == 1 {
        end -= 1;
    }
    &size[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verification_is_optional_in_provenance() {
        // A record's provenance as earlier versions wrote it: no verification fields.
        let old: Provenance = serde_json::from_str(
            r#"{"date": "2026-01-01T00:00:00Z", "strategy": "random", "evaluations": 3}"#,
        )
        .unwrap();
        assert_eq!(old.verified, None);
        assert_eq!(old.unverified_reason, "");
        // Offline, and no switch launch: neither field is written for such a record.
        assert!(!old.is_online() && old.adopt_at.is_none());
        let text = serde_json::to_string(&old).unwrap();
        assert!(
            !text.contains("origin") && !text.contains("adopt_at"),
            "{text}"
        );
        let online = Provenance {
            origin: ORIGIN_ONLINE.into(),
            adopt_at: Some(300),
            ..Provenance::default()
        };
        let back: Provenance =
            serde_json::from_str(&serde_json::to_string(&online).unwrap()).unwrap();
        assert!(back.is_online() && back.adopt_at == Some(300));
        assert!(!serde_json::to_string(&old).unwrap().contains("verified"));

        let unverified = Provenance {
            verified: Some(false),
            unverified_reason: "buffer `c` has no reference".into(),
            ..Provenance::default()
        };
        let text = serde_json::to_string(&unverified).unwrap();
        assert!(text.contains(r#""verified":false"#), "{text}");
        assert_eq!(
            serde_json::from_str::<Provenance>(&text).unwrap(),
            unverified
        );
    }
}
