//! Loading NVRTC: our own small dynamic loader.
//!
//! cudarc's dynamic loading looks for `libnvrtc.so`, `libnvrtc.so.<major of the bindings>`
//! (12 here), `.so.12`, `.so.11`, ... but never `libnvrtc.so.13`, and it panics when nothing
//! is found. A CUDA 13 machine often has only `libnvrtc.so.13` on the loader path. So this
//! crate opens NVRTC itself, in this order, and reports failure as an error:
//!
//! 1. `KW_NVRTC_LIBRARY` (a file name or a path), if set: only that;
//! 2. `libnvrtc.so.<driver major>`, `libnvrtc.so.13`, `libnvrtc.so.12`, `libnvrtc.so`, by
//!    name (the system loader's search path: `LD_LIBRARY_PATH`, `ld.so.cache`);
//! 3. the same names in `$CUDA_HOME/lib64`, `$CUDA_PATH/lib64`, `/usr/local/cuda/lib64` and
//!    `/usr/local/cuda-*/lib64` (newest first).
//!
//! The NVRTC major matching the driver's comes first: a cubin or PTX from a newer NVRTC than
//! the driver may not load.
//!
//! Only the entry points this crate needs are resolved. They return `c_int` (not cudarc's
//! `nvrtcResult` enum), so a status code newer than the bindings is not undefined behaviour.

use cudarc::nvrtc::sys::nvrtcProgram;
use libloading::Library;
use std::ffi::{c_char, c_int, CStr};
use std::path::PathBuf;
use std::sync::OnceLock;
use thiserror::Error;

/// The environment variable naming the NVRTC library to load (file name or path).
pub const NVRTC_LIBRARY_ENV: &str = "KW_NVRTC_LIBRARY";

/// NVRTC could not be loaded.
#[derive(Debug, Clone, Error)]
#[error("NVRTC not found (tried {tried}); set {NVRTC_LIBRARY_ENV} to the path of libnvrtc.so: {last_error}")]
pub struct NvrtcLoadError {
    /// The names and paths tried, comma-separated.
    pub tried: String,
    /// The last loader error.
    pub last_error: String,
}

type GetErrorString = unsafe extern "C" fn(c_int) -> *const c_char;
type Version = unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int;
type GetNumSupportedArchs = unsafe extern "C" fn(*mut c_int) -> c_int;
type GetSupportedArchs = unsafe extern "C" fn(*mut c_int) -> c_int;
type CreateProgram = unsafe extern "C" fn(
    *mut nvrtcProgram,
    *const c_char,
    *const c_char,
    c_int,
    *const *const c_char,
    *const *const c_char,
) -> c_int;
type DestroyProgram = unsafe extern "C" fn(*mut nvrtcProgram) -> c_int;
type CompileProgram = unsafe extern "C" fn(nvrtcProgram, c_int, *const *const c_char) -> c_int;
type GetSize = unsafe extern "C" fn(nvrtcProgram, *mut usize) -> c_int;
type GetBytes = unsafe extern "C" fn(nvrtcProgram, *mut c_char) -> c_int;
type AddNameExpression = unsafe extern "C" fn(nvrtcProgram, *const c_char) -> c_int;
type GetLoweredName =
    unsafe extern "C" fn(nvrtcProgram, *const c_char, *mut *const c_char) -> c_int;

/// The NVRTC entry points this crate uses, resolved from one loaded library.
pub(crate) struct NvrtcLib {
    /// Where it was loaded from (as passed to the loader).
    pub(crate) origin: String,
    /// `(major, minor)`.
    pub(crate) version: (i32, i32),
    /// The real architectures NVRTC can emit code for (`90` for `sm_90`), ascending.
    pub(crate) archs: Vec<u32>,
    pub(crate) get_error_string: GetErrorString,
    pub(crate) create_program: CreateProgram,
    pub(crate) destroy_program: DestroyProgram,
    pub(crate) compile_program: CompileProgram,
    pub(crate) get_ptx_size: GetSize,
    pub(crate) get_ptx: GetBytes,
    pub(crate) get_cubin_size: Option<GetSize>,
    pub(crate) get_cubin: Option<GetBytes>,
    pub(crate) get_log_size: GetSize,
    pub(crate) get_log: GetBytes,
    pub(crate) add_name_expression: AddNameExpression,
    pub(crate) get_lowered_name: GetLoweredName,
    /// Keeps the function pointers valid.
    _lib: Library,
}

impl NvrtcLib {
    /// The message for an NVRTC status code.
    pub(crate) fn error_string(&self, code: c_int) -> String {
        // SAFETY: nvrtcGetErrorString accepts any code and returns a pointer to a static,
        // NUL-terminated string (or null, which we check).
        let ptr = unsafe { (self.get_error_string)(code) };
        if ptr.is_null() {
            return format!("NVRTC error {code}");
        }
        // SAFETY: non-null, static, NUL-terminated (see above).
        unsafe { CStr::from_ptr(ptr) }
            .to_string_lossy()
            .into_owned()
    }

    /// `NVRTC 12.8`.
    pub(crate) fn version_string(&self) -> String {
        format!("NVRTC {}.{}", self.version.0, self.version.1)
    }
}

/// The process-wide NVRTC, loaded on first use (the driver major orders the candidates).
pub(crate) fn nvrtc(driver_major: i32) -> Result<&'static NvrtcLib, NvrtcLoadError> {
    static LIB: OnceLock<Result<NvrtcLib, NvrtcLoadError>> = OnceLock::new();
    LIB.get_or_init(|| load(driver_major))
        .as_ref()
        .map_err(Clone::clone)
}

/// The library names and paths to try, in order.
pub(crate) fn candidates(driver_major: i32) -> Vec<String> {
    if let Some(name) = std::env::var_os(NVRTC_LIBRARY_ENV).filter(|v| !v.is_empty()) {
        return vec![name.to_string_lossy().into_owned()];
    }
    let mut names = vec![format!("libnvrtc.so.{driver_major}")];
    for n in ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"] {
        if !names.iter().any(|x| x == n) {
            names.push(n.to_string());
        }
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(root) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            dirs.push(PathBuf::from(root).join("lib64"));
        }
    }
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    if let Ok(entries) = std::fs::read_dir("/usr/local") {
        let mut versioned: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("cuda-"))
            })
            .map(|p| p.join("lib64"))
            .collect();
        versioned.sort();
        versioned.reverse();
        dirs.extend(versioned);
    }
    let mut out = names.clone();
    for dir in dirs {
        for n in &names {
            out.push(dir.join(n).to_string_lossy().into_owned());
        }
    }
    out
}

fn load(driver_major: i32) -> Result<NvrtcLib, NvrtcLoadError> {
    let tried = candidates(driver_major);
    let mut last_error = String::from("no candidate");
    for name in &tried {
        if name.contains('/') && !std::path::Path::new(name).exists() {
            continue;
        }
        // SAFETY: loading NVRTC runs its initialisers, which have no preconditions.
        match unsafe { Library::new(name) } {
            Ok(lib) => match resolve(lib, name) {
                Ok(l) => return Ok(l),
                Err(e) => last_error = format!("{name}: {e}"),
            },
            Err(e) => last_error = e.to_string(),
        }
    }
    Err(NvrtcLoadError {
        tried: tried.join(", "),
        last_error,
    })
}

fn resolve(lib: Library, origin: &str) -> Result<NvrtcLib, libloading::Error> {
    /// Resolves `name` as a function pointer of type `T`.
    ///
    /// # Safety
    /// `T` must be the symbol's true C signature.
    unsafe fn sym<T: Copy>(lib: &Library, name: &[u8]) -> Result<T, libloading::Error> {
        // SAFETY: the caller guarantees the type; the pointer stays valid while `lib` lives,
        // and NvrtcLib keeps `lib` alongside every pointer it copies out.
        unsafe { lib.get::<T>(name).map(|s| *s) }
    }
    // SAFETY (all `sym` calls below): each type alias above is the signature from nvrtc.h;
    // `nvrtcResult` is a C enum, passed as `int`.
    let (version_fn, num_archs, archs_fn): (
        Version,
        Option<GetNumSupportedArchs>,
        Option<GetSupportedArchs>,
    ) = unsafe {
        (
            sym(&lib, b"nvrtcVersion\0")?,
            sym(&lib, b"nvrtcGetNumSupportedArchs\0").ok(),
            sym(&lib, b"nvrtcGetSupportedArchs\0").ok(),
        )
    };
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two valid out-pointers.
    unsafe { version_fn(&mut major, &mut minor) };
    let mut archs = Vec::new();
    if let (Some(num), Some(list)) = (num_archs, archs_fn) {
        let mut n: c_int = 0;
        // SAFETY: a valid out-pointer.
        if unsafe { num(&mut n) } == 0 && n > 0 {
            let mut v = vec![0 as c_int; n as usize];
            // SAFETY: `v` has room for the `n` entries NVRTC said it would write.
            if unsafe { list(v.as_mut_ptr()) } == 0 {
                archs = v
                    .into_iter()
                    .filter_map(|a| u32::try_from(a).ok())
                    .collect();
                archs.sort_unstable();
            }
        }
    }
    // SAFETY: see above.
    unsafe {
        Ok(NvrtcLib {
            origin: origin.to_string(),
            version: (major, minor),
            archs,
            get_error_string: sym(&lib, b"nvrtcGetErrorString\0")?,
            create_program: sym(&lib, b"nvrtcCreateProgram\0")?,
            destroy_program: sym(&lib, b"nvrtcDestroyProgram\0")?,
            compile_program: sym(&lib, b"nvrtcCompileProgram\0")?,
            get_ptx_size: sym(&lib, b"nvrtcGetPTXSize\0")?,
            get_ptx: sym(&lib, b"nvrtcGetPTX\0")?,
            get_cubin_size: sym(&lib, b"nvrtcGetCUBINSize\0").ok(),
            get_cubin: sym(&lib, b"nvrtcGetCUBIN\0").ok(),
            get_log_size: sym(&lib, b"nvrtcGetProgramLogSize\0")?,
            get_log: sym(&lib, b"nvrtcGetProgramLog\0")?,
            add_name_expression: sym(&lib, b"nvrtcAddNameExpression\0")?,
            get_lowered_name: sym(&lib, b"nvrtcGetLoweredName\0")?,
            _lib: lib,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_prefer_the_driver_major_and_include_so_13() {
        if std::env::var_os(NVRTC_LIBRARY_ENV).is_some() {
            return;
        }
        let c = candidates(12);
        assert_eq!(c[0], "libnvrtc.so.12");
        assert_eq!(c[1], "libnvrtc.so.13");
        assert_eq!(c[2], "libnvrtc.so");
        assert!(c
            .iter()
            .any(|n| n == "/usr/local/cuda/lib64/libnvrtc.so.13"));
        let c = candidates(13);
        assert_eq!(&c[..3], ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"]);
    }
}
