//! Declares the tunable vector add, launches it on the default device (`KW_DEVICE`), checks
//! the result, and times every configuration of its tuning space.
//!
//! `cargo run --release -p kernel-wisdom --example 01_vector_add`

use kernel_wisdom::LaunchOptions;
use kernel_wisdom::{
    arg, open_default_device, BackendError, BackendKind, DeviceAttr, DeviceBuffer, Error,
    KernelBuilder, Source, WisdomKernel,
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
    // The declaration: source, tuning parameters, restrictions, geometry, arguments.
    // The same kernel exists in OpenCL C and CUDA; take the one of the device's backend.
    let path = match device.info().backend {
        BackendKind::Cuda => concat!(env!("CARGO_MANIFEST_DIR"), "/../../kernels/vector_add.cu"),
        BackendKind::Opencl => concat!(env!("CARGO_MANIFEST_DIR"), "/../../kernels/vector_add.cl"),
    };
    let mut b = KernelBuilder::new("vector_add", Source::file(path));
    let bx = b.tune("block_size_x", [32, 64, 128, 256, 512], 256);
    let ept = b.tune("elems_per_thread", [1, 2, 4, 8], 1);
    b.tune("strided", [0, 1], 1);
    b.tune("unroll", [0, 1], 0);
    b.restriction(
        bx.clone()
            .le(kernel_wisdom::device(DeviceAttr::MaxThreadsPerBlock)),
    )
    .problem_size([arg("n")])
    .block_size(bx.clone(), 1, 1)
    .grid_divisors(bx * ept, 1, 1)
    .output::<f32>("c")
    .input::<f32>("a")
    .input::<f32>("b")
    .scalar::<i32>("n");

    println!("device: {}", device.info().summary());
    let kernel = WisdomKernel::new(b.build_for(device.as_ref())?, device.clone())?;

    let n = 1_000_003usize;
    let a: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.25).collect();
    let bv: Vec<f32> = (0..n).map(|i| 1.0 - (i % 7) as f32).collect();
    let da = DeviceBuffer::from_slice(device.as_ref(), &a)?;
    let db = DeviceBuffer::from_slice(device.as_ref(), &bv)?;
    let dc = DeviceBuffer::<f32>::new(device.as_ref(), n)?;
    let args = [dc.arg(), da.arg(), db.arg(), (n as i32).into()];

    kernel.launch(&args)?;
    let c = dc.to_vec()?;
    let wrong = (0..n).filter(|&i| c[i] != a[i] + bv[i]).count();
    println!(
        "default configuration {{{}}}: {} wrong elements of {n}",
        kernel.default_config(),
        wrong
    );

    let space = kernel.space();
    println!("timing all {} configurations:", space.len());
    let mut best: Option<(f64, String)> = None;
    for point in space.iter() {
        let config = space.config(&point);
        let mut times: Vec<f64> = (0..5)
            .map(|_| {
                kernel
                    .launch_with(&args, LaunchOptions::new().config(&config).timed())
                    .map(|l| l.device_ms.unwrap_or_default())
            })
            .collect::<Result<_, _>>()?;
        times.sort_by(f64::total_cmp);
        let ms = times[2];
        if best.as_ref().is_none_or(|(b, _)| ms < *b) {
            best = Some((ms, config.key()));
        }
    }
    if let Some((ms, key)) = best {
        println!("fastest: {{{key}}} at {ms:.3} ms (median of 5)");
    }
    Ok(())
}
