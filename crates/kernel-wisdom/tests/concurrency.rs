//! Several threads sharing one `WisdomKernel` on PoCL: a compile never blocks launches that
//! do not need it, a configuration is compiled once, and a new problem size is selected once.
//! One configuration's compile is held at a gate ([`gated::GatedDevice`]) until the test
//! opens it, so what must happen meanwhile is asserted by order of events, not by time.

mod common;
#[path = "common/gated.rs"]
mod gated;

use gated::{GatedDevice, HANG_GUARD};
use kernel_wisdom::{demo_kernels, Config, DeviceBuffer, WisdomKernel};
use kw_core::backend::Device;
use std::collections::HashMap;
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex};
use std::thread;

/// `c = a + b` over `n` elements with fresh buffers; checks the result on the host.
fn add_and_check(kernel: &WisdomKernel, dev: &dyn Device, n: usize) -> Result<(), String> {
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 7) as f32 * 0.5).collect();
    let da = DeviceBuffer::from_slice(dev, &a).map_err(|e| e.to_string())?;
    let db = DeviceBuffer::from_slice(dev, &b).map_err(|e| e.to_string())?;
    let dc = DeviceBuffer::<f32>::new(dev, n).map_err(|e| e.to_string())?;
    kernel
        .launch(&[dc.arg(), da.arg(), db.arg(), (n as i32).into()])
        .map_err(|e| e.to_string())?;
    let c = dc.to_vec().map_err(|e| e.to_string())?;
    match (0..n).find(|&i| c[i] != a[i] + b[i]) {
        None => Ok(()),
        Some(i) => Err(format!(
            "n = {n}: c[{i}] = {}, expected {}",
            c[i],
            a[i] + b[i]
        )),
    }
}

fn with_ept(base: &Config, ept: i64) -> Config {
    let mut c = base.clone();
    c.set("elems_per_thread", ept);
    c
}

#[test]
fn a_compiled_configuration_never_waits_for_another_compile() {
    let Some(dev) = common::device() else { return };
    let gated = Arc::new(GatedDevice::new(dev, "elems_per_thread", "8", true));
    let gate = gated.gate();
    let def = demo_kernels::opencl::vector_add().unwrap();
    let default = def.default_config();
    let (slow, other) = (with_ept(&default, 8), with_ept(&default, 2));
    // Sizes 5001.. use the slow (gated) configuration, 6000.. another one not compiled yet,
    // everything else the default.
    let kernel = Arc::new(
        WisdomKernel::new(def, gated.clone())
            .unwrap()
            .with_selector(move |ps| match ps[0] {
                5001..=5999 => Some(slow.clone()),
                6000..=6999 => Some(other.clone()),
                _ => None,
            }),
    );
    let device: Arc<dyn Device> = gated.clone();
    add_and_check(&kernel, device.as_ref(), 4096).unwrap(); // compiles the default
    assert_eq!(kernel.compiled_count(), 1);

    let (events, log) = mpsc::channel::<(&'static str, Result<(), String>)>();
    let spawn = |name: &'static str, n: usize| {
        let (kernel, device, events) = (kernel.clone(), device.clone(), events.clone());
        thread::spawn(move || {
            let r = add_and_check(&kernel, device.as_ref(), n);
            let _ = events.send((name, r));
        })
    };
    // A new size of the slow configuration: its compile starts and is held at the gate.
    let slow_a = spawn("slow size A", 5001);
    gate.wait_entered(1);
    // Meanwhile: another size of the same configuration (must wait for that one compile),
    // a new size of the compiled default, and a new size of a configuration never compiled.
    let slow_b = spawn("slow size B", 5003);
    let fast = spawn("new size, compiled configuration", 4100);
    let parallel = spawn("new size, other configuration", 6000);
    let mut finished = Vec::new();
    while finished.len() < 2 {
        match log.recv_timeout(HANG_GUARD) {
            Ok((name, result)) => {
                assert!(result.is_ok(), "{name}: {result:?}");
                finished.push(name);
            }
            Err(_) => {
                gate.open();
                panic!(
                    "launches that need no held compile are blocked behind it \
                     (finished so far: {finished:?})"
                );
            }
        }
    }
    // Both finished while the slow compile was still held: neither waited for it.
    assert!(!gate.is_open());
    finished.sort();
    assert_eq!(
        finished,
        [
            "new size, compiled configuration",
            "new size, other configuration"
        ]
    );
    assert!(!slow_a.is_finished() && !slow_b.is_finished());
    assert_eq!(
        kernel.compiled_count(),
        2,
        "a compile in progress is not counted"
    );
    assert_eq!(kernel.config_for(&[4100, 1, 1]), Some(default.clone()));
    assert_eq!(kernel.config_for(&[5001, 1, 1]), None, "not prepared yet");

    gate.open();
    for _ in 0..2 {
        let (name, result) = log.recv_timeout(HANG_GUARD).expect("slow launches finish");
        assert!(result.is_ok(), "{name}: {result:?}");
    }
    for t in [slow_a, slow_b, fast, parallel] {
        t.join().unwrap();
    }
    assert_eq!(
        gated.compiles_with("elems_per_thread", "8"),
        1,
        "the second size waited for the slow compile instead of compiling again"
    );
    assert_eq!(gate.entered(), 1);
    assert!(gated.compile_counts().iter().all(|&n| n == 1));
    assert_eq!(kernel.compiled_count(), 3);
    assert!(kernel.failures().is_empty());
}

#[test]
fn a_new_size_is_selected_once_under_races() {
    let Some(dev) = common::device() else { return };
    // Size 7000's compile is held until every thread has started launching it, so that the
    // threads meet the size while it is being prepared.
    let gated = Arc::new(GatedDevice::new(dev, "elems_per_thread", "4", true));
    let gate = gated.gate();
    let def = demo_kernels::opencl::vector_add().unwrap();
    let default = def.default_config();
    let held = with_ept(&default, 4);
    let calls: Arc<Mutex<HashMap<i64, usize>>> = Arc::default();
    let counted = calls.clone();
    let kernel = Arc::new(
        WisdomKernel::new(def, gated.clone())
            .unwrap()
            .with_selector(move |ps| {
                *counted.lock().unwrap().entry(ps[0]).or_default() += 1;
                match ps[0] {
                    7000 => Some(held.clone()),
                    n if n % 2 == 0 => Some(with_ept(&default, 2)),
                    _ => None,
                }
            }),
    );
    let device: Arc<dyn Device> = gated.clone();
    let sizes = [7000usize, 3001, 3002, 3003, 3004, 3005];
    let threads = 8;
    let start = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (kernel, device, start) = (kernel.clone(), device.clone(), start.clone());
            thread::spawn(move || {
                start.wait();
                // Everyone starts with the held size, then the others in a rotated order.
                add_and_check(&kernel, device.as_ref(), sizes[0])?;
                for i in 0..sizes.len() - 1 {
                    let n = sizes[1 + (t + i) % (sizes.len() - 1)];
                    add_and_check(&kernel, device.as_ref(), n)?;
                }
                Ok::<(), String>(())
            })
        })
        .collect();
    gate.wait_entered(1);
    // Give the other threads time to reach the size being prepared; this only widens the
    // race, the assertions below hold however the threads are scheduled.
    thread::sleep(std::time::Duration::from_millis(100));
    gate.open();
    for h in handles {
        h.join().unwrap().unwrap();
    }
    let calls = calls.lock().unwrap();
    for n in sizes {
        assert_eq!(
            calls.get(&(n as i64)),
            Some(&1),
            "size {n} selected {:?} times",
            calls.get(&(n as i64))
        );
    }
    assert_eq!(calls.len(), sizes.len());
    assert_eq!(gate.entered(), 1, "the held configuration compiled once");
    assert_eq!(kernel.compiled_count(), 3);
    assert!(gated.compile_counts().iter().all(|&n| n == 1));
}
