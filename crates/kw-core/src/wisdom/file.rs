use super::record::WisdomRecord;
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The current version of the wisdom file format.
pub const WISDOM_FORMAT_VERSION: u32 = 1;

/// A wisdom file: the records of one tuning key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WisdomFile {
    /// Always `"kernel-wisdom"` (identifies the file type).
    pub format: String,
    /// Format version ([`WISDOM_FORMAT_VERSION`] when written by this version).
    pub version: u32,
    /// The tuning key.
    pub tuning_key: String,
    /// The records, one per (device, problem size).
    pub records: Vec<WisdomRecord>,
}

/// A problem with a wisdom file; always names the file.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum WisdomError {
    /// The file (or its lock) could not be read, written, locked or renamed.
    #[error("{path}: {action}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a valid wisdom file.
    #[error("{path}: not a valid wisdom file: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

fn io<'a>(path: &'a Path, action: &'static str) -> impl FnOnce(std::io::Error) -> WisdomError + 'a {
    move |source| WisdomError::Io {
        path: path.to_path_buf(),
        action,
        source,
    }
}

impl WisdomFile {
    /// An empty file for a tuning key.
    pub fn new(tuning_key: &str) -> WisdomFile {
        WisdomFile {
            format: "kernel-wisdom".into(),
            version: WISDOM_FORMAT_VERSION,
            tuning_key: tuning_key.into(),
            records: Vec::new(),
        }
    }

    /// Reads and validates a wisdom file.
    pub fn load(path: &Path) -> Result<WisdomFile, WisdomError> {
        let text = fs::read_to_string(path).map_err(io(path, "cannot read"))?;
        WisdomFile::parse(path, &text)
    }

    fn parse(path: &Path, text: &str) -> Result<WisdomFile, WisdomError> {
        let invalid = |message: String| WisdomError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let json: serde_json::Value =
            serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
        if json.get("format").and_then(|f| f.as_str()) != Some("kernel-wisdom") {
            return Err(invalid("missing `\"format\": \"kernel-wisdom\"`".into()));
        }
        match json.get("version").and_then(|v| v.as_u64()) {
            Some(v) if v >= 1 && v <= WISDOM_FORMAT_VERSION as u64 => {}
            Some(v) => {
                return Err(invalid(format!(
                    "format version {v} is newer than this kw understands (up to {WISDOM_FORMAT_VERSION})"
                )))
            }
            None => return Err(invalid("missing `version`".into())),
        }
        serde_json::from_value(json).map_err(|e| invalid(e.to_string()))
    }

    /// Writes the file atomically: a temporary file in the same directory, fsynced, then renamed.
    /// A crash or a full disk leaves the previous file intact.
    pub fn save(&self, path: &Path) -> Result<(), WisdomError> {
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.tmp-{}-{n}", std::process::id()));
        let result = (|| {
            let mut text =
                serde_json::to_string_pretty(self).map_err(|e| WisdomError::Invalid {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                })?;
            text.push('\n');
            let mut f = File::create(&tmp).map_err(io(&tmp, "cannot create"))?;
            f.write_all(text.as_bytes())
                .map_err(io(&tmp, "cannot write"))?;
            f.sync_all().map_err(io(&tmp, "cannot sync"))?;
            fs::rename(&tmp, path).map_err(io(path, "cannot replace"))
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }
}

/// The file name of a tuning key's wisdom: the key with every character other than ASCII
/// letters, digits, `-`, `_` and `.` replaced by `_` (and no leading dot), plus `.json`.
pub fn wisdom_file_name(tuning_key: &str) -> String {
    let mut s: String = tuning_key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    while s.starts_with('.') {
        s.replace_range(0..1, "_");
    }
    if s.is_empty() {
        s.push('_');
    }
    format!("{s}.json")
}

/// The first wisdom file for `tuning_key` in `dirs` that loads; files that fail to load are
/// returned in the second list (the caller reports them once) and skipped.
pub fn find_wisdom_file(
    tuning_key: &str,
    dirs: &[PathBuf],
) -> (Option<(PathBuf, WisdomFile)>, Vec<WisdomError>) {
    let mut errors = Vec::new();
    for dir in dirs {
        let path = dir.join(wisdom_file_name(tuning_key));
        if !path.exists() {
            continue;
        }
        match WisdomFile::load(&path) {
            Ok(f) => return (Some((path, f)), errors),
            Err(e) => errors.push(e),
        }
    }
    (None, errors)
}

/// When a new record replaces the one for the same (device, problem size).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplacePolicy {
    /// Only when the new record is faster.
    IfBetter,
    /// Always.
    Always,
}

/// What [`add_record`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddOutcome {
    /// No record for that (device, problem size) existed: added.
    Added,
    /// Replaced the existing record.
    Replaced,
    /// Kept the existing record (it is at least as fast).
    KeptExisting,
}

/// Adds a record to the wisdom file of its tuning key in `dir` (created when missing), under an
/// exclusive advisory lock on `KEY.json.lock`, replacing the file atomically. Concurrent writers
/// (threads or processes) lose no record.
pub fn add_record(
    dir: &Path,
    tuning_key: &str,
    record: WisdomRecord,
    policy: ReplacePolicy,
) -> Result<(PathBuf, AddOutcome), WisdomError> {
    fs::create_dir_all(dir).map_err(io(dir, "cannot create the wisdom directory"))?;
    let path = dir.join(wisdom_file_name(tuning_key));
    let lock_path = dir.join(format!("{}.lock", wisdom_file_name(tuning_key)));
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(io(&lock_path, "cannot open the lock file"))?;
    lock.lock().map_err(io(&lock_path, "cannot lock"))?;
    let mut file = if path.exists() {
        WisdomFile::load(&path)?
    } else {
        WisdomFile::new(tuning_key)
    };
    let outcome = merge_record(&mut file, record, policy);
    if outcome != AddOutcome::KeptExisting {
        file.save(&path)?;
    }
    drop(lock);
    Ok((path, outcome))
}

fn merge_record(file: &mut WisdomFile, record: WisdomRecord, policy: ReplacePolicy) -> AddOutcome {
    match file.records.iter_mut().find(|r| r.same_slot(&record)) {
        None => {
            file.records.push(record);
            AddOutcome::Added
        }
        Some(existing) => {
            let better = record.objective.median_ms < existing.objective.median_ms;
            if policy == ReplacePolicy::Always || better {
                *existing = record;
                AddOutcome::Replaced
            } else {
                AddOutcome::KeptExisting
            }
        }
    }
}

/// Combines wisdom files (from many tuning nodes) into one per tuning key, keeping the fastest
/// record per (device, problem size). Returns the merged files, in first-seen key order.
pub fn merge_files(inputs: Vec<WisdomFile>) -> Vec<WisdomFile> {
    let mut out: Vec<WisdomFile> = Vec::new();
    for input in inputs {
        let idx = match out.iter().position(|f| f.tuning_key == input.tuning_key) {
            Some(i) => i,
            None => {
                out.push(WisdomFile::new(&input.tuning_key));
                out.len() - 1
            }
        };
        for r in input.records {
            merge_record(&mut out[idx], r, ReplacePolicy::IfBetter);
        }
    }
    out
}
