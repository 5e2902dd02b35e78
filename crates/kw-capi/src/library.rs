//! `kw_library_*`: the library's tuned routines ([`kernel_wisdom::library::Library`]) on a
//! device, with the application's buffers: each a `kw_arg` buffer (`kw_arg_buffer(ptr,
//! KW_F32, count)`: a `cl_mem` or CUDA device pointer and its element count, or
//! `KW_COUNT_AUTO`), launched on the device's own queue or stream.
//!
//! A routine's lengths are checked by the Rust routine: a wrong one is `KW_ERROR_INVALID`
//! with its message ("library routine `transpose`: input (rows x cols) holds 12 elements,
//! the shape needs 15"); a buffer that is a scalar, of another type or null is
//! `KW_ERROR_ARGUMENTS` / `KW_ERROR_NULL` naming the routine and the buffer.
//!
//! Adding a routine: a `kw_library_NAME` function below that turns its
//! `kw_arg`s into buffers with `buffers` and calls the Rust routine inside `call`; its
//! declaration in `kernel_wisdom.h`; a method of `kw::Library` in `kernel_wisdom.hpp`; a
//! call checked in `tests/c/library.c` and `tests/c/library.cpp`.

use crate::device::DEVICES;
use crate::ffi::{need_out, opt_text, put, slice};
use crate::handles::{Kind, Registry};
use crate::kernel::{available_elements, raw_buffer};
use crate::status::{guard, CError, Status};
use crate::types::{KwArg, ARG_BUFFER, ARG_SCALAR, COUNT_AUTO, TYPES};
use kernel_wisdom::library::{HotspotCoefficients, Library, NbodyStep};
use kernel_wisdom::DeviceBuffer;
use kw_core::backend::BackendError;
use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

/// The live libraries.
pub static LIBRARIES: Registry<Library> = Registry::new(Kind::Library);

/// `kw_library_create`: the routines on a device; `wisdom_dir` (may be null) is searched
/// after `KW_WISDOM_PATH` (the wisdom shipped with kernel-wisdom is embedded).
#[no_mangle]
pub unsafe extern "C" fn kw_library_create(
    out: *mut *mut c_void,
    device: *const c_void,
    wisdom_dir: *const c_char,
) -> c_int {
    guard(|| {
        need_out(out, "kw_library_create")?;
        let dev = DEVICES.get(device)?;
        // SAFETY: null or a string, as the header requires.
        let dir = unsafe { opt_text(wisdom_dir, "wisdom_dir") }?;
        let mut lib = Library::new(Arc::clone(&dev));
        if let Some(dir) = dir {
            lib = lib.with_wisdom_dir(dir);
        }
        // SAFETY: checked non-null above.
        unsafe { put(out, LIBRARIES.insert(lib), "kw_library_create") }
    })
}

/// `kw_library_free` (null: nothing to do).
#[no_mangle]
pub extern "C" fn kw_library_free(lib: *mut c_void) -> c_int {
    guard(|| LIBRARIES.remove(lib))
}

/// Runs `body` with the library behind `lib` (a null, freed or made-up handle is an error).
fn call(
    lib: *const c_void,
    body: impl FnOnce(&Library) -> Result<(), CError>,
) -> Result<(), CError> {
    let lib = LIBRARIES.get(lib)?;
    body(&lib)
}

/// The `f32` buffers of a call of `routine`, named by `names`.
///
/// # Safety
/// Each buffer's `ptr` is live memory of the library's device (of at least `count` floats).
unsafe fn buffers<const N: usize>(
    lib: &Library,
    routine: &str,
    names: [&str; N],
    args: [KwArg; N],
) -> Result<[DeviceBuffer<f32>; N], CError> {
    // SAFETY: as the caller promised.
    unsafe { buffers_of::<f32, N>(lib, routine, names, args) }
}

/// [`buffers`] of elements of `T` (`KW_U16` for half bit patterns).
unsafe fn buffers_of<T: kw_core::scalar::Scalar, const N: usize>(
    lib: &Library,
    routine: &str,
    names: [&str; N],
    args: [KwArg; N],
) -> Result<[DeviceBuffer<T>; N], CError> {
    let device = lib.device();
    let backend = device.info().backend;
    let mut out = Vec::with_capacity(N);
    for (name, a) in names.into_iter().zip(args) {
        let bad = |status, what: String| {
            CError::new(
                status,
                format!("library routine `{routine}`: {name}: {what}"),
            )
        };
        if a.kind == ARG_SCALAR {
            return Err(bad(
                Status::Arguments,
                "a scalar was given where a buffer (kw_arg_buffer) is expected".into(),
            ));
        }
        if a.kind != ARG_BUFFER {
            return Err(bad(
                Status::Invalid,
                format!(
                    "kind {} is not a kw_arg kind (make the argument with kw_arg_buffer)",
                    a.kind
                ),
            ));
        }
        let ty = usize::try_from(a.elem_type)
            .ok()
            .and_then(|i| TYPES.get(i))
            .copied();
        if ty != Some(T::TYPE) {
            let want = T::TYPE;
            let constant = format!("KW_{}", want.to_string().to_uppercase());
            // A value that is no kw_type at all is an invalid enum value, as for launches;
            // another type is the wrong argument.
            let (status, given) = match ty {
                Some(t) => (Status::Arguments, format!("a buffer of {t} was given")),
                None => (
                    Status::Invalid,
                    format!(
                        "type {} is not a kw_type (KW_I8 = 0 ... KW_F64 = 9)",
                        a.elem_type
                    ),
                ),
            };
            return Err(bad(
                status,
                format!("{given}, the routine takes {want} ({constant})"),
            ));
        }
        // SAFETY: as the caller promised.
        let (raw, count) = unsafe { raw_buffer(backend, a.ptr, T::TYPE, a.count) }
            .map_err(|(status, what)| bad(status, what))?;
        if a.count != COUNT_AUTO {
            // A count larger than the memory is refused here: the kernels would read and write
            // past the allocation (a crash, or another buffer's contents).
            // SAFETY: as the caller promised (a live buffer of this device). Memory the CUDA
            // driver does not know (a host or freed pointer) is refused here: a launch on it
            // would fault and could leave the context unusable. (A released or made-up cl_mem
            // cannot be checked: OpenCL drivers read the handle itself.)
            let held = unsafe { available_elements(backend, a.ptr, T::TYPE) }.map_err(
                |(status, what)| {
                    bad(
                        status,
                        format!("not a live buffer of this device, as far as its driver can tell: {what}"),
                    )
                },
            )?;
            if count > held {
                return Err(bad(
                    Status::Invalid,
                    format!(
                        "the count says {count} elements, the buffer holds {held} ({} bytes of {})",
                        held * T::TYPE.size(),
                        T::TYPE
                    ),
                ));
            }
        }
        // A view is refused by the backend when the memory is not this device's (a cl_mem of
        // another context): the argument's fault, as at a kernel launch, said with the
        // routine and the buffer.
        let view = DeviceBuffer::view(device.as_ref(), raw).map_err(|e| {
            let status = match e {
                BackendError::Api { op: "view", .. } => Status::Arguments,
                ref e if e.is_arguments_fault() => Status::Arguments,
                _ => Status::Backend,
            };
            bad(status, e.to_string())
        })?;
        out.push(view);
    }
    out.try_into()
        .map_err(|_| CError::new(Status::Internal, "buffer count"))
}

/// `kw_library_transpose`: `output` (cols x rows) = the transpose of `input` (rows x cols,
/// row-major).
#[no_mangle]
pub unsafe extern "C" fn kw_library_transpose(
    lib: *const c_void,
    rows: usize,
    cols: usize,
    input: KwArg,
    output: KwArg,
) -> c_int {
    guard(|| {
        call(lib, |l| {
            // SAFETY: the application's live buffers, as the header requires.
            let [i, o] = unsafe { buffers(l, "transpose", ["input", "output"], [input, output]) }?;
            Ok(l.transpose(rows, cols, &i, &o)?)
        })
    })
}

/// `kw_library_sum`: `*out` = the sum of `input`'s elements (waits for the result).
#[no_mangle]
pub unsafe extern "C" fn kw_library_sum(lib: *const c_void, input: KwArg, out: *mut f32) -> c_int {
    guard(|| {
        need_out(out, "kw_library_sum")?;
        call(lib, |l| {
            // SAFETY: as the header requires.
            let [i] = unsafe { buffers(l, "sum", ["input"], [input]) }?;
            let v = l.sum(&i)?;
            // SAFETY: checked non-null above.
            unsafe { put(out, v, "kw_library_sum") }
        })
    })
}

/// `kw_library_stencil3d`: `output` = the 7-point stencil of `input` on an nx x ny x nz grid
/// (x fastest): `c0 * centre + c1 * (six neighbours)`, boundary cells copied.
#[no_mangle]
#[allow(clippy::too_many_arguments)] // the C signature: sizes, scalars and buffers
pub unsafe extern "C" fn kw_library_stencil3d(
    lib: *const c_void,
    nx: usize,
    ny: usize,
    nz: usize,
    c0: f32,
    c1: f32,
    input: KwArg,
    output: KwArg,
) -> c_int {
    guard(|| {
        call(lib, |l| {
            // SAFETY: as the header requires.
            let [i, o] = unsafe { buffers(l, "stencil3d", ["input", "output"], [input, output]) }?;
            Ok(l.stencil3d([nx, ny, nz], c0, c1, &i, &o)?)
        })
    })
}

/// `kw_library_gemm`: `c` = `alpha` `a` `b` + `beta` `c` (a m x k, b k x n, c m x n, all
/// column-major, single precision).
#[no_mangle]
#[allow(clippy::too_many_arguments)] // BLAS's signature
pub unsafe extern "C" fn kw_library_gemm(
    lib: *const c_void,
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    a: KwArg,
    b: KwArg,
    beta: f32,
    c: KwArg,
) -> c_int {
    guard(|| {
        call(lib, |l| {
            // SAFETY: as the header requires.
            let [a, b, c] = unsafe { buffers(l, "gemm", ["a", "b", "c"], [a, b, c]) }?;
            Ok(l.gemm([m, n, k], alpha, &a, &b, beta, &c)?)
        })
    })
}

/// `kw_library_gemm_f16`: [`kw_library_gemm`] on IEEE half matrices (their bits, `uint16_t`
/// buffers, `KW_U16`), sums in f32, alpha and beta f32; CUDA only (`KW_ERROR_DEVICE`
/// elsewhere).
#[no_mangle]
#[allow(clippy::too_many_arguments)] // BLAS's signature
pub unsafe extern "C" fn kw_library_gemm_f16(
    lib: *const c_void,
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    a: KwArg,
    b: KwArg,
    beta: f32,
    c: KwArg,
) -> c_int {
    guard(|| {
        call(lib, |l| {
            // SAFETY: as the header requires.
            let [a, b, c] =
                unsafe { buffers_of::<u16, 3>(l, "gemm_f16", ["a", "b", "c"], [a, b, c]) }?;
            Ok(l.gemm_f16([m, n, k], alpha, &a, &b, beta, &c)?)
        })
    })
}

/// `kw_library_convolution`: `output` (width x height) = the 2D convolution of `input`
/// ((width + filter_width - 1) x (height + filter_height - 1)) with the filter
/// (filter_width x filter_height floats on the host, row-major; put in constant memory).
#[no_mangle]
#[allow(clippy::too_many_arguments)] // the C signature: sizes, the filter and buffers
pub unsafe extern "C" fn kw_library_convolution(
    lib: *const c_void,
    width: usize,
    height: usize,
    filter_width: usize,
    filter_height: usize,
    filter: *const f32,
    input: KwArg,
    output: KwArg,
) -> c_int {
    guard(|| {
        call(lib, |l| {
            // A filter size the routine refuses is refused before the filter is looked at
            // (the routine checks the sizes first); otherwise `filter` holds the floats.
            let max = kernel_wisdom::library::defs::CONVOLUTION_MAX_FILTER;
            let fits = (1..=max).contains(&filter_width) && (1..=max).contains(&filter_height);
            let count = if fits {
                filter_width * filter_height
            } else {
                0
            };
            // SAFETY: `filter` holds filter_width x filter_height floats, as the header
            // requires.
            let f = unsafe { slice(filter, count, "library routine `convolution`: filter") }?;
            // SAFETY: as the header requires.
            let [i, o] =
                unsafe { buffers(l, "convolution", ["input", "output"], [input, output]) }?;
            Ok(l.convolution([width, height], [filter_width, filter_height], f, &i, &o)?)
        })
    })
}

/// `kw_library_hotspot`: `iterations` steps of Rodinia's hotspot on an nx x ny grid (x
/// fastest) from `temp_in` with `power`, the result in `temp_out` (`temp_in` is not written);
/// the five coefficients of Rodinia's update (`HotspotCoefficients`).
#[no_mangle]
#[allow(clippy::too_many_arguments)] // the C signature: sizes, coefficients and buffers
pub unsafe extern "C" fn kw_library_hotspot(
    lib: *const c_void,
    nx: usize,
    ny: usize,
    iterations: usize,
    step_div_cap: f32,
    rx_1: f32,
    ry_1: f32,
    rz_1: f32,
    amb_temp: f32,
    temp_in: KwArg,
    power: KwArg,
    temp_out: KwArg,
) -> c_int {
    guard(|| {
        call(lib, |l| {
            let names = ["temp_in", "power", "temp_out"];
            // SAFETY: as the header requires.
            let [t, p, o] = unsafe { buffers(l, "hotspot", names, [temp_in, power, temp_out]) }?;
            let k = HotspotCoefficients {
                step_div_cap,
                rx_1,
                ry_1,
                rz_1,
                amb_temp,
            };
            Ok(l.hotspot([nx, ny], iterations, &k, &t, &p, &o)?)
        })
    })
}

/// `kw_library_nbody`: one step of n bodies (4 floats each: x, y, z, mass; velocities x, y,
/// z and a kept fourth value) from `pos`, `vel` into `pos_out`, `vel_out`.
#[no_mangle]
#[allow(clippy::too_many_arguments)] // the C signature: sizes, scalars and buffers
pub unsafe extern "C" fn kw_library_nbody(
    lib: *const c_void,
    n: usize,
    dt: f32,
    softening: f32,
    damping: f32,
    pos: KwArg,
    vel: KwArg,
    pos_out: KwArg,
    vel_out: KwArg,
) -> c_int {
    guard(|| {
        call(lib, |l| {
            let names = ["pos", "vel", "pos_out", "vel_out"];
            // SAFETY: as the header requires.
            let [p, v, po, vo] =
                unsafe { buffers(l, "nbody", names, [pos, vel, pos_out, vel_out]) }?;
            let step = NbodyStep {
                dt,
                softening,
                damping,
            };
            Ok(l.nbody(n, &step, [&p, &v], [&po, &vo])?)
        })
    })
}
