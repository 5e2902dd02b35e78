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

use kernel_wisdom::{
    list_devices, lit, open_device, BackendKind, DeviceBuffer, DeviceSelector, KernelBuilder,
    Source, WisdomKernel,
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

    let source = include_str!("../../../kernels/convolution/convolution.cu");
    let mut b = KernelBuilder::new("convolution_kernel", Source::text("convolution.cu", source));
    let bx = b.tune("block_size_x", [16, 32, 48, 64, 96, 128], 16);
    let by = b.tune("block_size_y", [1, 2, 4, 8, 16], 16);
    let tx = b.tune("tile_size_x", [1, 2, 3, 4], 1);
    let ty = b.tune("tile_size_y", [1, 2, 3, 4], 1);
    b.tune("use_shmem", [0, 1], 1);
    b.tune("read_only", [0, 1], 0);
    b.tune("use_padding", [0, 1], 0);
    b.restriction_text("block_size_x * block_size_y <= 1024")
        .restriction_text("use_padding == 0 or use_shmem == 1")
        .restriction_text(
            "use_shmem == 0 or (block_size_x * tile_size_x + 14 + use_padding) * \
             (block_size_y * tile_size_y + 14) <= 12288",
        )
        .define("image_width", lit(w as i64))
        .define("image_height", lit(h as i64))
        .tuning_key("convolution_cmem")
        .problem_size([lit(w as i64), lit(h as i64)])
        .block_size(bx.clone(), by.clone(), 1)
        .grid_divisors(bx * tx, by * ty, 1)
        .output::<f32>("output_image")
        .buffer_len("output_image", lit((w * h) as i64))
        .input::<f32>("input_image")
        .buffer_len("input_image", lit(((w + F - 1) * (h + F - 1)) as i64))
        .constant_symbol::<f32>("d_filter", (F * F) as u64);
    let kernel = WisdomKernel::new(b.build()?, device.clone())?;

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
