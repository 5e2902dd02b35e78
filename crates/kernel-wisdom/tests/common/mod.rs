//! Helpers shared by the PoCL tests.
#![allow(dead_code)]

use kernel_wisdom::{list_devices, open_device, DeviceSelector, Error, KernelDef, Value};
use kw_core::backend::{BackendError, Device};
use kw_core::device::BackendKind;
use kw_core::rng::Rng;
use std::sync::Arc;

/// The first OpenCL device (these tests run `.cl` kernels; a CUDA device, where there is
/// one, comes first in the numbering), or `None` after printing why the test is skipped.
pub fn device() -> Option<Arc<dyn Device>> {
    opencl_device().map(|(_, d)| d)
}

/// The first OpenCL device (or the first OpenCL device that `KW_DEVICE` selects, e.g.
/// `KW_DEVICE=NVIDIA` where PoCL and NVIDIA platforms are both installed) and its index over
/// all backends (what `KW_DEVICE` takes).
pub fn opencl_device() -> Option<(usize, Arc<dyn Device>)> {
    let wanted = std::env::var(kernel_wisdom::DEVICE_ENV)
        .ok()
        .filter(|w| !w.trim().is_empty())
        .map(|w| DeviceSelector::parse(&w));
    let listed = match list_devices() {
        Ok(l) => l,
        Err(Error::Backend(e @ BackendError::Unavailable { .. })) => {
            eprintln!("SKIPPED: no OpenCL platform ({e})");
            return None;
        }
        Err(e) => panic!("listing devices failed: {e}"),
    };
    let Some(d) = listed.iter().find(|d| {
        d.info.backend == BackendKind::Opencl
            && match &wanted {
                None => true,
                Some(DeviceSelector::Index(i)) => d.index == *i,
                Some(DeviceSelector::Name(n)) => {
                    d.info.name.to_lowercase().contains(&n.to_lowercase())
                }
                Some(DeviceSelector::Id(id)) => d.identity() == *id,
            }
    }) else {
        eprintln!("SKIPPED: no OpenCL platform (no OpenCL device listed or selected)");
        return None;
    };
    match open_device(&DeviceSelector::Index(d.index)) {
        Ok(dev) => {
            println!("OpenCL device under test: {}", dev.info().summary());
            Some((d.index, dev))
        }
        Err(e) => panic!("opening device {} failed: {e}", d.index),
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

/// Little-endian `f32`s from a capture's bytes.
pub fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}
