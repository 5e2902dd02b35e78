//! [`CudaKernel`]: a loaded module and its kernel function.

use crate::compile::{Compiled, ImageKind};
use crate::error::driver_message;
use cudarc::driver::{result, sys, CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;
use kw_core::backend::{BackendError, CompiledKernel};
use std::any::Any;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Dynamic shared memory a kernel may use without raising its attribute.
pub(crate) const DEFAULT_DYNAMIC_SHARED: u32 = 48 * 1024;

/// Where a compiled kernel's time went.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CompileStats {
    /// NVRTC: create, compile, fetch the image.
    pub nvrtc_ms: f64,
    /// `cuModuleLoadData` + `cuModuleGetFunction` (+ JIT for PTX).
    pub load_ms: f64,
    /// The image's size in bytes.
    pub image_bytes: usize,
    /// The image came from the on-disk compile cache (no NVRTC ran; `nvrtc_ms` is 0).
    pub from_cache: bool,
}

/// A kernel compiled by NVRTC and loaded into a device's context.
pub struct CudaKernel {
    name: String,
    lowered_name: String,
    function: CudaFunction,
    module: Arc<CudaModule>,
    ctx: Arc<CudaContext>,
    /// Parameter sizes in bytes, where the driver reports them (CUDA 12.4+).
    param_sizes: Option<Vec<usize>>,
    /// The dynamic shared memory limit currently set on the function.
    dynamic_shared_limit: AtomicU32,
    kind: ImageKind,
    image: Vec<u8>,
    options: String,
    log: String,
    stats: CompileStats,
}

impl CudaKernel {
    /// Loads `compiled` into `ctx` and finds the function.
    pub(crate) fn load(
        ctx: &Arc<CudaContext>,
        name: &str,
        file: &str,
        compiled: Compiled,
        driver_raw_version: i32,
    ) -> Result<CudaKernel, BackendError> {
        let start = Instant::now();
        let load_err = |what: &str, e| BackendError::Compile {
            kernel: name.to_string(),
            file: file.to_string(),
            options: compiled.options.clone(),
            reason: format!("{what}: {}", driver_message(e)),
            log: compiled.log.clone(),
        };
        let module = ctx
            .load_module(Ptx::from_binary(compiled.image.clone()))
            .map_err(|e| load_err("cuModuleLoadData", e))?;
        let function = module.load_function(&compiled.lowered_name).map_err(|e| {
            load_err(
                &format!("cuModuleGetFunction({})", compiled.lowered_name),
                e,
            )
        })?;
        let load_ms = start.elapsed().as_secs_f64() * 1e3;
        let param_sizes = if driver_raw_version >= 12040 {
            Some(param_sizes(function.cu_function()))
        } else {
            None
        };
        Ok(CudaKernel {
            name: name.to_string(),
            lowered_name: compiled.lowered_name,
            function,
            module,
            ctx: ctx.clone(),
            param_sizes,
            dynamic_shared_limit: AtomicU32::new(DEFAULT_DYNAMIC_SHARED),
            kind: compiled.kind,
            stats: CompileStats {
                nvrtc_ms: compiled.nvrtc_ms,
                load_ms,
                image_bytes: compiled.image.len(),
                from_cache: false,
            },
            image: compiled.image,
            options: compiled.options,
            log: compiled.log,
        })
    }

    /// Marks a kernel loaded from a cached image.
    pub(crate) fn loaded_from_cache(mut self) -> CudaKernel {
        self.stats.from_cache = true;
        self
    }

    /// The loaded module (its `__constant__` symbols are written through it).
    pub fn module(&self) -> &Arc<CudaModule> {
        &self.module
    }

    /// The cudarc function (for raw launches through cudarc).
    pub fn function(&self) -> &CudaFunction {
        &self.function
    }

    /// The raw driver handle.
    pub fn cu_function(&self) -> sys::CUfunction {
        self.function.cu_function()
    }

    /// The name the function was looked up by (mangled for C++ kernels).
    pub fn lowered_name(&self) -> &str {
        &self.lowered_name
    }

    /// CUBIN or PTX.
    pub fn image_kind(&self) -> ImageKind {
        self.kind
    }

    /// The loaded image (CUBIN bytes or NUL-terminated PTX), e.g. for an on-disk cache.
    pub fn image(&self) -> &[u8] {
        &self.image
    }

    /// The NVRTC options used.
    pub fn options(&self) -> &str {
        &self.options
    }

    /// NVRTC's log (warnings).
    pub fn log(&self) -> &str {
        &self.log
    }

    /// Where compile time went.
    pub fn stats(&self) -> CompileStats {
        self.stats
    }

    /// Parameter sizes in bytes, where the driver reports them.
    pub fn param_sizes(&self) -> Option<&[usize]> {
        self.param_sizes.as_deref()
    }

    pub(crate) fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// Raises the function's dynamic shared memory limit to `bytes` if it is below.
    #[inline]
    pub(crate) fn ensure_dynamic_shared(&self, bytes: u32) -> Result<(), String> {
        if bytes <= self.dynamic_shared_limit.load(Ordering::Relaxed) {
            return Ok(());
        }
        let value = i32::try_from(bytes).map_err(|_| format!("{bytes} bytes of shared memory"))?;
        // SAFETY: a live function handle of a loaded module; the attribute takes an int.
        unsafe {
            result::function::set_function_attribute(
                self.cu_function(),
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                value,
            )
        }
        .map_err(|e| {
            format!(
                "raising the dynamic shared memory limit to {bytes} bytes: {}",
                driver_message(e)
            )
        })?;
        self.dynamic_shared_limit
            .fetch_max(bytes, Ordering::Relaxed);
        Ok(())
    }
}

/// Parameter sizes from `cuFuncGetParamInfo` (CUDA 12.4+), stopping at the first index the
/// driver rejects.
fn param_sizes(f: sys::CUfunction) -> Vec<usize> {
    let mut sizes = Vec::new();
    for index in 0..4096usize {
        let (mut offset, mut size) = (0usize, 0usize);
        // SAFETY: a live function handle and two valid out-pointers; the caller checked that
        // the driver (12.4+) has this entry point.
        let rc = unsafe { sys::cuFuncGetParamInfo(f, index, &mut offset, &mut size) };
        if rc != sys::CUresult::CUDA_SUCCESS {
            break;
        }
        sizes.push(size);
    }
    sizes
}

impl CompiledKernel for CudaKernel {
    fn name(&self) -> &str {
        &self.name
    }

    fn param_count(&self) -> Option<usize> {
        self.param_sizes.as_ref().map(Vec::len)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl std::fmt::Debug for CudaKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaKernel")
            .field("name", &self.name)
            .field("lowered_name", &self.lowered_name)
            .field("kind", &self.kind)
            .field("param_sizes", &self.param_sizes)
            .finish()
    }
}
