//! [`CompileRequest`]: what a backend is asked to compile (source, kernel name, defines,
//! flags, include directories, template arguments).

use crate::kernel_def::KernelSource;
use std::path::PathBuf;

/// What to compile. Defines become `-DNAME=VALUE`; headers are made available to
/// `#include "NAME"`; include directories become `-I DIR`.
#[derive(Clone, Copy, Debug)]
pub struct CompileRequest<'a> {
    /// The source and its embedded headers.
    pub source: &'a KernelSource,
    /// The kernel function's name.
    pub kernel_name: &'a str,
    /// `(name, value)` pairs, passed as `-Dname=value`.
    pub defines: &'a [(String, String)],
    /// Extra compiler flags.
    pub flags: &'a [String],
    /// Include directories.
    pub include_dirs: &'a [PathBuf],
    /// Template arguments (CUDA; must be empty for OpenCL).
    pub template_args: &'a [String],
}
