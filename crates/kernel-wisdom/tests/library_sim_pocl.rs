//! The library's hotspot and n-body kernels (`kernel_wisdom::library`, issue 29) on PoCL:
//! every configuration of a reduced tuning space of each at sizes no tile divides, against
//! the CPU reference, and the routines (`common/sim_checks.rs`).

mod common;
#[path = "common/sim_checks.rs"]
mod sim_checks;

use common::{device, narrow};
use kernel_wisdom::library::defs;
use kernel_wisdom::{BackendKind, WisdomKernel};

#[test]
fn hotspot_every_configuration_of_a_reduced_space() {
    let Some(dev) = device() else { return };
    let mut def = defs::hotspot(BackendKind::Opencl).build().unwrap();
    for (name, values) in [
        ("block_size_x", &[16][..]),
        ("block_size_y", &[4]),
        ("tile_size_x", &[1, 2]),
        ("tile_size_y", &[1, 3]),
        ("temporal_tiling_factor", &[1, 3]),
        ("loop_unroll_factor_t", &[1, 3]),
        ("sh_power", &[0, 1]),
    ] {
        narrow(&mut def, name, values);
    }
    let kernel = WisdomKernel::new(def, dev).unwrap();
    let configs = sim_checks::every_config(&kernel);
    assert_eq!(configs.len(), 24);
    sim_checks::hotspot_configs(&kernel, &configs, [37, 23]);
}

#[test]
fn hotspot_routine_at_sizes_no_tile_divides() {
    let Some(dev) = device() else { return };
    sim_checks::hotspot_routine(&dev);
}

#[test]
fn nbody_every_configuration_of_a_reduced_space() {
    let Some(dev) = device() else { return };
    let mut def = defs::nbody(BackendKind::Opencl).build().unwrap();
    for (name, values) in [
        ("block_size_x", &[32][..]),
        ("outer_unroll", &[1, 3]),
        ("inner_unroll", &[1, 4]),
        ("use_shared", &[0, 1]),
        ("vector_loads", &[0, 1]),
    ] {
        narrow(&mut def, name, values);
    }
    let kernel = WisdomKernel::new(def, dev).unwrap();
    let configs = sim_checks::every_config(&kernel);
    assert_eq!(configs.len(), 16);
    // 96 bodies a block with 3 per thread: a second block of 4.
    sim_checks::nbody_configs(&kernel, &configs, 100, 1);
}

#[test]
fn nbody_routine_at_sizes_no_tile_divides() {
    let Some(dev) = device() else { return };
    sim_checks::nbody_routine(&dev);
}

#[test]
fn fma_peak_does_the_fmas_it_counts() {
    let Some(dev) = device() else { return };
    sim_checks::fma_peak(&dev);
}
