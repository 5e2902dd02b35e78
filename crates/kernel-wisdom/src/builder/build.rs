//! [`KernelBuilder::build`]: the declaration turned into a checked [`KernelDef`] (source read
//! and headers embedded, parameters, geometry, arguments; every problem reported at once).

use super::source::{read_files, Source};
use super::KernelBuilder;
use crate::error::Error;
use kw_core::includes;
use kw_core::kernel_def::check::DefProblem;
use kw_core::kernel_def::{KernelSource, KERNEL_DEF_FORMAT_VERSION};
use kw_core::{
    backend::Device, device::BackendKind, device::DeviceInfo, kernel_def::ArgKind,
    kernel_def::Grid, kernel_def::KernelDef,
};
use std::path::Path;

impl KernelBuilder {
    /// Builds and checks the definition; every problem found is reported at once.
    pub fn build(&self) -> Result<KernelDef, Error> {
        self.build_checked(None)
    }

    /// Like [`KernelBuilder::build`], also checking the default configuration against a
    /// device's limits (block size, threads per block, shared memory).
    pub fn build_for(&self, device: &dyn Device) -> Result<KernelDef, Error> {
        self.build_checked(Some(device.info()))
    }

    fn build_checked(&self, device: Option<&DeviceInfo>) -> Result<KernelDef, Error> {
        let mut problems = self.problems.clone();
        let file_name = self.source.file_name();
        let (text, mut dirs) = match &self.source {
            Source::File(path) => match kw_core::files::read_to_string(
                path,
                kw_core::files::ReadRules::new("kernel source", kw_core::files::caps::SOURCE),
            ) {
                Ok(t) => (t, vec![includes::parent_dir(path)]),
                Err(e) => {
                    problems.push(DefProblem {
                        location: "source".into(),
                        message: format!("cannot read {e}"),
                    });
                    (String::new(), Vec::new())
                }
            },
            Source::Files(paths) => {
                let (text, dirs, read_problems) = read_files(paths);
                problems.extend(read_problems);
                (text, dirs)
            }
            Source::Text { text, .. } => (text.clone(), Vec::new()),
        };
        dirs.extend(self.include_dirs.iter().cloned());
        let (found, missing) = includes::resolve(&text, &dirs);
        let mut headers = self.headers.clone();
        headers.extend(
            found
                .into_iter()
                .filter(|h| !self.headers.iter().any(|e| e.name == h.name)),
        );
        for (name, why) in missing
            .into_iter()
            .filter(|(m, _)| !self.headers.iter().any(|h| &h.name == m))
        {
            let message = why.unwrap_or_else(|| {
                let searched: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
                format!("not found (searched: {})", searched.join(", "))
            });
            problems.push(DefProblem {
                location: format!("#include \"{name}\""),
                message,
            });
        }
        let backend = self.backend.unwrap_or_else(|| {
            let ext = Path::new(&file_name).extension().and_then(|e| e.to_str());
            match ext {
                Some("cu" | "cuh") => BackendKind::Cuda,
                _ => BackendKind::Opencl,
            }
        });
        let mut args = self.args.clone();
        for (name, len) in &self.buffer_lens {
            match args.iter_mut().find(|a| &a.name == name) {
                Some(a) if a.kind == ArgKind::Buffer => a.len = Some(len.clone()),
                Some(_) => problems.push(DefProblem {
                    location: format!("buffer_len(\"{name}\")"),
                    message: "the argument is a scalar; only buffers have a length".into(),
                }),
                None => problems.push(DefProblem {
                    location: format!("buffer_len(\"{name}\")"),
                    message: format!(
                        "no argument `{name}` is declared (arguments: {})",
                        self.args
                            .iter()
                            .map(|a| a.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                }),
            }
        }
        for (name, tolerance) in &self.tolerances {
            match args.iter_mut().find(|a| &a.name == name) {
                Some(a) if a.kind == ArgKind::Buffer => a.tolerance = Some(*tolerance),
                _ => problems.push(DefProblem {
                    location: format!("tolerance(\"{name}\")"),
                    message: format!("no buffer argument `{name}` is declared"),
                }),
            }
        }
        let def = KernelDef {
            format_version: KERNEL_DEF_FORMAT_VERSION,
            backend,
            source: KernelSource {
                file_name,
                text,
                headers,
            },
            kernel_name: self.kernel_name.clone(),
            template_args: self.template_args.clone(),
            compiler_flags: self.compiler_flags.clone(),
            defines: self.defines.clone(),
            params_as_defines: self.params_as_defines,
            parameters: self.params.clone(),
            restrictions: self.restrictions.clone(),
            objective: self.objective.clone(),
            tuning_key: self
                .tuning_key
                .clone()
                .unwrap_or_else(|| self.kernel_name.clone()),
            problem_size: self.problem_size.clone(),
            block_size: self.block_size.clone(),
            grid: self
                .grid
                .clone()
                .unwrap_or_else(|| Grid::Divisors(self.block_size.clone())),
            shared_memory: self.shared_memory.clone(),
            args,
            local_args: self.local_args.clone(),
            symbols: self.symbols.clone(),
        };
        problems.extend(def.check(device));
        if problems.is_empty() {
            Ok(def)
        } else {
            Err(Error::Definition {
                kernel: self.kernel_name.clone(),
                problems,
            })
        }
    }
}
