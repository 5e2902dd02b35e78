//! [`ResultsLog`]: every evaluation of a run as one JSON line, appended and flushed as it
//! happens, after a header line (format version, space fingerprint, parameters). An
//! interrupted run resumes from it ([`crate::Tuner::resume`]); [`crate::export`] turns it
//! into a Kernel Tuner cache file.
//!
//! A log is written by one run at a time: every way of opening one for writing takes its
//! [`LogLock`] first (held by the [`ResultsLog`], and by whoever keeps
//! [`ResultsLog::lock`]). Reading never refuses a log for a torn or malformed record line
//! (two writers, a crash, an edit), nor for one whose objective value is not valid for the
//! log's objective (a time of 0 or below, a non-finite value): the line is dropped with a
//! warning and the rest is used; such a value never reaches a search.

use crate::error::TuneError;
use crate::evaluator::{EvalFailure, EvalResult};
use crate::log_lock::LogLock;
use kw_core::{config::Config, space::Point, space::TuningSpace, value::Value};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The `format` field of a header line.
pub const LOG_FORMAT: &str = "kw-tune-log";
/// The current log format version.
pub const LOG_VERSION: u32 = 1;
/// The [`LogHeader::objective`] of a log whose values are times in milliseconds (the name an
/// objective expression gives the time, [`kw_core::objective::TIME`]).
pub const LOG_TIME: &str = kw_core::objective::TIME;

/// A parameter as recorded in a log header.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogParam {
    /// The name.
    pub name: String,
    /// The values, in order.
    pub values: Vec<Value>,
}

/// The first line of a results log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogHeader {
    /// Always [`LOG_FORMAT`].
    pub format: String,
    /// The format version ([`LOG_VERSION`]).
    pub version: u32,
    /// [`TuningSpace::fingerprint`] of the space tuned.
    pub fingerprint: String,
    /// The space's parameters (for export and checks).
    pub params: Vec<LogParam>,
    /// The strategy's name, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    /// The strategy's seed, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The kernel's name, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_name: Option<String>,
    /// The device's name, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_name: Option<String>,
    /// The problem size, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem_size: Option<Vec<i64>>,
    /// The capture's checksum, when the log is a capture's (`kw tune`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture_checksum: Option<String>,
    /// Kernel Tuner's cache key of the run's reference (default) configuration, when known
    /// (`kw tune`; absent in logs written before this field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_key: Option<String>,
    /// The objective's name (`time`: milliseconds).
    pub objective: String,
    /// The objective is maximised: the records' values are its scores, the values negated
    /// (`kw tune --maximize`; absent, false, in logs of minimised objectives and in logs
    /// written before this field).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub maximize: bool,
    /// The objective's expression, when not the time (`kw tune --objective`; absent in logs
    /// written before this field): two objectives of one name must not share a log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objective_expression: Option<String>,
}

impl LogHeader {
    /// A header for `space` (objective `time`, no strategy or kernel metadata).
    pub fn new(space: &TuningSpace) -> LogHeader {
        LogHeader {
            format: LOG_FORMAT.to_string(),
            version: LOG_VERSION,
            fingerprint: space.fingerprint(),
            params: space
                .params()
                .iter()
                .map(|p| LogParam {
                    name: p.name.clone(),
                    values: p.values.clone(),
                })
                .collect(),
            strategy: None,
            seed: None,
            kernel_name: None,
            device_name: None,
            problem_size: None,
            capture_checksum: None,
            default_key: None,
            objective: LOG_TIME.to_string(),
            maximize: false,
            objective_expression: None,
        }
    }

    /// The same header naming the strategy and its seed.
    pub fn with_strategy(mut self, name: &str, seed: u64) -> LogHeader {
        self.strategy = Some(name.to_string());
        self.seed = Some(seed);
        self
    }

    /// Whether `value` is a valid objective value for this log's objective, and why not
    /// ([`kw_core::objective::valid_value`]): a time ([`LOG_TIME`], milliseconds) is a
    /// positive finite number; another objective's value (a score, negated when maximised) is
    /// any finite number.
    pub fn check_objective(&self, value: f64) -> Result<(), String> {
        if kw_core::objective::valid_value(&self.objective, value) {
            return Ok(());
        }
        if self.objective == LOG_TIME {
            Err(format!(
                "objective {value} is not a valid time (a positive finite number of \
                 milliseconds)"
            ))
        } else {
            Err(format!(
                "objective {value} of `{}` is not a finite number",
                self.objective
            ))
        }
    }

    /// The first recorded field (capture checksum, kernel, device, problem size, objective and
    /// its direction) that differs
    /// between `self` (a log's header) and `current` (this run's): `(field, logged, current)`.
    /// Fields missing on either side are not compared.
    pub fn mismatch(&self, current: &LogHeader) -> Option<(&'static str, String, String)> {
        fn differs<T: PartialEq + std::fmt::Debug>(
            field: &'static str,
            logged: &Option<T>,
            now: &Option<T>,
        ) -> Option<(&'static str, String, String)> {
            match (logged, now) {
                (Some(a), Some(b)) if a != b => Some((field, format!("{a:?}"), format!("{b:?}"))),
                _ => None,
            }
        }
        differs(
            "capture checksum",
            &self.capture_checksum,
            &current.capture_checksum,
        )
        .or_else(|| differs("problem size", &self.problem_size, &current.problem_size))
        .or_else(|| differs("device", &self.device_name, &current.device_name))
        .or_else(|| differs("kernel", &self.kernel_name, &current.kernel_name))
        .or_else(|| {
            // A log's values are of one objective (times, or another objective's scores).
            (self.objective != current.objective).then(|| {
                (
                    "objective",
                    self.objective.clone(),
                    current.objective.clone(),
                )
            })
        })
        .or_else(|| {
            differs(
                "objective's expression",
                &self.objective_expression,
                &current.objective_expression,
            )
        })
        .or_else(|| {
            // ... in one direction: a maximised objective's scores are its values negated.
            let way = |m: bool| if m { "maximised" } else { "minimised" }.to_string();
            (self.maximize != current.maximize).then(|| {
                (
                    "objective's direction",
                    way(self.maximize),
                    way(current.maximize),
                )
            })
        })
    }
}

/// The longest line a results log may hold (a record with many samples is a few KiB).
pub const MAX_LOG_LINE: usize = 16 << 20;

/// One evaluation in a results log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogRecord {
    /// 1-based number of the evaluation in the run.
    pub eval: u64,
    /// Kernel Tuner's cache key of the configuration.
    pub key: String,
    /// The configuration as value indices.
    pub point: Point,
    /// The configuration as names and values.
    pub config: Config,
    /// The objective value, when it succeeded.
    pub objective: Option<f64>,
    /// The failure reason, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// Seconds since the start of the run when the evaluation finished.
    pub elapsed_s: f64,
    /// Seconds the evaluation took.
    pub eval_s: f64,
    /// The raw measurements behind the objective (e.g. timed samples in milliseconds), when
    /// the evaluator reports them. Absent in logs written before this field existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<Vec<f64>>,
    /// The device that measured it (`kw tune --devices`: several devices of one model share
    /// the log). Absent in one-device runs and in logs written before this field existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
}

/// The longest time a results log's record may give (`elapsed_s`, `eval_s`): about 32 years.
pub const MAX_LOG_SECONDS: f64 = 1e9;

impl LogRecord {
    /// Whether the record's times can be an evaluation's: `elapsed_s` and `eval_s` from 0 to
    /// [`MAX_LOG_SECONDS`] (a negative or absurd time comes from an edit or another program,
    /// and would reach exports such as a T4 file's `timestamp` and `benchmark`, where a
    /// value in milliseconds must stay finite), each sample a finite number.
    pub fn check_times(&self) -> Result<(), String> {
        for (name, v) in [("elapsed_s", self.elapsed_s), ("eval_s", self.eval_s)] {
            // `-0.0` too: it would be written back as `-0.0`.
            if !(0.0..=MAX_LOG_SECONDS).contains(&v) || v.is_sign_negative() {
                return Err(format!(
                    "`{name}` {v} is not a time (seconds, from 0 to {MAX_LOG_SECONDS:e})"
                ));
            }
        }
        // Samples are measured times (milliseconds) whatever the objective.
        if let Some(bad) = self
            .samples
            .iter()
            .flatten()
            .find(|&&s| !kw_core::objective::valid_time(s))
        {
            return Err(format!(
                "a sample {} is not a time (a positive finite number of milliseconds)",
                kw_core::diag::figure(*bad)
            ));
        }
        Ok(())
    }

    /// The record's result.
    pub fn result(&self) -> EvalResult {
        match (self.objective, &self.failure) {
            (Some(v), None) => Ok(v),
            (_, Some(reason)) => Err(EvalFailure::new(reason.clone())),
            (None, None) => Err(EvalFailure::new("no objective recorded")),
        }
    }
}

/// An open results log, appending one line per evaluation, under the log's [`LogLock`].
#[derive(Debug)]
pub struct ResultsLog {
    path: PathBuf,
    file: File,
    lock: Arc<LogLock>,
}

impl ResultsLog {
    /// Creates a log and writes its header. An existing log is never truncated: a file that
    /// is not empty is [`TuneError::LogExists`] (see [`ResultsLog::create_keeping`]). A log
    /// another run holds is [`TuneError::LogLocked`].
    pub fn create(path: &Path, header: &LogHeader) -> Result<ResultsLog, TuneError> {
        ResultsLog::create_locked(Arc::new(LogLock::acquire(path)?), header)
    }

    /// [`ResultsLog::create`] under a lock already taken (of the log at
    /// [`LogLock::log_path`]).
    pub fn create_locked(lock: Arc<LogLock>, header: &LogHeader) -> Result<ResultsLog, TuneError> {
        let path = lock.log_path();
        if std::fs::metadata(path).is_ok_and(|m| m.len() == 0 && m.is_file()) {
            std::fs::remove_file(path).map_err(|e| TuneError::io(path, e))?;
        }
        // A new log is private (0600) unless KW_FILE_MODE asks for shared modes.
        let file = kw_core::files::FileModes::get()
            .create_new()
            .open(path)
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    TuneError::LogExists {
                        path: path.to_path_buf(),
                    }
                } else {
                    TuneError::io(path, e)
                }
            })?;
        let mut log = ResultsLog {
            path: path.to_path_buf(),
            file,
            lock: Arc::clone(&lock),
        };
        log.write_line(&serde_json::to_string(header).map_err(|e| log.format_error(1, e))?)?;
        Ok(log)
    }

    /// Creates a log at `path`; an existing non-empty file there is first renamed to
    /// `NAME.prevN.EXT` (the first free N), whose path is returned: nothing is lost. A log
    /// another run holds is [`TuneError::LogLocked`] (and is neither renamed nor touched).
    pub fn create_keeping(
        path: &Path,
        header: &LogHeader,
    ) -> Result<(ResultsLog, Option<PathBuf>), TuneError> {
        ResultsLog::create_keeping_locked(Arc::new(LogLock::acquire(path)?), header)
    }

    /// [`ResultsLog::create_keeping`] under a lock already taken.
    pub fn create_keeping_locked(
        lock: Arc<LogLock>,
        header: &LogHeader,
    ) -> Result<(ResultsLog, Option<PathBuf>), TuneError> {
        let path = lock.log_path();
        let kept = kw_core::files::keep_aside(path).map_err(|e| TuneError::io(path, e))?;
        Ok((ResultsLog::create_locked(lock, header)?, kept))
    }

    /// Opens an existing log to continue it: checks that it belongs to `space`, cuts a
    /// trailing partial line (an interrupted write), drops torn or malformed record lines
    /// with a warning ([`read_log`]) and returns the logged records. A missing or empty file
    /// is created with `header`. A log whose header records another capture, problem size,
    /// device or kernel than `header` is [`TuneError::LogMismatch`]; one another run holds is
    /// [`TuneError::LogLocked`].
    pub fn resume(
        path: &Path,
        space: &TuningSpace,
        header: &LogHeader,
    ) -> Result<(ResultsLog, Vec<LogRecord>), TuneError> {
        ResultsLog::resume_locked(Arc::new(LogLock::acquire(path)?), space, header)
    }

    /// [`ResultsLog::resume`] under a lock already taken.
    pub fn resume_locked(
        lock: Arc<LogLock>,
        space: &TuningSpace,
        header: &LogHeader,
    ) -> Result<(ResultsLog, Vec<LogRecord>), TuneError> {
        let path = lock.log_path();
        let exists = std::fs::metadata(path)
            .map(|m| m.len() > 0)
            .unwrap_or(false);
        if !exists {
            return Ok((ResultsLog::create_locked(lock, header)?, Vec::new()));
        }
        let mut contents = read_log(path)?;
        if contents.header.fingerprint != space.fingerprint() {
            return Err(TuneError::SpaceMismatch {
                path: path.to_path_buf(),
                expected: space.fingerprint(),
                found: contents.header.fingerprint,
            });
        }
        if let Some((field, logged, current)) = contents.header.mismatch(header) {
            return Err(TuneError::LogMismatch {
                path: path.to_path_buf(),
                field,
                logged,
                current,
            });
        }
        drop_inconsistent(path, space, &mut contents.records);
        let file = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| TuneError::io(path, e))?;
        // Cut an incomplete last line so that appended lines start on a fresh line.
        file.set_len(contents.valid_bytes)
            .map_err(|e| TuneError::io(path, e))?;
        drop(file);
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| TuneError::io(path, e))?;
        Ok((
            ResultsLog {
                path: path.to_path_buf(),
                file,
                lock,
            },
            contents.records,
        ))
    }

    /// Appends one record and flushes it to the file.
    pub fn append(&mut self, record: &LogRecord) -> Result<(), TuneError> {
        let line = serde_json::to_string(record)
            .map_err(|e| self.format_error(record.eval as usize + 1, e))?;
        self.write_line(&line)
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The log's lock: a clone keeps the log locked after this `ResultsLog` is dropped
    /// (`kw tune` holds it until the run's wisdom is written).
    pub fn lock(&self) -> Arc<LogLock> {
        Arc::clone(&self.lock)
    }

    fn write_line(&mut self, line: &str) -> Result<(), TuneError> {
        let path = &self.path;
        self.file
            .write_all(format!("{line}\n").as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(|e| TuneError::io(path, e))
    }

    fn format_error(&self, line: usize, e: serde_json::Error) -> TuneError {
        TuneError::LogFormat {
            path: self.path.clone(),
            line,
            message: e.to_string(),
        }
    }
}

/// A log as read from a file.
#[derive(Clone, Debug)]
pub struct LogContents {
    /// The header line.
    pub header: LogHeader,
    /// The complete records, in order.
    pub records: Vec<LogRecord>,
    /// Bytes up to the end of the last complete line.
    pub valid_bytes: u64,
    /// The record lines dropped as torn, malformed or invalid (an objective value not valid
    /// for the log's objective): `(1-based line number, why)`; an unterminated last line is
    /// among them.
    pub dropped: Vec<(usize, String)>,
}

/// How many dropped lines a warning lists one by one.
const DROPPED_LISTED: usize = 5;

/// Reads a results log. A record line that is torn or malformed (not UTF-8, not JSON, not a
/// record; an unterminated last line), whose objective value is not valid for the log's
/// objective ([`LogHeader::check_objective`]: a time must be positive and finite), or whose
/// times cannot be an evaluation's ([`LogRecord::check_times`]), is dropped
/// with one warning for the file (`kw_core::diag`: the file, each line's number and why, the
/// value included) and listed in [`LogContents::dropped`]: only that evaluation is lost.
/// A bad header line (without it nothing in the file can be trusted), a line longer than
/// [`MAX_LOG_LINE`] or a read error is an error.
pub fn read_log(path: &Path) -> Result<LogContents, TuneError> {
    // A regular file only, opened without blocking (a FIFO is refused, never waited on).
    let rules = kw_core::files::ReadRules::new("results log", kw_core::files::caps::DOCUMENT);
    let (file, _) =
        kw_core::files::open_regular(path, rules).map_err(|e| TuneError::io(path, e.into_io()))?;
    let mut reader = BufReader::new(file);
    let bad = |line: usize, message: String| TuneError::LogFormat {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut header = None;
    // A first line without its newline: not an empty log.
    let mut unterminated_first = false;
    let mut records = Vec::new();
    let mut valid_bytes = 0u64;
    let mut buf = Vec::new();
    let mut line_no = 0usize;
    let mut dropped = Vec::new();
    loop {
        buf.clear();
        let n = read_bounded_line(&mut reader, &mut buf, MAX_LOG_LINE)
            .map_err(|e| TuneError::io(path, e))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        if n > MAX_LOG_LINE {
            return Err(bad(
                line_no,
                format!(
                    "line longer than {} MiB: not a results log",
                    MAX_LOG_LINE >> 20
                ),
            ));
        }
        if buf.last() != Some(&b'\n') {
            // An interrupted write: the fragment is dropped (and cut by a resume).
            if header.is_some() {
                dropped.push((line_no, "an unterminated last line".to_string()));
            } else if !buf.iter().all(u8::is_ascii_whitespace) {
                unterminated_first = true;
            }
            break;
        }
        let Ok(text) = std::str::from_utf8(&buf) else {
            if header.is_none() {
                return Err(bad(line_no, "not UTF-8 text".to_string()));
            }
            dropped.push((line_no, "not UTF-8 text".to_string()));
            valid_bytes += n as u64;
            continue;
        };
        let text = text.trim();
        if text.is_empty() {
            valid_bytes += n as u64;
            continue;
        }
        if header.is_none() {
            let h: LogHeader = serde_json::from_str(text)
                .map_err(|e| bad(line_no, format!("bad header line: {e}")))?;
            if h.format != LOG_FORMAT {
                return Err(bad(
                    line_no,
                    format!("not a kw-tune results log (format `{}`)", h.format),
                ));
            }
            if h.version == 0 {
                return Err(bad(
                    line_no,
                    "log format version 0 is not a valid version (versions start at 1)".into(),
                ));
            }
            if h.version > LOG_VERSION {
                return Err(bad(
                    line_no,
                    format!(
                        "log format version {} is newer than this program's ({LOG_VERSION})",
                        h.version
                    ),
                ));
            }
            header = Some(h);
        } else if let Some(h) = &header {
            // An objective value that no evaluation can have (a time of 0 or below, from an
            // edit or another program) is never fed to a search: the line is dropped as a
            // malformed one is.
            match serde_json::from_str::<LogRecord>(text) {
                Ok(r) => match r
                    .objective
                    .map(|v| h.check_objective(v))
                    .unwrap_or(Ok(()))
                    .and_then(|()| r.check_times())
                {
                    Err(why) => dropped.push((line_no, why)),
                    Ok(()) => records.push(r),
                },
                Err(e) => dropped.push((line_no, format!("not a record: {e}"))),
            }
        }
        valid_bytes += n as u64;
    }
    let header = header.ok_or_else(|| {
        let why = if unterminated_first {
            "no complete header line: the file's only line does not end with a newline (a \
             results log's lines do; an interrupted first write, or another kind of file)"
        } else {
            "empty log: no header line"
        };
        bad(1, why.to_string())
    })?;
    if !dropped.is_empty() {
        warn_dropped(path, &dropped);
    }
    Ok(LogContents {
        header,
        records,
        valid_bytes,
        dropped,
    })
}

/// Drops (with one warning) the records of a resumed log whose point, configuration and key
/// disagree (an edited line): the search would otherwise be told one configuration's result for
/// another (`kw tune` also reads the log back after a run, for the record's samples and
/// alternates, through this). Points that are no longer valid in the space stay: the run skips
/// them. The warning is given once per process and log.
pub fn drop_inconsistent(path: &Path, space: &TuningSpace, records: &mut Vec<LogRecord>) {
    let mut dropped = Vec::new();
    records.retain(|r| {
        if space.index_of(&r.point).is_none() {
            return true;
        }
        let why = match space.point(&r.config) {
            Err(e) => Some(format!("its configuration: {e}")),
            Ok(p) if p != r.point => Some(format!(
                "its configuration `{}` is not its point {:?}",
                r.config.key(),
                r.point
            )),
            Ok(_) if r.key != space.kt_key(&r.point) => Some(format!(
                "its key `{}` is not its point's `{}`",
                r.key,
                space.kt_key(&r.point)
            )),
            Ok(_) => None,
        };
        match why {
            Some(why) => {
                dropped.push((r.eval as usize, why));
                false
            }
            None => true,
        }
    });
    if dropped.is_empty()
        || !kw_core::diag::once(&format!("inconsistent records: {}", path.display()))
    {
        return;
    }
    kw_core::diag::warn(&format!(
        "{}: dropped {} record(s) whose point, configuration and key disagree (an edited log?); \
         they are evaluated again if proposed: {}",
        path.display(),
        dropped.len(),
        listing("evaluation", &dropped)
    ));
}

/// The first [`DROPPED_LISTED`] of `dropped` as `WHAT N: why; ...`, and how many more.
fn listing(what: &str, dropped: &[(usize, String)]) -> String {
    let listed: Vec<String> = dropped
        .iter()
        .take(DROPPED_LISTED)
        .map(|(n, why)| format!("{what} {n}: {}", printable(why)))
        .collect();
    let more = dropped.len().saturating_sub(DROPPED_LISTED);
    if more > 0 {
        format!("{}; and {more} more", listed.join("; "))
    } else {
        listed.join("; ")
    }
}

/// One warning (once per process and file) for a log's dropped lines (an invalid objective
/// value counts among the malformed ones).
fn warn_dropped(path: &Path, dropped: &[(usize, String)]) {
    let key = format!("results log dropped lines: {}", path.display());
    if kw_core::diag::once(&key) {
        kw_core::diag::warn(&format!(
            "{}: dropped {} torn or malformed line(s) or line(s) with values no evaluation \
             can have; their evaluations are not read (a resumed run evaluates them again if \
             proposed): {}",
            path.display(),
            dropped.len(),
            listing("line", dropped)
        ));
    }
}

/// Parts of a reason may quote the file: at most 200 characters, no control characters reach a
/// terminal.
fn printable(why: &str) -> String {
    why.chars()
        .take(200)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// Reads one line (with its `\n`) into `buf`, at most `max` bytes of it: returns the bytes
/// consumed, or `max + 1` when the line is longer (the rest is not read).
fn read_bounded_line(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<usize> {
    let mut total = 0usize;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(total);
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if total + take > max {
            return Ok(max + 1);
        }
        buf.extend_from_slice(&chunk[..take]);
        reader.consume(take);
        total += take;
        if done {
            return Ok(total);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(objective: &str) -> String {
        format!(
            r#"{{"format":"kw-tune-log","version":1,"fingerprint":"f","params":[{{"name":"x","values":[1,2,3]}}],"objective":"{objective}"}}"#
        )
    }

    fn line(eval: u64, objective: &str) -> String {
        format!(
            r#"{{"eval":{eval},"key":"{eval}","point":[{i}],"config":{{"x":{eval}}},"objective":{objective},"elapsed_s":0.1,"eval_s":0.1}}"#,
            i = eval - 1
        )
    }

    fn write(name: &str, lines: &[String]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("kw-tune-log-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        path
    }

    /// A file of one line without its newline is not called empty; an empty file is.
    #[test]
    fn a_first_line_without_newline_is_not_an_empty_log() {
        let path = write("whole.jsonl", &[]);
        std::fs::write(&path, header("time")).unwrap();
        let e = read_log(&path).unwrap_err().to_string();
        assert!(e.contains("no complete header line"), "{e}");
        std::fs::write(&path, "").unwrap();
        let e = read_log(&path).unwrap_err().to_string();
        assert!(e.contains("empty log"), "{e}");
        std::fs::write(&path, header("time") + "\n").unwrap();
        assert!(read_log(&path).is_ok());
        // Versions start at 1; a newer one is said as such.
        for (version, said) in [
            ("0", "version 0 is not a valid version"),
            ("9", "version 9 is newer than this program's"),
        ] {
            let h = header("time").replace("\"version\":1", &format!("\"version\":{version}"));
            std::fs::write(&path, h + "\n").unwrap();
            let e = read_log(&path).unwrap_err().to_string();
            assert!(e.contains(said), "{e}");
        }
        let _ = std::fs::remove_file(&path);
    }

    /// Resuming a maximised objective's log without `--maximize` (or the other way round)
    /// would mix scores and values in one log: a mismatch.
    #[test]
    fn the_objectives_direction_must_match_to_resume() {
        let base = serde_json::from_str::<LogHeader>(&header("GFLOP/s")).unwrap();
        let maximised = LogHeader {
            maximize: true,
            ..base.clone()
        };
        assert_eq!(base.mismatch(&base), None);
        let (field, logged, now) = maximised.mismatch(&base).expect("a mismatch");
        assert_eq!(
            (field, logged.as_str(), now.as_str()),
            ("objective's direction", "maximised", "minimised")
        );
        // ... and of the same expression, where both logs say.
        let with = |e: &str| LogHeader {
            objective_expression: Some(e.into()),
            ..base.clone()
        };
        assert_eq!(with("65536 / time").mismatch(&with("65536 / time")), None);
        let (field, _, _) = with("65536 / time")
            .mismatch(&with("1000 * 65536 / time"))
            .expect("a mismatch");
        assert_eq!(field, "objective's expression");
        assert_eq!(
            base.mismatch(&with("65536 / time")),
            None,
            "an older log says none"
        );
    }

    #[test]
    fn objective_values_are_checked_by_the_log_objective() {
        let h = |o: &str| LogHeader {
            objective: o.to_string(),
            ..serde_json::from_str::<LogHeader>(&header("time")).unwrap()
        };
        let time = h(LOG_TIME);
        assert!(time.check_objective(0.25).is_ok());
        for bad in [0.0, -0.0, -1.0, f64::NAN, f64::INFINITY] {
            let why = time.check_objective(bad).unwrap_err();
            assert!(why.contains("not a valid time"), "{bad}: {why}");
        }
        let score = h("GFLOP/s");
        for good in [-1.0, 0.0, 3.5] {
            assert!(score.check_objective(good).is_ok(), "{good}");
        }
        for bad in [f64::NAN, f64::NEG_INFINITY] {
            assert!(score.check_objective(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_time_of_zero_or_below_is_dropped_not_read() {
        let path = write(
            "times.jsonl",
            &[
                header("time"),
                line(1, "-1.0"),
                line(2, "0"),
                line(3, "0.5"),
                // A failure has no objective value: kept.
                r#"{"eval":4,"key":"4","point":[0],"config":{"x":1},"objective":null,"failure":"x","elapsed_s":0.1,"eval_s":0.1}"#.to_string(),
            ],
        );
        let log = read_log(&path).unwrap();
        let objectives: Vec<Option<f64>> = log.records.iter().map(|r| r.objective).collect();
        assert_eq!(objectives, vec![Some(0.5), None]);
        assert_eq!(log.dropped.len(), 2, "{:?}", log.dropped);
        assert_eq!(log.dropped[0].0, 2);
        assert!(
            log.dropped[0].1.contains("objective -1 "),
            "{:?}",
            log.dropped
        );
        assert_eq!(log.dropped[1].0, 3);
        assert!(
            log.dropped[1].1.contains("objective 0 "),
            "{:?}",
            log.dropped
        );
        // Every line is kept for a resume (only a torn last line is cut).
        assert_eq!(log.valid_bytes, std::fs::metadata(&path).unwrap().len());
    }

    /// A negative `elapsed_s` or `eval_s` (an edit, another program) would reach a T4 export's
    /// `timestamp`: such a line is dropped as one with an impossible objective is.
    #[test]
    fn a_negative_time_of_a_record_drops_its_line() {
        let path = write(
            "elapsed.jsonl",
            &[
                header("time"),
                r#"{"eval":1,"key":"1","point":[0],"config":{"x":1},"objective":0.5,"elapsed_s":-3.0,"eval_s":0.1}"#.to_string(),
                r#"{"eval":2,"key":"2","point":[1],"config":{"x":2},"objective":0.5,"elapsed_s":0.2,"eval_s":-0.1}"#.to_string(),
                line(3, "0.25"),
            ],
        );
        let log = read_log(&path).unwrap();
        assert_eq!(log.records.len(), 1, "{:?}", log.records);
        assert_eq!(log.records[0].eval, 3);
        let why: Vec<&str> = log.dropped.iter().map(|(_, w)| w.as_str()).collect();
        assert_eq!(log.dropped.len(), 2, "{why:?}");
        assert!(why[0].contains("`elapsed_s` -3 is not a time"), "{why:?}");
        assert!(why[1].contains("`eval_s` -0.1 is not a time"), "{why:?}");
        // `-0.0` and a time past 1e9 s (its milliseconds would be infinite in a T4 export).
        let path = write(
            "elapsed-odd.jsonl",
            &[
                header("time"),
                r#"{"eval":1,"key":"1","point":[0],"config":{"x":1},"objective":0.5,"elapsed_s":0.1,"eval_s":-0.0}"#.to_string(),
                r#"{"eval":2,"key":"2","point":[1],"config":{"x":2},"objective":0.5,"elapsed_s":0.2,"eval_s":1e308}"#.to_string(),
                line(3, "0.25"),
            ],
        );
        let log = read_log(&path).unwrap();
        assert_eq!(log.records.len(), 1, "{:?}", log.dropped);
        assert_eq!(log.dropped.len(), 2, "{:?}", log.dropped);
        // A sample that is not a time (they reached a T4 export's `runtimes`).
        let path = write(
            "samples-odd.jsonl",
            &[
                header("time"),
                r#"{"eval":1,"key":"1","point":[0],"config":{"x":1},"objective":0.5,"elapsed_s":0.1,"eval_s":0.1,"samples":[-1.0,0.002]}"#.to_string(),
                r#"{"eval":2,"key":"2","point":[1],"config":{"x":2},"objective":0.5,"elapsed_s":0.2,"eval_s":0.1,"samples":[0.0]}"#.to_string(),
                line(3, "0.25"),
            ],
        );
        let log = read_log(&path).unwrap();
        assert_eq!(log.records.len(), 1, "{:?}", log.dropped);
        let why: Vec<&str> = log.dropped.iter().map(|(_, w)| w.as_str()).collect();
        assert!(why[0].contains("a sample -1.0000 is not a time"), "{why:?}");
        assert!(why[1].contains("a sample 0.0000 is not a time"), "{why:?}");
    }

    #[test]
    fn a_resume_drops_records_whose_point_config_and_key_disagree() {
        use kw_core::space::Parameter;
        let space = TuningSpace::new(vec![Parameter::new("x", [1, 2, 3])], Vec::new()).unwrap();
        let fingerprint = space.fingerprint();
        let head = header("time").replace(
            r#""fingerprint":"f""#,
            &format!(r#""fingerprint":"{fingerprint}""#),
        );
        let path = write(
            "inconsistent.jsonl",
            &[
                head,
                line(1, "0.5"),
                // Point [1] is x=2, but the line says x=3 (an edit): dropped.
                r#"{"eval":2,"key":"3","point":[1],"config":{"x":3},"objective":0.1,"elapsed_s":0.1,"eval_s":0.1}"#.to_string(),
                // Point and configuration agree, the key does not: dropped.
                r#"{"eval":3,"key":"1","point":[2],"config":{"x":3},"objective":0.2,"elapsed_s":0.1,"eval_s":0.1}"#.to_string(),
                // A parameter this space lacks: dropped.
                r#"{"eval":4,"key":"2","point":[1],"config":{"x":2,"y":1},"objective":0.2,"elapsed_s":0.1,"eval_s":0.1}"#.to_string(),
                line(2, "0.25"),
            ],
        );
        let text = std::fs::read_to_string(&path).unwrap();
        let header: LogHeader = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        let (_log, records) = ResultsLog::resume(&path, &space, &header).unwrap();
        let kept: Vec<(u64, Option<f64>)> = records.iter().map(|r| (r.eval, r.objective)).collect();
        assert_eq!(kept, vec![(1, Some(0.5)), (2, Some(0.25))]);
    }

    #[test]
    fn another_objective_keeps_negative_scores() {
        // A maximised objective's scores are negated values.
        let path = write(
            "scores.jsonl",
            &[header("GFLOP/s"), line(1, "-120.5"), line(2, "0")],
        );
        let log = read_log(&path).unwrap();
        assert_eq!(log.records.len(), 2);
        assert!(log.dropped.is_empty());
    }
}
