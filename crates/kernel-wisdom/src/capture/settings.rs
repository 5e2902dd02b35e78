//! [`CaptureSettings`]: which launches are captured, and where the files go; parsed from the
//! `KW_CAPTURE*` environment variables or built in code.

use super::glob::glob_match;
use std::path::PathBuf;

/// Glob patterns over tuning keys, comma-separated (`*` for all kernels). Unset or empty: off.
pub const CAPTURE_ENV: &str = "KW_CAPTURE";
/// The directory captures are written to (default [`DEFAULT_CAPTURE_DIR`]).
pub const CAPTURE_DIR_ENV: &str = "KW_CAPTURE_DIR";
/// Launches of each selected kernel to skip before capturing (default 0).
pub const CAPTURE_SKIP_ENV: &str = "KW_CAPTURE_SKIP";
/// Capture even when an exact wisdom record exists (`1`/`true`/`yes`/`on` or `0`/`false`/...).
pub const CAPTURE_FORCE_ENV: &str = "KW_CAPTURE_FORCE";
/// Captures per kernel and problem size (default 1, at least 1).
pub const CAPTURE_LIMIT_ENV: &str = "KW_CAPTURE_LIMIT";
/// The default capture directory, relative to the working directory.
pub const DEFAULT_CAPTURE_DIR: &str = "captures";

/// Which launches are captured and where the files go.
///
/// ```
/// use kernel_wisdom::{set_capture_settings, CaptureSettings};
/// let mut settings = CaptureSettings::new(["vector_*"]);
/// settings.dir = std::env::temp_dir().join("my-captures");
/// settings.skip = 10; // capture the 11th launch of each selected kernel
/// set_capture_settings(Some(settings));
/// # set_capture_settings(None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureSettings {
    /// Glob patterns (`*`, `?`) over tuning keys; a kernel is captured if any matches.
    pub patterns: Vec<String>,
    /// The directory the capture files are written to (created when needed).
    pub dir: PathBuf,
    /// Launches of each selected kernel (any problem size) that are not captured before the
    /// first capture: `skip = N` captures the N+1-th launch.
    pub skip: u64,
    /// How many launches are captured per kernel and problem size (at least 1).
    pub limit: u64,
    /// Capture even when the selection found an exact wisdom record for the launch.
    pub force: bool,
}

/// An invalid `KW_CAPTURE*` value: which variable, its value, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid {var}={value:?}: {reason}")]
pub struct SettingsError {
    /// The variable.
    pub var: &'static str,
    /// Its value.
    pub value: String,
    /// What is wrong with it.
    pub reason: String,
}

impl CaptureSettings {
    /// Captures the kernels whose tuning key matches one of `patterns`, with the defaults:
    /// directory [`DEFAULT_CAPTURE_DIR`], no skip, limit 1, no force.
    pub fn new<S: Into<String>>(patterns: impl IntoIterator<Item = S>) -> CaptureSettings {
        CaptureSettings {
            patterns: patterns.into_iter().map(Into::into).collect(),
            dir: PathBuf::from(DEFAULT_CAPTURE_DIR),
            skip: 0,
            limit: 1,
            force: false,
        }
    }

    /// Whether launches of the kernel with this tuning key are captured.
    pub fn selects(&self, tuning_key: &str) -> bool {
        self.patterns.iter().any(|p| glob_match(p, tuning_key))
    }

    /// The settings from the process environment: `Ok(None)` when `KW_CAPTURE` is unset or
    /// empty (capture off).
    pub fn from_env() -> Result<Option<CaptureSettings>, SettingsError> {
        CaptureSettings::from_vars(|name| {
            std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
        })
    }

    /// The settings from variables looked up by `get` (what [`from_env`](Self::from_env) does
    /// with the environment; handy for tests).
    pub fn from_vars(
        get: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<CaptureSettings>, SettingsError> {
        let Some(patterns) = get(CAPTURE_ENV).filter(|v| !v.trim().is_empty()) else {
            return Ok(None);
        };
        let list: Vec<String> = patterns
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect();
        let invalid = |var, value: &str, reason: &str| SettingsError {
            var,
            value: value.to_string(),
            reason: reason.to_string(),
        };
        if list.is_empty() {
            return Err(invalid(CAPTURE_ENV, &patterns, "no pattern in the list"));
        }
        if let Some(bad) = list.iter().find(|p| p.chars().any(char::is_control)) {
            return Err(invalid(
                CAPTURE_ENV,
                &patterns,
                &format!("pattern {bad:?} contains a control character"),
            ));
        }
        let mut s = CaptureSettings::new(list);
        if let Some(dir) = get(CAPTURE_DIR_ENV).filter(|v| !v.is_empty()) {
            s.dir = PathBuf::from(dir);
        }
        let count = |var: &'static str, min: u64| -> Result<Option<u64>, SettingsError> {
            match get(var).filter(|v| !v.trim().is_empty()) {
                None => Ok(None),
                Some(v) => match v.trim().parse::<u64>() {
                    Ok(n) if n >= min => Ok(Some(n)),
                    Ok(_) => Err(invalid(var, &v, &format!("must be at least {min}"))),
                    Err(_) => Err(invalid(var, &v, "not a non-negative whole number")),
                },
            }
        };
        if let Some(n) = count(CAPTURE_SKIP_ENV, 0)? {
            s.skip = n;
        }
        if let Some(n) = count(CAPTURE_LIMIT_ENV, 1)? {
            s.limit = n;
        }
        if let Some(v) = get(CAPTURE_FORCE_ENV).filter(|v| !v.trim().is_empty()) {
            s.force = match v.trim().to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => true,
                "0" | "false" | "no" | "off" => false,
                _ => {
                    return Err(invalid(
                        CAPTURE_FORCE_ENV,
                        &v,
                        "expected 1/true/yes/on or 0/false/no/off",
                    ))
                }
            };
        }
        Ok(Some(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn parse(vars: &[(&str, &str)]) -> Result<Option<CaptureSettings>, SettingsError> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        CaptureSettings::from_vars(|k| map.get(k).cloned())
    }

    #[test]
    fn unset_or_empty_is_off() {
        assert_eq!(parse(&[]), Ok(None));
        assert_eq!(parse(&[(CAPTURE_ENV, " ")]), Ok(None));
        assert_eq!(parse(&[(CAPTURE_SKIP_ENV, "x")]), Ok(None));
    }

    #[test]
    fn values_parse() {
        let s = parse(&[
            (CAPTURE_ENV, "vector_*, stencil?d ,"),
            (CAPTURE_DIR_ENV, "/tmp/c"),
            (CAPTURE_SKIP_ENV, "3"),
            (CAPTURE_LIMIT_ENV, "2"),
            (CAPTURE_FORCE_ENV, "yes"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(s.patterns, vec!["vector_*", "stencil?d"]);
        assert_eq!(s.dir, PathBuf::from("/tmp/c"));
        assert_eq!((s.skip, s.limit, s.force), (3, 2, true));
        assert!(s.selects("vector_add") && s.selects("stencil2d") && !s.selects("matmul"));
        let d = parse(&[(CAPTURE_ENV, "*")]).unwrap().unwrap();
        assert_eq!(d, CaptureSettings::new(["*"]));
    }

    #[test]
    fn invalid_values_name_the_variable() {
        for (var, value) in [
            (CAPTURE_SKIP_ENV, "-1"),
            (CAPTURE_SKIP_ENV, "many"),
            (CAPTURE_LIMIT_ENV, "0"),
            (CAPTURE_FORCE_ENV, "maybe"),
            (CAPTURE_ENV, ",,"),
        ] {
            let vars = [(CAPTURE_ENV, "*"), (var, value)];
            let e = parse(&vars).unwrap_err();
            assert_eq!(e.var, var);
            assert!(e.to_string().contains(var), "{e}");
        }
    }
}
