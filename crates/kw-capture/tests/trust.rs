//! Captures and the file system (issue 28): captures are written private (they hold an
//! application's whole buffers), and a path that is not a regular file is refused at once,
//! naming it, never waited on (a FIFO) or read without end (a link to `/dev/zero`).

mod common;

use common::{random_bytes, TempDir};
use kw_capture::{write_capture, Capture, CaptureBuffer};

#[cfg(unix)]
#[test]
fn captures_are_written_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("trust-modes");
    let path = write_capture(
        dir.path(),
        "k",
        &serde_json::json!({"tuning_key": "k"}),
        vec![CaptureBuffer::new("a", "u8", random_bytes(1000, 3))],
    )
    .unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(Capture::open(&path).unwrap().buffers().count(), 1);
}

#[cfg(unix)]
#[test]
fn fifos_and_devices_are_refused_at_once() {
    let dir = TempDir::new("trust-special");
    let fifo = dir.path().join("pipe.kwcap");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo");
    let e = Capture::open(&fifo).unwrap_err().to_string();
    assert!(e.contains("pipe.kwcap") && e.contains("a FIFO"), "{e}");
    assert_eq!(e.matches("pipe.kwcap").count(), 1, "the path once: {e}");
    let zero = dir.path().join("zero.kwcap");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let e = Capture::open(&zero).unwrap_err().to_string();
    assert!(e.contains("character device"), "{e}");
}
