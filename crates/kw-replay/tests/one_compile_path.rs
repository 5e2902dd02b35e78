//! The runtime (`WisdomKernel`) and the tuner (`CompilePool`) compile exactly the same request
//! and launch with the same geometry for every configuration of every bundled kernel, CUDA and
//! OpenCL. The tuner's definition is the one a capture carries (the runtime's definition
//! written into capture metadata and read back), as in `kw tune`. A recording device hashes the
//! full request it is asked to compile (source, headers, kernel name, defines, flags, include
//! directories, template arguments); no GPU is needed.

use kernel_wisdom::{demo_kernels, WisdomKernel};
use kw_core::backend::{
    BackendError, CompileRequest, CompiledKernel, Device, DeviceEvent, DeviceMemory, KernelArg,
    Queue, RawMem,
};
use kw_core::capture_meta::{CaptureMetadata, CAPTURE_METADATA_VERSION};
use kw_core::{
    config::Config, device::BackendKind, device::DeviceInfo, kernel_def::eval::Geometry,
    kernel_def::KernelDef,
};
use kw_replay::CompilePool;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Records a digest of every compile request; compiles nothing (every compile "fails").
struct Recorder {
    info: DeviceInfo,
    seen: Mutex<Vec<String>>,
}

impl Recorder {
    fn new(backend: BackendKind) -> Arc<Recorder> {
        Arc::new(Recorder {
            info: DeviceInfo {
                backend,
                name: "recorder".into(),
                vendor: "test".into(),
                architecture: "sm_90".into(),
                driver_version: "1".into(),
                compiler_version: "1".into(),
                uuid: None,
                compute_units: 1,
                global_memory_bytes: 1 << 30,
                max_alloc_bytes: 0,
                max_threads_per_block: 1024,
                max_block_dims: [1024, 1024, 64],
                max_shared_memory_per_block: 48 << 10,
                warp_size: 32,
                compute_capability: Some((9, 0)),
            },
            seen: Mutex::new(Vec::new()),
        })
    }

    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }
}

/// The digest of everything in a request that can change the binary.
fn digest(req: &CompileRequest<'_>) -> String {
    let mut h = blake3::Hasher::new();
    h.update(format!("{req:?}").as_bytes());
    h.finalize().to_hex().to_string()
}

fn unsupported(op: &'static str) -> BackendError {
    BackendError::Api {
        op,
        message: "the recording device only records compiles".into(),
    }
}

impl Device for Recorder {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }
    fn compile(&self, req: &CompileRequest<'_>) -> Result<Arc<dyn CompiledKernel>, BackendError> {
        self.seen.lock().unwrap().push(digest(req));
        Err(unsupported("compile"))
    }
    fn alloc(&self, _: usize) -> Result<Box<dyn DeviceMemory>, BackendError> {
        Err(unsupported("alloc"))
    }
    fn launch_on(
        &self,
        _: Queue<'_>,
        _: &dyn CompiledKernel,
        _: &Geometry,
        _: &[KernelArg<'_>],
        _: bool,
    ) -> Result<Option<Box<dyn DeviceEvent>>, BackendError> {
        Err(unsupported("launch"))
    }
    fn synchronize_queue(&self, _: Queue<'_>) -> Result<(), BackendError> {
        Ok(())
    }
    fn view(&self, _: RawMem) -> Result<Box<dyn DeviceMemory>, BackendError> {
        Err(unsupported("view"))
    }
    fn launch_timed(
        &self,
        _: &dyn CompiledKernel,
        _: &Geometry,
        _: &[KernelArg<'_>],
    ) -> Result<f64, BackendError> {
        Err(unsupported("launch"))
    }
    fn synchronize(&self) -> Result<(), BackendError> {
        Ok(())
    }
}

/// The definition as `kw tune` sees it: written into a capture's metadata and read back.
fn through_capture(def: &KernelDef, device: &DeviceInfo) -> KernelDef {
    let meta = CaptureMetadata {
        format: "kernel-wisdom/capture".into(),
        version: CAPTURE_METADATA_VERSION,
        tuning_key: def.tuning_key.clone(),
        kernel: def.clone(),
        problem_size: vec![4096, 1, 1],
        config: def.default_config(),
        args: Vec::new(),
        symbols: Vec::new(),
        device: device.clone(),
        provenance: Default::default(),
    };
    let text = serde_json::to_string(&meta).unwrap();
    let back: CaptureMetadata = serde_json::from_str(&text).unwrap();
    back.kernel
}

/// Every valid configuration's request digest, as the runtime and as the tuner compile it.
fn requests(def: &KernelDef) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let recorder = Recorder::new(def.backend);
    let device: Arc<dyn Device> = recorder.clone();
    let kernel = WisdomKernel::new(def.clone(), device.clone()).unwrap();
    let configs: Vec<Config> = kernel
        .space()
        .iter()
        .map(|p| kernel.space().config(&p))
        .collect();
    assert!(!configs.is_empty(), "{}: an empty space", def.kernel_name);
    let mut runtime = BTreeMap::new();
    for c in &configs {
        assert!(
            kernel.compile_config(c).is_err(),
            "the recorder compiles nothing"
        );
        let seen = recorder.take();
        assert_eq!(
            seen.len(),
            1,
            "{}: one compile per configuration",
            def.kernel_name
        );
        runtime.insert(c.key(), seen[0].clone());
    }
    let replayed = through_capture(def, &recorder.info);
    // The same launch geometry for every configuration (at a few problem sizes).
    for c in &configs {
        for ps in [[1000, 1, 1], [4096, 64, 1], [123, 77, 1]] {
            let info = Some(&recorder.info);
            assert_eq!(
                def.geometry(c, &ps, None, info).ok(),
                replayed.geometry(c, &ps, None, info).ok(),
                "{} {{{c}}} at {ps:?}: another launch geometry",
                def.kernel_name
            );
        }
    }
    let pool = CompilePool::new(device, Arc::new(replayed), 2);
    let mut tuner = BTreeMap::new();
    for (i, c) in configs.iter().enumerate() {
        let (result, _) = pool.take(i as u128, c);
        assert!(result.is_err());
        let seen = recorder.take();
        assert_eq!(
            seen.len(),
            1,
            "{}: one compile per configuration",
            def.kernel_name
        );
        tuner.insert(c.key(), seen[0].clone());
    }
    (runtime, tuner)
}

#[test]
fn runtime_and_tuner_compile_identical_requests_for_every_bundled_configuration() {
    let mut wide = demo_kernels::opencl::stencil2d().unwrap();
    demo_kernels::widen_stencil(&mut wide);
    let defs = [
        demo_kernels::opencl::vector_add().unwrap(),
        demo_kernels::opencl::stencil2d().unwrap(),
        wide,
        demo_kernels::cuda::vector_add().unwrap(),
        demo_kernels::cuda::stencil2d().unwrap(),
        demo_kernels::cuda::scaled_add().unwrap(),
    ];
    let mut total = 0;
    for def in &defs {
        let (runtime, tuner) = requests(def);
        assert_eq!(runtime.len(), tuner.len());
        for (key, digest) in &runtime {
            assert_eq!(
                tuner.get(key),
                Some(digest),
                "{} {{{key}}}: the tuner compiles another request than the runtime",
                def.kernel_name
            );
        }
        // The digest sees the configuration (configurations that differ only in launch
        // geometry may share a request).
        let distinct: std::collections::BTreeSet<&String> = runtime.values().collect();
        assert!(
            distinct.len() > 1,
            "{}: one request for all",
            def.kernel_name
        );
        total += runtime.len();
    }
    assert!(total > 100, "only {total} configurations compared");
    println!(
        "compared {total} configurations of {} bundled kernels",
        defs.len()
    );
}
