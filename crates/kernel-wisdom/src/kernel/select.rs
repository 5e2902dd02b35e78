//! Selection per problem size, and validity at a launch: the restrictions that depend on the
//! problem size or the arguments ([`kw_core::kernel_def::launch_check`]) apply to every configuration a
//! launch may use (an installed selector's answer, wisdom records, the default, an explicit
//! configuration).

use super::{Selected, WisdomKernel};
use crate::error::Error;
use crate::wisdom::Choice;
use kw_core::backend::KernelArg;
use kw_core::config::Config;
use kw_core::device::BackendKind;
use kw_core::kernel_def::eval::ArgValues;
use kw_core::kernel_def::eval::ArgView;
use kw_core::wisdom::Step;

impl WisdomKernel {
    /// What the wisdom selects for a problem size, and at which step (without launching):
    /// records whose configuration is not valid at that size are skipped.
    pub fn choice(&self, problem_size: &[i64]) -> Choice {
        let ps = three_axes(problem_size);
        self.wisdom().choose_filling(
            problem_size,
            &|c| self.valid_at(c, &ps, None).map_err(|e| e.to_string()),
            Some(&|c, size| self.launch_shape(c, size)),
        )
    }

    /// The blocks of a launch of `config` at `size` and the device's compute units, from the
    /// definition's launch geometry; `None` when the geometry needs the launch's arguments or
    /// the device does not say how many compute units it has. The wisdom's fill rule
    /// ([`kw_core::wisdom::select_filling`]) and its alternates use it
    /// ([`crate::wisdom::WisdomSource::choose_filling`]).
    pub(super) fn launch_shape(&self, config: &Config, size: &[i64]) -> Option<(f64, f64)> {
        let units = self.device.info().compute_units;
        if units == 0 {
            return None;
        }
        let ps = three_axes(size);
        let g = self
            .evaluate(|def| def.geometry(config, &ps, None, Some(self.device.info())))
            .ok()?;
        let blocks: f64 = g.grid.iter().map(|&b| f64::from(b)).product();
        (blocks >= 1.0).then_some((blocks, f64::from(units)))
    }

    /// The configuration for a problem size: an installed selector's answer if it gives one
    /// that is valid, else the wisdom's choice ([`WisdomKernel::choice`]: closest record by
    /// device, architecture, backend and problem size), else the default configuration.
    /// Called once per new problem size, never on the hot path. Only configurations valid
    /// at the problem size are chosen; when none is (not even the default), the answer is
    /// an [`Error::NoValidConfig`].
    pub fn select_config(&self, problem_size: &[i64; 3]) -> Result<Config, Error> {
        self.select(problem_size, None).map(|(c, _, _)| c)
    }

    /// [`WisdomKernel::select_config`] for a launch with these arguments, and whether an
    /// exact wisdom record (same device, same problem size) decided (then capture needs
    /// `KW_CAPTURE_FORCE`).
    pub(super) fn select(
        &self,
        problem_size: &[i64; 3],
        args: Option<&[KernelArg<'_>]>,
    ) -> Result<(Config, bool, Option<Config>), Error> {
        if let Some(selector) = &self.selector {
            if let Some(config) = selector(problem_size) {
                let valid = self
                    .validate(&config)
                    .and_then(|()| self.valid_at(&config, problem_size, args));
                match valid {
                    Ok(()) => return Ok((config, false, None)),
                    Err(e) => {
                        kw_core::diag::warn(&format!("ignoring the selected configuration: {e}"))
                    }
                }
            }
        }
        let choice = self.wisdom().choose_filling(
            problem_size,
            &|c| {
                self.valid_at(c, problem_size, args)
                    .map_err(|e| e.to_string())
            },
            Some(&|c, size| self.launch_shape(c, size)),
        );
        if let Some(record) = &choice.record {
            // Where the record's alternate was chosen, the record's own configuration is the
            // one to fall back on if the alternate does not compile.
            let own = (record.config != choice.config && self.validate(&record.config).is_ok())
                .then(|| record.config.clone());
            match self.validate(&choice.config) {
                Ok(()) => {
                    let exact = choice.step == Step::ExactDeviceExactSize;
                    return Ok((choice.config, exact, own));
                }
                Err(e) => kw_core::diag::warn(&format!("ignoring the wisdom's configuration: {e}")),
            }
        }
        Ok((self.default_at(problem_size, args)?, false, None))
    }

    /// Selects a configuration valid at this launch and compiles it; falls back to the
    /// record's own configuration where its alternate was selected, then to the default (when
    /// valid here), if the selected one does not compile.
    pub(super) fn select_and_compile(
        &self,
        ps: &[i64; 3],
        args: &[KernelArg<'_>],
    ) -> Result<Selected, Error> {
        let (config, exact_wisdom, own) = self.select(ps, Some(args))?;
        match self.make_selected(config.clone(), ps) {
            Ok(s) => Ok(Selected { exact_wisdom, ..s }),
            Err(e) if config != self.default_config => {
                self.record_failure(&config, ps, &e);
                if let Some(own) = own {
                    match self.make_selected(own.clone(), ps) {
                        Ok(s) => return Ok(s),
                        Err(e) => self.record_failure(&own, ps, &e),
                    }
                }
                let default = self.default_at(ps, Some(args))?;
                self.make_selected(default, ps)
            }
            Err(e) => Err(e),
        }
    }

    /// Checks that `config` is valid at a launch of problem size `ps` (with these arguments
    /// when known): its restrictions over the launch, and on CUDA the grid's limits (a
    /// configuration whose grid CUDA cannot launch is passed over by the selection instead
    /// of failing at the launch). Called for a new problem size or an explicit
    /// configuration, never on the memoised launch path.
    pub(super) fn valid_at(
        &self,
        config: &Config,
        ps: &[i64; 3],
        args: Option<&[KernelArg<'_>]>,
    ) -> Result<(), Error> {
        let view = args.map(ArgView);
        let values = view.as_ref().map(|v| v as &dyn ArgValues);
        // A geometry that cannot be computed here (it needs the arguments) is checked by the
        // launch itself; one past the device's local memory is invalid here.
        match self.config_geometry(config, ps, values) {
            Err(e @ Error::InvalidConfig { .. }) => return Err(e),
            Ok(g) if self.device.info().backend == BackendKind::Cuda => {
                if let Some(why) = cuda_grid_limit(g.grid) {
                    return Err(Error::InvalidConfig {
                        kernel: self.def.kernel_name.clone(),
                        config: config.key(),
                        reason: why,
                    });
                }
            }
            _ => {}
        }
        if !self.launch_restricted {
            return Ok(());
        }
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

/// Why a CUDA grid of `grid` blocks cannot be launched (at most 2^31 - 1 blocks along x and
/// 65535 along y and z, on every CUDA device), or `None`.
fn cuda_grid_limit(grid: [u32; 3]) -> Option<String> {
    const LIMITS: [u32; 3] = [i32::MAX as u32, 65_535, 65_535];
    let axis = (0..3).find(|&a| grid[a] > LIMITS[a])?;
    Some(format!(
        "its grid of {} x {} x {} blocks exceeds CUDA's limit of {} blocks along {}",
        grid[0],
        grid[1],
        grid[2],
        LIMITS[axis],
        ["x", "y", "z"][axis]
    ))
}

/// A problem size as three axes (missing ones are 1).
pub(super) fn three_axes(problem_size: &[i64]) -> [i64; 3] {
    let mut ps = [1i64; 3];
    for (axis, v) in problem_size.iter().take(3).enumerate() {
        ps[axis] = *v;
    }
    ps
}

#[cfg(test)]
mod tests {
    use super::cuda_grid_limit;

    #[test]
    fn the_cuda_grid_limits_per_axis() {
        assert_eq!(cuda_grid_limit([i32::MAX as u32, 65_535, 65_535]), None);
        let z = cuda_grid_limit([4, 4, 65_536]).unwrap();
        assert!(
            z.contains("4 x 4 x 65536") && z.ends_with("65535 blocks along z"),
            "{z}"
        );
        assert!(cuda_grid_limit([1, 70_000, 1])
            .unwrap()
            .ends_with("along y"));
        assert!(cuda_grid_limit([1 << 31, 1, 1])
            .unwrap()
            .ends_with("along x"));
    }
}
