//! `kw bench [KERNEL...]`: each library kernel (`kernel_wisdom::library`) at its benchmark
//! sizes on one device, with the configuration the wisdom selects there: verified against
//! the CPU reference, timed with device events (median of the runs), and set against a bound
//! measured in the same run: the device-to-device copy bandwidth (the kernels are
//! memory-bound; effective bytes: every input element read once and every output element
//! written once), or for `gemm` cuBLAS SGEMM at the same shape (`kw_cuda::cublas`; the
//! gemm's time is its kernel's plus the transpose of B the routine does first, or at a size
//! the routine pads the whole routine's: `bench/gemm.rs`). hotspot and
//! nbody: see `bench/sim.rs` (hotspot against the copy bandwidth too; nbody against the
//! single-precision peak measured in the same run).

use anyhow::{bail, Context, Result};
use clap::Args;
use kernel_wisdom::library::{defs, reference, Library};
use kernel_wisdom::LaunchOptions;
use kernel_wisdom::{open_device, Config, DeviceBuffer, DeviceSelector, KernelArg, WisdomKernel};
use kw_core::backend::Device;
use kw_core::rng::Rng;
use std::time::Instant;

mod convolution;
mod gemm;
mod sim;

/// Arguments of `kw bench`.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  kw bench\n  kw bench transpose --small --json\n  kw bench gemm --size 2048x2048x2048 --config MWG=128,NWG=64\n  kw bench hotspot --size 4096x4096x100"
)]
pub struct BenchArgs {
    /// Library kernels to run (default: all): transpose, reduce_sum, stencil3d, gemm,
    /// gemm_f16 (CUDA only), convolution, hotspot, nbody.
    kernels: Vec<String>,
    /// Sizes small enough for a CPU OpenCL device (PoCL) in CI.
    #[arg(long)]
    small: bool,
    /// One JSON object per kernel and size.
    #[arg(long)]
    json: bool,
    /// The device: an index or a name substring (default: KW_DEVICE, else device 0).
    #[arg(long)]
    device: Option<String>,
    /// Timed runs per kernel and size (the median is reported; at least 1).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// Sizes to run instead of the benchmark sizes (repeatable; one kernel only): `ROWSxCOLS`
    /// (transpose), `N` (reduce_sum, nbody), `NXxNYxNZ` (stencil3d), `MxNxK` (gemm, gemm_f16),
    /// `WIDTHxHEIGHTxFWxFH` (convolution: output and filter sizes), `NXxNYxITERATIONS` (hotspot).
    #[arg(long = "size", value_name = "AxBxC")]
    sizes: Vec<String>,
    /// Time this configuration (`name=value,...`, the rest the default's) instead of the one
    /// the wisdom selects: for comparing selection rules at a size.
    #[arg(long, value_name = "NAME=VALUE,...")]
    config: Option<String>,
}

/// How each kernel is timed.
pub(super) struct Opts {
    pub(super) runs: usize,
    /// `--config`: a configuration to time instead of the selected one.
    pub(super) config: Option<String>,
    /// `--small`: sizes for a CPU device.
    pub(super) small: bool,
}

/// One kernel at one size.
pub(super) struct Row {
    pub(super) kernel: &'static str,
    pub(super) size: Vec<usize>,
    pub(super) verified: bool,
    pub(super) ms: f64,
    /// GB/s, or GFLOP/s for gemm and nbody.
    pub(super) throughput: f64,
    pub(super) unit: &'static str,
    /// The bound in the same unit, or why there is none.
    pub(super) bound: Result<f64, String>,
    pub(super) bound_kind: &'static str,
    /// GFLOP/s besides a GB/s throughput (convolution).
    pub(super) gflops: Option<f64>,
    pub(super) config: Config,
    pub(super) step: String,
}

fn sizes(kernel: &str, small: bool) -> Vec<Vec<usize>> {
    match (kernel, small) {
        ("transpose", false) => vec![
            vec![8192, 8192],
            vec![4096, 12288],
            vec![1000, 30000],
            vec![2048, 2048],
        ],
        ("transpose", true) => vec![vec![256, 200], vec![37, 523]],
        ("reduce_sum", false) => vec![
            vec![1 << 20],
            vec![1 << 24],
            vec![1 << 26],
            vec![100_000_007],
        ],
        ("reduce_sum", true) => vec![vec![100_003]],
        ("stencil3d", false) => vec![
            vec![256, 256, 256],
            vec![512, 512, 512],
            vec![1000, 300, 200],
            vec![128, 128, 1024],
        ],
        ("stencil3d", true) => vec![vec![64, 48, 40]],
        ("gemm", false) => vec![
            vec![4096, 4096, 4096],
            vec![1024, 1024, 1024],
            vec![8192, 8192, 256],
            vec![256, 256, 8192],
        ],
        ("gemm", true) => vec![vec![128, 128, 64]],
        // CUDA only: nothing at the CPU sizes.
        ("gemm_f16", false) => vec![
            vec![4096, 4096, 4096],
            vec![1024, 1024, 1024],
            vec![8192, 8192, 256],
            vec![256, 256, 8192],
        ],
        ("gemm_f16", true) => Vec::new(),
        ("convolution", false) => vec![
            vec![4096, 4096, 15, 15],
            vec![8192, 8192, 5, 5],
            vec![2048, 2048, 3, 3],
            vec![3000, 1000, 7, 7],
        ],
        ("convolution", true) => vec![vec![67, 45, 5, 5], vec![40, 31, 3, 7]],
        _ => sim::sizes(kernel, small),
    }
}

pub(super) fn random(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n).map(|_| (rng.f64() * 2.0 - 1.0) as f32).collect()
}

pub(super) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Device-to-device copy bandwidth in GB/s (read + write), host-timed blocking copies of
/// `bytes`: the median of 10 after a warm-up.
fn copy_bandwidth(device: &dyn Device, bytes: usize) -> Result<f64> {
    let a = device.alloc(bytes)?;
    let b = device.alloc(bytes)?;
    a.fill_zero()?;
    b.copy_from(a.as_ref())?;
    let mut times = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        b.copy_from(a.as_ref())?;
        times.push(t.elapsed().as_secs_f64());
    }
    Ok(2.0 * bytes as f64 / median(times) / 1e9)
}

/// Times the configuration `kernel` selects at problem size `ps` (after the caller's first
/// launch through `WisdomKernel::launch`, as an application's, which `KW_CAPTURE` captures).
pub(super) fn time(
    kernel: &WisdomKernel,
    ps: &[i64],
    args: &[KernelArg<'_>],
    opts: &Opts,
) -> Result<(f64, Config, String)> {
    let (config, step) = match &opts.config {
        Some(text) => (
            super::capture::parse_config(kernel.def(), text)?,
            "given (--config)".to_string(),
        ),
        None => {
            let choice = kernel.choice(ps);
            (choice.config, choice.step.to_string())
        }
    };
    let mut times = Vec::with_capacity(opts.runs);
    for _ in 0..opts.runs.max(1) {
        times.push(
            kernel
                .launch_with(args, LaunchOptions::new().config(&config).timed())
                .map(|l| l.device_ms.unwrap_or_default())?,
        );
    }
    Ok((median(times), config, step))
}

fn bench_one(
    lib: &Library,
    name: &'static str,
    size: &[usize],
    opts: &Opts,
    bound_gbs: f64,
) -> Result<Row> {
    let device = lib.device();
    let kernel = lib.kernel(name)?;
    let kernel = kernel.as_ref();
    let mut rng = Rng::new(size.iter().sum::<usize>() as u64);
    let d = device.as_ref();
    let (verified, ms, bytes, config, step) = match name {
        "gemm" => return gemm::bench(lib, kernel, [size[0], size[1], size[2]], opts),
        "gemm_f16" => return gemm::bench_f16(lib, kernel, [size[0], size[1], size[2]], opts),
        "convolution" => return convolution::bench(lib, size, opts, bound_gbs),
        "hotspot" => {
            let shape = [size[0], size[1], size[2]];
            return sim::hotspot(lib, shape, opts, bound_gbs);
        }
        "nbody" => return sim::nbody(lib, size[0], opts),
        "transpose" => {
            let (rows, cols) = (size[0], size[1]);
            let input = random(&mut rng, rows * cols);
            let din = DeviceBuffer::from_slice(d, &input)?;
            let dout = DeviceBuffer::<f32>::new(d, rows * cols)?;
            let args = [
                dout.arg(),
                din.arg(),
                (rows as i32).into(),
                (cols as i32).into(),
            ];
            kernel.launch(&args)?;
            let (ms, config, step) = time(kernel, &[cols as i64, rows as i64], &args, opts)?;
            let ok = dout.to_vec()? == reference::transpose(&input, rows, cols);
            (ok, ms, 2 * rows * cols * 4, config, step)
        }
        "reduce_sum" => {
            let n = size[0];
            let input: Vec<f32> = (0..n).map(|i| ((i * 7) % 19) as f32 * 0.25).collect();
            let din = DeviceBuffer::from_slice(d, &input)?;
            let out = DeviceBuffer::<f32>::new(d, 1)?;
            let args = [out.arg(), din.arg(), (n as i32).into()];
            out.fill(0.0)?;
            kernel.launch(&args)?;
            let got = f64::from(out.to_vec()?[0]);
            let (ms, config, step) = time(kernel, &[n as i64], &args, opts)?;
            let want = reference::sum(&input);
            (
                (got - want).abs() <= 1e-4 * want.abs(),
                ms,
                n * 4,
                config,
                step,
            )
        }
        "stencil3d" => {
            let shape = [size[0], size[1], size[2]];
            let cells = shape.iter().product();
            let input = random(&mut rng, cells);
            let din = DeviceBuffer::from_slice(d, &input)?;
            let dout = DeviceBuffer::<f32>::new(d, cells)?;
            let [x, y, z] = shape.map(|v| v as i32);
            let args = [
                dout.arg(),
                din.arg(),
                x.into(),
                y.into(),
                z.into(),
                0.4f32.into(),
                0.1f32.into(),
            ];
            let ps = shape.map(|v| v as i64);
            kernel.launch(&args)?;
            let (ms, config, step) = time(kernel, &ps, &args, opts)?;
            let want = reference::stencil3d(&input, shape, 0.4, 0.1);
            let got = dout.to_vec()?;
            let ok = got.iter().zip(&want).all(|(g, w)| (g - w).abs() <= 1e-5);
            (ok, ms, 2 * cells * 4, config, step)
        }
        other => bail!("no library kernel `{other}`"),
    };
    Ok(Row {
        kernel: name,
        size: size.to_vec(),
        verified,
        ms,
        throughput: bytes as f64 / (ms * 1e-3) / 1e9,
        unit: "GB/s",
        bound: Ok(bound_gbs),
        bound_kind: "device-to-device copy",
        gflops: None,
        config,
        step,
    })
}

/// The axes of a library kernel's size (`--size`).
fn axes(kernel: &str) -> usize {
    match kernel {
        "reduce_sum" | "nbody" => 1,
        "transpose" => 2,
        "convolution" => 4,
        _ => 3,
    }
}

/// The bytes of device memory `kernel` at `size` needs for its buffers (each also lives on
/// the host, once or twice), in `u128`, saturating: a count beyond it is `u128::MAX`.
fn footprint(kernel: &str, size: &[usize]) -> u128 {
    let v = |i: usize| size.get(i).copied().unwrap_or(1) as u128;
    let mul = |xs: &[u128]| xs.iter().fold(1u128, |a, &x| a.saturating_mul(x));
    let add = |xs: &[u128]| xs.iter().fold(0u128, |a, &x| a.saturating_add(x));
    let f32s = match kernel {
        "transpose" => mul(&[2, v(0), v(1)]),
        "reduce_sum" => v(0),
        "stencil3d" => mul(&[2, v(0), v(1), v(2)]),
        // A, B, its transpose and C (padded copies and split-K scratch are smaller), and as
        // much again for cuBLAS's operands of the bound. Halves take 2 bytes: half a float.
        "gemm" => mul(&[
            2,
            add(&[
                mul(&[v(0), v(2)]),
                mul(&[2, v(2), v(1)]),
                mul(&[v(0), v(1)]),
            ]),
        ]),
        "gemm_f16" => add(&[
            mul(&[v(0), v(2)]),
            mul(&[2, v(2), v(1)]),
            mul(&[v(0), v(1)]),
        ]),
        // The padded input and the output.
        "convolution" => add(&[
            mul(&[add(&[v(0), v(2)]), add(&[v(1), v(3)])]),
            mul(&[v(0), v(1)]),
        ]),
        // Temperature in and out, power, the scratch grid (the third axis is iterations).
        "hotspot" => mul(&[4, v(0), v(1)]),
        // Positions and velocities in and out, four floats each.
        "nbody" => mul(&[16, v(0)]),
        _ => mul(&size.iter().map(|&x| x as u128).collect::<Vec<_>>()),
    };
    f32s.saturating_mul(4)
}

/// The largest single device buffer of `kernel` at `size`, in bytes (the same buffers as
/// [`footprint`]), to set against the device's largest allocation.
fn largest_buffer(kernel: &str, size: &[usize]) -> u128 {
    let v = |i: usize| size.get(i).copied().unwrap_or(1) as u128;
    let mul = |xs: &[u128]| xs.iter().fold(1u128, |a, &x| a.saturating_mul(x));
    let floats = match kernel {
        "transpose" => mul(&[v(0), v(1)]),
        "reduce_sum" => v(0),
        "stencil3d" => mul(&[v(0), v(1), v(2)]),
        "gemm" => mul(&[v(0), v(2)])
            .max(mul(&[v(2), v(1)]))
            .max(mul(&[v(0), v(1)])),
        // Halves: half a float each.
        "gemm_f16" => mul(&[v(0), v(2)])
            .max(mul(&[v(2), v(1)]))
            .max(mul(&[v(0), v(1)]))
            .div_ceil(2),
        "convolution" => mul(&[v(0).saturating_add(v(2)), v(1).saturating_add(v(3))]),
        "hotspot" => mul(&[v(0), v(1)]),
        "nbody" => mul(&[4, v(0)]),
        _ => mul(&size.iter().map(|&x| x as u128).collect::<Vec<_>>()),
    };
    floats.saturating_mul(4)
}

/// `bytes` for a message: `12.5 GiB`, `300.0 MiB`, `512 bytes`.
fn human_bytes(bytes: u128) -> String {
    const GIB: f64 = (1u64 << 30) as f64;
    const MIB: f64 = (1u64 << 20) as f64;
    let b = bytes as f64;
    if bytes == u128::MAX {
        "more than 2^128 bytes".to_string()
    } else if b >= GIB {
        format!("{:.1} GiB", b / GIB)
    } else if b >= MIB {
        format!("{:.1} MiB", b / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// The host memory available to a new allocation, where the system says (Linux:
/// `MemAvailable` of `/proc/meminfo`); `None` elsewhere.
fn host_memory_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// `--size` values, parsed for the one kernel they are given with; `None` without them.
/// A size whose buffers need more than the device's memory, or whose host data (about twice
/// that) this process cannot allocate, is refused here, before anything is allocated.
fn given_sizes(
    texts: &[String],
    kernels: &[&str],
    device_memory: u64,
    max_alloc: u64,
) -> Result<Option<Vec<Vec<usize>>>> {
    if texts.is_empty() {
        return Ok(None);
    }
    let [kernel] = kernels else {
        bail!("--size needs exactly one kernel (`kw bench gemm --size 2048x2048x2048`)");
    };
    let mut out = Vec::new();
    for text in texts {
        let size = text
            .split('x')
            .map(|v| v.trim().parse::<usize>().ok().filter(|&v| v > 0))
            .collect::<Option<Vec<_>>>()
            .filter(|s| s.len() == axes(kernel))
            .with_context(|| {
                format!(
                    "--size `{text}`: {kernel} takes {} positive number(s) joined by `x`",
                    axes(kernel)
                )
            })?;
        let bytes = footprint(kernel, &size);
        if device_memory > 0 && bytes > u128::from(device_memory) {
            bail!(
                "--size `{text}`: {kernel}'s buffers need {} of device memory, more than the \
                 device's {}",
                human_bytes(bytes),
                human_bytes(u128::from(device_memory))
            );
        }
        let largest = largest_buffer(kernel, &size);
        if max_alloc > 0 && largest > u128::from(max_alloc) {
            bail!(
                "--size `{text}`: {kernel}'s largest buffer needs {}, more than the device \
                 allocates at once ({}, CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
                human_bytes(largest),
                human_bytes(u128::from(max_alloc))
            );
        }
        // The host holds the inputs, a copy of each output and the CPU reference: about twice
        // the device's bytes. Refused here rather than aborting on a failed allocation.
        let host = bytes.saturating_mul(2);
        let available = host_memory_available();
        let reservable = usize::try_from(host)
            .ok()
            .is_some_and(|n| Vec::<u8>::new().try_reserve_exact(n).is_ok());
        let short = match available {
            Some(a) if host > u128::from(a) => Some(format!(
                "more than the {} available",
                human_bytes(u128::from(a))
            )),
            _ if !reservable => Some(
                "and an allocation of that size is refused (a memory \
                                      limit, such as ulimit -v?)"
                    .to_string(),
            ),
            _ => None,
        };
        if let Some(short) = short {
            bail!(
                "--size `{text}`: {kernel} needs about {} of host memory (its data, the results \
                 read back and the CPU reference), {short}",
                human_bytes(host)
            );
        }
        out.push(size);
    }
    Ok(Some(out))
}

/// Runs `kw bench`.
pub fn run(args: BenchArgs) -> Result<()> {
    if args.device.as_deref().is_some_and(|d| d.trim().is_empty()) {
        bail!(
            "--device is empty: give a device index or a name substring (`kw devices` lists them)"
        );
    }
    let selector = args
        .device
        .clone()
        .or_else(|| std::env::var(kernel_wisdom::DEVICE_ENV).ok())
        .unwrap_or_default();
    let device = open_device(&DeviceSelector::parse(&selector)).context("opening the device")?;
    let kernels: Vec<&'static str> = if args.kernels.is_empty() {
        defs::KERNELS.to_vec()
    } else {
        let mut out = Vec::new();
        for k in &args.kernels {
            match defs::KERNELS.iter().find(|&&d| d == k) {
                Some(&d) => out.push(d),
                None => bail!(
                    "no library kernel `{k}` (kernels: {})",
                    defs::KERNELS.join(", ")
                ),
            }
        }
        out
    };
    // The routines as an application calls them: the library's kernels, with its embedded
    // wisdom (`wisdom/kw_*.json`) after the wisdom search path.
    let info = device.info();
    let given = given_sizes(
        &args.sizes,
        &kernels,
        info.global_memory_bytes,
        info.max_alloc_bytes,
    )?;
    if args.config.is_some() && kernels.len() != 1 {
        bail!(
            "--config needs exactly one kernel (`kw bench transpose --config tile_dim=64`): its \
             parameters are that kernel's"
        );
    }
    let lib = Library::new(device.clone());
    // What can be refused is refused before the bound is measured: a kernel the backend does
    // not offer when named (gemm_f16 is CUDA-only), and a --config that does not parse.
    for name in &kernels {
        match lib.kernel(name) {
            Err(e @ kernel_wisdom::Error::Unsupported { .. }) if !args.kernels.is_empty() => {
                bail!("{e}")
            }
            Ok(kernel) => {
                if let Some(text) = &args.config {
                    if text.split(',').all(|p| p.trim().is_empty()) {
                        bail!("--config `{text}` gives no NAME=VALUE");
                    }
                    super::capture::parse_config(kernel.def(), text)
                        .with_context(|| format!("--config `{text}` for {name}"))?;
                }
            }
            Err(_) => {}
        }
    }
    let copy_bytes = if args.small { 16 << 20 } else { 1 << 30 };
    let bound = copy_bandwidth(device.as_ref(), copy_bytes).context("timing a device copy")?;
    if !args.json {
        println!("device: {}", device.info().summary());
        println!(
            "bound: device-to-device copy {bound:.1} GB/s (read + write, {} MiB, median of 10)",
            copy_bytes >> 20
        );
        println!(
            "{:<11} {:<18} {:>9} {:>10} {:>10} {:<8} % of the bound  configuration (selection step)",
            "kernel", "size", "verified", "ms", "throughput", "unit"
        );
    }
    let opts = Opts {
        runs: args.runs as usize,
        config: args.config.clone(),
        small: args.small,
    };
    // Each size that failed or did not verify, for the summary at the end.
    let mut problems: Vec<String> = Vec::new();
    let mut rows = 0usize;
    for name in kernels {
        // A kernel the backend does not offer (gemm_f16 is CUDA-only): an error when asked
        // for by name, skipped (and said) in the full list.
        if let Err(e @ kernel_wisdom::Error::Unsupported { .. }) = lib.kernel(name) {
            if !args.kernels.is_empty() {
                bail!("{e}");
            }
            if args.json {
                // Standard output holds one measured object per line; the skip is said aside.
                eprintln!("kw bench: {name} skipped: {e}");
            } else {
                println!("{name:<11} skipped: {e}");
            }
            continue;
        }
        let list = given.clone().unwrap_or_else(|| sizes(name, args.small));
        for size in list {
            rows += 1;
            let size_text = size
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join("x");
            let row = match bench_one(&lib, name, &size, &opts, bound) {
                Ok(row) => row,
                Err(e) => {
                    let text = crate::error_text(&e);
                    eprintln!("kw bench: {name} at {size_text}: {text}");
                    if args.json {
                        println!(
                            "{}",
                            serde_json::json!({
                                "kernel": name,
                                "size": size,
                                "verified": false,
                                "error": text,
                            })
                        );
                    }
                    problems.push(format!("{name} {size_text} failed"));
                    continue;
                }
            };
            if !row.verified {
                problems.push(format!("{name} {size_text} differs from the CPU reference"));
            }
            let pct = row.bound.as_ref().ok().map(|b| 100.0 * row.throughput / b);
            if args.json {
                println!(
                    "{}",
                    serde_json::json!({
                        "kernel": row.kernel,
                        "size": row.size,
                        "verified": row.verified,
                        "ms": row.ms,
                        "throughput": row.throughput,
                        "unit": row.unit,
                        "bound": row.bound.as_ref().ok(),
                        "bound_kind": row.bound_kind,
                        "no_bound_because": row.bound.as_ref().err(),
                        "percent_of_bound": pct,
                        "gflops": row.gflops,
                        "config": row.config.key(),
                        "selection_step": row.step,
                    })
                );
            } else {
                let mut pct_text = match (&row.bound, pct) {
                    (Ok(b), Some(p)) => format!("{p:>6.1}% of {} {b:.1}", row.bound_kind),
                    (Err(why), _) => format!("no {} bound: {why}", row.bound_kind),
                    _ => String::new(),
                };
                if let Some(g) = row.gflops {
                    pct_text.push_str(&format!(", {g:.1} GFLOP/s"));
                }
                println!(
                    "{:<11} {:<18} {:>9} {:>10.4} {:>10.1} {:<8} {pct_text}  {{{}}} ({})",
                    row.kernel,
                    size_text,
                    if row.verified { "yes" } else { "NO" },
                    row.ms,
                    row.throughput,
                    row.unit,
                    row.config,
                    row.step
                );
            }
        }
    }
    if !problems.is_empty() {
        bail!(
            "{} of {rows} benchmark(s) did not pass: {} (see above)",
            problems.len(),
            problems.join("; ")
        );
    }
    Ok(())
}
