//! Readers for Kernel Tuner's files: cache files (`.json`, `.json.gz`), T1 specifications,
//! and T4 results files (read as cache files).
//!
//! They are how the field's measured tuning data is shared; the simulation evaluator and
//! `kw space stats` read them.

mod cache;
mod t1;
mod t1_args;
mod t1_benchmark;
mod t1_expr;
mod t1_modifiers;
mod t4;
mod value_list;

pub use cache::{CacheEntry, CacheFile, Outcome};
pub use t1::T1Spec;
pub use t1_benchmark::{T1Benchmark, T1Budget};
pub use value_list::parse_value_list;

use std::path::{Path, PathBuf};
use thiserror::Error;

/// A problem with a Kernel Tuner file; always names the file.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum KtError {
    /// The file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid JSON (or gzip).
    #[error("{path}: not a valid JSON file: {message}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The parser's message (with line and column).
        message: String,
    },
    /// The JSON does not have the expected structure or content.
    #[error("{path}: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl KtError {
    pub(crate) fn format(path: &Path, message: impl Into<String>) -> KtError {
        KtError::Format {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}

/// The most a gzip-compressed Kernel Tuner file may unpack to (a bomb is an error).
const MAX_UNZIPPED: u64 = 1 << 30;

/// Reads a file, transparently un-gzipping it when it starts with the gzip magic bytes.
pub(crate) fn read_text(path: &Path) -> Result<String, KtError> {
    read_raw_text(path).map(python_json)
}

/// JSON as Python's `json.dumps` writes it, made standard JSON: a leading byte-order mark is
/// dropped, and the bare constants `NaN`, `Infinity` and `-Infinity` (which Kernel Tuner
/// writes for a metric, or a time, that is not finite) become the strings `"NaN"`,
/// `"Infinity"` and `"-Infinity"`: a time that is a string is a failed configuration, and
/// other fields holding one are not used. Text inside strings is left as it is.
pub(crate) fn python_json(mut text: String) -> String {
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    if !text.contains("NaN") && !text.contains("Infinity") {
        return text; // as read: no copy of a large file
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut in_string = false;
    let mut escaped = false;
    let mut rest = text.as_str();
    while let Some(c) = rest.chars().next() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        } else if let Some(token) = ["NaN", "Infinity", "-Infinity"]
            .into_iter()
            .find(|t| rest.starts_with(t))
        {
            out.push('"');
            out.push_str(token);
            out.push('"');
            rest = &rest[token.len()..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// The file's text, unpacked when gzip-compressed.
fn read_raw_text(path: &Path) -> Result<String, KtError> {
    use std::io::Read;
    let io = |source| KtError::Io {
        path: path.to_path_buf(),
        source,
    };
    let rules = crate::files::ReadRules::new("Kernel Tuner file", crate::files::caps::DOCUMENT);
    let bytes = crate::files::read(path, rules).map_err(|e| io(e.into_io()))?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut text = String::new();
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .take(MAX_UNZIPPED + 1)
            .read_to_string(&mut text)
            .map_err(|e| KtError::Json {
                path: path.to_path_buf(),
                message: format!("bad gzip data: {e}"),
            })?;
        if text.len() as u64 > MAX_UNZIPPED {
            return Err(KtError::Json {
                path: path.to_path_buf(),
                message: format!(
                    "gzip data unpacks to more than {} MiB: not a Kernel Tuner file",
                    MAX_UNZIPPED >> 20
                ),
            });
        }
        Ok(text)
    } else {
        String::from_utf8(bytes).map_err(|e| KtError::Json {
            path: path.to_path_buf(),
            message: format!("not UTF-8 text: {e}"),
        })
    }
}

/// Parses JSON text; a file that a crashed Kernel Tuner left ending in `,` (without its
/// closing braces) is repaired by closing it.
pub(crate) fn parse_json(path: &Path, text: &str) -> Result<serde_json::Value, KtError> {
    match serde_json::from_str(text) {
        Ok(v) => Ok(v),
        Err(first) => {
            let trimmed = text.trim_end();
            // Stopped after a result (`...},`), or before the first one (`"cache": {`).
            let body = trimmed
                .strip_suffix(',')
                .or_else(|| trimmed.ends_with('{').then_some(trimmed));
            if let Some(body) = body {
                for closing in ["}}", "}"] {
                    if let Ok(v) = serde_json::from_str(&format!("{body}{closing}")) {
                        return Ok(v);
                    }
                }
            }
            Err(KtError::Json {
                path: path.to_path_buf(),
                message: first.to_string(),
            })
        }
    }
}

/// Converts a JSON scalar to a [`crate::value::Value`].
pub(crate) fn json_value(v: &serde_json::Value) -> Option<crate::value::Value> {
    use crate::value::Value;
    match v {
        serde_json::Value::Bool(b) => Some(Value::Bool(*b)),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Some(Value::Int(i)),
            None => n.as_f64().map(Value::Float),
        },
        serde_json::Value::String(s) => Some(Value::Str(s.clone())),
        _ => None,
    }
}

/// A tuning space described by a Kernel Tuner file: a T1 spec, or a cache file's `tune_params`
/// (cache files carry no restrictions: pass them separately), or the values a T4 results
/// file's configurations hold.
pub fn load_space_spec(path: &Path) -> Result<T1Spec, KtError> {
    let text = read_text(path)?;
    let json = parse_json(path, &text)?;
    if json.get("ConfigurationSpace").is_some() {
        Ok(T1Spec::from_json(path, &json)?
            .with_valid_default(path, &json)
            .at_own_size(path, &json))
    } else if json.get("tune_params").is_some() || json.get("results").is_some() {
        let cache = CacheFile::from_json(path, &json, Some(&text))?;
        Ok(T1Spec {
            notes: Vec::new(),
            params: cache.params,
            restrictions: Vec::new(),
            kernel_name: Some(cache.kernel_name),
        })
    } else {
        // An older BAT file spells the T1 keys in lower case.
        let hint = if json.get("configurationSpace").is_some() {
            ": it has `configurationSpace`; the T1 schema spells it `ConfigurationSpace` (with \
             `TuningParameters`, `Name`, `Values`)"
        } else {
            ""
        };
        Err(KtError::format(
            path,
            format!(
                "neither a Kernel Tuner cache file (no `tune_params`), a T4 results file (no \
                 `results`) nor a T1 file (no `ConfigurationSpace`){hint}"
            ),
        ))
    }
}

/// Restrictions read from a file ([`load_restrictions`]).
#[derive(Clone, Debug, Default)]
pub struct Restrictions {
    /// The restrictions.
    pub exprs: Vec<crate::expr::Expr>,
    /// What was left out, in words (a T1 condition over a problem size not known).
    pub notes: Vec<String>,
    /// A T1 file's `TuningParameters` (none for an array of restriction strings), for the
    /// caller to set against the space the restrictions are applied to.
    pub params: Option<Vec<crate::space::Parameter>>,
}

/// Restrictions from a JSON file: an array of expression strings, or a T1 file (its
/// `Conditions`). A T1 condition over the problem size (`ProblemSize[i]`) is taken at `size`
/// when given (the size of the results it restricts, e.g. a cache file's `problem_size`),
/// else at the T1 file's own `ProblemSize`; left out, with a note, when the size taken has
/// no such axis.
pub fn load_restrictions(path: &Path, size: Option<&[i64]>) -> Result<Restrictions, KtError> {
    let text = read_text(path)?;
    let json = parse_json(path, &text)?;
    if json.get("ConfigurationSpace").is_some() {
        let spec = T1Spec::from_json(path, &json)?;
        let spec = match size {
            Some(s) => spec.at_size(path, Some(s.to_vec()), "the results do not give"),
            None => spec.at_own_size(path, &json),
        };
        return Ok(Restrictions {
            exprs: spec.restrictions,
            notes: spec.notes,
            params: Some(spec.params),
        });
    }
    let items = json.as_array().ok_or_else(|| {
        KtError::format(
            path,
            "expected a JSON array of restriction strings or a T1 file",
        )
    })?;
    let exprs = items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let s = item.as_str().ok_or_else(|| {
                KtError::format(path, format!("restriction #{} is not a string", i + 1))
            })?;
            // Kernel Tuner's restriction strings are Python, as a T1 file's conditions.
            t1_expr::parse_t1(s, false)
                .map_err(|e| KtError::format(path, format!("restriction #{}: {e}", i + 1)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Restrictions {
        exprs,
        notes: Vec::new(),
        params: None,
    })
}
