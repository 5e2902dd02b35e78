//! Validity at a launch: the restrictions that depend on the problem size or the arguments
//! ([`kw_core::def_launch`]), applied to every configuration a launch may use (an installed
//! selector's answer, wisdom records, the default, an explicit configuration).

use super::WisdomKernel;
use crate::error::Error;
use kw_core::backend::{ArgView, KernelArg};
use kw_core::config::Config;
use kw_core::def_eval::ArgValues;

impl WisdomKernel {
    /// Checks that `config` is valid at a launch of problem size `ps` (with these arguments
    /// when known). Free when the definition has no launch restriction.
    pub(super) fn valid_at(
        &self,
        config: &Config,
        ps: &[i64; 3],
        args: Option<&[KernelArg<'_>]>,
    ) -> Result<(), Error> {
        if !self.launch_restricted {
            return Ok(());
        }
        let view = args.map(ArgView);
        let values = view.as_ref().map(|v| v as &dyn ArgValues);
        self.launch_def
            .check_at_launch(config, ps, values, Some(self.device.info()))
            .or_else(|_| {
                self.def
                    .check_at_launch(config, ps, values, Some(self.device.info()))
            })
            .map_err(|e| Error::InvalidConfig {
                kernel: self.def.kernel_name.clone(),
                config: config.key(),
                reason: e.to_string(),
            })
    }

    /// The default configuration, if it is valid at this launch; else the typed error that
    /// stops the launch.
    pub(super) fn default_at(
        &self,
        ps: &[i64; 3],
        args: Option<&[KernelArg<'_>]>,
    ) -> Result<Config, Error> {
        match self.valid_at(&self.default_config, ps, args) {
            Ok(()) => Ok(self.default_config.clone()),
            Err(e) => Err(Error::NoValidConfig {
                kernel: self.def.kernel_name.clone(),
                problem_size: *ps,
                config: self.default_config.key(),
                reason: match e {
                    Error::InvalidConfig { reason, .. } => reason,
                    other => other.to_string(),
                },
            }),
        }
    }

    /// Whether a configuration selected for this problem size earlier may serve a launch
    /// with these arguments (restrictions over argument values may differ between launches
    /// of one problem size).
    pub(super) fn still_valid(
        &self,
        config: &Config,
        ps: &[i64; 3],
        args: &[KernelArg<'_>],
    ) -> bool {
        !self.args_restricted || self.valid_at(config, ps, Some(args)).is_ok()
    }
}

/// A problem size as three axes (missing ones are 1).
pub(super) fn three_axes(problem_size: &[i64]) -> [i64; 3] {
    let mut ps = [1i64; 3];
    for (axis, v) in problem_size.iter().take(3).enumerate() {
        ps[axis] = *v;
    }
    ps
}
