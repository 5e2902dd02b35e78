//! Wisdom files: selection steps, ties, stale and undeclared records, corrupt files, and
//! concurrent writers.

use kw_core::space::Parameter;
use kw_core::wisdom::*;
use kw_core::{config::Config, expr::Expr, space::TuningSpace, value::Value};
use std::path::PathBuf;

fn space() -> TuningSpace {
    TuningSpace::new(
        vec![
            Parameter::new("bx", [32, 64, 128, 256]),
            Parameter::new("unroll", [1, 2, 4]),
        ],
        vec![Expr::parse("bx * unroll <= 512").unwrap()],
    )
    .unwrap()
}

fn record(device: &str, arch: &str, backend: &str, size: &[i64], bx: i64, ms: f64) -> WisdomRecord {
    let mut config = Config::default();
    config.set("bx", bx);
    config.set("unroll", 2);
    WisdomRecord {
        config,
        problem_size: size.to_vec(),
        device: WisdomDevice {
            name: device.into(),
            vendor: "V".into(),
            backend: backend.into(),
            architecture: arch.into(),
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

fn query(device: &str, arch: &str, backend: &str, size: &[i64]) -> Query {
    Query {
        device_name: device.into(),
        architecture: arch.into(),
        backend: backend.into(),
        problem_size: size.to_vec(),
    }
}

fn records() -> Vec<WisdomRecord> {
    vec![
        record("GPU A", "sm_90", "cuda", &[1 << 20], 32, 1.0),
        record("GPU A", "sm_90", "cuda", &[1 << 24], 64, 1.0),
        record("GPU B", "sm_80", "cuda", &[1 << 22], 128, 1.0),
        record("GPU C", "sm_90", "cuda", &[1 << 26], 256, 1.0),
        record("CPU D", "pocl", "opencl", &[1 << 20], 32, 1.0),
    ]
}

#[test]
fn each_of_the_five_steps() {
    let rs = records();
    let all_ok = |_: &WisdomRecord| Ok(());
    let s = select(
        &rs,
        &query("GPU A", "sm_90", "cuda", &[1 << 24, 1, 1]),
        all_ok,
    );
    assert_eq!((s.step, s.record), (Step::ExactDeviceExactSize, Some(1)));
    let s = select(&rs, &query("GPU A", "sm_90", "cuda", &[1 << 21]), all_ok);
    assert_eq!((s.step, s.record), (Step::DeviceNearestSize, Some(0)));
    // Another sm_90 device: GPU A's and GPU C's records qualify; the nearest size wins.
    let s = select(&rs, &query("GPU Z", "sm_90", "cuda", &[3 << 24]), all_ok);
    assert_eq!((s.step, s.record), (Step::ArchitectureNearestSize, Some(3)));
    let s = select(&rs, &query("GPU Z", "sm_75", "cuda", &[1 << 22]), all_ok);
    assert_eq!((s.step, s.record), (Step::BackendNearestSize, Some(2)));
    let s = select(
        &rs[..4],
        &query("CPU Y", "other", "opencl", &[1 << 22]),
        all_ok,
    );
    assert_eq!((s.step, s.record), (Step::Default, None));
    let text = explain(&rs[..4], &query("CPU Y", "other", "opencl", &[1 << 22]), &s);
    assert!(text.contains("default configuration"), "{text}");
}

#[test]
fn nearest_compares_shape_not_only_product() {
    // Same product (2^18), different shapes: the same shape is nearer.
    assert!(log_distance(&[4096, 64], &[4096, 64]) == 0.0);
    assert!(log_distance(&[64, 4096], &[4096, 64]) > log_distance(&[2048, 64], &[4096, 64]));
    let rs = vec![
        record("G", "a", "cuda", &[64, 4096], 32, 1.0),
        record("G", "a", "cuda", &[2048, 128], 64, 1.0),
    ];
    let s = select(&rs, &query("G", "a", "cuda", &[4096, 64]), |_| Ok(()));
    assert_eq!(s.record, Some(1));
}

#[test]
fn ties_go_to_the_larger_problem_then_the_faster_then_the_earlier_record() {
    let rs = vec![
        record("G", "a", "cuda", &[1000], 32, 2.0),
        record("G", "a", "cuda", &[4000], 64, 1.0),
        record("G", "a", "cuda", &[4000], 128, 1.0),
    ];
    // 2000 is equally far (log scale) from 1000 and 4000: equal log distances go to the
    // larger problem size, equal sizes to the faster record.
    let s = select(&rs, &query("G", "a", "cuda", &[2000]), |_| Ok(()));
    assert_eq!(s.record, Some(1), "4000's faster record");
    let s = select(&rs, &query("G", "a", "cuda", &[4000]), |_| Ok(()));
    assert_eq!(s.record, Some(1), "two records of 4000: the faster");
    // 2^25 is as far from 2^24 as from 2^26, though ln's rounding makes 2^26 nearer by 4e-15:
    // a tie, which 2^26 wins however fast either record is.
    for slow in [0, 1] {
        let mut rs = vec![
            record("G", "a", "cuda", &[1 << 24], 32, 1.0),
            record("G", "a", "cuda", &[1 << 26], 64, 1.0),
        ];
        rs[slow].objective.median_ms = 2.0;
        let s = select(&rs, &query("G", "a", "cuda", &[1 << 25]), |_| Ok(()));
        assert_eq!(s.record, Some(1));
    }
    // Two dimensions: [2048, 16384] is ln 8 from both [2048, 2048] and [8192, 8192]; the
    // volume of [8192, 8192] is nearer its own (ln 2 against ln 8).
    let rs = vec![
        record("G", "a", "cuda", &[2048, 2048], 32, 1.0),
        record("G", "a", "cuda", &[8192, 8192], 64, 5.0),
    ];
    let s = select(&rs, &query("G", "a", "cuda", &[2048, 16384]), |_| Ok(()));
    assert_eq!(s.record, Some(1));
    // [512, 2048] is ln 4 from [256, 1024], [1024, 4096] and [512, 512] (volumes 2^18, 2^22
    // and 2^18 against its 2^20): the two nearest volumes tie, and the larger problem goes
    // first, wherever it is in the file.
    let rs = vec![
        record("G", "a", "cuda", &[256, 1024], 32, 1.0),
        record("G", "a", "cuda", &[1024, 4096], 64, 5.0),
        record("G", "a", "cuda", &[512, 512], 32, 1.0),
    ];
    let s = select(&rs, &query("G", "a", "cuda", &[512, 2048]), |_| Ok(()));
    assert_eq!(s.record, Some(1));
}

#[test]
fn stale_and_undeclared_records_are_skipped() {
    let space = space();
    let mut rs = records();
    rs[0].config.set("bx", 7); // not a declared value
    rs[1].config.set("unroll", 4); // bx=64, unroll=4: valid
    rs[1].config.set("bx", 256); // 256 * 4 > 512: breaks the restriction
    rs[2].config.set("bx", Value::Str("32 -DEVIL=1".into())); // wisdom is data, never code
    let q = query("GPU A", "sm_90", "cuda", &[1 << 24]);
    let s = select(&rs, &q, |r| r.check_against(&space).map(|_| ()));
    assert_eq!(
        s.skipped.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    assert!(
        s.skipped[0].1.contains("not a declared value"),
        "{:?}",
        s.skipped
    );
    assert!(s.skipped[1].1.contains("breaks"), "{:?}", s.skipped);
    assert!(
        s.skipped[2].1.contains("not a declared value"),
        "{:?}",
        s.skipped
    );
    // With GPU A's records unusable, the sm_90 record of GPU C is chosen at step 3.
    assert_eq!((s.step, s.record), (Step::ArchitectureNearestSize, Some(3)));
    let mut extra = rs[3].clone();
    extra.config.0.push(("bogus".into(), Value::Int(1)));
    assert!(extra.check_against(&space).is_err());
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kw-wisdom-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn add_record_replaces_only_when_better_or_asked() {
    let dir = temp_dir("policy");
    let (path, o) = add_record(
        &dir,
        "k/1",
        record("G", "a", "cuda", &[8], 32, 2.0),
        ReplacePolicy::IfBetter,
    )
    .unwrap();
    assert_eq!(o, AddOutcome::Added);
    assert_eq!(path.file_name().unwrap(), "k_1.json");
    let (_, o) = add_record(
        &dir,
        "k/1",
        record("G", "a", "cuda", &[8, 1], 64, 3.0),
        ReplacePolicy::IfBetter,
    )
    .unwrap();
    assert_eq!(o, AddOutcome::KeptExisting);
    let (_, o) = add_record(
        &dir,
        "k/1",
        record("G", "a", "cuda", &[8], 128, 1.0),
        ReplacePolicy::IfBetter,
    )
    .unwrap();
    assert_eq!(o, AddOutcome::Replaced);
    let (_, o) = add_record(
        &dir,
        "k/1",
        record("G", "a", "cuda", &[8], 64, 5.0),
        ReplacePolicy::Always,
    )
    .unwrap();
    assert_eq!(o, AddOutcome::Replaced);
    let f = WisdomFile::load(&path).unwrap();
    assert_eq!(f.records.len(), 1);
    assert_eq!(f.records[0].objective.median_ms, 5.0);
    // No temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into())
        .collect();
    assert!(names.iter().all(|n| !n.contains(".tmp")), "{names:?}");
}

#[test]
fn corrupt_files_are_reported_and_skipped() {
    let first = temp_dir("corrupt-a");
    let second = temp_dir("corrupt-b");
    std::fs::write(first.join("key.json"), "{ not json").unwrap();
    add_record(
        &second,
        "key",
        record("G", "a", "cuda", &[8], 32, 2.0),
        ReplacePolicy::IfBetter,
    )
    .unwrap();
    let (found, errors) = find_wisdom_file("key", &[first.clone(), second.clone()]);
    let (path, file) = found.unwrap();
    assert_eq!(path, second.join("key.json"));
    assert_eq!(file.records.len(), 1);
    assert_eq!(errors.len(), 1);
    assert!(errors[0].to_string().contains("corrupt-a"), "{}", errors[0]);
    // A newer format version is refused with a clear message.
    std::fs::write(
        first.join("new.json"),
        r#"{"format": "kernel-wisdom", "version": 99, "tuning_key": "new", "records": []}"#,
    )
    .unwrap();
    let e = WisdomFile::load(&first.join("new.json"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("version 99"), "{e}");
}

#[test]
fn merge_keeps_the_fastest_per_device_and_size() {
    let mut a = WisdomFile::new("k");
    a.records = vec![
        record("G", "a", "cuda", &[8], 32, 2.0),
        record("H", "b", "cuda", &[8], 32, 2.0),
    ];
    let mut b = WisdomFile::new("k");
    b.records = vec![
        record("G", "a", "cuda", &[8], 64, 1.0),
        record("G", "a", "cuda", &[16], 64, 1.0),
    ];
    let (merged, report) = merge_files(vec![a, b]);
    assert_eq!(merged.len(), 1);
    assert_eq!(merged[0].records.len(), 3);
    assert_eq!(merged[0].records[0].config.get("bx"), Some(&Value::Int(64)));
    assert_eq!(report.read, 4);
    assert!(report.dropped.is_empty());
}

/// A faster record with a negative time or an undeclared value does not replace a valid
/// one; a faster record of another space version keeps its own slot, so the valid one stays.
#[test]
fn merge_never_loses_a_valid_record_to_an_invalid_one() {
    let valid = record("G", "a", "cuda", &[8], 64, 2.0);
    let negative = record("G", "a", "cuda", &[8], 32, -1.0);
    let nan = record("G", "a", "cuda", &[8], 32, f64::NAN);
    let mut undeclared = record("G", "a", "cuda", &[8], 32, 0.5);
    undeclared.config.set("bx", 48); // not a value of the recorded space
    let mut older_space = record("G", "a", "cuda", &[8], 32, 0.1);
    older_space.space.hash = "older".into();
    older_space.space.parameters[0]
        .values
        .push(Value::Int(4096));
    older_space.config.set("bx", 4096); // the current space no longer declares it
    let mut a = WisdomFile::new("k");
    a.records = vec![valid.clone(), negative, nan, undeclared, older_space];
    let (merged, report) = merge_files(vec![a]);
    assert_eq!(report.dropped.len(), 3, "{:?}", report.dropped);
    let kept = &merged[0].records;
    assert_eq!(kept.len(), 2);
    assert!(kept.contains(&valid));
    // The runtime's selection skips the stale one and chooses the valid record.
    let s = space();
    let sel = select(kept, &query("G", "a", "cuda", &[8]), |r| {
        r.check_against(&s).map(|_| ())
    });
    assert_eq!(sel.step, Step::ExactDeviceExactSize);
    assert_eq!(kept[sel.record.unwrap()], valid);
    // Selection also skips a record with a negative time on its own.
    let bad = vec![record("G", "a", "cuda", &[8], 64, -3.0), valid.clone()];
    let sel = select(&bad, &query("G", "a", "cuda", &[8]), |_| Ok(()));
    assert_eq!(sel.record, Some(1));
    assert_eq!(sel.skipped.len(), 1);
}

/// 40,000 records (4,000 distinct slots, each seen 10 times) merge in one linear pass: the
/// result is exactly one fastest record per slot. (Timing is a benchmark's business; a
/// quadratic merge makes this test take minutes.)
#[test]
fn merge_of_40000_records_keeps_one_fastest_per_slot() {
    let mut files = Vec::new();
    for copy in 0..10 {
        let mut f = WisdomFile::new("big");
        f.records = (0..4000)
            .map(|i| {
                record(
                    &format!("dev{}", i % 40),
                    "a",
                    "cuda",
                    &[i / 40 + 1],
                    64,
                    10.0 - copy as f64,
                )
            })
            .collect();
        files.push(f);
    }
    let (merged, report) = merge_files(files);
    assert_eq!(report.read, 40_000);
    assert_eq!(merged[0].records.len(), 4000);
    assert!(merged[0]
        .records
        .iter()
        .all(|r| r.objective.median_ms == 1.0));
}

/// `merge_into` takes the writers' lock: merging beside a tune that adds records loses none.
#[test]
fn merge_into_beside_writers_loses_no_record() {
    let dir = std::env::temp_dir().join(format!("kw-merge-lock-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let writer = {
        let dir = dir.clone();
        std::thread::spawn(move || {
            for i in 0..40 {
                let r = record("tuner", "a", "cuda", &[i + 1], 32, 1.0);
                add_record(&dir, "k", r, ReplacePolicy::IfBetter).unwrap();
            }
        })
    };
    for i in 0..40 {
        let mut f = WisdomFile::new("k");
        f.records = vec![record("merged", "a", "cuda", &[i + 1], 32, 1.0)];
        merge_into(&dir, vec![f]).unwrap();
    }
    writer.join().unwrap();
    let f = WisdomFile::load(&dir.join("k.json")).unwrap();
    assert_eq!(f.records.len(), 80);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `merge_into` holds every key's lock from its size check to its last write: while one
/// key's lock is held elsewhere (a tune adding a record), no key's file is written yet.
#[test]
fn merge_into_holds_every_key_lock_before_writing() {
    let dir = std::env::temp_dir().join(format!("kw-merge-all-locks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let held = std::fs::File::create(dir.join(format!("{}.lock", wisdom_file_name("b")))).unwrap();
    held.lock().unwrap();
    let merger = {
        let dir = dir.clone();
        std::thread::spawn(move || {
            let files = ["a", "b"].map(|key| {
                let mut f = WisdomFile::new(key);
                f.records = vec![record("merged", "a", "cuda", &[8], 32, 1.0)];
                f
            });
            merge_into(&dir, files.to_vec()).unwrap()
        })
    };
    // Correct code never writes `a` while `b` is locked, however long this waits.
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!dir.join(wisdom_file_name("a")).exists());
    held.unlock().unwrap();
    let (written, _) = merger.join().unwrap();
    assert_eq!(written.len(), 2);
    for key in ["a", "b"] {
        let f = WisdomFile::load(&dir.join(wisdom_file_name(key))).unwrap();
        assert_eq!(f.records.len(), 1);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Steps 1-3 stay within the query's backend.
#[test]
fn selection_steps_respect_the_backend() {
    let recs = vec![
        record("Same Name", "x", "cuda", &[64], 32, 1.0),
        record("Same Name", "x", "opencl", &[1024], 64, 1.0),
    ];
    let sel = select(&recs, &query("Same Name", "x", "opencl", &[64]), |_| Ok(()));
    assert_eq!(sel.step, Step::DeviceNearestSize);
    assert_eq!(sel.record, Some(1));
}

#[test]
fn wisdom_file_edge_cases() {
    let dir = std::env::temp_dir().join(format!("kw-wisdom-edge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut f = WisdomFile::new("k");
    f.records = vec![record("G", "a", "cuda", &[8], 64, 2.0)];
    let text = serde_json::to_string(&f).unwrap();
    // A UTF-8 byte-order mark (Windows editors) is accepted.
    let bom = dir.join("bom.json");
    std::fs::write(&bom, format!("\u{feff}{text}")).unwrap();
    assert_eq!(WisdomFile::load(&bom).unwrap(), f);
    // Version 0 is invalid, not "newer".
    let v0 = dir.join("v0.json");
    std::fs::write(&v0, text.replace("\"version\":1", "\"version\":0")).unwrap();
    let err = WisdomFile::load(&v0).unwrap_err().to_string();
    assert!(err.contains("version 0 is not a valid version"), "{err}");
    assert!(!err.contains("newer"), "{err}");
    let v9 = dir.join("v9.json");
    std::fs::write(&v9, text.replace("\"version\":1", "\"version\":9")).unwrap();
    let err = WisdomFile::load(&v9).unwrap_err().to_string();
    assert!(err.contains("newer"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// 8 processes add 25 records each to one file at once: all 200 are there.
#[test]
fn concurrent_writers_lose_no_record() {
    if let Ok(spec) = std::env::var("KW_TEST_WISDOM_WRITER") {
        let (dir, id) = spec.split_once('|').unwrap();
        for i in 0..25 {
            let r = record(&format!("writer {id}"), "a", "cuda", &[i + 1], 32, 1.0);
            add_record(
                std::path::Path::new(dir),
                "shared",
                r,
                ReplacePolicy::IfBetter,
            )
            .unwrap();
        }
        return;
    }
    let dir = temp_dir("concurrent");
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..8)
        .map(|id| {
            std::process::Command::new(&exe)
                .args([
                    "--exact",
                    "concurrent_writers_lose_no_record",
                    "--test-threads=1",
                ])
                .env("KW_TEST_WISDOM_WRITER", format!("{}|{id}", dir.display()))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let f = WisdomFile::load(&dir.join("shared.json")).unwrap();
    assert_eq!(f.records.len(), 200);
}

#[test]
fn a_parameter_added_after_a_record_takes_its_default() {
    // The record was written before `split` existed.
    let old = record("G", "a", "cuda", &[64], 64, 1.0);
    let mut params = space().params().to_vec();
    params.push(Parameter::new("split", [1, 2, 4]));
    let newer = TuningSpace::new(params, vec![]).unwrap();
    assert!(old.check_against(&newer).is_err(), "missing parameter");
    let mut r = old.clone();
    r.add_new_parameters(&newer);
    assert_eq!(r.config.get("split"), Some(&Value::Int(1)));
    assert!(r.check_against(&newer).is_ok());
    // Its recorded space says the one value it had, in effect.
    let added = r
        .space
        .parameters
        .iter()
        .find(|p| p.name == "split")
        .unwrap();
    assert_eq!(added.values, vec![Value::Int(1)]);
    // A parameter the space lacks stays, and keeps the record unusable.
    let mut extra = old.clone();
    extra.config.set("gone", 3);
    extra.add_new_parameters(&newer);
    assert!(extra.check_against(&newer).is_err());
    // Only a parameter its recorded space declares but its configuration lacks (a damaged
    // record, an empty configuration: the runtime says so) is reported; `split`, added
    // since, is not.
    let mut damaged = old;
    damaged.config = Config::default();
    let mut lacked = Vec::new();
    damaged.add_new_parameters_noting(&newer, &mut |p| lacked.push(p.name.clone()));
    assert_eq!(lacked, ["bx", "unroll"]);
    assert!(damaged.check_against(&newer).is_ok());
    let mut fine = record("G", "a", "cuda", &[64], 64, 1.0);
    fine.add_new_parameters_noting(&newer, &mut |p| panic!("{} reported", p.name));
}

/// A record of fewer axes than the query is used (its missing axes count as 1), and explain
/// says so.
#[test]
fn a_record_of_fewer_axes_is_used_with_a_note() {
    let rs = vec![record("G", "a", "cuda", &[4096], 32, 1.0)];
    let q = query("G", "a", "cuda", &[4096, 64]);
    let s = select(&rs, &q, |_| Ok(()));
    assert_eq!((s.step, s.record), (Step::DeviceNearestSize, Some(0)));
    let text = explain(&rs, &q, &s);
    assert!(
        text.contains(
            "its problem size has 1 axis where the query's has 2 axes: the missing axes count as 1"
        ),
        "{text}"
    );
    let same = explain(&rs, &query("G", "a", "cuda", &[4096, 1]), &s);
    assert!(!same.contains("missing axes"), "{same}");
}

/// A record whose recorded space names a parameter twice, or a default that is not among its
/// values, is left out when the file loads ("record #N: ..."): `kw wisdom show` reported
/// such a default as the one the runtime uses, and the runtime used another.
#[test]
fn a_record_with_an_unsound_recorded_space_is_left_out() {
    let dir = std::env::temp_dir().join(format!("kw-wisdom-recorded-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = record("G", "a", "cuda", &[8], 32, 1.0);
    assert_eq!(good.defect(), None);
    let mut bad_default = record("G", "a", "cuda", &[16], 32, 1.0);
    bad_default.space.parameters[0].default = kw_core::value::Value::Int(999);
    let mut twice = record("G", "a", "cuda", &[32], 32, 1.0);
    let first = twice.space.parameters[0].clone();
    twice.space.parameters.push(first);
    let mut f = WisdomFile::new("k");
    f.records = vec![good, bad_default, twice];
    let path = dir.join("k.json");
    std::fs::write(&path, serde_json::to_string(&f).unwrap()).unwrap();
    let loaded = WisdomFile::load(&path).unwrap();
    assert_eq!(loaded.records.len(), 1);
    assert_eq!(loaded.rejected.len(), 2, "{:?}", loaded.rejected);
    assert!(
        loaded.rejected[0].starts_with("record #2: the default 999 of `bx` is not among"),
        "{:?}",
        loaded.rejected
    );
    assert!(
        loaded.rejected[1].starts_with("record #3: parameter `bx` is given twice"),
        "{:?}",
        loaded.rejected
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A merge of more keys than it holds locks at once (`MERGE_HELD_LOCKS`, each an open file:
/// holding one per key failed with "Too many open files" past the process's limit) writes
/// every key, each under its own lock.
#[test]
fn a_merge_of_many_keys_writes_every_one() {
    let dir = std::env::temp_dir().join(format!("kw-merge-many-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let keys = MERGE_HELD_LOCKS + 20;
    let files: Vec<WisdomFile> = (0..keys)
        .map(|i| {
            let mut f = WisdomFile::new(&format!("key{i}"));
            f.records = vec![record("G", "a", "cuda", &[8], 32, 1.0)];
            f
        })
        .collect();
    // A lock file that cannot be used (a directory) at a late key: refused before any key's
    // file is written (100 files were, of 300).
    let late = dir.join(format!(
        "{}.lock",
        wisdom_file_name(&format!("key{}", keys - 2))
    ));
    std::fs::create_dir_all(&late).unwrap();
    let e = merge_into(&dir, files.clone()).unwrap_err().to_string();
    assert!(e.contains("it is a directory"), "{e}");
    let written_before = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "json")
        })
        .count();
    assert_eq!(written_before, 0);
    std::fs::remove_dir(&late).unwrap();
    let (written, report) = merge_into(&dir, files).unwrap();
    assert_eq!(written.len(), keys);
    assert_eq!(report.read, keys);
    for i in [0, keys - 1] {
        let f = WisdomFile::load(&dir.join(wisdom_file_name(&format!("key{i}")))).unwrap();
        assert_eq!(f.records.len(), 1);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
