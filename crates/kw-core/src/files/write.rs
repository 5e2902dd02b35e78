//! What kw writes: private directories, the modes of new files ([`FileModes`],
//! `KW_FILE_MODE`), atomic replacement, and names nobody can predict.

use super::{check_private_dir, current_uid, FILE_MODE_ENV};
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Creates `dir` and its missing parents; the directory itself (when created here) gets
/// mode 0700. Existing directories are left as they are.
pub fn create_private_dir_all(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let mut b = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    match b.create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(e) => Err(e),
    }
}

/// The modes of the files and directories kw creates for the user (captures, wisdom, logs):
/// `KW_FILE_MODE=private` (the default: files 0600, directories 0700), `group` (0640 / 0750:
/// readable by the group) or `shared` (0644 / 0755: readable by everyone), read once. The
/// process umask applies on top. Nothing kw creates is ever writable by others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileModes {
    /// Mode of new files.
    pub file: u32,
    /// Mode of new directories.
    pub dir: u32,
}

impl FileModes {
    /// The private modes.
    pub const PRIVATE: FileModes = FileModes {
        file: 0o600,
        dir: 0o700,
    };

    /// Parses a `KW_FILE_MODE` value.
    pub fn parse(text: &str) -> Option<FileModes> {
        match text.trim().to_ascii_lowercase().as_str() {
            "" | "private" => Some(FileModes::PRIVATE),
            "group" => Some(FileModes {
                file: 0o640,
                dir: 0o750,
            }),
            "shared" | "public" => Some(FileModes {
                file: 0o644,
                dir: 0o755,
            }),
            _ => None,
        }
    }

    /// The modes in effect (`KW_FILE_MODE`, read once; an invalid value is warned about once
    /// and the private modes are used).
    pub fn get() -> FileModes {
        static MODES: OnceLock<FileModes> = OnceLock::new();
        *MODES.get_or_init(|| match crate::diag::env_var(FILE_MODE_ENV) {
            None => FileModes::PRIVATE,
            Some(v) => FileModes::parse(&v).unwrap_or_else(|| {
                crate::diag::warn_once(&format!(
                    "invalid {FILE_MODE_ENV}={v:?} (expected private, group or shared); using \
                     private (files 0600, directories 0700)"
                ));
                FileModes::PRIVATE
            }),
        })
    }

    /// Options that create a new file (never an existing one, never through a symbolic link)
    /// with these modes, for writing.
    pub fn create_new(self) -> OpenOptions {
        let mut o = OpenOptions::new();
        o.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(self.file);
        }
        o
    }

    /// Opens (creating it with these modes when missing) a lock file for reading and
    /// writing, never through a symbolic link and never truncating what another holder
    /// wrote. A path that is not a regular file (a link, a FIFO, a directory) is an error
    /// that says what it is.
    pub fn open_lock(self, path: &Path) -> std::io::Result<std::fs::File> {
        let mut o = OpenOptions::new();
        o.create(true).truncate(false).read(true).write(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(self.file)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC);
        }
        let not_regular = |kind: &str| {
            std::io::Error::other(format!(
                "it is {kind}, not a regular file (kw neither follows nor uses such a lock \
                 file): remove it"
            ))
        };
        let file = match o.open(path) {
            Ok(f) => f,
            #[cfg(unix)]
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                return Err(not_regular("a symbolic link"))
            }
            Err(e) => {
                return Err(match std::fs::symlink_metadata(path) {
                    Ok(m) if !m.is_file() => not_regular(super::kind_of(&m)),
                    _ => e,
                })
            }
        };
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(not_regular(super::kind_of(&meta)));
        }
        Ok(file)
    }

    /// Creates `dir` and its missing parents, each with these modes (existing ones are left
    /// as they are).
    pub fn create_dir_all(self, dir: &Path) -> std::io::Result<()> {
        let mut b = std::fs::DirBuilder::new();
        b.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            b.mode(self.dir);
        }
        b.create(dir)
    }
}

/// A directory private to this user for kw's temporary files (embedded headers, ...):
/// `$XDG_RUNTIME_DIR/kernel-wisdom` when that is set and private, else
/// `<temp>/kernel-wisdom-<uid>`. When that directory exists but cannot be trusted (another
/// user made it first, or it is writable by others), a new private directory with a random
/// name is used for this process instead, after one warning. Made once per process.
pub fn private_temp_dir() -> Result<PathBuf, String> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(|| {
        let uid = current_uid().map_or(String::new(), |u| format!("-{u}"));
        let mut candidates = Vec::new();
        if let Some(run) = std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
            candidates.push(PathBuf::from(run).join("kernel-wisdom"));
        }
        candidates.push(std::env::temp_dir().join(format!("kernel-wisdom{uid}")));
        let mut problems = Vec::new();
        for dir in &candidates {
            let made = create_private_dir_all(dir);
            match made
                .map_err(|e| format!("{}: {e}", dir.display()))
                .and_then(|()| check_private_dir(dir).map_err(|e| e.to_string()))
            {
                Ok(()) => return Ok(dir.clone()),
                Err(e) => problems.push(e),
            }
        }
        // Somebody else holds the usual names: a fresh directory nobody can have prepared.
        let base = std::env::temp_dir();
        for attempt in 0..16u32 {
            let nonce = nonce(u64::from(attempt));
            let dir = base.join(format!("kernel-wisdom{uid}-{nonce:016x}"));
            let mut b = std::fs::DirBuilder::new();
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt;
                b.mode(0o700);
            }
            if b.create(&dir).is_ok() {
                crate::diag::warn_once(&format!(
                    "not using {} for temporary files ({}); using {} for this process",
                    candidates
                        .last()
                        .map_or(String::new(), |p| p.display().to_string()),
                    problems.join("; "),
                    dir.display()
                ));
                return Ok(dir);
            }
        }
        Err(format!(
            "no private directory for temporary files: {}",
            problems.join("; ")
        ))
    })
    .clone()
}

/// A number nobody can predict (keys from the operating system's randomness, through std's
/// `RandomState`), for names of new private directories.
pub fn nonce(salt: u64) -> u64 {
    use std::hash::BuildHasher;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    std::collections::hash_map::RandomState::new().hash_one((nanos, std::process::id(), salt))
}

/// The BLAKE3 hash of `bytes` in hex (64 characters), for names of files by content.
pub fn content_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// Writes `bytes` to `path` atomically with `modes`: a new temporary file beside it, with a
/// name unique to this process and call (never an existing file or a symbolic link), synced,
/// then renamed over `path`. A crash or a full disk leaves the previous file (or none). A
/// `path` that is something else than a regular file (a device such as `/dev/null`, a FIFO, a
/// directory; a symbolic link to one) is refused, never replaced; a symbolic link to a file is
/// replaced by the new file, with a warning (never written through). A regular file of this
/// user replaced keeps the read and write access it gave (less write access for others) on
/// top of `modes`, so that a file shared on purpose stays readable to those it was shared
/// with; a file of another owner, or a link, gives nothing. Temporary files of this name left
/// by a writer that is gone (no such process here, and untouched for [`STALE_TEMPORARY`]: a
/// writer on another host of a shared file system is not seen as a process here) are
/// removed.
pub fn write_atomic(path: &Path, bytes: &[u8], modes: FileModes) -> std::io::Result<()> {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    if let Ok(m) = std::fs::metadata(path) {
        if !m.is_file() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file (a device, FIFO or directory is never replaced)",
            ));
        }
    }
    // The access an existing file of this user gave (a link gives none: its target is not
    // what is replaced).
    #[cfg(unix)]
    let kept_mode = std::fs::symlink_metadata(path).ok().and_then(|m| {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        (m.is_file() && Some(m.uid()) == super::current_uid())
            .then(|| m.permissions().mode() & 0o775)
    });
    // A symbolic link is replaced by the new file, never written through (in a directory
    // others may write, a planted link would otherwise aim the write anywhere); said, since
    // the file it named keeps its old contents.
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        let target = std::fs::read_link(path).unwrap_or_default();
        crate::diag::warn(&format!(
            "{}: was a symbolic link to {}; it is now a file of its own (the file it named is \
             left as it was)",
            path.display(),
            target.display()
        ));
    }
    let dir = parent_dir(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut f = modes.create_new().open(&tmp)?;
        #[cfg(unix)]
        if let Some(kept) = kept_mode {
            use std::os::unix::fs::PermissionsExt;
            // Set whole (the umask applied when the file was created).
            let mode = (modes.file & 0o7777) | kept;
            {
                // A file system without modes (vfat, some FUSE mounts) keeps the new file's.
                if let Err(e) = f.set_permissions(std::fs::Permissions::from_mode(mode)) {
                    crate::diag::warn_once(&format!(
                        "{}: could not give the new file the mode of the one it replaces \
                         ({mode:o}): {e}",
                        path.display()
                    ));
                }
            }
        }
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    } else {
        remove_stale_temporaries(dir, &name);
    }
    result
}

/// How long a temporary file of [`write_atomic`] stays untouched before a later write may
/// remove it (its process being gone): far longer than any write takes.
pub const STALE_TEMPORARY: std::time::Duration = std::time::Duration::from_secs(10 * 60);

/// Removes `.NAME.tmp-PID-N` files in `dir` ([`write_atomic`]'s temporaries of `name`) whose
/// process is gone (Linux: no `/proc/PID`) and that were not modified for
/// [`STALE_TEMPORARY`]; elsewhere, and for a live process, nothing.
fn remove_stale_temporaries(dir: &Path, name: &str) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let prefix = format!(".{name}.tmp-");
    let Ok(entries) = std::fs::read_dir(if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    }) else {
        return;
    };
    for e in entries.flatten() {
        let file_name = e.file_name();
        let Some(rest) = file_name.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        let Some((pid, seq)) = rest.split_once('-') else {
            continue;
        };
        let (Ok(pid), true) = (
            pid.parse::<u32>(),
            !seq.is_empty() && seq.bytes().all(|b| b.is_ascii_digit()),
        ) else {
            continue;
        };
        let gone = pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists();
        let old = || {
            std::fs::symlink_metadata(e.path())
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age >= STALE_TEMPORARY)
        };
        if gone && e.file_type().is_ok_and(|t| t.is_file()) && old() {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Renames a non-empty file at `path` to `NAME.prevN.EXT` (the first free N) and returns that
/// name, so that a new file can take `path` without losing the old one; `None` when there is
/// no such file (missing or empty).
pub fn keep_aside(path: &Path) -> std::io::Result<Option<PathBuf>> {
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() > 0) {
        return Ok(None);
    }
    let ext = path
        .extension()
        .map_or(String::new(), |e| format!(".{}", e.to_string_lossy()));
    for n in 1u32.. {
        let aside = path.with_extension(format!("prev{n}{ext}"));
        if std::fs::symlink_metadata(&aside).is_ok() {
            continue;
        }
        // A link fails if the name was taken in between (another run keeping its own file
        // aside); a rename would replace that file. Where links are not supported, a rename.
        match std::fs::hard_link(path, &aside) {
            Ok(()) => {
                std::fs::remove_file(path)?;
                return Ok(Some(aside));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(_) => {
                std::fs::rename(path, &aside)?;
                return Ok(Some(aside));
            }
        }
    }
    unreachable!("a free name among 2^32")
}

/// Whether two paths name the same file: equal, or the same file once resolved (links,
/// `./`, `..`). Paths that do not exist are compared as given, their directories resolved.
pub fn same_file(a: &Path, b: &Path) -> bool {
    if a == b {
        return true;
    }
    let resolve = |p: &Path| {
        std::fs::canonicalize(p).ok().or_else(|| {
            Some(
                std::fs::canonicalize(parent_dir(p))
                    .ok()?
                    .join(p.file_name()?),
            )
        })
    };
    matches!((resolve(a), resolve(b)), (Some(x), Some(y)) if x == y)
}

/// The directory `path` is in: its parent, or `.` for a bare file name.
pub fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}
