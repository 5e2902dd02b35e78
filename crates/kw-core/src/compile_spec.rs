//! [`KernelDef::compile_spec`]: the one place where a definition, a configuration and a
//! device become what the compiler is asked to build. The runtime (`kernel-wisdom`) and the
//! tuner (`kw-replay`) both compile through it, so a configuration tuned offline is compiled
//! exactly as the application later compiles it; the launch geometry comes from the one
//! [`KernelDef::geometry`].

use crate::backend::CompileRequest;
use crate::config::Config;
use crate::device::DeviceInfo;
use crate::kernel_def::eval::DefError;
use crate::kernel_def::KernelDef;

/// What one configuration of a definition compiles to on one device: the definition's source,
/// kernel name and flags with the configuration's defines and template arguments. Borrow it
/// as a backend [`CompileRequest`] with [`CompileSpec::request`].
#[derive(Clone, Debug, PartialEq)]
pub struct CompileSpec<'d> {
    def: &'d KernelDef,
    defines: Vec<(String, String)>,
    template_args: Vec<String>,
}

impl KernelDef {
    /// The compile request of `config` on `device` (device attributes in defines and
    /// template arguments are resolved against it; `None` leaves them unresolved, an error
    /// where they are used).
    pub fn compile_spec(
        &self,
        config: &Config,
        device: Option<&DeviceInfo>,
    ) -> Result<CompileSpec<'_>, DefError> {
        Ok(CompileSpec {
            def: self,
            defines: self.defines_for(config, device)?,
            template_args: self.template_args_for(config, device)?,
        })
    }
}

impl CompileSpec<'_> {
    /// The request a backend compiles.
    pub fn request(&self) -> CompileRequest<'_> {
        CompileRequest {
            source: &self.def.source,
            kernel_name: &self.def.kernel_name,
            defines: &self.defines,
            flags: &self.def.compiler_flags,
            include_dirs: &[],
            template_args: &self.template_args,
        }
    }

    /// The `-D` defines, as `(name, C text)`.
    pub fn defines(&self) -> &[(String, String)] {
        &self.defines
    }

    /// The template arguments, as C++ text.
    pub fn template_args(&self) -> &[String] {
        &self.template_args
    }
}
