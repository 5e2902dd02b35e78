//! The bundled kernels on PoCL: the default configuration and every configuration of a small
//! tuning space, on random data, against a CPU reference; outputs are poisoned with NaN
//! before every run so unwritten elements are caught.

mod common;

use common::{device, narrow, random_floats, stencil2d_every_configuration};
use kernel_wisdom::LaunchOptions;
use kernel_wisdom::{demo_kernels, DeviceBuffer, WisdomKernel};
use kw_core::rng::Rng;

#[test]
fn vector_add_default_and_every_configuration() {
    let Some(dev) = device() else { return };
    let mut def = demo_kernels::opencl::vector_add().unwrap();
    narrow(&mut def, "block_size_x", &[32, 64, 256]);
    narrow(&mut def, "elems_per_thread", &[1, 4]);
    let kernel = WisdomKernel::new(def, dev.clone()).unwrap();
    let mut rng = Rng::new(7);
    let n = 10_007; // not a multiple of any tile
    let a = random_floats(&mut rng, n);
    let b = random_floats(&mut rng, n);
    let want = demo_kernels::vector_add_reference(&a, &b);
    let da = DeviceBuffer::from_slice(dev.as_ref(), &a).unwrap();
    let db = DeviceBuffer::from_slice(dev.as_ref(), &b).unwrap();
    let dc = DeviceBuffer::<f32>::new(dev.as_ref(), n).unwrap();
    let args = [dc.arg(), da.arg(), db.arg(), (n as i32).into()];

    dc.fill(f32::NAN).unwrap();
    kernel.launch(&args).unwrap();
    assert_eq!(dc.to_vec().unwrap(), want, "default configuration");
    assert_eq!(
        kernel.config_for(&[n as i64, 1, 1]).as_ref(),
        Some(kernel.default_config())
    );

    let space = kernel.space();
    assert_eq!(space.len(), 3 * 2 * 2 * 2);
    for point in space.iter() {
        let config = space.config(&point);
        dc.fill(f32::NAN).unwrap();
        kernel
            .launch_with(&args, LaunchOptions::new().config(&config))
            .unwrap();
        assert_eq!(dc.to_vec().unwrap(), want, "configuration {config}");
    }
    assert_eq!(kernel.compiled_count(), space.len() as usize);
    assert!(kernel.failures().is_empty());
}

#[test]
fn stencil2d_default_and_every_configuration() {
    let Some(dev) = device() else { return };
    let def = demo_kernels::opencl::stencil2d().unwrap();
    let times = stencil2d_every_configuration(&dev, def, 11, (67, 45));
    assert!(times.iter().all(|&ms| ms >= 0.0));
}

#[test]
fn a_new_problem_size_is_selected_and_compiled_once() {
    let Some(dev) = device() else { return };
    let kernel =
        WisdomKernel::new(demo_kernels::opencl::vector_add().unwrap(), dev.clone()).unwrap();
    let mut rng = Rng::new(3);
    for &n in &[1000usize, 1000, 5000, 1000, 5000] {
        let a = random_floats(&mut rng, n);
        let b = random_floats(&mut rng, n);
        let da = DeviceBuffer::from_slice(dev.as_ref(), &a).unwrap();
        let db = DeviceBuffer::from_slice(dev.as_ref(), &b).unwrap();
        let dc = DeviceBuffer::from_slice(dev.as_ref(), &vec![f32::NAN; n]).unwrap();
        kernel
            .launch(&[dc.arg(), da.arg(), db.arg(), (n as i32).into()])
            .unwrap();
        assert_eq!(
            dc.to_vec().unwrap(),
            demo_kernels::vector_add_reference(&a, &b)
        );
    }
    // Two problem sizes, one configuration (the default), one compilation.
    assert_eq!(kernel.compiled_count(), 1);
    assert!(kernel.config_for(&[5000, 1, 1]).is_some());
}

#[test]
fn one_kernel_is_launched_from_many_threads() {
    let Some(dev) = device() else { return };
    let kernel =
        WisdomKernel::new(demo_kernels::opencl::vector_add().unwrap(), dev.clone()).unwrap();
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let (kernel, dev) = (&kernel, dev.clone());
            s.spawn(move || {
                let mut rng = Rng::new(100 + t);
                let n = 3000 + (t as usize % 2) * 1000; // two problem sizes
                let a = random_floats(&mut rng, n);
                let b = random_floats(&mut rng, n);
                let da = DeviceBuffer::from_slice(dev.as_ref(), &a).unwrap();
                let db = DeviceBuffer::from_slice(dev.as_ref(), &b).unwrap();
                let dc = DeviceBuffer::<f32>::new(dev.as_ref(), n).unwrap();
                for _ in 0..20 {
                    dc.fill(f32::NAN).unwrap();
                    kernel
                        .launch(&[dc.arg(), da.arg(), db.arg(), (n as i32).into()])
                        .unwrap();
                    assert_eq!(
                        dc.to_vec().unwrap(),
                        demo_kernels::vector_add_reference(&a, &b)
                    );
                }
            });
        }
    });
    assert_eq!(kernel.compiled_count(), 1);
}
