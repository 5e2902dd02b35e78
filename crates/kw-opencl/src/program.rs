//! Compiling OpenCL C: build options from defines, flags and include directories; embedded
//! headers; the build log on failure; program binaries kept in the compile cache
//! ([`kw_core::compile_cache`]). [`ClKernel`] is the compiled result.

use crate::error::{api, describe};
use crate::shared::Shared;
use kw_core::backend::{BackendError, CompileRequest, CompiledKernel};
use kw_core::compile_cache::{Artifact, CacheKey, CompileCache, Entry, Label};
use kw_core::device::DeviceInfo;
use kw_core::kernel_def::Header;
use opencl3::kernel::{
    Kernel, CL_KERNEL_ARG_ADDRESS_CONSTANT, CL_KERNEL_ARG_ADDRESS_GLOBAL,
    CL_KERNEL_ARG_ADDRESS_LOCAL, CL_KERNEL_ARG_ADDRESS_PRIVATE,
};
use opencl3::program::Program;
use std::any::Any;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A compiled OpenCL kernel. `clSetKernelArg` + enqueue are not thread-safe on one
/// `cl_kernel`, so launches take its (normally uncontended) mutex.
pub struct ClKernel {
    pub(crate) shared: Arc<Shared>,
    pub(crate) kernel: Mutex<Kernel>,
    pub(crate) num_args: usize,
    /// Address space of each parameter, where the driver reports it (`-cl-kernel-arg-info`).
    pub(crate) params: Option<Vec<ParamSpace>>,
    /// Each parameter's type, where the driver reports it and it is a basic one (by value,
    /// or a pointer's element; vectors, structs and typedefs: `None`).
    pub(crate) types: Vec<Option<ParamType>>,
    /// Each parameter's name in the source, where the driver reports it.
    pub(crate) names: Vec<Option<String>>,
    /// The local memory the kernel uses of its own (`__local` variables, the
    /// implementation's needs): `CL_KERNEL_LOCAL_MEM_SIZE` before any `__local` argument is
    /// sized (0 where the driver does not say). A launch adds its `__local` arguments.
    pub(crate) static_local_bytes: u64,
    name: String,
    _program: Program,
}

impl CompiledKernel for ClKernel {
    fn name(&self) -> &str {
        &self.name
    }
    fn param_count(&self) -> Option<usize> {
        Some(self.num_args)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The address space of a kernel parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParamSpace {
    /// `__global` or `__constant` pointer: takes a buffer.
    Memory,
    /// `__local` pointer: takes a size.
    Local,
    /// By value: takes a scalar.
    Private,
}

/// A parameter's basic OpenCL C type (`float`, `uint`, `half`, ...), by value or a pointer's
/// element: what a launch's argument is checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ParamType {
    /// The type's name as OpenCL C spells it.
    pub name: &'static str,
    /// Its size in bytes.
    pub size: usize,
    /// A floating-point type (`half`, `float`, `double`).
    pub float: bool,
}

impl ParamType {
    /// The basic type named `text` (`CL_KERNEL_ARG_TYPE_NAME`: `float*`, `const uint`, ...),
    /// without its pointer; `None` for anything else.
    pub(crate) fn parse(text: &str) -> Option<ParamType> {
        let base = text
            .trim_end_matches('\0')
            .trim()
            .trim_end_matches('*')
            .split_whitespace()
            .filter(|w| !matches!(*w, "const" | "volatile" | "restrict"))
            .collect::<Vec<_>>()
            .join(" ");
        let (name, size, float) = match base.as_str() {
            "char" | "signed char" => ("char", 1, false),
            "uchar" | "unsigned char" => ("uchar", 1, false),
            "short" => ("short", 2, false),
            "ushort" | "unsigned short" => ("ushort", 2, false),
            "int" => ("int", 4, false),
            "uint" | "unsigned int" | "unsigned" => ("uint", 4, false),
            "long" => ("long", 8, false),
            "ulong" | "unsigned long" => ("ulong", 8, false),
            "half" => ("half", 2, true),
            "float" => ("float", 4, true),
            "double" => ("double", 8, true),
            _ => return None,
        };
        Some(ParamType { name, size, float })
    }

    /// Whether an argument of element type `t` fits: the same size and kind (integer or
    /// floating point; signedness is not checked), a 16-bit integer for `half` (halves given
    /// as their bits), and any type for a `char` or `uchar` pointer (raw bytes) when `pointer`.
    pub(crate) fn takes(&self, t: kw_core::scalar::ScalarType, pointer: bool) -> bool {
        if pointer && self.size == 1 && !self.float {
            return true;
        }
        if self.name == "half" {
            return t.size() == 2;
        }
        t.size() == self.size && t.is_float() == self.float
    }
}

fn param_types(kernel: &Kernel, n: usize) -> Vec<Option<ParamType>> {
    (0..n)
        .map(|i| {
            kernel
                .get_arg_type_name(i as u32)
                .ok()
                .and_then(|t| ParamType::parse(&t))
        })
        .collect()
}

/// Each parameter's name in the source, where the driver reports it (for messages).
fn param_names(kernel: &Kernel, n: usize) -> Vec<Option<String>> {
    (0..n)
        .map(|i| {
            kernel
                .get_arg_name(i as u32)
                .ok()
                .map(|t| t.trim_end_matches('\0').to_string())
                .filter(|t| !t.is_empty())
        })
        .collect()
}

fn param_spaces(kernel: &Kernel, n: usize) -> Option<Vec<ParamSpace>> {
    (0..n)
        .map(|i| match kernel.get_arg_address_qualifier(i as u32).ok()? {
            CL_KERNEL_ARG_ADDRESS_GLOBAL | CL_KERNEL_ARG_ADDRESS_CONSTANT => {
                Some(ParamSpace::Memory)
            }
            CL_KERNEL_ARG_ADDRESS_LOCAL => Some(ParamSpace::Local),
            CL_KERNEL_ARG_ADDRESS_PRIVATE => Some(ParamSpace::Private),
            _ => None,
        })
        .collect()
}

fn compile_error(
    req: &CompileRequest<'_>,
    options: &str,
    reason: String,
    log: String,
) -> BackendError {
    BackendError::Compile {
        kernel: req.kernel_name.to_string(),
        file: req.source.file_name.clone(),
        options: options.to_string(),
        reason,
        log,
    }
}

/// Checks that a define / flag is safe to put on the build line.
fn check_option(what: &str, text: &str) -> Result<(), String> {
    if text.contains('\0') {
        return Err(format!(
            "{what} `{}` contains a NUL byte",
            text.escape_debug()
        ));
    }
    Ok(())
}

/// The build options for a request, plus the header directory to pass with `-I`.
fn build_options(req: &CompileRequest<'_>, header_dir: Option<&Path>) -> Result<String, String> {
    // Lets launches check arguments against the parameters' address spaces.
    let mut parts: Vec<String> = vec!["-cl-kernel-arg-info".into()];
    for (name, value) in req.defines {
        check_option("define", name)?;
        check_option("define", value)?;
        if value.chars().any(char::is_whitespace) || name.chars().any(char::is_whitespace) {
            return Err(format!(
                "define `{name}={value}` contains whitespace, which OpenCL build options cannot carry"
            ));
        }
        parts.push(format!("-D{name}={value}"));
    }
    let mut dirs: Vec<&Path> = header_dir.into_iter().collect();
    dirs.extend(req.include_dirs.iter().map(PathBuf::as_path));
    for d in dirs {
        let text = d.to_string_lossy();
        check_option("include directory", &text)?;
        if text.chars().any(char::is_whitespace) {
            return Err(format!("include directory `{text}` contains whitespace"));
        }
        parts.push(format!("-I{text}"));
    }
    for f in req.flags {
        check_option("flag", f)?;
        parts.push(f.clone());
    }
    Ok(parts.join(" "))
}

/// The directory embedded headers are written under, after checking their names: a
/// directory named by the hash of the headers' names and texts (so that the build options of
/// a request never change) inside this user's private temporary directory
/// ([`kw_core::files::private_temp_dir`]: owned by the user, writable by nobody else, so no
/// other user can plant or swap a header between writing and compiling).
fn header_dir(headers: &[Header]) -> Result<Option<PathBuf>, String> {
    if headers.is_empty() {
        return Ok(None);
    }
    let mut key = Vec::new();
    for h in headers {
        if let Some(why) = kw_core::includes::header_name_problem(&h.name) {
            return Err(why);
        }
        for part in [h.name.as_bytes(), h.text.as_bytes()] {
            key.extend_from_slice(&(part.len() as u64).to_le_bytes());
            key.extend_from_slice(part);
        }
    }
    let root = kw_core::files::private_temp_dir()?;
    let hash = kw_core::files::content_hash(&key);
    Ok(Some(root.join("opencl-headers").join(&hash[..32])))
}

/// Writes embedded headers under `dir` (once), so that `#include "name"` finds them. Each
/// header is written to a temporary name unique to this process and call (never an existing
/// file, never through a symbolic link) and renamed into place, so concurrent builds (threads
/// or processes) never see half a header and never take each other's temporary file.
fn materialise_headers(dir: &Path, headers: &[Header]) -> Result<(), String> {
    use kw_core::files::{self, FileModes, ReadRules};
    for h in headers {
        let path = dir.join(&h.name);
        let rules = ReadRules::new("header", files::caps::SOURCE).no_symlink();
        if files::read(&path, rules).ok().as_deref() == Some(h.text.as_bytes()) {
            continue;
        }
        if let Some(parent) = path.parent() {
            FileModes::PRIVATE
                .create_dir_all(parent)
                .map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        files::write_atomic(&path, h.text.as_bytes(), FileModes::PRIVATE)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// What identifies the binaries of a device in cache keys: its name, vendor, architecture,
/// driver and OpenCL C versions, and the platform's version.
fn cache_target(shared: &Shared, info: &DeviceInfo) -> Vec<(&'static str, String)> {
    let platform = shared
        .device
        .platform()
        .ok()
        .and_then(|p| opencl3::platform::Platform::new(p).version().ok())
        .unwrap_or_default();
    vec![
        ("backend", "opencl".to_string()),
        ("device", info.name.clone()),
        ("vendor", info.vendor.clone()),
        ("architecture", info.architecture.clone()),
        ("driver", info.driver_version.clone()),
        ("opencl-c", info.compiler_version.clone()),
        ("platform", platform),
    ]
}

/// Parameter address spaces as one letter each (`M`emory, `L`ocal, `P`rivate), to keep them
/// with a cached binary (drivers need not report them for programs built from binaries).
fn spaces_to_text(p: &Option<Vec<ParamSpace>>) -> String {
    p.as_ref().map_or(String::new(), |v| {
        v.iter()
            .map(|s| match s {
                ParamSpace::Memory => 'M',
                ParamSpace::Local => 'L',
                ParamSpace::Private => 'P',
            })
            .collect()
    })
}

fn spaces_from_text(t: &str, n: usize) -> Option<Vec<ParamSpace>> {
    if t.len() != n {
        return None;
    }
    t.chars()
        .map(|c| match c {
            'M' => Some(ParamSpace::Memory),
            'L' => Some(ParamSpace::Local),
            'P' => Some(ParamSpace::Private),
            _ => None,
        })
        .collect()
}

/// Finds the kernel in a built program.
fn finish(
    shared: &Arc<Shared>,
    req: &CompileRequest<'_>,
    options: &str,
    program: Program,
) -> Result<ClKernel, BackendError> {
    let device = shared.device.id();
    let kernel = Kernel::create(&program, req.kernel_name).map_err(|e| {
        let names = program.get_kernel_names().unwrap_or_default();
        let log = program.get_build_log(device).unwrap_or_default();
        compile_error(
            req,
            options,
            format!(
                "kernel not found in the program ({}); it defines: {names}",
                describe(e)
            ),
            log,
        )
    })?;
    let num_args = kernel.num_args().map_err(|e| api("clGetKernelInfo", e))? as usize;
    let params = param_spaces(&kernel, num_args);
    let types = param_types(&kernel, num_args);
    let names = param_names(&kernel, num_args);
    // Asked before any argument is set: unsized `__local` arguments count as 0 bytes.
    let static_local_bytes = kernel.get_local_mem_size(device).unwrap_or(0);
    Ok(ClKernel {
        params,
        types,
        names,
        static_local_bytes,
        shared: Arc::clone(shared),
        kernel: Mutex::new(kernel),
        num_args,
        name: req.kernel_name.to_string(),
        _program: program,
    })
}

/// Builds the program of a cached binary; `Err` when the driver refuses it.
fn from_binary(
    shared: &Arc<Shared>,
    req: &CompileRequest<'_>,
    options: &str,
    entry: &Entry,
) -> Result<ClKernel, String> {
    let device = shared.device.id();
    // SAFETY: the binary is one this device's driver produced (its entry passed its checksum
    // and key, which names the device, driver and platform versions); the driver checks it
    // again and reports an invalid binary as an error.
    let mut program =
        unsafe { Program::create_from_binary(&shared.context, &[device], &[&entry.payload]) }
            .map_err(|e| format!("clCreateProgramWithBinary: {}", describe(e)))?;
    program
        .build(&[device], options)
        .map_err(|e| format!("clBuildProgram of the binary: {}", describe(e)))?;
    let mut k = finish(shared, req, options, program).map_err(|e| e.to_string())?;
    if k.params.is_none() {
        k.params = spaces_from_text(&entry.header.extra, k.num_args);
    }
    Ok(k)
}

/// This device's binary of a built program.
fn binary_of(shared: &Shared, program: &Program) -> Option<Vec<u8>> {
    let binaries = program.get_binaries().ok()?;
    let devices = program.get_devices().ok()?;
    let i = devices
        .iter()
        .position(|d| *d as usize == shared.device.id() as usize)
        .unwrap_or(0);
    binaries.into_iter().nth(i).filter(|b| !b.is_empty())
}

/// Compiles `req` for the device of `shared`, through the compile cache.
pub(crate) fn compile(
    shared: &Arc<Shared>,
    info: &DeviceInfo,
    cache: &CompileCache,
    req: &CompileRequest<'_>,
) -> Result<ClKernel, BackendError> {
    if !req.template_args.is_empty() {
        return Err(compile_error(
            req,
            "",
            "OpenCL C kernels take no template arguments".into(),
            String::new(),
        ));
    }
    if req.source.text.is_empty() {
        // OpenCL reads a length of 0 as "NUL-terminated": an empty source must never get there.
        return Err(compile_error(
            req,
            "",
            "the kernel source is empty".into(),
            String::new(),
        ));
    }
    let header_dir =
        header_dir(&req.source.headers).map_err(|r| compile_error(req, "", r, String::new()))?;
    let options = build_options(req, header_dir.as_deref())
        .map_err(|r| compile_error(req, "", r, String::new()))?;
    let target = cache_target(shared, info);
    let target: Vec<(&str, &str)> = target.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let device_label = format!("{} ({})", info.name, info.architecture);
    let label = Label {
        backend: "opencl",
        kernel: req.kernel_name,
        device: &device_label,
    };
    let key = CacheKey::for_request(&target, req);
    cache.compile_through(
        key.as_ref(),
        label,
        |entry| from_binary(shared, req, &options, entry),
        |store| {
            if let Some(dir) = &header_dir {
                materialise_headers(dir, &req.source.headers)
                    .map_err(|r| compile_error(req, "", r, String::new()))?;
            }
            // Compiler messages name the kernel's own file, not the driver's temporary copy
            // (sources of several files carry a directive per file already).
            let text = if req.source.text.starts_with("#line") {
                std::borrow::Cow::Borrowed(req.source.text.as_str())
            } else {
                let mut t = kw_core::kernel_def::line_directive(&req.source.file_name);
                t.push_str(&req.source.text);
                std::borrow::Cow::Owned(t)
            };
            let mut program = Program::create_from_source(&shared.context, &text)
                .map_err(|e| api("clCreateProgramWithSource", e))?;
            let device = shared.device.id();
            if let Err(e) = program.build(&[device], &options) {
                let log = program
                    .get_build_log(device)
                    .unwrap_or_else(|le| format!("(the build log could not be read: {le})"));
                // NVIDIA's compiler ignores `#line`: its lines are named here.
                let log = kw_core::kernel_def::name_raw_lines(&text, &log);
                return Err(compile_error(req, &options, describe(e), log));
            }
            let binary = if store {
                binary_of(shared, &program)
            } else {
                None
            };
            let k = finish(shared, req, &options, program)?;
            let artifact = binary.map(|payload| Artifact {
                kind: "opencl-binary".into(),
                symbol: req.kernel_name.to_string(),
                options: options.clone(),
                extra: spaces_to_text(&k.params),
                payload,
            });
            Ok((k, artifact))
        },
    )
}
