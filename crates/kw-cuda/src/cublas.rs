//! cuBLAS GEMMs timed on a device: the bounds `kw bench` sets the library's GEMMs against, at
//! the same shape on the same GPU in the same run (CUDA events, median of the runs): SGEMM
//! for `gemm`, and `cublasGemmEx` on half matrices with f32 compute for `gemm_f16` (as the
//! library's kernel sums in f32; cuBLAS uses the tensor cores, the library's kernel does not).
//! Only with the `cublas` feature (which `kw` enables; the runtime library never links
//! cuBLAS), and libcublas is loaded at run time: without it there is no bound, and the error
//! says why.

use cudarc::cublas::sys::{cublasComputeType_t, cublasOperation_t, cudaDataType};
use cudarc::cublas::{result::gemm_ex, sys::cublasGemmAlgo_t, CudaBlas, Gemm, GemmConfig};
use cudarc::driver::{sys::CUevent_flags, CudaContext, CudaStream, DriverError};
use cudarc::driver::{DevicePtr, DevicePtrMut};
use std::ffi::c_void;
use std::sync::Arc;

fn driver(e: DriverError) -> String {
    e.to_string()
}

/// The CUDA ordinal of the device named `name` (the first of that name).
fn ordinal(name: &str) -> Result<usize, String> {
    let count = CudaContext::device_count().map_err(driver)?;
    for i in 0..usize::try_from(count).unwrap_or(0) {
        let ctx = CudaContext::new(i).map_err(driver)?;
        if ctx.name().map_err(driver)? == name {
            return Ok(i);
        }
    }
    Err(format!("no CUDA device named {name}"))
}

/// cuBLAS on its own stream of the device named `device_name`.
fn open(device_name: &str) -> Result<(Arc<CudaStream>, CudaBlas), String> {
    let ctx = CudaContext::new(ordinal(device_name)?).map_err(driver)?;
    // Its own stream in its own (primary) context, current on this thread: the caller's
    // context (kw's device) may be the current one, and the null stream is the current
    // context's.
    ctx.bind_to_thread().map_err(driver)?;
    let stream = ctx.new_stream().map_err(driver)?;
    // cudarc panics when libcublas cannot be loaded: that is "no bound", not a crash.
    let blas = std::panic::catch_unwind(|| CudaBlas::new(stream.clone()))
        .map_err(|_| "libcublas could not be loaded (is it on LD_LIBRARY_PATH?)".to_string())?
        .map_err(|e| format!("cuBLAS: {e:?}"))?;
    Ok((stream, blas))
}

fn int(v: usize) -> Result<i32, String> {
    i32::try_from(v).map_err(|_| format!("{v} is too large for cuBLAS"))
}

/// GFLOP/s of `call` (a GEMM of `[m, n, k]`): the median of `runs` event-timed calls after one
/// warm-up.
fn gflops(
    stream: &CudaStream,
    [m, n, k]: [usize; 3],
    runs: usize,
    mut call: impl FnMut() -> Result<(), String>,
) -> Result<f64, String> {
    // Events with timing (cudarc's default disables it, and then cuEventElapsedTime fails).
    let timed = Some(CUevent_flags::CU_EVENT_DEFAULT);
    let mut times = Vec::new();
    for i in 0..=runs.max(1) {
        let start = stream.record_event(timed).map_err(driver)?;
        call()?;
        let end = stream.record_event(timed).map_err(driver)?;
        end.synchronize().map_err(driver)?;
        if i > 0 {
            times.push(f64::from(start.elapsed_ms(&end).map_err(driver)?));
        }
    }
    times.sort_by(f64::total_cmp);
    let ms = times[times.len() / 2];
    Ok(2.0 * m as f64 * n as f64 * k as f64 / (ms * 1e-3) / 1e9)
}

/// GFLOP/s of cuBLAS SGEMM (column-major, no transposes, alpha 1, beta 0) at `[m, n, k]` on
/// the CUDA device named `device_name`: the median of `runs` event-timed calls after one
/// warm-up; or why it could not be measured.
pub fn sgemm_gflops(device_name: &str, [m, n, k]: [usize; 3], runs: usize) -> Result<f64, String> {
    let (stream, blas) = open(device_name)?;
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
    let a = stream.alloc_zeros::<f32>(m * k).map_err(driver)?;
    let b = stream.alloc_zeros::<f32>(k * n).map_err(driver)?;
    let mut c = stream.alloc_zeros::<f32>(m * n).map_err(driver)?;
    gflops(&stream, [m, n, k], runs, || {
        // SAFETY: a, b and c hold m*k, k*n and m*n floats, as cfg's sizes and leading
        // dimensions (column-major, no transposes) require.
        unsafe { blas.gemm(cfg, &a, &b, &mut c) }.map_err(|e| format!("cuBLAS: {e:?}"))
    })
}

/// GFLOP/s of cuBLAS `cublasGemmEx` on half matrices (A, B and C `CUDA_R_16F`, compute
/// `CUBLAS_COMPUTE_32F`, the default algorithm: tensor cores), column-major, no transposes,
/// alpha 1, beta 0, at `[m, n, k]` on the CUDA device named `device_name`: as
/// [`sgemm_gflops`].
pub fn hgemm_gflops(device_name: &str, [m, n, k]: [usize; 3], runs: usize) -> Result<f64, String> {
    let (stream, blas) = open(device_name)?;
    let (mi, ni, ki) = (int(m)?, int(n)?, int(k)?);
    // Half bit patterns: zeros, as SGEMM's bound is timed on zeros.
    let a = stream.alloc_zeros::<u16>(m * k).map_err(driver)?;
    let b = stream.alloc_zeros::<u16>(k * n).map_err(driver)?;
    let mut c = stream.alloc_zeros::<u16>(m * n).map_err(driver)?;
    let (alpha, beta) = (1.0f32, 0.0f32);
    let (pa, _ra) = a.device_ptr(&stream);
    let (pb, _rb) = b.device_ptr(&stream);
    let (pc, _rc) = c.device_ptr_mut(&stream);
    let half = cudaDataType::CUDA_R_16F;
    gflops(&stream, [m, n, k], runs, || {
        // SAFETY: the pointers are live device allocations of m*k, k*n and m*n halves on
        // this stream's context, as the sizes and leading dimensions (column-major, no
        // transposes) require; alpha and beta are host f32 values, as CUBLAS_COMPUTE_32F
        // reads them (the handle's default host pointer mode).
        unsafe {
            gemm_ex(
                *blas.handle(),
                cublasOperation_t::CUBLAS_OP_N,
                cublasOperation_t::CUBLAS_OP_N,
                mi,
                ni,
                ki,
                (&alpha as *const f32).cast::<c_void>(),
                pa as *const c_void,
                half,
                mi,
                pb as *const c_void,
                half,
                ki,
                (&beta as *const f32).cast::<c_void>(),
                pc as *mut c_void,
                half,
                mi,
                cublasComputeType_t::CUBLAS_COMPUTE_32F,
                cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .map_err(|e| format!("cuBLAS: {e:?}"))
    })
}
