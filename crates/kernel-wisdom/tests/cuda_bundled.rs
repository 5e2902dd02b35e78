//! The bundled CUDA kernels through `KernelBuilder` / `WisdomKernel` on a CUDA device: the
//! default configuration and every configuration of a small tuning space, on random data,
//! against a CPU reference; outputs are poisoned with NaN before every run. Without a CUDA
//! driver each test prints `SKIPPED: no CUDA driver` and passes.

mod common;

use common::{check_close, cuda_device, narrow, random_floats, stencil2d_every_configuration};
use kernel_wisdom::LaunchOptions;
use kernel_wisdom::{demo_kernels, open_default_device, BackendKind, DeviceBuffer, WisdomKernel};
use kw_core::rng::Rng;

#[test]
fn cuda_is_picked_when_available() {
    let Some(dev) = cuda_device("cuda_is_picked_when_available") else {
        return;
    };
    if std::env::var_os(kernel_wisdom::DEVICE_ENV).is_none() {
        let first = open_default_device().unwrap();
        assert_eq!(first.info().backend, BackendKind::Cuda);
        assert_eq!(first.info().name, dev.info().name);
    }
}

#[test]
fn cuda_vector_add_default_and_every_configuration() {
    let Some(dev) = cuda_device("cuda_vector_add_default_and_every_configuration") else {
        return;
    };
    let mut def = demo_kernels::cuda::vector_add().unwrap();
    narrow(&mut def, "block_size_x", &[32, 64, 256, 1024]);
    narrow(&mut def, "elems_per_thread", &[1, 4]);
    let kernel = WisdomKernel::new(def, dev.clone()).unwrap();
    let mut rng = Rng::new(17);
    let n = 1_000_003; // not a multiple of any tile
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

    let space = kernel.space();
    assert_eq!(space.len(), 4 * 2 * 2 * 2);
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
fn cuda_stencil2d_default_and_every_configuration() {
    let Some(dev) = cuda_device("cuda_stencil2d_default_and_every_configuration") else {
        return;
    };
    let def = demo_kernels::cuda::stencil2d().unwrap();
    let times = stencil2d_every_configuration(&dev, def, 19, (1031, 517));
    assert!(times.iter().all(|&ms| ms > 0.0));
}

#[test]
fn cuda_templated_kernel_default_and_every_configuration() {
    let Some(dev) = cuda_device("cuda_templated_kernel_default_and_every_configuration") else {
        return;
    };
    let mut def = demo_kernels::cuda::scaled_add().unwrap();
    narrow(&mut def, "block_size_x", &[32, 128, 1024]);
    let kernel = WisdomKernel::new(def, dev.clone()).unwrap();
    let mut rng = Rng::new(23);
    let n = 300_007;
    let x = random_floats(&mut rng, n);
    let y = random_floats(&mut rng, n);
    let alpha = 0.75f32;
    let want = demo_kernels::scaled_add_reference(alpha, &x, &y);
    let dx = DeviceBuffer::from_slice(dev.as_ref(), &x).unwrap();
    let dy = DeviceBuffer::from_slice(dev.as_ref(), &y).unwrap();
    let dout = DeviceBuffer::<f32>::new(dev.as_ref(), n).unwrap();
    let args = [
        dout.arg(),
        dx.arg(),
        dy.arg(),
        alpha.into(),
        (n as i32).into(),
    ];

    dout.fill(f32::NAN).unwrap();
    kernel.launch(&args).unwrap();
    check_close(&dout.to_vec().unwrap(), &want, "default configuration");

    let space = kernel.space();
    assert_eq!(space.len(), 3 * 4);
    for point in space.iter() {
        let config = space.config(&point);
        dout.fill(f32::NAN).unwrap();
        kernel
            .launch_with(&args, LaunchOptions::new().config(&config))
            .unwrap();
        check_close(
            &dout.to_vec().unwrap(),
            &want,
            &format!("configuration {config}"),
        );
    }
    // One instantiation per elems_per_thread value and block size.
    assert_eq!(kernel.compiled_count(), space.len() as usize);
}

#[test]
fn an_opencl_definition_on_a_cuda_device_is_refused() {
    let Some(dev) = cuda_device("an_opencl_definition_on_a_cuda_device_is_refused") else {
        return;
    };
    let err = WisdomKernel::new(demo_kernels::opencl::vector_add().unwrap(), dev)
        .err()
        .expect("a .cl definition on a CUDA device");
    assert!(
        matches!(err, kernel_wisdom::Error::BackendMismatch { .. }),
        "{err}"
    );
}
