//! The demo kernels shipped in `kernels/`: `vector_add`, `stencil2d` (OpenCL and CUDA) and
//! `scaled_add` (CUDA, templated), small tunable kernels that the examples, tests, benchmarks
//! and `kw tune --bundled` use, with their CPU references. [`opencl`] holds the OpenCL
//! definitions (`.cl` sources), [`cuda`] the CUDA ones (`.cu`): `vector_add` and `stencil2d`
//! have the same tuning parameters, arguments and geometry in both. [`capture`] launches one
//! on generated inputs and writes its capture. The tuned routines to call from an
//! application are [`crate::library`].

mod capture;
pub mod cuda;
pub mod opencl;

pub use capture::{capture, widen_stencil, BUNDLED_SPECS};

/// CPU reference of `vector_add`.
pub fn vector_add_reference(a: &[f32], b: &[f32]) -> Vec<f32> {
    a.iter().zip(b).map(|(x, y)| x + y).collect()
}

/// CPU reference of `stencil2d`.
pub fn stencil2d_reference(input: &[f32], width: usize, height: usize) -> Vec<f32> {
    let mut out = input.to_vec();
    for y in 1..height.saturating_sub(1) {
        for x in 1..width.saturating_sub(1) {
            let i = y * width + x;
            out[i] = 0.5 * input[i]
                + 0.125 * (input[i - 1] + input[i + 1] + input[i - width] + input[i + width]);
        }
    }
    out
}

/// CPU reference of `scaled_add`.
pub fn scaled_add_reference(alpha: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    x.iter().zip(y).map(|(a, b)| alpha * a + b).collect()
}
