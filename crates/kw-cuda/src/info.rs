//! Describing a CUDA device as a [`DeviceInfo`].

use crate::error::api;
use crate::probe::DriverVersion;
use cudarc::driver::{result, sys};
use kw_core::backend::BackendError;
use kw_core::device::{BackendKind, DeviceInfo};

/// `sm_90` for compute capability 9.0.
pub fn sm_arch(major: u32, minor: u32) -> String {
    format!("sm_{major}{minor}")
}

/// `GPU-5d6c...`, the form `nvidia-smi -L` prints.
pub fn format_uuid(bytes: &[u8; 16]) -> String {
    let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        hex[0..4].concat(),
        hex[4..6].concat(),
        hex[6..8].concat(),
        hex[8..10].concat(),
        hex[10..16].concat()
    )
}

/// Reads device `ordinal`'s description. The driver must be initialised.
pub(crate) fn describe(
    ordinal: usize,
    driver: DriverVersion,
    compiler_version: &str,
) -> Result<DeviceInfo, BackendError> {
    let index = i32::try_from(ordinal).map_err(|_| BackendError::Api {
        op: "cuDeviceGet",
        message: format!("device index {ordinal} is out of range"),
    })?;
    let dev = result::device::get(index).map_err(api("cuDeviceGet"))?;
    let attr = |a: sys::CUdevice_attribute| -> Result<u32, BackendError> {
        // SAFETY: `dev` came from cuDeviceGet on an initialised driver.
        let v = unsafe { result::device::get_attribute(dev, a) }
            .map_err(api("cuDeviceGetAttribute"))?;
        Ok(u32::try_from(v).unwrap_or(0))
    };
    use sys::CUdevice_attribute as A;
    let major = attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
    let minor = attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
    let uuid = result::device::get_uuid(dev).map_err(api("cuDeviceGetUuid"))?;
    let uuid_bytes: [u8; 16] = uuid.bytes.map(|b| b as u8);
    // SAFETY: as above.
    let memory = unsafe { result::device::total_mem(dev) }.map_err(api("cuDeviceTotalMem"))?;
    // Kernels may use the opt-in maximum: the backend raises each kernel's dynamic shared
    // memory limit when a launch asks for more than the default 48 KiB.
    let shared = attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?
        .max(attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?);
    Ok(DeviceInfo {
        backend: BackendKind::Cuda,
        name: result::device::get_name(dev).map_err(api("cuDeviceGetName"))?,
        vendor: "NVIDIA Corporation".into(),
        architecture: sm_arch(major, minor),
        driver_version: driver.to_string(),
        compiler_version: compiler_version.to_string(),
        uuid: Some(format_uuid(&uuid_bytes)),
        compute_units: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        global_memory_bytes: memory as u64,
        max_alloc_bytes: 0,
        max_threads_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        max_block_dims: [
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
        ],
        max_shared_memory_per_block: u64::from(shared),
        warp_size: attr(A::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?,
        compute_capability: Some((major, minor)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_uuids_are_formatted_like_the_tools() {
        assert_eq!(sm_arch(9, 0), "sm_90");
        assert_eq!(sm_arch(8, 6), "sm_86");
        let b: [u8; 16] = std::array::from_fn(|i| i as u8 * 17);
        assert_eq!(format_uuid(&b), "GPU-00112233-4455-6677-8899-aabbccddeeff");
    }
}
