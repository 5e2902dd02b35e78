//! Checks of the library's hotspot and n-body kernels on any device (`library_sim_pocl.rs`
//! on PoCL, `library_cuda.rs` on CUDA): configurations against the CPU reference at sizes no
//! tile divides; the routines at sizes from 1 up (hotspot: iteration counts that take one
//! launch, an even and an odd number, and a remainder), wrong shapes refused; `fma_peak`
//! doing the FMAs `kw bench` counts. Outputs are poisoned with NaN before every run.
#![allow(dead_code)]

use kernel_wisdom::library::{reference, HotspotCoefficients, Library, NbodyStep};
use kernel_wisdom::{Config, DeviceBuffer, Error, LaunchOptions, WisdomKernel};
use kw_core::backend::Device;
use kw_core::rng::Rng;
use std::sync::Arc;

/// `n` values in [lo, hi).
pub fn uniform(rng: &mut Rng, n: usize, lo: f64, hi: f64) -> Vec<f32> {
    (0..n)
        .map(|_| (lo + rng.f64() * (hi - lo)) as f32)
        .collect()
}

/// Temperatures around Rodinia's (300-350 K) and powers in [0, 1) on nx x ny cells.
pub fn chip(rng: &mut Rng, [nx, ny]: [usize; 2]) -> (Vec<f32>, Vec<f32>) {
    (
        uniform(rng, nx * ny, 300.0, 350.0),
        uniform(rng, nx * ny, 0.0, 1.0),
    )
}

/// n bodies in [-1, 1)^3 with masses in [0.1, 1), and small velocities.
pub fn bodies(rng: &mut Rng, n: usize) -> (Vec<f32>, Vec<f32>) {
    let mut pos = uniform(rng, 4 * n, -1.0, 1.0);
    for i in 0..n {
        pos[4 * i + 3] = (0.1 + 0.9 * rng.f64()) as f32;
    }
    (pos, uniform(rng, 4 * n, -0.1, 0.1))
}

/// `e` is an [`Error::Shape`] of `routine`.
pub fn assert_shape_error(e: Error, routine: &str) {
    assert!(
        matches!(&e, Error::Shape { routine: r, .. } if *r == routine),
        "{e}"
    );
}

/// Every configuration of `kernel`'s space.
pub fn every_config(kernel: &WisdomKernel) -> Vec<Config> {
    let space = kernel.space();
    space.iter().map(|p| space.config(&p)).collect()
}

/// `count` configurations spread evenly over `kernel`'s space, and the default.
pub fn spread_configs(kernel: &WisdomKernel, count: usize) -> Vec<Config> {
    let all = every_config(kernel);
    let stride = (all.len() / count.max(1)).max(1);
    let mut out: Vec<Config> = all.into_iter().step_by(stride).take(count).collect();
    out.push(kernel.default_config().clone());
    out
}

/// Each of `configs` launched once on an nx x ny grid asked for more steps than any factor
/// (so each takes its temporal_tiling_factor), against the reference after that many steps.
pub fn hotspot_configs(kernel: &WisdomKernel, configs: &[Config], shape: [usize; 2]) {
    let d = kernel.device().as_ref();
    let (temp, power) = chip(&mut Rng::new(21), shape);
    let k = HotspotCoefficients::rodinia(shape);
    let (dt, dp) = (
        DeviceBuffer::from_slice(d, &temp).unwrap(),
        DeviceBuffer::from_slice(d, &power).unwrap(),
    );
    let out = DeviceBuffer::<f32>::new(d, temp.len()).unwrap();
    let factor = |c: &Config| c.get("temporal_tiling_factor").unwrap().as_int().unwrap() as usize;
    let most = configs.iter().map(factor).max().unwrap_or(0);
    let xy = shape.map(|v| v as i32);
    let args = k.args(xy, most as i32 + 1, [&out, &dt, &dp]);
    let wants: Vec<Vec<f32>> = (0..=most)
        .map(|s| reference::hotspot(&temp, &power, shape, s, &k))
        .collect();
    for config in configs {
        out.fill(f32::NAN).unwrap();
        kernel
            .launch_with(&args, LaunchOptions::new().config(config))
            .unwrap_or_else(|e| panic!("{{{config}}}: {e}"));
        let steps = factor(config);
        let got = out.to_vec().unwrap();
        if let Some(m) = reference::hotspot_mismatch(&got, &wants[steps], steps) {
            panic!("{{{config}}}: {m}");
        }
    }
}

/// Each of `configs` launched once on n bodies, against the reference on every
/// `check_every`-th body.
pub fn nbody_configs(kernel: &WisdomKernel, configs: &[Config], n: usize, check_every: usize) {
    let d = kernel.device().as_ref();
    let (pos, vel) = bodies(&mut Rng::new(23), n);
    let step = NbodyStep {
        dt: 0.01,
        softening: 0.05,
        damping: 0.999,
    };
    let (dp, dv) = (
        DeviceBuffer::from_slice(d, &pos).unwrap(),
        DeviceBuffer::from_slice(d, &vel).unwrap(),
    );
    let (po, vo) = (
        DeviceBuffer::<f32>::new(d, 4 * n).unwrap(),
        DeviceBuffer::<f32>::new(d, 4 * n).unwrap(),
    );
    let args = step.args(n as i32, [&dp, &dv], [&po, &vo]);
    for config in configs {
        po.fill(f32::NAN).unwrap();
        vo.fill(f32::NAN).unwrap();
        kernel
            .launch_with(&args, LaunchOptions::new().config(config))
            .unwrap_or_else(|e| panic!("{{{config}}}: {e}"));
        let (gp, gv) = (po.to_vec().unwrap(), vo.to_vec().unwrap());
        for i in (0..n).step_by(check_every.max(1)).chain([n - 1]) {
            let got = [&gp[4 * i..4 * i + 4], &gv[4 * i..4 * i + 4]];
            if let Some(m) = reference::nbody_mismatch(&pos, &vel, &step, i, got) {
                panic!("{{{config}}}: {m}");
            }
        }
    }
}

pub fn hotspot_routine(dev: &Arc<dyn Device>) {
    let d = dev.as_ref();
    let lib = Library::new(Arc::clone(dev));
    let mut rng = Rng::new(22);
    // The default configuration fuses 2 steps: 0 and 1 take one launch, 4 two, 5 three.
    for (shape, iterations) in [
        ([1usize, 1], 3),
        ([1, 7], 1),
        ([13, 1], 4),
        ([37, 23], 5),
        ([41, 67], 0),
        ([97, 5], 7),
    ] {
        let (temp, power) = chip(&mut rng, shape);
        let k = HotspotCoefficients::rodinia(shape);
        let din = DeviceBuffer::from_slice(d, &temp).unwrap();
        let dp = DeviceBuffer::from_slice(d, &power).unwrap();
        let out = DeviceBuffer::from_slice(d, &vec![f32::NAN; temp.len()]).unwrap();
        lib.hotspot(shape, iterations, &k, &din, &dp, &out).unwrap();
        let want = reference::hotspot(&temp, &power, shape, iterations, &k);
        if let Some(m) = reference::hotspot_mismatch(&out.to_vec().unwrap(), &want, iterations) {
            panic!("{shape:?} x {iterations} steps: {m}");
        }
        assert_eq!(din.to_vec().unwrap(), temp, "temp_in left as it was");
    }
    // A factor of 3 given: 7 steps as 3 + 3 + 1 (the last launch's clamp), timed.
    let shape = [29usize, 31];
    let (temp, power) = chip(&mut rng, shape);
    let k = HotspotCoefficients::rodinia(shape);
    let din = DeviceBuffer::from_slice(d, &temp).unwrap();
    let dp = DeviceBuffer::from_slice(d, &power).unwrap();
    let out = DeviceBuffer::<f32>::new(d, temp.len()).unwrap();
    let kernel = lib.kernel("hotspot").unwrap();
    let mut config = kernel.default_config().clone();
    config.set("temporal_tiling_factor", 3);
    config.set("sh_power", 1);
    let (ms, used) = lib
        .hotspot_timed(shape, 7, &k, &din, &dp, &out, Some(&config))
        .unwrap();
    assert!(ms > 0.0 && used == config, "{ms} ms, {{{used}}}");
    let want = reference::hotspot(&temp, &power, shape, 7, &k);
    assert_eq!(
        reference::hotspot_mismatch(&out.to_vec().unwrap(), &want, 7),
        None
    );
    // An empty grid: nothing to do.
    let empty = DeviceBuffer::<f32>::new(d, 0).unwrap();
    let empty_out = DeviceBuffer::<f32>::new(d, 0).unwrap();
    lib.hotspot([0, 4], 3, &k, &empty, &empty, &empty_out)
        .unwrap();
    // Wrong lengths and an output that is an input: typed errors, nothing written.
    let twelve = DeviceBuffer::from_slice(d, &[7.0f32; 12]).unwrap();
    let other = DeviceBuffer::from_slice(d, &[1.0f32; 12]).unwrap();
    for e in [
        lib.hotspot([3, 5], 1, &k, &other, &other, &twelve),
        lib.hotspot([usize::MAX, 2], 1, &k, &other, &other, &twelve),
        lib.hotspot([3, 4], 1, &k, &twelve, &other, &twelve),
        lib.hotspot([3, 4], 1, &k, &other, &twelve, &twelve),
        // A count from C that wrapped ((size_t)-1) ran for ever, its queue growing.
        lib.hotspot([3, 4], usize::MAX, &k, &other, &other, &twelve),
    ] {
        assert_shape_error(e.unwrap_err(), "hotspot");
    }
    assert_eq!(twelve.to_vec().unwrap(), vec![7.0; 12], "nothing launched");
}

pub fn nbody_routine(dev: &Arc<dyn Device>) {
    let d = dev.as_ref();
    let lib = Library::new(Arc::clone(dev));
    let mut rng = Rng::new(24);
    let step = NbodyStep {
        dt: 0.005,
        softening: 0.1,
        damping: 1.0,
    };
    for n in [1usize, 2, 31, 131, 257] {
        let (pos, vel) = bodies(&mut rng, n);
        let (dp, dv) = (
            DeviceBuffer::from_slice(d, &pos).unwrap(),
            DeviceBuffer::from_slice(d, &vel).unwrap(),
        );
        let po = DeviceBuffer::from_slice(d, &vec![f32::NAN; 4 * n]).unwrap();
        let vo = DeviceBuffer::from_slice(d, &vec![f32::NAN; 4 * n]).unwrap();
        lib.nbody(n, &step, [&dp, &dv], [&po, &vo]).unwrap();
        let (gp, gv) = (po.to_vec().unwrap(), vo.to_vec().unwrap());
        for i in 0..n {
            let got = [&gp[4 * i..4 * i + 4], &gv[4 * i..4 * i + 4]];
            if let Some(m) = reference::nbody_mismatch(&pos, &vel, &step, i, got) {
                panic!("n = {n}: {m}");
            }
        }
    }
    // No bodies: nothing to do.
    let empty = DeviceBuffer::<f32>::new(d, 0).unwrap();
    let (e1, e2) = (
        DeviceBuffer::<f32>::new(d, 0).unwrap(),
        DeviceBuffer::<f32>::new(d, 0).unwrap(),
    );
    lib.nbody(0, &step, [&empty, &empty], [&e1, &e2]).unwrap();
    // A lone body keeps its velocity: its pull on itself is zero.
    let one = DeviceBuffer::from_slice(d, &[0.5f32, 0.25, -1.0, 2.0]).unwrap();
    let v = DeviceBuffer::from_slice(d, &[1.0f32, 0.0, 0.0, 9.0]).unwrap();
    let (po, vo) = (
        DeviceBuffer::<f32>::new(d, 4).unwrap(),
        DeviceBuffer::<f32>::new(d, 4).unwrap(),
    );
    lib.nbody(1, &step, [&one, &v], [&po, &vo]).unwrap();
    assert_eq!(vo.to_vec().unwrap(), [1.0, 0.0, 0.0, 9.0]);
    assert_eq!(po.to_vec().unwrap(), [0.505, 0.25, -1.0, 2.0]);
    // Wrong lengths, no softening, outputs that are inputs: typed errors, nothing written.
    let eight = DeviceBuffer::from_slice(d, &[7.0f32; 8]).unwrap();
    let other = DeviceBuffer::from_slice(d, &[1.0f32; 8]).unwrap();
    let spare = DeviceBuffer::<f32>::new(d, 8).unwrap();
    let no_softening = NbodyStep {
        softening: 0.0,
        ..step
    };
    // 1e-20 is positive, but its square is below f32's normal range (the kernel's rsqrt
    // flushes denormals).
    let denormal_square = NbodyStep {
        softening: 1e-20,
        ..step
    };
    for e in [
        lib.nbody(2, &denormal_square, [&other, &other], [&eight, &spare]),
        lib.nbody(3, &step, [&other, &other], [&eight, &po]),
        lib.nbody(usize::MAX, &step, [&other, &other], [&eight, &eight]),
        lib.nbody(2, &no_softening, [&other, &other], [&eight, &spare]),
        lib.nbody(2, &step, [&other, &eight], [&eight, &spare]),
        lib.nbody(2, &step, [&other, &other], [&eight, &eight]),
    ] {
        assert_shape_error(e.unwrap_err(), "nbody");
    }
    assert_eq!(eight.to_vec().unwrap(), vec![7.0; 8], "nothing launched");
}

pub fn fma_peak(dev: &Arc<dyn Device>) {
    let lib = Library::new(Arc::clone(dev));
    let kernel = lib.kernel("fma_peak").unwrap();
    let (n, iterations, m, c) = (300usize, 37, 0.999f32, 0.001f32);
    let out = DeviceBuffer::<f32>::new(dev.as_ref(), n).unwrap();
    kernel
        .launch(&[
            out.arg(),
            (n as i32).into(),
            iterations.into(),
            m.into(),
            c.into(),
        ])
        .unwrap();
    let got = out.to_vec().unwrap();
    for (i, g) in got.iter().enumerate() {
        let want: f32 = (0..kernel_wisdom::library::FMA_PEAK_CHAINS)
            .map(|k| {
                let mut a = i as f32 * 1e-9 + k as f32;
                for _ in 0..iterations {
                    a = a.mul_add(m, c);
                }
                a
            })
            .sum();
        assert!(
            (g - want).abs() <= 1e-5 * want.abs(),
            "thread {i}: {g} vs {want}"
        );
    }
}
