//! Online tuning in one command: launches the bundled vector add in a loop at sizes no
//! shipped wisdom covers, tunes them in the background while it runs, and prints the
//! configuration in use at the end.
//!
//! ```text
//! cargo build -p kw-cli            # the `kw` binary the runtime runs the tuning with
//! cargo run -p kernel-wisdom --example online_tuning -- [SIZE...] [--seconds S]
//! ```
//!
//! Without `KW_TUNE` in the environment it turns online tuning on itself
//! (`kernel_wisdom::set_tune_settings`) with a small budget (12 evaluations, 5 s of device time
//! per size, a quarter of the device's time) so that it ends within a minute; with
//! `KW_TUNE=online` the environment's settings (`KW_TUNE_BUDGET`, `KW_TUNE_SHARE`,
//! `KW_TUNE_DIR`) apply. Results go to the online wisdom directory (`KW_TUNE_DIR`, default
//! under the user's data directory): run it twice and the second run selects them at step 1
//! from its first launch.

use kernel_wisdom::{
    demo_kernels, online_reports, open_default_device, set_tune_settings, tune_settings,
    DeviceBuffer, TuneBudget, TuneMode, WisdomKernel,
};
use std::time::{Duration, Instant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut sizes: Vec<usize> = Vec::new();
    let mut seconds = 90.0f64;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--seconds" {
            seconds = args.next().ok_or("--seconds needs a value")?.parse()?;
        } else {
            sizes.push(a.parse().map_err(|_| format!("not a size: {a}"))?);
        }
    }
    if sizes.is_empty() {
        sizes = vec![1_234_567, 333_331];
    }
    if std::env::var_os(kernel_wisdom::TUNE_ENV).is_none() {
        let mut s = tune_settings();
        s.mode = TuneMode::Online;
        s.budget = TuneBudget {
            evaluations: 12,
            device_time: Duration::from_secs(5),
        };
        s.share = 0.25;
        set_tune_settings(s);
    }
    let s = tune_settings();
    println!(
        "KW_TUNE={}: {} evaluations and {:.1} s of device time per size, at most {:.0}% \
         of the device; results in {}",
        s.mode.as_str(),
        s.budget.evaluations,
        s.budget.device_time.as_secs_f64(),
        s.share * 100.0,
        s.dir
            .as_ref()
            .map_or("(no directory)".into(), |d| d.display().to_string())
    );
    let device = open_default_device()?;
    let kernel = WisdomKernel::new(demo_kernels::opencl::vector_add()?, device.clone())?;
    struct Size {
        n: usize,
        a: DeviceBuffer<f32>,
        b: DeviceBuffer<f32>,
        c: DeviceBuffer<f32>,
        first: Option<kernel_wisdom::Config>,
        switched_at: Option<u64>,
        launches: u64,
    }
    let mut work = Vec::new();
    let mut to_tune = 0;
    for &n in &sizes {
        let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
        work.push(Size {
            n,
            a: DeviceBuffer::from_slice(device.as_ref(), &a)?,
            b: DeviceBuffer::from_slice(device.as_ref(), &vec![0.5f32; n])?,
            c: DeviceBuffer::new(device.as_ref(), n)?,
            first: None,
            switched_at: None,
            launches: 0,
        });
        let choice = kernel.choice(&[n as i64]);
        println!("size {n}: selection at the start: {}", choice.step);
        if choice.step != kw_core::wisdom::Step::ExactDeviceExactSize {
            to_tune += 1;
        }
    }
    let began = Instant::now();
    let limit = Duration::from_secs_f64(seconds);
    let mut total = 0u64;
    let mut last_round = false;
    while began.elapsed() < limit {
        for w in &mut work {
            kernel.launch(&[w.c.arg(), w.a.arg(), w.b.arg(), (w.n as i32).into()])?;
            w.launches += 1;
            total += 1;
            let ps = [w.n as i64, 1, 1];
            let now = kernel.config_for(&ps);
            match (&w.first, now) {
                (None, now) => w.first = now,
                (Some(first), Some(now)) if w.switched_at.is_none() && *first != now => {
                    w.switched_at = Some(w.launches);
                    println!(
                        "size {}: switched to {{{now}}} at launch {} ({:.1} s)",
                        w.n,
                        w.launches,
                        began.elapsed().as_secs_f64()
                    );
                }
                _ => {}
            }
        }
        if total.is_multiple_of(64) {
            device.synchronize()?;
        }
        if work.iter().all(|w| w.switched_at.is_some()) || last_round {
            break;
        }
        // Every size tuned (or none to tune): one more round (a size switches at its next
        // launch).
        last_round = online_reports().len() >= to_tune;
    }
    device.synchronize()?;
    for w in &work {
        let c = w.c.to_vec()?;
        let wrong = (0..w.n).filter(|&i| c[i] != i as f32 + 0.5).count();
        let ps = [w.n as i64, 1, 1];
        let config = kernel.config_for(&ps).map_or("-".into(), |c| c.to_string());
        println!(
            "size {}: {} launches, configuration in use at the end: {{{config}}}{}",
            w.n,
            w.launches,
            if wrong == 0 { "" } else { " (WRONG RESULTS)" }
        );
        if wrong != 0 {
            return Err(format!("size {}: {wrong} wrong elements", w.n).into());
        }
    }
    for r in online_reports() {
        if r.kept() {
            println!(
                "tuned `{}` at {:?}: kept {{{}}} {:.4} ms, the best found after {} evaluations",
                r.tuning_key, r.problem_size, r.tuned, r.tuned_ms, r.evaluations
            );
            continue;
        }
        println!(
            "tuned `{}` at {:?}: {{{}}} {:.4} ms (was {{{}}} {}) after {} evaluations",
            r.tuning_key,
            r.problem_size,
            r.tuned,
            r.tuned_ms,
            r.in_use,
            r.in_use_ms.map_or("-".into(), |ms| format!("{ms:.4} ms")),
            r.evaluations
        );
    }
    Ok(())
}
