//! Device-side verification on PoCL gives the host comparison's verdicts: over generated
//! buffers of every element type (tolerance boundaries both ways, NaN, infinities, -0.0,
//! subnormals, extreme integers, exact comparison, NaN equal or an error) the comparison
//! kernel finds the same count, first mismatch and largest error as `verify::summarise`; and
//! a replayed wrong configuration is rejected, a right one accepted (a NaN in the reference
//! included), the same way on the device as on the host. The device compiles
//! through a cache of its own (a temporary directory). Prints `SKIPPED: no OpenCL platform`
//! without OpenCL.

use kernel_wisdom::{KernelBuilder, Source};
use kw_capture::record::{capture_launch, HostArg};
use kw_core::backend::{BackendError, CompileRequest, Device};
use kw_core::compile_cache::CompileCache;
use kw_core::{kernel_def::KernelDef, scalar::ScalarType};
use kw_opencl::OpenClBackend;
use kw_replay::verify::{magnitude, summarise};
use kw_replay::{DeviceComparer, ReplaySession, Tolerance, ToleranceOverride, VerifyWhere};
use proptest::prelude::*;
use std::sync::{Arc, OnceLock};

fn device() -> Option<Arc<dyn Device>> {
    static DEV: OnceLock<Option<Arc<dyn Device>>> = OnceLock::new();
    DEV.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("kw-devverify-cache-{}", std::process::id()));
        let cache = Arc::new(CompileCache::at(dir, 1 << 30));
        match OpenClBackend.open_cl(0) {
            Ok(d) => Some(Arc::new(d.with_compile_cache(cache)) as Arc<dyn Device>),
            Err(e @ BackendError::Unavailable { .. }) => {
                eprintln!("SKIPPED: no OpenCL platform ({e})");
                None
            }
            Err(e) => panic!("opening OpenCL device 0: {e}"),
        }
    })
    .clone()
}

fn comparer() -> Option<&'static DeviceComparer> {
    static CMP: OnceLock<Option<DeviceComparer>> = OnceLock::new();
    CMP.get_or_init(|| {
        device().map(|d| DeviceComparer::new(d).expect("the comparison kernels run on PoCL"))
    })
    .as_ref()
}

/// Compares on the device and on the host and asserts both agree; returns the summary.
fn both(ty: ScalarType, got: &[u8], want: &[u8], tol: Tolerance) -> Option<kw_replay::Summary> {
    let c = comparer()?;
    let dev = device()?;
    let n = got.len() / ty.size();
    let g = dev.alloc(got.len()).unwrap();
    let w = dev.alloc(want.len()).unwrap();
    g.write(0, got).unwrap();
    w.write(0, want).unwrap();
    let m = magnitude(ty, want);
    let on_device = c.compare(ty, g.as_ref(), w.as_ref(), n, tol, m).unwrap();
    let on_host = summarise(ty, got, want, tol);
    assert_eq!(on_device.count, on_host.count, "{ty}: mismatch count");
    assert_eq!(on_device.first, on_host.first, "{ty}: first mismatch");
    assert_eq!(
        on_device.max_error.to_bits(),
        on_host.max_error.to_bits(),
        "{ty}: largest error {} (device) vs {} (host)",
        on_device.max_error,
        on_host.max_error
    );
    // And the host comparison the evaluator used before agrees on the verdict.
    let old = kw_replay::verify::compare(ty, got, want, tol);
    assert_eq!(old.is_none(), on_host.count == 0);
    if let Some(m) = old {
        assert_eq!(m.count as u64, on_host.count);
        assert_eq!(Some(m.first.0 as u64), on_host.first);
    }
    Some(on_device)
}

fn bytes_f32(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn bytes_f64(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The float at `want + bound` (`bound = atol + rtol * magnitude`, the buffer's) and its
/// neighbours: on, just inside and just outside the tolerance.
fn boundary_f64(want: f64, bound: f64) -> [f64; 3] {
    let at = want + bound;
    [at, at.next_down(), at.next_up()]
}

fn boundary_f32(want: f32, bound: f64) -> [f32; 3] {
    let at = (f64::from(want) - bound) as f32;
    [at, at.next_down(), at.next_up()]
}

#[test]
fn edge_cases_at_the_tolerance_boundary_agree_with_the_host() {
    if comparer().is_none() {
        return;
    }
    let tol = Tolerance::default();
    let specials = [
        0.0f64,
        -0.0,
        1.0,
        -3.5,
        1e-300,
        f64::MIN_POSITIVE,
        5e-324,
        1e300,
        f64::MAX,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    let mut want = Vec::new();
    let mut got = Vec::new();
    for &w in &specials {
        for &g in &specials {
            want.push(w);
            got.push(g);
        }
    }
    for t in [
        tol,
        Tolerance::exact(),
        Tolerance {
            nan_is_error: true,
            ..tol
        },
    ] {
        let s = both(ScalarType::F64, &bytes_f64(&got), &bytes_f64(&want), t).unwrap();
        assert!(s.count > 0 && (s.count as usize) < want.len(), "{s:?}");
        // The same in f32 (compared in f64 on both sides).
        let want32: Vec<f32> = want.iter().map(|&v| v as f32).collect();
        let got32: Vec<f32> = got.iter().map(|&v| v as f32).collect();
        let s = both(ScalarType::F32, &bytes_f32(&got32), &bytes_f32(&want32), t).unwrap();
        assert!(s.count > 0, "{s:?}");
    }
    // At the boundary: the buffer's magnitude is 4 (its first element).
    let bound = tol.bound(4.0);
    let (mut want, mut got) = (vec![4.0f64], vec![4.0f64]);
    let (mut want32, mut got32) = (vec![4.0f32], vec![4.0f32]);
    for &w in &[0.0f64, -0.0, 1.0, -3.5, 1e-300, f64::MIN_POSITIVE, 5e-324] {
        for g in boundary_f64(w, bound) {
            want.push(w);
            got.push(g);
        }
    }
    for &w in &[1.0f32, -2.5, 1e-30, f32::MIN_POSITIVE / 4.0] {
        for g in boundary_f32(w, bound) {
            want32.push(w);
            got32.push(g);
        }
    }
    let s = both(ScalarType::F64, &bytes_f64(&got), &bytes_f64(&want), tol).unwrap();
    assert!(s.count > 0 && (s.count as usize) < want.len(), "{s:?}");
    let s = both(
        ScalarType::F32,
        &bytes_f32(&got32),
        &bytes_f32(&want32),
        tol,
    )
    .unwrap();
    assert!(s.count > 0, "{s:?}");
    // Exactly on the boundary passes, one step beyond fails (on both sides).
    let exact = [1.0f64, 1.0 + 1e-6 + 1e-5];
    let s = both(
        ScalarType::F64,
        &bytes_f64(&exact[1..]),
        &bytes_f64(&exact[..1]),
        tol,
    )
    .unwrap();
    let beyond = [1.0f64, (1.0 + 1e-6 + 1e-5f64).next_up()];
    let t = both(
        ScalarType::F64,
        &bytes_f64(&beyond[1..]),
        &bytes_f64(&beyond[..1]),
        tol,
    )
    .unwrap();
    assert_eq!((s.count, t.count), (0, 1), "{s:?} {t:?}");
    // Integers: exact; extreme values.
    let a: Vec<u8> = [i64::MIN, -1, 0, i64::MAX, 7]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let b: Vec<u8> = [i64::MIN + 1, -1, 0, i64::MAX - 1, 7]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let s = both(ScalarType::I64, &a, &b, tol).unwrap();
    assert_eq!((s.count, s.first), (2, Some(0)));
    let s = both(ScalarType::U8, &[0, 255, 3], &[0, 255, 4], tol).unwrap();
    assert_eq!((s.count, s.first, s.max_error), (1, Some(2), 1.0));
    // Nothing to compare.
    let s = both(ScalarType::F32, &[], &[], tol).unwrap();
    assert_eq!((s.count, s.first, s.max_error), (0, None, 0.0));
}

/// One element pair, as a recipe: how `want` is drawn and how `got` is made from it.
fn float_pair() -> impl Strategy<Value = (f64, u8, f64)> {
    let special = prop_oneof![
        Just(0.0f64),
        Just(-0.0),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(f64::NAN),
        Just(f64::MIN_POSITIVE),
        Just(1e-310),
        Just(1.0),
    ];
    let want = prop_oneof![3 => -1e3f64..1e3, 1 => -1e-3f64..1e-3, 1 => special.clone()];
    (want, 0u8..7, prop_oneof![-1e3f64..1e3, special])
}

/// `got` from `want`: equal, on/inside/outside the boundary (`bound`: the buffer's), a small
/// or any other value.
fn make_got(want: f64, how: u8, other: f64, bound: f64) -> f64 {
    let b = boundary_f64(want, bound);
    match how {
        0 => want,
        1 => b[0],
        2 => b[1],
        3 => b[2],
        4 => want * (1.0 + 1e-7),
        5 => -want,
        _ => other,
    }
}

fn tolerance() -> impl Strategy<Value = Tolerance> {
    prop_oneof![
        Just(Tolerance::default()),
        Just(Tolerance {
            rtol: 0.0,
            atol: 0.0,
            ..Tolerance::default()
        }),
        Just(Tolerance::exact()),
        Just(Tolerance {
            nan_is_error: true,
            ..Tolerance::default()
        }),
        (0.0f64..1e-2, 0.0f64..1e-3).prop_map(|(rtol, atol)| Tolerance {
            rtol,
            atol,
            ..Tolerance::default()
        }),
    ]
}

proptest! {
    // No regression files: the failing input is printed, and the cases differ every run.
    #![proptest_config(ProptestConfig {
        cases: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn floats_agree_with_the_host(
        pairs in proptest::collection::vec(float_pair(), 0..600),
        tol in tolerance(),
    ) {
        if comparer().is_none() {
            return Ok(());
        }
        let want: Vec<f64> = pairs.iter().map(|p| p.0).collect();
        let bound = tol.bound(magnitude(ScalarType::F64, &bytes_f64(&want)));
        let got: Vec<f64> = pairs.iter().map(|&(w, h, o)| make_got(w, h, o, bound)).collect();
        both(ScalarType::F64, &bytes_f64(&got), &bytes_f64(&want), tol);
        let want32: Vec<f32> = want.iter().map(|&v| v as f32).collect();
        let bound = tol.bound(magnitude(ScalarType::F32, &bytes_f32(&want32)));
        let got32: Vec<f32> = pairs
            .iter()
            .zip(&want32)
            .map(|(&(_, h, o), &w)| make_got(f64::from(w), h, o, bound) as f32)
            .collect();
        both(ScalarType::F32, &bytes_f32(&got32), &bytes_f32(&want32), tol);
    }

    #[test]
    fn integers_agree_with_the_host(
        data in proptest::collection::vec((any::<u64>(), 0u8..4, any::<u64>()), 0..700),
        ty in prop_oneof![
            Just(ScalarType::I8), Just(ScalarType::U8), Just(ScalarType::I16),
            Just(ScalarType::U16), Just(ScalarType::I32), Just(ScalarType::U32),
            Just(ScalarType::I64), Just(ScalarType::U64),
        ],
    ) {
        if comparer().is_none() {
            return Ok(());
        }
        let size = ty.size();
        let mut want = Vec::new();
        let mut got = Vec::new();
        for &(w, how, o) in &data {
            let g = match how {
                0 | 1 => w,
                2 => w ^ 1,
                _ => o,
            };
            want.extend_from_slice(&w.to_le_bytes()[..size]);
            got.extend_from_slice(&g.to_le_bytes()[..size]);
        }
        both(ty, &got, &want, Tolerance::default());
    }
}

/// `scale(y, x, n)`: `y = 2x`, except that `bug = 1` is off (by 1e-3 relative, outside the
/// default tolerance at every element) and `bug = 2` writes NaN at one element.
fn buggy_def() -> KernelDef {
    let src = r#"
__kernel void scale(__global float* y, __global const float* x, const int n) {
    int i = get_global_id(0);
    if (i < n) {
        float v = 2.0f * x[i];
        if (bug == 1) v = v * 1.001f;
        if (bug == 2 && i == n / 2) v = NAN;
        y[i] = v;
    }
}"#;
    let mut b = KernelBuilder::new("scale", Source::text("scale.cl", src));
    let bx = b.tune("block_size_x", [16, 64], 16);
    b.tune("bug", [0, 1, 2], 0);
    b.problem_size([kernel_wisdom::arg("n")])
        .block_size(bx.clone(), 1, 1)
        .grid_divisors(bx, 1, 1)
        .output::<f32>("y")
        .input::<f32>("x")
        .scalar::<i32>("n");
    b.build().unwrap()
}

#[test]
fn replayed_configurations_get_the_same_verdict_on_device_and_host() {
    let Some(dev) = device() else { return };
    let dir = std::env::temp_dir().join(format!("kw-devverify-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let def = buggy_def();
    let n = 3000usize;
    let mut x: Vec<f32> = (0..n).map(|i| (i % 97) as f32 / 7.0 + 0.5).collect();
    x[7] = f32::NAN; // a NaN in the reference: NaN equals NaN unless asked otherwise
    let path = capture_launch(
        &dir,
        "scale",
        &def,
        None,
        dev.as_ref(),
        &[
            HostArg::buffer(&vec![0f32; n]),
            HostArg::buffer(&x),
            HostArg::scalar(n as i32),
        ],
    )
    .unwrap();
    let session = ReplaySession::load(&path, dev.clone()).unwrap();
    assert_eq!(
        session.host_verification_reason(),
        None,
        "PoCL verifies on the device"
    );
    let tol = ToleranceOverride::default();
    let strict = ToleranceOverride {
        nan_is_error: Some(true),
        ..tol
    };
    let space = session.space();
    for i in 0..space.len() {
        let point = space.point_at(i).unwrap();
        let config = space.config(&point);
        let defines = def.defines_for(&config, Some(dev.info())).unwrap();
        let k = dev
            .compile(&CompileRequest {
                source: &def.source,
                kernel_name: &def.kernel_name,
                defines: &defines,
                flags: &[],
                include_dirs: &[],
                template_args: &[],
            })
            .unwrap();
        session.restore().unwrap();
        session
            .launch_timed(k.as_ref(), &session.geometry(&config).unwrap())
            .unwrap();
        let on_device = session.verify_at(tol, VerifyWhere::Device).unwrap();
        let on_host = session.verify_at(tol, VerifyWhere::Host).unwrap();
        assert_eq!(on_device, on_host, "{}", config.key());
        let strict_device = session.verify_at(strict, VerifyWhere::Device).unwrap();
        let strict_host = session.verify_at(strict, VerifyWhere::Host).unwrap();
        assert_eq!(strict_device, strict_host, "{}", config.key());
        // With NaN as an error, every configuration fails; the right one at the NaN only.
        let bug = config.get("bug").unwrap().as_int().unwrap();
        assert!(
            strict_device
                .as_deref()
                .is_some_and(|r| bug != 0 || r.contains("1 of 3000 elements differ, first at [7]")),
            "{strict_device:?}"
        );
        match bug {
            0 => assert_eq!(on_device, None, "{}", config.key()),
            1 => assert!(
                on_device
                    .as_deref()
                    .is_some_and(|r| r.contains(&format!("{} of {n}", n - 1))),
                "{on_device:?}"
            ),
            _ => assert!(
                on_device
                    .as_deref()
                    .is_some_and(|r| r.contains("1 of") && r.contains("NaN")),
                "{on_device:?}"
            ),
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}
