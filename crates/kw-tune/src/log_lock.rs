//! [`LogLock`]: the exclusive lock a tuning run holds on its results log from start to end,
//! so that two runs never write one log. It is an advisory lock (std `File::try_lock`) on a
//! sidecar file `NAME.lock` next to the log (`run.tune.jsonl` -> `run.tune.jsonl.lock`):
//! the log itself may be renamed aside (`NAME.prevN.jsonl`) or created under the lock, so
//! it cannot carry the lock. The holder writes its pid and host into the lock file, and a
//! second run is refused with them ([`TuneError::LogLocked`]). The operating system releases
//! the lock when the holder's process ends, however it ends: a crashed run leaves no stale
//! lock. The lock file stays (empty) after the run, as the wisdom files' locks do.

use crate::error::TuneError;
pub use crate::lock_holder::LockHolder;
use std::fs::{File, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// The most of a lock file that is read to name its holder (it holds one short line).
const MAX_HOLDER_BYTES: u64 = 4096;

/// The exclusive lock on one results log, held until dropped.
#[derive(Debug)]
pub struct LogLock {
    log: PathBuf,
    lock_path: PathBuf,
    file: File,
}

impl LogLock {
    /// The lock file of the log at `log`: `NAME.lock` in the same directory.
    pub fn lock_path(log: &Path) -> PathBuf {
        let mut name = log.as_os_str().to_owned();
        name.push(".lock");
        PathBuf::from(name)
    }

    /// Takes the lock of the log at `log` (which need not exist yet), without waiting: a log
    /// another process (or another run in this process) holds is [`TuneError::LogLocked`],
    /// naming the holder's pid and host.
    pub fn acquire(log: &Path) -> Result<LogLock, TuneError> {
        let lock_path = LogLock::lock_path(log);
        let mut file = kw_core::files::FileModes::get()
            .open_lock(&lock_path)
            .map_err(|e| TuneError::io(&lock_path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(TuneError::LogLocked {
                    path: log.to_path_buf(),
                    lock_file: lock_path.clone(),
                    holder: read_holder(&mut file),
                })
            }
            Err(TryLockError::Error(e)) => {
                return Err(TuneError::io(
                    &lock_path,
                    kw_core::files::explain_lock_error(e),
                ))
            }
        }
        let me = LockHolder {
            pid: std::process::id(),
            host: kw_core::host::host_name().to_string(),
        };
        let line = serde_json::to_string(&me).unwrap_or_default();
        file.set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| file.write_all(format!("{line}\n").as_bytes()))
            .and_then(|()| file.flush())
            .map_err(|e| TuneError::io(&lock_path, e))?;
        Ok(LogLock {
            log: log.to_path_buf(),
            lock_path,
            file,
        })
    }

    /// The log this lock is for.
    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// The lock file.
    pub fn file_path(&self) -> &Path {
        &self.lock_path
    }
}

impl Drop for LogLock {
    fn drop(&mut self) {
        // No holder is named once the lock is released (closing the file releases it).
        let _ = self.file.set_len(0);
    }
}

/// The holder recorded in a lock file someone else holds: `None` when it is not recorded yet
/// or not readable as one (the file is data from disk: nothing in it is trusted beyond a
/// number and a short, printable host name).
fn read_holder(file: &mut File) -> Option<LockHolder> {
    let mut text = String::new();
    file.rewind().ok()?;
    Read::by_ref(file)
        .take(MAX_HOLDER_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    let holder: LockHolder = serde_json::from_str(text.trim()).ok()?;
    let printable = !holder.host.is_empty()
        && holder.host.len() <= 255
        && holder.host.chars().all(|c| c.is_ascii_graphic());
    printable.then_some(holder)
}
