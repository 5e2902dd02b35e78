//! `kw bench gemm` and `kw bench gemm_f16`: the routine once (as an application calls it,
//! what `KW_CAPTURE` captures), then its kernels timed at the configuration the wisdom
//! selects (or `--config`), verified against the CPU, against cuBLAS at the same shape. At a
//! size the routine pads (not a multiple of [`defs::GEMM_PAD`] or [`defs::GEMM_F16_PAD`]) the
//! routine launches its kernel on padded copies, so the whole routine is timed there (its
//! copies included, on the host clock), unless `--config` asks for the kernel alone at the
//! size given (where that configuration's restrictions allow it).

use super::{median, random, time, Opts, Row};
use anyhow::Result;
use kernel_wisdom::library::half::{f16_bits_to_f32, f32_to_f16_bits};
use kernel_wisdom::library::{defs, Library};
use kernel_wisdom::{DeviceBuffer, KernelArg, WisdomKernel};
use kw_core::rng::Rng;
use std::time::Instant;

/// A cuBLAS GEMM's GFLOP/s at `[m, n, k]` on the same device (`half`: on half matrices), or
/// why there is none.
fn cublas_gflops(
    info: &kw_core::device::DeviceInfo,
    shape: [usize; 3],
    runs: usize,
    half: bool,
) -> Result<f64, String> {
    if info.backend != kernel_wisdom::BackendKind::Cuda {
        return Err("not a CUDA device".into());
    }
    #[cfg(feature = "cuda")]
    return if half {
        kw_cuda::cublas::hgemm_gflops(&info.name, shape, runs)
    } else {
        kw_cuda::cublas::sgemm_gflops(&info.name, shape, runs)
    };
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (shape, runs, half);
        Err("kw was built without CUDA".into())
    }
}

/// Whether `got` (m x n, column-major) is `a` (m x k) times `b` (k x n), column-major: every
/// element at small sizes, a strided sample of 4096 at large ones, each within `bound(want,
/// scale)` of the f64 product (`scale`: the sum of the products' magnitudes).
fn verified(
    [m, n, k]: [usize; 3],
    a: &[f32],
    b: &[f32],
    got: &[f32],
    bound: impl Fn(f64, f64) -> f64,
) -> bool {
    let step = (m * n / 4096).max(1);
    (0..m * n).step_by(step).all(|at| {
        let (i, j) = (at % m, at / m);
        let want: f64 = (0..k)
            .map(|p| f64::from(a[p * m + i]) * f64::from(b[j * k + p]))
            .sum();
        let scale: f64 = (0..k)
            .map(|p| f64::from(a[p * m + i].abs()) * f64::from(b[j * k + p].abs()))
            .sum();
        (f64::from(got[at]) - want).abs() <= bound(want, scale)
    })
}

/// The gemm kernel's arguments (alpha 1, beta 0) with split-K's scratch, zeroed, for the
/// precision's definition (`split_k`: sized for it; else one element each).
fn args<'a, T: kw_core::scalar::Scalar>(
    [c, a, bt]: [&'a DeviceBuffer<T>; 3],
    [m, n, k]: [usize; 3],
    scratch: &'a (DeviceBuffer<f32>, DeviceBuffer<i32>),
) -> [KernelArg<'a>; 10] {
    [
        c.arg(),
        a.arg(),
        bt.arg(),
        (m as i32).into(),
        (n as i32).into(),
        (k as i32).into(),
        1.0f32.into(),
        0.0f32.into(),
        scratch.0.arg(),
        scratch.1.arg(),
    ]
}

fn scratch(
    d: &dyn kw_core::backend::Device,
    [m, n]: [usize; 2],
    split_k: bool,
) -> Result<(DeviceBuffer<f32>, DeviceBuffer<i32>)> {
    let (wl, cl) = if split_k {
        defs::gemm_scratch_lens(m, n)
    } else {
        (1, 1)
    };
    let work = DeviceBuffer::<f32>::new(d, wl)?;
    work.fill(0.0)?;
    let counts = DeviceBuffer::<i32>::new(d, cl)?;
    counts.fill(0)?;
    Ok((work, counts))
}

/// The size the routine pads `size` to, when it pads: the kernel alone cannot run on the
/// caller's matrices there.
fn padded(size: [usize; 3], pad: [usize; 3]) -> Option<[usize; 3]> {
    let p = [0, 1, 2].map(|i| size[i].div_ceil(pad[i]) * pad[i]);
    (p != size).then_some(p)
}

/// Times the whole routine (`call`, then a synchronize; the host clock, median of the runs)
/// at a size it pads to `padded`, where the wisdom selects the kernel's configuration.
fn time_routine(
    lib: &Library,
    kernel: &WisdomKernel,
    padded: [usize; 3],
    opts: &Opts,
    mut call: impl FnMut() -> Result<(), kernel_wisdom::Error>,
) -> Result<(f64, kernel_wisdom::Config, String)> {
    let d = lib.device().as_ref();
    let mut times = Vec::with_capacity(opts.runs);
    for _ in 0..opts.runs.max(1) {
        let t = Instant::now();
        call()?;
        d.synchronize()?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let choice = kernel.choice(&padded.map(|v| v as i64));
    let [pm, pn, pk] = padded;
    let step = format!(
        "{}; the whole routine timed on the host clock, padded to {pm}x{pn}x{pk}",
        choice.step
    );
    Ok((median(times), choice.config, step))
}

/// A GEMM's row: `ms` for 2 m n k flops, against `bound` (GFLOP/s, or why none).
fn row(
    kernel: &'static str,
    [m, n, k]: [usize; 3],
    verified: bool,
    ms: f64,
    (bound, bound_kind): (Result<f64, String>, &'static str),
    config: kernel_wisdom::Config,
    step: String,
) -> Row {
    Row {
        kernel,
        size: vec![m, n, k],
        verified,
        ms,
        throughput: 2.0 * m as f64 * n as f64 * k as f64 / (ms * 1e-3) / 1e9,
        unit: "GFLOP/s",
        bound,
        bound_kind,
        gflops: None,
        config,
        step,
    }
}

/// `gemm` at `[m, n, k]` (column-major, alpha 1, beta 0): the routine's result against the CPU
/// (a sample of elements at large sizes), then its kernel and B's transpose timed at the
/// configurations the wisdom selects, against cuBLAS SGEMM.
pub(super) fn bench(
    lib: &Library,
    kernel: &WisdomKernel,
    [m, n, k]: [usize; 3],
    opts: &Opts,
) -> Result<Row> {
    let d = lib.device().as_ref();
    let mut rng = Rng::new((m + n + k) as u64);
    let (a, b) = (random(&mut rng, m * k), random(&mut rng, k * n));
    let (da, db) = (
        DeviceBuffer::from_slice(d, &a)?,
        DeviceBuffer::from_slice(d, &b)?,
    );
    let dc = DeviceBuffer::<f32>::new(d, m * n)?;
    // The routine as an application calls it (what `KW_CAPTURE=kw_gemm` captures).
    lib.gemm([m, n, k], 1.0, &da, &db, 0.0, &dc)?;
    if let (Some(p), None) = (padded([m, n, k], defs::GEMM_PAD), &opts.config) {
        dc.fill(f32::NAN)?;
        let call = || lib.gemm([m, n, k], 1.0, &da, &db, 0.0, &dc);
        let (ms, config, sel) = time_routine(lib, kernel, p, opts, call)?;
        let got = dc.to_vec()?;
        let verified = verified([m, n, k], &a, &b, &got, |_, scale| 1e-5 * scale + 1e-6);
        let bound = cublas_gflops(d.info(), [m, n, k], opts.runs, false);
        let kind = (bound, "cuBLAS SGEMM");
        return Ok(row("gemm", [m, n, k], verified, ms, kind, config, sel));
    }
    // Then its two kernels timed: B's transpose (at the selected configuration), and the
    // gemm kernel on it (selected, or `--config`); the sizes need no padding.
    let bt = DeviceBuffer::<f32>::new(d, k * n)?;
    let transpose = lib.kernel("transpose")?;
    let targs = [bt.arg(), db.arg(), (n as i32).into(), (k as i32).into()];
    let selected = Opts {
        runs: opts.runs,
        config: None,
        small: opts.small,
    };
    let (transpose_ms, _, _) = time(&transpose, &[k as i64, n as i64], &targs, &selected)?;
    dc.fill(f32::NAN)?;
    let scratch = scratch(d, [m, n], true)?;
    let args = args([&dc, &da, &bt], [m, n, k], &scratch);
    let (kernel_ms, config, sel) = time(kernel, &[m as i64, n as i64, k as i64], &args, opts)?;
    // The timed configuration's result.
    let got = dc.to_vec()?;
    let verified = verified([m, n, k], &a, &b, &got, |_, scale| 1e-5 * scale + 1e-6);
    let bound = cublas_gflops(d.info(), [m, n, k], opts.runs, false);
    let ms = kernel_ms + transpose_ms;
    Ok(row(
        "gemm",
        [m, n, k],
        verified,
        ms,
        (bound, "cuBLAS SGEMM"),
        config,
        sel,
    ))
}

/// `gemm_f16` at `[m, n, k]` (CUDA; column-major, alpha 1, beta 0, random halves): the
/// routine once, then its tensor-core kernel timed (on the operands as they are, as the
/// routine launches it where no padding is needed) at the selected configuration, the result checked against the CPU (one rounding to half
/// on the f32 sums), against cuBLAS `GemmEx` on halves with f32 compute (tensor cores).
pub(super) fn bench_f16(
    lib: &Library,
    kernel: &WisdomKernel,
    [m, n, k]: [usize; 3],
    opts: &Opts,
) -> Result<Row> {
    let d = lib.device().as_ref();
    let mut rng = Rng::new((m + n + k) as u64);
    let halves = |v: Vec<f32>| -> Vec<u16> { v.into_iter().map(f32_to_f16_bits).collect() };
    let (a, b) = (
        halves(random(&mut rng, m * k)),
        halves(random(&mut rng, k * n)),
    );
    let (da, db) = (
        DeviceBuffer::from_slice(d, &a)?,
        DeviceBuffer::from_slice(d, &b)?,
    );
    let dc = DeviceBuffer::<u16>::new(d, m * n)?;
    lib.gemm_f16([m, n, k], 1.0, &da, &db, 0.0, &dc)?;
    // The kernel reads A, B and C as they are (column-major): the routine adds nothing at
    // sizes its pads divide.
    dc.fill(0x7e00)?; // NaN: the timed launch must write every element
    let (ms, config, sel) = match (padded([m, n, k], defs::GEMM_F16_PAD), &opts.config) {
        (Some(p), None) => {
            let call = || lib.gemm_f16([m, n, k], 1.0, &da, &db, 0.0, &dc);
            time_routine(lib, kernel, p, opts, call)?
        }
        _ => {
            let scratch = scratch(d, [m, n], false)?;
            let args = args([&dc, &da, &db], [m, n, k], &scratch);
            time(kernel, &[m as i64, n as i64, k as i64], &args, opts)?
        }
    };
    let values = |v: &[u16]| -> Vec<f32> { v.iter().map(|&h| f16_bits_to_f32(h)).collect() };
    let got = values(&dc.to_vec()?);
    // Half an ulp of half (2^-11 of the value) from C's rounding, plus the f32 sums' error.
    let verified = verified([m, n, k], &values(&a), &values(&b), &got, |want, scale| {
        want.abs() * 2f64.powi(-11) + 1e-5 * scale + 1e-6
    });
    let bound = cublas_gflops(d.info(), [m, n, k], opts.runs, true);
    let kind = "cuBLAS GemmEx f16 (f32 compute, tensor cores)";
    Ok(row(
        "gemm_f16",
        [m, n, k],
        verified,
        ms,
        (bound, kind),
        config,
        sel,
    ))
}
