//! Reading and writing kw's files without trusting the file system: every file kw reads is
//! opened as a regular file only (never a FIFO, a device or a socket; opened without blocking,
//! so a FIFO cannot stall the caller), with a size cap suited to its kind, and every error
//! names the file and what it is. Directories kw keeps private (the compile cache, embedded
//! headers) must be owned by the current user and writable by nobody else, on a path no
//! other user can swap ([`check_private_dir`]); files and directories kw creates are private
//! by default ([`FileModes`], `KW_FILE_MODE`). The threat model is `docs/threat-model.md`.

use std::fs::{File, Metadata, OpenOptions};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use thiserror::Error;

/// The environment variable choosing the modes of the files and directories kw creates.
pub const FILE_MODE_ENV: &str = "KW_FILE_MODE";

/// Size caps of the kinds of file kw reads.
pub mod caps {
    /// A wisdom file.
    pub const WISDOM: u64 = 64 << 20;
    /// A compile cache entry.
    pub const CACHE_ENTRY: u64 = 512 << 20;
    /// A kernel source or header file.
    pub const SOURCE: u64 = 64 << 20;
    /// A results log, a Kernel Tuner cache file or another JSON document.
    pub const DOCUMENT: u64 = 4 << 30;
    /// A capture file (buffers can be large; the point is refusing non-regular files).
    pub const CAPTURE: u64 = 1 << 40;
    /// A small system file (`/etc/hostname`, ...).
    pub const SMALL: u64 = 1 << 20;
}

/// Why a file could not be used; always names it.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum FileError {
    /// The file could not be opened or read.
    #[error("{}: {action}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The path is not a regular file.
    #[error("{}: is {kind}, not a regular file; kw reads a {what} from a regular file only", path.display())]
    NotRegular {
        /// The file.
        path: PathBuf,
        /// What it is (`a FIFO`, `a character device`, ...).
        kind: &'static str,
        /// The kind of file expected.
        what: &'static str,
    },
    /// The file is larger than its kind may be.
    #[error("{}: {size} bytes, more than the {cap} bytes a {what} may have", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The cap.
        cap: u64,
        /// The kind of file.
        what: &'static str,
    },
    /// A file or directory that must be private is not.
    #[error("{}: {problem}; {fix}", path.display())]
    NotPrivate {
        /// The file or directory.
        path: PathBuf,
        /// What is wrong (owner, mode, symbolic link).
        problem: String,
        /// How to fix it.
        fix: String,
    },
}

impl FileError {
    /// True when the file does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, FileError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }

    /// What is wrong, without the path (for errors that name the file themselves).
    pub fn detail(&self) -> String {
        let full = self.to_string();
        let prefix = format!("{}: ", self.path().display());
        full.strip_prefix(&prefix)
            .map_or(full.clone(), str::to_string)
    }

    /// As an I/O error for callers whose errors carry the path themselves: the operating
    /// system's error, or one whose text is [`FileError::detail`].
    pub fn into_io(self) -> std::io::Error {
        match self {
            FileError::Io { source, .. } => source,
            other => std::io::Error::other(other.detail()),
        }
    }

    /// The file concerned.
    pub fn path(&self) -> &Path {
        match self {
            FileError::Io { path, .. }
            | FileError::NotRegular { path, .. }
            | FileError::TooLarge { path, .. }
            | FileError::NotPrivate { path, .. } => path,
        }
    }

    fn io<'a>(
        path: &'a Path,
        action: &'static str,
    ) -> impl FnOnce(std::io::Error) -> FileError + 'a {
        move |source| FileError::Io {
            path: path.to_path_buf(),
            action,
            source,
        }
    }
}

/// What a file that is not regular is, in words.
pub(crate) fn kind_of(m: &Metadata) -> &'static str {
    let t = m.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        return "a directory";
    }
    if t.is_symlink() {
        return "a symbolic link";
    }
    "not a regular file"
}

/// How a file is opened for reading.
#[derive(Clone, Copy, Debug)]
pub struct ReadRules {
    /// What the file is, for messages (`wisdom file`, `compile cache entry`).
    pub what: &'static str,
    /// The size cap in bytes.
    pub cap: u64,
    /// Refuse a symbolic link as the last component (files inside private directories).
    pub no_symlink: bool,
    /// Refuse a file not owned by the current user or writable by its group or others.
    pub private: bool,
}

impl ReadRules {
    /// A file of kind `what` of at most `cap` bytes; symbolic links followed.
    pub const fn new(what: &'static str, cap: u64) -> ReadRules {
        ReadRules {
            what,
            cap,
            no_symlink: false,
            private: false,
        }
    }

    /// The same, refusing a symbolic link as the last component.
    pub const fn no_symlink(self) -> ReadRules {
        ReadRules {
            no_symlink: true,
            ..self
        }
    }

    /// The same, refusing a file that is not owned by the current user or that its group or
    /// others may write (and a symbolic link).
    pub const fn private(self) -> ReadRules {
        ReadRules {
            private: true,
            no_symlink: true,
            ..self
        }
    }
}

/// Checks that a file's metadata says it is owned by the current user and writable by nobody
/// else.
fn check_private_file(path: &Path, meta: &Metadata) -> Result<(), FileError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let Some(me) = current_uid() {
            if meta.uid() != me {
                return Err(FileError::NotPrivate {
                    path: path.to_path_buf(),
                    problem: format!("is owned by user {}, not by you (user {me})", meta.uid()),
                    fix: "remove it".into(),
                });
            }
        }
        if meta.mode() & 0o022 != 0 {
            return Err(FileError::NotPrivate {
                path: path.to_path_buf(),
                problem: format!(
                    "is writable by others than you (mode {:o})",
                    meta.mode() & 0o7777
                ),
                fix: "remove it".into(),
            });
        }
    }
    let _ = (path, meta);
    Ok(())
}

/// Opens `path` for reading as a regular file under `rules`: without blocking (a FIFO is
/// refused, never waited on), checked to be a regular file no larger than the cap. Returns
/// the file and its metadata.
pub fn open_regular(path: &Path, rules: ReadRules) -> Result<(File, Metadata), FileError> {
    let mut o = OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
        if rules.no_symlink {
            flags |= libc::O_NOFOLLOW;
        }
        o.custom_flags(flags);
    }
    let file = match o.open(path) {
        Ok(f) => f,
        #[cfg(unix)]
        Err(e) if rules.no_symlink && e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(FileError::NotRegular {
                path: path.to_path_buf(),
                kind: "a symbolic link",
                what: rules.what,
            })
        }
        Err(e) => return Err(FileError::io(path, "cannot open")(e)),
    };
    let meta = file
        .metadata()
        .map_err(FileError::io(path, "cannot stat"))?;
    if !meta.file_type().is_file() {
        return Err(FileError::NotRegular {
            path: path.to_path_buf(),
            kind: kind_of(&meta),
            what: rules.what,
        });
    }
    if rules.private {
        check_private_file(path, &meta)?;
    }
    if meta.len() > rules.cap {
        return Err(FileError::TooLarge {
            path: path.to_path_buf(),
            size: meta.len(),
            cap: rules.cap,
            what: rules.what,
        });
    }
    // O_NONBLOCK stays set: it changes nothing for a regular file.
    Ok((file, meta))
}

/// Reads a whole regular file under `rules` (never more than the cap, even if it grows
/// while being read).
pub fn read(path: &Path, rules: ReadRules) -> Result<Vec<u8>, FileError> {
    let (file, meta) = open_regular(path, rules)?;
    let mut out = Vec::with_capacity(meta.len() as usize);
    file.take(rules.cap.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(FileError::io(path, "cannot read"))?;
    if out.len() as u64 > rules.cap {
        return Err(FileError::TooLarge {
            path: path.to_path_buf(),
            size: out.len() as u64,
            cap: rules.cap,
            what: rules.what,
        });
    }
    Ok(out)
}

/// Reads a whole regular file as UTF-8 text under `rules`.
pub fn read_to_string(path: &Path, rules: ReadRules) -> Result<String, FileError> {
    let bytes = read(path, rules)?;
    String::from_utf8(bytes).map_err(|e| FileError::Io {
        path: path.to_path_buf(),
        action: "not UTF-8 text",
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()),
    })
}

/// The effective user id of this process (`None` off Unix, or where it cannot be found): the
/// owner of `/proc/self` on Linux, else the owner of a file this process creates.
pub fn current_uid() -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        static UID: OnceLock<Option<u32>> = OnceLock::new();
        *UID.get_or_init(|| {
            if let Ok(m) = std::fs::metadata("/proc/self") {
                return Some(m.uid());
            }
            let probe = std::env::temp_dir().join(format!(
                ".kw-uid-probe-{}-{}",
                std::process::id(),
                nonce(3)
            ));
            let made = FileModes::PRIVATE.create_new().open(&probe).ok()?;
            let uid = made.metadata().ok().map(|m| m.uid());
            let _ = std::fs::remove_file(&probe);
            uid
        })
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Checks that `dir` can be trusted as a private directory: it is a directory, owned by the
/// current user, writable by nobody else, and every directory above it is owned by the
/// current user or root and writable by nobody else unless its sticky bit is set (as `/tmp`),
/// on the path as given as well as resolved (a link in a directory others may write could be
/// swapped): so no other user can have put, swapped or will swap anything in it. The rule of ssh's
/// `StrictModes`. Always passes off Unix.
pub fn check_private_dir(dir: &Path) -> Result<(), FileError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let Some(me) = current_uid() else {
            return Ok(());
        };
        let real = std::fs::canonicalize(dir).map_err(FileError::io(dir, "cannot resolve"))?;
        let meta = std::fs::metadata(&real).map_err(FileError::io(dir, "cannot stat"))?;
        let not_private = |path: &Path, problem: String, fix: String| FileError::NotPrivate {
            path: path.to_path_buf(),
            problem,
            fix,
        };
        if !meta.is_dir() {
            return Err(not_private(
                dir,
                "is not a directory".into(),
                "remove it or choose another directory".into(),
            ));
        }
        if meta.uid() != me {
            return Err(not_private(
                dir,
                format!("is owned by user {}, not by you (user {me})", meta.uid()),
                "use a directory of your own".into(),
            ));
        }
        if meta.mode() & 0o022 != 0 {
            return Err(not_private(
                dir,
                format!(
                    "is writable by {} (mode {:o})",
                    if meta.mode() & 0o002 != 0 {
                        "others"
                    } else {
                        "its group"
                    },
                    meta.mode() & 0o7777
                ),
                format!("run `chmod go-w {}` (or `chmod 700`)", real.display()),
            ));
        }
        // The directories above it, resolved, and those above the path as given: a link in
        // a directory others may write could be swapped for another as well.
        let given = if dir.is_absolute() {
            dir.to_path_buf()
        } else {
            std::env::current_dir()
                .map_err(FileError::io(dir, "cannot resolve"))?
                .join(dir)
        };
        for start in [real.parent(), given.parent()] {
            let mut up = start;
            while let Some(p) = up {
                let m = std::fs::metadata(p).map_err(FileError::io(p, "cannot stat"))?;
                let sticky = m.mode() & 0o1000 != 0;
                if m.uid() != me && m.uid() != 0 {
                    return Err(not_private(
                        dir,
                        format!(
                            "lies under {}, owned by user {} (neither you nor root)",
                            p.display(),
                            m.uid()
                        ),
                        "use a directory on a path only you and root control".into(),
                    ));
                }
                if m.mode() & 0o022 != 0 && !sticky {
                    return Err(not_private(
                        dir,
                        format!(
                            "lies under {}, which others may write (mode {:o}) and so swap this directory",
                            p.display(),
                            m.mode() & 0o7777
                        ),
                        "use a directory on a path only you and root may write".into(),
                    ));
                }
                up = p.parent();
            }
        }
    }
    Ok(())
}

mod lock;
pub use lock::{explain_lock_error, lock_waiting};
mod write;
pub use write::{
    content_hash, create_private_dir_all, keep_aside, nonce, parent_dir, private_temp_dir,
    same_file, write_atomic, FileModes, STALE_TEMPORARY,
};

#[cfg(test)]
mod tests;
