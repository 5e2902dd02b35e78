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
    #[error("{}: is {kind}, not a regular file; kw reads {what}s from regular files only", path.display())]
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
fn kind_of(m: &Metadata) -> &'static str {
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
/// current user or root and writable by nobody else unless its sticky bit is set (as `/tmp`):
/// so no other user can have put, swapped or will swap anything in it. The rule of ssh's
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
        let mut up = real.parent();
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
    Ok(())
}

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
        *MODES.get_or_init(|| match std::env::var(FILE_MODE_ENV) {
            Err(_) => FileModes::PRIVATE,
            Ok(v) => FileModes::parse(&v).unwrap_or_else(|| {
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
/// then renamed over `path`. A crash or a full disk leaves the previous file (or none).
pub fn write_atomic(path: &Path, bytes: &[u8], modes: FileModes) -> std::io::Result<()> {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
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
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests;
