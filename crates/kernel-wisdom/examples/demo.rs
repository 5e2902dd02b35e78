//! The end-to-end demo's application (run by `tools/demo.sh`): launches the bundled kernels
//! at a few problem sizes and prints, for each, the configuration the wisdom selected, the
//! selection step, and its time against the default configuration.
//!
//! With `KW_CAPTURE=*` set, its launches are captured for `kw tune`; with `KW_WISDOM_PATH`
//! pointing at tuned wisdom, it selects tuned configurations.
//!
//! `cargo run --release -p kernel-wisdom --example demo`

use kernel_wisdom::LaunchOptions;
use kernel_wisdom::{
    demo_kernels, list_devices, open_device, BackendKind, DeviceBuffer, DeviceSelector, Error,
    KernelArg, WisdomKernel,
};
use kw_core::rng::Rng;
use std::sync::Arc;

/// CUDA if there is a CUDA device, else an OpenCL GPU, else PoCL (unless `KW_DEVICE` says).
fn pick_device() -> Result<Arc<dyn kernel_wisdom::Device>, Error> {
    if std::env::var_os(kernel_wisdom::DEVICE_ENV).is_some() {
        return kernel_wisdom::open_default_device();
    }
    let devices = list_devices()?;
    let pick = devices
        .iter()
        .find(|d| d.info.backend == BackendKind::Cuda)
        .or_else(|| {
            devices
                .iter()
                .find(|d| !d.info.vendor.contains("Portable Computing"))
        })
        .or(devices.first())
        .map(|d| d.index)
        .unwrap_or(0);
    open_device(&DeviceSelector::Index(pick))
}

fn median_ms(
    kernel: &WisdomKernel,
    config: &kw_core::config::Config,
    args: &[KernelArg<'_>],
) -> Result<f64, Error> {
    kernel
        .launch_with(args, LaunchOptions::new().config(config).timed())
        .map(|l| l.device_ms.unwrap_or_default())?; // warm-up
    let mut t: Vec<f64> = (0..9)
        .map(|_| {
            kernel
                .launch_with(args, LaunchOptions::new().config(config).timed())
                .map(|l| l.device_ms.unwrap_or_default())
        })
        .collect::<Result<_, _>>()?;
    t.sort_by(f64::total_cmp);
    Ok(t[t.len() / 2])
}

fn report(
    kernel: &WisdomKernel,
    size: &[i64],
    label: &str,
    args: &[KernelArg<'_>],
) -> Result<(), Error> {
    // The application's own launch: selects, compiles once, launches (and is captured when
    // KW_CAPTURE selects this kernel).
    kernel.launch(args)?;
    kernel.device().synchronize()?;
    let choice = kernel.choice(size);
    println!(
        "{:<11} {:<11} {}",
        kernel.def().tuning_key,
        label,
        choice.step
    );
    println!("            config {{{}}}", choice.config);
    if choice.config == *kernel.default_config() {
        let t = median_ms(kernel, &choice.config, args)?;
        println!("            {t:.4} ms (this is the default configuration)");
    } else {
        // Interleave the two measurements so that machine load hits both alike.
        let (mut chosen, mut default) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            chosen.push(median_ms(kernel, &choice.config, args)?);
            default.push(median_ms(kernel, kernel.default_config(), args)?);
        }
        chosen.sort_by(f64::total_cmp);
        default.sort_by(f64::total_cmp);
        let (c, d) = (chosen[1], default[1]);
        println!(
            "            {c:.4} ms vs default {d:.4} ms: {}",
            kw_core::diag::ratio_words(d, c)
        );
    }
    Ok(())
}

fn main() -> Result<(), Error> {
    let device = pick_device()?;
    println!("device: {}", device.info().summary());
    let cuda = device.info().backend == BackendKind::Cuda;
    let (vadd, stencil) = if cuda {
        (
            demo_kernels::cuda::vector_add()?,
            demo_kernels::cuda::stencil2d()?,
        )
    } else {
        (
            demo_kernels::opencl::vector_add()?,
            demo_kernels::opencl::stencil2d()?,
        )
    };
    let vadd = WisdomKernel::new(vadd, device.clone())?;
    let stencil = WisdomKernel::new(stencil, device.clone())?;
    if let Some(f) = vadd.wisdom().file() {
        println!("wisdom: {}", f.display());
    }
    let scale: usize = if cuda { 16 } else { 1 };
    let mut rng = Rng::new(42);
    for n in [(1usize << 20) * scale, (1usize << 22) * scale] {
        let a: Vec<f32> = (0..n).map(|_| rng.f64() as f32).collect();
        let b: Vec<f32> = (0..n).map(|_| rng.f64() as f32 + 1.0).collect();
        let da = DeviceBuffer::from_slice(device.as_ref(), &a)?;
        let db = DeviceBuffer::from_slice(device.as_ref(), &b)?;
        let dc = DeviceBuffer::<f32>::new(device.as_ref(), n)?;
        let args = [dc.arg(), da.arg(), db.arg(), (n as i32).into()];
        report(&vadd, &[n as i64], &format!("n={n}"), &args)?;
        let c = dc.to_vec()?;
        assert!(
            c.iter()
                .zip(a.iter().zip(&b))
                .all(|(c, (a, b))| *c == a + b),
            "vector_add result"
        );
    }
    let side = if cuda { 4 } else { 1 };
    for (w, h) in [(1024 * side, 1024 * side), (2048 * side, 256 * side)] {
        let input: Vec<f32> = (0..w * h).map(|_| rng.f64() as f32).collect();
        let din = DeviceBuffer::from_slice(device.as_ref(), &input)?;
        let dout = DeviceBuffer::<f32>::new(device.as_ref(), w * h)?;
        let args = [dout.arg(), din.arg(), (w as i32).into(), (h as i32).into()];
        report(&stencil, &[w as i64, h as i64], &format!("{w}x{h}"), &args)?;
        let out = dout.to_vec()?;
        let reference = demo_kernels::stencil2d_reference(&input, w, h);
        let worst = out
            .iter()
            .zip(&reference)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(worst < 1e-5, "stencil2d result off by {worst}");
    }
    // Captures are compressed and written on a background thread: wait for them.
    for written in kernel_wisdom::flush_captures().into_iter().flatten() {
        println!("captured: {}", written.display());
    }
    Ok(())
}
