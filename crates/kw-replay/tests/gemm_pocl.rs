//! Restrictions that depend on the problem size, on PoCL, with a GEMM that has no bounds
//! checks (like CLBlast's Xgemm): its tiles must divide the matrix sizes. Selection only ever
//! launches a configuration valid at the launch's size (skipping records tuned at other
//! sizes, then the default), a launch where none is valid is a typed error that launches
//! nothing, and at every size of a sweep the result equals a CPU reference. `kw tune` of a
//! capture at such a size evaluates only configurations valid there. Undeclared buffer
//! lengths capture whole buffers. The default tolerance accepts re-associated sums (the
//! `USE_CL_MAD` finding) and still catches one wrong element among 16,384. Out-of-bounds
//! writers are caught by the guard regions, and the evaluations after them still pass.

use kernel_wisdom::LaunchOptions;
use kernel_wisdom::{
    open_device, DeviceBuffer, DeviceSelector, Error, KernelBuilder, KernelDef, Source,
    WisdomKernel,
};
use kw_capture::record::{capture_launch, HostArg};
use kw_core::backend::{BackendError, Device};
use kw_core::rng::Rng;
use kw_core::wisdom::*;
use kw_core::{config::Config, expr::arg, space::TuningSpace, value::Value};
use kw_replay::{MeasureOptions, ReplayEvaluator, ReplaySession};
use kw_tune::{strategies, Evaluator, Stop, Tuner};
use std::path::PathBuf;
use std::sync::Arc;

/// The first OpenCL device, or `None` after saying why the test is skipped.
fn device() -> Option<Arc<dyn Device>> {
    let list = match kernel_wisdom::list_devices() {
        Ok(list) => list,
        Err(e) => {
            eprintln!("SKIPPED: no OpenCL platform ({e})");
            return None;
        }
    };
    let Some(d) = list
        .iter()
        .find(|d| d.info.backend == kw_core::device::BackendKind::Opencl)
    else {
        eprintln!("SKIPPED: no OpenCL device");
        return None;
    };
    match open_device(&DeviceSelector::Index(d.index)) {
        Ok(d) => Some(d),
        Err(Error::Backend(e @ BackendError::Unavailable { .. })) => {
            eprintln!("SKIPPED: no OpenCL platform ({e})");
            None
        }
        Err(e) => panic!("opening the OpenCL device failed: {e}"),
    }
}

/// Random floats in [-2, 2).
fn random_floats(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n).map(|_| (rng.f64() * 4.0 - 2.0) as f32).collect()
}

/// The GEMM without bounds checks (`kernels/gemm_no_bounds.cl`).
const GEMM: &str = include_str!("../../../kernels/gemm_no_bounds.cl");

fn gemm_def(default_tile: i64) -> KernelDef {
    gemm_builder(default_tile)
        .buffer_len("c", arg("m") * arg("n"))
        .buffer_len("a", arg("m") * arg("k"))
        .buffer_len("b", arg("k") * arg("n"))
        .build()
        .unwrap()
}

/// The GEMM's definition without declared buffer lengths (each defaults to m·n).
fn gemm_builder(default_tile: i64) -> KernelBuilder {
    let mut b = KernelBuilder::new("gemm_nb", Source::text("gemm_nb.cl", GEMM));
    let tx = b.tune("TX", [1, 2, 4, 8, 16], default_tile.min(16));
    let ty = b.tune("TY", [1, 2, 4, 8], 1);
    let wm = b.tune("WM", [1, 2, 4], 1);
    let wn = b.tune("WN", [1, 2, 4], 1);
    b.restriction_text("problem_size.x % (TX * WN) == 0")
        .restriction_text("problem_size.y % (TY * WM) == 0")
        .tuning_key("gemm_nb_test")
        .problem_size([arg("n"), arg("m")])
        .block_size(tx.clone(), ty.clone(), 1)
        .grid_divisors(tx * wn, ty * wm, 1)
        .output::<f32>("c")
        .input::<f32>("a")
        .input::<f32>("b")
        .scalar::<i32>("m")
        .scalar::<i32>("n")
        .scalar::<i32>("k");
    b
}

fn cpu_gemm(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    let mut c = vec![0f32; m * n];
    for row in 0..m {
        for col in 0..n {
            let mut acc = 0f32;
            for p in 0..k {
                acc += a[row * k + p] * b[p * n + col];
            }
            c[row * n + col] = acc;
        }
    }
    c
}

/// Launches at m x n x k and returns the result, or the launch's error. C starts as NaN.
fn run(kernel: &WisdomKernel, m: usize, n: usize, k: usize) -> Result<Vec<f32>, Error> {
    let device = kernel.device().clone();
    let mut rng = Rng::new((m * 31 + n * 7 + k) as u64);
    let a = random_floats(&mut rng, m * k);
    let b = random_floats(&mut rng, k * n);
    let da = DeviceBuffer::from_slice(device.as_ref(), &a).unwrap();
    let db = DeviceBuffer::from_slice(device.as_ref(), &b).unwrap();
    // One spare row past the end: a tile that does not fit would write there.
    let dc = DeviceBuffer::from_slice(device.as_ref(), &vec![f32::NAN; m * n + n]).unwrap();
    let args = [
        dc.arg(),
        da.arg(),
        db.arg(),
        (m as i32).into(),
        (n as i32).into(),
        (k as i32).into(),
    ];
    kernel.launch(&args)?;
    let c = dc.to_vec().unwrap();
    assert!(
        c[m * n..].iter().all(|x| x.is_nan()),
        "{m}x{n}x{k}: the launch wrote past the end of C"
    );
    let want = cpu_gemm(&a, &b, m, n, k);
    for (i, (g, w)) in c[..m * n].iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-4 * (k as f32),
            "{m}x{n}x{k}: element {i} is {g}, the CPU reference {w}"
        );
    }
    Ok(c)
}

fn record(
    kernel: &WisdomKernel,
    space: &TuningSpace,
    size: [i64; 2],
    tile: (i64, i64),
) -> WisdomRecord {
    let info = kernel.device().info();
    let mut config = Config::default();
    config.set("TX", tile.0);
    config.set("TY", 4);
    config.set("WM", 2);
    config.set("WN", tile.1);
    WisdomRecord {
        config,
        problem_size: size.to_vec(),
        device: WisdomDevice::of(info),
        objective: Objective {
            median_ms: 1.0,
            samples: 5,
            ..Default::default()
        },
        space: SpaceFingerprint::of(space),
        provenance: Provenance::default(),
        alternates: Vec::new(),
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kw-sizes-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn the_selected_configuration_is_valid_and_correct_at_every_size() {
    let Some(device) = device() else {
        return;
    };
    let dir = temp_dir("sweep");
    let probe = WisdomKernel::new(gemm_def(1), device.clone()).unwrap();
    let space = probe.space().clone();
    // Tuned at 256x256: a 64-wide tile (16 x 4) in x; at 512x512: a 32-wide tile (8 x 4).
    for r in [
        record(&probe, &space, [256, 256], (16, 4)),
        record(&probe, &space, [512, 512], (8, 4)),
    ] {
        add_record(&dir, "gemm_nb_test", r, ReplacePolicy::Always).unwrap();
    }
    let kernel = WisdomKernel::new(gemm_def(1), device.clone())
        .unwrap()
        .with_wisdom_dir(&dir);
    // 256: the exact record.
    let c = kernel.choice(&[256, 256]);
    assert_eq!(c.step, Step::ExactDeviceExactSize);
    // 288 = 9 x 32: the nearest record (64-wide) is not valid there; the next one is.
    let c = kernel.choice(&[288, 288]);
    assert_eq!(c.step, Step::DeviceNearestSize);
    assert_eq!(c.config.get("TX"), Some(&Value::Int(8)), "{:?}", c.config);
    // 100: neither record's tile divides it: the default (1 x 1 tiles).
    let c = kernel.choice(&[100, 100]);
    assert_eq!(c.step, Step::Default);
    for (m, n, k) in [
        (256, 256, 64),
        (288, 288, 32),
        (288, 256, 16),
        (100, 100, 8),
        (96, 160, 24),
        (17, 33, 5),
        (64, 512, 8),
    ] {
        run(&kernel, m, n, k).unwrap();
        let used = kernel.config_for(&[n as i64, m as i64, 1]).unwrap();
        kernel
            .def()
            .check_at_launch(&used, &[n as i64, m as i64, 1], None, None)
            .unwrap_or_else(|e| panic!("{m}x{n}: selected {used}, not valid: {e}"));
    }
}

#[test]
fn no_valid_configuration_is_a_typed_error_and_launches_nothing() {
    let Some(device) = device() else {
        return;
    };
    // The default tile is 4 wide: 18 columns take no configuration whose x tile is 4 or
    // more, and the wisdom directory is empty.
    let dir = temp_dir("none");
    let kernel = WisdomKernel::new(gemm_def(4), device.clone())
        .unwrap()
        .with_wisdom_dir(&dir);
    match run(&kernel, 8, 18, 4) {
        Err(Error::NoValidConfig {
            kernel: name,
            problem_size,
            reason,
            ..
        }) => {
            assert_eq!(name, "gemm_nb");
            assert_eq!(problem_size, [18, 8, 1]);
            assert!(reason.contains("problem_size[0]"), "{reason}");
        }
        other => panic!("expected NoValidConfig, got {other:?}"),
    }
    // An explicit configuration that is not valid at the size is refused too.
    let mut bad = kernel.default_config().clone();
    bad.set("TX", 16);
    let c = DeviceBuffer::<f32>::new(device.as_ref(), 64).unwrap();
    let a = DeviceBuffer::<f32>::new(device.as_ref(), 64).unwrap();
    let err = kernel
        .launch_with(
            &[
                c.arg(),
                a.arg(),
                a.arg(),
                4i32.into(),
                12i32.into(),
                1i32.into(),
            ],
            LaunchOptions::new().config(&bad),
        )
        .unwrap_err();
    assert!(matches!(err, Error::InvalidConfig { .. }), "{err}");
    // At a size where the default is valid, it launches and is right.
    run(&kernel, 8, 16, 4).unwrap();
}

#[test]
fn tuning_a_capture_evaluates_only_configurations_valid_at_its_size() {
    let Some(device) = device() else {
        return;
    };
    let dir = temp_dir("tune");
    let def = gemm_def(1);
    let (m, n, k) = (24usize, 40usize, 8usize);
    let mut rng = Rng::new(5);
    let a = random_floats(&mut rng, m * k);
    let b = random_floats(&mut rng, k * n);
    let path = capture_launch(
        &dir,
        "gemm",
        &def,
        None,
        device.as_ref(),
        &[
            HostArg::buffer(&vec![0f32; m * n]),
            HostArg::buffer(&a),
            HostArg::buffer(&b),
            HostArg::scalar(m as i32),
            HostArg::scalar(n as i32),
            HostArg::scalar(k as i32),
        ],
    )
    .unwrap();
    let session = Arc::new(ReplaySession::load(&path, device.clone()).unwrap());
    let space = session.space();
    let declared = def.space(Some(device.info())).unwrap();
    assert!(
        space.len() < declared.len(),
        "{} of {}",
        space.len(),
        declared.len()
    );
    let ps = [n as i64, m as i64, 1];
    let mut valid_declared = 0;
    for p in declared.iter() {
        valid_declared += u128::from(
            def.check_at_launch(&declared.config(&p), &ps, None, None)
                .is_ok(),
        );
    }
    assert_eq!(space.len(), valid_declared);
    // Configurations of the space, evaluated: none fails (a tile that does not divide
    // 24 x 40 would write outside C or leave elements unwritten).
    let options = MeasureOptions {
        warmup: 0,
        min_samples: 1,
        max_samples: 1,
        ..MeasureOptions::default()
    };
    let mut eval = ReplayEvaluator::new(session.clone(), options, 1);
    let mut strategy = strategies::create("random", 7).unwrap();
    let report = Tuner::new(space, Stop::Evaluations(12))
        .run(strategy.as_mut(), &mut eval)
        .unwrap();
    assert_eq!(report.progress.evaluations, 12);
    for e in &report.history {
        let config = space.config(&e.point);
        assert!(
            def.check_at_launch(&config, &ps, None, None).is_ok(),
            "{config}"
        );
        assert!(e.result.is_ok(), "{config}: {:?}", e.result);
    }
}

/// With no declared length, a capture takes each buffer whole: A (m·k elements) is not cut
/// to the default length m·n, and the captured configuration reproduces its reference.
#[test]
fn undeclared_lengths_capture_whole_buffers() {
    let Some(device) = device() else {
        return;
    };
    let dir = temp_dir("lengths");
    let def = gemm_builder(1).build().unwrap();
    let (m, n, k) = (16usize, 8usize, 32usize);
    let mut rng = Rng::new(9);
    let a = random_floats(&mut rng, m * k);
    let b = random_floats(&mut rng, k * n);
    let path = capture_launch(
        &dir,
        "gemm",
        &def,
        None,
        device.as_ref(),
        &[
            HostArg::buffer(&vec![0f32; m * n]),
            HostArg::buffer(&a),
            HostArg::buffer(&b),
            HostArg::scalar(m as i32),
            HostArg::scalar(n as i32),
            HostArg::scalar(k as i32),
        ],
    )
    .unwrap();
    let session = Arc::new(ReplaySession::load(&path, device.clone()).unwrap());
    let lens: Vec<Option<usize>> = session.metadata().args.iter().map(|a| a.len).collect();
    assert_eq!(lens[..3], [Some(m * n), Some(m * k), Some(k * n)]);
    let mut eval = ReplayEvaluator::new(session.clone(), MeasureOptions::default(), 1);
    let default = session.space().point(&def.default_config()).unwrap();
    eval.measure(&default)
        .expect("the captured configuration reproduces its reference");
}

/// Variants that sum in another order (two partial sums; fma) pass the default tolerance,
/// which an element-by-element tolerance rejects; one wrong element among 16,384 fails.
#[test]
fn reassociated_sums_pass_and_one_wrong_element_fails() {
    let Some(device) = device() else {
        return;
    };
    let dir = temp_dir("tolerance");
    let mut b = gemm_builder(4);
    b.tune("SUM", [0, 1, 2], 0);
    b.tune("WRONG", [0, 1], 0);
    let def = b
        .buffer_len("c", arg("m") * arg("n"))
        .buffer_len("a", arg("m") * arg("k"))
        .buffer_len("b", arg("k") * arg("n"))
        .build()
        .unwrap();
    let (m, n, k) = (128usize, 128usize, 256usize);
    let mut rng = Rng::new(3);
    let a = random_floats(&mut rng, m * k);
    let bm = random_floats(&mut rng, k * n);
    let host_args = [
        HostArg::buffer(&vec![0f32; m * n]),
        HostArg::buffer(&a),
        HostArg::buffer(&bm),
        HostArg::scalar(m as i32),
        HostArg::scalar(n as i32),
        HostArg::scalar(k as i32),
    ];
    let path = capture_launch(&dir, "gemm", &def, None, device.as_ref(), &host_args).unwrap();
    // What an element-by-element tolerance (1e-6 + 1e-5 |want|) says of the two-sums variant.
    let kernel = WisdomKernel::new(def.clone(), device.clone()).unwrap();
    let run = |sum: i64| {
        let mut config = def.default_config();
        config.set("SUM", sum);
        let dc = DeviceBuffer::<f32>::new(device.as_ref(), m * n).unwrap();
        let da = DeviceBuffer::from_slice(device.as_ref(), &a).unwrap();
        let db = DeviceBuffer::from_slice(device.as_ref(), &bm).unwrap();
        let args = [
            dc.arg(),
            da.arg(),
            db.arg(),
            (m as i32).into(),
            (n as i32).into(),
            (k as i32).into(),
        ];
        kernel
            .launch_with(&args, LaunchOptions::new().config(&config))
            .unwrap();
        dc.to_vec().unwrap()
    };
    let (want, two_sums) = (run(0), run(1));
    let elementwise = want
        .iter()
        .zip(&two_sums)
        .filter(|(w, g)| f64::from((*g - *w).abs()) > 1e-6 + 1e-5 * f64::from(w.abs()))
        .count();
    assert!(elementwise > 0, "the variants should differ in rounding");
    println!(
        "{elementwise} of {} elements fail an element-by-element tolerance",
        m * n
    );

    let session = Arc::new(ReplaySession::load(&path, device.clone()).unwrap());
    let options = MeasureOptions {
        warmup: 0,
        min_samples: 1,
        max_samples: 1,
        ..MeasureOptions::default()
    };
    let mut eval = ReplayEvaluator::new(session.clone(), options, 1);
    for sum in [0, 1, 2] {
        for wrong in [0, 1] {
            let mut config = def.default_config();
            config.set("SUM", sum);
            config.set("WRONG", wrong);
            let point = session.space().point(&config).unwrap();
            match (eval.measure(&point), wrong) {
                (Ok(_), 0) => {}
                (Err(f), 1) => assert!(
                    f.reason.contains("1 of 16384 elements differ"),
                    "{config}: {}",
                    f.reason
                ),
                (r, _) => panic!("{config}: {r:?}"),
            }
        }
    }
}

/// A configuration that writes past the end of C (its output is right) or of A fails as an
/// out-of-bounds write naming the buffer; the evaluations after it still pass (every buffer
/// and guard is restored after a failure).
#[test]
fn out_of_bounds_writers_are_caught_and_later_evaluations_pass() {
    let Some(device) = device() else {
        return;
    };
    let dir = temp_dir("guards");
    let mut b = gemm_builder(4);
    b.tune("SUM", [0, 1], 0);
    b.tune("OOB", [0, 1, 2], 0);
    let def = b
        .buffer_len("c", arg("m") * arg("n"))
        .buffer_len("a", arg("m") * arg("k"))
        .buffer_len("b", arg("k") * arg("n"))
        .build()
        .unwrap();
    let (m, n, k) = (32usize, 64usize, 16usize);
    let mut rng = Rng::new(4);
    let host_args = [
        HostArg::buffer(&vec![0f32; m * n]),
        HostArg::buffer(&random_floats(&mut rng, m * k)),
        HostArg::buffer(&random_floats(&mut rng, k * n)),
        HostArg::scalar(m as i32),
        HostArg::scalar(n as i32),
        HostArg::scalar(k as i32),
    ];
    let path = capture_launch(&dir, "gemm", &def, None, device.as_ref(), &host_args).unwrap();
    let session = Arc::new(ReplaySession::load(&path, device.clone()).unwrap());
    let mut eval = ReplayEvaluator::new(session.clone(), MeasureOptions::default(), 1);
    let expected = [
        (0, 0, None),
        (0, 1, Some("buffer `c`")),
        (1, 0, None),
        (0, 2, Some("buffer `a`")),
        (1, 0, None),
        (0, 0, None),
    ];
    for (sum, oob, failure) in expected {
        let mut config = def.default_config();
        config.set("SUM", sum);
        config.set("OOB", oob);
        let point = session.space().point(&config).unwrap();
        match (eval.evaluate(&point), failure) {
            (Ok(_), None) => {}
            (Err(f), Some(buffer)) => {
                assert!(
                    f.reason.starts_with("out-of-bounds write: ") && f.reason.contains(buffer),
                    "{config}: {}",
                    f.reason
                );
                assert!(!f.fatal, "{config}: {}", f.reason);
            }
            (r, _) => panic!("{config}: {r:?}"),
        }
    }
}
