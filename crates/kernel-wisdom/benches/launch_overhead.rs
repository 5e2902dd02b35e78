//! Launch overhead of a cached `WisdomKernel` against a raw `opencl3` enqueue of the same
//! kernel (same source, defines, context and queue), in one run.
//!
//! `cargo bench -p kernel-wisdom --bench launch_overhead [-- --n N --launches L --blocks B]`
//!
//! Two measures, each the median of per-launch samples taken alternately (raw, wrapped, raw,
//! ...), so that drift and the load of a shared machine hit both alike:
//! - round trip: launch + `clFinish` (the time an application waits for a launch);
//! - enqueue: host time of the launch call alone, in runs of 8 before one `clFinish`.

mod common;

use kernel_wisdom::{demo_kernels, DeviceBuffer, WisdomKernel};
use kw_core::backend::{BackendError, Device};
use kw_opencl::raw::RawKernel;
use kw_opencl::{ClMemory, OpenClBackend};
use std::sync::Arc;
use std::time::Instant;

use common::{arg_value, median};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let n = arg_value(&args, "--n", 1 << 15);
    let launches = arg_value(&args, "--launches", 400);
    let blocks = arg_value(&args, "--blocks", 10);

    let cl = match OpenClBackend.open_cl(0) {
        Ok(d) => Arc::new(d),
        Err(e @ BackendError::Unavailable { .. }) => {
            eprintln!("SKIPPED: no OpenCL platform ({e})");
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    let device: Arc<dyn Device> = cl.clone();
    let def = demo_kernels::opencl::vector_add()?;
    let kernel = WisdomKernel::new(def.clone(), device.clone())?;
    let config = kernel.default_config().clone();

    // The raw baseline: the same source and defines, built and launched with opencl3 only.
    let defines = def.defines_for(&config, Some(device.info()))?;
    let options: Vec<String> = defines.iter().map(|(k, v)| format!("-D{k}={v}")).collect();
    let raw = RawKernel::build(&cl, &def.source.text, &def.kernel_name, &options.join(" "))?;
    let geometry = def.geometry(&config, &[n as i64, 1, 1], None, Some(device.info()))?;
    let local = geometry.block[0] as usize;
    let global = geometry.grid[0] as usize * local;

    let a = DeviceBuffer::from_slice(device.as_ref(), &vec![1.0f32; n])?;
    let b = DeviceBuffer::from_slice(device.as_ref(), &vec![2.0f32; n])?;
    let c = DeviceBuffer::<f32>::new(device.as_ref(), n)?;
    fn mem(buf: &DeviceBuffer<f32>) -> Result<&ClMemory, String> {
        buf.memory()
            .as_any()
            .downcast_ref::<ClMemory>()
            .ok_or_else(|| "not an OpenCL buffer".to_string())
    }
    let (ma, mb, mc) = (mem(&a)?, mem(&b)?, mem(&c)?);
    let n_i32 = i32::try_from(n)?;

    let raw_launch = || -> Result<(), BackendError> {
        raw.set_buffer(0, mc)?;
        raw.set_buffer(1, ma)?;
        raw.set_buffer(2, mb)?;
        raw.set_scalar(3, n_i32)?;
        raw.enqueue_1d(&cl, global, local)
    };
    let wrapped_launch = || kernel.launch(&[c.arg(), a.arg(), b.arg(), n_i32.into()]);

    // Warm up both (the first wrapped launch compiles and caches the configuration).
    for _ in 0..50 {
        raw_launch()?;
        wrapped_launch()?;
    }
    device.synchronize()?;
    assert_eq!(c.to_vec()?[n - 1], 3.0, "the kernel computes c = a + b");

    // Samples alternate raw and wrapped launch by launch (ABAB...), so that drift and the
    // load of a shared machine hit both alike; medians discard preemption spikes.
    let (mut rt_raw, mut rt_wrapped, mut enq_raw, mut enq_wrapped) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for block in 0..blocks {
        for i in 0..launches {
            // Round trip: launch + finish. Which goes first alternates too.
            let raw_first = (i + block) % 2 == 0;
            for step in 0..2 {
                let t = Instant::now();
                if (step == 0) == raw_first {
                    raw_launch()?;
                    device.synchronize()?;
                    rt_raw.push(t.elapsed().as_secs_f64());
                } else {
                    wrapped_launch()?;
                    device.synchronize()?;
                    rt_wrapped.push(t.elapsed().as_secs_f64());
                }
            }
        }
        // Enqueue only: host time of one enqueue call, queue kept busy, in runs of 8.
        for i in 0..launches / 8 {
            let raw_turn = (i + block) % 2 == 0;
            for _ in 0..8 {
                let t = Instant::now();
                if raw_turn {
                    raw_launch()?;
                    enq_raw.push(t.elapsed().as_secs_f64());
                } else {
                    wrapped_launch()?;
                    enq_wrapped.push(t.elapsed().as_secs_f64());
                }
            }
            device.synchronize()?;
        }
    }

    // Host-only cost of the wrapper's bookkeeping: argument checks, problem size, lookup.
    let t = Instant::now();
    let reps = 200_000;
    for _ in 0..reps {
        std::hint::black_box(kernel.problem_size(&[c.arg(), a.arg(), b.arg(), n_i32.into()])?);
    }
    let bookkeeping = t.elapsed().as_secs_f64() / reps as f64;

    let us = |s: f64| s * 1e6;
    let (r1, w1) = (median(rt_raw), median(rt_wrapped));
    let a_over_a = {
        // Noise floor: the raw samples split in two halves (even vs odd samples).
        let even: Vec<f64> = enq_raw.iter().step_by(2).copied().collect();
        let odd: Vec<f64> = enq_raw.iter().skip(1).step_by(2).copied().collect();
        median(even) / median(odd)
    };
    let (r2, w2) = (median(enq_raw), median(enq_wrapped));
    println!("device: {}", device.info().summary());
    println!(
        "kernel: vector_add, n = {n}, config {{{config}}}, grid {global}/{local}; \
         {} alternating samples each",
        blocks * launches
    );
    println!(
        "round trip (launch + finish): raw opencl3 {:.2} us, WisdomKernel {:.2} us, ratio {:.4}",
        us(r1),
        us(w1),
        w1 / r1
    );
    println!(
        "enqueue only (back-to-back):  raw opencl3 {:.2} us, WisdomKernel {:.2} us, ratio {:.4}",
        us(r2),
        us(w2),
        w2 / r2
    );
    println!("noise floor (raw vs raw, enqueue, even vs odd samples): ratio {a_over_a:.4}");
    println!(
        "wrapper bookkeeping per launch (argument check + problem size): {:.3} us",
        us(bookkeeping)
    );
    Ok(())
}
