//! cuBLAS SGEMM timed on a device: the bound `kw bench` sets the library's GEMM against, at the
//! same shape on the same GPU in the same run (CUDA events, median of the runs). Only with the
//! `cublas` feature (which `kw` enables; the runtime library never links cuBLAS), and
//! libcublas is loaded at run time: without it there is no bound, and the error says why.

use cudarc::cublas::{sys::cublasOperation_t, CudaBlas, Gemm, GemmConfig};
use cudarc::driver::{sys::CUevent_flags, CudaContext, DriverError};

/// The CUDA ordinal of the device named `name` (the first of that name).
fn ordinal(name: &str) -> Result<usize, String> {
    let count = CudaContext::device_count().map_err(|e| e.to_string())?;
    for i in 0..usize::try_from(count).unwrap_or(0) {
        let ctx = CudaContext::new(i).map_err(|e| e.to_string())?;
        if ctx.name().map_err(|e| e.to_string())? == name {
            return Ok(i);
        }
    }
    Err(format!("no CUDA device named {name}"))
}

/// GFLOP/s of cuBLAS SGEMM (column-major, no transposes, alpha 1, beta 0) at `[m, n, k]` on
/// the CUDA device named `device_name`: the median of `runs` event-timed calls after one
/// warm-up; or why it could not be measured.
pub fn sgemm_gflops(device_name: &str, [m, n, k]: [usize; 3], runs: usize) -> Result<f64, String> {
    let err = |e: DriverError| e.to_string();
    let ctx = CudaContext::new(ordinal(device_name)?).map_err(err)?;
    // Its own stream in its own (primary) context, current on this thread: the caller's
    // context (kw's device) may be the current one, and the null stream is the current
    // context's.
    ctx.bind_to_thread().map_err(err)?;
    let stream = ctx.new_stream().map_err(err)?;
    // cudarc panics when libcublas cannot be loaded: that is "no bound", not a crash.
    let blas = std::panic::catch_unwind(|| CudaBlas::new(stream.clone()))
        .map_err(|_| "libcublas could not be loaded (is it on LD_LIBRARY_PATH?)".to_string())?
        .map_err(|e| format!("cuBLAS: {e:?}"))?;
    let int = |v: usize| i32::try_from(v).map_err(|_| format!("{v} is too large for cuBLAS"));
    let cfg = GemmConfig {
        transa: cublasOperation_t::CUBLAS_OP_N,
        transb: cublasOperation_t::CUBLAS_OP_N,
        m: int(m)?,
        n: int(n)?,
        k: int(k)?,
        alpha: 1.0f32,
        lda: int(m)?,
        ldb: int(k)?,
        beta: 0.0f32,
        ldc: int(m)?,
    };
    let a = stream.alloc_zeros::<f32>(m * k).map_err(err)?;
    let b = stream.alloc_zeros::<f32>(k * n).map_err(err)?;
    let mut c = stream.alloc_zeros::<f32>(m * n).map_err(err)?;
    // Events with timing (cudarc's default disables it, and then cuEventElapsedTime fails).
    let timed = Some(CUevent_flags::CU_EVENT_DEFAULT);
    let mut times = Vec::new();
    for i in 0..=runs.max(1) {
        let start = stream.record_event(timed).map_err(err)?;
        // SAFETY: a, b and c hold m*k, k*n and m*n floats, as cfg's sizes and leading
        // dimensions (column-major, no transposes) require.
        unsafe { blas.gemm(cfg, &a, &b, &mut c) }.map_err(|e| format!("cuBLAS: {e:?}"))?;
        let end = stream.record_event(timed).map_err(err)?;
        end.synchronize().map_err(err)?;
        if i > 0 {
            times.push(f64::from(start.elapsed_ms(&end).map_err(err)?));
        }
    }
    times.sort_by(f64::total_cmp);
    let ms = times[times.len() / 2];
    Ok(2.0 * m as f64 * n as f64 * k as f64 / (ms * 1e-3) / 1e9)
}
