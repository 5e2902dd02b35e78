//! Enumerating OpenCL devices and describing them as [`DeviceInfo`]s.

use crate::error::{api, no_platform, unavailable};
use kw_core::backend::BackendError;
use kw_core::{device::BackendKind, device::DeviceInfo};
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU};
use opencl3::platform::get_platforms;
use std::sync::OnceLock;

/// `CL_DEVICE_WARP_SIZE_NV`.
const CL_DEVICE_WARP_SIZE_NV: u32 = 0x4003;

/// Every device of every platform with its description: GPUs and accelerators first, then
/// CPUs, each in platform order then device order (so that the first OpenCL device of a
/// machine with a GPU is a GPU, whichever platform the ICD loader lists first); enumerated
/// once per process. PoCL's first initialisation is not safe against
/// concurrent queries (it crashed in `clGetDeviceInfo` under parallel tests), so every query
/// happens here, once, under the `OnceLock`.
pub(crate) fn devices() -> Result<&'static [(Device, DeviceInfo)], BackendError> {
    static DEVICES: OnceLock<Result<Vec<(Device, DeviceInfo)>, BackendError>> = OnceLock::new();
    DEVICES
        .get_or_init(|| {
            all_devices()?
                .into_iter()
                .map(|d| device_info(&d).map(|i| (d, i)))
                .collect()
        })
        .as_ref()
        .map(Vec::as_slice)
        .map_err(Clone::clone)
}

/// Every device of every platform, CPUs last. Errors with "no OpenCL platform" when the
/// library, a platform or a device is missing.
fn all_devices() -> Result<Vec<Device>, BackendError> {
    let platforms = get_platforms().map_err(|e| {
        unavailable(&e).unwrap_or_else(|| no_platform(&format!("clGetPlatformIDs failed: {e}")))
    })?;
    if platforms.is_empty() {
        return Err(no_platform("no platform is installed"));
    }
    let mut out = Vec::new();
    for p in &platforms {
        // A platform without devices answers CL_DEVICE_NOT_FOUND: skip it.
        if let Ok(ids) = p.get_devices(CL_DEVICE_TYPE_ALL) {
            out.extend(ids.into_iter().map(Device::new));
        }
    }
    if out.is_empty() {
        return Err(no_platform("the installed platforms have no device"));
    }
    // A stable sort: the order within each group stays the platforms' own.
    out.sort_by_key(is_cpu);
    Ok(out)
}

/// Whether the device is a CPU (an unanswered query counts as not one).
fn is_cpu(d: &Device) -> bool {
    d.dev_type().is_ok_and(|t| t & CL_DEVICE_TYPE_CPU != 0)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The description of one device.
pub(crate) fn device_info(d: &Device) -> Result<DeviceInfo, BackendError> {
    let q = |op: &'static str| move |e| api(op, e);
    let name = d.name().map_err(q("CL_DEVICE_NAME"))?.trim().to_string();
    let extensions = d.extensions().unwrap_or_default();
    let version = d.version().unwrap_or_default();
    let nv = extensions.contains("cl_nv_device_attribute_query");
    let amd = extensions.contains("cl_amd_device_attribute_query");
    let compute_capability = if nv {
        match (
            d.compute_capability_major_nv(),
            d.compute_capability_minor_nv(),
        ) {
            (Ok(a), Ok(b)) => Some((a, b)),
            _ => None,
        }
    } else {
        None
    };
    let warp_size = if nv {
        d.get_data(CL_DEVICE_WARP_SIZE_NV)
            .ok()
            .and_then(|b| Some(u32::from_ne_bytes(b.get(..4)?.try_into().ok()?)))
            .unwrap_or(32)
    } else if amd {
        d.wavefront_width_amd().unwrap_or(64)
    } else {
        1
    };
    let architecture = if let Some((a, b)) = compute_capability {
        format!("sm_{a}{b}")
    } else if let Some(pos) = version.find("HSTR: ") {
        // PoCL names its build target: `OpenCL 3.0 PoCL HSTR: pthread-x86_64-...-haswell`.
        version[pos + 6..]
            .split_whitespace()
            .next()
            .unwrap_or(&name)
            .to_string()
    } else {
        name.clone()
    };
    let uuid = if extensions.contains("cl_khr_device_uuid") {
        d.uuid_khr().ok().map(|u| hex(&u))
    } else {
        None
    };
    let sizes = d
        .max_work_item_sizes()
        .map_err(q("CL_DEVICE_MAX_WORK_ITEM_SIZES"))?;
    let dim = |i: usize| {
        sizes
            .get(i)
            .map_or(1, |&s| u32::try_from(s).unwrap_or(u32::MAX))
    };
    Ok(DeviceInfo {
        backend: BackendKind::Opencl,
        vendor: d
            .vendor()
            .map_err(q("CL_DEVICE_VENDOR"))?
            .trim()
            .to_string(),
        driver_version: d.driver_version().unwrap_or_default().trim().to_string(),
        compiler_version: d.opencl_c_version().unwrap_or_default().trim().to_string(),
        uuid,
        compute_units: d
            .max_compute_units()
            .map_err(q("CL_DEVICE_MAX_COMPUTE_UNITS"))?,
        global_memory_bytes: d
            .global_mem_size()
            .map_err(q("CL_DEVICE_GLOBAL_MEM_SIZE"))?,
        max_alloc_bytes: d.max_mem_alloc_size().unwrap_or(0),
        max_threads_per_block: u32::try_from(
            d.max_work_group_size()
                .map_err(q("CL_DEVICE_MAX_WORK_GROUP_SIZE"))?,
        )
        .unwrap_or(u32::MAX),
        max_block_dims: [dim(0), dim(1), dim(2)],
        max_shared_memory_per_block: d.local_mem_size().map_err(q("CL_DEVICE_LOCAL_MEM_SIZE"))?,
        warp_size,
        compute_capability,
        architecture,
        name,
    })
}
