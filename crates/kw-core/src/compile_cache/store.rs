//! The cache directory: entries `<key>.kwc`, written to a private temporary name and renamed
//! (readers see a whole entry or none), least-recently-used eviction under a lock file, listing
//! and clearing. Entries are created 0600 in a directory created 0700; an entry is read only
//! when it is a regular file (never through a symbolic link) owned by the current user,
//! writable by nobody else and at most [`files::caps::CACHE_ENTRY`] bytes.

use super::entry::{self, Entry, EntryHeader};
use super::key::CacheKey;
use crate::files::{self, FileError, FileModes, ReadRules};
use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// Entries' file extension.
pub const EXTENSION: &str = "kwc";
/// The lock file that eviction and clearing take.
const LOCK_FILE: &str = ".lock";
/// Temporary files older than this are left-overs of a crashed writer.
const STALE_TMP: Duration = Duration::from_secs(3600);
/// Eviction brings the directory down to this fraction of its limit (so it does not run
/// again at the next store).
const EVICT_TO: f64 = 0.9;

/// One entry as listed.
#[derive(Clone, Debug)]
pub struct Listed {
    /// Its file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// When it was last used (its modification time, touched on every hit).
    pub last_used: SystemTime,
    /// Its header, or why it cannot be trusted.
    pub header: Result<EntryHeader, String>,
}

/// The file of `key` under `dir`.
pub fn entry_path(dir: &Path, key: &CacheKey) -> PathBuf {
    dir.join(format!("{}.{EXTENSION}", key.hex()))
}

/// Why an entry could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadError {
    /// The file could not be read (permissions, not a directory, ...): treated as a miss.
    Io(String),
    /// The file is there but cannot be trusted (truncated, corrupted, foreign, other format).
    Untrusted(String),
}

/// How entries are opened.
const ENTRY_RULES: ReadRules =
    ReadRules::new("compile cache entry", files::caps::CACHE_ENTRY).private();

/// Options that open an existing entry or the lock file without following a symbolic link.
fn no_follow(o: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    o
}

/// Reads an entry file under [`ENTRY_RULES`].
fn read_entry_file(path: &Path) -> Result<Vec<u8>, ReadError> {
    match files::read(path, ENTRY_RULES) {
        Ok(b) => Ok(b),
        Err(e @ FileError::Io { .. }) => Err(ReadError::Io(e.to_string())),
        Err(e) => Err(ReadError::Untrusted(e.to_string())),
    }
}

/// Reads the entry of `key`: `Ok(None)` when there is none.
pub fn read(dir: &Path, key: &CacheKey) -> Result<Option<Entry>, ReadError> {
    let path = entry_path(dir, key);
    let bytes = match files::read(&path, ENTRY_RULES) {
        Ok(b) => b,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e @ FileError::Io { .. }) => return Err(ReadError::Io(e.to_string())),
        Err(e) => return Err(ReadError::Untrusted(e.to_string())),
    };
    let e = entry::decode(&bytes, Some(key))
        .map_err(|r| ReadError::Untrusted(format!("{}: {r}", path.display())))?;
    Ok(Some(e))
}

/// Marks an entry used now (its modification time orders eviction). Failure is harmless.
pub fn touch(dir: &Path, key: &CacheKey) {
    if let Ok(f) = no_follow(OpenOptions::new().write(true)).open(entry_path(dir, key)) {
        let _ = f.set_modified(SystemTime::now());
    }
}

/// Removes an entry that cannot be trusted (a concurrent writer may already have replaced
/// it: then a good entry is lost, never a bad one kept).
pub fn remove(dir: &Path, key: &CacheKey) {
    let _ = std::fs::remove_file(entry_path(dir, key));
}

/// Writes an entry atomically: a private temporary file in the same directory, renamed over
/// the entry's name. Concurrent writers of one key each rename a whole entry; the last wins.
pub fn write(dir: &Path, key: &CacheKey, e: &Entry) -> Result<u64, String> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    files::create_private_dir_all(dir).map_err(|err| format!("{}: {err}", dir.display()))?;
    let bytes = entry::encode(e);
    let tmp = dir.join(format!(
        ".{}.{}.{}.tmp",
        key.hex(),
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        use std::io::Write;
        let mut f = FileModes::PRIVATE.create_new().open(&tmp)?;
        f.write_all(&bytes)?;
        drop(f);
        std::fs::rename(&tmp, entry_path(dir, key))
    })();
    if let Err(err) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("{}: {err}", tmp.display()));
    }
    Ok(bytes.len() as u64)
}

fn is_entry(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()) == Some(EXTENSION)
}

fn is_tmp(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()) == Some("tmp")
}

/// Every entry file with its size and last use (headers not read).
fn scan(dir: &Path) -> std::io::Result<Vec<(PathBuf, u64, SystemTime)>> {
    let mut out = Vec::new();
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e),
    };
    for item in rd {
        let item = item?;
        let path = item.path();
        if !is_entry(&path) {
            continue;
        }
        // An entry removed meanwhile by another process is simply not listed.
        if let Ok(m) = item.metadata() {
            out.push((
                path,
                m.len(),
                m.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            ));
        }
    }
    Ok(out)
}

/// Lists the entries, reading each one whole to check it.
pub fn list(dir: &Path) -> std::io::Result<Vec<Listed>> {
    let mut out: Vec<Listed> = scan(dir)?
        .into_iter()
        .map(|(path, bytes, last_used)| {
            let key = path
                .file_stem()
                .and_then(|s| s.to_str())
                .and_then(CacheKey::from_hex);
            let header = match (read_entry_file(&path), key) {
                (Ok(b), Some(k)) => entry::decode(&b, Some(&k)).map(|e| e.header),
                (Ok(_), None) => Err("file name is not a key".into()),
                (Err(ReadError::Io(e) | ReadError::Untrusted(e)), _) => Err(e),
            };
            Listed {
                path,
                bytes,
                last_used,
                header,
            }
        })
        .collect();
    out.sort_by_key(|e| std::cmp::Reverse(e.last_used));
    Ok(out)
}

/// Total bytes and count of the entries.
pub fn usage(dir: &Path) -> std::io::Result<(u64, usize)> {
    let s = scan(dir)?;
    Ok((s.iter().map(|e| e.1).sum(), s.len()))
}

fn lock_file(dir: &Path) -> std::io::Result<File> {
    files::create_private_dir_all(dir)?;
    FileModes::PRIVATE.open_lock(&dir.join(LOCK_FILE))
}

/// When the entries take more than `max_bytes`, removes the least recently used until they
/// take at most 90% of it, and removes stale temporary files. Runs under the directory's
/// lock; when another process holds it (evicting or clearing), does nothing. Returns the
/// number of entries removed.
pub fn evict(dir: &Path, max_bytes: u64) -> std::io::Result<usize> {
    let mut entries = scan(dir)?;
    let total: u64 = entries.iter().map(|e| e.1).sum();
    if total <= max_bytes {
        return Ok(0);
    }
    let lock = lock_file(dir)?;
    if lock.try_lock().is_err() {
        return Ok(0);
    }
    entries.sort_by_key(|e| e.2);
    let target = (max_bytes as f64 * EVICT_TO) as u64;
    let mut total = total;
    let mut removed = 0;
    for (path, bytes, _) in entries {
        if total <= target {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            removed += 1;
        }
        total = total.saturating_sub(bytes);
    }
    remove_stale_tmp(dir, STALE_TMP);
    drop(lock);
    Ok(removed)
}

fn remove_stale_tmp(dir: &Path, age: Duration) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    for item in rd.flatten() {
        let path = item.path();
        let old = item
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| now.duration_since(t).unwrap_or_default() >= age);
        if is_tmp(&path) && old {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Removes every entry (and stale temporary files) under the directory's lock. Returns the
/// entries and bytes removed.
pub fn clear(dir: &Path) -> std::io::Result<(usize, u64)> {
    if !dir.exists() {
        return Ok((0, 0));
    }
    if !dir.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            "not a directory (a compile cache is a directory)",
        ));
    }
    // A folder that holds no entry and no lock is no cache (or an empty one): nothing to
    // remove, and no lock file is left behind in it.
    if !dir.join(LOCK_FILE).exists() && scan(dir)?.is_empty() {
        return Ok((0, 0));
    }
    let lock = lock_file(dir)?;
    crate::files::lock_waiting(&lock, &dir.join(LOCK_FILE), "the compile cache")?;
    let mut n = 0;
    let mut bytes = 0;
    for (path, b, _) in scan(dir)? {
        if std::fs::remove_file(&path).is_ok() {
            n += 1;
            bytes += b;
        }
    }
    remove_stale_tmp(dir, STALE_TMP);
    drop(lock);
    Ok((n, bytes))
}
