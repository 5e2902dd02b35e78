use super::*;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "kw-files-test-{name}-{}-{}",
        std::process::id(),
        nonce(7)
    ));
    create_private_dir_all(&d).unwrap();
    d
}

#[cfg(unix)]
#[test]
fn a_fifo_is_refused_without_blocking() {
    let d = scratch("fifo");
    let p = d.join("w.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&p)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo");
    let e = read(&p, ReadRules::new("wisdom file", 1024)).unwrap_err();
    assert!(
        matches!(e, FileError::NotRegular { kind: "a FIFO", .. }),
        "{e}"
    );
    assert!(e.to_string().contains("w.json"), "{e}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// A lock file that is a link (to a regular file too), a FIFO or a directory is refused,
/// saying which (a link was "Too many levels of symbolic links", a FIFO "a directory, or a
/// link that leads nowhere"); the link's target is not touched.
#[cfg(unix)]
#[test]
fn a_lock_file_of_another_kind_is_refused_saying_what_it_is() {
    let d = scratch("locks");
    let target = d.join("victim");
    std::fs::write(&target, "keep").unwrap();
    let link = d.join("link.lock");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let fifo = d.join("fifo.lock");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo");
    let dir = d.join("dir.lock");
    std::fs::create_dir(&dir).unwrap();
    for (path, kind) in [
        (&link, "a symbolic link"),
        (&fifo, "a FIFO"),
        (&dir, "a directory"),
    ] {
        let e = FileModes::PRIVATE.open_lock(path).unwrap_err().to_string();
        assert!(
            e.contains(&format!("it is {kind}, not a regular file")),
            "{e}"
        );
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    assert!(FileModes::PRIVATE.open_lock(&d.join("new.lock")).is_ok());
    std::fs::remove_dir_all(&d).unwrap();
}

#[cfg(unix)]
#[test]
fn a_link_to_a_device_is_refused_and_no_follow_refuses_links() {
    let d = scratch("dev");
    let p = d.join("zero.json");
    std::os::unix::fs::symlink("/dev/zero", &p).unwrap();
    let e = read(&p, ReadRules::new("wisdom file", 1 << 30)).unwrap_err();
    assert!(
        matches!(
            e,
            FileError::NotRegular {
                kind: "a character device",
                ..
            }
        ),
        "{e}"
    );
    let f = d.join("real");
    std::fs::write(&f, b"abc").unwrap();
    let l = d.join("link");
    std::os::unix::fs::symlink(&f, &l).unwrap();
    assert_eq!(read(&l, ReadRules::new("x", 10)).unwrap(), b"abc");
    let e = read(&l, ReadRules::new("x", 10).no_symlink()).unwrap_err();
    assert!(matches!(e, FileError::NotRegular { .. }), "{e}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn the_cap_holds() {
    let d = scratch("cap");
    let p = d.join("big");
    std::fs::write(&p, vec![b'x'; 100]).unwrap();
    assert!(matches!(
        read(&p, ReadRules::new("thing", 99)),
        Err(FileError::TooLarge {
            size: 100,
            cap: 99,
            ..
        })
    ));
    assert_eq!(read(&p, ReadRules::new("thing", 100)).unwrap().len(), 100);
    assert!(read(&d.join("missing"), ReadRules::new("x", 1))
        .unwrap_err()
        .is_not_found());
    std::fs::remove_dir_all(&d).unwrap();
}

#[cfg(unix)]
#[test]
fn private_dirs_are_checked() {
    use std::os::unix::fs::PermissionsExt;
    let d = scratch("priv");
    check_private_dir(&d).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
    let e = check_private_dir(&d).unwrap_err();
    assert!(e.to_string().contains("writable by others"), "{e}");
    assert!(e.to_string().contains("chmod go-w"), "{e}");
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o770)).unwrap();
    assert!(check_private_dir(&d).is_err());
    // A directory under one that others may write (without the sticky bit) is not private.
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
    let inner = d.join("inner");
    create_private_dir_all(&inner).unwrap();
    let e = check_private_dir(&inner).unwrap_err();
    assert!(e.to_string().contains("swap"), "{e}");
    // With the sticky bit (as /tmp), it is.
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o1777)).unwrap();
    check_private_dir(&inner).unwrap();
    // A link to a private directory, lying in one others may write: the link could be
    // swapped, so the path is not private either (the directory itself still is).
    let public = scratch("priv-public");
    std::fs::set_permissions(&public, std::fs::Permissions::from_mode(0o777)).unwrap();
    let private = scratch("priv-target");
    std::os::unix::fs::symlink(&private, public.join("link")).unwrap();
    check_private_dir(&private).unwrap();
    let e = check_private_dir(&public.join("link")).unwrap_err();
    assert!(e.to_string().contains("swap"), "{e}");
    for x in [&d, &public, &private] {
        std::fs::remove_dir_all(x).unwrap();
    }
}

#[cfg(unix)]
#[test]
fn created_files_and_dirs_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let d = scratch("modes");
    let sub = d.join("a/b");
    FileModes::PRIVATE.create_dir_all(&sub).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&sub), 0o700);
    let f = sub.join("f.json");
    write_atomic(&f, b"{}", FileModes::PRIVATE).unwrap();
    assert_eq!(mode(&f), 0o600);
    assert_eq!(std::fs::read(&f).unwrap(), b"{}");
    // A second write replaces it; no temporary file is left.
    write_atomic(&f, b"[]", FileModes::PRIVATE).unwrap();
    assert_eq!(std::fs::read(&f).unwrap(), b"[]");
    assert_eq!(std::fs::read_dir(&sub).unwrap().count(), 1);
    assert_eq!(FileModes::parse("shared").unwrap().file, 0o644);
    assert!(FileModes::parse("world-writable").is_none());
    std::fs::remove_dir_all(&d).unwrap();
}

/// A file replaced keeps its mode (a wisdom file shared 0644 on purpose stayed readable to
/// others only until the next merge made it 0600), less write access for others; and a
/// temporary file left by a writer that was killed is removed by the next write, while one
/// of a live process (this one) is left alone.
#[cfg(unix)]
#[test]
fn a_replaced_file_keeps_its_mode_and_dead_writers_temporaries_go() {
    use std::os::unix::fs::PermissionsExt;
    let d = scratch("keep-mode");
    let f = d.join("w.json");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    write_atomic(&f, b"1", FileModes::PRIVATE).unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
    write_atomic(&f, b"2", FileModes::PRIVATE).unwrap();
    assert_eq!(mode(&f), 0o644);
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o666)).unwrap();
    write_atomic(&f, b"3", FileModes::PRIVATE).unwrap();
    assert_eq!(mode(&f), 0o664);
    assert_eq!(std::fs::read(&f).unwrap(), b"3");
    if Path::new("/proc/self").exists() {
        // A process id no Linux system reaches (pid_max is at most 2^22).
        let dead = d.join(".w.json.tmp-4294967295-0");
        // Gone here but fresh: maybe a writer on another host of a shared file system.
        let fresh = d.join(".w.json.tmp-4294967295-1");
        let live = d.join(format!(".w.json.tmp-{}-999", std::process::id()));
        let other = d.join(".x.json.tmp-4294967295-0");
        for p in [&dead, &fresh, &live, &other] {
            std::fs::write(p, b"partial").unwrap();
        }
        let long_ago = std::time::SystemTime::now() - 2 * STALE_TEMPORARY;
        for p in [&dead, &live, &other] {
            let file = std::fs::OpenOptions::new().write(true).open(p).unwrap();
            file.set_modified(long_ago).unwrap();
        }
        write_atomic(&f, b"4", FileModes::PRIVATE).unwrap();
        assert!(!dead.exists());
        assert!(fresh.exists() && live.exists() && other.exists());
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// An atomic write renamed over whatever the path named: as root, `kw log export --kt-cache
/// /dev/null --force` turned /dev/null into a regular file. A path that is not a regular file
/// (a FIFO, a directory, a link to one) is refused and left as it was.
#[cfg(unix)]
#[test]
fn atomic_writes_never_replace_what_is_not_a_regular_file() {
    use std::os::unix::fs::FileTypeExt;
    let d = scratch("not-regular");
    let fifo = d.join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let e = write_atomic(&fifo, b"x", FileModes::PRIVATE).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
    }
    let sub = d.join("dir");
    std::fs::create_dir(&sub).unwrap();
    assert!(write_atomic(&sub, b"x", FileModes::PRIVATE).is_err());
    assert!(sub.is_dir());
    let link = d.join("null-link");
    std::os::unix::fs::symlink("/dev/null", &link).unwrap();
    let e = write_atomic(&link, b"x", FileModes::PRIVATE).unwrap_err();
    assert!(e.to_string().contains("not a regular file"), "{e}");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    // No temporary file is left beside them.
    let mut names: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.iter().all(|n| !n.contains(".tmp-")), "{names:?}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// `keep_aside` moves a file to the first free `NAME.prevN.EXT` (never over another), and
/// leaves a missing or empty file alone; `same_file` sees through `./`, `..` and links, and
/// compares names that do not exist yet by their directory.
#[cfg(unix)]
#[test]
fn keep_aside_and_same_file() {
    let d = scratch("keep-aside");
    let f = d.join("t4.json");
    assert_eq!(keep_aside(&f).unwrap(), None);
    std::fs::write(&f, "").unwrap();
    assert_eq!(keep_aside(&f).unwrap(), None, "an empty file stays");
    std::fs::write(&f, "one").unwrap();
    std::fs::write(d.join("t4.prev1.json"), "older").unwrap();
    assert_eq!(keep_aside(&f).unwrap(), Some(d.join("t4.prev2.json")));
    assert!(!f.exists());
    assert_eq!(
        std::fs::read_to_string(d.join("t4.prev1.json")).unwrap(),
        "older"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("t4.prev2.json")).unwrap(),
        "one"
    );

    let sub = d.join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::os::unix::fs::symlink(&sub, d.join("link")).unwrap();
    let x = sub.join("x.json");
    std::fs::write(&x, "x").unwrap();
    assert!(same_file(&x, &d.join("link/x.json")));
    assert!(same_file(&x, &sub.join("../sub/./x.json")));
    // Names that do not exist: the same when their directories are.
    assert!(same_file(&sub.join("new.json"), &d.join("link/new.json")));
    assert!(!same_file(&sub.join("new.json"), &d.join("new.json")));
    std::fs::remove_dir_all(&d).unwrap();
}

/// A symbolic link given as the path of an atomic write is replaced by the new file (never
/// written through: a planted link must not aim a write elsewhere), and the file it named is
/// left as it was.
#[cfg(unix)]
#[test]
fn atomic_writes_replace_a_link_and_leave_its_target() {
    let d = scratch("through-link");
    let real = d.join("real.json");
    std::fs::write(&real, "old").unwrap();
    let link = d.join("link.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    write_atomic(&link, b"new", FileModes::PRIVATE).unwrap();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_file());
    assert_eq!(std::fs::read(&link).unwrap(), b"new");
    assert_eq!(std::fs::read(&real).unwrap(), b"old");
    std::fs::remove_dir_all(&d).unwrap();
}
