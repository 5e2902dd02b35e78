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

/// The first OpenCL device (a GPU where there is one: OpenCL GPUs are numbered before CPUs),
/// or the first OpenCL device that `KW_DEVICE` selects (e.g. `KW_DEVICE=cpu` for PoCL where
/// PoCL and NVIDIA platforms are both installed), and its index over all backends (what
/// `KW_DEVICE` takes).
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

/// The first CUDA device, or `None` after printing why the test is skipped.
pub fn cuda_device(test: &str) -> Option<Arc<dyn Device>> {
    let listed = list_devices().unwrap_or_default();
    let Some(d) = listed.iter().find(|d| d.info.backend == BackendKind::Cuda) else {
        let why = match kernel_wisdom::CudaBackend.devices_reason() {
            Some(r) => r,
            None => "no CUDA device".into(),
        };
        println!("SKIPPED: no CUDA driver ({test}: {why})");
        return None;
    };
    Some(open_device(&DeviceSelector::Index(d.index)).expect("opening the CUDA device"))
}

/// Why the CUDA backend lists no device.
pub trait Reason {
    fn devices_reason(&self) -> Option<String>;
}

impl Reason for kernel_wisdom::CudaBackend {
    fn devices_reason(&self) -> Option<String> {
        use kw_core::backend::Backend;
        self.devices().err().map(|e| e.to_string())
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

/// Asserts that `got` equals `want` within a relative tolerance of 1e-5, naming `what` and
/// the first element that differs.
pub fn check_close(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let tol = 1e-5 * w.abs().max(1.0);
        assert!(
            (g - w).abs() <= tol,
            "{what}: element {i}: got {g}, want {w}"
        );
    }
}

/// The demo `stencil2d` (`def`, OpenCL or CUDA) narrowed to 16 configurations, on random
/// `w` x `h` data: the default configuration, then every configuration timed, each output
/// poisoned with NaN first and compared with the CPU reference. Returns each
/// configuration's time in milliseconds; asserts that the local-memory variant ran.
pub fn stencil2d_every_configuration(
    dev: &Arc<dyn Device>,
    mut def: KernelDef,
    seed: u64,
    (w, h): (usize, usize),
) -> Vec<f64> {
    use kernel_wisdom::{demo_kernels, DeviceBuffer, LaunchOptions, WisdomKernel};
    narrow(&mut def, "block_size_x", &[8, 32]);
    narrow(&mut def, "block_size_y", &[2, 4]);
    narrow(&mut def, "tile_y", &[1, 2]);
    let kernel = WisdomKernel::new(def, dev.clone()).unwrap();
    let mut rng = Rng::new(seed);
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
    let mut times = Vec::new();
    for point in space.iter() {
        let config = space.config(&point);
        used_local |= config.get("use_local") == Some(&1.into());
        dout.fill(f32::NAN).unwrap();
        let launched = kernel
            .launch_with(&args, LaunchOptions::new().config(&config).timed())
            .unwrap();
        times.push(launched.device_ms.expect("a timed launch gives its time"));
        check_close(
            &dout.to_vec().unwrap(),
            &want,
            &format!("configuration {config}"),
        );
    }
    assert!(used_local, "the space covers the local-memory variant");
    times
}

/// The library `gemm` kernel's ten arguments (`gemm` and `gemm_f16`): C, A and B (B^T for
/// `gemm`), the sizes, alpha and beta, and split-K's scratch (`work`, `counts`).
pub fn gemm_args<'a, T: kw_core::scalar::Scalar>(
    [c, a, bt]: [&'a kernel_wisdom::DeviceBuffer<T>; 3],
    [m, n, k]: [usize; 3],
    [alpha, beta]: [f32; 2],
    (work, counts): (
        &'a kernel_wisdom::DeviceBuffer<f32>,
        &'a kernel_wisdom::DeviceBuffer<i32>,
    ),
) -> [kernel_wisdom::KernelArg<'a>; 10] {
    [
        c.arg(),
        a.arg(),
        bt.arg(),
        (m as i32).into(),
        (n as i32).into(),
        (k as i32).into(),
        alpha.into(),
        beta.into(),
        work.arg(),
        counts.arg(),
    ]
}

/// The wisdom identity of `NullDevice::new(BackendKind::Cuda)`.
pub fn null_cuda_wisdom_device() -> kw_core::wisdom::WisdomDevice {
    kw_core::wisdom::WisdomDevice {
        name: "null device".into(),
        vendor: "none".into(),
        backend: "cuda".into(),
        architecture: "sm_90".into(),
        driver: "0".into(),
    }
}

/// A CUDA buffer argument of `len` floats at the made-up address `ptr`, for a null device.
pub fn null_cuda_buffer(ptr: u64, len: usize) -> kw_core::backend::KernelArg<'static> {
    // SAFETY: the null device never touches memory.
    unsafe {
        kw_core::backend::KernelArg::raw_buffer(
            kw_core::backend::RawMem::cuda(ptr, len * 4),
            kw_core::scalar::ScalarType::F32,
        )
    }
}

/// vector_add's arguments over `n` elements on a null CUDA device (made-up buffers).
pub fn null_vector_add_args(n: usize) -> [kw_core::backend::KernelArg<'static>; 4] {
    [
        null_cuda_buffer(0x1000, n),
        null_cuda_buffer(0x2000, n),
        null_cuda_buffer(0x3000, n),
        (n as i32).into(),
    ]
}

/// A wisdom record of `vector_add` on `device`: `n` elements, blocks of `bx` threads each
/// doing `ept` elements, not strided, unrolled, measured at 1 ms.
pub fn vector_add_record(
    device: kw_core::wisdom::WisdomDevice,
    space: &kw_core::space::TuningSpace,
    n: i64,
    bx: i64,
    ept: i64,
) -> kw_core::wisdom::WisdomRecord {
    use kw_core::wisdom::{Objective, Provenance, SpaceFingerprint, WisdomRecord};
    let mut config = kw_core::config::Config::default();
    config.set("block_size_x", bx);
    config.set("elems_per_thread", ept);
    config.set("strided", 0);
    config.set("unroll", 1);
    WisdomRecord {
        config,
        problem_size: vec![n],
        device,
        objective: Objective {
            median_ms: 1.0,
            samples: 5,
            ..Default::default()
        },
        space: SpaceFingerprint::of(space),
        provenance: Provenance::default(),
        alternates: Vec::new(),
    }
}

/// A fresh directory of this test process: `kw-{name}-{pid}-{nonce}` under the system's
/// temporary directory.
pub fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!(
        "kw-{name}-{}-{}",
        std::process::id(),
        kw_core::files::nonce(9)
    ));
    std::fs::create_dir_all(&d).expect("a temporary directory");
    d
}
