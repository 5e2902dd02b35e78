//! An existing cudarc application, instrumented with kernel-wisdom.
//!
//! ```text
//! cargo run --release -p kernel-wisdom --example 05_existing_cudarc_app
//! KW_CAPTURE=vector_add cargo run --release -p kernel-wisdom --example 05_existing_cudarc_app
//! ```
//!
//! The application owns its CUDA context (cudarc `CudaContext`, the device's primary
//! context), its stream, its `CudaSlice`s and its own kernels (`scale`, `square`, compiled
//! with NVRTC through cudarc). It used to launch its own `vector_add` between them; the
//! instrumentation replaced that with the tunable kernel-wisdom `vector_add` on the same
//! stream and the same slices. **The instrumentation changed 5 lines** (marked `// kw`):
//! one `use`, attaching to the context (1 line), building the kernel (1), and the launch
//! replacing the application's `launch_builder` call (2). No flush is needed: captures
//! (`KW_CAPTURE`) are written at exit.
//!
//! `KW_EXAMPLE_N` sets the vector length. Prints the configuration the selection chose and
//! the number of elements that differ from the same computation with the application's own
//! `vector_add` launched through cudarc (bitwise); exits non-zero if any differs.

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::compile_ptx;
use kernel_wisdom::LaunchOptions;
use kernel_wisdom::{demo_kernels, interop::cuda, WisdomKernel}; // kw
use std::error::Error;
use std::sync::Arc;

/// The application's own kernels (its `vector_add` is what kernel-wisdom now replaces; it is
/// kept here to check the results bitwise).
const APP_KERNELS: &str = r#"
extern "C" __global__ void scale(float* x, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= s;
}
extern "C" __global__ void square(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * x[i];
}
extern "C" __global__ void app_vector_add(float* c, const float* a, const float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"#;

/// What one run did.
#[derive(Debug)]
pub struct Report {
    /// The vector length.
    pub n: usize,
    /// The configuration key the selection chose for the launch.
    pub config: String,
    /// The selection step that decided.
    pub step: String,
    /// Elements that differ from the application's own pipeline (bitwise).
    pub wrong: usize,
}

/// Runs the application once.
pub fn run() -> Result<Report, Box<dyn Error>> {
    let n: usize = match std::env::var("KW_EXAMPLE_N") {
        Ok(v) => v.parse()?,
        Err(_) => 1 << 20,
    };
    let n_i32 = i32::try_from(n)?;
    if !kernel_wisdom::CudaBackend::new().is_available() {
        return Err("no CUDA driver or device (cudarc would panic)".into());
    }
    // The application's own CUDA setup.
    let ctx = CudaContext::new(0)?;
    let stream = ctx.new_stream()?;
    let module = ctx.load_module(compile_ptx(APP_KERNELS)?)?;
    let scale = module.load_function("scale")?;
    let square = module.load_function("square")?;
    let app_add = module.load_function("app_vector_add")?;
    let ha: Vec<f32> = (0..n).map(|i| (i % 97) as f32 * 0.25).collect();
    let hb: Vec<f32> = (0..n).map(|i| (i % 13) as f32 - 6.0).collect();
    let mut a = stream.clone_htod(&ha)?;
    let b = stream.clone_htod(&hb)?;
    let mut c = stream.alloc_zeros::<f32>(n)?;
    let cfg = LaunchConfig::for_num_elems(n as u32);
    let kw_device = Arc::new(cuda::CudaDevice::from_context(ctx.clone())?); // kw
    let add = WisdomKernel::new(demo_kernels::cuda::vector_add()?, kw_device)?; // kw

    // a *= 2 (the application's kernel)
    // SAFETY (every launch): the arguments match the kernel's parameters.
    unsafe {
        stream
            .launch_builder(&scale)
            .arg(&mut a)
            .arg(&2.0f32)
            .arg(&n_i32)
            .launch(cfg)?
    };
    // c = a + b (was the application's own launch, now tunable)
    let args = [
        cuda::slice_arg(&c, &stream),
        cuda::slice_arg(&a, &stream),
        cuda::slice_arg(&b, &stream),
        n_i32.into(),
    ]; // kw
    add.launch_with(&args, LaunchOptions::new().on(cuda::stream_queue(&stream)))?; // kw
                                                                                   // c = c^2 (the application's kernel)
    unsafe {
        stream
            .launch_builder(&square)
            .arg(&mut c)
            .arg(&n_i32)
            .launch(cfg)?
    };
    let out = stream.clone_dtoh(&c)?;

    // Not part of the instrumentation: the application's original pipeline, for comparison.
    let mut c2 = stream.alloc_zeros::<f32>(n)?;
    unsafe {
        stream
            .launch_builder(&app_add)
            .arg(&mut c2)
            .arg(&a)
            .arg(&b)
            .arg(&n_i32)
            .launch(cfg)?;
        stream
            .launch_builder(&square)
            .arg(&mut c2)
            .arg(&n_i32)
            .launch(cfg)?;
    }
    let expected = stream.clone_dtoh(&c2)?;
    let wrong = out
        .iter()
        .zip(&expected)
        .filter(|(x, y)| x.to_bits() != y.to_bits())
        .count();
    let ps = [n as i64, 1, 1];
    Ok(Report {
        n,
        config: add.config_for(&ps).map(|c| c.key()).unwrap_or_default(),
        step: format!("{:?}", add.choice(&ps).step),
        wrong,
    })
}

#[allow(dead_code)] // the tests include this file as a module and call `run`
fn main() -> Result<(), Box<dyn Error>> {
    let r = run()?;
    println!("n={} config={} step={}", r.n, r.config, r.step);
    println!("elements differing from the cudarc pipeline: {}", r.wrong);
    if r.wrong > 0 {
        return Err(format!("{} elements differ", r.wrong).into());
    }
    Ok(())
}
