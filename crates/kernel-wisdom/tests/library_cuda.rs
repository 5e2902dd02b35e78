//! The library's hotspot and n-body kernels (`kernel_wisdom::library`, issue 29) on a CUDA
//! device, through NVRTC: 48 configurations spread over each kernel's whole CUDA space
//! (hotspot's `blocks_per_sm` included) and the default, against the CPU reference at sizes
//! no tile divides, and the routines (`common/sim_checks.rs`, the same checks as on PoCL).
//! Without a CUDA driver each test prints `SKIPPED: no CUDA driver` and passes.

mod common;
#[path = "common/sim_checks.rs"]
mod sim_checks;

use common::cuda_device;
use kernel_wisdom::library::defs;
use kernel_wisdom::{BackendKind, WisdomKernel};

#[test]
fn cuda_hotspot_configurations_across_the_space() {
    let Some(dev) = cuda_device("cuda_hotspot_configurations_across_the_space") else {
        return;
    };
    let def = defs::hotspot(BackendKind::Cuda).build().unwrap();
    assert!(def.parameters.iter().any(|p| p.name == "blocks_per_sm"));
    let kernel = WisdomKernel::new(def, dev).unwrap();
    let configs = sim_checks::spread_configs(&kernel, 48);
    // Several blocks of the largest tiles, and edges in both directions.
    sim_checks::hotspot_configs(&kernel, &configs, [1031, 577]);
}

#[test]
fn cuda_hotspot_routine() {
    let Some(dev) = cuda_device("cuda_hotspot_routine") else {
        return;
    };
    sim_checks::hotspot_routine(&dev);
}

#[test]
fn cuda_nbody_configurations_across_the_space() {
    let Some(dev) = cuda_device("cuda_nbody_configurations_across_the_space") else {
        return;
    };
    let def = defs::nbody(BackendKind::Cuda).build().unwrap();
    let kernel = WisdomKernel::new(def, dev).unwrap();
    let configs = sim_checks::spread_configs(&kernel, 48);
    // A second, partial block for 1024 threads x 8 bodies; every 37th body checked.
    sim_checks::nbody_configs(&kernel, &configs, 10_007, 37);
}

#[test]
fn cuda_nbody_routine() {
    let Some(dev) = cuda_device("cuda_nbody_routine") else {
        return;
    };
    sim_checks::nbody_routine(&dev);
}

#[test]
fn cuda_fma_peak_does_the_fmas_it_counts() {
    let Some(dev) = cuda_device("cuda_fma_peak_does_the_fmas_it_counts") else {
        return;
    };
    sim_checks::fma_peak(&dev);
}
