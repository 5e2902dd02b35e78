//! Restrictions that depend on the launch: validity at a problem size.
//!
//! A restriction may mention the problem size (`problem_size.x % MWG == 0`) and the kernel's
//! arguments (a scalar's value, a buffer's element count) as well as tuning parameters and
//! device attributes. Such a *launch restriction* cannot be decided once for the whole space:
//!
//! - [`KernelDef::space`](crate::kernel_def::KernelDef::space) is the declared space: only the restrictions that do not depend on
//!   the launch (every configuration that is valid at *some* launch is in it);
//! - [`KernelDef::space_at`](crate::kernel_def::KernelDef::space_at) is the space at one launch (every restriction, the problem size
//!   and arguments resolved): what `kw tune` searches for a capture;
//! - [`KernelDef::check_at_launch`](crate::kernel_def::KernelDef::check_at_launch) says whether one configuration is valid at a launch: the
//!   runtime skips wisdom records that are not, falls through to the next candidate and then
//!   to the default configuration, and refuses to launch when the default is not valid either.

use crate::config::Config;
use crate::device::DeviceInfo;
use crate::expr::Expr;
use crate::kernel_def::eval::{ArgValues, DefError, DefScope};
use crate::space::TuningSpace;
use thiserror::Error;

/// Why a configuration is not valid at a launch.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum LaunchInvalid {
    /// A launch restriction is false.
    #[error("restriction `{restriction}` is false at problem size {problem_size:?}")]
    Broken {
        /// The restriction, as text.
        restriction: String,
        /// The launch's problem size.
        problem_size: [i64; 3],
    },
    /// A launch restriction could not be evaluated.
    #[error("restriction `{restriction}` cannot be evaluated at problem size {problem_size:?}: {reason}")]
    Eval {
        /// The restriction, as text.
        restriction: String,
        /// The launch's problem size.
        problem_size: [i64; 3],
        /// Why.
        reason: String,
    },
}

/// Whether an expression depends on the launch: it mentions the problem size or an argument.
pub fn depends_on_launch(e: &Expr) -> bool {
    let mut found = false;
    e.visit(&mut |n| found |= matches!(n, Expr::ProblemSize(_) | Expr::Arg(_)));
    found
}

impl crate::kernel_def::KernelDef {
    /// The restrictions that do not depend on the launch (parameters, device, constants).
    pub fn static_restrictions(&self) -> Vec<Expr> {
        self.restrictions
            .iter()
            .filter(|r| !depends_on_launch(r))
            .cloned()
            .collect()
    }

    /// Whether some restriction depends on the launch (problem size or arguments).
    pub fn has_launch_restrictions(&self) -> bool {
        self.restrictions.iter().any(depends_on_launch)
    }

    /// Whether some restriction mentions an argument (then two launches of one problem size
    /// may differ in which configurations are valid).
    pub fn launch_restrictions_use_args(&self) -> bool {
        self.restrictions.iter().any(|r| {
            let mut found = false;
            r.visit(&mut |n| found |= matches!(n, Expr::Arg(_)));
            found
        })
    }

    /// Checks that `config` satisfies every launch restriction at this launch (`args`: the
    /// launch's argument values, `None` when only the problem size is known: restrictions
    /// over arguments then count as satisfied).
    pub fn check_at_launch(
        &self,
        config: &Config,
        problem_size: &[i64; 3],
        args: Option<&dyn ArgValues>,
        device: Option<&DeviceInfo>,
    ) -> Result<(), LaunchInvalid> {
        let scope = DefScope {
            config: Some(config),
            args,
            problem_size: Some(problem_size),
            device,
            ..DefScope::new(self)
        };
        // A restriction that cannot be evaluated is an error only where no other is broken
        // (a guard such as `args.k != 0` rules the launch out first), as in the space's count.
        let mut unevaluable = None;
        for r in self.restrictions.iter().filter(|r| depends_on_launch(r)) {
            match r.eval_bool(&scope) {
                Ok(true) => {}
                Ok(false) => {
                    return Err(LaunchInvalid::Broken {
                        restriction: r.quoted(),
                        problem_size: *problem_size,
                    })
                }
                Err(crate::eval::EvalError::UnknownArg(_)) if args.is_none() => {}
                Err(e) => {
                    unevaluable = unevaluable.or(Some(LaunchInvalid::Eval {
                        restriction: r.quoted(),
                        problem_size: *problem_size,
                        reason: e.to_string(),
                    }))
                }
            }
        }
        unevaluable.map_or(Ok(()), Err)
    }

    /// The tuning space at one launch: every restriction, with the problem size, the
    /// arguments and the device resolved.
    pub fn space_at(
        &self,
        device: Option<&DeviceInfo>,
        problem_size: &[i64; 3],
        args: &dyn ArgValues,
    ) -> Result<TuningSpace, DefError> {
        let scope = DefScope {
            device,
            problem_size: Some(problem_size),
            args: Some(args),
            ..DefScope::new(self)
        };
        TuningSpace::with_scope(self.parameters.clone(), self.restrictions.clone(), &scope).map_err(
            |source| DefError::Space {
                kernel: self.kernel_name.clone(),
                source: Box::new(source),
            },
        )
    }
}

#[cfg(test)]
mod tests {

    use crate::expr::{arg, param, problem_size};
    use crate::kernel_def::sample_def;
    use crate::value::Value;

    /// `sample_def` with the restriction that the block size divides n.
    fn tiled() -> crate::kernel_def::KernelDef {
        let mut def = sample_def();
        def.restrictions
            .push((problem_size(0) % param("block_size_x")).eq_(0));
        def
    }

    #[test]
    fn the_declared_space_ignores_launch_restrictions() {
        let def = tiled();
        assert!(def.check(None).is_empty(), "{:?}", def.check(None));
        assert!(def.has_launch_restrictions());
        assert_eq!(
            def.space(None).unwrap().len(),
            sample_def().space(None).unwrap().len()
        );
    }

    #[test]
    fn validity_and_space_at_a_size() {
        let def = tiled();
        let args = vec![Value::Int(96); 4];
        let mut c = def.default_config(); // block_size_x = 128
        let err = def
            .check_at_launch(&c, &[96, 1, 1], None, None)
            .unwrap_err();
        assert!(err.to_string().contains("problem_size[0]"), "{err}");
        assert!(def.check_at_launch(&c, &[256, 1, 1], None, None).is_ok());
        c.set("block_size_x", 32);
        assert!(def.check_at_launch(&c, &[96, 1, 1], None, None).is_ok());
        let at = def.space_at(None, &[96, 1, 1], &args).unwrap();
        let all = def.space(None).unwrap();
        assert!(at.len() < all.len());
        for i in 0..at.len() {
            let config = at.config(&at.point_at(i).unwrap());
            assert_eq!(
                config.get("block_size_x").and_then(Value::as_int).unwrap() % 96 % 32,
                0
            );
            assert!(def
                .check_at_launch(&config, &[96, 1, 1], None, None)
                .is_ok());
        }
    }

    /// A space built without a problem size never guesses one: a restriction over it is an
    /// evaluation error (a T1 file's condition over the problem size, counted without one).
    #[test]
    fn no_problem_size_is_an_error_not_a_guess() {
        let def = tiled();
        let err = crate::space::TuningSpace::new(def.parameters.clone(), def.restrictions.clone())
            .unwrap_err();
        assert!(err.to_string().contains("problem size"), "{err}");
    }

    #[test]
    fn restrictions_over_scalar_arguments() {
        let mut def = sample_def();
        def.restrictions
            .push((arg("n") % param("block_size_x")).eq_(0));
        assert!(def.check(None).is_empty(), "{:?}", def.check(None));
        assert!(def.launch_restrictions_use_args());
        let c = def.default_config();
        let good = vec![Value::Int(256); 4];
        let bad = vec![Value::Int(100); 4];
        assert!(def
            .check_at_launch(&c, &[1, 1, 1], Some(&good), None)
            .is_ok());
        assert!(def
            .check_at_launch(&c, &[1, 1, 1], Some(&bad), None)
            .is_err());
    }

    /// A launch restriction that cannot be evaluated (`% args.n` at n = 0) is broken by its
    /// guard whatever their order; without a guard it is an evaluation error.
    #[test]
    fn a_guard_listed_after_a_division_decides_at_launch() {
        let c = sample_def().default_config();
        for guarded in [true, false] {
            let mut def = sample_def();
            def.restrictions.push((problem_size(0) % arg("n")).eq_(0));
            if guarded {
                def.restrictions.push(arg("n").ne_(0));
            }
            let zero = vec![Value::Int(0); 4];
            let err = def
                .check_at_launch(&c, &[64, 1, 1], Some(&zero), None)
                .unwrap_err();
            let broken = matches!(err, super::LaunchInvalid::Broken { .. });
            assert_eq!(broken, guarded, "{err}");
        }
    }
}
