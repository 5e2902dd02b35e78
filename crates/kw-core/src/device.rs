//! [`DeviceInfo`]: what the runtime, captures and wisdom files know about a device.

use crate::eval::Scope;
use crate::expr::DeviceAttr;
use crate::value::Value;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The kind of backend a device (or a kernel definition) belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// CUDA (driver API + NVRTC).
    Cuda,
    /// OpenCL.
    Opencl,
}

impl BackendKind {
    /// The JSON / command-line name (`cuda`, `opencl`).
    pub fn as_str(self) -> &'static str {
        match self {
            BackendKind::Cuda => "cuda",
            BackendKind::Opencl => "opencl",
        }
    }
}

impl fmt::Display for BackendKind {
    /// The human name (`CUDA`, `OpenCL`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BackendKind::Cuda => "CUDA",
            BackendKind::Opencl => "OpenCL",
        })
    }
}

/// A description of one device: identity (for wisdom selection) and limits (for expressions
/// and geometry checks). Serialised into captures and wisdom records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// The backend the device was opened with.
    pub backend: BackendKind,
    /// The device name as the driver reports it (`NVIDIA H100 80GB HBM3`).
    pub name: String,
    /// The vendor (`NVIDIA Corporation`, `Portable Computing Language`).
    pub vendor: String,
    /// A stable architecture string: `sm_90` for CUDA (and NVIDIA OpenCL devices), the
    /// device's build target for other OpenCL devices (PoCL: `pthread-x86_64-...-haswell`;
    /// AMD: `gfx90a`), else the device name.
    pub architecture: String,
    /// The driver version.
    pub driver_version: String,
    /// The compiler version (NVRTC version, or the OpenCL C version of the device).
    pub compiler_version: String,
    /// The device UUID, where the backend reports one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// Multiprocessors (CUDA) or compute units (OpenCL).
    pub compute_units: u32,
    /// Global memory in bytes.
    pub global_memory_bytes: u64,
    /// The largest single buffer the device can allocate, in bytes (OpenCL's
    /// `CL_DEVICE_MAX_MEM_ALLOC_SIZE`, often a quarter of global memory); 0 where the backend
    /// has no such limit below global memory (CUDA) or it is unknown.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub max_alloc_bytes: u64,
    /// Maximum threads (work-items) in one block (work-group).
    pub max_threads_per_block: u32,
    /// Maximum block (work-group) size per axis.
    pub max_block_dims: [u32; 3],
    /// Shared (local) memory available to one block, in bytes.
    pub max_shared_memory_per_block: u64,
    /// Warp / wavefront size (1 where the backend has no such notion, e.g. CPU OpenCL).
    pub warp_size: u32,
    /// Compute capability as (major, minor), where the device has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_capability: Option<(u32, u32)>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl DeviceInfo {
    /// The value of a device attribute, as expressions see it (`device.warp_size`).
    pub fn attr(&self, attr: DeviceAttr) -> Value {
        let int = |v: u64| Value::Int(i64::try_from(v).unwrap_or(i64::MAX));
        match attr {
            DeviceAttr::MaxThreadsPerBlock => int(self.max_threads_per_block.into()),
            DeviceAttr::MaxBlockDimX => int(self.max_block_dims[0].into()),
            DeviceAttr::MaxBlockDimY => int(self.max_block_dims[1].into()),
            DeviceAttr::MaxBlockDimZ => int(self.max_block_dims[2].into()),
            DeviceAttr::MaxSharedMemoryPerBlock => int(self.max_shared_memory_per_block),
            DeviceAttr::MultiprocessorCount => int(self.compute_units.into()),
            DeviceAttr::WarpSize => int(self.warp_size.into()),
            DeviceAttr::ComputeCapability => int(self
                .compute_capability
                .map_or(0, |(ma, mi)| u64::from(ma) * 10 + u64::from(mi))),
            DeviceAttr::GlobalMemoryBytes => int(self.global_memory_bytes),
        }
    }

    /// A short one-line description: `OpenCL: pthread-haswell (pthread-x86_64-..., 2 CUs)`.
    pub fn summary(&self) -> String {
        format!(
            "{}: {} ({}, {} compute units)",
            self.backend, self.name, self.architecture, self.compute_units
        )
    }
}

impl Scope for DeviceInfo {
    fn device(&self, attr: DeviceAttr) -> Option<Value> {
        Some(self.attr(attr))
    }
}

#[cfg(test)]
pub(crate) fn test_device() -> DeviceInfo {
    DeviceInfo {
        backend: BackendKind::Opencl,
        name: "Test Device".into(),
        vendor: "Test Vendor".into(),
        architecture: "test_arch".into(),
        driver_version: "1.0".into(),
        compiler_version: "OpenCL C 1.2".into(),
        uuid: None,
        compute_units: 4,
        global_memory_bytes: 1 << 30,
        max_alloc_bytes: 0,
        max_threads_per_block: 1024,
        max_block_dims: [1024, 1024, 64],
        max_shared_memory_per_block: 48 * 1024,
        warp_size: 32,
        compute_capability: Some((8, 6)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::Expr;

    #[test]
    fn attributes_are_visible_to_expressions() {
        let d = test_device();
        for a in DeviceAttr::ALL {
            assert!(d.attr(a).as_int().is_some(), "{a:?}");
        }
        assert_eq!(d.attr(DeviceAttr::ComputeCapability), Value::Int(86));
        let e = Expr::parse("device.max_threads_per_block // device.warp_size").unwrap();
        assert_eq!(e.eval(&d).unwrap(), Value::Int(32));
    }

    #[test]
    fn json_round_trip_and_names() {
        let d = test_device();
        let text = serde_json::to_string(&d).unwrap();
        assert!(text.contains(r#""backend":"opencl""#), "{text}");
        assert_eq!(serde_json::from_str::<DeviceInfo>(&text).unwrap(), d);
        assert_eq!(BackendKind::Cuda.to_string(), "CUDA");
        assert_eq!(BackendKind::Opencl.as_str(), "opencl");
    }
}
