//! Shared helpers of the GPU tests: the device (or a skip), random data, poison.

#![allow(dead_code)]

use kw_core::backend::{BackendError, CompileRequest};
use kw_core::kernel_def::KernelSource;
use kw_cuda::{CudaBackend, CudaDevice};
use std::sync::OnceLock;

/// The environment variable choosing the CUDA device index for the tests (default 0).
pub const DEVICE_ENV: &str = "KW_CUDA_DEVICE";

/// The test device, opened once; `None` (after printing `SKIPPED: no CUDA driver`) when
/// there is no driver.
pub fn device(test: &str) -> Option<&'static CudaDevice> {
    static DEV: OnceLock<Result<CudaDevice, String>> = OnceLock::new();
    let dev = DEV.get_or_init(|| {
        let index = std::env::var(DEVICE_ENV)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        match CudaBackend::new().open_cuda(index) {
            Ok(d) => Ok(d),
            Err(BackendError::Unavailable { reason, .. }) => Err(reason),
            Err(e) => panic!("opening CUDA device {index}: {e}"),
        }
    });
    match dev {
        Ok(d) => Some(d),
        Err(reason) => {
            println!("SKIPPED: no CUDA driver ({test}: {reason})");
            None
        }
    }
}

/// A small deterministic generator (xorshift64*), seeded per test and per run.
pub struct Rng(u64);

impl Rng {
    /// Seeded from `seed` and the clock, so every run draws fresh data.
    pub fn new(seed: u64) -> Rng {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        Rng((seed ^ t).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [-1, 1).
    pub fn f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    /// `n` values uniform in [-1, 1).
    pub fn vec_f32(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f32()).collect()
    }
}

/// The value outputs are filled with before each run: a NaN no kernel computes.
pub const POISON: f32 = f32::NAN;

/// Asserts `got` matches `want` within a relative tolerance, and that every element was
/// written (no poison left).
pub fn assert_close(what: &str, got: &[f32], want: &[f32], rel: f32) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let mut num = 0f64;
    let mut den = 0f64;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(
            !g.is_nan(),
            "{what}: element {i} was not written (poison left)"
        );
        num += f64::from(g - w).powi(2);
        den += f64::from(w).powi(2);
    }
    let err = (num / den.max(f64::MIN_POSITIVE)).sqrt();
    assert!(
        err <= f64::from(rel),
        "{what}: relative error {err:.3e} > {rel:e}"
    );
}

/// A source without headers.
pub fn source(file: &str, text: &str) -> KernelSource {
    KernelSource {
        file_name: file.into(),
        text: text.into(),
        headers: vec![],
    }
}

/// A request with defines and template arguments, no flags or include directories.
pub fn request<'a>(
    source: &'a KernelSource,
    kernel: &'a str,
    defines: &'a [(String, String)],
    template_args: &'a [String],
) -> CompileRequest<'a> {
    CompileRequest {
        source,
        kernel_name: kernel,
        defines,
        flags: &[],
        include_dirs: &[],
        template_args,
    }
}
