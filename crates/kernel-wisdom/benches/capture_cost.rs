//! What a captured launch costs the application, and what the background writer achieves, on
//! 1 GiB of float buffers (by default 2 x 512 MiB: a kernel reads `in` and writes `out`).
//!
//! `cargo bench -p kernel-wisdom --bench capture_cost [-- --mib N --dir D]`
//!
//! For smooth data (sin) and for random floats, in one run each:
//! - bare: launch + synchronise (uncaptured), and the device-to-host copies a capture makes
//!   (every buffer read twice, into fresh host allocations, as the capture does);
//! - captured: the time the application thread waits at the captured launch, and its ratio to
//!   bare copies + launch (target <= 1.2);
//! - background: time from the end of the captured launch until `flush_captures` returns
//!   (compression, checksums, write, fsync, rename) as raw bytes per second, the writer's CPU
//!   time and the projection to idle cores, and the file size against the raw size.

use kernel_wisdom::{
    arg, flush_captures, open_default_device, BackendError, DeviceBuffer, Error, KernelBuilder,
    Source, WisdomKernel,
};
use kernel_wisdom::{set_capture_settings, CaptureSettings};
use std::path::PathBuf;
use std::time::Instant;

const SOURCE: &str = r#"
__kernel void scale(__global float* restrict out, __global const float* restrict in, const int n) {
    const int i = (int)get_global_id(0);
    if (i < n) { out[i] = 2.0f * in[i] + 1.0f; }
}
"#;

fn arg_value(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// CPU seconds used by this process so far (user + system, from /proc/self/stat).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn data(n: usize, random: bool) -> Vec<f32> {
    if random {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 40) as f32 / (1u64 << 24) as f32
            })
            .collect()
    } else {
        (0..n).map(|i| (i as f64 * 0.001).sin() as f32).collect()
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let mib: usize = arg_value(&args, "--mib")
        .and_then(|v| v.parse().ok())
        .unwrap_or(512);
    let base = arg_value(&args, "--dir")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let dir = base.join(format!("kw-capture-cost-{}", std::process::id()));
    let n = mib * (1 << 20) / 4;

    // An OpenCL kernel: the first OpenCL device unless KW_DEVICE names one (on a machine
    // with a CUDA GPU the default device is the GPU's CUDA device).
    let opened = if std::env::var_os(kernel_wisdom::DEVICE_ENV).is_some() {
        open_default_device()
    } else {
        match kernel_wisdom::list_devices().map(|l| {
            l.into_iter()
                .find(|d| d.info.backend == kw_core::device::BackendKind::Opencl)
        }) {
            Ok(Some(d)) => {
                kernel_wisdom::open_device(&kernel_wisdom::DeviceSelector::Index(d.index))
            }
            Ok(None) => {
                eprintln!("SKIPPED: no OpenCL device");
                return Ok(());
            }
            Err(e) => Err(e),
        }
    };
    let device = match opened {
        Ok(d) => d,
        Err(Error::Backend(e @ BackendError::Unavailable { .. })) => {
            eprintln!("SKIPPED: no OpenCL platform ({e})");
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    let mut b = KernelBuilder::new("scale", Source::text("scale.cl", SOURCE));
    let bx = b.tune("block_size_x", [64, 128, 256], 256);
    b.problem_size([arg("n")])
        .block_size(bx.clone(), 1, 1)
        .grid_divisors(bx, 1, 1)
        .output::<f32>("out")
        .input::<f32>("in")
        .scalar::<i32>("n");
    let kernel = WisdomKernel::new(b.build_for(device.as_ref())?, device.clone())?;
    println!(
        "capture_cost: 2 x {mib} MiB f32 buffers on {}; dir {}",
        device.info().summary(),
        dir.display()
    );

    for random in [false, true] {
        let kind = if random { "random" } else { "smooth" };
        let input = data(n, random);
        let din = DeviceBuffer::from_slice(device.as_ref(), &input)?;
        drop(input);
        let dout = DeviceBuffer::<f32>::new(device.as_ref(), n)?;
        dout.fill(0.0)?;
        let launch_args = [dout.arg(), din.arg(), (n as i32).into()];

        set_capture_settings(None);
        kernel.launch(&launch_args)?; // compile, warm up
        device.synchronize()?;
        let t = Instant::now();
        kernel.launch(&launch_args)?;
        device.synchronize()?;
        let launch = t.elapsed().as_secs_f64();

        // The copies a capture makes: each buffer before and after, into fresh allocations.
        let t = Instant::now();
        for _ in 0..2 {
            for mem in [din.memory(), dout.memory()] {
                let mut host = vec![0u8; mem.len_bytes()];
                mem.read(0, &mut host)?;
                std::hint::black_box(&host);
            }
        }
        let copies = t.elapsed().as_secs_f64();

        dout.fill(0.0)?;
        device.synchronize()?;
        let mut settings = CaptureSettings::new(["scale"]);
        settings.dir = dir.clone();
        set_capture_settings(Some(settings));
        let t = Instant::now();
        kernel.launch(&launch_args)?;
        let wait = t.elapsed().as_secs_f64();
        let cpu_app = cpu_seconds();
        let t = Instant::now();
        let written = flush_captures();
        let background = t.elapsed().as_secs_f64();
        let cpu_writer = cpu_app
            .zip(cpu_seconds())
            .map(|(a, b)| b - a)
            .unwrap_or(f64::NAN);
        let path = match written.into_iter().next() {
            Some(Ok(p)) => p,
            Some(Err(e)) => return Err(e.into()),
            None => return Err("nothing was captured".into()),
        };
        let cap = kw_capture::Capture::open(&path)?;
        let raw = cap.raw_len();
        let file = cap.file_len();
        drop(cap);
        std::fs::remove_file(&path)?;

        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        println!("{kind}:");
        println!(
            "  bare launch + sync {launch:.3} s; bare copies (2 x each buffer, {:.2} GiB) {copies:.3} s = {:.2} GB/s",
            4.0 * mib as f64 / 1024.0,
            4.0 * (mib << 20) as f64 / copies / 1e9
        );
        println!(
            "  captured launch: the application waited {wait:.3} s = {:.2} x (copies + launch = {:.3} s); {:.2} x the copies alone",
            wait / (copies + launch),
            copies + launch,
            wait / copies
        );
        println!(
            "  background write: {background:.3} s after the launch for {raw} raw bytes = {:.0} MB/s; writer CPU {cpu_writer:.2} s = {:.0} MB per CPU-second, {:.0} MB/s projected on {cores} idle cores (load average {})",
            raw as f64 / background / 1e6,
            raw as f64 / cpu_writer / 1e6,
            raw as f64 / cpu_writer / 1e6 * cores as f64,
            std::fs::read_to_string("/proc/loadavg")
                .unwrap_or_default()
                .split_whitespace()
                .next()
                .unwrap_or("?")
        );
        println!(
            "  file {file} B = {:.1}% of raw {raw} B (in.before, out.before, out.after)",
            100.0 * file as f64 / raw as f64
        );
    }
    set_capture_settings(None);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
