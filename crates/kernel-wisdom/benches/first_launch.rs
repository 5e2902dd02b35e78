//! First-launch latency of a new problem size whose configuration is already compiled, with
//! and without a concurrent compile of another configuration of the same kernel, in one run.
//!
//! `cargo bench -p kernel-wisdom --bench first_launch [-- --rounds R --n N]`
//!
//! Each round: a fresh size is launched (and waited for) alone; then another thread starts
//! the first launch of a size that selects a configuration never compiled before (a real
//! OpenCL compile: its defines differ from every earlier one and the source from every
//! earlier run's, so no compiler cache helps), and as soon as that compile has begun, a fresh
//! size of the compiled configuration is launched and timed. Which of the two goes first alternates by round. Reported: medians,
//! their ratio (with / without; 1 means the launch did not wait for the compile), and the
//! median duration of the concurrent compile (what a launch that waits for it would pay).
//!
//! Then the first launch of a kernel in a new process, with a cold and with a warm on-disk
//! compile cache, in one run (`common/process_pairs.rs`): medians of each over `--pairs P`
//! (default 5) process pairs, their ratio, and the children's compile and cache-hit counts.

mod common;

#[path = "../tests/common/gated.rs"]
mod gated;
#[path = "common/process_pairs.rs"]
mod process_pairs;

use common::{arg_value, median};
use gated::GatedDevice;
use kernel_wisdom::{demo_kernels, Config, DeviceBuffer, Value, WisdomKernel};
use kw_core::backend::{BackendError, Device};
use kw_opencl::OpenClBackend;
use std::sync::Arc;
use std::time::Instant;

/// Sizes at or above this select the "salted" configurations (one per round).
const SLOW_BASE: usize = 1 << 20;

/// One launch of `n` elements, waited for; returns the host time of launch + finish.
fn timed_launch(kernel: &WisdomKernel, dev: &dyn Device, n: usize) -> Result<f64, String> {
    let a = DeviceBuffer::from_slice(dev, &vec![1.0f32; n]).map_err(|e| e.to_string())?;
    let b = DeviceBuffer::from_slice(dev, &vec![2.0f32; n]).map_err(|e| e.to_string())?;
    let c = DeviceBuffer::<f32>::new(dev, n).map_err(|e| e.to_string())?;
    let args = [c.arg(), a.arg(), b.arg(), (n as i32).into()];
    let t = Instant::now();
    kernel.launch(&args).map_err(|e| e.to_string())?;
    dev.synchronize().map_err(|e| e.to_string())?;
    let s = t.elapsed().as_secs_f64();
    let out = c.to_vec().map_err(|e| e.to_string())?;
    if out[n - 1] != 3.0 {
        return Err(format!("wrong result for n = {n}"));
    }
    Ok(s)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == process_pairs::CHILD_FLAG) {
        let device: Arc<dyn Device> = Arc::new(OpenClBackend.open_cl(0)?);
        let def = demo_kernels::opencl::vector_add_builder().build()?;
        return process_pairs::child(device, def, arg_value(&args, "--n", 4096));
    }
    let rounds = arg_value(&args, "--rounds", 15);
    let pairs = arg_value(&args, "--pairs", 5);
    let n0 = arg_value(&args, "--n", 4096);

    let inner: Arc<dyn Device> = match OpenClBackend.open_cl(0) {
        Ok(d) => Arc::new(d),
        Err(e @ BackendError::Unavailable { .. }) => {
            eprintln!("SKIPPED: no OpenCL platform ({e})");
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    // `salt` is a tuning parameter passed as a define: each value is a distinct program for
    // the compiler (and for any compiler cache). Every compile announces itself at the gate.
    let mut builder = demo_kernels::opencl::vector_add_builder();
    builder.tune("salt", (0..=rounds as i64).collect::<Vec<_>>(), 0);
    let mut def = builder.build()?;
    // A source no earlier run compiled: the salted compiles are real in every run, not
    // answers from an on-disk compiler cache (PoCL keeps one).
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_nanos();
    def.source
        .text
        .push_str(&format!("\n// first_launch bench run {nonce}\n"));
    let gated = Arc::new(GatedDevice::new(inner, "salt", "*", false));
    let gate = gated.gate();
    let device: Arc<dyn Device> = gated.clone();
    let default = def.default_config();
    let salted = move |salt: usize| -> Config {
        let mut c = default.clone();
        c.set("salt", Value::Int(salt as i64));
        c
    };
    let kernel = Arc::new(
        WisdomKernel::new(def, device.clone())?.with_selector(move |ps| {
            let n = usize::try_from(ps[0]).ok()?;
            (n >= SLOW_BASE).then(|| salted(n - SLOW_BASE + 1))
        }),
    );
    // The compiled configuration (salt 0), and every code path warmed up.
    timed_launch(&kernel, device.as_ref(), n0).map_err(std::io::Error::other)?;

    let (mut alone, mut beside, mut compiles) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        // Fresh sizes of the compiled configuration: one alone, one beside the compile.
        let (size_alone, size_beside) = (n0 + 128 * round + 64, n0 + 128 * round + 128);
        if round % 2 == 0 {
            alone.push(
                timed_launch(&kernel, device.as_ref(), size_alone)
                    .map_err(std::io::Error::other)?,
            );
        }
        // A concurrent compile of configuration `salt = round + 1`.
        let compile = {
            let (kernel, device) = (kernel.clone(), device.clone());
            std::thread::spawn(move || timed_launch(&kernel, device.as_ref(), SLOW_BASE + round))
        };
        // Compiles so far: salt 0, then one per round.
        gate.wait_entered(round + 2);
        beside.push(
            timed_launch(&kernel, device.as_ref(), size_beside).map_err(std::io::Error::other)?,
        );
        compiles.push(
            compile
                .join()
                .map_err(|_| "compile thread panicked")?
                .map_err(std::io::Error::other)?,
        );
        if round % 2 == 1 {
            alone.push(
                timed_launch(&kernel, device.as_ref(), size_alone)
                    .map_err(std::io::Error::other)?,
            );
        }
    }
    assert_eq!(kernel.compiled_count(), rounds + 1);

    let ms = |s: f64| s * 1e3;
    let (a, b, c) = (median(alone), median(beside), median(compiles));
    println!("device: {}", device.info().summary());
    println!(
        "first launch of a new size whose configuration is compiled (vector_add, n ~ {n0}, \
         {rounds} rounds):"
    );
    println!("  alone:                                   {:.3} ms", ms(a));
    println!("  beside another configuration's compile:  {:.3} ms", ms(b));
    println!("  ratio (beside / alone):                  {:.3}", b / a);
    println!(
        "  the concurrent compile + first launch:   {:.1} ms (what a launch that waited for \
         it would pay, at most)",
        ms(c)
    );
    process_pairs::cold_and_warm(pairs, n0)?;
    Ok(())
}
