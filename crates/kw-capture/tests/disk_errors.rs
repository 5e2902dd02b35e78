//! Full disks and unwritable places: clear errors, no panic, nothing left behind that looks
//! like a capture.

mod common;

use common::{random_bytes, TempDir};
use kw_capture::{
    write_capture, Capture, CaptureBuffer, CaptureError, CaptureWriter, WriteOptions,
};
use std::io::{Cursor, Seek, SeekFrom, Write};
use std::path::Path;

/// A seekable in-memory writer whose device is "full" after `limit` bytes.
struct FullDisk {
    inner: Cursor<Vec<u8>>,
    limit: u64,
}

impl Write for FullDisk {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let pos = self.inner.position();
        if pos >= self.limit {
            return Err(std::io::Error::from_raw_os_error(28)); // ENOSPC
        }
        let room = (self.limit - pos).min(buf.len() as u64) as usize;
        self.inner.write(&buf[..room])
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Seek for FullDisk {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(to)
    }
}

fn buffers() -> Vec<CaptureBuffer> {
    vec![
        CaptureBuffer::new("a", "f32", random_bytes(20_000, 1)),
        CaptureBuffer::new("b", "f32", vec![0u8; 30_000]),
        CaptureBuffer::new("c", "u8", random_bytes(5_000, 2)),
    ]
}

#[test]
fn simulated_enospc_at_every_stage() {
    let writer = CaptureWriter::new(WriteOptions {
        chunk_size: 4096,
        ..WriteOptions::default()
    });
    let label = Path::new("/captures/full.kwcap");
    let meta = serde_json::json!({"tuning_key": "k"});
    let mut full = Cursor::new(Vec::new());
    let sizes = writer
        .write_to(&mut full, label, meta.clone(), &buffers())
        .expect("unlimited");
    let full_len = sizes.file_len;
    let mut limit = 0;
    while limit < full_len {
        let mut w = FullDisk {
            inner: Cursor::new(Vec::new()),
            limit,
        };
        let e = writer
            .write_to(&mut w, label, meta.clone(), &buffers())
            .unwrap_err();
        match &e {
            CaptureError::Io { source, .. } => assert_eq!(source.raw_os_error(), Some(28), "{e}"),
            other => panic!("expected an I/O error, got {other}"),
        }
        assert!(e.to_string().contains("full.kwcap"), "{e}");
        // What reached the "disk" never reads as a capture: the magic is written last.
        let partial = w.inner.into_inner();
        assert!(
            Capture::from_bytes(label, partial).is_err(),
            "limit {limit}"
        );
        limit += if limit < 200 { 1 } else { 331 };
    }
}

/// Mounts a 1 MiB tmpfs on a fresh directory; unmounts on drop.
struct SmallTmpfs(TempDir);

impl SmallTmpfs {
    fn mount() -> Option<SmallTmpfs> {
        let dir = TempDir::new("tmpfs");
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1M", "tmpfs"])
            .arg(dir.path())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(SmallTmpfs(dir))
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.0.path())
            .status();
    }
}

#[test]
fn full_tmpfs_leaves_nothing_behind() {
    let Some(fs) = SmallTmpfs::mount() else {
        eprintln!("SKIPPED full_tmpfs_leaves_nothing_behind: cannot mount a tmpfs here (not root?); the simulated ENOSPC test covers the writer");
        return;
    };
    let dir = fs.0.path();
    // 3 MiB of incompressible data cannot fit in 1 MiB.
    let big = vec![CaptureBuffer::new("big", "u8", random_bytes(3 << 20, 9))];
    let e = write_capture(dir, "too-big", &serde_json::json!({}), big).unwrap_err();
    match &e {
        CaptureError::Io { source, .. } => assert_eq!(source.raw_os_error(), Some(28), "{e}"),
        other => panic!("expected ENOSPC, got {other}"),
    }
    assert!(e.to_string().contains("too-big.kwcap"), "{e}");
    assert!(
        fs.0.entries().is_empty(),
        "left behind: {:?}",
        fs.0.entries()
    );
    // The space is free again: a small capture fits.
    let p = write_capture(dir, "small", &serde_json::json!({}), buffers()).expect("small capture");
    Capture::open(&p).expect("open").verify().expect("verify");
    assert_eq!(fs.0.entries(), vec!["small.kwcap".to_string()]);
}

#[test]
fn unwritable_places_give_clear_errors() {
    let dir = TempDir::new("unwritable");
    // A "directory" that is a regular file (even root cannot create files under it).
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"x").unwrap();
    let e = write_capture(&file, "k", &serde_json::json!({}), buffers()).unwrap_err();
    assert!(matches!(e, CaptureError::Io { .. }), "{e}");
    assert!(e.to_string().contains("plain-file"), "{e}");
    // A missing directory.
    let e = write_capture(
        dir.path().join("no/such/dir"),
        "k",
        &serde_json::json!({}),
        buffers(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("no/such/dir"), "{e}");
    // A read-only directory (root bypasses the mode; then the write simply succeeds).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let ro = dir.path().join("ro");
        std::fs::create_dir(&ro).unwrap();
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o500)).unwrap();
        match write_capture(&ro, "k", &serde_json::json!({}), buffers()) {
            Err(e) => {
                assert!(e.to_string().contains("/ro/"), "{e}");
                assert_eq!(std::fs::read_dir(&ro).unwrap().count(), 0);
            }
            Ok(p) => {
                eprintln!("note: running as root, mode 0o500 did not stop the write");
                Capture::open(&p).unwrap().verify().unwrap();
            }
        }
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"x");
}
