//! The bundled kernels on PoCL: the default configuration and every configuration of a small
//! tuning space, on random data, against a CPU reference; outputs are poisoned with NaN
//! before every run so unwritten elements are caught.

mod common;

use common::{device, narrow, random_floats};
use kernel_wisdom::LaunchOptions;
use kernel_wisdom::{demo_kernels, DeviceBuffer, WisdomKernel};
use kw_core::rng::Rng;

fn check_close(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let tol = 1e-5 * w.abs().max(1.0);
        assert!(
            (g - w).abs() <= tol,
            "{what}: element {i}: got {g}, want {w}"
        );
    }
}

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
    let mut def = demo_kernels::opencl::stencil2d().unwrap();
    narrow(&mut def, "block_size_x", &[8, 32]);
    narrow(&mut def, "block_size_y", &[2, 4]);
    narrow(&mut def, "tile_y", &[1, 2]);
    let kernel = WisdomKernel::new(def, dev.clone()).unwrap();
    let mut rng = Rng::new(11);
    let (w, h) = (67usize, 45usize);
    let input = random_floats(&mut rng, w * h);
    let want = demo_kernels::stencil2d_reference(&input, w, h);
    let din = DeviceBuffer::from_slice(dev.as_ref(), &input).unwrap();
    let dout = DeviceBuffer::<f32>::new(dev.as_ref(), w * h).unwrap();
    let args = [dout.arg(), din.arg(), (w as i32).into(), (h as i32).into()];

    dout.fill(f32::NAN).unwrap();
    kernel.launch(&args).unwrap();
    check_close(&dout.to_vec().unwrap(), &want, "default configuration");

    let space = kernel.space();
    assert_eq!(space.len(), 2 * 2 * 2 * 2);
    let mut used_local = false;
    for point in space.iter() {
        let config = space.config(&point);
        used_local |= config.get("use_local") == Some(&1.into());
        dout.fill(f32::NAN).unwrap();
        let ms = kernel
            .launch_with(&args, LaunchOptions::new().config(&config).timed())
            .map(|l| l.device_ms.unwrap_or_default())
            .unwrap();
        assert!(ms >= 0.0);
        check_close(
            &dout.to_vec().unwrap(),
            &want,
            &format!("configuration {config}"),
        );
    }
    assert!(used_local, "the space covers the local-memory variant");
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
