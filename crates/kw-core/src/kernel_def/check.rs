//! Checking a [`KernelDef`]: every problem at once, each with where it is and, for unknown
//! names, a suggestion.

use crate::config::Config;
use crate::device::{BackendKind, DeviceInfo};
use crate::did_you_mean::closest;
use crate::eval::EvalError;
use crate::expr::{ArgRef, Expr};
use crate::kernel_def::{Access, ArgKind, KernelDef};
use std::fmt;

/// One problem of a kernel definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DefProblem {
    /// Where: `block_size[0]`, `parameter tile`, `default configuration`, ...
    pub location: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for DefProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

/// What an expression may mention, by its place in the definition.
#[derive(Clone, Copy)]
struct Allowed {
    params: bool,
    args: bool,
    problem_size: bool,
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

fn did_you_mean(s: Option<String>) -> String {
    s.map(|s| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default()
}

impl KernelDef {
    /// Every problem of the definition, checked against `device` when one is given (device
    /// limits of the default configuration's geometry). An empty list means it is usable.
    pub fn check(&self, device: Option<&DeviceInfo>) -> Vec<DefProblem> {
        let mut out = Vec::new();
        let mut push =
            |location: String, message: String| out.push(DefProblem { location, message });
        // CUDA kernels may live in namespaces (`ns::kernel`, found by name expression).
        let name_ok = match self.backend {
            BackendKind::Cuda => self.kernel_name.split("::").all(is_identifier),
            BackendKind::Opencl => is_identifier(&self.kernel_name),
        };
        if !name_ok {
            push(
                "kernel name".into(),
                format!("`{}` is not a valid identifier", self.kernel_name),
            );
        }
        if self.tuning_key.trim().is_empty() {
            push("tuning key".into(), "is empty".into());
        }
        if self.backend == BackendKind::Opencl && !self.template_args.is_empty() {
            push(
                "template_args".into(),
                "OpenCL C kernels take no template arguments".into(),
            );
        }
        if self.problem_size.is_empty() || self.problem_size.len() > 3 {
            push(
                "problem_size".into(),
                format!("needs 1 to 3 axes, has {}", self.problem_size.len()),
            );
        }
        // An axis that is a constant (it mentions no argument or device) is known now: a
        // negative one could never launch. (0 is an empty launch: nothing to do.)
        for (i, e) in self.problem_size.iter().enumerate() {
            if let Ok(v) = e.eval_int(&crate::kernel_def::eval::DefScope::new(self)) {
                if v < 0 {
                    push(
                        format!("problem_size[{i}]"),
                        format!("`{e}` is {v}: a size must be >= 0"),
                    );
                }
            }
        }
        for (i, p) in self.parameters.iter().enumerate() {
            let loc = format!("parameter `{}`", p.name);
            if !is_identifier(&p.name) {
                push(loc.clone(), "the name is not a valid identifier".into());
            }
            if self.parameters[..i].iter().any(|q| q.name == p.name) {
                push(loc.clone(), "is declared twice".into());
            }
            if p.values.is_empty() {
                push(loc.clone(), "has no values".into());
            } else if !p.values.contains(&p.default) {
                push(
                    loc.clone(),
                    format!("default {} is not one of its values", p.default),
                );
            }
            for v in crate::space::repeated_values(&p.values) {
                push(loc.clone(), format!("lists the value {v} twice"));
            }
            // A NaN equals nothing (no record could name it) and JSON holds neither.
            if let Some(v) = p
                .values
                .iter()
                .find(|v| matches!(v, crate::value::Value::Float(f) if !f.is_finite()))
            {
                push(
                    loc.clone(),
                    format!("lists {v}, which is not a finite number"),
                );
            }
        }
        for (i, a) in self.args.iter().enumerate() {
            let loc = format!("argument `{}`", a.name);
            if !is_identifier(&a.name) {
                push(loc.clone(), "the name is not a valid identifier".into());
            }
            if self.args[..i].iter().any(|b| b.name == a.name) {
                push(loc.clone(), "is declared twice".into());
            }
            if a.kind == ArgKind::Scalar && a.access != Access::In {
                push(loc.clone(), "a scalar argument can only be an input".into());
            }
            if a.kind == ArgKind::Scalar && a.len.is_some() {
                push(loc, "a scalar argument has no length".into());
            }
        }
        for name in self.defines.keys() {
            if !is_identifier(name) {
                push(
                    format!("define `{name}`"),
                    "the name is not a valid identifier (a macro name)".into(),
                );
            }
        }
        // OpenCL's build options are one string split at whitespace: `-DT=unsigned int`
        // cannot be passed (NVRTC takes each option whole). The default configuration's
        // defines must compile (a parameter's, a constant's, one computed from parameters);
        // another value with whitespace only fails the configurations that take it (as any
        // configuration that does not compile).
        if self.backend == BackendKind::Opencl {
            if let Ok(defines) = self.defines_for(&self.default_config(), None) {
                for (name, value) in defines {
                    if !value.chars().any(char::is_whitespace) {
                        continue;
                    }
                    let parameter = self.params_as_defines
                        && !self.defines.contains_key(&name)
                        && self.parameters.iter().any(|p| p.name == name);
                    push(
                        if parameter {
                            format!("parameter `{name}`")
                        } else {
                            format!("define `{name}`")
                        },
                        format!(
                            "its default {value} holds whitespace, which OpenCL build options \
                             cannot carry as -D{name}=...: give a name without spaces (e.g. a \
                             typedef)"
                        ),
                    );
                }
            }
        }
        self.check_locals_and_symbols(&mut push);
        let geometry = Allowed {
            params: true,
            args: true,
            problem_size: true,
        };
        let compile_time = Allowed {
            params: true,
            args: false,
            problem_size: false,
        };
        let problem = Allowed {
            params: false,
            args: true,
            problem_size: false,
        };
        let length = Allowed {
            params: false,
            args: true,
            problem_size: true,
        };
        for a in &self.args {
            if let Some(len) = &a.len {
                self.check_names(&format!("length of `{}`", a.name), len, length, &mut push);
            }
        }
        for (label, e) in self.labelled_exprs() {
            // Restrictions may depend on the launch (problem size, arguments): see
            // `kernel_def::launch_check`. Defines and template arguments are fixed at compile time.
            let allowed = if label.starts_with("problem_size") {
                problem
            } else if label.starts_with("define") || label.starts_with("template") {
                compile_time
            } else {
                geometry
            };
            self.check_names(&label, e, allowed, &mut push);
        }
        if let Some(o) = &self.objective {
            if let Some(name) = o.unknown_name(self) {
                out.push(DefProblem {
                    location: format!("objective `{}`", o.name),
                    message: format!(
                        "unknown name `{name}` (it may use `time`, the problem size and the \
                         tuning parameters)"
                    ),
                });
            }
        }
        if out.is_empty() {
            self.check_default(device, &mut out);
        }
        out
    }

    /// `__local` arguments (OpenCL only, each at its own position within the parameter
    /// list, names unique) and constant-memory symbols (CUDA only, names unique, non-empty).
    fn check_locals_and_symbols(&self, push: &mut impl FnMut(String, String)) {
        let total = self.args.len() + self.local_args.len();
        for (i, l) in self.local_args.iter().enumerate() {
            let loc = format!("local argument `{}`", l.name);
            if self.backend != BackendKind::Opencl {
                push(
                    loc.clone(),
                    "`__local` arguments exist in OpenCL only; a CUDA kernel takes dynamic \
                     shared memory through `shared_memory`"
                        .into(),
                );
            }
            if !is_identifier(&l.name) {
                push(loc.clone(), "the name is not a valid identifier".into());
            }
            if self.args.iter().any(|a| a.name == l.name)
                || self.local_args[..i].iter().any(|m| m.name == l.name)
            {
                push(loc.clone(), "the name is declared twice".into());
            }
            if l.position >= total {
                push(
                    loc.clone(),
                    format!(
                        "position {} is outside the kernel's {total} parameters ({} arguments \
                         and {} local arguments)",
                        l.position,
                        self.args.len(),
                        self.local_args.len()
                    ),
                );
            }
            if self.local_args[..i]
                .iter()
                .any(|m| m.position == l.position)
            {
                push(loc, format!("position {} is taken twice", l.position));
            }
        }
        if self.local_args.len() > crate::kernel_def::eval::LocalArgs::MAX {
            push(
                "local arguments".into(),
                format!(
                    "{} declared, at most {} are supported",
                    self.local_args.len(),
                    crate::kernel_def::eval::LocalArgs::MAX
                ),
            );
        }
        for (i, sym) in self.symbols.iter().enumerate() {
            let loc = format!("constant symbol `{}`", sym.name);
            if self.backend != BackendKind::Cuda {
                push(
                    loc.clone(),
                    "constant-memory symbols are set from the host in CUDA only; in OpenCL pass \
                     the data as a `__constant` pointer argument (a buffer)"
                        .into(),
                );
            }
            if !is_identifier(&sym.name) {
                push(loc.clone(), "the name is not a valid identifier".into());
            }
            if self.symbols[..i].iter().any(|t| t.name == sym.name) {
                push(loc.clone(), "is declared twice".into());
            }
            if sym.len == 0 {
                push(loc, "has a length of 0".into());
            }
        }
    }

    fn check_names(
        &self,
        label: &str,
        e: &Expr,
        allowed: Allowed,
        push: &mut impl FnMut(String, String),
    ) {
        let params = || self.parameters.iter().map(|p| p.name.as_str());
        e.visit(&mut |node| match node {
            Expr::Param(name) if !allowed.params => push(
                label.to_string(),
                format!("cannot mention tuning parameter `{name}` here"),
            ),
            Expr::Param(name) if !params().any(|p| p == name) => push(
                label.to_string(),
                format!(
                    "unknown parameter `{name}`{}",
                    did_you_mean(closest(name, params()))
                ),
            ),
            Expr::Arg(_) if !allowed.args => push(
                label.to_string(),
                "cannot mention kernel arguments here (it must be fixed at compile time)".into(),
            ),
            Expr::Arg(ArgRef::Name(name)) if self.arg_index(name).is_none() => push(
                label.to_string(),
                format!(
                    "unknown argument `{name}`{}",
                    did_you_mean(closest(name, self.args.iter().map(|a| a.name.as_str())))
                ),
            ),
            Expr::Arg(ArgRef::Index(i)) if *i >= self.args.len() => push(
                label.to_string(),
                format!(
                    "argument #{i} does not exist (the kernel has {})",
                    self.args.len()
                ),
            ),
            Expr::ProblemSize(_) if !allowed.problem_size => push(
                label.to_string(),
                "cannot mention the problem size here".into(),
            ),
            Expr::ProblemSize(axis) if *axis >= self.problem_size.len().max(1) => push(
                label.to_string(),
                format!(
                    "problem size axis {axis} is not declared (the problem size has {} axes)",
                    self.problem_size.len()
                ),
            ),
            _ => {}
        });
    }

    /// Checks the default configuration against the restrictions and (with a device) the
    /// device's limits.
    fn check_default(&self, device: Option<&DeviceInfo>, out: &mut Vec<DefProblem>) {
        let config = self.default_config();
        let scope = crate::kernel_def::eval::DefScope {
            config: Some(&config),
            device,
            ..crate::kernel_def::eval::DefScope::new(self)
        };
        // A restriction that cannot be evaluated at the default is a problem only where no
        // other is broken there (a guard rules the default out first).
        let mut broken = false;
        let mut unevaluable = Vec::new();
        for (i, r) in self.restrictions.iter().enumerate() {
            if crate::kernel_def::launch_check::depends_on_launch(r) {
                // Decided per launch (the default may be invalid at some sizes).
                continue;
            }
            match r.eval_bool(&scope) {
                Ok(true) => {}
                Ok(false) => {
                    broken = true;
                    out.push(DefProblem {
                        location: "default configuration".into(),
                        message: format!("{config} breaks restriction {i} `{r}`"),
                    })
                }
                Err(EvalError::NoDevice(_)) if device.is_none() => {}
                Err(e) => {
                    // A value the arithmetic cannot take is guarded; a name it does not know
                    // or a type it cannot take is a problem of the restriction itself.
                    let guarded = matches!(
                        e,
                        EvalError::DivisionByZero(_)
                            | EvalError::InvalidValue { .. }
                            | EvalError::Overflow(_)
                            | EvalError::FloatOverflow(_)
                    );
                    let problem = DefProblem {
                        location: format!("restriction {i} `{r}`"),
                        message: e.to_string(),
                    };
                    if guarded {
                        unevaluable.push(problem);
                    } else {
                        out.push(problem);
                    }
                }
            }
        }
        if !broken {
            out.extend(unevaluable);
        }
        if let Some(device) = device {
            self.check_limits(&config, device, out);
            match self.space(Some(device)) {
                Ok(space) if space.is_empty() => out.push(DefProblem {
                    location: "tuning space".into(),
                    message: "no configuration satisfies every restriction".into(),
                }),
                Ok(_) => {}
                Err(e) => out.push(DefProblem {
                    location: "tuning space".into(),
                    message: e.to_string(),
                }),
            }
        }
    }

    fn check_limits(&self, config: &Config, device: &DeviceInfo, out: &mut Vec<DefProblem>) {
        let scope = crate::kernel_def::eval::DefScope {
            config: Some(config),
            device: Some(device),
            ..crate::kernel_def::eval::DefScope::new(self)
        };
        let mut block = [1i64; 3];
        for (axis, e) in self.block_size.iter().enumerate() {
            match e.eval_int(&scope) {
                Ok(v) => block[axis] = v,
                // Depends on the arguments or problem size: checked at launch.
                Err(EvalError::UnknownArg(_) | EvalError::NoProblemSize(_)) => return,
                Err(err) => {
                    out.push(DefProblem {
                        location: format!("block_size[{axis}]"),
                        message: err.to_string(),
                    });
                    return;
                }
            }
        }
        let loc = || format!("default configuration {config} on {}", device.name);
        for (axis, (&b, &max)) in block.iter().zip(&device.max_block_dims).enumerate() {
            if b < 1 || b > i64::from(max) {
                out.push(DefProblem {
                    location: loc(),
                    message: format!("block size[{axis}] = {b} is outside 1..={max}"),
                });
            }
        }
        let threads = block.iter().fold(1i64, |a, &b| a.saturating_mul(b));
        if threads > i64::from(device.max_threads_per_block) {
            out.push(DefProblem {
                location: loc(),
                message: format!(
                    "{threads} threads per block exceed the device's {}",
                    device.max_threads_per_block
                ),
            });
        }
        if let Ok(bytes) = self.shared_memory.eval_int(&scope) {
            if bytes < 0 {
                out.push(DefProblem {
                    location: loc(),
                    message: format!(
                        "shared memory of {bytes} bytes: it must be 0 or more (`{}`)",
                        self.shared_memory
                    ),
                });
            } else if bytes as u64 > device.max_shared_memory_per_block {
                out.push(DefProblem {
                    location: loc(),
                    message: format!(
                        "{bytes} bytes of shared memory exceed the device's {}",
                        device.max_shared_memory_per_block
                    ),
                });
            }
        }
    }
}

/// Joins problems into one message, one per line.
pub fn format_problems(problems: &[DefProblem]) -> String {
    problems
        .iter()
        .map(|p| format!("  - {p}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::test_device;
    use crate::expr::{arg, lit, param};
    use crate::kernel_def::sample_def;

    /// A restriction that cannot be evaluated at the default is not a problem of its own
    /// where another restriction is broken there (the guard rules the default out); alone,
    /// it is.
    #[test]
    fn a_guarded_division_at_the_default_is_not_a_second_problem() {
        for guarded in [true, false] {
            let mut def = sample_def();
            // The default has elems_per_thread = 1: `1 // (e - 1)` cannot be evaluated there.
            def.restrictions
                .push((lit(1).floor_div(param("elems_per_thread") - 1)).ge(0));
            if guarded {
                def.restrictions.push(param("elems_per_thread").gt(1));
            }
            let problems = def.check(None);
            let text = format!("{problems:?}");
            assert_eq!(!guarded, text.contains("division by zero"), "{text}");
            assert_eq!(guarded, text.contains("breaks restriction"), "{text}");
        }
    }

    #[test]
    fn a_good_definition_has_no_problems() {
        assert_eq!(sample_def().check(Some(&test_device())), vec![]);
        assert_eq!(sample_def().check(None), vec![]);
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let mut def = sample_def();
        def.block_size[0] = param("block_sise_x");
        def.problem_size = vec![arg("m")];
        def.defines.insert("N".into(), arg("n"));
        def.parameters[0].default = 1000.into();
        let problems = def.check(None);
        let text = format_problems(&problems);
        assert!(text.contains("did you mean `block_size_x`"), "{text}");
        assert!(text.contains("unknown argument `m`"), "{text}");
        assert!(text.contains("define N"), "{text}");
        assert!(text.contains("default 1000"), "{text}");
        assert_eq!(problems.len(), 4, "{text}");
    }

    #[test]
    fn default_breaking_a_restriction_and_device_limits() {
        let mut def = sample_def();
        def.parameters[0].default = 256.into();
        def.parameters[1].default = 4.into(); // 256 * 4 > 512
        let text = format_problems(&def.check(None));
        assert!(text.contains("breaks restriction 0"), "{text}");

        let mut def = sample_def();
        def.block_size[1] = lit(64); // 128 * 64 > 1024 threads
        def.shared_memory = lit(1 << 20);
        let text = format_problems(&def.check(Some(&test_device())));
        assert!(text.contains("8192 threads per block"), "{text}");
        assert!(
            text.contains("1048576 bytes of shared memory exceed the device's"),
            "{text}"
        );

        // A negative amount says so (it said it exceeded the device's).
        let mut def = sample_def();
        def.shared_memory = lit(-64);
        let text = format_problems(&def.check(Some(&test_device())));
        assert!(
            text.contains("shared memory of -64 bytes: it must be 0 or more"),
            "{text}"
        );
        assert!(!text.contains("exceed"), "{text}");
    }

    /// Problem sizes known when the definition is built: no axis, or a negative constant,
    /// is a problem naming the axis and the value; 0 (an empty launch) and sizes from the
    /// arguments are not.
    #[test]
    fn empty_and_negative_constant_problem_sizes() {
        let mut def = sample_def();
        def.problem_size = vec![];
        let text = format_problems(&def.check(None));
        assert!(
            text.contains("problem_size: needs 1 to 3 axes, has 0"),
            "{text}"
        );

        def.problem_size = vec![lit(-4096)];
        let text = format_problems(&def.check(None));
        assert!(
            text.contains("problem_size[0]: `(-4096)` is -4096: a size must be >= 0"),
            "{text}"
        );
        def.problem_size = vec![arg("n"), lit(2) - lit(3)];
        let text = format_problems(&def.check(None));
        assert!(
            text.contains("problem_size[1]") && text.contains("is -1"),
            "{text}"
        );
        for ok in [vec![lit(0)], vec![arg("n")], vec![arg("n") - lit(4096)]] {
            def.problem_size = ok;
            assert_eq!(def.check(None), vec![]);
        }
    }

    /// A define name that is no macro name, and a string value OpenCL's build options would
    /// split, are problems of the definition (they failed only at the first launch).
    #[test]
    fn defines_that_cannot_be_passed_are_problems() {
        let mut def = sample_def();
        def.defines.insert("a b".into(), lit(1));
        def.defines.insert(String::new(), lit(1));
        let text = format_problems(&def.check(None));
        assert!(
            text.contains("define `a b`: the name is not a valid identifier"),
            "{text}"
        );
        assert!(
            text.contains("define ``: the name is not a valid identifier"),
            "{text}"
        );
        // A value other than the default only fails the configurations that take it.
        let mut def = sample_def();
        def.backend = BackendKind::Opencl;
        def.parameters
            .push(crate::space::Parameter::new("T", ["float", "unsigned int"]));
        assert_eq!(def.check(None), vec![]);
        def.parameters.last_mut().unwrap().default = "unsigned int".into();
        let text = format_problems(&def.check(None));
        assert!(
            text.contains("parameter `T`: its default") && text.contains("holds whitespace"),
            "{text}"
        );
        def.params_as_defines = false;
        assert_eq!(def.check(None), vec![]);
        def.defines.insert("U".into(), lit("long long"));
        let text = format_problems(&def.check(None));
        assert!(text.contains("define `U`:"), "{text}");
        // A define computed from a parameter takes the parameter's default.
        def.defines.remove("U");
        def.defines.insert("OP".into(), param("T"));
        let text = format_problems(&def.check(None));
        assert!(
            text.contains("define `OP`: its default unsigned int"),
            "{text}"
        );
        def.backend = BackendKind::Cuda;
        assert_eq!(def.check(None), vec![]);
    }
}
