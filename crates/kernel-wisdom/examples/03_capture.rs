//! Captures kernel launches for offline tuning.
//!
//! ```text
//! KW_CAPTURE='*' KW_CAPTURE_DIR=/tmp/kw-captures \
//!     cargo run --release -p kernel-wisdom --example 03_capture
//! kw capture ls /tmp/kw-captures
//! ```
//!
//! Launches the bundled vector add three times (with different inputs: `KW_CAPTURE_SKIP=1`
//! captures the second) and the 2D stencil once, checks every result on the host, then calls
//! [`flush_captures`] (optional: pending captures are also written at exit) and prints the
//! files written. Exits with an error if a result is wrong (capture must never change
//! results). The end-to-end capture tests run this file's [`run`] in a child process.

use kernel_wisdom::{
    demo_kernels, flush_captures, open_default_device, BackendError, DeviceBuffer, Error,
    WisdomKernel,
};

/// Elements of the vector add.
pub const N: usize = 100_003;
/// Launches of the vector add.
pub const VECTOR_LAUNCHES: usize = 3;
/// Stencil grid size.
pub const WIDTH: usize = 96;
/// Stencil grid size.
pub const HEIGHT: usize = 40;

/// Input `a` of vector add launch `k`: smooth data, different per launch.
pub fn input_a(k: usize) -> Vec<f32> {
    (0..N)
        .map(|i| (i as f32 * 0.001).sin() + k as f32)
        .collect()
}

/// Input `b` of every vector add launch.
pub fn input_b() -> Vec<f32> {
    (0..N).map(|i| (i as f32 * 0.0007).cos()).collect()
}

/// The stencil's input grid.
pub fn stencil_input() -> Vec<f32> {
    (0..WIDTH * HEIGHT)
        .map(|i| ((i % WIDTH) as f32 * 0.1).sin() * ((i / WIDTH) as f32 * 0.2).cos())
        .collect()
}

/// The stencil on the host (`0.5 * centre + 0.125 * neighbours`, border copied).
fn stencil_host(input: &[f32]) -> Vec<f32> {
    let mut out = input.to_vec();
    for y in 1..HEIGHT - 1 {
        for x in 1..WIDTH - 1 {
            let at = |x: usize, y: usize| input[y * WIDTH + x];
            out[y * WIDTH + x] = 0.5 * at(x, y)
                + 0.125 * (at(x - 1, y) + at(x + 1, y) + at(x, y - 1) + at(x, y + 1));
        }
    }
    out
}

/// Runs the launches and checks them; returns the number of wrong elements (`None` when there
/// is no OpenCL platform). Prints `captured: PATH` for every capture written.
pub fn run() -> Result<Option<usize>, Error> {
    let device = match open_default_device() {
        Ok(d) => d,
        Err(Error::Backend(e @ BackendError::Unavailable { .. })) => {
            eprintln!("SKIPPED: no OpenCL platform ({e})");
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let mut wrong = 0;

    let add = WisdomKernel::new(demo_kernels::opencl::vector_add()?, device.clone())?;
    let bv = input_b();
    let db = DeviceBuffer::from_slice(device.as_ref(), &bv)?;
    let dc = DeviceBuffer::<f32>::new(device.as_ref(), N)?;
    for k in 0..VECTOR_LAUNCHES {
        let a = input_a(k);
        let da = DeviceBuffer::from_slice(device.as_ref(), &a)?;
        add.launch(&[dc.arg(), da.arg(), db.arg(), (N as i32).into()])?;
        let c = dc.to_vec()?;
        wrong += (0..N).filter(|&i| c[i] != a[i] + bv[i]).count();
    }

    let stencil = WisdomKernel::new(demo_kernels::opencl::stencil2d()?, device.clone())?;
    let input = stencil_input();
    let din = DeviceBuffer::from_slice(device.as_ref(), &input)?;
    let dout = DeviceBuffer::<f32>::new(device.as_ref(), WIDTH * HEIGHT)?;
    stencil.launch(&[
        dout.arg(),
        din.arg(),
        (WIDTH as i32).into(),
        (HEIGHT as i32).into(),
    ])?;
    let got = dout.to_vec()?;
    let want = stencil_host(&input);
    wrong += got
        .iter()
        .zip(&want)
        .filter(|(g, w)| (*g - *w).abs() > 1e-5 * w.abs().max(1.0))
        .count();

    // Before exit: wait for the background writer (statics are never dropped).
    for r in flush_captures() {
        match r {
            Ok(path) => println!("captured: {}", path.display()),
            Err(e) => println!("capture failed: {e}"),
        }
    }
    println!("wrong elements: {wrong}");
    Ok(Some(wrong))
}

#[allow(dead_code)] // the tests include this file for `run` only
fn main() -> Result<(), Box<dyn std::error::Error>> {
    match run()? {
        Some(0) | None => Ok(()),
        Some(wrong) => Err(format!("{wrong} wrong elements").into()),
    }
}
