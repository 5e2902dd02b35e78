//! Wisdom files written by someone else (issue 28): a duplicate key, a time of 0 or below, a
//! problem size that is not a size, a FIFO, a link to a device, a file anyone may write. Each
//! is refused with the file and the record named, the good records of the same file still
//! load, and nothing bad is copied on by a merge or dropped silently by a rewrite.

use kw_core::space::Parameter;
use kw_core::wisdom::*;
use kw_core::{config::Config, expr::Expr, space::TuningSpace};
use std::path::{Path, PathBuf};

fn space() -> TuningSpace {
    TuningSpace::new(
        vec![
            Parameter::new("block_size_x", [64, 128]),
            Parameter::new("unroll", [1, 2]),
        ],
        vec![Expr::parse("block_size_x * unroll <= 256").unwrap()],
    )
    .unwrap()
}

fn record(size: &[i64], bx: i64, ms: f64) -> WisdomRecord {
    let mut config = Config::default();
    config.set("block_size_x", bx);
    config.set("unroll", 1);
    WisdomRecord {
        config,
        problem_size: size.to_vec(),
        device: WisdomDevice {
            name: "GPU".into(),
            vendor: "V".into(),
            backend: "opencl".into(),
            architecture: "a".into(),
            driver: "1".into(),
        },
        objective: Objective {
            median_ms: ms,
            samples: 10,
            ..Default::default()
        },
        space: SpaceFingerprint::of(&space()),
        provenance: Provenance::default(),
        alternates: Vec::new(),
    }
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "kw-wisdom-trust-{tag}-{}-{}",
        std::process::id(),
        kw_core::files::nonce(0)
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes a file of `records`, the second of which gets `"block_size_x"` twice in `config`.
fn write_with_duplicate(path: &Path) {
    let mut f = WisdomFile::new("k");
    f.records = vec![record(&[1024], 64, 1.0), record(&[4096], 64, 2.0)];
    let text = serde_json::to_string_pretty(&f).unwrap();
    // The second record's config: {"block_size_x": 64, "unroll": 1} -> a duplicate key.
    let at = text.rfind("\"block_size_x\": 64").unwrap();
    let text = format!(
        "{}\"block_size_x\": 64, \"block_size_x\": 128{}",
        &text[..at],
        &text[at + "\"block_size_x\": 64".len()..]
    );
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_duplicate_key_rejects_the_record_and_names_file_and_record() {
    let dir = temp_dir("dup");
    let path = dir.join("k.json");
    write_with_duplicate(&path);
    let f = WisdomFile::load(&path).unwrap();
    assert_eq!(f.records.len(), 1, "the good record still loads");
    assert_eq!(f.rejected.len(), 1);
    assert!(
        f.rejected[0].contains("record #2")
            && f.rejected[0].contains("duplicate key `block_size_x`"),
        "{:?}",
        f.rejected
    );
    // Selection's loader reports it with the file named.
    let (found, errors) = find_wisdom_files("k", std::slice::from_ref(&dir));
    assert_eq!(found.len(), 1);
    let e = errors[0].to_string();
    assert!(e.contains("k.json") && e.contains("record #2"), "{e}");
    // A merge does not copy it on, and says so.
    let (merged, report) = merge_files(vec![f]);
    assert_eq!(merged[0].records.len(), 1);
    assert!(report.dropped[0].1.contains("duplicate key"), "{report:?}");
    // A writer does not silently drop it by rewriting the file.
    let e = add_record(
        &dir,
        "k",
        record(&[2048], 128, 1.0),
        ReplacePolicy::IfBetter,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("invalid records") && e.contains("record #2"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn times_and_problem_sizes_must_be_real() {
    let dir = temp_dir("values");
    let mut f = WisdomFile::new("k");
    f.records = vec![
        record(&[1024], 64, 1.0),
        record(&[2048], 128, 0.0),
        record(&[-4096], 64, 1.0),
        record(&[0], 64, 1.0),
        record(&[], 64, 1.0),
        record(&[512], 64, -1.0),
    ];
    let path = dir.join("k.json");
    std::fs::write(&path, serde_json::to_string(&f).unwrap()).unwrap();
    let loaded = WisdomFile::load(&path).unwrap();
    assert_eq!(loaded.records, vec![record(&[1024], 64, 1.0)]);
    let why = loaded.rejected.join("\n");
    assert!(why.contains("record #2: objective 0 ms"), "{why}");
    assert!(why.contains("record #3: problem size [-4096]"), "{why}");
    assert!(why.contains("record #4: problem size [0]"), "{why}");
    assert!(
        why.contains("record #5: the problem size has no axis"),
        "{why}"
    );
    assert!(why.contains("record #6"), "{why}");
    // A record with time 0 never wins a merge over a measured one.
    let (merged, _) = merge_files(vec![
        WisdomFile {
            records: vec![record(&[2048], 64, 3.0)],
            ..WisdomFile::new("k")
        },
        WisdomFile {
            records: vec![record(&[2048], 128, 0.0)],
            ..WisdomFile::new("k")
        },
    ]);
    assert_eq!(merged[0].records, vec![record(&[2048], 64, 3.0)]);
    // A record with more axes than the kernel's problem size is never selected.
    let rs = vec![record(&[1024, 8], 128, 1.0), record(&[1024], 64, 5.0)];
    let q = Query {
        device_name: "GPU".into(),
        architecture: "a".into(),
        backend: "opencl".into(),
        problem_size: vec![1024],
    };
    let s = select(&rs, &q, |_| Ok(()));
    assert_eq!(s.record, Some(1));
    assert!(s.skipped[0].1.contains("2 axes"), "{:?}", s.skipped);
    let _ = std::fs::remove_dir_all(dir);
}

#[cfg(unix)]
#[test]
fn special_files_are_refused_at_once() {
    let dir = temp_dir("special");
    let fifo = dir.join("fifo.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo");
    let zero = dir.join("zero.json");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    // Returning at all is the point: a FIFO would block for ever, /dev/zero read for ever.
    let e = WisdomFile::load(&fifo).unwrap_err().to_string();
    assert!(e.contains("fifo.json") && e.contains("a FIFO"), "{e}");
    let e = WisdomFile::load(&zero).unwrap_err().to_string();
    assert!(
        e.contains("zero.json") && e.contains("character device"),
        "{e}"
    );
    // The merge command's input path: refused the same way.
    let e = merge_into(&dir.join("out"), vec![]).map(|_| ());
    assert!(e.is_ok());
    let _ = std::fs::remove_dir_all(dir);
}

#[cfg(unix)]
#[test]
fn modes_written_and_world_writable_files_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("modes");
    let sub = dir.join("new");
    let (path, _) =
        add_record(&sub, "k", record(&[1024], 64, 1.0), ReplacePolicy::IfBetter).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600, "wisdom is written private");
    assert_eq!(mode(&sub), 0o700, "its new directory too");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    let e = WisdomFile::load(&path).unwrap_err().to_string();
    assert!(
        e.contains("anyone may write it") && e.contains("chmod o-w"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(dir);
}
