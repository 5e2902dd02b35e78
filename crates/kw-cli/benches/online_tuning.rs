//! Online tuning against the same application loop without it, in one run (a bench, not a
//! timed test).
//!
//! `cargo bench -p kw-cli --bench online_tuning [-- --launches 10000 --n 1000003
//! --backend opencl|cuda --budget 32,10s --share 0.1 --repeats 2]`
//!
//! The application: the bundled vector add at a size no wisdom covers, launched `--launches`
//! times, each launch waited for (so every launch's delay is seen). Each run is a fresh
//! process (the bench run again): `--repeats` runs with `KW_TUNE` off and as many with
//! `KW_TUNE=online` (a fresh online directory each), alternating. Reported:
//!
//! - the total wall time of the loop with online tuning over without (medians of the runs;
//!   once switched, the loop runs the tuned configuration);
//! - the time of the launches that ran while the tuning ran (launch 2 to the switch) over the
//!   time of the same launches of the run without tuning before it: the slowdown tuning
//!   causes;
//! - each run's first launch (selection, compile and, online, the capture's copies: the call
//!   alone, what the application's thread spends, and until the device is done) and the
//!   median, 99th and 99.9th percentiles and largest of the others, against the longest run
//!   of one candidate (the largest timed sample in the tuning's results log);
//! - while the tuning ran (launch 2 to the switch): the median, 99th percentile and largest
//!   single launch of the online run and of the same launches of the run without tuning, the
//!   delay (online launch minus the median launch without tuning) at the 99th percentile and
//!   at the largest, against the longest run of one candidate (the bar: no launch delayed by
//!   more than one candidate's run), a histogram of the launches by their time over that
//!   median, and the slowest launches with when they happened (seconds from the loop's start)
//!   next to when the capture was written and `kw tune` started;
//! - the launch from which the tuned configuration was in use (`-` when the tuning had not
//!   ended within the loop);
//! - how close the online result is to offline `kw tune` with the same budget on the same
//!   capture: both configurations timed again here, interleaved (`launch_with` with `LaunchOptions::timed`),
//!   median of `--samples` runs each.

use kernel_wisdom::LaunchOptions;
use kernel_wisdom::{demo_kernels, first_device_of, open_device, DeviceBuffer, DeviceSelector};
use kernel_wisdom::{online_reports, Config, WisdomKernel};
use kw_core::device::BackendKind;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

#[path = "online_tuning/delays.rs"]
mod delays;

const CHILD: &str = "KW_BENCH_ONLINE_CHILD";

/// The `kw` binary: `KW_BIN` when set (a packaged run on a GPU machine), else cargo's.
fn kw_bin() -> String {
    std::env::var("KW_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_kw").to_string())
}

fn arg<'a>(args: &'a [String], name: &str, default: &'a str) -> &'a str {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, String::as_str)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn backend(text: &str) -> BackendKind {
    match text {
        "cuda" => BackendKind::Cuda,
        _ => BackendKind::Opencl,
    }
}

/// The application loop (in a child process); prints one `RESULT` line.
fn child(mode: &str) {
    let n: usize = std::env::var("KW_BENCH_N").unwrap().parse().unwrap();
    let launches: u64 = std::env::var("KW_BENCH_LAUNCHES").unwrap().parse().unwrap();
    let kind = backend(&std::env::var("KW_BENCH_BACKEND").unwrap());
    let index = first_device_of(kind)
        .expect("a device of the backend")
        .index;
    let device = open_device(&DeviceSelector::Index(index)).unwrap();
    let def = match kind {
        BackendKind::Cuda => kernel_wisdom::demo_kernels::cuda::vector_add().unwrap(),
        _ => demo_kernels::opencl::vector_add().unwrap(),
    };
    let kernel = WisdomKernel::new(def, device.clone()).unwrap();
    let a = DeviceBuffer::from_slice(device.as_ref(), &vec![1.0f32; n]).unwrap();
    let b = DeviceBuffer::from_slice(device.as_ref(), &vec![2.0f32; n]).unwrap();
    let c = DeviceBuffer::<f32>::new(device.as_ref(), n).unwrap();
    let args = [c.arg(), a.arg(), b.arg(), (n as i32).into()];
    let ps = [n as i64, 1, 1];
    let mut times = Vec::with_capacity(launches as usize);
    let mut first_call = 0.0;
    let mut starts = Vec::with_capacity(launches as usize);
    let began_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let mut start_config: Option<Config> = None;
    let mut switched: Option<u64> = None;
    let began = Instant::now();
    for i in 1..=launches {
        let t = Instant::now();
        kernel.launch(&args).unwrap();
        if i == 1 {
            // What the application's thread spends in the call (the launch itself runs on).
            first_call = t.elapsed().as_secs_f64();
        }
        device.synchronize().unwrap();
        times.push(t.elapsed().as_secs_f64());
        starts.push(t.duration_since(began).as_secs_f64());
        if switched.is_none() && (i == 1 || i % 16 == 0) {
            let now = kernel.config_for(&ps);
            match &start_config {
                None => start_config = now,
                Some(s) if now.as_ref() != Some(s) => switched = Some(i),
                Some(_) => {
                    // A result equal to the configuration in use is in use at once.
                    if online_reports()
                        .iter()
                        .any(|r| Some(&r.tuned) == now.as_ref())
                    {
                        switched = Some(i);
                    }
                }
            }
        }
    }
    let total = began.elapsed().as_secs_f64();
    if let Ok(path) = std::env::var("KW_BENCH_TIMES") {
        let text: Vec<String> = times
            .iter()
            .zip(&starts)
            .map(|(t, s)| format!("{t:.9} {s:.6}"))
            .collect();
        std::fs::write(path, text.join("\n")).unwrap();
    }
    let out = c.to_vec().unwrap();
    assert!(out.iter().all(|&v| v == 3.0), "wrong results");
    // The first launch (selection, compile and, online, the capture's copies) apart.
    let first = times[0];
    let mut rest = times[1..].to_vec();
    rest.sort_by(f64::total_cmp);
    let pct = |p: f64| rest[((rest.len() - 1) as f64 * p).round() as usize];
    let report = online_reports().into_iter().next();
    println!(
        "RESULT mode={mode} total_s={total:.6} first_s={first:.6} \
         first_call_s={first_call:.6} median_s={:.9} \
         p99_s={:.9} p999_s={:.9} max_s={:.9} switched={} \
         tuned={} start_unix={began_unix:.6} job={}",
        pct(0.5),
        pct(0.99),
        pct(0.999),
        pct(1.0),
        switched.map_or("-".into(), |s| s.to_string()),
        report.as_ref().map_or("-".into(), |r| r.tuned.key()),
        report
            .as_ref()
            .map_or("-".into(), |r| r.job_dir.display().to_string()),
    );
}

fn field<'a>(line: &'a str, name: &str) -> &'a str {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{name}=")))
        .unwrap_or("-")
}

/// Runs the loop in a child process; its `RESULT` line.
fn run_child(mode: &str, vars: &[(&str, String)], dir: &Path) -> String {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.env(CHILD, mode).current_dir(dir);
    for (k, _) in std::env::vars() {
        if k.starts_with("KW_TUNE") || k == "KW_CAPTURE" {
            cmd.env_remove(k);
        }
    }
    cmd.env("KW_WISDOM_PATH", dir.join("no-wisdom"))
        .env("KW_BIN", kw_bin());
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .find(|l| l.starts_with("RESULT"))
        .expect("a RESULT line")
        .to_string()
}

/// The longest timed sample of any candidate in a results log, in seconds.
fn longest_candidate(log: &Path) -> Option<f64> {
    let text = std::fs::read_to_string(log).ok()?;
    text.lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|r| r["samples"].as_array().cloned())
        .flatten()
        .filter_map(|s| s.as_f64())
        .reduce(f64::max)
        .map(|ms| ms / 1e3)
}

/// The job directory of an online run (its capture, results log and `kw tune` output).
fn job_dir(online: &Path) -> Option<PathBuf> {
    std::fs::read_dir(online.join("jobs"))
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.is_dir())
}

fn main() {
    if let Ok(mode) = std::env::var(CHILD) {
        child(&mode);
        return;
    }
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return; // `cargo bench -- --list`
    }
    let launches = arg(&args, "--launches", "10000").to_string();
    let n = arg(&args, "--n", "1000003").to_string();
    let backend_name = arg(&args, "--backend", "opencl").to_string();
    let budget = arg(&args, "--budget", "32,10s").to_string();
    let share = arg(&args, "--share", "0.1").to_string();
    let repeats: usize = arg(&args, "--repeats", "2").parse().unwrap();
    let samples: usize = arg(&args, "--samples", "30").parse().unwrap();
    let kind = backend(&backend_name);
    if first_device_of(kind).is_err() {
        eprintln!("SKIPPED: no {backend_name} device");
        return;
    }
    let root = std::env::temp_dir().join(format!("kw-bench-online-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let common = vec![
        ("KW_BENCH_N", n.clone()),
        ("KW_BENCH_LAUNCHES", launches.clone()),
        ("KW_BENCH_BACKEND", backend_name.clone()),
    ];
    println!(
        "online tuning bench: vector_add n={n}, {launches} launches (each waited for), \
         {backend_name}, budget {budget}, share {share}, {repeats} run(s) each"
    );
    let (mut off, mut on) = (Vec::new(), Vec::new());
    for r in 0..repeats {
        let mut vars = common.clone();
        vars.push((
            "KW_BENCH_TIMES",
            root.join(format!("off-{r}.txt")).display().to_string(),
        ));
        off.push(run_child("off", &vars, &root));
        let mut vars = common.clone();
        vars.push((
            "KW_BENCH_TIMES",
            root.join(format!("on-{r}.txt")).display().to_string(),
        ));
        let online_dir: PathBuf = root.join(format!("online-{r}"));
        vars.push(("KW_TUNE", "online".into()));
        vars.push(("KW_TUNE_DIR", online_dir.display().to_string()));
        vars.push(("KW_TUNE_BUDGET", budget.clone()));
        vars.push(("KW_TUNE_SHARE", share.clone()));
        on.push(run_child("online", &vars, &root));
    }
    for line in off.iter().chain(&on) {
        println!("  {line}");
    }
    let med = |lines: &[String], name: &str| -> f64 {
        median(
            lines
                .iter()
                .map(|l| field(l, name).parse().unwrap())
                .collect(),
        )
    };
    println!(
        "total wall time of the loop (median of runs), online / off: {:.3}x ({:.2} s / {:.2} s; \
         the tuned configuration is in use for the rest of the loop)",
        med(&on, "total_s") / med(&off, "total_s"),
        med(&on, "total_s"),
        med(&off, "total_s")
    );
    // While the tuning runs: the same launches (2 to the switch) of each online run and of the
    // off run before it.
    // Each line: a launch's time and its start (seconds from the loop's start).
    let read_with_starts = |name: String| -> Vec<(f64, f64)> {
        std::fs::read_to_string(root.join(name))
            .unwrap()
            .lines()
            .map(|l| {
                let mut w = l.split_whitespace().map(|v| v.parse::<f64>().unwrap());
                (w.next().unwrap(), w.next().unwrap_or(0.0))
            })
            .collect()
    };
    let read =
        |name: String| -> Vec<f64> { read_with_starts(name).into_iter().map(|(t, _)| t).collect() };
    for (r, line) in on.iter().enumerate() {
        let (t_on, t_off) = (read(format!("on-{r}.txt")), read(format!("off-{r}.txt")));
        let until = field(line, "switched")
            .parse::<usize>()
            .unwrap_or(t_on.len() + 1)
            - 1;
        let sum = |t: &[f64]| t[1..until.max(2)].iter().sum::<f64>();
        println!(
            "online run {}: launches 2 to {until} (while tuning ran) took {:.3}x the time of the \
             same launches without tuning ({:.2} s / {:.2} s)",
            r + 1,
            sum(&t_on) / sum(&t_off),
            sum(&t_on),
            sum(&t_off)
        );
    }
    println!(
        "launch times in ms (launch 1 apart): first (the call alone, and until the device is \
         done), median, p99, p99.9, max"
    );
    for line in off.iter().chain(&on) {
        let ms = |name: &str| field(line, name).parse::<f64>().unwrap_or(f64::NAN) * 1e3;
        println!(
            "  {:<7} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3}",
            field(line, "mode"),
            ms("first_call_s"),
            ms("first_s"),
            ms("median_s"),
            ms("p99_s"),
            ms("p999_s"),
            ms("max_s")
        );
    }
    for (i, line) in on.iter().enumerate() {
        let job = job_dir(&root.join(format!("online-{i}")));
        let candidate = job
            .as_deref()
            .and_then(|j| longest_candidate(&j.join("tune.jsonl")));
        println!(
            "online run {}: tuned configuration {{{}}} in use from launch {}; longest run of one \
             candidate {}",
            i + 1,
            field(line, "tuned"),
            field(line, "switched"),
            candidate.map_or("-".into(), |c| format!("{:.3} ms", c * 1e3))
        );
        let t_on = read_with_starts(format!("on-{i}.txt"));
        let t_off = read(format!("off-{i}.txt"));
        let start = field(line, "start_unix").parse::<f64>().unwrap_or(0.0);
        delays::report(&delays::Run {
            index: i + 1,
            online: &t_on,
            off: &t_off,
            switched: field(line, "switched").parse().ok(),
            candidate,
            events: job
                .as_deref()
                .map(|j| delays::job_events(j, start))
                .unwrap_or_default(),
        });
    }
    // Offline `kw tune` with the same budget on the first online run's capture.
    let Some(job) = job_dir(&root.join("online-0")) else {
        println!("offline comparison: no capture (the online tuning did not run)");
        return;
    };
    let capture = std::fs::read_dir(&job).ok().and_then(|d| {
        d.filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.extension().is_some_and(|e| e == "kwcap"))
    });
    let Some(capture) = capture else {
        println!("offline comparison: no capture (the online tuning did not run)");
        return;
    };
    let device = open_device(&DeviceSelector::Index(first_device_of(kind).unwrap().index)).unwrap();
    let offline_dir = root.join("offline");
    let evals = budget
        .split(',')
        .next()
        .unwrap_or("32")
        .trim_start_matches("evals=");
    let status = Command::new(kw_bin())
        .arg("tune")
        .arg(&capture)
        .args(["--budget", evals, "--compile-threads", "1", "--device"])
        .arg(&device.info().name)
        .arg("--wisdom-dir")
        .arg(&offline_dir)
        .arg("--log")
        .arg(root.join("offline.jsonl"))
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let config_in = |dir: &Path| -> Option<Config> {
        let file = kw_core::wisdom::WisdomFile::load(&dir.join("vector_add.json")).ok()?;
        file.records.first().map(|r| r.config.clone())
    };
    let offline = config_in(&offline_dir).expect("offline kw tune wrote a record");
    let Some(online) = config_in(&root.join("online-0")) else {
        println!("offline comparison: the first online run ended before its tuning did");
        return;
    };
    // Both timed here, interleaved.
    let def = match kind {
        BackendKind::Cuda => kernel_wisdom::demo_kernels::cuda::vector_add().unwrap(),
        _ => demo_kernels::opencl::vector_add().unwrap(),
    };
    let kernel = WisdomKernel::new(def, device.clone()).unwrap();
    let n: usize = n.parse().unwrap();
    let a = DeviceBuffer::from_slice(device.as_ref(), &vec![1.0f32; n]).unwrap();
    let b = DeviceBuffer::from_slice(device.as_ref(), &vec![2.0f32; n]).unwrap();
    let c = DeviceBuffer::<f32>::new(device.as_ref(), n).unwrap();
    let args = [c.arg(), a.arg(), b.arg(), (n as i32).into()];
    let (mut t_on, mut t_off) = (Vec::new(), Vec::new());
    for _ in 0..samples {
        t_on.push(
            kernel
                .launch_with(&args, LaunchOptions::new().config(&online).timed())
                .map(|l| l.device_ms.unwrap_or_default())
                .unwrap(),
        );
        t_off.push(
            kernel
                .launch_with(&args, LaunchOptions::new().config(&offline).timed())
                .map(|l| l.device_ms.unwrap_or_default())
                .unwrap(),
        );
    }
    let (m_on, m_off) = (median(t_on), median(t_off));
    println!(
        "online result {{{online}}}: {m_on:.4} ms; offline kw tune (same budget) {{{offline}}}: \
         {m_off:.4} ms; online / offline: {:.3}x",
        m_on / m_off
    );
    let _ = std::fs::remove_dir_all(&root);
}
