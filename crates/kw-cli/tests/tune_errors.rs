//! `kw tune` and `kw log` on bad input, through the binary on PoCL: clear messages, non-zero
//! exit statuses, and no hour of tuning before a problem that could be found at once.

mod common;

use kw_capture::{Capture, CaptureBuffer, CaptureWriter};
use std::path::{Path, PathBuf};
use std::process::Output;

fn kw(dir: &Path, args: &[&str]) -> Output {
    kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"))
        .current_dir(dir)
        .env("KW_USER_WISDOM_DIR", dir.join("wisdom"))
        .env("KW_STATE_DIR", dir.join("state"))
        .args(args)
        .output()
        .expect("running kw")
}

fn text(o: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A directory with a vector_add capture made on the first OpenCL device, and its index.
fn setup(name: &str) -> Option<(PathBuf, PathBuf, String)> {
    let (dir, capture, index, _) =
        common::vector_add_capture(&format!("tune-errors-{name}"), 1024)?;
    Some((dir, capture, index))
}

#[test]
fn bad_arguments_and_wisdom_directories_fail_before_tuning() {
    let Some((dir, capture, idx)) = setup("args") else {
        return;
    };
    let c = capture.to_str().unwrap();
    let out = kw(&dir, &["tune", c, "--device", &idx, "--stop", "fraction=2"]);
    assert!(!out.status.success());
    assert!(text(&out).contains("fraction"), "{}", text(&out));
    // A wisdom "directory" that is a file: refused before any evaluation.
    std::fs::write(dir.join("not-a-dir"), b"x").unwrap();
    let out = kw(
        &dir,
        &[
            "tune",
            c,
            "--device",
            &idx,
            "--budget",
            "2",
            "--wisdom-dir",
            "not-a-dir/sub",
            "--log",
            "run.jsonl",
        ],
    );
    assert!(!out.status.success());
    assert!(text(&out).contains("not-a-dir"), "{}", text(&out));
    assert!(!dir.join("run.jsonl").exists(), "nothing was tuned");
    // `kw log export` of an endless file: refused at once as what it is, the path said once.
    let out = kw(
        &dir,
        &["log", "export", "/dev/zero", "--kt-cache", "out.json"],
    );
    assert!(!out.status.success());
    let said = text(&out);
    assert!(said.contains("not a regular file"), "{said}");
    assert_eq!(said.matches("/dev/zero").count(), 1, "{said}");
}

/// `--log` and `--t4` mean the same with one capture as with several when they name a
/// directory (an existing one, or written with a trailing `/`): one file per capture in it,
/// the directory made before anything runs; a `--prior` that cannot be read is refused
/// before the results log of an earlier run is moved aside.
#[test]
fn output_directories_and_missing_priors_are_settled_before_tuning() {
    let Some((dir, capture, idx)) = setup("outputs") else {
        return;
    };
    let c = capture.to_str().unwrap();
    let short = ["--samples", "2", "--warmup", "0", "--budget", "2"];
    let stem = capture.file_stem().unwrap().to_string_lossy().into_owned();
    std::fs::create_dir_all(dir.join("logs-here")).unwrap();
    let mut args = vec!["tune", c, "--device", &idx];
    args.extend(short);
    args.extend(["--log", "logs-here", "--t4", "t4/new/"]);
    let out = kw(&dir, &args);
    assert!(out.status.success(), "{}", text(&out));
    assert!(dir.join(format!("logs-here/{stem}.tune.jsonl")).is_file());
    assert!(dir.join(format!("t4/new/{stem}.t4.json")).is_file());
    // A missing prior: said as such, and the log above is not moved aside for it.
    let mut args = vec!["tune", c, "--device", &idx];
    args.extend(short);
    args.extend(["--log", "logs-here", "--prior", "no-such-prior.json"]);
    let out = kw(&dir, &args);
    assert!(!out.status.success());
    let said = text(&out);
    assert!(
        said.contains("--prior no-such-prior.json: cannot read it"),
        "{said}"
    );
    // A FIFO: refused at once (each reader waited for a writer for ever), and a directory.
    std::fs::create_dir_all(dir.join("prior-dir")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(dir.join("prior.fifo"))
        .status()
        .is_ok_and(|s| s.success());
    for (prior, kind) in [("prior.fifo", "a FIFO"), ("prior-dir", "a directory")] {
        if prior == "prior.fifo" && !made {
            eprintln!("SKIPPED (the FIFO case): mkfifo is not available");
            continue;
        }
        let mut args = vec!["tune", c, "--device", &idx];
        args.extend(short);
        args.extend(["--log", "logs-here", "--prior", prior]);
        let out = kw(&dir, &args);
        assert!(!out.status.success());
        let said = text(&out);
        assert!(
            said.contains(&format!("--prior {prior}: cannot read it")),
            "{said}"
        );
        assert!(
            said.contains(&format!("is {kind}, not a regular file")),
            "{said}"
        );
    }
    let moved = std::fs::read_dir(dir.join("logs-here"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".prev")
        })
        .count();
    assert_eq!(moved, 0, "the log was not moved aside");
}

/// A batch goes on past a capture that cannot be tuned, and exits non-zero naming it; a
/// kernel whose source is empty stops after the first configurations all fail to compile,
/// shows the compiler's error and writes no wisdom.
#[test]
fn a_bad_capture_does_not_stop_the_batch_and_compile_failures_stop_early() {
    let Some((dir, capture, idx)) = setup("batch") else {
        return;
    };
    // An empty kernel source (the definition is otherwise intact).
    let c = Capture::open(&capture).unwrap();
    let mut meta = c.metadata().clone();
    meta["kernel"]["source"]["text"] = serde_json::json!("");
    meta["kernel"]["tuning_key"] = serde_json::json!("empty_source");
    // Both copies of the key agree (a capture whose two disagree is refused as edited).
    meta["tuning_key"] = serde_json::json!("empty_source");
    let buffers: Vec<CaptureBuffer> = c
        .buffers()
        .map(|b| CaptureBuffer::new(b.name, b.elem_type, c.read_buffer(b.name).unwrap()))
        .collect();
    let empty = CaptureWriter::default()
        .write(&dir, "empty", &meta, &buffers)
        .unwrap()
        .path;
    std::fs::write(dir.join("garbage.kwcap"), b"not a capture").unwrap();
    let out = kw(
        &dir,
        &[
            "tune",
            "garbage.kwcap",
            empty.to_str().unwrap(),
            capture.to_str().unwrap(),
            "--device",
            &idx,
            "--budget",
            "20",
            "--samples",
            "2",
            "--log",
            "logs",
        ],
    );
    let all = text(&out);
    assert!(!out.status.success(), "{all}");
    assert!(all.contains("garbage.kwcap"), "{all}");
    assert!(
        all.contains("failed to compile") && all.contains("empty"),
        "{all}"
    );
    assert!(all.contains("2 of 3 capture(s) failed"), "{all}");
    // Each failure names its capture once (the path and the capture error's text were
    // repeated: `garbage.kwcap: garbage.kwcap: ...`).
    assert!(!all.contains("garbage.kwcap: garbage.kwcap"), "{all}");
    assert!(
        all.contains("\n  garbage.kwcap: not a kernel-wisdom capture file"),
        "{all}"
    );
    // The good capture after them was tuned.
    assert!(dir.join("wisdom/vector_add.json").exists(), "{all}");
    assert!(!dir.join("wisdom/empty_source.json").exists());
    let log = std::fs::read_to_string(dir.join("logs/empty.tune.jsonl")).unwrap();
    assert_eq!(
        log.lines().count(),
        1 + 8,
        "stopped after 8 compile failures"
    );
}

/// A capture whose own configuration does not reproduce its reference output (here one
/// element of the reference changed) is reported as inconsistent after that one
/// configuration, instead of failing every configuration as a "wrong result".
#[test]
fn an_inconsistent_capture_is_named_as_such_after_one_evaluation() {
    let Some((dir, capture, idx)) = setup("inconsistent") else {
        return;
    };
    let c = Capture::open(&capture).unwrap();
    let meta = c.metadata().clone();
    let output = meta["args"][0]["output"].as_str().unwrap().to_string();
    let buffers: Vec<CaptureBuffer> = c
        .buffers()
        .map(|b| {
            let mut bytes = c.read_buffer(b.name).unwrap();
            if b.name == output {
                bytes[40..44].copy_from_slice(&1234.5f32.to_ne_bytes());
            }
            CaptureBuffer::new(b.name, b.elem_type, bytes)
        })
        .collect();
    let bad = CaptureWriter::default()
        .write(&dir, "inconsistent", &meta, &buffers)
        .unwrap()
        .path;
    let out = kw(
        &dir,
        &[
            "tune",
            bad.to_str().unwrap(),
            "--device",
            &idx,
            "--budget",
            "20",
            "--samples",
            "2",
            "--log",
            "run.jsonl",
        ],
    );
    let all = text(&out);
    assert!(!out.status.success(), "{all}");
    assert!(all.contains("the capture is inconsistent"), "{all}");
    assert!(all.contains("first at [10]"), "{all}");
    assert!(!dir.join("wisdom/vector_add.json").exists(), "{all}");
    let log = std::fs::read_to_string(dir.join("run.jsonl")).unwrap();
    assert_eq!(log.lines().count(), 1 + 1, "stopped after one evaluation");
}

/// A capture at a size where the default configuration breaks a restriction over the problem
/// size (a GEMM without bounds checks at 18 columns, default tile 4 wide): `kw tune` says so,
/// searches only configurations valid there and writes one of them.
#[test]
fn a_default_not_valid_at_the_captured_size_is_replaced_by_a_valid_one() {
    use kernel_wisdom::{arg, KernelBuilder, Source};
    use kw_capture::record::{capture_launch, HostArg};
    let Some((dir, _, idx, device)) = common::vector_add_capture("tune-errors-gemm", 16) else {
        return;
    };
    let source = include_str!("../../../kernels/gemm_no_bounds.cl");
    let mut b = KernelBuilder::new("gemm_nb", Source::text("gemm_no_bounds.cl", source));
    let tx = b.tune("TX", [1, 2, 4], 4);
    let wn = b.tune("WN", [1, 2], 1);
    b.tune("TY", [1], 1);
    b.tune("WM", [1], 1);
    b.restriction_text("problem_size.x % (TX * WN) == 0")
        .tuning_key("gemm_nb_cli")
        .problem_size([arg("n"), arg("m")])
        .block_size(tx.clone(), 1, 1)
        .grid_divisors(tx * wn, 1, 1)
        .output::<f32>("c")
        .input::<f32>("a")
        .input::<f32>("b")
        .scalar::<i32>("m")
        .scalar::<i32>("n")
        .scalar::<i32>("k")
        .buffer_len("c", arg("m") * arg("n"))
        .buffer_len("a", arg("m") * arg("k"))
        .buffer_len("b", arg("k") * arg("n"));
    let def = b.build().unwrap();
    let (m, n, k) = (4usize, 18usize, 3usize);
    let mut config = def.default_config();
    config.set("TX", 2);
    let floats = |len: usize| (0..len).map(|i| (i % 5) as f32 - 2.0).collect::<Vec<f32>>();
    let capture = capture_launch(
        &dir,
        "gemm",
        &def,
        Some(&config),
        device.as_ref(),
        &[
            HostArg::buffer(&vec![0f32; m * n]),
            HostArg::buffer(&floats(m * k)),
            HostArg::buffer(&floats(k * n)),
            HostArg::scalar(m as i32),
            HostArg::scalar(n as i32),
            HostArg::scalar(k as i32),
        ],
    )
    .unwrap();
    let out = kw(
        &dir,
        &[
            "tune",
            capture.to_str().unwrap(),
            "--device",
            &idx,
            "--strategy",
            "exhaustive",
            "--samples",
            "1",
            "--log",
            "gemm.jsonl",
        ],
    );
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    // 18 columns: TX * WN in {1, 2} only (4 of the 6 declared configurations are not valid).
    assert!(all.contains("(3 configurations)"), "{all}");
    assert!(
        all.contains("the default configuration is not valid at the captured problem size"),
        "{all}"
    );
    let wisdom = std::fs::read_to_string(dir.join("wisdom/gemm_nb_cli.json")).unwrap();
    let file: kw_core::wisdom::WisdomFile = serde_json::from_str(&wisdom).unwrap();
    let best = &file.records[0].config;
    let width =
        best.get("TX").unwrap().as_int().unwrap() * best.get("WN").unwrap().as_int().unwrap();
    assert_eq!(18 % width, 0, "{best}");
    assert!(wisdom.contains("\"tolerances\""), "{wisdom}");
}

/// `kw tune --objective EXPR --maximize`: the search maximises the objective instead of
/// minimising the time, the summary says so, and the wisdom record stores the objective's
/// name and value next to the winner's median time.
#[test]
fn an_objective_other_than_time_is_maximised_and_recorded() {
    let Some((dir, capture, idx)) = setup("objective") else {
        return;
    };
    let out = kw(
        &dir,
        &[
            "tune",
            capture.to_str().unwrap(),
            "--device",
            &idx,
            "--strategy",
            "random",
            "--budget",
            "8",
            "--samples",
            "1",
            "--objective",
            "elems_per_thread * 1000 + 0 * time",
            "--objective-name",
            "work",
            "--maximize",
            "--log",
            "objective.jsonl",
        ],
    );
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(all.contains("objective: work = "), "{all}");
    // The largest elems_per_thread among the successful evaluations wins, whatever the times.
    let log = std::fs::read_to_string(dir.join("objective.jsonl")).unwrap();
    let best_ept = log
        .lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|r| r["objective"].is_number())
        .map(|r| {
            r["key"]
                .as_str()
                .unwrap()
                .split(',')
                .nth(1)
                .unwrap()
                .parse::<i64>()
                .unwrap()
        })
        .max()
        .unwrap();
    let wisdom = std::fs::read_to_string(dir.join("wisdom/vector_add.json")).unwrap();
    let file: kw_core::wisdom::WisdomFile = serde_json::from_str(&wisdom).unwrap();
    let r = &file.records[0];
    assert_eq!(
        r.config.get("elems_per_thread").unwrap().as_int(),
        Some(best_ept),
        "{all}"
    );
    assert_eq!(r.objective.name.as_deref(), Some("work"));
    assert_eq!(r.objective.value, Some(best_ept as f64 * 1000.0));
    assert!(r.objective.maximize);
    assert!(
        r.objective.median_ms > 0.0 && r.objective.median_ms < 1000.0,
        "{wisdom}"
    );
}
