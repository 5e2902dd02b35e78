//! NVRTC compilation: options, embedded headers, name expressions, CUBIN or PTX.
//!
//! - Defines become `-DNAME=VALUE`, include directories `--include-path=DIR`; the request's
//!   flags follow; `-std=c++17` is added unless a flag sets the standard.
//! - The kernel is found through a name expression (`name` or `name<targs>`), so templated
//!   and namespaced (C++-mangled) kernels work as well as `extern "C"` ones: NVRTC
//!   instantiates the template and gives the lowered (mangled) name to look up.
//! - Code is generated for the device's exact architecture (`--gpu-architecture=sm_XY`,
//!   fetched with `nvrtcGetCUBIN`: no JIT at module load) when NVRTC supports it, else as
//!   PTX for the newest virtual architecture NVRTC has that the device can run
//!   (`compute_XY`), which the driver JIT-compiles at load.

use crate::nvrtc_lib::NvrtcLib;
use cudarc::nvrtc::sys::nvrtcProgram;
use kw_core::backend::{BackendError, CompileRequest};
use kw_core::compile_cache::{Artifact, Entry};
use std::ffi::{c_char, c_int, CStr, CString};
use std::time::Instant;

/// What NVRTC produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageKind {
    /// Machine code for the exact architecture.
    Cubin,
    /// PTX, JIT-compiled by the driver when loaded.
    Ptx,
}

/// The code target chosen for a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Target {
    /// `--gpu-architecture=...` value (`sm_90`, `compute_90`), or `None` if the flags set it.
    pub(crate) arch_option: Option<String>,
    /// What to fetch first.
    pub(crate) kind: ImageKind,
}

/// Chooses CUBIN for `sm_XY` when NVRTC lists that architecture (or lists none, being too old
/// to say), else PTX for the newest architecture NVRTC has that is not newer than the device.
pub(crate) fn choose_target(
    cc: (u32, u32),
    nvrtc_archs: &[u32],
    has_cubin: bool,
    flags: &[String],
) -> Target {
    let sets_arch = flags.iter().any(|f| {
        f.starts_with("-arch") || f.starts_with("--gpu-architecture") || f.starts_with("--gpu-name")
    });
    if sets_arch {
        let kind = if flags.iter().any(|f| f.contains("sm_")) && has_cubin {
            ImageKind::Cubin
        } else {
            ImageKind::Ptx
        };
        return Target {
            arch_option: None,
            kind,
        };
    }
    let num = cc.0 * 10 + cc.1;
    if has_cubin && (nvrtc_archs.is_empty() || nvrtc_archs.contains(&num)) {
        return Target {
            arch_option: Some(format!("sm_{num}")),
            kind: ImageKind::Cubin,
        };
    }
    let virt = nvrtc_archs
        .iter()
        .copied()
        .filter(|&a| a <= num)
        .max()
        .unwrap_or(num);
    Target {
        arch_option: Some(format!("compute_{virt}")),
        kind: ImageKind::Ptx,
    }
}

/// The full NVRTC option list for a request.
pub(crate) fn options(req: &CompileRequest<'_>, target: &Target) -> Vec<String> {
    let mut opts = Vec::with_capacity(req.defines.len() + req.flags.len() + 4);
    if let Some(arch) = &target.arch_option {
        opts.push(format!("--gpu-architecture={arch}"));
    }
    for (name, value) in req.defines {
        opts.push(format!("-D{name}={value}"));
    }
    for dir in req.include_dirs {
        opts.push(format!("--include-path={}", dir.display()));
    }
    let sets_std = req
        .flags
        .iter()
        .any(|f| f.starts_with("-std") || f.starts_with("--std"));
    if !sets_std {
        opts.push("-std=c++17".into());
    }
    opts.extend(req.flags.iter().cloned());
    opts
}

/// The name expression NVRTC resolves to the kernel: `ns::kernel` or `kernel<float, 4>`.
pub(crate) fn name_expression(kernel_name: &str, template_args: &[String]) -> String {
    if template_args.is_empty() {
        kernel_name.to_string()
    } else {
        format!("{kernel_name}<{}>", template_args.join(", "))
    }
}

/// A compiled program's image, ready for `cuModuleLoadData`.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// CUBIN bytes, or PTX text with its terminating NUL.
    pub image: Vec<u8>,
    /// Which of the two.
    pub kind: ImageKind,
    /// The name to look the function up by (mangled for C++ kernels).
    pub lowered_name: String,
    /// The options NVRTC was given, joined by spaces.
    pub options: String,
    /// NVRTC's log (warnings), possibly empty.
    pub log: String,
    /// Milliseconds spent in NVRTC (create, compile, fetch).
    pub nvrtc_ms: f64,
}

impl ImageKind {
    /// The name of the kind in cache entries.
    pub fn as_str(&self) -> &'static str {
        match self {
            ImageKind::Cubin => "cubin",
            ImageKind::Ptx => "ptx",
        }
    }
}

impl Compiled {
    /// What the compile cache keeps of it.
    pub(crate) fn artifact(&self) -> Artifact {
        Artifact {
            kind: self.kind.as_str().to_string(),
            symbol: self.lowered_name.clone(),
            options: self.options.clone(),
            extra: String::new(),
            payload: self.image.clone(),
        }
    }

    /// A cached image, ready to load; `Err` when the entry is not one this backend wrote.
    pub(crate) fn from_entry(entry: &Entry) -> Result<Compiled, String> {
        let kind = match entry.header.kind.as_str() {
            "cubin" => ImageKind::Cubin,
            "ptx" => ImageKind::Ptx,
            other => return Err(format!("an entry of kind `{other}`, not cubin or PTX")),
        };
        if entry.payload.is_empty() || entry.header.symbol.is_empty() {
            return Err("an empty image or kernel name".into());
        }
        if kind == ImageKind::Ptx && entry.payload.last() != Some(&0) {
            return Err("PTX without its terminating NUL".into());
        }
        Ok(Compiled {
            image: entry.payload.clone(),
            kind,
            lowered_name: entry.header.symbol.clone(),
            options: entry.header.options.clone(),
            log: String::new(),
            nvrtc_ms: 0.0,
        })
    }
}

/// Runs NVRTC on a request for a device of compute capability `cc`.
pub(crate) fn compile(
    nvrtc: &NvrtcLib,
    req: &CompileRequest<'_>,
    cc: (u32, u32),
) -> Result<Compiled, BackendError> {
    let start = Instant::now();
    let target = choose_target(cc, &nvrtc.archs, nvrtc.get_cubin.is_some(), req.flags);
    let opts = options(req, &target);
    let joined = opts.join(" ");
    let fail = |reason: String, log: String| BackendError::Compile {
        kernel: req.kernel_name.to_string(),
        file: req.source.file_name.clone(),
        options: joined.clone(),
        reason,
        log,
    };
    let cstr = |what: &str, s: &str| {
        CString::new(s).map_err(|_| fail(format!("{what} contains a NUL byte"), String::new()))
    };
    let src = cstr("the source", &req.source.text)?;
    let name = cstr("the file name", &req.source.file_name)?;
    let mut header_texts = Vec::with_capacity(req.source.headers.len());
    let mut header_names = Vec::with_capacity(req.source.headers.len());
    for h in &req.source.headers {
        header_texts.push(cstr(&format!("header {}", h.name), &h.text)?);
        header_names.push(cstr("a header name", &h.name)?);
    }
    let header_ptrs: Vec<*const c_char> = header_texts.iter().map(|c| c.as_ptr()).collect();
    let name_ptrs: Vec<*const c_char> = header_names.iter().map(|c| c.as_ptr()).collect();
    let c_opts = opts
        .iter()
        .map(|o| cstr("an option", o))
        .collect::<Result<Vec<_>, _>>()?;
    let opt_ptrs: Vec<*const c_char> = c_opts.iter().map(|c| c.as_ptr()).collect();
    let expr = cstr(
        "the kernel name",
        &name_expression(req.kernel_name, req.template_args),
    )?;
    let num_headers = c_int::try_from(header_ptrs.len())
        .map_err(|_| fail("too many headers".into(), String::new()))?;
    let num_opts = c_int::try_from(opt_ptrs.len())
        .map_err(|_| fail("too many options".into(), String::new()))?;

    let mut prog: nvrtcProgram = std::ptr::null_mut();
    // SAFETY: every pointer is a live NUL-terminated string (or an array of `num_headers`
    // of them) that outlives the program, which is destroyed by `Program`'s drop below.
    let rc = unsafe {
        (nvrtc.create_program)(
            &mut prog,
            src.as_ptr(),
            name.as_ptr(),
            num_headers,
            header_ptrs.as_ptr(),
            name_ptrs.as_ptr(),
        )
    };
    if rc != 0 {
        return Err(fail(
            format!("nvrtcCreateProgram: {}", nvrtc.error_string(rc)),
            String::new(),
        ));
    }
    let prog = Program { nvrtc, prog };
    // SAFETY: a live program and a NUL-terminated expression.
    let rc = unsafe { (nvrtc.add_name_expression)(prog.prog, expr.as_ptr()) };
    if rc != 0 {
        return Err(fail(
            format!("nvrtcAddNameExpression: {}", nvrtc.error_string(rc)),
            String::new(),
        ));
    }
    // SAFETY: a live program and `num_opts` NUL-terminated options.
    let rc = unsafe { (nvrtc.compile_program)(prog.prog, num_opts, opt_ptrs.as_ptr()) };
    let log = prog.log();
    if rc != 0 {
        return Err(fail(
            format!("nvrtcCompileProgram: {}", nvrtc.error_string(rc)),
            log,
        ));
    }
    let mut lowered: *const c_char = std::ptr::null();
    // SAFETY: a live, compiled program; the expression was added before compiling.
    let rc = unsafe { (nvrtc.get_lowered_name)(prog.prog, expr.as_ptr(), &mut lowered) };
    if rc != 0 || lowered.is_null() {
        return Err(fail(
            format!(
                "no kernel `{}` in the program (nvrtcGetLoweredName: {})",
                name_expression(req.kernel_name, req.template_args),
                nvrtc.error_string(rc)
            ),
            log,
        ));
    }
    // SAFETY: NVRTC returns a NUL-terminated string owned by the program, still alive.
    let lowered_name = unsafe { CStr::from_ptr(lowered) }
        .to_string_lossy()
        .into_owned();

    let (image, kind) = match (target.kind, nvrtc.get_cubin_size, nvrtc.get_cubin) {
        (ImageKind::Cubin, Some(size), Some(get)) => match prog.fetch(size, get) {
            Ok(bytes) if !bytes.is_empty() => (bytes, ImageKind::Cubin),
            _ => (
                prog.ptx().map_err(|r| fail(r, log.clone()))?,
                ImageKind::Ptx,
            ),
        },
        _ => (
            prog.ptx().map_err(|r| fail(r, log.clone()))?,
            ImageKind::Ptx,
        ),
    };
    Ok(Compiled {
        image,
        kind,
        lowered_name,
        options: joined,
        log,
        nvrtc_ms: start.elapsed().as_secs_f64() * 1e3,
    })
}

/// An NVRTC program, destroyed on drop.
struct Program<'a> {
    nvrtc: &'a NvrtcLib,
    prog: nvrtcProgram,
}

impl Program<'_> {
    /// Fetches a size-then-bytes output (log, PTX, CUBIN).
    fn fetch(
        &self,
        size_fn: unsafe extern "C" fn(nvrtcProgram, *mut usize) -> c_int,
        get_fn: unsafe extern "C" fn(nvrtcProgram, *mut c_char) -> c_int,
    ) -> Result<Vec<u8>, String> {
        let mut size = 0usize;
        // SAFETY: a live program and a valid out-pointer.
        let rc = unsafe { size_fn(self.prog, &mut size) };
        if rc != 0 {
            return Err(self.nvrtc.error_string(rc));
        }
        let mut buf = vec![0u8; size];
        if size > 0 {
            // SAFETY: `buf` holds the `size` bytes NVRTC said it will write.
            let rc = unsafe { get_fn(self.prog, buf.as_mut_ptr().cast()) };
            if rc != 0 {
                return Err(self.nvrtc.error_string(rc));
            }
        }
        Ok(buf)
    }

    fn log(&self) -> String {
        match self.fetch(self.nvrtc.get_log_size, self.nvrtc.get_log) {
            Ok(bytes) => String::from_utf8_lossy(&bytes)
                .trim_end_matches('\0')
                .trim_end()
                .to_string(),
            Err(e) => format!("(no log: {e})"),
        }
    }

    /// PTX text with its terminating NUL.
    fn ptx(&self) -> Result<Vec<u8>, String> {
        let mut ptx = self
            .fetch(self.nvrtc.get_ptx_size, self.nvrtc.get_ptx)
            .map_err(|e| format!("nvrtcGetPTX: {e}"))?;
        if ptx.last() != Some(&0) {
            ptx.push(0);
        }
        Ok(ptx)
    }
}

impl Drop for Program<'_> {
    fn drop(&mut self) {
        // SAFETY: the program is live and destroyed exactly once, here.
        unsafe { (self.nvrtc.destroy_program)(&mut self.prog) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kw_core::kernel_def::KernelSource;
    use std::path::PathBuf;

    fn source() -> KernelSource {
        KernelSource {
            file_name: "k.cu".into(),
            text: "extern \"C\" __global__ void k() {}".into(),
            headers: vec![],
        }
    }

    #[test]
    fn exact_architecture_gives_cubin_else_newest_older_ptx() {
        let t = choose_target((9, 0), &[75, 80, 86, 89, 90], true, &[]);
        assert_eq!(t.arch_option.as_deref(), Some("sm_90"));
        assert_eq!(t.kind, ImageKind::Cubin);
        let t = choose_target((10, 3), &[75, 80, 86, 89, 90], true, &[]);
        assert_eq!(t.arch_option.as_deref(), Some("compute_90"));
        assert_eq!(t.kind, ImageKind::Ptx);
        let t = choose_target((9, 0), &[], false, &[]);
        assert_eq!(t.arch_option.as_deref(), Some("compute_90"));
        assert_eq!(t.kind, ImageKind::Ptx);
        let t = choose_target((9, 0), &[90], true, &["-arch=compute_80".into()]);
        assert_eq!(t.arch_option, None);
        assert_eq!(t.kind, ImageKind::Ptx);
    }

    #[test]
    fn options_carry_defines_includes_flags_and_the_default_standard() {
        let src = source();
        let defines = vec![("BLOCK".to_string(), "128".to_string())];
        let flags = vec!["--use_fast_math".to_string()];
        let dirs = vec![PathBuf::from("/opt/inc")];
        let req = CompileRequest {
            source: &src,
            kernel_name: "k",
            defines: &defines,
            flags: &flags,
            include_dirs: &dirs,
            template_args: &[],
        };
        let t = choose_target((9, 0), &[90], true, &flags);
        assert_eq!(
            options(&req, &t),
            [
                "--gpu-architecture=sm_90",
                "-DBLOCK=128",
                "--include-path=/opt/inc",
                "-std=c++17",
                "--use_fast_math"
            ]
        );
        let flags = vec!["-std=c++20".to_string()];
        let req = CompileRequest {
            flags: &flags,
            ..req
        };
        assert!(!options(&req, &t).contains(&"-std=c++17".to_string()));
    }

    #[test]
    fn name_expressions_instantiate_templates() {
        assert_eq!(name_expression("ns::k", &[]), "ns::k");
        assert_eq!(
            name_expression("k", &["float".into(), "4".into()]),
            "k<float, 4>"
        );
    }
}
