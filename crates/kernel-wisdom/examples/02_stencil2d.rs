//! The bundled 5-point stencil: launches the default configuration on the default device,
//! checks it against the CPU reference, then compares the local-memory variant.
//!
//! `cargo run --release -p kernel-wisdom --example 02_stencil2d`

use kernel_wisdom::LaunchOptions;
use kernel_wisdom::{
    demo_kernels, open_default_device, BackendError, BackendKind, DeviceBuffer, Error, WisdomKernel,
};

fn main() -> Result<(), Error> {
    let device = match open_default_device() {
        Ok(d) => d,
        Err(Error::Backend(e @ BackendError::Unavailable { .. })) => {
            eprintln!("SKIPPED: no GPU platform ({e})");
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    println!("device: {}", device.info().summary());
    // The same kernel exists in OpenCL C and CUDA; take the one of the device's backend.
    let def = match device.info().backend {
        BackendKind::Cuda => demo_kernels::cuda::stencil2d()?,
        BackendKind::Opencl => demo_kernels::opencl::stencil2d()?,
    };
    let kernel = WisdomKernel::new(def, device.clone())?;

    let (w, h) = (1000usize, 700usize);
    let input: Vec<f32> = (0..w * h)
        .map(|i| ((i * 7919) % 1013) as f32 / 1013.0 - 0.5)
        .collect();
    let want = demo_kernels::stencil2d_reference(&input, w, h);
    let din = DeviceBuffer::from_slice(device.as_ref(), &input)?;
    let dout = DeviceBuffer::<f32>::new(device.as_ref(), w * h)?;
    let args = [dout.arg(), din.arg(), (w as i32).into(), (h as i32).into()];

    for use_local in [0, 1] {
        let mut config = kernel.default_config().clone();
        config.set("use_local", use_local);
        dout.fill(f32::NAN)?;
        let ms = kernel
            .launch_with(&args, LaunchOptions::new().config(&config).timed())
            .map(|l| l.device_ms.unwrap_or_default())?;
        let got = dout.to_vec()?;
        let max_err = got
            .iter()
            .zip(&want)
            .map(|(g, r)| (g - r).abs())
            .fold(0.0f32, f32::max);
        println!("{{{config}}}: {ms:.3} ms, max |error| = {max_err:e}");
    }
    kernel.launch(&args)?;
    println!(
        "problem size {:?} runs {{{}}}",
        kernel.problem_size(&args)?,
        kernel
            .config_for(&[w as i64, h as i64, 1])
            .map(|c| c.key())
            .unwrap_or_default()
    );
    Ok(())
}
