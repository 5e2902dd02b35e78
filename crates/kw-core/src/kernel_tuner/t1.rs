use super::value_list::parse_value_list;
use super::{json_value, parse_json, read_text, KtError};
use crate::space::Parameter;
use crate::{expr::Expr, value::Value};
use std::path::Path;

/// A tuning space from a T1 specification file (`ConfigurationSpace`).
#[derive(Debug, Clone)]
pub struct T1Spec {
    /// `TuningParameters`, in order, with their defaults.
    pub params: Vec<Parameter>,
    /// `Conditions`, parsed.
    pub restrictions: Vec<Expr>,
    /// What the reader fixed or does not use, for the user: a `Default` that is not among
    /// the parameter's `Values` (the first value is used instead, as the published hotspot
    /// file needs), fields kw does not read.
    pub notes: Vec<String>,
    /// `KernelSpecification.KernelName`, when present.
    pub kernel_name: Option<String>,
}

impl T1Spec {
    /// Reads a T1 file as a tuning space alone: conditions over the problem size are taken
    /// at the file's own `ProblemSize` (left out, with a note, when it gives none).
    pub fn load(path: &Path) -> Result<T1Spec, KtError> {
        let text = read_text(path)?;
        let json = parse_json(path, &text)?;
        Ok(T1Spec::from_json(path, &json)?
            .with_valid_default(path, &json)
            .at_own_size(path, &json))
    }

    /// The space without a launch: conditions over the problem size (`ProblemSize[i]`) are
    /// taken at the file's own `ProblemSize` (the size its benchmark runs at); without one
    /// they are left out, with a note. A benchmark ([`super::T1Benchmark`]) keeps them as
    /// restrictions checked per launch instead.
    pub(crate) fn at_own_size(self, path: &Path, json: &serde_json::Value) -> T1Spec {
        // A malformed size (the benchmark refuses it) leaves the conditions out, with a note
        // that says so.
        let given = json
            .get("KernelSpecification")
            .map_or(Ok(None), problem_size);
        let (size, lacking) = match given {
            Ok(Some(s)) if s.iter().all(|&a| a >= 1) => {
                let lacking = format!(
                    "axis beyond the ones the file gives (`KernelSpecification.ProblemSize` {s:?})"
                );
                (Some(s), lacking)
            }
            Ok(Some(s)) => (
                None,
                format!(
                    "the file gives as {s:?} (`KernelSpecification.ProblemSize`: every axis must \
                     be at least 1)"
                ),
            ),
            Ok(None) => (
                None,
                "the file does not give (`KernelSpecification.ProblemSize`)".to_string(),
            ),
            Err(e) => (
                None,
                format!("the file gives in a form kw cannot read ({e})"),
            ),
        };
        self.at_size(path, size, &lacking)
    }

    /// The space at the problem size `size`: conditions over the problem size are taken at
    /// it; without it (or an axis it lacks) they are left out, with a note saying `lacking`.
    pub(crate) fn at_size(mut self, path: &Path, size: Option<Vec<i64>>, lacking: &str) -> T1Spec {
        let mut kept = Vec::with_capacity(self.restrictions.len());
        for mut r in std::mem::take(&mut self.restrictions) {
            let mut missing = false;
            r.visit_mut(&mut |node| {
                if let Expr::ProblemSize(axis) = node {
                    match size.as_ref().and_then(|s| s.get(*axis)) {
                        Some(v) => *node = Expr::Lit(Value::Int(*v)),
                        None => missing = true,
                    }
                }
            });
            if missing {
                self.notes.push(format!(
                    "{}: the condition `{r}` names a problem size {lacking}; left out",
                    path.display()
                ));
            } else {
                kept.push(r);
            }
        }
        self.restrictions = kept;
        self
    }

    pub(crate) fn from_json(path: &Path, json: &serde_json::Value) -> Result<T1Spec, KtError> {
        let fmt = |m: String| KtError::format(path, m);
        let space = json
            .get("ConfigurationSpace")
            .ok_or_else(|| fmt("missing `ConfigurationSpace`".into()))?;
        let list = space
            .get("TuningParameters")
            .and_then(|v| v.as_array())
            .ok_or_else(|| fmt("missing `ConfigurationSpace.TuningParameters` list".into()))?;
        let mut params = Vec::new();
        let mut notes = Vec::new();
        for (i, p) in list.iter().enumerate() {
            let name = p
                .get("Name")
                .and_then(|v| v.as_str())
                .ok_or_else(|| fmt(format!("tuning parameter #{} has no `Name`", i + 1)))?;
            let values: Vec<Value> = match p.get("Values") {
                Some(serde_json::Value::String(s)) => {
                    parse_value_list(s).map_err(|e| fmt(format!("values of `{name}`: {e}")))?
                }
                Some(serde_json::Value::Array(a)) => a
                    .iter()
                    .map(json_value)
                    .collect::<Option<_>>()
                    .ok_or_else(|| fmt(format!("values of `{name}` must be scalars")))?,
                _ => return Err(fmt(format!("tuning parameter `{name}` has no `Values`"))),
            };
            // However the list was written (an expression, literals, a JSON array).
            if values.len() > crate::kernel_tuner::value_list::MAX_VALUES {
                return Err(fmt(format!(
                    "tuning parameter `{name}` has {} values, more than {} (a parameter to tune \
                     has far fewer)",
                    values.len(),
                    crate::kernel_tuner::value_list::MAX_VALUES
                )));
            }
            // A value that is not of the declared `Type` is used as written, with a note (a
            // data error of the file: the kernel sees the value, not the type).
            let declared = p.get("Type").and_then(|t| t.as_str());
            let fits = |v: &Value| match declared {
                Some("int") => matches!(v, Value::Int(_)),
                Some("uint") => matches!(v, Value::Int(i) if *i >= 0),
                Some("float" | "double") => matches!(v, Value::Int(_) | Value::Float(_)),
                Some("bool") => matches!(v, Value::Bool(_) | Value::Int(0 | 1)),
                Some("string") => matches!(v, Value::Str(_)),
                _ => true,
            };
            if let Some(odd) = values.iter().find(|v| !fits(v)) {
                notes.push(format!(
                    "{}: `{name}` is of Type `{}` but lists {odd} ({}): used as written",
                    path.display(),
                    declared.unwrap_or_default(),
                    odd.type_name()
                ));
            }
            let values = match declared {
                Some("float") => values
                    .into_iter()
                    .map(|v| v.as_f64().map(Value::Float).unwrap_or(v))
                    .collect(),
                _ => values,
            };
            // A value listed twice (`[1, 1, 2]`, or `[1, 1.0]`, one value as Python compares):
            // counted once, with a note (a data error of the file, not a reason to refuse it).
            let mut seen = std::collections::HashSet::new();
            let mut repeated = Vec::new();
            let values: Vec<Value> = values
                .into_iter()
                .filter(|v| {
                    let first = seen.insert(v.key());
                    if !first && repeated.len() < 3 {
                        repeated.push(v.to_string());
                    }
                    first
                })
                .collect();
            if !repeated.is_empty() {
                notes.push(format!(
                    "{}: `{name}` lists a value more than once ({}; numbers equal as Python \
                     compares them, 1 and 1.0, are one value): each is counted once",
                    path.display(),
                    repeated.join(", ")
                ));
            }
            let mut param = Parameter::new(name, values);
            // A one-element list as the default (`"Default": [0]`, as published) is its value.
            let default = match p.get("Default") {
                Some(serde_json::Value::Array(a)) if a.len() == 1 => json_value(&a[0]),
                Some(d) => json_value(d),
                None => None,
            };
            if let Some(d) = default {
                // The value equal to it, as Python compares (1 == 1.0): the list's own
                // (an int default among floats, or a float one among ints, is that value).
                if let Some(v) = param.index_of(&d).map(|i| param.values[i].clone()) {
                    param.default = v;
                } else {
                    notes.push(format!(
                        "{}: the `Default` {d} of `{name}` is not among its `Values`; using {}",
                        path.display(),
                        param.default
                    ));
                }
            }
            params.push(param);
        }
        let mut restrictions = Vec::new();
        let conds = match space.get("Conditions") {
            None | Some(serde_json::Value::Null) => &[][..],
            Some(serde_json::Value::Array(a)) => a.as_slice(),
            // A string or an object would be left out silently: every configuration valid.
            Some(other) => {
                return Err(fmt(format!(
                    "`ConfigurationSpace.Conditions` must be a list of conditions, not {}",
                    crate::json_keys::json_kind(other)
                )))
            }
        };
        {
            for (i, c) in conds.iter().enumerate() {
                let text = c
                    .get("Expression")
                    .and_then(|v| v.as_str())
                    .or_else(|| c.as_str())
                    .ok_or_else(|| fmt(format!("condition #{} has no `Expression`", i + 1)))?;
                // `ProblemSize[i]`: a restriction over the problem size (checked per launch).
                let e = super::t1_expr::parse_t1(text, false)
                    .map_err(|e| fmt(format!("condition #{}: {e}", i + 1)))?;
                restrictions.push(e);
            }
        }
        let kernel_name = json
            .get("KernelSpecification")
            .and_then(|k| k.get("KernelName"))
            .and_then(|v| v.as_str())
            .map(String::from);
        Ok(T1Spec {
            notes,
            params,
            restrictions,
            kernel_name,
        })
    }

    /// A `Default` configuration that breaks the file's own conditions (published files do:
    /// benchmark_hub's dedispersion and hotspot) is replaced by the first valid configuration,
    /// with a note naming the condition as written: a data error of a published file is read
    /// with a note, not refused. Only conditions over the parameters alone are checked here
    /// (those over the problem size are checked per launch); a condition the default cannot
    /// evaluate (a division by zero) breaks it too. Nothing changes when no configuration is
    /// valid, or when the space is too costly to build (the error comes where the space is
    /// built). For a space to tune or describe (`kw tune --t1`, `kw space`), not for a T1 file
    /// whose conditions restrict a cache's measured values. `json`: the file, as read; call it
    /// before [`T1Spec::at_size`] (the restrictions still in the file's order).
    pub(crate) fn with_valid_default(mut self, path: &Path, json: &serde_json::Value) -> T1Spec {
        use crate::eval::EvalError;
        let fixed: Vec<Expr> = self
            .restrictions
            .iter()
            .filter(|r| !crate::kernel_def::launch_check::depends_on_launch(r))
            .cloned()
            .collect();
        let broken = self.restrictions.iter().position(|r| {
            !crate::kernel_def::launch_check::depends_on_launch(r)
                && match r.eval_bool(&super::t1_expr::DefaultsScope(&self.params)) {
                    Ok(ok) => !ok,
                    Err(EvalError::UnknownParam { .. } | EvalError::NoDevice(_)) => false,
                    Err(_) => true,
                }
        });
        let Some(broken) = broken else {
            return self;
        };
        let written = json
            .get("ConfigurationSpace")
            .and_then(|s| s.get("Conditions"))
            .and_then(|c| c.get(broken))
            .and_then(|c| c.get("Expression").or(Some(c)))
            .and_then(|t| t.as_str())
            .map_or_else(|| self.restrictions[broken].to_string(), str::to_string);
        let Ok(space) = crate::space::TuningSpace::new(self.params.clone(), fixed) else {
            return self;
        };
        let Some(first) = space.point_at(0) else {
            return self;
        };
        let old = crate::config::Config(
            self.params
                .iter()
                .map(|p| (p.name.clone(), p.default.clone()))
                .collect(),
        );
        for (p, &i) in self.params.iter_mut().zip(&first) {
            p.default = p.values[i as usize].clone();
        }
        self.notes.push(format!(
            "{}: the `Default` configuration ({old}) breaks condition #{} `{written}`; \
             the first valid configuration is the default instead: {}",
            path.display(),
            broken + 1,
            space.config(&first)
        ));
        self
    }
}

/// A JSON number that is a whole number (`96` or `96.0`, as Python's `int()` takes it).
fn whole(n: &serde_json::Number) -> Option<i64> {
    n.as_i64().or_else(|| {
        n.as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
            .map(|f| f as i64)
    })
}

/// `KernelSpecification.ProblemSize` of `ks`: an integer or a list of integers (`None` when
/// absent or null). Errors say what is wrong, for the caller to name the file.
pub(super) fn problem_size(ks: &serde_json::Value) -> Result<Option<Vec<i64>>, String> {
    use serde_json::Value as Json;
    match ks.get("ProblemSize") {
        None | Some(Json::Null) => Ok(None),
        Some(Json::Number(n)) => whole(n)
            .map(|v| Some(vec![v]))
            .ok_or_else(|| format!("`ProblemSize` {n} is not a whole number")),
        Some(Json::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_number()
                    .and_then(whole)
                    .ok_or_else(|| "`ProblemSize` entries must be integers".to_string())
            })
            .collect::<Result<_, _>>()
            .map(Some),
        Some(_) => Err("`ProblemSize` must be an integer or a list".into()),
    }
}
