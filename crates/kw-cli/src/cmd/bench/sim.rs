//! `kw bench hotspot` and `kw bench nbody`: the library's simulation kernels.
//!
//! - hotspot at `[nx, ny, iterations]`: the routine's launches (ceil(iterations / the
//!   configuration's temporal_tiling_factor) of them) timed together, verified against the
//!   CPU after the last run; effective bandwidth = 12 bytes per cell and iteration (read the
//!   temperature and the power, write the temperature) over the time, against the
//!   device-to-device copy bandwidth. Temporal tiling reads and writes global memory once per
//!   launch, not per iteration, so it can pass 100% of the copy.
//! - nbody at `[n]`: one step, 20 flops per interaction (n^2 interactions; the usual
//!   convention, `library::FLOPS_PER_INTERACTION`), against the single-precision peak measured
//!   in the same run by `fma_peak` (16 independent FMA chains per thread on enough blocks to
//!   fill the device; 2 flops per FMA). Verified on a sample of bodies at large n.

use super::{random, time, Opts, Row};
use anyhow::Result;
use kernel_wisdom::library::{
    reference, HotspotCoefficients, Library, NbodyStep, FLOPS_PER_INTERACTION, FMA_PEAK_CHAINS,
};
use kernel_wisdom::DeviceBuffer;
use kw_core::rng::Rng;

/// The benchmark sizes of hotspot (nx, ny, iterations) and nbody (n).
pub(super) fn sizes(kernel: &str, small: bool) -> Vec<Vec<usize>> {
    match (kernel, small) {
        ("hotspot", false) => vec![
            vec![4096, 4096, 100],
            vec![8192, 8192, 24],
            vec![1024, 1024, 200],
            vec![1000, 3000, 64],
        ],
        ("hotspot", true) => vec![vec![61, 47, 9]],
        ("nbody", false) => vec![vec![16384], vec![65536], vec![131072], vec![100_003]],
        ("nbody", true) => vec![vec![1000]],
        _ => Vec::new(),
    }
}

/// hotspot at `[nx, ny, iterations]` against the copy bandwidth `bound_gbs`.
pub(super) fn hotspot(
    lib: &Library,
    [nx, ny, iterations]: [usize; 3],
    opts: &Opts,
    bound_gbs: f64,
) -> Result<Row> {
    let d = lib.device().as_ref();
    let kernel = lib.kernel("hotspot")?;
    let mut rng = Rng::new((nx + ny + iterations) as u64);
    let shape = [nx, ny];
    let cells = nx * ny;
    let temp: Vec<f32> = random(&mut rng, cells)
        .iter()
        .map(|v| 325.0 + 25.0 * v)
        .collect();
    let power: Vec<f32> = random(&mut rng, cells)
        .iter()
        .map(|v| 0.5 + 0.5 * v)
        .collect();
    let k = HotspotCoefficients::rodinia_cells(shape);
    let (din, dp) = (
        DeviceBuffer::from_slice(d, &temp)?,
        DeviceBuffer::from_slice(d, &power)?,
    );
    let out = DeviceBuffer::<f32>::new(d, cells)?;
    // The routine as an application calls it, then its launches timed at the selected
    // configuration (or `--config`).
    lib.hotspot(shape, iterations, &k, &din, &dp, &out)?;
    let given = match &opts.config {
        Some(text) => Some(crate::cmd::capture::parse_config(kernel.def(), text)?),
        None => None,
    };
    let mut times = Vec::with_capacity(opts.runs);
    let mut config = kernel.default_config().clone();
    for _ in 0..opts.runs.max(1) {
        let (ms, used) =
            lib.hotspot_timed(shape, iterations, &k, &din, &dp, &out, given.as_ref())?;
        times.push(ms);
        config = used;
    }
    let step = match given {
        Some(_) => "given (--config)".to_string(),
        None => kernel.choice(&[nx as i64, ny as i64]).step.to_string(),
    };
    let want = reference::hotspot(&temp, &power, shape, iterations, &k);
    let verified = reference::hotspot_mismatch(&out.to_vec()?, &want, iterations).is_none();
    let ms = super::median(times);
    let bytes = 12.0 * cells as f64 * iterations as f64;
    Ok(Row {
        kernel: "hotspot",
        size: vec![nx, ny, iterations],
        verified,
        ms,
        throughput: bytes / (ms * 1e-3) / 1e9,
        unit: "GB/s",
        bound: Ok(bound_gbs),
        bound_kind: "device-to-device copy",
        config,
        step,
        gflops: None,
    })
}

/// The device's single-precision GFLOP/s measured by `fma_peak` (median of the runs), or
/// why there is none.
fn peak_gflops(lib: &Library, opts: &Opts) -> Result<f64, String> {
    let measure = || -> Result<f64> {
        let d = lib.device().as_ref();
        let kernel = lib.kernel("fma_peak")?;
        // Blocks of 256: 4 full devices' worth of 2,048 threads per compute unit (a CPU
        // device gets a smaller count).
        let per_unit = if opts.small { 1024 } else { 8192 };
        let threads = (d.info().compute_units.max(1) as usize * per_unit).next_multiple_of(256);
        let iterations: i32 = if opts.small { 64 } else { 2048 };
        let out = DeviceBuffer::<f32>::new(d, threads)?;
        let args = [
            out.arg(),
            (threads as i32).into(),
            iterations.into(),
            0.999f32.into(),
            0.001f32.into(),
        ];
        kernel.launch(&args)?;
        let plain = Opts {
            runs: opts.runs,
            config: None,
            small: opts.small,
        };
        let (ms, _, _) = time(&kernel, &[threads as i64], &args, &plain)?;
        let flops = 2.0 * FMA_PEAK_CHAINS as f64 * f64::from(iterations) * threads as f64;
        Ok(flops / (ms * 1e-3) / 1e9)
    };
    measure().map_err(|e| format!("the fma_peak kernel failed: {}", crate::error_text(&e)))
}

/// nbody at `[n]`: one step, against the peak measured in the same run.
pub(super) fn nbody(lib: &Library, n: usize, opts: &Opts) -> Result<Row> {
    let d = lib.device().as_ref();
    let kernel = lib.kernel("nbody")?;
    let mut rng = Rng::new(n as u64);
    let mut pos = random(&mut rng, 4 * n);
    for i in 0..n {
        pos[4 * i + 3] = 0.55 + 0.45 * pos[4 * i + 3]; // masses in (0.1, 1)
    }
    let vel: Vec<f32> = random(&mut rng, 4 * n).iter().map(|v| 0.1 * v).collect();
    let step = NbodyStep {
        dt: 0.001,
        softening: 0.01,
        damping: 1.0,
    };
    let (dp, dv) = (
        DeviceBuffer::from_slice(d, &pos)?,
        DeviceBuffer::from_slice(d, &vel)?,
    );
    let (po, vo) = (
        DeviceBuffer::<f32>::new(d, 4 * n)?,
        DeviceBuffer::<f32>::new(d, 4 * n)?,
    );
    lib.nbody(n, &step, [&dp, &dv], [&po, &vo])?;
    let args = step.args(n as i32, [&dp, &dv], [&po, &vo]);
    let (ms, config, sel) = time(&kernel, &[n as i64], &args, opts)?;
    // The timed configuration's result: every body at small n, 512 spread over large n.
    let (gp, gv) = (po.to_vec()?, vo.to_vec()?);
    let stride = (n / 512).max(1);
    let verified = (0..n).step_by(stride).all(|i| {
        let got = [&gp[4 * i..4 * i + 4], &gv[4 * i..4 * i + 4]];
        reference::nbody_mismatch(&pos, &vel, &step, i, got).is_none()
    });
    let flops = FLOPS_PER_INTERACTION * n as f64 * n as f64;
    Ok(Row {
        kernel: "nbody",
        size: vec![n],
        verified,
        ms,
        throughput: flops / (ms * 1e-3) / 1e9,
        unit: "GFLOP/s",
        bound: peak_gflops(lib, opts),
        bound_kind: "measured FP32 FMA peak",
        config,
        step: sel,
        gflops: None,
    })
}
