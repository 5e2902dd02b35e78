//! Replay on PoCL: capture kernels, tune them, verify winners, reject wrong configurations,
//! restore in-place buffers, resume interrupted runs.

use kernel_wisdom::LaunchOptions;
use kernel_wisdom::{demo_kernels, open_device, DeviceSelector, Error, KernelBuilder, Source};
use kw_capture::record::{capture_launch, HostArg};
use kw_core::backend::{BackendError, Device};
use kw_core::{kernel_def::KernelDef, space::Point};
use kw_replay::{MeasureOptions, ReplayEvaluator, ReplaySession, VerifyMode};
use kw_tune::{strategies, EvalResult, Evaluator, ResultsLog, Stop, StopReason, Tuner};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The first OpenCL device (these are OpenCL kernels; on a machine with a CUDA GPU, device 0
/// is the GPU's CUDA device).
fn device() -> Option<Arc<dyn Device>> {
    let index = match kernel_wisdom::list_devices() {
        Ok(list) => match list
            .iter()
            .find(|d| d.info.backend == kw_core::device::BackendKind::Opencl)
        {
            Some(d) => d.index,
            None => {
                eprintln!("SKIPPED: no OpenCL device");
                return None;
            }
        },
        Err(_) => 0, // opening reports why
    };
    match open_device(&DeviceSelector::Index(index)) {
        Ok(d) => Some(d),
        Err(Error::Backend(e @ BackendError::Unavailable { .. })) => {
            eprintln!("SKIPPED: no OpenCL platform ({e})");
            None
        }
        Err(e) => panic!("opening device 0 failed: {e}"),
    }
}

fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kw-replay-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn fast() -> MeasureOptions {
    MeasureOptions {
        warmup: 1,
        min_samples: 2,
        max_samples: 3,
        ..MeasureOptions::default()
    }
}

fn floats(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * 7919) % 1000) as f32 / 250.0 - 2.0)
        .collect()
}

/// `scale(y, x, n)`: `y = 2x`, except that `bug = 1` adds 1 to every element.
fn buggy_def() -> KernelDef {
    let src = r#"
__kernel void scale(__global float* y, __global const float* x, const int n) {
    int i = get_global_id(0);
    if (i < n) { y[i] = 2.0f * x[i] + (bug ? 1.0f : 0.0f); }
}"#;
    let mut b = KernelBuilder::new("scale", Source::text("scale.cl", src));
    let bx = b.tune("block_size_x", [16, 32, 64], 32);
    b.tune("bug", [0, 1], 0);
    b.problem_size([kernel_wisdom::arg("n")])
        .block_size(bx.clone(), 1, 1)
        .grid_divisors(bx, 1, 1)
        .output::<f32>("y")
        .input::<f32>("x")
        .scalar::<i32>("n");
    b.build().unwrap()
}

/// `twice_plus_one(x, n)`: in place, `x = 2x + 1`.
fn inplace_def() -> KernelDef {
    let src = r#"
__kernel void twice_plus_one(__global float* x, const int n) {
    int i = get_global_id(0);
    if (i < n) { x[i] = x[i] * 2.0f + 1.0f; }
}"#;
    let mut b = KernelBuilder::new("twice_plus_one", Source::text("inplace.cl", src));
    let bx = b.tune("block_size_x", [8, 16, 32, 64], 16);
    b.problem_size([kernel_wisdom::arg("n")])
        .block_size(bx.clone(), 1, 1)
        .grid_divisors(bx, 1, 1)
        .inout::<f32>("x")
        .scalar::<i32>("n");
    b.build().unwrap()
}

/// A capture of `twice_plus_one` on `n` elements, loaded on the OpenCL device.
fn inplace_session(tag: &str, n: usize) -> Option<Arc<ReplaySession>> {
    let dev = device()?;
    let path = capture_launch(
        &tmp_dir(tag),
        "inplace",
        &inplace_def(),
        None,
        dev.as_ref(),
        &[HostArg::buffer(&floats(n)), HostArg::scalar(n as i32)],
    )
    .unwrap();
    Some(Arc::new(ReplaySession::load(&path, dev).unwrap()))
}

fn tune(
    session: &Arc<ReplaySession>,
    options: MeasureOptions,
    budget: u64,
) -> (kw_tune::TuneReport, kw_replay::ReplayStats) {
    let mut eval = ReplayEvaluator::new(session.clone(), options, 1);
    let space = session.space();
    let mut strategy = strategies::create("random", 1).unwrap();
    let default = space.point(&session.def().default_config()).unwrap();
    let report = Tuner::new(space, Stop::Evaluations(budget))
        .with_initial(vec![default])
        .with_lookahead(3)
        .run(strategy.as_mut(), &mut eval)
        .unwrap();
    (report, eval.stats())
}

#[test]
fn bundled_kernels_tune_to_a_correct_winner() {
    let Some(dev) = device() else { return };
    let dir = tmp_dir("bundled");
    let n = 4096usize;
    let (a, b) = (
        floats(n),
        floats(n).iter().map(|x| x * 0.5).collect::<Vec<_>>(),
    );
    let va = demo_kernels::opencl::vector_add().unwrap();
    let path = capture_launch(
        &dir,
        "vector_add",
        &va,
        None,
        dev.as_ref(),
        &[
            HostArg::buffer(&vec![0f32; n]),
            HostArg::buffer(&a),
            HostArg::buffer(&b),
            HostArg::scalar(n as i32),
        ],
    )
    .unwrap();
    let session = Arc::new(ReplaySession::load(&path, dev.clone()).unwrap());
    assert!(session.has_reference());
    let (report, stats) = tune(&session, fast(), 8);
    assert_eq!(report.progress.evaluations, 8);
    assert_eq!(
        report.history[0].point,
        session.space().point(&va.default_config()).unwrap()
    );
    let (best, _) = report.best.clone().expect("a winner");
    // The winner recomputes the CPU reference.
    let out = kernel_wisdom::WisdomKernel::new(va.clone(), dev.clone()).unwrap();
    let c = kernel_wisdom::DeviceBuffer::<f32>::new(dev.as_ref(), n).unwrap();
    let da = kernel_wisdom::DeviceBuffer::from_slice(dev.as_ref(), &a).unwrap();
    let db = kernel_wisdom::DeviceBuffer::from_slice(dev.as_ref(), &b).unwrap();
    out.launch_with(
        &[c.arg(), da.arg(), db.arg(), (n as i32).into()],
        LaunchOptions::new().config(&session.space().config(&best)),
    )
    .unwrap();
    assert_eq!(
        c.to_vec().unwrap(),
        demo_kernels::vector_add_reference(&a, &b)
    );
    assert!(
        stats.busy_fraction() > 0.0 && stats.busy_fraction() <= 1.0,
        "{stats:?}"
    );
    assert!(stats.evals_per_second() > 0.0);

    let st = demo_kernels::opencl::stencil2d().unwrap();
    let (w, h) = (64usize, 48usize);
    let input = floats(w * h);
    let path = capture_launch(
        &dir,
        "stencil2d",
        &st,
        None,
        dev.as_ref(),
        &[
            HostArg::buffer(&vec![0f32; w * h]),
            HostArg::buffer(&input),
            HostArg::scalar(w as i32),
            HostArg::scalar(h as i32),
        ],
    )
    .unwrap();
    let session = Arc::new(ReplaySession::load(&path, dev).unwrap());
    let (report, _) = tune(&session, fast(), 6);
    let failures: Vec<_> = report
        .history
        .iter()
        .filter(|e| e.result.is_err())
        .collect();
    assert!(failures.is_empty(), "{failures:?}");
    assert!(report.best.is_some());
}

#[test]
fn a_wrong_configuration_is_rejected_by_verification() {
    let Some(dev) = device() else { return };
    let dir = tmp_dir("buggy");
    let def = buggy_def();
    let n = 1000usize;
    let path = capture_launch(
        &dir,
        "scale",
        &def,
        None,
        dev.as_ref(),
        &[
            HostArg::buffer(&vec![0f32; n]),
            HostArg::buffer(&floats(n)),
            HostArg::scalar(n as i32),
        ],
    )
    .unwrap();
    let session = Arc::new(ReplaySession::load(&path, dev).unwrap());
    let mut eval = ReplayEvaluator::new(session.clone(), fast(), 1);
    let space = session.space();
    let mut strategy = strategies::create("exhaustive", 0).unwrap();
    let report = Tuner::new(space, Stop::Evaluations(100))
        .run(strategy.as_mut(), &mut eval)
        .unwrap();
    assert_eq!(report.progress.evaluations, 6);
    for e in &report.history {
        let bug = space.config(&e.point).get("bug").unwrap().as_int().unwrap();
        match (&e.result, bug) {
            (Ok(_), 0) => {}
            (Err(f), 1) => assert!(f.reason.starts_with("wrong result: buffer `y`"), "{f}"),
            (r, _) => panic!("bug={bug}: {r:?}"),
        }
    }
    let (best, _) = report.best.unwrap();
    assert_eq!(space.config(&best).get("bug").unwrap().as_int(), Some(0));
}

#[test]
fn in_place_outputs_are_restored_before_every_run() {
    let Some(session) = inplace_session("inplace", 777) else {
        return;
    };
    let options = MeasureOptions {
        warmup: 2,
        min_samples: 4,
        max_samples: 4,
        verify: VerifyMode::EveryRun,
        ..MeasureOptions::default()
    };
    let (report, stats) = tune(&session, options, 4);
    assert_eq!(report.progress.evaluations, 4);
    assert!(
        report.history.iter().all(|e| e.result.is_ok()),
        "{:?}",
        report.history
    );
    // 2 warm-ups + 4 timed runs per configuration, every one verified.
    assert_eq!(stats.launches, 4 * 6);
    assert_eq!(stats.verified_runs, stats.launches);
}

#[test]
fn batched_runs_restore_in_place_outputs_before_each_run() {
    // Runs enqueued as one batch (no host wait between them) restore on the device before
    // each: after 2 warm-ups and 5 timed runs of `x = 2x + 1`, the output still matches the
    // capture's one application (a missing restore would have applied it 7 times).
    let Some(session) = inplace_session("inplace-batch", 999) else {
        return;
    };
    let options = MeasureOptions {
        warmup: 2,
        min_samples: 5,
        max_samples: 5,
        verify: VerifyMode::Last,
        ..MeasureOptions::default()
    };
    let (report, stats) = tune(&session, options, 3);
    assert!(
        report.history.iter().all(|e| e.result.is_ok()),
        "{:?}",
        report.history
    );
    assert_eq!(stats.launches, 3 * 7);
    assert_eq!(stats.verified_runs, 3);
    // Where verification ran was decided by timing both at the first pass.
    assert!(stats.verified_on_device <= 3);
    // Without the restores the batch is wrong: run it directly with none.
    let config = session.def().default_config();
    let defines = session
        .def()
        .defines_for(&config, Some(session.device().info()))
        .unwrap();
    let k = session
        .device()
        .compile(&kw_core::backend::CompileRequest {
            source: &session.def().source,
            kernel_name: &session.def().kernel_name,
            defines: &defines,
            flags: &[],
            include_dirs: &[],
            template_args: &[],
        })
        .unwrap();
    let geometry = session.geometry(&config).unwrap();
    session.restore().unwrap();
    let times = session
        .device()
        .launch_timed_runs(k.as_ref(), &geometry, &session.kernel_args(), &[], 2)
        .unwrap();
    assert_eq!(times.len(), 2);
    let verdict = session
        .verify(kw_replay::ToleranceOverride::default())
        .unwrap();
    assert!(
        verdict.is_some_and(|r| r.contains("differ")),
        "two unrestored runs differ"
    );
    session.restore().unwrap();
    session.run_timed(k.as_ref(), &geometry, 3).unwrap();
    assert_eq!(
        session
            .verify(kw_replay::ToleranceOverride::default())
            .unwrap(),
        None
    );
}

/// Sets the cancel flag after `after` evaluations of the inner evaluator.
struct CancelAfter<'a> {
    inner: &'a mut ReplayEvaluator,
    flag: Arc<AtomicBool>,
    after: u64,
    seen: Vec<Point>,
}

impl Evaluator for CancelAfter<'_> {
    fn evaluate(&mut self, point: &Point) -> EvalResult {
        self.seen.push(point.clone());
        let r = self.inner.evaluate(point);
        if self.seen.len() as u64 >= self.after {
            self.flag.store(true, Ordering::SeqCst);
        }
        r
    }
    fn prefetch(&mut self, points: &[Point]) {
        self.inner.prefetch(points)
    }
    fn take_samples(&mut self) -> Option<Vec<f64>> {
        self.inner.take_samples()
    }
}

#[test]
fn an_interrupted_run_resumes_without_re_evaluating() {
    let Some(dev) = device() else { return };
    let dir = tmp_dir("resume");
    let va = demo_kernels::opencl::vector_add().unwrap();
    let n = 2048usize;
    let path = capture_launch(
        &dir,
        "va",
        &va,
        None,
        dev.as_ref(),
        &[
            HostArg::buffer(&vec![0f32; n]),
            HostArg::buffer(&floats(n)),
            HostArg::buffer(&floats(n)),
            HostArg::scalar(n as i32),
        ],
    )
    .unwrap();
    let session = Arc::new(ReplaySession::load(&path, dev).unwrap());
    let space = session.space();
    let default = space.point(&va.default_config()).unwrap();
    let log_path = dir.join("run.jsonl");
    let header = kw_tune::LogHeader::new(space).with_strategy("hybrid", 3);
    let budget = 10;

    let flag = Arc::new(AtomicBool::new(false));
    let mut inner = ReplayEvaluator::new(session.clone(), fast(), 1);
    let mut first = CancelAfter {
        inner: &mut inner,
        flag: flag.clone(),
        after: 4,
        seen: Vec::new(),
    };
    let mut strategy = strategies::create("hybrid", 3).unwrap();
    let report = Tuner::new(space, Stop::Evaluations(budget))
        .with_log(ResultsLog::create(&log_path, &header).unwrap())
        .with_initial(vec![default.clone()])
        .with_lookahead(2)
        .with_cancel(flag)
        .run(strategy.as_mut(), &mut first)
        .unwrap();
    assert_eq!(report.reason, StopReason::Cancelled);
    assert_eq!(report.progress.evaluations, 4);
    let first_seen = first.seen.clone();
    let logged = kw_tune::log::read_log(&log_path).unwrap().records;
    assert_eq!(logged.len(), 4);
    assert!(logged
        .iter()
        .all(|r| r.samples.as_ref().is_some_and(|s| s.len() >= 2)));

    let (log, records) = ResultsLog::resume(&log_path, space, &header).unwrap();
    let mut second = ReplayEvaluator::new(session.clone(), fast(), 1);
    let mut seen = Vec::new();
    let mut recording = |p: &Point| {
        seen.push(p.clone());
        second.evaluate(p)
    };
    let mut strategy = strategies::create("hybrid", 3).unwrap();
    let report = Tuner::new(space, Stop::Evaluations(budget))
        .resume(log, records)
        .with_initial(vec![default])
        .with_lookahead(2)
        .run(strategy.as_mut(), &mut recording)
        .unwrap();
    assert_eq!(report.progress.evaluations, budget);
    assert_eq!(report.replayed, 4);
    assert_eq!(seen.len() as u64, budget - 4);
    assert!(
        seen.iter().all(|p| !first_seen.contains(p)),
        "re-evaluated a logged point"
    );
    assert_eq!(
        kw_tune::log::read_log(&log_path).unwrap().records.len() as u64,
        budget
    );
}

/// The first-launch hook (a worker tells `kw tune`, which gives a driver's compile at that
/// launch a limit of its own) is called once per measurement, after a launch, in every
/// measuring mode, warm-ups or none.
#[test]
fn the_first_launch_is_told_once_per_measurement() {
    let Some(session) = inplace_session("first-launch", 1024) else {
        return;
    };
    let space = session.space();
    let default = space.point(&session.def().default_config()).unwrap();
    for (warmup, verify) in [
        (1, VerifyMode::Last),
        (0, VerifyMode::Last),
        (2, VerifyMode::EveryRun),
        (0, VerifyMode::EveryRun),
    ] {
        let options = MeasureOptions {
            warmup,
            verify,
            ..fast()
        };
        let mut eval = ReplayEvaluator::new(session.clone(), options, 1);
        let told = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = told.clone();
        eval.on_first_launch(Box::new(move || {
            count.fetch_add(1, Ordering::SeqCst);
        }));
        for n in 1..=3 {
            eval.evaluate(&default).unwrap();
            assert_eq!(
                told.load(Ordering::SeqCst),
                n,
                "warmup {warmup}, {verify:?}"
            );
        }
        assert!(eval.stats().launches >= 3 * (warmup as u64 + 2));
    }
}
