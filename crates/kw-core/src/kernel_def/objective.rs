//! An [`ObjectiveDef`]'s value for a configuration of a definition (its expression over
//! `time`, the problem size and the parameters), and the names it may mention.

use super::eval::DefScope;
use super::KernelDef;
use crate::config::Config;
use crate::eval::{EvalError, Scope};
use crate::expr::{ArgRef, DeviceAttr};
use crate::objective::{ObjectiveDef, TIME};
use crate::value::Value;

/// `time` on top of a definition's scope.
struct WithTime<'a> {
    inner: DefScope<'a>,
    time_ms: f64,
}

impl Scope for WithTime<'_> {
    fn param(&self, name: &str) -> Option<Value> {
        if name == TIME {
            Some(Value::Float(self.time_ms))
        } else {
            self.inner.param(name)
        }
    }
    fn param_names(&self) -> Vec<String> {
        let mut names = self.inner.param_names();
        names.push(TIME.into());
        names
    }
    fn arg(&self, arg: &ArgRef) -> Option<Value> {
        self.inner.arg(arg)
    }
    fn problem_size(&self, axis: usize) -> Option<i64> {
        self.inner.problem_size(axis)
    }
    fn device(&self, attr: DeviceAttr) -> Option<Value> {
        self.inner.device(attr)
    }
}

impl ObjectiveDef {
    /// The objective of `config` at `problem_size` with median time `time_ms`.
    pub fn value(
        &self,
        def: &KernelDef,
        config: &Config,
        problem_size: &[i64; 3],
        time_ms: f64,
    ) -> Result<f64, EvalError> {
        let scope = WithTime {
            inner: DefScope {
                config: Some(config),
                problem_size: Some(problem_size),
                ..DefScope::new(def)
            },
            time_ms,
        };
        let v = self.expr.eval(&scope)?;
        v.as_f64().ok_or_else(|| EvalError::TypeMismatch {
            op: format!("objective `{}`", self.expr),
            operands: format!("{v} (not a number)"),
        })
    }

    /// The names the expression may mention that the definition does not declare: `time`
    /// only. Returns the first unknown parameter, if any.
    pub fn unknown_name(&self, def: &KernelDef) -> Option<String> {
        self.expr
            .params()
            .into_iter()
            .find(|p| *p != TIME && !def.parameters.iter().any(|q| q.name == *p))
            .map(str::to_string)
    }
}
