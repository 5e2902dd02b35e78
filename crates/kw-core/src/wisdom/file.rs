use super::record::WisdomRecord;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs::{self, File};
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
    /// Records of the file that were left out when it was loaded, each with why (a duplicate
    /// key, a time that is not a positive finite number, a problem size with an axis below 1,
    /// ...): "record #N: why". Never written.
    #[serde(skip)]
    pub rejected: Vec<String>,
    /// Alternates of loaded records that were left out, each with why (a time that is not a
    /// positive finite number, the record's own configuration, a parameter or value the
    /// record's recorded space lacks): "record #N: alternate #K (CONFIG) left out: why". The
    /// record itself is kept. Never written.
    #[serde(skip)]
    pub notes: Vec<String>,
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
    /// The file cannot be read as a wisdom file (missing, not a regular file, too large,
    /// unreadable).
    #[error(transparent)]
    File(#[from] crate::files::FileError),
    /// A record to be written is invalid ([`WisdomRecord::validate`], or a tolerance that is
    /// not a finite number, 0 or more): it is not written (no kw could read the file back).
    #[error("{path}: refusing to write an invalid record: {message}")]
    InvalidRecord {
        /// The file it was to be written to.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// Two tuning keys share a file name ([`wisdom_file_name`] replaces the characters a file
    /// name cannot hold with `_`: `conv/fwd` and `conv_fwd`): the file holds the other key's
    /// records, which are neither mixed with this key's nor replaced.
    #[error("{path}: holds the wisdom of tuning key `{in_file}`, not of `{key}`, whose file name is the same: not mixing or replacing another key's records (give one of the kernels another tuning key)")]
    KeyCollision {
        /// The file.
        path: PathBuf,
        /// The tuning key the file holds (or the other key written to it).
        in_file: String,
        /// The tuning key being read or written.
        key: String,
    },
    /// A record of the file was left out when it was loaded ([`WisdomFile::rejected`]); the
    /// file's other records are used.
    #[error("{path}: {message} (the record is ignored; the file's other records are used)")]
    RecordLeftOut {
        /// The file.
        path: PathBuf,
        /// Which record, and why.
        message: String,
    },
    /// An alternate of a record was left out when the file was loaded
    /// ([`WisdomFile::notes`]); the record is used without it.
    #[error("{path}: {message}")]
    AlternateLeftOut {
        /// The file.
        path: PathBuf,
        /// Which record and alternate, and why.
        message: String,
    },
    /// The file would be larger than a wisdom file may be ([`crate::files::caps::WISDOM`]):
    /// not written, since no kw could read it back.
    #[error("{path}: not written: {records} record(s) make {bytes} bytes, more than the {limit} bytes a wisdom file may have (keep fewer records per tuning key, e.g. merge per device)")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size as it would be written.
        bytes: u64,
        /// The most a wisdom file may have.
        limit: u64,
        /// Its records.
        records: usize,
    },
    /// The file has no room for one more record (found before a tuning run, so that its
    /// record is not lost after the search).
    #[error("{path}: no room for one more record: its {records} record(s) and one more like its largest would make {bytes} bytes, more than the {limit} bytes a wisdom file may have (keep fewer records per tuning key, e.g. merge per device, or tune into another wisdom directory)")]
    NoRoom {
        /// The file.
        path: PathBuf,
        /// Its records now.
        records: usize,
        /// Its size with one more record.
        bytes: u64,
        /// The most a wisdom file may have.
        limit: u64,
    },
    /// Some records of the file are invalid, so it is not rewritten (that would drop them).
    #[error("{path}: not rewriting a wisdom file with invalid records ({}); fix or remove them", rejected.join("; "))]
    HasInvalidRecords {
        /// The file.
        path: PathBuf,
        /// The invalid records and why.
        rejected: Vec<String>,
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
            rejected: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Reads and validates a wisdom file (a UTF-8 byte-order mark is accepted): a regular
    /// file (never a FIFO or a device) of at most [`crate::files::caps::WISDOM`] bytes that
    /// others than its owner's group cannot write. Each record is checked on its own
    /// ([`WisdomRecord::validate`], and no JSON object in it names a key twice); invalid
    /// records are left out and listed in [`WisdomFile::rejected`].
    pub fn load(path: &Path) -> Result<WisdomFile, WisdomError> {
        Self::load_bytes(path).map(|(f, _)| f)
    }

    /// [`WisdomFile::load`], and the file's bytes.
    fn load_bytes(path: &Path) -> Result<(WisdomFile, Vec<u8>), WisdomError> {
        use crate::files::{self, ReadRules};
        let (file, meta) =
            files::open_regular(path, ReadRules::new("wisdom file", files::caps::WISDOM))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = meta.permissions().mode();
            if mode & 0o002 != 0 {
                return Err(WisdomError::Invalid {
                    path: path.to_path_buf(),
                    message: format!(
                        "anyone may write it (mode {:o}), so it is not used; run `chmod o-w {}`",
                        mode & 0o7777,
                        path.display()
                    ),
                });
            }
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        use std::io::Read;
        file.take(files::caps::WISDOM)
            .read_to_end(&mut bytes)
            .map_err(io(path, "cannot read"))?;
        WisdomFile::parse(path, &bytes).map(|f| (f, bytes))
    }

    /// Parses the bytes of a wisdom file (`path` names it in errors); see [`WisdomFile::load`].
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<WisdomFile, WisdomError> {
        let invalid = |message: String| WisdomError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        /// The identifying fields, read first (the records skipped without allocating) so
        /// that a newer format is reported as such rather than as a field it does not know.
        #[derive(Deserialize)]
        struct Ident {
            #[serde(default)]
            format: Option<String>,
            #[serde(default)]
            version: Option<serde_json::Value>,
        }
        // Another JSON document (a list of `kw simulate` scores, say) is said as such, not as
        // the first field the reader fails on.
        if bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
            return Err(invalid(
                "a JSON list, not a wisdom file (a JSON object with `\"format\": \
                 \"kernel-wisdom\"`)"
                    .into(),
            ));
        }
        let ident: Ident = serde_json::from_slice(bytes).map_err(|e| invalid(e.to_string()))?;
        if ident.format.as_deref() != Some("kernel-wisdom") {
            return Err(invalid("missing `\"format\": \"kernel-wisdom\"`".into()));
        }
        match ident.version.as_ref().map(|v| (v, v.as_u64())) {
            Some((_, Some(v))) if v >= 1 && v <= WISDOM_FORMAT_VERSION as u64 => {}
            Some((_, Some(0))) => {
                return Err(invalid(
                    "format version 0 is not a valid version (versions start at 1)".into(),
                ))
            }
            Some((_, Some(v))) => {
                return Err(invalid(format!(
                    "format version {v} is newer than this kw understands (up to {WISDOM_FORMAT_VERSION})"
                )))
            }
            Some((v, None)) => {
                return Err(invalid(format!(
                    "`version` must be a positive integer, found {v}"
                )))
            }
            None => return Err(invalid("missing `version`".into())),
        }
        /// The file with its records as raw text, each parsed and checked on its own.
        #[derive(Deserialize)]
        struct Raw<'a> {
            format: String,
            version: u32,
            tuning_key: String,
            #[serde(borrow)]
            records: Vec<&'a serde_json::value::RawValue>,
        }
        let text = std::str::from_utf8(bytes).map_err(|e| invalid(e.to_string()))?;
        let raw: Raw<'_> = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
        let mut file = WisdomFile {
            format: raw.format,
            version: raw.version,
            tuning_key: raw.tuning_key,
            records: Vec::with_capacity(raw.records.len()),
            rejected: Vec::new(),
            notes: Vec::new(),
        };
        for (i, r) in raw.records.iter().enumerate() {
            let record = crate::json_keys::check_unique_keys(r.get())
                .and_then(|()| {
                    match serde_json::from_str::<WisdomRecord>(r.get()) {
                        Ok(rec) => Ok((rec, Vec::new())),
                        // An alternate that is not even an alternate (a time given as a string,
                        // a configuration that is a list) costs only itself, too.
                        Err(e) => lenient_alternates(r.get())
                            .ok_or_else(|| at_file_position(&e, text, r.get())),
                    }
                })
                .map(|(mut rec, mut notes)| {
                    // A bad alternate costs only itself, never its record.
                    notes.extend(rec.drop_bad_alternates());
                    (rec, notes)
                })
                .and_then(|(rec, notes)| rec.validate().map(|()| (rec, notes)));
            match record {
                Ok((rec, notes)) => {
                    let n = i + 1;
                    let notes = notes
                        .iter()
                        .map(|why| format!("{REJECTED_PREFIX}{n}: {why}"));
                    file.notes.extend(notes);
                    file.records.push(rec);
                }
                Err(why) => file
                    .rejected
                    .push(format!("{REJECTED_PREFIX}{}: {why}", i + 1)),
            }
        }
        Ok(file)
    }

    /// The 1-based position in the file of each of [`WisdomFile::records`] as loaded (the
    /// rejected records' positions, named in [`WisdomFile::rejected`], are passed over):
    /// `1, 2, 3, ...` when none was rejected. What `kw wisdom show` and `explain` number the
    /// records by, so that their numbers and the rejected records' agree.
    pub fn record_numbers(&self) -> Vec<usize> {
        let rejected: std::collections::HashSet<usize> = self
            .rejected
            .iter()
            .filter_map(|why| rejected_number(why))
            .collect();
        (1..)
            .filter(|n| !rejected.contains(n))
            .take(self.records.len())
            .collect()
    }

    /// Moves the records that no space can use to [`WisdomFile::rejected`] ("record #N: why",
    /// numbered by their place in the file): a negative or non-finite time, an undeclared
    /// value ([`WisdomRecord::defect`]), and what [`add_record`] refuses to write (a tolerance
    /// of -1). [`merge_files`] leaves them out so.
    pub fn set_aside_unmergeable(&mut self) {
        let numbers = self.record_numbers();
        let records = std::mem::take(&mut self.records);
        for (r, n) in records.into_iter().zip(numbers) {
            match r.defect().or_else(|| check_new_record(&r).err()) {
                Some(why) => self.rejected.push(format!("record #{n}: {why}")),
                None => self.records.push(r),
            }
        }
    }

    /// The rejected records, then the alternates left out ([`WisdomFile::notes`]), as errors
    /// naming this file (to report them).
    pub fn rejected_errors(&self, path: &Path) -> Vec<WisdomError> {
        let rejected = self.rejected.iter().map(|why| WisdomError::RecordLeftOut {
            path: path.to_path_buf(),
            message: why.clone(),
        });
        let notes = self.notes.iter().map(|why| WisdomError::AlternateLeftOut {
            path: path.to_path_buf(),
            message: why.clone(),
        });
        rejected.chain(notes).collect()
    }

    /// Loads `path` for rewriting it: an error when any record was rejected (rewriting would
    /// drop it without a word). Also what a rewrite would leave out (alternates that did not
    /// read, fields this kw does not read), to say when it is written ([`Dropped::say`]).
    fn load_for_rewrite(path: &Path) -> Result<(WisdomFile, Dropped), WisdomError> {
        let (f, bytes) = WisdomFile::load_bytes(path)?;
        if !f.rejected.is_empty() {
            return Err(WisdomError::HasInvalidRecords {
                path: path.to_path_buf(),
                rejected: f.rejected,
            });
        }
        let mut dropped = Dropped::default();
        // Alternates are advisory: the rewrite leaves the bad ones out, and says so.
        if !f.notes.is_empty() {
            dropped.0.push(format!(
                "{}: rewriting it without the {} alternate(s) left out when it was read: {}",
                path.display(),
                f.notes.len(),
                f.notes.join("; ")
            ));
        }
        dropped
            .0
            .extend(unknown_note(path, &bytes, &f, "rewriting it drops"));
        Ok((f, dropped))
    }

    /// [`WisdomFile::load`], and a note naming the fields of the file that this kw does not
    /// read (a newer kw's, a hand edit's), which a file merged from it will not hold: for
    /// `kw wisdom merge`'s inputs, whose own files stay as they are.
    pub fn load_noting_unknown(path: &Path) -> Result<(WisdomFile, Option<String>), WisdomError> {
        let (f, bytes) = WisdomFile::load_bytes(path)?;
        let note = unknown_note(path, &bytes, &f, "the merged file leaves out");
        Ok((f, note))
    }

    /// Writes the file atomically: a temporary file in the same directory, fsynced, then renamed.
    /// A crash or a full disk leaves the previous file intact. New files are private (0600)
    /// unless `KW_FILE_MODE` asks for shared modes ([`crate::files::FileModes`]); a file
    /// replaced keeps its mode. A file that would exceed what a wisdom file may hold
    /// ([`crate::files::caps::WISDOM`], which every reader enforces) is written without
    /// indentation, and refused ([`WisdomError::TooLarge`]) if it still would: no kw could
    /// read it back.
    pub fn save(&self, path: &Path) -> Result<(), WisdomError> {
        let text = self.text_within(path, crate::files::caps::WISDOM)?;
        crate::files::write_atomic(path, text.as_bytes(), crate::files::FileModes::get())
            .map_err(io(path, "cannot write"))
    }

    /// The file's text as [`WisdomFile::save`] writes it to `path`: indented, else compact
    /// when that would pass `limit` bytes, else [`WisdomError::TooLarge`].
    fn text_within(&self, path: &Path, limit: u64) -> Result<String, WisdomError> {
        let invalid = |e: serde_json::Error| WisdomError::Invalid {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        let mut text = serde_json::to_string_pretty(self).map_err(invalid)?;
        if text.len() as u64 >= limit {
            text = serde_json::to_string(self).map_err(invalid)?;
        }
        text.push('\n');
        if text.len() as u64 > limit {
            return Err(WisdomError::TooLarge {
                path: path.to_path_buf(),
                bytes: text.len() as u64,
                limit,
                records: self.records.len(),
            });
        }
        Ok(text)
    }
}

/// What rewriting a wisdom file leaves out of it, in words ([`WisdomFile::load_for_rewrite`]).
#[derive(Debug, Default)]
struct Dropped(Vec<String>);

impl Dropped {
    /// Says it (once per process each), when the file is rewritten.
    fn say(&self) {
        for m in &self.0 {
            crate::diag::warn_once(m);
        }
    }
}

/// A note naming the fields of `path`'s text (`bytes`) that `file`, the same file as read,
/// would not write back ([`unknown_fields`]), after `action` ("rewriting it drops"); `None`
/// when there are none. Files above 4 MiB are not compared (the shipped ones are about
/// 150 KB; two JSON trees of a file near the 64 MiB limit take about 1 GB).
fn unknown_note(path: &Path, bytes: &[u8], file: &WisdomFile, action: &str) -> Option<String> {
    const COMPARED: usize = 4 << 20;
    if bytes.len() > COMPARED {
        return None;
    }
    let unknown = unknown_fields(bytes, file);
    if unknown.is_empty() {
        return None;
    }
    const SHOWN: usize = 6;
    let more = unknown.len().saturating_sub(SHOWN);
    Some(format!(
        "{}: {action} {} field(s) this kw does not read (written by a newer kw, or by hand): \
         {}{}",
        path.display(),
        unknown.len(),
        unknown[..unknown.len().min(SHOWN)].join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    ))
}

/// The fields of a wisdom file's text (`bytes`) that `file`, the same file as read, would not
/// write back, as paths (`comment`, `records[3].objective.energy_j`): fields this kw does
/// not read. A field that holds nothing (null, false, 0, an empty string, list or object) is
/// not counted: this kw leaves such defaults out of what it writes.
fn unknown_fields(bytes: &[u8], file: &WisdomFile) -> Vec<String> {
    use serde_json::Value;
    fn empty(v: &Value) -> bool {
        match v {
            Value::Null => true,
            Value::Bool(b) => !b,
            Value::Number(n) => n.as_f64() == Some(0.0),
            Value::String(s) => s.is_empty(),
            Value::Array(a) => a.is_empty(),
            Value::Object(o) => o.is_empty(),
        }
    }
    fn walk(read: &Value, written: &Value, at: &str, out: &mut Vec<String>) {
        match (read, written) {
            (Value::Object(r), Value::Object(w)) => {
                for (k, v) in r {
                    let here = if at.is_empty() {
                        k.clone()
                    } else {
                        format!("{at}.{k}")
                    };
                    match w.get(k) {
                        Some(wv) => walk(v, wv, &here, out),
                        // `alternates` is read: a list whose every alternate was left out
                        // (and said so) is not written back.
                        None if !empty(v) && k != "alternates" => out.push(here),
                        None => {}
                    }
                }
            }
            // Lists are compared item by item only where nothing was left out of them.
            (Value::Array(r), Value::Array(w)) if r.len() == w.len() => {
                for (i, (rv, wv)) in r.iter().zip(w).enumerate() {
                    walk(rv, wv, &format!("{at}[{i}]"), out);
                }
            }
            _ => {}
        }
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let (Ok(read), Ok(written)) = (
        serde_json::from_slice::<Value>(bytes),
        serde_json::to_value(file),
    ) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    walk(&read, &written, "", &mut out);
    out
}

/// How each of [`WisdomFile::rejected`] starts: `record #N: why`.
/// `e`, an error of parsing `part` (a slice of the file's `text`) on its own, with its line
/// and column counted in the file, not in the part.
/// A record whose `alternates` did not read as alternates: the record without them, each
/// alternate that reads kept (in order) and a note for each that does not; `None` when the
/// record does not read even without its alternates (then the record's own error is said).
fn lenient_alternates(raw: &str) -> Option<(WisdomRecord, Vec<String>)> {
    let mut value: serde_json::Value = serde_json::from_str(raw).ok()?;
    let alternates = value.as_object_mut()?.remove("alternates")?;
    let mut rec: WisdomRecord = serde_json::from_value(value).ok()?;
    let mut notes = Vec::new();
    match alternates {
        serde_json::Value::Array(items) => {
            for (i, item) in items.into_iter().enumerate() {
                match serde_json::from_value::<super::Alternate>(item) {
                    Ok(a) => rec.alternates.push(a),
                    Err(e) => notes.push(format!("alternate #{} left out: {e}", i + 1)),
                }
            }
        }
        other => notes.push(format!(
            "alternates left out: a list was expected, found {}",
            crate::json_keys::json_kind(&other)
        )),
    }
    Some((rec, notes))
}

fn at_file_position(e: &serde_json::Error, text: &str, part: &str) -> String {
    let message = e.to_string();
    let start = (part.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
    let Some(before) = text.get(..start).filter(|_| e.line() > 0) else {
        return message;
    };
    let base_line = before.matches('\n').count() + 1;
    let base_column = start - before.rfind('\n').map_or(0, |p| p + 1);
    let (line, column) = if e.line() == 1 {
        (base_line, base_column + e.column())
    } else {
        (base_line + e.line() - 1, e.column())
    };
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let what = message.strip_suffix(&suffix).unwrap_or(&message);
    format!("{what} at line {line} column {column} of the file")
}

const REJECTED_PREFIX: &str = "record #";

/// The record number (position in the file) a [`WisdomFile::rejected`] entry names.
fn rejected_number(why: &str) -> Option<usize> {
    let rest = why.strip_prefix(REJECTED_PREFIX)?;
    rest[..rest.find(':')?].parse().ok()
}

/// Checks a record about to be written: what loading checks ([`WisdomRecord::validate`]),
/// and tolerances that are finite and 0 or more (a NaN would be written as `null`, which no
/// kw reads back). Returns why not.
fn check_new_record(record: &WisdomRecord) -> Result<(), String> {
    record.validate()?;
    for (buffer, t) in &record.provenance.tolerances {
        t.validate()
            .map_err(|e| format!("the tolerance of buffer `{buffer}`: {e}"))?;
    }
    Ok(())
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
    // A file name is at most 255 bytes, and the lock and temporary files add up to 25 to it:
    // a longer key keeps its first 200 characters and a hash of the whole key (names up to
    // 230 characters, which could be written before, stay as they were).
    if s.len() > 230 {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325; // FNV-1a: stable across builds
        for b in tuning_key.as_bytes() {
            hash = (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
        s.truncate(200);
        s.push_str(&format!("-{hash:016x}"));
    }
    format!("{s}.json")
}

/// The first wisdom file for `tuning_key` in `dirs` that loads; files that fail to load are
/// returned in the second list (the caller reports them once) and skipped.
pub fn find_wisdom_file(
    tuning_key: &str,
    dirs: &[PathBuf],
) -> (Option<(PathBuf, WisdomFile)>, Vec<WisdomError>) {
    let (mut found, errors) = find_wisdom_files(tuning_key, dirs);
    let first = if found.is_empty() {
        None
    } else {
        Some(found.remove(0))
    };
    (first, errors)
}

/// Every wisdom file for `tuning_key` in `dirs` that loads, in search-path order (a directory
/// named twice is read once); files that fail to load are returned in the second list.
pub fn find_wisdom_files(
    tuning_key: &str,
    dirs: &[PathBuf],
) -> (Vec<(PathBuf, WisdomFile)>, Vec<WisdomError>) {
    let mut errors = Vec::new();
    let mut found: Vec<(PathBuf, WisdomFile)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for dir in dirs {
        let path = dir.join(wisdom_file_name(tuning_key));
        if !path.exists() {
            continue;
        }
        let identity = fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if !seen.insert(identity) {
            continue;
        }
        match WisdomFile::load(&path).and_then(|f| same_key(&path, f, tuning_key)) {
            Ok(f) => {
                errors.extend(f.rejected_errors(&path));
                found.push((path, f));
            }
            Err(e) => errors.push(e),
        }
    }
    (found, errors)
}

/// Checks that the wisdom file of `tuning_key` in `dir`, if there is one, can be rewritten
/// with a new record: it reads as a wisdom file, none of its records is invalid, and it holds
/// that key's records ([`WisdomError::KeyCollision`] if another key of the same file name
/// wrote it), and one more record like its largest would not make it too large for a wisdom
/// file. The errors are those the write would give: for a writer to find out before it
/// works (a tuning run of many minutes), not after.
pub fn check_key(dir: &Path, tuning_key: &str) -> Result<(), WisdomError> {
    check_key_within(dir, tuning_key, crate::files::caps::WISDOM)
}

/// [`check_key`] against a size limit of `limit` bytes.
fn check_key_within(dir: &Path, tuning_key: &str, limit: u64) -> Result<(), WisdomError> {
    let path = dir.join(wisdom_file_name(tuning_key));
    let Some(mut f) = check_rewritable(dir, tuning_key)? else {
        return Ok(());
    };
    // A file near the size limit: one more record like its largest must still fit, else the
    // run's record could not be written after its search ([`WisdomError::NoRoom`]; a record
    // that would replace one of the same slot would fit, but which slot is not known yet).
    // Files under half the limit are not measured.
    let on_disk = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    if on_disk > limit / 2 {
        let largest = f
            .records
            .iter()
            .max_by_key(|r| serde_json::to_string(r).map_or(0, |t| t.len()))
            .cloned();
        if let Some(r) = largest {
            f.records.push(r);
            if let Err(WisdomError::TooLarge { bytes, limit, .. }) = f.text_within(&path, limit) {
                return Err(WisdomError::NoRoom {
                    path,
                    records: f.records.len() - 1,
                    bytes,
                    limit,
                });
            }
        }
    }
    Ok(())
}

/// The wisdom file of `tuning_key` in `dir`, read as a writer reads it before rewriting it
/// (no invalid record, that key's own), or `None` when there is none (a link to nothing
/// included: the write replaces it).
fn check_rewritable(dir: &Path, tuning_key: &str) -> Result<Option<WisdomFile>, WisdomError> {
    let path = dir.join(wisdom_file_name(tuning_key));
    if !path.exists() {
        return Ok(None);
    }
    let (f, _) = WisdomFile::load_for_rewrite(&path)?;
    same_key(&path, f, tuning_key).map(Some)
}

/// `file` (read from `path`) when it holds `tuning_key`'s wisdom, else
/// [`WisdomError::KeyCollision`].
fn same_key(path: &Path, file: WisdomFile, tuning_key: &str) -> Result<WisdomFile, WisdomError> {
    if file.tuning_key == tuning_key {
        Ok(file)
    } else {
        Err(WisdomError::KeyCollision {
            path: path.to_path_buf(),
            in_file: file.tuning_key,
            key: tuning_key.to_string(),
        })
    }
}

/// Creates a wisdom directory (and its parents) with the modes of `KW_FILE_MODE`.
fn create_dir(dir: &Path) -> Result<(), WisdomError> {
    crate::files::FileModes::get()
        .create_dir_all(dir)
        .map_err(io(dir, "cannot create the wisdom directory"))
}

/// Takes the exclusive advisory lock on `KEY.json.lock` in `dir` (the one every writer of
/// that wisdom file takes); released when the returned file is dropped.
fn lock_key(dir: &Path, tuning_key: &str) -> Result<File, WisdomError> {
    let (lock, lock_path) = open_lock_file(dir, tuning_key)?;
    let what = format!("the wisdom of `{tuning_key}` in {}", dir.display());
    crate::files::lock_waiting(&lock, &lock_path, &what).map_err(io(&lock_path, "cannot lock"))?;
    Ok(lock)
}

/// The lock file of `tuning_key`'s wisdom in `dir`, opened (made when missing), not locked;
/// and its path.
fn open_lock_file(dir: &Path, tuning_key: &str) -> Result<(File, PathBuf), WisdomError> {
    let lock_path = dir.join(format!("{}.lock", wisdom_file_name(tuning_key)));
    let lock = crate::files::FileModes::get()
        .open_lock(&lock_path)
        .map_err(io(&lock_path, "cannot open the lock file"))?;
    Ok((lock, lock_path))
}

/// Checks that wisdom can be written to `dir` (created when missing): creates and removes a
/// temporary file there. Run before a long tuning run so that a read-only or missing
/// directory is found before the measurements, not after.
pub fn check_writable(dir: &Path) -> Result<(), WisdomError> {
    create_dir(dir)?;
    let probe = dir.join(format!(".kw-write-check-{}", std::process::id()));
    crate::files::FileModes::PRIVATE
        .create_new()
        .open(&probe)
        .map_err(io(dir, "cannot write in the wisdom directory"))?;
    let _ = fs::remove_file(&probe);
    Ok(())
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

impl std::fmt::Display for AddOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AddOutcome::Added => "record added",
            AddOutcome::Replaced => "replaced the record of this device and size",
            AddOutcome::KeptExisting => {
                "kept the existing record of this device and size: it is at least as fast"
            }
        })
    }
}

/// Adds a record to the wisdom file of its tuning key in `dir` (created when missing), under an
/// exclusive advisory lock on `KEY.json.lock`, replacing the file atomically. Concurrent writers
/// (threads or processes) lose no record. A record that loading would reject (a time that is
/// not a positive finite number, ...) or with a tolerance that is not a finite number, 0 or
/// more, is [`WisdomError::InvalidRecord`]: nothing is written.
pub fn add_record(
    dir: &Path,
    tuning_key: &str,
    record: WisdomRecord,
    policy: ReplacePolicy,
) -> Result<(PathBuf, AddOutcome), WisdomError> {
    let path = dir.join(wisdom_file_name(tuning_key));
    check_new_record(&record).map_err(|message| WisdomError::InvalidRecord {
        path: path.clone(),
        message,
    })?;
    create_dir(dir)?;
    let lock = lock_key(dir, tuning_key)?;
    let (mut file, dropped) = if path.exists() {
        let (f, dropped) = WisdomFile::load_for_rewrite(&path)?;
        (same_key(&path, f, tuning_key)?, dropped)
    } else {
        (WisdomFile::new(tuning_key), Dropped::default())
    };
    let outcome = merge_record(&mut file, record, policy);
    if outcome != AddOutcome::KeptExisting {
        dropped.say();
        file.save(&path)?;
    }
    drop(lock);
    Ok((path, outcome))
}

/// The slot of a record: one record per (device name, backend, problem size, tuning space).
/// Records of another version of the tuning space keep their own slot, so that a record the
/// current space rejects never hides one it accepts.
type Slot = (String, String, Vec<i64>, String);

fn slot_of(r: &WisdomRecord) -> Slot {
    (
        r.device.name.clone(),
        r.device.backend.clone(),
        super::record::trim_ones(&r.problem_size).to_vec(),
        r.space.hash.clone(),
    )
}

fn merge_record(file: &mut WisdomFile, record: WisdomRecord, policy: ReplacePolicy) -> AddOutcome {
    let slot = slot_of(&record);
    match file.records.iter_mut().find(|r| slot_of(r) == slot) {
        None => {
            file.records.push(record);
            AddOutcome::Added
        }
        Some(existing) => {
            if policy == ReplacePolicy::Always || faster(&record, existing) {
                *existing = record;
                AddOutcome::Replaced
            } else {
                AddOutcome::KeptExisting
            }
        }
    }
}

/// `a` is better than `b` (faster, or better by their common objective,
/// [`super::Objective::scores`]); a record with a defect ([`WisdomRecord::defect`]) never is.
fn faster(a: &WisdomRecord, b: &WisdomRecord) -> bool {
    match (a.defect(), b.defect()) {
        (None, Some(_)) => true,
        (Some(_), _) => false,
        (None, None) => {
            let (sa, sb) = a.objective.scores(&b.objective);
            sa < sb
        }
    }
}

/// What [`merge_files`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MergeReport {
    /// Records read.
    pub read: usize,
    /// Records left out because they are unusable whatever the space: `(tuning key, why)`.
    pub dropped: Vec<(String, String)>,
}

/// Combines wisdom files (from many tuning nodes) into one per tuning key, keeping the fastest
/// record per (device, problem size, tuning space) and leaving out records that no space can
/// use ([`WisdomRecord::defect`]: a negative or non-finite time, an undeclared value). Linear
/// in the number of records. Returns the merged files, in first-seen key order.
pub fn merge_files(inputs: Vec<WisdomFile>) -> (Vec<WisdomFile>, MergeReport) {
    let mut out: Vec<WisdomFile> = Vec::new();
    let mut keys: HashMap<String, usize> = HashMap::new();
    let mut slots: Vec<HashMap<Slot, usize>> = Vec::new();
    let mut report = MergeReport::default();
    for input in inputs {
        let idx = *keys.entry(input.tuning_key.clone()).or_insert_with(|| {
            out.push(WisdomFile::new(&input.tuning_key));
            slots.push(HashMap::new());
            out.len() - 1
        });
        let mut input = input;
        input.set_aside_unmergeable();
        for why in &input.rejected {
            report.read += 1;
            report.dropped.push((input.tuning_key.clone(), why.clone()));
        }
        for r in input.records {
            report.read += 1;
            let file = &mut out[idx];
            match slots[idx].entry(slot_of(&r)) {
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(file.records.len());
                    file.records.push(r);
                }
                std::collections::hash_map::Entry::Occupied(o) => {
                    let existing = &mut file.records[*o.get()];
                    if faster(&r, existing) {
                        *existing = r;
                    }
                }
            }
        }
    }
    (out, report)
}

/// The most tuning keys whose locks a merge holds at once (each an open file): beyond, each
/// key's lock is held for its own write only.
pub const MERGE_HELD_LOCKS: usize = 256;

/// Merges `inputs` into the wisdom files of `dir`: for each tuning key, under the lock
/// [`add_record`] takes, the file in `dir` (if any) is read, merged with the inputs
/// ([`merge_files`]) and replaced atomically, so a merge beside a running tune loses none of
/// the tune's records. Returns each file written with its record count, and the report. The
/// files of `dir` are checked before any is written, and so is the size of every merged file
/// ([`WisdomError::TooLarge`]: a first pass merges without writing). The locks of every key
/// (up to [`MERGE_HELD_LOCKS`] keys) are held from that pass to the last write, so a
/// concurrent `kw tune` waits and cannot make a file too large between the check and the
/// write; with more keys, a record such a tune adds between them can still make a key's
/// file too large after the keys before it were written (each file is whole: the old one or
/// the merged one).
pub fn merge_into(
    dir: &Path,
    inputs: Vec<WisdomFile>,
) -> Result<(Vec<(PathBuf, usize)>, MergeReport), WisdomError> {
    merge_within(dir, inputs, crate::files::caps::WISDOM)
}

/// [`merge_into`], refusing merged files larger than `limit` bytes before writing any.
fn merge_within(
    dir: &Path,
    inputs: Vec<WisdomFile>,
    limit: u64,
) -> Result<(Vec<(PathBuf, usize)>, MergeReport), WisdomError> {
    create_dir(dir)?;
    let mut by_key: Vec<(String, Vec<WisdomFile>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for f in inputs {
        let i = *index.entry(f.tuning_key.clone()).or_insert_with(|| {
            by_key.push((f.tuning_key.clone(), Vec::new()));
            by_key.len() - 1
        });
        by_key[i].1.push(f);
    }
    // Two keys of one file name, among the inputs or with a file of `dir`: refused before
    // anything is written.
    let mut names: HashMap<String, &str> = HashMap::new();
    for (key, _) in &by_key {
        if let Some(other) = names.insert(wisdom_file_name(key), key) {
            return Err(WisdomError::KeyCollision {
                path: dir.join(wisdom_file_name(key)),
                in_file: other.to_string(),
                key: key.clone(),
            });
        }
        // An output file that cannot be rewritten (damaged, holding invalid records, not a
        // regular file, another key's) is found now, before any other key's file is written
        // (its size after the merge is checked by the first pass below).
        check_rewritable(dir, key)?;
    }
    // The merged file of `key`: the inputs and the file of `dir` (read now), and what the
    // rewrite of that file leaves out.
    let merge_key = |key: &str, files: Vec<WisdomFile>| {
        let path = dir.join(wisdom_file_name(key));
        let mut all = Vec::with_capacity(files.len() + 1);
        let mut dropped = Dropped::default();
        if path.exists() {
            let (mut f, d) = WisdomFile::load_for_rewrite(&path)?;
            // Its records the merge leaves out are reported naming it, as the inputs' are.
            f.set_aside_unmergeable();
            for why in &mut f.rejected {
                *why = format!("{}: {why}", path.display());
            }
            all.push(same_key(&path, f, key)?);
            dropped = d;
        }
        all.extend(files);
        let (mut merged, report) = merge_files(all);
        let file = merged.pop().unwrap_or_else(|| WisdomFile::new(key));
        Ok::<_, WisdomError>((path, file, report, dropped))
    };
    // Every key's lock is held from the first pass to the last write, so that a `kw tune`
    // adding a record meanwhile waits, and the sizes checked are the sizes written. Taken in
    // the order of the file names, so that two merges of overlapping keys never wait on
    // each other in a circle (a tune takes one key's lock at a time). Past
    // [`MERGE_HELD_LOCKS`] keys (each lock an open file), each key's lock is taken for its
    // write only, and its file merged again under it.
    by_key.sort_by_cached_key(|(key, _)| wisdom_file_name(key));
    let hold_all = by_key.len() <= MERGE_HELD_LOCKS;
    let _locks = if hold_all {
        by_key
            .iter()
            .map(|(key, _)| lock_key(dir, key))
            .collect::<Result<Vec<_>, _>>()?
    } else {
        // Each lock file opened (and closed) now: one that cannot be (a directory, a link)
        // is found before any key's file is written.
        for (key, _) in &by_key {
            open_lock_file(dir, key)?;
        }
        Vec::new()
    };
    // First pass, nothing written: a key whose merged file would be too large for any kw to
    // read is refused before another key's file is replaced.
    let mut merged = Vec::with_capacity(by_key.len());
    for (key, files) in &by_key {
        let m = merge_key(key, files.clone())?;
        m.1.text_within(&m.0, limit)?;
        merged.push(hold_all.then_some(m));
    }
    let mut written = Vec::new();
    let mut total = MergeReport::default();
    for ((key, files), m) in by_key.into_iter().zip(merged) {
        let lock = if hold_all {
            None
        } else {
            Some(lock_key(dir, &key)?)
        };
        let (path, file, report, dropped) = match m {
            Some(m) => m,
            None => merge_key(&key, files)?,
        };
        total.read += report.read;
        total.dropped.extend(report.dropped);
        dropped.say();
        file.save(&path)?;
        drop(lock);
        written.push((path, file.records.len()));
    }
    Ok((written, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECORD: &str = r#"{"config": {"bx": 32}, "problem_size": [64],
        "device": {"name": "D", "backend": "opencl", "architecture": "a"},
        "objective": {"median_ms": MS, "samples": 3},
        "space": {"hash": "h", "parameters": []}}"#;

    fn file_of(times: &[&str]) -> Vec<u8> {
        let records: Vec<String> = times.iter().map(|t| RECORD.replace("MS", t)).collect();
        format!(
            r#"{{"format": "kernel-wisdom", "version": 1, "tuning_key": "k", "records": [{}]}}"#,
            records.join(",")
        )
        .into_bytes()
    }

    #[test]
    fn a_file_past_the_size_limit_is_written_compact_or_refused() {
        let f = WisdomFile::parse(Path::new("k.json"), &file_of(&["1", "2", "3"])).unwrap();
        let pretty = serde_json::to_string_pretty(&f).unwrap().len() as u64 + 1;
        let compact = serde_json::to_string(&f).unwrap().len() as u64 + 1;
        assert!(compact < pretty);
        let path = Path::new("k.json");
        assert_eq!(f.text_within(path, pretty).unwrap().len() as u64, pretty);
        let text = f.text_within(path, pretty - 1).unwrap();
        assert_eq!(text.len() as u64, compact);
        assert_eq!(WisdomFile::parse(path, text.as_bytes()).unwrap(), f);
        match f.text_within(path, compact - 1) {
            Err(e @ WisdomError::TooLarge { .. }) => {
                let m = e.to_string();
                assert!(m.contains("k.json: not written: 3 record(s)"), "{m}");
            }
            other => panic!("{other:?}"),
        }
    }

    /// A directory of this test's own (process and thread), not there yet.
    fn fresh_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "{name}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_merge_refuses_a_key_too_large_before_writing_any() {
        let dir = fresh_dir("kw-merge-within");
        let parse = |key: &str, times: &[&str]| {
            let text = String::from_utf8(file_of(times))
                .unwrap()
                .replace(r#""tuning_key": "k""#, &format!(r#""tuning_key": "{key}""#));
            WisdomFile::parse(Path::new("in.json"), text.as_bytes()).unwrap()
        };
        // Key `a` (first) is small; key `b` merges two files of one record each, in other
        // problem sizes, into two records, which pass a limit each file alone is within.
        let a = parse("a", &["1"]);
        let b1 = parse("b", &["2"]);
        let mut b2 = parse("b", &["3"]);
        b2.records[0].problem_size = vec![128];
        // The limit: one byte less than key `b`'s merged file written compact.
        let (merged, _) = merge_files(vec![b1.clone(), b2.clone()]);
        let limit = serde_json::to_string(&merged[0]).unwrap().len() as u64;
        match merge_within(&dir, vec![a.clone(), b1.clone(), b2.clone()], limit) {
            Err(WisdomError::TooLarge { path, records, .. }) => {
                assert_eq!(path, dir.join(wisdom_file_name("b")));
                assert_eq!(records, 2);
            }
            other => panic!("{other:?}"),
        }
        assert!(
            !dir.join(wisdom_file_name("a")).exists(),
            "key `a` was written before key `b` was found too large"
        );
        let (written, _) = merge_within(&dir, vec![a, b1.clone(), b2], 10 * limit).unwrap();
        assert_eq!(written.len(), 2);
        // A file past half the limit merged with a slower record of its own slot: the merge
        // fits (one record), whatever room a record more would need (the review found the
        // headroom check of `kw tune` applied to merges).
        let path = dir.join(wisdom_file_name("b"));
        let mut slower = b1.clone();
        slower.records[0].objective.median_ms = 9.0;
        let one = b1.text_within(&path, u64::MAX).unwrap().len() as u64;
        fs::write(&path, b1.text_within(&path, u64::MAX).unwrap()).unwrap();
        let (written, _) = merge_within(&dir, vec![slower], one + one / 2).unwrap();
        assert_eq!(written, vec![(path, 1)]);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_file_with_no_room_for_one_more_record_is_refused_before_a_run() {
        let dir = fresh_dir("kw-check-key-within");
        fs::create_dir_all(&dir).unwrap();
        let f = WisdomFile::parse(Path::new("k.json"), &file_of(&["1", "2"])).unwrap();
        let path = dir.join(wisdom_file_name("k"));
        // Written compact, as a file near the limit is.
        fs::write(&path, serde_json::to_string(&f).unwrap() + "\n").unwrap();
        // The limit: one byte less than the file with a third record, written compact.
        let mut three = f.clone();
        three.records.push(three.records[0].clone());
        let limit = serde_json::to_string(&three).unwrap().len() as u64;
        assert!(
            fs::metadata(&path).unwrap().len() <= limit,
            "the file itself fits"
        );
        match check_key_within(&dir, "k", limit) {
            Err(e @ WisdomError::NoRoom { records: 2, .. }) => {
                assert!(e.to_string().contains("no room for one more record"), "{e}");
            }
            other => panic!("{other:?}"),
        }
        // Room for a third record: fine.
        check_key_within(&dir, "k", limit + 1).unwrap();
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn fields_this_kw_does_not_read_are_named() {
        let text = String::from_utf8(file_of(&["1", "2"]))
            .unwrap()
            .replacen(
                r#""tuning_key": "k","#,
                r#""tuning_key": "k", "comment": "by hand", "empty": "","#,
                1,
            )
            .replacen(
                r#""samples": 3}"#,
                r#""samples": 3, "energy_j": 2.5, "maximize": false}"#,
                1,
            );
        let f = WisdomFile::parse(Path::new("k.json"), text.as_bytes()).unwrap();
        assert_eq!(f.records.len(), 2);
        assert_eq!(
            unknown_fields(text.as_bytes(), &f),
            ["comment", "records[0].objective.energy_j"]
        );
        assert!(unknown_fields(&file_of(&["1"]), &f).is_empty());
    }

    #[test]
    fn records_are_numbered_by_their_place_in_the_file() {
        let f =
            WisdomFile::parse(Path::new("k.json"), &file_of(&["-1", "2", "\"NaN\"", "3"])).unwrap();
        assert_eq!(f.records.len(), 2);
        assert_eq!(f.rejected.len(), 2, "{:?}", f.rejected);
        assert!(f.rejected[0].starts_with("record #1: objective -1 ms"));
        assert!(f.rejected[1].starts_with("record #3: "));
        // Its position is the file's: record 3 starts on line 7, its objective on line 9
        // (the record's own text would say line 3).
        assert!(
            f.rejected[1].contains("at line 9 column 40") && f.rejected[1].ends_with("of the file"),
            "{}",
            f.rejected[1]
        );
        assert_eq!(f.record_numbers(), vec![2, 4]);
        let clean = WisdomFile::parse(Path::new("k.json"), &file_of(&["1", "2"])).unwrap();
        assert_eq!(clean.record_numbers(), vec![1, 2]);
        assert_eq!(rejected_number("record #12: why: more"), Some(12));
        assert_eq!(rejected_number("something else"), None);
    }

    #[test]
    fn an_invalid_record_is_never_written() {
        let dir = std::env::temp_dir().join(format!("kw-wisdom-unit-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let good: WisdomRecord = serde_json::from_str(&RECORD.replace("MS", "1.5")).unwrap();
        let mut bad = good.clone();
        bad.objective.median_ms = -1.0;
        let e = add_record(&dir, "k", bad, ReplacePolicy::Always).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("k.json") && text.contains("objective -1 ms"),
            "{text}"
        );
        let mut nan_tolerance = good.clone();
        nan_tolerance.provenance.tolerances.insert(
            "out".into(),
            crate::tolerance::Tolerance {
                rtol: f64::NAN,
                ..Default::default()
            },
        );
        let text = add_record(&dir, "k", nan_tolerance, ReplacePolicy::Always)
            .unwrap_err()
            .to_string();
        assert!(
            text.contains("buffer `out`") && text.contains("rtol NaN"),
            "{text}"
        );
        assert!(!dir.join("k.json").exists());
        add_record(&dir, "k", good, ReplacePolicy::Always).unwrap();
        assert_eq!(
            WisdomFile::load(&dir.join("k.json")).unwrap().records.len(),
            1
        );
        let _ = fs::remove_dir_all(&dir);
    }

    /// Two tuning keys of one file name (`conv/fwd` and `conv_fwd`): neither `add_record`,
    /// `merge_into` nor the search path mixes their records or replaces the other key's file
    /// (a merge of both lost one key whole and said it kept two records).
    #[test]
    fn a_long_key_gets_a_short_file_name_of_its_own_and_a_list_is_said() {
        let long = "k".repeat(300);
        let (a, b) = (
            wisdom_file_name(&long),
            wisdom_file_name(&format!("{long}x")),
        );
        assert!(a.len() <= 230 && b.len() <= 230, "{a}");
        assert_ne!(a, b, "keys that differ past the cut keep their own files");
        let just = "k".repeat(230);
        assert_eq!(wisdom_file_name(&just), format!("{just}.json"), "as before");
        let e = WisdomFile::parse(Path::new("s.json"), b" [{\"strategy\": \"x\"}]").unwrap_err();
        assert!(
            e.to_string().contains("a JSON list, not a wisdom file"),
            "{e}"
        );
    }

    #[test]
    fn keys_of_one_file_name_are_never_mixed() {
        let dir = std::env::temp_dir().join(format!("kw-wisdom-collide-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let record: WisdomRecord = serde_json::from_str(&RECORD.replace("MS", "1.5")).unwrap();
        assert_eq!(wisdom_file_name("conv/fwd"), wisdom_file_name("conv_fwd"));
        add_record(&dir, "conv/fwd", record.clone(), ReplacePolicy::Always).unwrap();
        let before = fs::read(dir.join("conv_fwd.json")).unwrap();
        let e = add_record(&dir, "conv_fwd", record.clone(), ReplacePolicy::Always).unwrap_err();
        assert!(matches!(e, WisdomError::KeyCollision { .. }), "{e}");
        let text = e.to_string();
        assert!(
            text.contains(
                "conv_fwd.json: holds the wisdom of tuning key `conv/fwd`, not of `conv_fwd`"
            ),
            "{text}"
        );
        assert_eq!(fs::read(dir.join("conv_fwd.json")).unwrap(), before);
        // ... and a writer can find out before it works.
        assert!(matches!(
            check_key(&dir, "conv_fwd"),
            Err(WisdomError::KeyCollision { .. })
        ));
        check_key(&dir, "conv/fwd").unwrap();
        check_key(&dir, "other").unwrap();
        // The search path does not take the other key's file for this key's.
        let (found, errors) = find_wisdom_files("conv_fwd", std::slice::from_ref(&dir));
        assert!(found.is_empty());
        assert!(matches!(errors[..], [WisdomError::KeyCollision { .. }]));
        assert_eq!(
            find_wisdom_files("conv/fwd", std::slice::from_ref(&dir))
                .0
                .len(),
            1
        );
        // A merge into a directory whose file holds the other key is refused before anything
        // is written, as is a merge of both keys.
        let mut other = WisdomFile::new("conv_fwd");
        other.records.push(record.clone());
        let mut unrelated = WisdomFile::new("a_key_written_first");
        unrelated.records.push(record.clone());
        let e = merge_into(&dir, vec![unrelated, other]).unwrap_err();
        assert!(matches!(e, WisdomError::KeyCollision { .. }), "{e}");
        assert!(!dir.join("a_key_written_first.json").exists());
        let out = dir.join("merged");
        let mut a = WisdomFile::new("conv/fwd");
        a.records.push(record.clone());
        let mut b = WisdomFile::new("conv_fwd");
        b.records.push(record);
        let e = merge_into(&out, vec![a.clone(), b]).unwrap_err();
        assert!(matches!(e, WisdomError::KeyCollision { .. }), "{e}");
        assert!(!out.join("conv_fwd.json").exists());
        // A record add_record would refuse (a tolerance of -1) is left out of a merge, saying why.
        let mut bad = a.records[0].clone();
        bad.problem_size = vec![128];
        bad.provenance.tolerances.insert(
            "out".into(),
            crate::tolerance::Tolerance {
                rtol: -1.0,
                ..Default::default()
            },
        );
        a.records.push(bad);
        let (written, report) = merge_into(&out, vec![a]).unwrap();
        assert_eq!(written[0].1, 1);
        assert!(
            report.dropped[0].1.contains("rtol -1"),
            "{:?}",
            report.dropped
        );
        let _ = fs::remove_dir_all(&dir);
    }
}
