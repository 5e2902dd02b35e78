//! `kw wisdom merge` and `kw wisdom explain --capture` through the binary.

use kernel_wisdom::{demo_kernels, list_devices, open_device, DeviceSelector};
use kw_capture::record::{capture_launch, HostArg};
use kw_core::wisdom::*;
use kw_core::{config::Config, device::BackendKind, value::Value};
use std::path::Path;
use std::process::Output;

mod common;

fn kw(dir: &Path, args: &[&str]) -> Output {
    kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("running kw")
}

fn record(space: &kw_core::space::TuningSpace, bx: i64, ms: f64) -> WisdomRecord {
    let mut config = Config::default();
    config.set("block_size_x", bx);
    config.set("elems_per_thread", 1);
    config.set("strided", 0);
    config.set("unroll", 1);
    WisdomRecord {
        config,
        problem_size: vec![1024],
        device: WisdomDevice {
            name: "Dev".into(),
            vendor: "V".into(),
            backend: "opencl".into(),
            architecture: "a".into(),
            driver: "1".into(),
        },
        objective: Objective {
            median_ms: ms,
            samples: 3,
            ..Default::default()
        },
        space: SpaceFingerprint::of(space),
        provenance: Provenance::default(),
        alternates: Vec::new(),
    }
}

#[test]
fn merge_leaves_out_bad_records_and_explain_skips_what_the_space_rejects() {
    let Some(d) = list_devices().ok().and_then(|l| {
        l.into_iter()
            .find(|d| d.info.backend == BackendKind::Opencl)
    }) else {
        eprintln!("SKIPPED: no OpenCL device");
        return;
    };
    let dir = std::env::temp_dir().join(format!("kw-wisdom-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("a")).unwrap();
    std::fs::create_dir_all(dir.join("b")).unwrap();
    let device = open_device(&DeviceSelector::Index(d.index)).unwrap();
    let def = demo_kernels::opencl::vector_add().unwrap();
    let space = def.space(Some(device.info())).unwrap();
    let n = 1024usize;
    let args = [
        HostArg::buffer(&vec![0f32; n]),
        HostArg::buffer(&vec![1f32; n]),
        HostArg::buffer(&vec![2f32; n]),
        HostArg::scalar(n as i32),
    ];
    let capture = capture_launch(&dir, "va", &def, None, device.as_ref(), &args).unwrap();
    // a: a valid record; b: a faster one with a negative time, and a faster one from an older
    // space that declared block_size_x = 48 (the current space does not).
    let valid = record(&space, 64, 2.0);
    add_record(&dir.join("a"), "vector_add", valid, ReplacePolicy::IfBetter).unwrap();
    let mut older = record(&space, 48, 0.5);
    older.space.hash = "older".into();
    let p = older
        .space
        .parameters
        .iter_mut()
        .find(|p| p.name == "block_size_x")
        .unwrap();
    p.values.push(Value::Int(48));
    let mut f = WisdomFile::new("vector_add");
    f.records = vec![record(&space, 128, -1.0), older];
    f.save(&dir.join("b/vector_add.json")).unwrap();
    let out = kw(&dir, &["wisdom", "merge", "out", "a", "b"]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("3 record(s) read -> 2 record(s), 1 left out"),
        "{text}"
    );
    assert!(text.contains("not a positive finite time"), "{text}");
    // Without the capture, explain chooses the (faster) older-space record; with it, that
    // record is skipped as the runtime skips it, and the valid one is chosen.
    let q = [
        "wisdom",
        "explain",
        "out/vector_add.json",
        "--device",
        "Dev",
        "--backend",
        "opencl",
        "--problem-size",
        "1024",
    ];
    let out = kw(&dir, &q);
    let plain = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(plain.contains("block_size_x=48"), "{plain}");
    let mut with = q.to_vec();
    with.extend(["--capture", capture.to_str().unwrap()]);
    let out = kw(&dir, &with);
    let checked = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{checked}");
    assert!(checked.contains("block_size_x=64"), "{checked}");
    assert!(checked.contains("skipped: record #"), "{checked}");
}

/// A restriction over the problem size: `kw wisdom explain --capture` skips the records whose
/// configuration is not valid at the asked size (saying why) and chooses the next candidate.
#[test]
fn explain_skips_records_not_valid_at_the_problem_size() {
    let Some(d) = list_devices().ok().and_then(|l| {
        l.into_iter()
            .find(|d| d.info.backend == BackendKind::Opencl)
    }) else {
        eprintln!("SKIPPED: no OpenCL device");
        return;
    };
    let dir = std::env::temp_dir().join(format!("kw-wisdom-sizes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let device = open_device(&DeviceSelector::Index(d.index)).unwrap();
    let mut def = demo_kernels::opencl::vector_add().unwrap();
    def.restrictions.push(
        kw_core::parse::parse("problem_size.x % (block_size_x * elems_per_thread) == 0").unwrap(),
    );
    let space = def.space(Some(device.info())).unwrap();
    let n = 1024usize;
    let args = [
        HostArg::buffer(&vec![0f32; n]),
        HostArg::buffer(&vec![1f32; n]),
        HostArg::buffer(&vec![2f32; n]),
        HostArg::scalar(n as i32),
    ];
    let capture = capture_launch(&dir, "va", &def, None, device.as_ref(), &args).unwrap();
    // At 1024 a record with a 1024-wide tile, at 4096 one with a 64-wide tile.
    let mut wide = record(&space, 256, 1.0);
    wide.config.set("elems_per_thread", 4);
    add_record(&dir, "vector_add", wide, ReplacePolicy::Always).unwrap();
    let mut narrow = record(&space, 64, 2.0);
    narrow.problem_size = vec![4096];
    add_record(&dir, "vector_add", narrow, ReplacePolicy::Always).unwrap();
    let explain = |size: &str| {
        let out = kw(
            &dir,
            &[
                "wisdom",
                "explain",
                "vector_add.json",
                "--device",
                "Dev",
                "--backend",
                "opencl",
                "--problem-size",
                size,
                "--capture",
                capture.to_str().unwrap(),
            ],
        );
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let text = explain("1024");
    assert!(text.contains("elems_per_thread=4"), "{text}");
    assert!(!text.contains("skipped"), "{text}");
    // 1536 = 1.5 x 1024: the nearer, wide record is skipped, the 64-wide one chosen.
    let text = explain("1536");
    assert!(
        text.contains("skipped: record #1: not valid at this problem size: restriction"),
        "{text}"
    );
    assert!(text.contains("block_size_x=64"), "{text}");
    // 100: neither record is valid, nor is the default (256 wide).
    let text = explain("100");
    assert!(text.contains("chosen: the default configuration"), "{text}");
    assert!(
        text.contains("the default configuration is not valid at this problem size either"),
        "{text}"
    );
}

/// `kw wisdom explain --device` takes what `--device` takes elsewhere (an index or a name
/// substring of a device here) or a device of the records, fails clearly when nothing or
/// several match, and wants a problem size.
#[test]
fn explain_device_is_an_index_or_a_substring_and_wants_a_size() {
    let dir = std::env::temp_dir().join(format!(
        "kw-explain-device-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    ));
    std::fs::create_dir_all(&dir).unwrap();
    use kw_core::backend::Device as _;
    let null = kw_core::null_device::NullDevice::new(BackendKind::Opencl);
    let space = demo_kernels::opencl::vector_add()
        .unwrap()
        .space(Some(null.info()))
        .unwrap();
    let mut file = WisdomFile::new("vector_add");
    for (name, bx) in [("Alpha Accelerator", 64), ("Beta Accelerator", 128)] {
        let mut r = record(&space, bx, 1.0);
        r.device.name = name.into();
        file.records.push(r);
    }
    let path = dir.join("vector_add.json");
    file.save(&path).unwrap();
    let explain = |device: &str, size: Option<&str>| {
        let mut args = vec![
            "wisdom",
            "explain",
            path.to_str().unwrap(),
            "--device",
            device,
        ];
        if let Some(s) = size {
            args.extend(["--problem-size", s]);
        }
        let out = kw(&dir, &args);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    };
    // A substring of one record's device: that device (its record is chosen exactly).
    let (ok, text) = explain("alpha", Some("1024"));
    assert!(ok, "{text}");
    assert!(
        text.contains("Alpha Accelerator") && text.contains("block_size_x=64"),
        "{text}"
    );
    // Several or none: an error that lists what there is.
    let (ok, text) = explain("accelerator", Some("1024"));
    assert!(
        !ok && text.contains("matches several devices of the records"),
        "{text}"
    );
    let (ok, text) = explain("no such device", Some("1024"));
    assert!(!ok && text.contains("matches no device here"), "{text}");
    assert!(
        text.contains("Alpha Accelerator, Beta Accelerator"),
        "{text}"
    );
    // An index is a device here (as `kw devices` numbers them).
    let (ok, text) = explain("99", Some("1024"));
    assert!(
        !ok && text.contains("no device has index 99 here"),
        "{text}"
    );
    if let Some(d) = list_devices().ok().and_then(|l| l.into_iter().next()) {
        let (ok, text) = explain(&d.index.to_string(), Some("1024"));
        assert!(ok, "{text}");
        assert!(text.contains(&d.info.name), "{text}");
    }
    // No problem size: an error, not a distance.
    let (ok, text) = explain("alpha", None);
    assert!(!ok && text.contains("--problem-size"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `kw wisdom show/explain` output (stdout and stderr) and whether it succeeded.
fn kw_text(dir: &Path, args: &[&str]) -> (bool, String) {
    let out = kw(dir, args);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// A vector_add wisdom file (space of a null OpenCL device) of these records, at `path`.
fn null_device_wisdom(path: &Path, key: &str, records: &[(i64, f64)]) {
    use kw_core::backend::Device as _;
    let null = kw_core::null_device::NullDevice::new(BackendKind::Opencl);
    let space = demo_kernels::opencl::vector_add()
        .unwrap()
        .space(Some(null.info()))
        .unwrap();
    let mut file = WisdomFile::new(key);
    for &(bx, ms) in records {
        file.records.push(record(&space, bx, ms));
    }
    file.save(path).unwrap();
}

/// A `KEY` that looks like a path (a separator, or `.json` at the end) and is not a regular
/// file is said to be so, not looked up as a tuning key.
#[test]
fn show_and_explain_say_when_a_path_is_not_a_wisdom_file() {
    let dir = common::unique_dir("wisdom-not-a-file");
    std::fs::create_dir_all(dir.join("d.json")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("loop.json", dir.join("loop.json")).unwrap();
    let missing = dir.join("nonexistent.json");
    let missing = missing.to_str().unwrap();
    for sub in [
        vec!["wisdom", "show"],
        vec![
            "wisdom",
            "explain",
            "--device",
            "Dev",
            "--problem-size",
            "1024",
        ],
    ] {
        let with = |key: &str| {
            let mut args = sub.clone();
            args.insert(2, key);
            kw_text(&dir, &args)
        };
        let (ok, text) = with(missing);
        assert!(
            !ok && text.contains(&format!("`{missing}`: no such file")),
            "{text}"
        );
        assert!(!text.contains("tuning key"), "{text}");
        let (ok, text) = with("sub/none");
        assert!(!ok && text.contains("`sub/none`: no such file"), "{text}");
        let (ok, text) = with("d.json");
        assert!(
            !ok && text.contains("`d.json`: is a directory, not a wisdom file"),
            "{text}"
        );
        #[cfg(unix)]
        {
            let (ok, text) = with("loop.json");
            assert!(!ok && text.contains("`loop.json`: "), "{text}");
            assert!(!text.contains("tuning key"), "{text}");
        }
        // A plain key is still a tuning key.
        let (ok, text) = with("no_such_kernel");
        assert!(
            !ok && text.contains("for tuning key `no_such_kernel`"),
            "{text}"
        );
    }
    // A file that exists is read.
    null_device_wisdom(&dir.join("va.json"), "vector_add", &[(64, 1.0)]);
    let (ok, text) = kw_text(&dir, &["wisdom", "show", "va.json"]);
    assert!(ok && text.contains("block_size_x=64"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--capture` of another kernel than the wisdom file's is an error naming both tuning keys.
#[test]
fn explain_refuses_a_capture_of_another_tuning_key() {
    let Some((dir, capture, _, _)) = common::vector_add_capture("wisdom-other-key", 1024) else {
        return;
    };
    let captured = demo_kernels::opencl::vector_add().unwrap().tuning_key;
    null_device_wisdom(&dir.join("other.json"), "other_kernel", &[(64, 1.0)]);
    let (ok, text) = kw_text(
        &dir,
        &[
            "wisdom",
            "explain",
            "other.json",
            "--device",
            "Dev",
            "--backend",
            "opencl",
            "--problem-size",
            "1024",
            "--capture",
            capture.to_str().unwrap(),
        ],
    );
    assert!(!ok, "{text}");
    assert!(
        text.contains(&format!("tuning key `{captured}`"))
            && text.contains("tuning key `other_kernel`"),
        "{text}"
    );
    assert!(!text.contains("skipped"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A problem size with an axis of 0, a backend other than cuda or opencl and an empty device
/// name are refused.
#[test]
fn explain_refuses_zero_axes_unknown_backends_and_empty_devices() {
    let dir = common::unique_dir("wisdom-explain-args");
    null_device_wisdom(&dir.join("vector_add.json"), "vector_add", &[(64, 1.0)]);
    let explain = |extra: &[&str]| {
        let mut args = vec!["wisdom", "explain", "vector_add.json"];
        args.extend(extra);
        kw_text(&dir, &args)
    };
    let (ok, text) = explain(&["--device", "Dev", "--problem-size", "0,1024,1024"]);
    assert!(
        !ok && text.contains("every axis must be at least 1"),
        "{text}"
    );
    let (ok, text) = explain(&["--device", "Dev", "--problem-size", "1024,0"]);
    assert!(!ok && text.contains("--problem-size 1024,0"), "{text}");
    let (ok, text) = explain(&[
        "--device",
        "Dev",
        "--backend",
        "foo",
        "--problem-size",
        "1024",
    ]);
    assert!(
        !ok && text.contains("cuda") && text.contains("opencl"),
        "{text}"
    );
    for empty in ["", "  "] {
        let (ok, text) = explain(&["--device", empty, "--problem-size", "1024"]);
        assert!(
            !ok && text.contains("--device: the device name is empty"),
            "{text}"
        );
    }
    // What is valid still works.
    let (ok, text) = explain(&[
        "--device",
        "Dev",
        "--backend",
        "opencl",
        "--problem-size",
        "1024",
    ]);
    assert!(ok && text.contains("block_size_x=64"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A record lacking a parameter its own space declares: `show` notes the default the runtime
/// gives it, `explain` notes it too and shows the configuration with that default.
#[test]
fn show_and_explain_note_a_parameter_a_record_lacks() {
    let dir = common::unique_dir("wisdom-missing-param");
    let path = dir.join("vector_add.json");
    null_device_wisdom(&path, "vector_add", &[(64, 1.0)]);
    let mut file = WisdomFile::load(&path).unwrap();
    let r = &mut file.records[0];
    let default = r
        .space
        .parameters
        .iter()
        .find(|p| p.name == "unroll")
        .expect("vector_add declares unroll")
        .default
        .clone();
    let mut config = Config::default();
    for (name, value) in r.config.iter().filter(|(n, _)| *n != "unroll") {
        config.set(name, value.clone());
    }
    r.config = config;
    file.save(&path).unwrap();
    let note = format!("`unroll` missing: the runtime uses its default {default}");
    let (ok, text) = kw_text(&dir, &["wisdom", "show", "vector_add.json"]);
    assert!(ok && text.contains(&note), "{text}");
    let (ok, text) = kw_text(
        &dir,
        &[
            "wisdom",
            "explain",
            "vector_add.json",
            "--device",
            "Dev",
            "--backend",
            "opencl",
            "--problem-size",
            "1024",
        ],
    );
    assert!(ok && text.contains(&format!("record #1: {note}")), "{text}");
    assert!(text.contains(&format!("unroll={default}")), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `kw wisdom explain` on a file whose every record is unusable says so, instead of blaming
/// `--device` for matching "no device of the records (none)".
#[test]
fn explain_on_a_file_of_unusable_records_says_the_file_has_none() {
    let dir = common::unique_dir("wisdom-all-unusable");
    let path = dir.join("k.json");
    null_device_wisdom(&path, "k", &[(64, 1.0)]);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["records"][0].as_object_mut().unwrap().remove("space");
    std::fs::write(&path, json.to_string()).unwrap();
    let (ok, said) = kw_text(
        &dir,
        &[
            "wisdom",
            "explain",
            path.to_str().unwrap(),
            "--device",
            "NoSuchGpu",
            "--problem-size",
            "64",
        ],
    );
    assert!(!ok, "{said}");
    assert!(said.contains("skipped record #1"), "{said}");
    assert!(said.contains("the wisdom holds no usable record"), "{said}");
    assert!(!said.contains("(none)"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}
