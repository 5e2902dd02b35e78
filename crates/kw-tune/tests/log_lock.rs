//! One writer per results log, and torn lines cost only themselves (issue #28): a log that
//! one run holds is refused to every other way of opening it for writing, naming the
//! holder's pid and host, and left untouched; a log with torn lines in the middle and at the
//! end resumes, losing only those lines.

mod common;

use common::{small_objective, small_space};
use kw_core::space::Point;
use kw_tune::log::{read_log, LogHeader};
use kw_tune::{strategies, LogLock, ResultsLog, Stop, TuneError, Tuner};
use std::io::Write;
use std::path::{Path, PathBuf};

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kw-tune-loglock-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

fn header() -> LogHeader {
    let mut h = LogHeader::new(&small_space()).with_strategy("random", 1);
    h.kernel_name = Some("k".into());
    h.capture_checksum = Some("blake3:aa".into());
    h
}

fn locked_by_me(err: &TuneError, log: &Path) {
    let TuneError::LogLocked { path, holder, .. } = err else {
        panic!("expected LogLocked, got {err}");
    };
    assert_eq!(path, log);
    let holder = holder.as_ref().expect("the holder is recorded");
    assert_eq!(holder.pid, std::process::id());
    assert_eq!(holder.host, kw_core::host::host_name());
    let text = err.to_string();
    assert!(
        text.contains(&format!("pid {} on host", std::process::id())),
        "{text}"
    );
    assert!(text.contains(&log.display().to_string()), "{text}");
}

/// A log held by a run: `create`, `create_keeping` and `resume` are each refused with the
/// holder's pid, and the log is neither renamed aside nor changed; once the holder is gone
/// the log resumes.
#[test]
fn a_held_log_is_refused_to_a_second_writer_and_left_untouched() {
    let space = small_space();
    let path = temp("held.tune.jsonl");
    let log = ResultsLog::create(&path, &header()).expect("first run's log");
    let before = std::fs::read(&path).expect("read");

    locked_by_me(
        &ResultsLog::create(&path, &header()).expect_err("create"),
        &path,
    );
    locked_by_me(
        &ResultsLog::create_keeping(&path, &header()).expect_err("create_keeping"),
        &path,
    );
    locked_by_me(
        &ResultsLog::resume(&path, &space, &header()).expect_err("resume"),
        &path,
    );
    assert_eq!(std::fs::read(&path).expect("read"), before, "log untouched");
    let prev = path.with_file_name("held.tune.prev1.jsonl");
    assert!(!prev.exists(), "the held log was not renamed aside");

    // A clone of the lock outlives the log (as `kw tune` keeps it until the wisdom is
    // written): still refused.
    let lock = log.lock();
    drop(log);
    locked_by_me(
        &ResultsLog::resume(&path, &space, &header()).expect_err("resume under the kept lock"),
        &path,
    );
    drop(lock);
    let (_, records) = ResultsLog::resume(&path, &space, &header()).expect("released: resumes");
    assert!(records.is_empty());
}

/// A lock file whose content is not a holder (garbage written over it) still locks; the
/// refusal says the pid is not known instead of printing the garbage.
#[test]
fn an_unreadable_holder_is_not_printed() {
    let path = temp("garbage.tune.jsonl");
    let lock = LogLock::acquire(&path).expect("lock");
    std::fs::write(
        lock.file_path(),
        b"\x1b[31m{\"pid\": 7, \"host\": \"a\nb\"}",
    )
    .expect("write");
    let err = LogLock::acquire(&path).expect_err("held");
    let TuneError::LogLocked { holder, .. } = &err else {
        panic!("{err}");
    };
    assert_eq!(holder, &None);
    let text = err.to_string();
    assert!(text.contains("its pid is not recorded yet"), "{text}");
    assert!(!text.contains('\x1b'), "{text}");
    drop(lock);
    LogLock::acquire(&path).expect("released");
}

fn run_logged(path: &Path, evaluations: u64) {
    let space = small_space();
    let log = ResultsLog::create(path, &header()).expect("log");
    let mut strategy = strategies::create("random", 3).expect("strategy");
    let sp = space.clone();
    let mut ev = move |p: &Point| small_objective(&sp, p);
    Tuner::new(&space, Stop::Evaluations(evaluations))
        .with_log(log)
        .run(&mut *strategy, &mut ev)
        .expect("run");
}

/// Torn lines (two writers interleaving, a crash mid-line) in the middle and at the end: the
/// log resumes, only those lines are dropped, and lines appended by the resumed run are read
/// back whole.
#[test]
fn torn_lines_in_the_middle_and_at_the_end_lose_only_themselves() {
    let space = small_space();
    let path = temp("torn.tune.jsonl");
    run_logged(&path, 6);
    let text = std::fs::read_to_string(&path).expect("read");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 7, "a header and 6 records");
    let whole = read_log(&path).expect("read").records;
    // Line 3 (record 2) torn in the middle, record 4 written into the middle of record 3
    // (what two writers interleaving produce), and a fragment of a record at the end.
    let (a, b) = lines[3].split_at(lines[3].len() / 2);
    let torn = format!(
        "{}\n{}\n{}\n{}{}\n{}\n{}\n{}",
        lines[0],
        lines[1],
        &lines[2][..lines[2].len() / 3],
        a,
        lines[4],
        b,
        lines[5],
        &lines[6][..20],
    );
    std::fs::write(&path, torn).expect("write torn log");

    let contents = read_log(&path).expect("a torn log is read, not refused");
    let dropped: Vec<usize> = contents.dropped.iter().map(|d| d.0).collect();
    assert_eq!(dropped, vec![3, 4, 5, 7], "{:?}", contents.dropped);
    let kept: Vec<u64> = contents.records.iter().map(|r| r.eval).collect();
    assert_eq!(kept, vec![1, 5], "only the torn records are lost");
    assert_eq!(contents.records[0], whole[0]);
    assert_eq!(contents.records[1], whole[4]);

    let (log, records) = ResultsLog::resume(&path, &space, &header()).expect("resumes");
    assert_eq!(records.len(), 2);
    let mut strategy = strategies::create("random", 3).expect("strategy");
    let sp = space.clone();
    let mut ev = move |p: &Point| small_objective(&sp, p);
    let report = Tuner::new(&space, Stop::Evaluations(6))
        .resume(log, records)
        .run(&mut *strategy, &mut ev)
        .expect("resumed run");
    assert_eq!(report.progress.evaluations, 6);
    // The unterminated fragment was cut; the middle lines stay (dropped again on reading),
    // and every record the resumed run appended reads back.
    let after = read_log(&path).expect("read");
    assert_eq!(after.records.len(), 6, "{:?}", after.dropped);
    assert_eq!(
        after.dropped.iter().map(|d| d.0).collect::<Vec<_>>(),
        vec![3, 4, 5]
    );
    assert!(std::fs::read_to_string(&path)
        .expect("read")
        .ends_with("}\n"));
}

/// A torn line whose bytes are not UTF-8 (a write cut inside a character) is dropped too;
/// a torn header is still an error: nothing after it could be trusted.
#[test]
fn a_non_utf8_record_line_is_dropped_and_a_torn_header_refused() {
    let path = temp("utf8.tune.jsonl");
    run_logged(&path, 2);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .expect("open");
    f.write_all(b"{\"eval\": 3, \"key\": \"\xe2\x82\n")
        .expect("append");
    drop(f);
    let contents = read_log(&path).expect("read");
    assert_eq!(contents.records.len(), 2);
    assert_eq!(contents.dropped.len(), 1);
    assert_eq!(contents.dropped[0].0, 4);

    // Only the first 10 bytes of the header line survived.
    let bytes = std::fs::read(&path).expect("read");
    let mut torn = bytes[..10].to_vec();
    torn.push(b'\n');
    std::fs::write(&path, torn).expect("write");
    let err = read_log(&path).expect_err("torn header");
    assert!(matches!(err, TuneError::LogFormat { line: 1, .. }), "{err}");
}
