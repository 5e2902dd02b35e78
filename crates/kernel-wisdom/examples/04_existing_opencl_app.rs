//! An existing OpenCL application, instrumented with kernel-wisdom.
//!
//! ```text
//! cargo run --release -p kernel-wisdom --example 04_existing_opencl_app
//! KW_CAPTURE=vector_add cargo run --release -p kernel-wisdom --example 04_existing_opencl_app
//! ```
//!
//! The application owns its OpenCL context, its in-order command queue, its buffers and its
//! own kernels (`scale`, `square`). It used to enqueue its own `vector_add` kernel between
//! them; the instrumentation replaced that with the tunable kernel-wisdom `vector_add` on the
//! same queue and the same buffers, waiting for the application's event. **The
//! instrumentation changed 7 lines** (marked `// kw`): one `use`, attaching to the
//! context and queue (2 lines), building the kernel (1), and the launch replacing the
//! application's `enqueue_nd_range_kernel` (3). No flush is needed: captures (`KW_CAPTURE`)
//! are written at exit.
//!
//! `KW_EXAMPLE_N` sets the vector length and `KW_EXAMPLE_PLATFORM` a platform-name substring
//! (default: the first platform with a device). Prints the configuration the selection chose
//! and the number of wrong elements against a CPU reference; exits non-zero if any is wrong.

use kernel_wisdom::LaunchOptions;
use kernel_wisdom::{demo_kernels, interop::opencl, WisdomKernel}; // kw
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL};
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use opencl3::platform::get_platforms;
use opencl3::program::Program;
use opencl3::types::{cl_float, CL_BLOCKING};
use std::error::Error;
use std::ptr;
use std::sync::Arc;

/// The application's own kernels.
const APP_KERNELS: &str = r#"
__kernel void scale(__global float* x, float s, int n) {
    int i = get_global_id(0);
    if (i < n) x[i] *= s;
}
__kernel void square(__global float* x, int n) {
    int i = get_global_id(0);
    if (i < n) x[i] = x[i] * x[i];
}
"#;

/// What one run did.
#[derive(Debug)]
pub struct Report {
    /// The vector length.
    pub n: usize,
    /// The configuration key the selection chose for the launch.
    pub config: String,
    /// The selection step that decided (`exact device, exact size`, ..., `default`).
    pub step: String,
    /// Elements that differ from the CPU reference.
    pub wrong: usize,
    /// The error of a deliberately too-short buffer (the application keeps running).
    pub too_short: String,
}

/// The application's device: the first of the chosen platform.
fn app_device() -> Result<Device, Box<dyn Error>> {
    let wanted = std::env::var("KW_EXAMPLE_PLATFORM").unwrap_or_default();
    for p in get_platforms()? {
        if !p.name()?.contains(&wanted) {
            continue;
        }
        if let Some(&id) = p.get_devices(CL_DEVICE_TYPE_ALL)?.first() {
            return Ok(Device::new(id));
        }
    }
    Err(format!("no OpenCL platform with a device matches {wanted:?}").into())
}

/// The inputs.
pub fn inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
    let a = (0..n).map(|i| (i % 97) as f32 * 0.25).collect();
    let b = (0..n).map(|i| (i % 13) as f32 - 6.0).collect();
    (a, b)
}

/// The whole computation on the CPU: `c = (2a + b)^2`.
pub fn reference(a: &[f32], b: &[f32]) -> Vec<f32> {
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            let c = 2.0 * x + y;
            c * c
        })
        .collect()
}

/// Runs the application once.
pub fn run() -> Result<Report, Box<dyn Error>> {
    let n: usize = match std::env::var("KW_EXAMPLE_N") {
        Ok(v) => v.parse()?,
        Err(_) => 1 << 16,
    };
    // The application's own OpenCL setup.
    let device = app_device()?;
    let context = Context::from_device(&device)?;
    let queue =
        CommandQueue::create_default_with_properties(&context, CL_QUEUE_PROFILING_ENABLE, 0)?;
    let program = Program::create_and_build_from_source(&context, APP_KERNELS, "")
        .map_err(|log| format!("the application's kernels: {log}"))?;
    let scale = Kernel::create(&program, "scale")?;
    let square = Kernel::create(&program, "square")?;
    // SAFETY (all `create` calls): no host pointer is passed. `a` is padded, as applications
    // often do: the kernel uses its first `n` elements, the capture takes it whole.
    let mut a = unsafe {
        Buffer::<cl_float>::create(&context, CL_MEM_READ_WRITE, n + 64, ptr::null_mut())?
    };
    let mut b =
        unsafe { Buffer::<cl_float>::create(&context, CL_MEM_READ_WRITE, n, ptr::null_mut())? };
    let c = unsafe { Buffer::<cl_float>::create(&context, CL_MEM_READ_WRITE, n, ptr::null_mut())? };
    let short =
        unsafe { Buffer::<cl_float>::create(&context, CL_MEM_READ_WRITE, n / 2, ptr::null_mut())? };
    let (ha, hb) = inputs(n);
    // SAFETY: blocking writes from live host slices of `n` elements.
    unsafe {
        queue.enqueue_write_buffer(&mut a, CL_BLOCKING, 0, &ha, &[])?;
        queue.enqueue_write_buffer(&mut b, CL_BLOCKING, 0, &hb, &[])?;
    }
    let kw_device = Arc::new(opencl::ClDevice::attach(&context, &queue)?); // kw
    let add = WisdomKernel::new(demo_kernels::opencl::vector_add()?, kw_device)?; // kw

    // a *= 2 (the application's kernel)
    let n_i32 = n as i32;
    // SAFETY: the arguments match the kernel's parameters.
    let scaled = unsafe {
        ExecuteKernel::new(&scale)
            .set_arg(&a)
            .set_arg(&2.0f32)
            .set_arg(&n_i32)
            .set_global_work_size(n)
            .enqueue_nd_range(&queue)?
    };
    // c = a + b (was the application's own `vector_add`, now tunable), after `scaled`
    let after = opencl::EventList::new(&[&scaled]); // kw
    let args = [
        opencl::buffer_arg(&c),
        opencl::buffer_arg(&a),
        opencl::buffer_arg(&b),
        n_i32.into(),
    ]; // kw
    add.launch_with(
        &args,
        LaunchOptions::new().on(opencl::queue_after(&queue, &after)),
    )?; // kw
        // c = c^2 (the application's kernel)
        // SAFETY: the arguments match the kernel's parameters.
    unsafe {
        ExecuteKernel::new(&square)
            .set_arg(&c)
            .set_arg(&n_i32)
            .set_global_work_size(n)
            .enqueue_nd_range(&queue)?;
    }
    let mut out = vec![0.0f32; n];
    // SAFETY: a blocking read into a live host slice of `n` elements.
    unsafe { queue.enqueue_read_buffer(&c, CL_BLOCKING, 0, &mut out, &[])? };
    let expected = reference(&ha, &hb);
    let wrong = out.iter().zip(&expected).filter(|(x, y)| x != y).count();

    // Not part of the instrumentation: a buffer shorter than the kernel uses is an error
    // that launches nothing; the application goes on.
    let bad = [
        opencl::buffer_arg(&short),
        opencl::buffer_arg(&a),
        opencl::buffer_arg(&b),
        n_i32.into(),
    ];
    let too_short = match add.launch_with(&bad, LaunchOptions::new().on(opencl::queue(&queue))) {
        Ok(_) => String::from("(accepted!)"),
        Err(e) => e.to_string(),
    };
    let ps = [n as i64, 1, 1];
    let choice = add.choice(&ps);
    Ok(Report {
        n,
        config: add.config_for(&ps).map(|c| c.key()).unwrap_or_default(),
        step: format!("{:?}", choice.step),
        wrong,
        too_short,
    })
}

#[allow(dead_code)] // the tests include this file as a module and call `run`
fn main() -> Result<(), Box<dyn Error>> {
    let r = run()?;
    println!("n={} config={} step={}", r.n, r.config, r.step);
    println!("too-short buffer: {}", r.too_short);
    println!("wrong elements: {}", r.wrong);
    if r.wrong > 0 {
        return Err(format!("{} wrong elements", r.wrong).into());
    }
    Ok(())
}
