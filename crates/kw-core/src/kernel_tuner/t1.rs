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
    /// `KernelSpecification.KernelName`, when present.
    pub kernel_name: Option<String>,
}

impl T1Spec {
    /// Reads a T1 file.
    pub fn load(path: &Path) -> Result<T1Spec, KtError> {
        let text = read_text(path)?;
        let json = parse_json(path, &text)?;
        T1Spec::from_json(path, &json)
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
        for (i, p) in list.iter().enumerate() {
            let name = p
                .get("Name")
                .and_then(|v| v.as_str())
                .ok_or_else(|| fmt(format!("tuning parameter #{i} has no `Name`")))?;
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
            let values = match p.get("Type").and_then(|t| t.as_str()) {
                Some("float") => values
                    .into_iter()
                    .map(|v| v.as_f64().map(Value::Float).unwrap_or(v))
                    .collect(),
                _ => values,
            };
            let mut param = Parameter::new(name, values);
            if let Some(d) = p.get("Default").and_then(json_value) {
                let d = match (&d, param.values.first()) {
                    (Value::Int(i), Some(Value::Float(_))) => Value::Float(*i as f64),
                    _ => d,
                };
                param.default = d;
            }
            params.push(param);
        }
        let mut restrictions = Vec::new();
        if let Some(conds) = space.get("Conditions").and_then(|v| v.as_array()) {
            for (i, c) in conds.iter().enumerate() {
                let text = c
                    .get("Expression")
                    .and_then(|v| v.as_str())
                    .or_else(|| c.as_str())
                    .ok_or_else(|| fmt(format!("condition #{i} has no `Expression`")))?;
                let e = Expr::parse(text).map_err(|e| fmt(format!("condition #{i}: {e}")))?;
                restrictions.push(e);
            }
        }
        let kernel_name = json
            .get("KernelSpecification")
            .and_then(|k| k.get("KernelName"))
            .and_then(|v| v.as_str())
            .map(String::from);
        Ok(T1Spec {
            params,
            restrictions,
            kernel_name,
        })
    }
}
