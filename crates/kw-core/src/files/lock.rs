//! Errors of advisory file locks (std `File::lock` / `try_lock`: `flock(2)` on Linux) on file
//! systems that do not support them, said in words with what to change.

/// `e`, a failure to take a lock on a file, with what to do when the file system does not
/// support locks: Lustre mounted without `flock` answers `ENOSYS`, an NFS mount without a
/// lock manager `ENOLCK`, others `EOPNOTSUPP`. kw refuses to go on without the lock (writers
/// on other nodes could lose records); any other error is returned as it is.
pub fn explain_lock_error(e: std::io::Error) -> std::io::Error {
    let unsupported =
        e.kind() == std::io::ErrorKind::Unsupported || e.raw_os_error().is_some_and(no_locks_code);
    if !unsupported {
        return e;
    }
    std::io::Error::new(
        e.kind(),
        format!(
            "{e}: this file system does not support file locks, which kw needs here (on \
             Lustre, mount with `-o flock`; on NFS, run the lock manager (rpc.statd/lockd) \
             and do not mount with `nolock`; or use a directory on a local file system; see \
             docs/cluster.md)"
        ),
    )
}

/// Takes the exclusive lock on `file` (the lock file `path`), waiting for it; when another
/// process (or thread) still holds it after about a second, says that it waits and for what (`what`: "the wisdom file ...") so
/// that a long wait (a stale lock on NFS) is not a silent hang. Errors are explained as
/// [`explain_lock_error`] does.
pub fn lock_waiting(
    file: &std::fs::File,
    path: &std::path::Path,
    what: &str,
) -> std::io::Result<()> {
    // A short wait (another writer finishing) is normal and not said: about a second of
    // tries first.
    for _ in 0..20 {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(explain_lock_error(e)),
        }
    }
    crate::diag::warn(&format!(
        "waiting for the lock {} on {what}: another process or thread holds it",
        path.display()
    ));
    file.lock().map_err(explain_lock_error)
}

/// The operating system's answers for "no locks on this file system".
#[cfg(unix)]
fn no_locks_code(code: i32) -> bool {
    code == libc::ENOSYS || code == libc::ENOLCK || code == libc::EOPNOTSUPP
}

#[cfg(not(unix))]
fn no_locks_code(_: i32) -> bool {
    false
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn unsupported_locks_are_explained_and_other_errors_kept() {
        for code in [libc::ENOSYS, libc::ENOLCK, libc::EOPNOTSUPP] {
            let e = explain_lock_error(std::io::Error::from_raw_os_error(code)).to_string();
            assert!(e.contains("-o flock") && e.contains("nolock"), "{e}");
        }
        let other = explain_lock_error(std::io::Error::from_raw_os_error(libc::EACCES));
        assert_eq!(other.raw_os_error(), Some(libc::EACCES));
    }
}
