//! A device that launches nothing: every compile succeeds at once and every launch returns
//! without running anything (after an optional hook sees its geometry). For measuring the
//! host work of the layers above a backend (`kw-capi`'s `launch_overhead` bench) and for
//! testing their launch logic without a GPU. It has no memory: allocations are errors.

use crate::backend::{
    BackendError, CompileRequest, CompiledKernel, Device, DeviceEvent, DeviceMemory, KernelArg,
    Queue, RawMem,
};
use crate::device::{BackendKind, DeviceInfo};
use crate::kernel_def::eval::Geometry;
use std::any::Any;
use std::sync::Arc;

/// Called with every launch's geometry; an `Err` fails the launch with that message.
pub type LaunchHook = Box<dyn Fn(&Geometry) -> Result<(), String> + Send + Sync>;

/// Called with every compile's `-D` defines; an `Err` fails the compile with that message.
pub type CompileHook = Box<dyn Fn(&[(String, String)]) -> Result<(), String> + Send + Sync>;

/// A device that launches nothing. See the [module documentation](self).
pub struct NullDevice {
    info: DeviceInfo,
    on_launch: Option<LaunchHook>,
    on_compile: Option<CompileHook>,
}

impl NullDevice {
    /// A null device that says it is of `backend` (an H100-like description for CUDA).
    pub fn new(backend: BackendKind) -> NullDevice {
        NullDevice {
            info: DeviceInfo {
                backend,
                name: "null device".into(),
                vendor: "none".into(),
                architecture: if backend == BackendKind::Cuda {
                    "sm_90".into()
                } else {
                    "null".into()
                },
                driver_version: "0".into(),
                compiler_version: "0".into(),
                uuid: None,
                compute_units: 132,
                global_memory_bytes: 80 << 30,
                max_alloc_bytes: 0,
                max_threads_per_block: 1024,
                max_block_dims: [1024, 1024, 64],
                max_shared_memory_per_block: 48 << 10,
                warp_size: 32,
                compute_capability: (backend == BackendKind::Cuda).then_some((9, 0)),
            },
            on_launch: None,
            on_compile: None,
        }
    }

    /// The same device with `edit` applied to what it reports of itself (e.g. an H100's
    /// shared memory and name, for selection tests).
    pub fn with_info(mut self, edit: impl FnOnce(&mut DeviceInfo)) -> NullDevice {
        edit(&mut self.info);
        self
    }

    /// Calls `hook` with the geometry of every launch (which fails when it returns `Err`).
    pub fn on_launch(
        mut self,
        hook: impl Fn(&Geometry) -> Result<(), String> + Send + Sync + 'static,
    ) -> NullDevice {
        self.on_launch = Some(Box::new(hook));
        self
    }

    /// Calls `hook` with the defines of every compile (which fails when it returns `Err`),
    /// e.g. to test what happens when one configuration does not compile.
    pub fn on_compile(
        mut self,
        hook: impl Fn(&[(String, String)]) -> Result<(), String> + Send + Sync + 'static,
    ) -> NullDevice {
        self.on_compile = Some(Box::new(hook));
        self
    }
}

/// What a [`NullDevice`] compiles to.
struct NullKernel(String);

impl CompiledKernel for NullKernel {
    fn name(&self) -> &str {
        &self.0
    }
    fn param_count(&self) -> Option<usize> {
        None
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn no_memory(op: &'static str) -> BackendError {
    BackendError::Api {
        op,
        message: "the null device has no memory".into(),
    }
}

impl Device for NullDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn compile(&self, req: &CompileRequest<'_>) -> Result<Arc<dyn CompiledKernel>, BackendError> {
        if let Some(hook) = &self.on_compile {
            hook(req.defines).map_err(|reason| BackendError::Compile {
                kernel: req.kernel_name.to_string(),
                file: req.source.file_name.clone(),
                options: String::new(),
                reason,
                log: String::new(),
            })?;
        }
        Ok(Arc::new(NullKernel(req.kernel_name.to_string())))
    }

    fn alloc(&self, _: usize) -> Result<Box<dyn DeviceMemory>, BackendError> {
        Err(no_memory("alloc"))
    }

    #[inline(never)]
    fn launch_on(
        &self,
        _: Queue<'_>,
        kernel: &dyn CompiledKernel,
        geometry: &Geometry,
        args: &[KernelArg<'_>],
        _: bool,
    ) -> Result<Option<Box<dyn DeviceEvent>>, BackendError> {
        std::hint::black_box((kernel, args));
        if let Some(hook) = &self.on_launch {
            hook(geometry).map_err(|message| BackendError::Launch {
                kernel: kernel.name().to_string(),
                grid: geometry.grid,
                block: geometry.block,
                message,
            })?;
        }
        Ok(None)
    }

    fn synchronize_queue(&self, _: Queue<'_>) -> Result<(), BackendError> {
        Ok(())
    }

    fn view(&self, _: RawMem) -> Result<Box<dyn DeviceMemory>, BackendError> {
        Err(no_memory("view"))
    }

    fn launch_timed(
        &self,
        kernel: &dyn CompiledKernel,
        geometry: &Geometry,
        args: &[KernelArg<'_>],
    ) -> Result<f64, BackendError> {
        self.launch_on(Queue::DEFAULT, kernel, geometry, args, false)
            .map(|_| 0.0)
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launches_reach_the_hook_and_its_refusal_is_a_launch_error() {
        let dev = NullDevice::new(BackendKind::Cuda).on_launch(|g| {
            if g.block[0] == 512 {
                Err("too big".into())
            } else {
                Ok(())
            }
        });
        let k = NullKernel("k".into());
        let g = |b| Geometry {
            grid: [1, 1, 1],
            block: [b, 1, 1],
            shared_memory_bytes: 0,
            local_args: Default::default(),
        };
        assert!(dev
            .launch_on(Queue::DEFAULT, &k, &g(256), &[], false)
            .is_ok());
        match dev.launch_on(Queue::DEFAULT, &k, &g(512), &[], false) {
            Err(BackendError::Launch { message, .. }) => assert_eq!(message, "too big"),
            other => panic!("expected a launch error, got {:?}", other.map(|_| ())),
        }
        assert!(dev.alloc(4).is_err());
    }
}
