//! `kw_device_*`: a device chosen by kernel-wisdom (`KW_DEVICE`-style selector) or the
//! application's own: its OpenCL context and queue, or its CUDA context.

use crate::ffi::{copy_out, need_out, opt_text, put};
use crate::handles::{Kind, Registry};
use crate::status::{guard, CError};
use crate::types::backend_code;
use kernel_wisdom::interop::cuda::CudaDevice;
use kernel_wisdom::interop::opencl::ClDevice;
use kernel_wisdom::{list_devices, open_default_device, open_device, Device, DeviceSelector};
use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

/// The live devices.
pub static DEVICES: Registry<Arc<dyn Device>> = Registry::new(Kind::Device);

fn register(out: *mut *mut c_void, device: Arc<dyn Device>, what: &str) -> Result<(), CError> {
    // SAFETY: `out` was checked non-null by the caller before any work.
    unsafe { put(out, DEVICES.insert(device), what) }
}

/// `kw_device_count`: how many devices kernel-wisdom can open (CUDA first, then OpenCL).
#[no_mangle]
pub unsafe extern "C" fn kw_device_count(out: *mut usize) -> c_int {
    guard(|| {
        need_out(out, "kw_device_count")?;
        let n = list_devices()?.len();
        // SAFETY: checked non-null above.
        unsafe { put(out, n, "kw_device_count") }
    })
}

/// `kw_device_open`: opens a device by selector (an index over all backends or a name
/// substring); a null selector means `KW_DEVICE` (device 0 when unset). The device has its
/// own context and queue / stream.
#[no_mangle]
pub unsafe extern "C" fn kw_device_open(out: *mut *mut c_void, selector: *const c_char) -> c_int {
    guard(|| {
        need_out(out, "kw_device_open")?;
        // SAFETY: null or a string, as the header requires.
        let device = match unsafe { opt_text(selector, "selector") }? {
            Some(s) => open_device(&DeviceSelector::parse(s))?,
            None => open_default_device()?,
        };
        register(out, device, "kw_device_open")
    })
}

/// `kw_device_attach_opencl`: the application's `cl_context` and `cl_command_queue`
/// (retained, released when the device and its kernels are freed).
#[no_mangle]
pub unsafe extern "C" fn kw_device_attach_opencl(
    out: *mut *mut c_void,
    context: *mut c_void,
    queue: *mut c_void,
) -> c_int {
    guard(|| {
        need_out(out, "kw_device_attach_opencl")?;
        if context.is_null() || queue.is_null() {
            return Err(CError::new(
                crate::status::Status::Null,
                "kw_device_attach_opencl: a null cl_context or cl_command_queue",
            ));
        }
        // SAFETY: live handles, as the header requires (null ones are refused inside).
        let device = unsafe { ClDevice::attach_raw(context.cast(), queue.cast()) }?;
        register(out, Arc::new(device), "kw_device_attach_opencl")
    })
}

/// `kw_device_attach_cuda_current`: the calling thread's current CUDA context.
#[no_mangle]
pub unsafe extern "C" fn kw_device_attach_cuda_current(out: *mut *mut c_void) -> c_int {
    guard(|| {
        need_out(out, "kw_device_attach_cuda_current")?;
        let device = CudaDevice::attach_current()?;
        register(out, Arc::new(device), "kw_device_attach_cuda_current")
    })
}

/// `kw_device_attach_cuda_primary`: the primary context of CUDA device `ordinal` (the
/// context the CUDA runtime uses).
#[no_mangle]
pub unsafe extern "C" fn kw_device_attach_cuda_primary(
    out: *mut *mut c_void,
    ordinal: c_int,
) -> c_int {
    guard(|| {
        need_out(out, "kw_device_attach_cuda_primary")?;
        let ordinal = usize::try_from(ordinal).map_err(|_| {
            CError::new(
                crate::status::Status::Invalid,
                format!("CUDA device ordinal {ordinal} is negative"),
            )
        })?;
        let device = CudaDevice::attach_primary(ordinal)?;
        register(out, Arc::new(device), "kw_device_attach_cuda_primary")
    })
}

/// `kw_device_free` (null: nothing to do). Kernels made on it keep it alive.
#[no_mangle]
pub extern "C" fn kw_device_free(d: *mut c_void) -> c_int {
    guard(|| DEVICES.remove(d))
}

/// `kw_device_name`: the device's name into `buf` (`cap` bytes with the NUL).
#[no_mangle]
pub unsafe extern "C" fn kw_device_name(d: *const c_void, buf: *mut c_char, cap: usize) -> c_int {
    guard(|| {
        let dev = DEVICES.get(d)?;
        // SAFETY: `buf` has `cap` bytes, as the header requires.
        unsafe { copy_out(&dev.info().name, buf, cap, "kw_device_name") }
    })
}

/// `kw_device_backend`: `KW_BACKEND_CUDA` or `KW_BACKEND_OPENCL`.
#[no_mangle]
pub unsafe extern "C" fn kw_device_backend(d: *const c_void, out: *mut c_int) -> c_int {
    guard(|| {
        let dev = DEVICES.get(d)?;
        // SAFETY: a writable int, as the header requires.
        unsafe { put(out, backend_code(dev.info().backend), "kw_device_backend") }
    })
}

/// `kw_device_synchronize`: waits for the device's own queue or stream.
#[no_mangle]
pub extern "C" fn kw_device_synchronize(d: *const c_void) -> c_int {
    guard(|| Ok(DEVICES.get(d)?.synchronize()?))
}
