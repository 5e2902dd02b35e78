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
    std::fs::remove_dir_all(&d).unwrap();
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
