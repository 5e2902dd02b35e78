//! Results logs are never truncated, resuming refuses a log of another capture, and a file
//! that is not a log (e.g. `/dev/zero`) is a typed error, not an endless read.

mod common;

use common::small_space;
use kw_tune::log::{read_log, LogHeader, MAX_LOG_LINE};
use kw_tune::{ResultsLog, TuneError};
use std::path::PathBuf;

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kw-tune-logsafety-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

fn header_for(checksum: &str, size: &[i64], device: &str) -> LogHeader {
    let mut h = LogHeader::new(&small_space()).with_strategy("random", 1);
    h.kernel_name = Some("k".into());
    h.device_name = Some(device.into());
    h.problem_size = Some(size.to_vec());
    h.capture_checksum = Some(checksum.into());
    h
}

#[test]
fn create_never_truncates_an_existing_log() {
    let path = temp("keep.tune.jsonl");
    let header = header_for("blake3:aa", &[64], "pocl");
    drop(ResultsLog::create(&path, &header).expect("first log"));
    let before = std::fs::read(&path).expect("read");
    let err = ResultsLog::create(&path, &header).expect_err("a second create must refuse");
    assert!(matches!(err, TuneError::LogExists { .. }), "{err}");
    assert!(err.to_string().contains("keep.tune.jsonl"), "{err}");
    assert_eq!(std::fs::read(&path).expect("read"), before, "log untouched");
    // create_keeping moves it aside (twice: two distinct names) and says where.
    let (_, kept) = ResultsLog::create_keeping(&path, &header).expect("keeping");
    let kept = kept.expect("the old log was moved aside");
    assert_eq!(kept.file_name().unwrap(), "keep.tune.prev1.jsonl");
    assert_eq!(std::fs::read(&kept).expect("read kept"), before);
    let (_, kept2) = ResultsLog::create_keeping(&path, &header).expect("keeping again");
    assert_eq!(kept2.unwrap().file_name().unwrap(), "keep.tune.prev2.jsonl");
    // An empty file is no measurement: replaced silently.
    let empty = temp("empty.jsonl");
    std::fs::write(&empty, b"").expect("write");
    let (_, kept) = ResultsLog::create_keeping(&empty, &header).expect("empty");
    assert!(kept.is_none());
}

#[test]
fn resume_refuses_a_log_of_another_capture_size_or_device() {
    let space = small_space();
    let path = temp("mix.tune.jsonl");
    let logged = header_for("blake3:aa", &[1024, 1024], "pocl-cpu");
    drop(ResultsLog::create(&path, &logged).expect("log"));
    let cases = [
        (
            header_for("blake3:bb", &[1024, 1024], "pocl-cpu"),
            "capture checksum",
        ),
        (
            header_for("blake3:aa", &[2048, 1024], "pocl-cpu"),
            "problem size",
        ),
        (header_for("blake3:aa", &[1024, 1024], "H100"), "device"),
    ];
    for (current, field) in cases {
        let err = ResultsLog::resume(&path, &space, &current).expect_err(field);
        match &err {
            TuneError::LogMismatch { field: f, .. } => assert_eq!(*f, field),
            other => panic!("expected a mismatch of the {field}, got {other}"),
        }
        assert!(err.to_string().contains("mix.tune.jsonl"), "{err}");
    }
    // The same capture resumes; a header without a checksum (older log) is not refused.
    ResultsLog::resume(&path, &space, &logged).expect("same capture resumes");
    let mut older = logged.clone();
    older.capture_checksum = None;
    ResultsLog::resume(&path, &space, &older).expect("older header");
}

#[test]
fn endless_or_binary_input_is_a_typed_error() {
    // A file of zeros without a newline, longer than any log line: a bounded read, an error.
    let path = temp("zeros.jsonl");
    std::fs::write(&path, vec![0u8; MAX_LOG_LINE + 10]).expect("write");
    let err = read_log(&path).expect_err("zeros");
    assert!(matches!(err, TuneError::LogFormat { line: 1, .. }), "{err}");
    assert!(err.to_string().contains("longer than"), "{err}");
    // Not UTF-8.
    std::fs::write(&path, b"\xff\xfe\n").expect("write");
    let err = read_log(&path).expect_err("binary");
    assert!(matches!(err, TuneError::LogFormat { .. }), "{err}");
    #[cfg(unix)]
    {
        let err = read_log(std::path::Path::new("/dev/zero")).expect_err("/dev/zero");
        assert!(err.to_string().contains("/dev/zero"), "{err}");
    }
}
