//! The files of online tuning in its directory, and the rule that makes processes sharing it
//! (`KW_TUNE_RANKS=shared`) use the same configuration at every launch count.
//!
//! Per kernel (tuning key) the directory holds the wisdom file `KEY.json` (records of
//! provenance `online`), the coordination file `KEY.online.json` under the lock
//! `KEY.online.lock`, and one claim lock per device and size, `KEY.<size>.<device>.claim`.
//!
//! **Who tunes.** The process that first takes a size's claim lock (non-blocking) tunes it and
//! holds the lock until its result is published; others keep their configuration. A claim
//! taken later (the first tuner ended) tunes only if no result and no failure was published.
//!
//! **When everyone switches** (shared ranks). Launches of a size are counted from 1 in each
//! process. At every launch index that is a multiple of the period `P` (a checkpoint), while
//! no switch is known, a process takes the coordination lock and either finds the published
//! record (its `adopt_at` is the switch launch `A`) or records in the coordination file that
//! a process passed this checkpoint (`passed`, the largest checkpoint passed by any process).
//! The tuner publishes under the same lock with `A = passed + P`. Every checkpoint is ordered
//! before or after the publication by the lock: one ordered before it is at most `passed`, so
//! below `A`; a process's first checkpoint after it is at most `A` (its previous one was
//! before, so at most `passed`), so every process learns `A` at or before launch `A` and
//! switches exactly there; launches before `A` use the configuration selected without the
//! online directory, in every process. Later runs find the record at their first checkpoint
//! and switch at the same `A`. Records of this directory are never used by the selection of
//! a shared-ranks process otherwise (a record appearing during a run would make processes
//! that selected before and after it differ).

use kw_core::config::Config;
use kw_core::device::DeviceInfo;
use kw_core::files::FileModes;
use kw_core::wisdom::{
    add_record, wisdom_file_name, ReplacePolicy, WisdomError, WisdomFile, WisdomRecord,
};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::path::{Path, PathBuf};

/// The format name of the coordination file.
const FORMAT: &str = "kernel-wisdom/online-coordination";
/// Its version.
const VERSION: u32 = 1;

/// A problem with the online directory's files; always names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SharedError {
    /// A file could not be opened, locked, read or written.
    #[error("{path}: {action}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The coordination file is not valid.
    #[error("{path}: not a valid coordination file: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The wisdom file could not be read or written.
    #[error(transparent)]
    Wisdom(#[from] WisdomError),
}

fn io<'a>(path: &'a Path, action: &'static str) -> impl FnOnce(std::io::Error) -> SharedError + 'a {
    move |source| SharedError::Io {
        path: path.to_path_buf(),
        action,
        source,
    }
}

/// The files of one kernel, device and problem size in the online directory.
#[derive(Clone, Debug)]
pub(crate) struct SizeFiles {
    pub(crate) dir: PathBuf,
    pub(crate) key: String,
    pub(crate) device: String,
    pub(crate) backend: String,
    pub(crate) size: Vec<i64>,
}

/// The coordination of one device and size.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Entry {
    device: String,
    backend: String,
    problem_size: Vec<i64>,
    /// The largest checkpoint any process passed without finding a result.
    passed: u64,
    /// The tuning ended without a result: nobody switches, nobody tunes again.
    #[serde(default)]
    failed: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Coordination {
    format: String,
    version: u32,
    entries: Vec<Entry>,
}

/// What a checkpoint found.
pub(crate) enum Checkpoint {
    /// A published result: switch at launch `at` to `config`.
    Adopt { at: u64, config: Config },
    /// The tuning failed: nothing to wait for.
    Failed,
    /// Nothing yet (this checkpoint is registered).
    Pending,
}

/// The claim of a size: held while this process tunes it.
pub(crate) struct Claim {
    _lock: File,
}

impl SizeFiles {
    /// The files of `key` on `device` at `size` (trailing 1s dropped) in `dir`.
    pub(crate) fn new(dir: &Path, key: &str, device: &DeviceInfo, size: &[i64]) -> SizeFiles {
        let size = super::trim(size);
        SizeFiles {
            dir: dir.to_path_buf(),
            key: key.to_string(),
            device: device.name.clone(),
            backend: device.backend.as_str().to_string(),
            size,
        }
    }

    /// `kernel `KEY` at N×M on DEVICE`.
    pub(crate) fn describe(&self) -> String {
        format!(
            "kernel `{}` at {} on {}",
            self.key,
            super::size_text(&self.size),
            self.device
        )
    }

    fn stem(&self) -> String {
        wisdom_file_name(&self.key)
            .trim_end_matches(".json")
            .to_string()
    }

    fn wisdom_path(&self) -> PathBuf {
        self.dir.join(wisdom_file_name(&self.key))
    }

    fn coordination_path(&self) -> PathBuf {
        self.dir.join(format!("{}.online.json", self.stem()))
    }

    fn lock(&self) -> Result<File, SharedError> {
        FileModes::get()
            .create_dir_all(&self.dir)
            .map_err(io(&self.dir, "cannot create the online wisdom directory"))?;
        let path = self.dir.join(format!("{}.online.lock", self.stem()));
        let f = FileModes::get()
            .open_lock(&path)
            .map_err(io(&path, "cannot open the lock file"))?;
        f.lock().map_err(io(&path, "cannot lock"))?;
        Ok(f)
    }

    /// Takes the size's claim if no other process holds it (never waits).
    pub(crate) fn try_claim(&self) -> Result<Option<Claim>, SharedError> {
        FileModes::get()
            .create_dir_all(&self.dir)
            .map_err(io(&self.dir, "cannot create the online wisdom directory"))?;
        let sizes: Vec<String> = self.size.iter().map(i64::to_string).collect();
        let device: String = self
            .device
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let path = self.dir.join(format!(
            "{}.{}.{device}.claim",
            self.stem(),
            sizes.join("x")
        ));
        let f = FileModes::get()
            .open_lock(&path)
            .map_err(io(&path, "cannot open the claim file"))?;
        match f.try_lock() {
            Ok(()) => Ok(Some(Claim { _lock: f })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(io(&path, "cannot lock")(e)),
        }
    }

    /// The published online record of this device and size, if any.
    fn published(&self) -> Result<Option<WisdomRecord>, SharedError> {
        let path = self.wisdom_path();
        if !path.exists() {
            return Ok(None);
        }
        let file = WisdomFile::load(&path)?;
        Ok(file.records.into_iter().find(|r| {
            r.provenance.is_online()
                && r.provenance.adopt_at.is_some()
                && r.device.name == self.device
                && r.device.backend == self.backend
                && super::trim(&r.problem_size) == self.size
        }))
    }

    fn read(&self) -> Result<Coordination, SharedError> {
        let path = self.coordination_path();
        if !path.exists() {
            return Ok(Coordination {
                format: FORMAT.into(),
                version: VERSION,
                entries: Vec::new(),
            });
        }
        let (mut file, _) = kw_core::files::open_regular(
            &path,
            kw_core::files::ReadRules::new("coordination file", kw_core::files::caps::WISDOM),
        )
        .map_err(|e| SharedError::Invalid {
            path: path.clone(),
            message: e.to_string(),
        })?;
        let mut text = String::new();
        std::io::Read::read_to_string(&mut file, &mut text).map_err(io(&path, "cannot read"))?;
        let invalid = |message: String| SharedError::Invalid {
            path: path.clone(),
            message,
        };
        let c: Coordination = serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        if c.format != FORMAT || c.version == 0 || c.version > VERSION {
            return Err(invalid(format!(
                "format `{}` version {} (this version reads `{FORMAT}` up to {VERSION})",
                c.format, c.version
            )));
        }
        Ok(c)
    }

    fn write(&self, c: &Coordination) -> Result<(), SharedError> {
        let path = self.coordination_path();
        let mut text = serde_json::to_string_pretty(c).map_err(|e| SharedError::Invalid {
            path: path.clone(),
            message: e.to_string(),
        })?;
        text.push('\n');
        kw_core::files::write_atomic(&path, text.as_bytes(), FileModes::get())
            .map_err(io(&path, "cannot write"))
    }

    fn entry<'a>(&self, c: &'a mut Coordination) -> &'a mut Entry {
        let i = match c.entries.iter().position(|e| {
            e.device == self.device && e.backend == self.backend && e.problem_size == self.size
        }) {
            Some(i) => i,
            None => {
                c.entries.push(Entry {
                    device: self.device.clone(),
                    backend: self.backend.clone(),
                    problem_size: self.size.clone(),
                    ..Entry::default()
                });
                c.entries.len() - 1
            }
        };
        &mut c.entries[i]
    }

    /// Whether tuning this size is still to do: no result and no failure published (checked
    /// by the claim's holder before it tunes).
    pub(crate) fn to_tune(&self) -> Result<bool, SharedError> {
        let _lock = self.lock()?;
        if self.published()?.is_some() {
            return Ok(false);
        }
        let mut c = self.read()?;
        Ok(!self.entry(&mut c).failed)
    }

    /// Publishes `record` (made `online`) for every process: with `period` (shared ranks),
    /// with its switch launch `passed + period` under the coordination lock; without, as a
    /// plain online record. Returns the switch launch.
    pub(crate) fn publish(
        &self,
        mut record: WisdomRecord,
        period: Option<u64>,
    ) -> Result<Option<u64>, SharedError> {
        record.provenance.origin = kw_core::wisdom::ORIGIN_ONLINE.to_string();
        let Some(period) = period else {
            record.provenance.adopt_at = None;
            add_record(&self.dir, &self.key, record, ReplacePolicy::IfBetter)?;
            return Ok(None);
        };
        let _lock = self.lock()?;
        let mut c = self.read()?;
        let at = self.entry(&mut c).passed + period;
        record.provenance.adopt_at = Some(at);
        // The directory's record of this slot is this result: every process switches to it.
        add_record(&self.dir, &self.key, record, ReplacePolicy::Always)?;
        Ok(Some(at))
    }

    /// Says that the tuning of this size ended without a result (shared ranks: nobody waits
    /// for it, nobody tunes it again).
    pub(crate) fn mark_failed(&self) -> Result<(), SharedError> {
        let _lock = self.lock()?;
        let mut c = self.read()?;
        self.entry(&mut c).failed = true;
        self.write(&c)
    }
}

/// The checkpoint at launch `n` (a multiple of the period), under the coordination lock: the
/// published switch, a failure, or `n` registered as passed.
pub(crate) fn checkpoint(files: &SizeFiles, n: u64) -> Result<Checkpoint, SharedError> {
    let _lock = files.lock()?;
    if let Some(r) = files.published()? {
        let at = r.provenance.adopt_at.unwrap_or(u64::MAX);
        return Ok(Checkpoint::Adopt {
            at,
            config: r.config,
        });
    }
    let mut c = files.read()?;
    let e = files.entry(&mut c);
    if e.failed {
        return Ok(Checkpoint::Failed);
    }
    if e.passed < n {
        e.passed = n;
        files.write(&c)?;
    }
    Ok(Checkpoint::Pending)
}
