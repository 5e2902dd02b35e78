//! Helpers shared by the PoCL tests.
#![allow(dead_code)]

use kernel_wisdom::{open_device, DeviceSelector, Error, KernelDef, Value};
use kw_core::backend::{BackendError, Device};
use kw_core::rng::Rng;
use std::sync::Arc;

/// Device 0, or `None` after printing why the test is skipped.
pub fn device() -> Option<Arc<dyn Device>> {
    match open_device(&DeviceSelector::Index(0)) {
        Ok(d) => Some(d),
        Err(Error::Backend(e @ BackendError::Unavailable { .. })) => {
            eprintln!("SKIPPED: no OpenCL platform ({e})");
            None
        }
        Err(e) => panic!("opening device 0 failed: {e}"),
    }
}

/// Random floats in [-2, 2), never all zero.
pub fn random_floats(rng: &mut Rng, n: usize) -> Vec<f32> {
    let v: Vec<f32> = (0..n).map(|_| (rng.f64() * 4.0 - 2.0) as f32).collect();
    assert!(v.iter().any(|&x| x != 0.0));
    v
}

/// Restricts a parameter to some of its values (keeping the default if it stays listed).
pub fn narrow(def: &mut KernelDef, name: &str, values: &[i64]) {
    let p = def
        .parameters
        .iter_mut()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no parameter {name}"));
    p.values = values.iter().map(|&v| Value::Int(v)).collect();
    if !p.values.contains(&p.default) {
        p.default = p.values[0].clone();
    }
}
