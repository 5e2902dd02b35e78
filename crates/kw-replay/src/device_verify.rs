//! Verification on the device: a comparison kernel (OpenCL `kernels/compare.cl`, CUDA
//! `kernels/compare.cu`) counts the elements of an output that differ from the reference
//! (uploaded once), finds the first and the largest error, with the semantics of the host
//! comparison ([`crate::verify`]): integers exactly, floats within the buffer's bound
//! (`atol + rtol * magnitude`, computed once on the host), NaN equal to NaN unless the
//! tolerance says `nan_is_error`. One work-group per slice writes a partial
//! triple; a second one-group launch combines them, and the host reads 24 bytes.
//!
//! The kernels compile through the device's compile cache like any kernel. A device whose
//! compiler rejects them (e.g. OpenCL without `cl_khr_fp64`) verifies on the host.

use crate::verify::{Summary, Tolerance};
use kw_core::backend::{CompileRequest, CompiledKernel, Device, DeviceMemory, KernelArg};
use kw_core::{
    backend::BackendError, device::BackendKind, kernel_def::eval::Geometry,
    kernel_def::KernelSource, scalar::ScalarType,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

const OPENCL_SOURCE: &str = include_str!("../kernels/compare.cl");
const CUDA_SOURCE: &str = include_str!("../kernels/compare.cu");
/// Work-groups per compute unit of the first pass.
const GROUPS_PER_UNIT: u32 = 8;
/// The most work-groups of the first pass.
const MAX_GROUPS: u32 = 4096;

/// The type code the kernels' `KW_TYPE` define takes.
fn type_code(ty: ScalarType) -> u32 {
    match ty {
        ScalarType::F32 => 0,
        ScalarType::F64 => 1,
        ScalarType::I8 => 2,
        ScalarType::U8 => 3,
        ScalarType::I16 => 4,
        ScalarType::U16 => 5,
        ScalarType::I32 => 6,
        ScalarType::U32 => 7,
        ScalarType::I64 => 8,
        ScalarType::U64 => 9,
    }
}

/// A comparison kernel, or why it did not compile.
type Compiled = Result<Arc<dyn CompiledKernel>, String>;

/// Compares device buffers with the comparison kernels of one device.
pub struct DeviceComparer {
    device: Arc<dyn Device>,
    source: KernelSource,
    wg: u32,
    groups: u32,
    /// Element type -> its comparison kernel (or why it did not compile).
    kernels: Mutex<HashMap<ScalarType, Compiled>>,
    reduce: Arc<dyn CompiledKernel>,
    partials: Box<dyn DeviceMemory>,
    result: Box<dyn DeviceMemory>,
    /// Held from the first launch to the read of the result: the partial and result buffers
    /// are shared by every comparison.
    busy: Mutex<()>,
}

impl DeviceComparer {
    /// Compiles the combining kernel and allocates the partial results; the per-type
    /// comparison kernels compile on first use. `Err` when the device cannot run them.
    pub fn new(device: Arc<dyn Device>) -> Result<DeviceComparer, BackendError> {
        let info = device.info();
        let (file, text) = match info.backend {
            BackendKind::Cuda => ("kw_compare.cu", CUDA_SOURCE),
            _ => ("kw_compare.cl", OPENCL_SOURCE),
        };
        // A power of two no larger than the device allows, at most 256.
        let limit = info.max_threads_per_block.clamp(1, 256);
        let wg = 1u32 << (31 - limit.leading_zeros());
        let groups = (info.compute_units.max(1) * GROUPS_PER_UNIT).clamp(1, MAX_GROUPS);
        let source = KernelSource {
            file_name: file.into(),
            text: text.into(),
            headers: vec![],
        };
        let reduce = compile(device.as_ref(), &source, "kw_compare_reduce", wg, 3)?;
        let partials = device.alloc(groups as usize * 24)?;
        let result = device.alloc(24)?;
        Ok(DeviceComparer {
            device,
            source,
            wg,
            groups,
            kernels: Mutex::new(HashMap::new()),
            reduce,
            partials,
            result,
            busy: Mutex::new(()),
        })
    }

    /// The comparison kernel of `ty`, compiled once.
    pub fn kernel(&self, ty: ScalarType) -> Result<Arc<dyn CompiledKernel>, String> {
        let mut k = self.kernels.lock().unwrap_or_else(PoisonError::into_inner);
        k.entry(ty)
            .or_insert_with(|| {
                compile(
                    self.device.as_ref(),
                    &self.source,
                    "kw_compare",
                    self.wg,
                    type_code(ty),
                )
                .map_err(|e| e.to_string())
            })
            .clone()
    }

    /// Compares the first `len` elements of `got` and `want` (device buffers of elements of
    /// `ty`; `magnitude`: the reference's, [`crate::verify::magnitude`]): the count of
    /// differing elements, the first and the largest error, as
    /// [`crate::verify::summarise`] computes them on the host.
    pub fn compare(
        &self,
        ty: ScalarType,
        got: &dyn DeviceMemory,
        want: &dyn DeviceMemory,
        len: usize,
        tol: Tolerance,
        magnitude: f64,
    ) -> Result<Summary, BackendError> {
        let kernel = self.kernel(ty).map_err(|message| BackendError::Api {
            op: "compiling the comparison kernel",
            message,
        })?;
        let n = len as u64;
        let needed = (n.div_ceil(u64::from(self.wg))).max(1);
        let groups = u32::try_from(needed.min(u64::from(self.groups))).unwrap_or(self.groups);
        let geometry = |g: u32| Geometry {
            grid: [g, 1, 1],
            block: [self.wg, 1, 1],
            shared_memory_bytes: 0,
            local_args: Default::default(),
        };
        let partials_len = self.partials.len_bytes() / 8;
        let _busy = self.busy.lock().unwrap_or_else(PoisonError::into_inner);
        self.device.launch(
            kernel.as_ref(),
            &geometry(groups),
            &[
                KernelArg::device_buffer(got, ty, len),
                KernelArg::device_buffer(want, ty, len),
                KernelArg::from(n),
                KernelArg::from(tol.bound(magnitude)),
                KernelArg::from(u32::from(tol.nan_equal())),
                KernelArg::device_buffer(self.partials.as_ref(), ScalarType::U64, partials_len),
            ],
        )?;
        self.device.launch(
            self.reduce.as_ref(),
            &geometry(1),
            &[
                KernelArg::device_buffer(self.partials.as_ref(), ScalarType::U64, partials_len),
                KernelArg::from(groups),
                KernelArg::device_buffer(self.result.as_ref(), ScalarType::U64, 3),
            ],
        )?;
        let mut bytes = [0u8; 24];
        self.result.read(0, &mut bytes)?;
        let word = |i: usize| u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().expect("8"));
        let first = word(1);
        Ok(Summary {
            count: word(0),
            first: (first != u64::MAX).then_some(first),
            max_error: f64::from_bits(word(2)),
        })
    }
}

fn compile(
    device: &dyn Device,
    source: &KernelSource,
    name: &str,
    wg: u32,
    ty: u32,
) -> Result<Arc<dyn CompiledKernel>, BackendError> {
    let defines = vec![
        ("KW_TYPE".to_string(), ty.to_string()),
        ("KW_WG".to_string(), wg.to_string()),
    ];
    device.compile(&CompileRequest {
        source,
        kernel_name: name,
        defines: &defines,
        flags: &[],
        include_dirs: &[],
        template_args: &[],
    })
}
