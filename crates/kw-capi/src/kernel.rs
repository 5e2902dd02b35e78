//! `kw_kernel_*`: a tunable kernel on a device, launched on the application's stream or
//! queue with its device pointers / `cl_mem`s and scalars.

use crate::device::DEVICES;
use crate::ffi::{copy_out, need_out, opt_text, put, slice};
use crate::handles::{Kind, Registry};
use crate::status::{guard, CError, Status};
use crate::types::{KwArg, KwValue, ARG_BUFFER, ARG_SCALAR, COUNT_AUTO, TYPES};
use kernel_wisdom::LaunchOptions;
use kernel_wisdom::{BackendKind, KernelArg, Queue, RawMem, ScalarType, WisdomKernel};
use kw_core::backend::Mem;
use kw_core::scalar::ScalarValue;
use std::ffi::{c_char, c_int, c_void};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The live kernels.
pub static KERNELS: Registry<WisdomKernel> = Registry::new(Kind::Kernel);

/// `kw_kernel_create`: builds the builder's definition for the device (every problem is
/// reported at once) and binds it; `wisdom_dir` (may be null: `./wisdom`) is the
/// application's wisdom directory, searched after `KW_WISDOM_PATH`.
#[no_mangle]
pub unsafe extern "C" fn kw_kernel_create(
    out: *mut *mut c_void,
    builder: *const c_void,
    device: *const c_void,
    wisdom_dir: *const c_char,
) -> c_int {
    guard(|| {
        need_out(out, "kw_kernel_create")?;
        let b = crate::builder::BUILDERS.get(builder)?;
        let dev = DEVICES.get(device)?;
        // SAFETY: null or a string, as the header requires.
        let dir = unsafe { opt_text(wisdom_dir, "wisdom_dir") }?;
        let def = b
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .build_for(dev.as_ref().as_ref())?;
        let mut kernel = WisdomKernel::new(def, Arc::clone(&dev))?;
        if let Some(dir) = dir {
            kernel = kernel.with_wisdom_dir(dir);
        }
        // SAFETY: checked non-null above.
        unsafe { put(out, KERNELS.insert(kernel), "kw_kernel_create") }
    })
}

/// `kw_kernel_free` (null: nothing to do).
#[no_mangle]
pub extern "C" fn kw_kernel_free(k: *mut c_void) -> c_int {
    guard(|| KERNELS.remove(k))
}

fn scalar(ty: ScalarType, v: KwValue) -> ScalarValue {
    // SAFETY: every member of the union is plain data of at most 8 bytes, all initialised
    // by C (a narrower member reads the low bytes the caller wrote through that member).
    unsafe {
        match ty {
            ScalarType::I8 => ScalarValue::new(v.i8),
            ScalarType::I16 => ScalarValue::new(v.i16),
            ScalarType::I32 => ScalarValue::new(v.i32),
            ScalarType::I64 => ScalarValue::new(v.i64),
            ScalarType::U8 => ScalarValue::new(v.u8),
            ScalarType::U16 => ScalarValue::new(v.u16),
            ScalarType::U32 => ScalarValue::new(v.u32),
            ScalarType::U64 => ScalarValue::new(v.u64),
            ScalarType::F32 => ScalarValue::new(v.f32),
            ScalarType::F64 => ScalarValue::new(v.f64),
        }
    }
}

/// One C argument as a launch argument for a kernel on a `backend` device.
///
/// # Safety
/// A buffer's `ptr` is live memory of the kernel's device (of at least `count` elements).
#[inline]
unsafe fn arg(
    kernel: &WisdomKernel,
    backend: BackendKind,
    index: usize,
    a: &KwArg,
) -> Result<KernelArg<'static>, CError> {
    let ty = match usize::try_from(a.elem_type).ok().and_then(|i| TYPES.get(i)) {
        Some(&ty) => ty,
        None => {
            return Err(bad_arg(
                kernel,
                index,
                Status::Invalid,
                bad_type(a.elem_type),
            ))
        }
    };
    match a.kind {
        ARG_SCALAR => Ok(KernelArg::Scalar(scalar(ty, a.value))),
        ARG_BUFFER => {
            // SAFETY: as the caller promised.
            let (raw, len) = unsafe { raw_buffer(backend, a.ptr, ty, a.count) }
                .map_err(|(status, what)| bad_arg(kernel, index, status, what))?;
            // A count larger than the allocation is refused: the kernel would read and write
            // past it (a crash, or another buffer's contents). Where the driver cannot tell
            // (memory it does not report a size for), the count is trusted. A count of 0
            // needs no memory: its pointer is never handed to the driver (a C caller may
            // pass any non-null pointer for an empty vector).
            if a.count != COUNT_AUTO && len > 0 {
                // CUDA only: an OpenCL size query reads the cl_mem's own field (cheap), and a
                // cl_mem released and created again smaller often gets the same handle.
                let key = confirmed_key(backend, a.ptr, len * ty.size());
                let slot = &CONFIRMED[(key >> (64 - CONFIRMED_BITS)) as usize];
                let remembered = backend == BackendKind::Cuda;
                if !remembered || slot.load(Ordering::Relaxed) != key {
                    // SAFETY: as the caller promised (a live buffer of this device).
                    match unsafe { available_elements(backend, a.ptr, ty) } {
                        Ok(held) if len > held => {
                            return Err(bad_arg(
                                kernel,
                                index,
                                Status::Invalid,
                                format!(
                                    "the count says {len} elements, the buffer holds {held} ({} bytes of {ty})",
                                    held * ty.size()
                                ),
                            ))
                        }
                        _ if remembered => slot.store(key, Ordering::Relaxed),
                        _ => {}
                    }
                }
            }
            Ok(KernelArg::Buffer {
                mem: Mem::Raw(raw),
                elem: ty,
                len,
            })
        }
        k => Err(bad_arg(
            kernel,
            index,
            Status::Invalid,
            format!("kind {k} is neither KW_ARG_BUFFER (0) nor KW_ARG_SCALAR (1)"),
        )),
    }
}

/// CUDA buffers whose count was checked against the driver ([`available_elements`]): a
/// direct-mapped table of keys of (backend, pointer, bytes), so that a buffer launched again
/// with the same count costs no driver query (one per buffer cost 0.1-0.2 µs a launch on an
/// H100). A key is overwritten by another that maps to its slot; memory freed and allocated
/// again at the same address with fewer bytes, launched with the count of before, is the
/// case this does not catch (the kernel then reads and writes past the new allocation, as
/// any launch with a wrong count did before this check). OpenCL buffers are checked at every
/// launch.
static CONFIRMED: [AtomicU64; 1 << CONFIRMED_BITS] =
    [const { AtomicU64::new(0) }; 1 << CONFIRMED_BITS];

/// log2 of [`CONFIRMED`]'s slots.
const CONFIRMED_BITS: u32 = 10;

/// The key of a buffer in [`CONFIRMED`] (never 0, the empty slot).
fn confirmed_key(backend: BackendKind, ptr: *mut c_void, bytes: usize) -> u64 {
    // splitmix64 of the three, mixed.
    let mut z = (ptr as u64)
        ^ (bytes as u64).rotate_left(29)
        ^ u64::from(backend == BackendKind::Cuda) << 63;
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) | 1
}

/// A C buffer (a `cl_mem` or CUDA device pointer of a `backend` device, with its element
/// count or `KW_COUNT_AUTO`) as raw memory and its element count, or the status and what is
/// wrong.
///
/// # Safety
/// A non-null `ptr` is live memory of the device (of at least `count` elements).
#[inline]
pub(crate) unsafe fn raw_buffer(
    backend: BackendKind,
    ptr: *mut c_void,
    ty: ScalarType,
    count: usize,
) -> Result<(RawMem, usize), (Status, String)> {
    if ptr.is_null() {
        return Err((Status::Null, "a null buffer".into()));
    }
    if count == COUNT_AUTO {
        // SAFETY: as the caller promised.
        return match unsafe { auto_sized(backend, ptr, ty) } {
            Ok(KernelArg::Buffer {
                mem: Mem::Raw(raw),
                len,
                ..
            }) => Ok((raw, len)),
            Ok(_) => Err((Status::Internal, "a sized buffer is not raw memory".into())),
            Err(e) => Err((Status::Backend, e.to_string())),
        };
    }
    let Some(bytes) = count.checked_mul(ty.size()) else {
        return Err((
            Status::Invalid,
            format!("{count} elements of {ty} overflow"),
        ));
    };
    let raw = match backend {
        // SAFETY: the caller vouches for `count` elements at `ptr`.
        BackendKind::Cuda => unsafe { RawMem::cuda(ptr as u64, bytes) },
        // SAFETY: as above, for a cl_mem.
        _ => unsafe { RawMem::opencl(ptr, bytes) },
    };
    Ok((raw, count))
}

/// The whole elements of `ty` the driver says the memory at `ptr` holds (to its allocation's
/// end): what a count given by the caller is checked against (launches and the library
/// routines; one driver query per buffer).
///
/// # Safety
/// `ptr` is a live device pointer / `cl_mem` of a `backend` device.
pub(crate) unsafe fn available_elements(
    backend: BackendKind,
    ptr: *mut c_void,
    ty: ScalarType,
) -> Result<usize, (Status, String)> {
    // SAFETY: as the caller promised.
    match unsafe { auto_sized(backend, ptr, ty) } {
        Ok(KernelArg::Buffer { len, .. }) => Ok(len),
        Ok(_) => Err((Status::Internal, "a sized buffer is not raw memory".into())),
        Err(e) => Err((Status::Backend, e.to_string())),
    }
}

/// A buffer passed with `KW_COUNT_AUTO`: its size asked of the driver.
///
/// # Safety
/// `ptr` is a live device pointer / `cl_mem` of a `backend` device.
unsafe fn auto_sized(
    backend: BackendKind,
    ptr: *mut c_void,
    ty: ScalarType,
) -> Result<KernelArg<'static>, kernel_wisdom::BackendError> {
    match backend {
        BackendKind::Cuda => {
            let bytes = kernel_wisdom::interop::cuda::bytes_from_pointer(ptr as u64)?;
            // SAFETY: the driver says the allocation holds `bytes` from `ptr`.
            Ok(KernelArg::raw_buffer(
                unsafe { RawMem::cuda(ptr as u64, bytes) },
                ty,
            ))
        }
        // SAFETY: a live cl_mem, as the header requires.
        _ => unsafe { kernel_wisdom::interop::opencl::raw_buffer_arg(ptr.cast(), ty) },
    }
}

#[cold]
fn bad_type(t: u32) -> String {
    format!("type {t} is not a kw_type (KW_I8 = 0 ... KW_F64 = 9)")
}

/// An argument's error, naming the kernel and the argument.
#[cold]
fn bad_arg(kernel: &WisdomKernel, index: usize, status: Status, what: String) -> CError {
    CError::new(
        status,
        format!(
            "kernel `{}`: argument {index}: {what}",
            kernel.def().kernel_name
        ),
    )
}

/// A launch with `given` arguments of a kernel that takes `expected`.
#[cold]
fn wrong_count(kernel: &WisdomKernel, given: usize, expected: usize) -> CError {
    kernel_wisdom::Error::ArgumentCount {
        kernel: kernel.def().kernel_name.clone(),
        given,
        expected,
    }
    .into()
}

/// Launch arguments converted from C, on the stack for up to [`INLINE_ARGS`] arguments (no
/// allocation on the launch path; only the arguments given are written), on the heap beyond.
struct Converted {
    inline: [MaybeUninit<KernelArg<'static>>; INLINE_ARGS],
    len: usize,
    heap: Vec<KernelArg<'static>>,
}

/// Arguments converted without allocating.
const INLINE_ARGS: usize = 16;

impl Converted {
    fn new() -> Converted {
        Converted {
            inline: [const { MaybeUninit::uninit() }; INLINE_ARGS],
            len: 0,
            heap: Vec::new(),
        }
    }

    fn as_slice(&self) -> &[KernelArg<'static>] {
        if self.len > INLINE_ARGS {
            return &self.heap;
        }
        // SAFETY: the first `len` (at most INLINE_ARGS) entries were written by `fill`;
        // `KernelArg` is `Copy` (nothing to drop), and `MaybeUninit<T>` has `T`'s layout.
        unsafe { std::slice::from_raw_parts(self.inline.as_ptr().cast(), self.len) }
    }

    /// Converts the C arguments, after checking their count against the kernel's (so that
    /// a wrong count never reads past the caller's array).
    ///
    /// # Safety
    /// As [`arg`]; `args` holds `n` entries.
    #[inline]
    unsafe fn fill(
        &mut self,
        kernel: &WisdomKernel,
        args: *const KwArg,
        n: usize,
    ) -> Result<(), CError> {
        let expected = kernel.def().args.len();
        if n != expected {
            return Err(wrong_count(kernel, n, expected));
        }
        // SAFETY: `n` arguments, as the header requires.
        let given = unsafe { slice(args, n, "args") }?;
        let backend = kernel.backend();
        if given.len() <= INLINE_ARGS {
            for (i, (slot, a)) in self.inline.iter_mut().zip(given).enumerate() {
                // SAFETY: as the caller promised.
                slot.write(unsafe { arg(kernel, backend, i, a) }?);
            }
        } else {
            self.heap = given
                .iter()
                .enumerate()
                // SAFETY: as the caller promised.
                .map(|(i, a)| unsafe { arg(kernel, backend, i, a) })
                .collect::<Result<Vec<_>, _>>()?;
        }
        self.len = given.len();
        Ok(())
    }
}

/// The launch target: null is the device's own queue or stream.
///
/// # Safety
/// A non-null `stream` is a live stream / queue of the device's context; `wait` live events.
unsafe fn queue<'a>(
    kernel: &WisdomKernel,
    stream: *mut c_void,
    wait: &'a [*mut c_void],
) -> Queue<'a> {
    if stream.is_null() {
        // SAFETY: as the caller promised (the events of the device's context; none on CUDA,
        // whose launches pass none).
        return unsafe { Queue::default_after(wait) };
    }
    match kernel.backend() {
        // SAFETY: as the caller promised.
        BackendKind::Cuda => unsafe { Queue::cuda_raw(stream) },
        // SAFETY: as the caller promised.
        _ => unsafe { Queue::opencl_raw(stream, wait) },
    }
}

/// `kw_kernel_launch`: launches on `stream` (a `CUstream` / `cudaStream_t` or a
/// `cl_command_queue`; null: the device's own) with `nargs` arguments.
#[no_mangle]
pub unsafe extern "C" fn kw_kernel_launch(
    k: *const c_void,
    stream: *mut c_void,
    args_ptr: *const KwArg,
    nargs: usize,
) -> c_int {
    guard(|| {
        let kernel = KERNELS.get(k)?;
        let mut kargs = Converted::new();
        // SAFETY (both): as the header requires.
        unsafe { kargs.fill(&kernel, args_ptr, nargs) }?;
        let q = unsafe { queue(&kernel, stream, &[]) };
        kernel.launch_with(kargs.as_slice(), LaunchOptions::new().on(q))?;
        Ok(())
    })
}

/// `kw_kernel_launch_opencl`: launches on `queue` after `nwait` events; with a non-null
/// `out_event`, returns the launch's `cl_event` (the caller releases it).
#[no_mangle]
pub unsafe extern "C" fn kw_kernel_launch_opencl(
    k: *const c_void,
    queue_ptr: *mut c_void,
    wait_events: *const *mut c_void,
    nwait: usize,
    out_event: *mut *mut c_void,
    args_ptr: *const KwArg,
    nargs: usize,
) -> c_int {
    if !out_event.is_null() {
        // NULL until a launch gives an event: a failed call leaves none to release.
        // SAFETY: non-null and writable (the header's promise).
        unsafe { out_event.write(std::ptr::null_mut()) };
    }
    guard(|| {
        let kernel = KERNELS.get(k)?;
        if kernel.backend() != BackendKind::Opencl {
            return Err(CError::new(
                Status::Device,
                format!(
                    "kernel `{}` is on a CUDA device: use kw_kernel_launch",
                    kernel.def().kernel_name
                ),
            ));
        }
        // SAFETY (all): as the header requires.
        let wait = unsafe { slice(wait_events, nwait, "wait_events") }?;
        if let Some(i) = wait.iter().position(|e| e.is_null()) {
            return Err(CError::new(
                Status::Null,
                format!("wait_events[{i}] is NULL (a cl_event is expected)"),
            ));
        }
        let mut kargs = Converted::new();
        unsafe { kargs.fill(&kernel, args_ptr, nargs) }?;
        let q = unsafe { queue(&kernel, queue_ptr, wait) };
        let event = kernel
            .launch_with(kargs.as_slice(), LaunchOptions::new().on(q).event())
            .map(|l| l.event)?;
        if out_event.is_null() {
            return Ok(());
        }
        let raw = match event.map(|e| {
            e.into_any()
                .downcast::<kernel_wisdom::interop::opencl::ClEvent>()
        }) {
            Some(Ok(ev)) => {
                let kernel_wisdom::interop::opencl::ClEvent(event) = *ev;
                let raw = event.get();
                // The caller owns the event now (and releases it with clReleaseEvent).
                std::mem::forget(event);
                raw.cast::<c_void>()
            }
            _ => std::ptr::null_mut(),
        };
        // SAFETY: checked non-null above.
        unsafe { put(out_event, raw, "out_event") }
    })
}

/// `kw_kernel_set_symbol`: sets constant-memory symbol `name` to `count` elements of
/// `elem_type` at `data` (see `WisdomKernel::set_symbol`).
#[no_mangle]
pub unsafe extern "C" fn kw_kernel_set_symbol(
    k: *const c_void,
    name: *const c_char,
    elem_type: c_int,
    data: *const c_void,
    count: usize,
) -> c_int {
    guard(|| {
        let kernel = KERNELS.get(k)?;
        // SAFETY: a string, as the header requires.
        let name = unsafe { crate::ffi::text(name, "constant symbol name") }?;
        let ty = crate::types::scalar_type(elem_type)?;
        let bytes = count.checked_mul(ty.size()).ok_or_else(|| {
            CError::new(
                Status::Invalid,
                format!("constant symbol `{name}`: {count} elements of {ty} overflow"),
            )
        })?;
        // SAFETY: `data` points at `count` elements of `elem_type`, as the header requires.
        let data = unsafe { slice(data.cast::<u8>(), bytes, "data") }?;
        kernel.set_symbol_value(kw_core::scalar::SymbolValue {
            name: name.to_string(),
            ty,
            bytes: data.to_vec(),
        })?;
        Ok(())
    })
}

/// `kw_kernel_config`: the configuration (`name=value,...`) launches of problem size
/// `(x, y, z)` use, once one was launched.
#[no_mangle]
pub unsafe extern "C" fn kw_kernel_config(
    k: *const c_void,
    x: i64,
    y: i64,
    z: i64,
    buf: *mut c_char,
    cap: usize,
) -> c_int {
    guard(|| {
        let kernel = KERNELS.get(k)?;
        let config = kernel.config_for(&[x, y, z]).ok_or_else(|| {
            CError::new(
                Status::Invalid,
                format!(
                    "kernel `{}`: nothing was launched at problem size ({x}, {y}, {z}) yet",
                    kernel.def().kernel_name
                ),
            )
        })?;
        // SAFETY: `buf` has `cap` bytes, as the header requires.
        unsafe { copy_out(&config.key(), buf, cap, "kw_kernel_config") }
    })
}
