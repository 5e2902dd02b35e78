//! T4 results files (the community's results format: Kernel Tuner, KTT and `kw tune --t4`
//! write it), read as a [`CacheFile`]: one entry per distinct configuration, the parameters'
//! values those the results hold.

use super::cache::{CacheEntry, CacheFile, Outcome};
use super::{json_value, KtError};
use crate::space::Parameter;
use crate::value::Value;
use serde_json::{Map, Value as Json};
use std::collections::HashMap;
use std::path::Path;

/// Whether `obj` is a T4 results file rather than a cache file.
pub(super) fn is_t4(obj: &Map<String, Json>) -> bool {
    obj.get("results").is_some_and(Json::is_array) && !obj.contains_key("tune_params_keys")
}

/// Reads a T4 results file. The objective is the file's (`objectives` of its first result,
/// else `metadata.objective`, else `time`); a result whose `invalidity` is not `correct` is a
/// failure, and a correct result without a measurement of the objective is an error naming
/// it. A configuration measured more than once keeps its best value. Values that every result
/// of a parameter writes as numbers in strings (KTT writes `"32"`) are read as the numbers.
/// T4 carries no space: the parameters are those the configurations name, in name order (a
/// configuration is a JSON object), and each one's values those the results hold (numbers
/// ascending; the first is the default), so a T4 file describes its space whole only when it
/// holds every configuration (a brute-force run); a T1 file given beside it adds its
/// conditions, not values. Kernel Tuner writes no `metadata`: an objective other than `time`
/// whose direction the file does not give is taken as minimised, with a warning.
pub(super) fn from_t4(path: &Path, obj: &Map<String, Json>) -> Result<CacheFile, KtError> {
    let fmt = |m: String| KtError::format(path, format!("T4 results file: {m}"));
    let results = obj
        .get("results")
        .and_then(Json::as_array)
        .ok_or_else(|| fmt("`results` must be a list".into()))?;
    let meta = obj.get("metadata").and_then(Json::as_object);
    let meta_text = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| meta.and_then(|m| m.get(*n)).and_then(Json::as_str))
            .unwrap_or("")
            .to_string()
    };
    let objective = results
        .iter()
        .find_map(|r| r.get("objectives")?.as_array()?.first()?.as_str())
        .or_else(|| meta?.get("objective")?.as_str())
        .unwrap_or("time")
        .to_string();
    let higher_is_better = match meta.and_then(|m| m.get("objective_higher_is_better")) {
        None | Some(Json::Null) => {
            if objective != "time" {
                crate::diag::warn(&format!(
                    "{}: T4 results file: the objective `{objective}` is taken as minimised \
                     (lower is better): the file does not say (`metadata.objective_higher_is_better`)",
                    path.display()
                ));
            }
            false
        }
        Some(Json::Bool(b)) => *b,
        Some(other) => {
            return Err(fmt(format!(
                "`metadata.objective_higher_is_better` must be true or false, not {other}"
            )))
        }
    };
    if results.is_empty() {
        return Err(fmt(
            "`results` is empty: no configuration was measured".into()
        ));
    }
    // The parameters: every result's configuration names the same ones.
    let mut keys: Vec<String> = Vec::new();
    let mut configs: Vec<(&Map<String, Json>, Outcome, Vec<f64>)> = Vec::new();
    for (i, result) in results.iter().enumerate() {
        let config = result
            .get("configuration")
            .and_then(Json::as_object)
            .ok_or_else(|| fmt(format!("result #{i} has no `configuration` object")))?;
        if keys.is_empty() {
            keys = config.keys().cloned().collect();
            if keys.is_empty() {
                return Err(fmt(format!(
                    "result #{i}'s configuration is empty: it must name the tuned parameters"
                )));
            }
        } else if config.len() != keys.len() || keys.iter().any(|k| !config.contains_key(k)) {
            return Err(fmt(format!(
                "result #{i}'s configuration names other parameters than result #0's ({})",
                keys.join(", ")
            )));
        }
        let outcome = outcome(result, &objective)
            .ok_or_else(|| fmt(format!("result #{i} has no usable `{objective}`")))?;
        let times = result
            .get("times")
            .and_then(|t| t.get("runtimes"))
            .and_then(Json::as_array)
            .map(|a| a.iter().filter_map(Json::as_f64).collect())
            .unwrap_or_default();
        configs.push((config, outcome, times));
    }
    // Each parameter's values, read; numbers written as strings become the numbers.
    let mut columns: Vec<Vec<Value>> = Vec::with_capacity(keys.len());
    for k in &keys {
        let raw: Vec<Value> = configs
            .iter()
            .enumerate()
            .map(|(i, (c, _, _))| {
                json_value(&c[k]).ok_or_else(|| {
                    fmt(format!(
                        "result #{i}: the value of `{k}` must be a number, string or bool"
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
        let numbers: Option<Vec<Value>> = raw
            .iter()
            .map(|v| match v {
                Value::Str(s) => number_in(s),
                _ => None,
            })
            .collect();
        columns.push(match numbers {
            Some(n) if !n.is_empty() => n,
            _ => raw,
        });
    }
    let mut params = Vec::with_capacity(keys.len());
    for (k, column) in keys.iter().zip(&columns) {
        let mut values: Vec<Value> = Vec::new();
        for v in column {
            if !values.iter().any(|w| w.same(v)) {
                values.push(v.clone());
            }
        }
        if values.iter().all(|v| v.as_f64().is_some()) {
            values.sort_by(|a, b| {
                a.as_f64()
                    .unwrap_or(0.0)
                    .total_cmp(&b.as_f64().unwrap_or(0.0))
            });
        }
        params.push(Parameter::new(k, values));
    }
    // One entry per configuration (its values' positions, so that a string value holding a
    // comma cannot merge two): its best value, else its first failure.
    let mut entries: Vec<CacheEntry> = Vec::new();
    let mut at: HashMap<Vec<usize>, usize> = HashMap::new();
    for (row, (_, outcome, times)) in configs.into_iter().enumerate() {
        let values: Vec<Value> = columns.iter().map(|c| c[row].clone()).collect();
        let position: Vec<usize> = params
            .iter()
            .zip(&values)
            .map(|(p, v)| p.index_of(v).unwrap_or(usize::MAX))
            .collect();
        let key = values
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let outcome = match (higher_is_better, outcome) {
            (true, Outcome::Value(v)) if v > 0.0 => Outcome::Value(1.0 / v),
            (_, o) => o,
        };
        match at.get(&position) {
            Some(&e) => {
                let entry = &mut entries[e];
                let better = match (&entry.outcome, &outcome) {
                    (Outcome::Failed(_), Outcome::Value(_)) => true,
                    (Outcome::Value(a), Outcome::Value(b)) => b < a,
                    _ => false,
                };
                if better {
                    entry.outcome = outcome;
                    entry.times = times;
                }
            }
            None => {
                at.insert(position, entries.len());
                entries.push(CacheEntry {
                    key,
                    values,
                    outcome,
                    times,
                });
            }
        }
    }
    let problem_size = match meta.and_then(|m| m.get("problem_size")) {
        Some(Json::Array(a)) => a.iter().filter_map(Json::as_i64).collect(),
        Some(v) => v.as_i64().into_iter().collect(),
        None => Vec::new(),
    };
    Ok(CacheFile {
        device_name: meta_text(&["device_name", "device"]),
        kernel_name: meta_text(&["kernel_name", "kernel"]),
        problem_size,
        objective,
        higher_is_better,
        params,
        entries,
    })
}

/// The number a string writes in full (`"32"`, `"0.5"`), if it does.
fn number_in(s: &str) -> Option<Value> {
    let t = s.trim();
    if let Ok(i) = t.parse::<i64>() {
        return Some(Value::Int(i));
    }
    t.parse::<f64>()
        .ok()
        .filter(|f| f.is_finite())
        .map(Value::Float)
}

/// A result's value of `objective`, or its failure (`invalidity` other than `correct`, or an
/// `error`); `None` when a correct result has no such measurement.
fn outcome(result: &Json, objective: &str) -> Option<Outcome> {
    let invalidity = result
        .get("invalidity")
        .and_then(Json::as_str)
        .unwrap_or("correct");
    if invalidity != "correct" {
        let reason = result
            .get("error")
            .and_then(Json::as_str)
            .map(|e| format!("{invalidity}: {e}"))
            .unwrap_or_else(|| invalidity.to_string());
        return Some(Outcome::Failed(reason));
    }
    let value = result
        .get("measurements")?
        .as_array()?
        .iter()
        .find(|m| m.get("name").and_then(Json::as_str) == Some(objective))?
        .get("value")?;
    let v = match value {
        Json::Number(n) => n.as_f64()?,
        Json::String(s) => s.trim().parse::<f64>().ok()?,
        _ => return None,
    };
    Some(if v.is_finite() {
        Outcome::Value(v)
    } else {
        Outcome::Failed("not a finite value".into())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> Result<CacheFile, KtError> {
        let v: Json = serde_json::from_str(json).unwrap();
        let obj = v.as_object().unwrap();
        assert!(is_t4(obj));
        from_t4(Path::new("r.t4.json"), obj)
    }

    fn result(config: &str, invalidity: &str, value: &str) -> String {
        format!(
            r#"{{"configuration": {config}, "invalidity": "{invalidity}", "objectives": ["time"],
                "measurements": [{{"name": "time", "value": {value}, "unit": "ms"}}],
                "times": {{"runtimes": [{value}]}}}}"#
        )
    }

    /// KTT writes numbers as strings and the device as `device`; failures are results whose
    /// invalidity is not `correct`; a configuration measured twice keeps its best value.
    #[test]
    fn ktt_style_results_read_as_a_cache() {
        let results = [
            result(r#"{"bs": "32", "unroll": "1"}"#, "correct", "90.5"),
            result(r#"{"bs": "64", "unroll": "1"}"#, "correct", "62.8"),
            result(r#"{"bs": "128", "unroll": "2"}"#, "compile", "0"),
            result(r#"{"bs": "64", "unroll": "1"}"#, "correct", "70.0"),
            result(r#"{"bs": "32", "unroll": "2"}"#, "correct", "\"55.5\""),
        ];
        let json = format!(
            r#"{{"metadata": {{"device": "RTX 500"}}, "results": [{}]}}"#,
            results.join(",")
        );
        let cache = read(&json).expect("a T4 file");
        assert_eq!(cache.device_name, "RTX 500");
        assert_eq!(cache.objective, "time");
        let bs = cache.params.iter().find(|p| p.name == "bs").unwrap();
        assert_eq!(
            bs.values,
            vec![Value::Int(32), Value::Int(64), Value::Int(128)]
        );
        assert_eq!(cache.entries.len(), 4, "{:?}", cache.entries);
        assert_eq!(cache.optimum(), Some(55.5));
        let failed = cache
            .entries
            .iter()
            .filter(|e| matches!(e.outcome, Outcome::Failed(_)))
            .count();
        assert_eq!(failed, 1);
        let twice = cache
            .entries
            .iter()
            .find(|e| e.values.contains(&Value::Int(64)))
            .unwrap();
        assert_eq!(twice.outcome, Outcome::Value(62.8));
    }

    /// A maximised objective is kept as reciprocals, as in a cache file.
    #[test]
    fn a_maximised_objective_is_kept_as_reciprocals() {
        let json = format!(
            r#"{{"metadata": {{"objective_higher_is_better": true}}, "results": [{}, {}]}}"#,
            result(r#"{"a": 1}"#, "correct", "4.0"),
            result(r#"{"a": 2}"#, "correct", "8.0")
        );
        let cache = read(&json).expect("a T4 file");
        assert!(cache.higher_is_better);
        assert_eq!(cache.optimum(), Some(0.125));
    }

    /// Results that name other parameters, or a correct result without the objective, are
    /// errors that name the result.
    #[test]
    fn inconsistent_results_are_named() {
        let json = format!(
            r#"{{"results": [{}, {}]}}"#,
            result(r#"{"a": 1, "b": 1}"#, "correct", "4.0"),
            result(r#"{"a": 2}"#, "correct", "8.0")
        );
        let e = read(&json).expect_err("other parameters").to_string();
        assert!(e.contains("result #1") && e.contains("a, b"), "{e}");
        let json = r#"{"results": [{"configuration": {"a": 1}, "invalidity": "correct",
            "measurements": [{"name": "GFLOP/s", "value": 3}]}]}"#;
        let e = read(json).expect_err("no time").to_string();
        assert!(e.contains("result #0") && e.contains("`time`"), "{e}");
        let e = read(r#"{"results": [{"configuration": 3}]}"#)
            .expect_err("not an object")
            .to_string();
        assert!(e.contains("result #0 has no `configuration`"), "{e}");
        let e = read(r#"{"results": []}"#).expect_err("empty").to_string();
        assert!(e.contains("`results` is empty"), "{e}");
    }

    /// Two configurations whose string values join to the same text stay two entries.
    #[test]
    fn string_values_with_commas_stay_apart() {
        let json = format!(
            r#"{{"results": [{}, {}]}}"#,
            result(r#"{"a": "x,y", "b": "z"}"#, "correct", "2.0"),
            result(r#"{"a": "x", "b": "y,z"}"#, "correct", "1.0")
        );
        let cache = read(&json).expect("a T4 file");
        assert_eq!(cache.entries.len(), 2);
        assert_eq!(cache.optimum(), Some(1.0));
    }
}
