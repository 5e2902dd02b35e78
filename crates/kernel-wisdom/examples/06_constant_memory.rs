//! A kernel that reads constant memory: the 2D convolution of
//! `kernels/convolution/convolution.cu`, its 15x15 filter a CUDA `__constant__` array set from
//! the host (`constant_symbol` + `set_symbol`). Checks 4,096 output pixels against the CPU and
//! prints the configuration the launch used and which selection step chose it.
//!
//! ```text
//! cargo run --release -p kernel-wisdom --example 06_constant_memory [-- WIDTH HEIGHT]
//! # capture it, tune the capture (the filter travels in it), run again with the wisdom:
//! KW_CAPTURE=convolution_cmem KW_CAPTURE_DIR=captures target/release/examples/06_constant_memory
//! kw tune captures/convolution_cmem-*.kwcap --budget 100 --wisdom-dir my-wisdom
//! KW_WISDOM_PATH=my-wisdom target/release/examples/06_constant_memory
//! ```
//!
//! CUDA only (OpenCL passes such data as a `__constant` pointer argument): on a machine
//! without a CUDA device it says so and exits successfully.

use kernel_wisdom::library::defs;
use kernel_wisdom::{
    list_devices, open_device, BackendKind, DeviceBuffer, DeviceSelector, WisdomKernel,
};
use kw_core::rng::Rng;

const F: usize = 15;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut sizes = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let w = sizes.next().transpose()?.unwrap_or(4096);
    let h = sizes.next().transpose()?.unwrap_or(w);
    let Some(d) = list_devices()?
        .into_iter()
        .find(|d| d.info.backend == BackendKind::Cuda)
    else {
        println!("SKIPPED: constant-memory symbols need a CUDA device; none found");
        return Ok(());
    };
    let device = open_device(&DeviceSelector::Index(d.index))?;
    println!("device: {}", device.info().summary());

    let def = defs::convolution_cuda(w, h, F, &[16, 32, 48, 64, 96, 128], &[16, 1, 2, 4, 8]);
    let kernel = WisdomKernel::new(def.build()?, device.clone())?;

    let mut rng = Rng::new(1);
    let input: Vec<f32> = (0..(w + F - 1) * (h + F - 1))
        .map(|_| rng.f64() as f32 - 0.5)
        .collect();
    let filter: Vec<f32> = (0..F * F).map(|i| 1.0 / (1.0 + i as f32)).collect();
    kernel.set_symbol("d_filter", &filter)?;
    let din = DeviceBuffer::from_slice(device.as_ref(), &input)?;
    let dout = DeviceBuffer::from_slice(device.as_ref(), &vec![f32::NAN; w * h])?;
    kernel.launch(&[dout.arg(), din.arg()])?;
    let out = dout.to_vec()?;

    for _ in 0..4096 {
        let (x, y) = (rng.below(w as u64) as usize, rng.below(h as u64) as usize);
        let mut want = 0f32;
        for i in 0..F {
            for j in 0..F {
                want += input[(y + i) * (w + F - 1) + x + j] * filter[i * F + j];
            }
        }
        let got = out[y * w + x];
        if (got - want).abs() > 1e-4 * want.abs().max(1.0) {
            return Err(format!("pixel ({x}, {y}) is {got}, the CPU computes {want}").into());
        }
    }
    let choice = kernel.choice(&[w as i64, h as i64]);
    println!(
        "{w}x{h}: 4096 pixels match the CPU; configuration {{{}}} (selection step: {})",
        choice.config, choice.step
    );
    kernel_wisdom::flush_captures();
    Ok(())
}
