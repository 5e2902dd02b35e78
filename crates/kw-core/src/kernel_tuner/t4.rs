//! T4 results files (the community's results format: Kernel Tuner, KTT and `kw tune --t4`
//! write it), read as a [`CacheFile`]: one entry per distinct configuration, the parameters'
//! values those the results hold.

use super::cache::{CacheEntry, CacheFile, Outcome};
use super::{json_value, KtError};
use crate::space::Parameter;
use crate::value::{Value, ValueKey};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value as Json};
use std::collections::HashMap;
use std::fmt;
use std::path::Path;

/// Whether `obj` is a T4 results file rather than a cache file.
pub(super) fn is_t4(obj: &Map<String, Json>) -> bool {
    obj.contains_key("results") && !obj.contains_key("tune_params_keys")
}

/// Reads a T4 results file; `text` is its JSON text, for the order of the parameters (parsed
/// JSON objects sort their keys). The objective is the file's (`objectives` of its first
/// result, else `metadata.objective`, else `time`); a result whose `invalidity` is not
/// `correct` is a failure, as is a value of 1e20 or more (Kernel Tuner's old failure mark), and
/// a correct result without a measurement of the objective is an error naming it. A
/// configuration measured more than once keeps its best value. A parameter whose values are
/// numbers, some written as strings (KTT writes `"32"`), takes the numbers. T4 carries no
/// space: the parameters are those the configurations name, in the order of
/// `metadata.parameters` when it names them (kw writes it), else of the first result's, and
/// each one's values those the results hold (numbers ascending; the first is the default), so
/// a T4 file describes its space whole only when it holds every configuration (a brute-force
/// run); a T1 file given beside it adds its conditions, not values. Kernel Tuner writes no
/// `metadata`: an objective other than `time` whose direction the file does not give
/// (`metadata.objective_higher_is_better`, or the same key at the top level) is taken as
/// minimised, with a warning.
pub(super) fn from_t4(
    path: &Path,
    obj: &Map<String, Json>,
    text: Option<&str>,
) -> Result<CacheFile, KtError> {
    let fmt = |m: String| KtError::format(path, format!("T4 results file: {m}"));
    super::cache::schema_note(path, "T4 results file", obj.get("schema_version"));
    let results = obj
        .get("results")
        .and_then(Json::as_array)
        .ok_or_else(|| fmt("`results` must be a list of results".into()))?;
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
    let direction = meta
        .and_then(|m| m.get("objective_higher_is_better"))
        .or_else(|| obj.get("objective_higher_is_better"));
    let higher_is_better = super::cache::direction(path, &objective, direction).map_err(fmt)?;
    if results.is_empty() {
        return Err(fmt(
            "`results` is empty: no configuration was measured".into()
        ));
    }
    // The parameters: every result's configuration names the same ones, in the order of the
    // first result's (else in name order).
    let mut keys: Vec<String> = Vec::new();
    let mut configs: Vec<(&Map<String, Json>, Outcome, Vec<f64>)> = Vec::new();
    for (i, result) in results.iter().enumerate() {
        // Numbered from 1 in messages, as every list of a file is.
        let i = i + 1;
        let config = result
            .get("configuration")
            .and_then(Json::as_object)
            .ok_or_else(|| fmt(format!("result #{i} has no `configuration` object")))?;
        if keys.is_empty() {
            if config.is_empty() {
                return Err(fmt(format!(
                    "result #{i}'s configuration is empty: it must name the tuned parameters"
                )));
            }
            keys = config.keys().cloned().collect();
            // The order: `metadata.parameters` (kw writes it), else the first configuration's
            // as the text writes it.
            let named: Option<Vec<String>> = meta
                .and_then(|m| m.get("parameters"))
                .and_then(Json::as_array)
                .and_then(|a| a.iter().map(|v| v.as_str().map(String::from)).collect());
            let same = |order: &Vec<String>| {
                order.len() == keys.len() && order.iter().all(|k| config.contains_key(k))
            };
            if let Some(order) = named
                .filter(same)
                .or_else(|| text.and_then(first_configuration_order).filter(same))
            {
                keys = order;
            }
        } else if config.len() != keys.len() || keys.iter().any(|k| !config.contains_key(k)) {
            return Err(fmt(format!(
                "result #{i}'s configuration names other parameters than result #1's ({})",
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
    // Each parameter's values, read; numbers written as strings become the numbers when every
    // value of the parameter is a number.
    let mut columns: Vec<Vec<Value>> = Vec::with_capacity(keys.len());
    for k in &keys {
        let raw: Vec<Value> = configs
            .iter()
            .enumerate()
            .map(|(i, (c, _, _))| {
                json_value(&c[k]).ok_or_else(|| {
                    fmt(format!(
                        "result #{}: the value of `{k}` must be a number, string or bool",
                        i + 1
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
        let numbers: Option<Vec<Value>> = raw
            .iter()
            .map(|v| match v {
                Value::Str(s) => number_in(s),
                Value::Int(_) | Value::Float(_) => Some(v.clone()),
                Value::Bool(_) => None,
            })
            .collect();
        columns.push(numbers.unwrap_or(raw));
    }
    // Each parameter's distinct values (numbers by value: `1` and `1.0` are one), and where
    // each result's value sits among them.
    let mut params = Vec::with_capacity(keys.len());
    let mut positions: Vec<Vec<usize>> = Vec::with_capacity(keys.len());
    for (k, column) in keys.iter().zip(&columns) {
        let mut index: HashMap<ValueKey, usize> = HashMap::new();
        let mut values: Vec<Value> = Vec::new();
        let mut at: Vec<usize> = Vec::with_capacity(column.len());
        for v in column {
            let next = values.len();
            let i = *index.entry(v.key()).or_insert(next);
            if i == next {
                values.push(v.clone());
            }
            at.push(i);
        }
        if values.iter().all(|v| v.as_f64().is_some()) {
            // Ascending, the rows' positions following.
            let mut order: Vec<usize> = (0..values.len()).collect();
            order.sort_by(|&a, &b| {
                let (x, y) = (values[a].as_f64(), values[b].as_f64());
                x.unwrap_or(0.0).total_cmp(&y.unwrap_or(0.0))
            });
            let mut rank = vec![0; values.len()];
            for (r, &o) in order.iter().enumerate() {
                rank[o] = r;
            }
            values = order.iter().map(|&o| values[o].clone()).collect();
            for a in &mut at {
                *a = rank[*a];
            }
        }
        params.push(Parameter::new(k, values));
        positions.push(at);
    }
    // One entry per configuration: its best value, else its first failure.
    let mut entries: Vec<CacheEntry> = Vec::new();
    let mut at: HashMap<Vec<usize>, usize> = HashMap::new();
    for (row, (_, outcome, times)) in configs.into_iter().enumerate() {
        let position: Vec<usize> = positions.iter().map(|p| p[row]).collect();
        let values: Vec<Value> = params
            .iter()
            .zip(&position)
            .map(|(p, &i)| p.values[i].clone())
            .collect();
        let outcome = outcome.lower_is_better(higher_is_better);
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
                    key: cache_key(&values),
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

/// A cache key as Kernel Tuner writes one: the values joined with commas, as Python prints
/// them.
fn cache_key(values: &[Value]) -> String {
    values
        .iter()
        .map(|v| match v {
            Value::Str(s) => s.clone(),
            Value::Bool(true) => "True".into(),
            Value::Bool(false) => "False".into(),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The number a string writes in full (`"32"`, `"0.5"`, `"1e3"`), if it does: a whole number
/// without a decimal point is an integer.
fn number_in(s: &str) -> Option<Value> {
    let t = s.trim();
    if let Ok(i) = t.parse::<i64>() {
        return Some(Value::Int(i));
    }
    let f = t.parse::<f64>().ok().filter(|f| f.is_finite())?;
    if !t.contains('.') && f.fract() == 0.0 && f.abs() < 9.2e18 {
        return Some(Value::Int(f as i64));
    }
    Some(Value::Float(f))
}

/// A result's value of `objective`, or its failure (`invalidity` other than `correct`, with
/// its `error`; a value of 1e20 or more); `None` when a correct result has no such
/// measurement.
fn outcome(result: &Json, objective: &str) -> Option<Outcome> {
    match result.get("invalidity") {
        None => {}
        Some(Json::String(s)) if s == "correct" => {}
        Some(invalidity) => {
            let invalidity = invalidity
                .as_str()
                .map(String::from)
                .unwrap_or_else(|| invalidity.to_string());
            let reason = result
                .get("error")
                .and_then(Json::as_str)
                .map(|e| format!("{invalidity}: {e}"))
                .unwrap_or(invalidity);
            return Some(Outcome::Failed(reason));
        }
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
    Some(Outcome::measured(v))
}

/// The names of the first result's configuration in the order `text` writes them (a parsed
/// JSON object sorts its keys); `None` when the text does not have that shape.
fn first_configuration_order(text: &str) -> Option<Vec<String>> {
    let mut de = serde_json::Deserializer::from_str(text);
    top().deserialize(&mut de).ok().flatten()
}

/// An object's field `name`, read with `seed` (the last copy of a key given twice, as the
/// parsed JSON keeps); `None` when the object has no such field.
struct Field<S> {
    name: &'static str,
    what: &'static str,
    seed: S,
}

/// The top-level object: the configuration keys of its first result, in order.
fn top() -> Field<Results> {
    Field {
        name: "results",
        what: "a T4 results object",
        seed: Results,
    }
}

/// `results`: its first element.
#[derive(Clone, Copy)]
struct Results;
/// A configuration: its keys in order.
#[derive(Clone, Copy)]
struct Keys;

impl<'de, S> DeserializeSeed<'de> for Field<S>
where
    S: DeserializeSeed<'de, Value = Option<Vec<String>>> + Copy,
{
    type Value = Option<Vec<String>>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, S> Visitor<'de> for Field<S>
where
    S: DeserializeSeed<'de, Value = Option<Vec<String>>> + Copy,
{
    type Value = Option<Vec<String>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.what)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == self.name {
                out = map.next_value_seed(self.seed)?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(out)
    }
}

impl<'de> DeserializeSeed<'de> for Results {
    type Value = Option<Vec<String>>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Results {
    type Value = Option<Vec<String>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of results")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        // A result: its `configuration`.
        let first = seq
            .next_element_seed(Field {
                name: "configuration",
                what: "a result object",
                seed: Keys,
            })?
            .flatten();
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(first)
    }
}

impl<'de> DeserializeSeed<'de> for Keys {
    type Value = Option<Vec<String>>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Keys {
    type Value = Option<Vec<String>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a configuration object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        // A key given twice keeps its first place (and its last value, as parsed).
        while let Some(key) = map.next_key::<String>()? {
            map.next_value::<IgnoredAny>()?;
            if !out.contains(&key) {
                out.push(key);
            }
        }
        Ok(Some(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> Result<CacheFile, KtError> {
        let v: Json = serde_json::from_str(json).unwrap();
        let obj = v.as_object().unwrap();
        assert!(is_t4(obj));
        from_t4(Path::new("r.t4.json"), obj, Some(json))
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
        assert!(e.contains("result #2") && e.contains("a, b"), "{e}");
        let json = r#"{"results": [{"configuration": {"a": 1}, "invalidity": "correct",
            "measurements": [{"name": "GFLOP/s", "value": 3}]}]}"#;
        let e = read(json).expect_err("no time").to_string();
        assert!(e.contains("result #1") && e.contains("`time`"), "{e}");
        let e = read(r#"{"results": [{"configuration": 3}]}"#)
            .expect_err("not an object")
            .to_string();
        assert!(e.contains("result #1 has no `configuration`"), "{e}");
        let e = read(r#"{"results": []}"#).expect_err("empty").to_string();
        assert!(e.contains("`results` is empty"), "{e}");
    }

    /// The parameters keep the first result's order (a parsed object sorts its keys), so a
    /// T4 file and the cache file of the same results make the same space.
    #[test]
    fn parameters_keep_the_files_order() {
        let json = format!(
            r#"{{"results": [{}]}}"#,
            result(r#"{"zeta": 1, "alpha": 2, "mid": 3}"#, "correct", "1.0")
        );
        let cache = read(&json).expect("a T4 file");
        let names: Vec<&str> = cache.params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["zeta", "alpha", "mid"]);
        assert_eq!(cache.entries[0].key, "1,2,3");
    }

    /// A key given twice: the order and the data come from the same (last) copy; a parameter
    /// named twice in a configuration keeps its first place. `metadata.parameters` orders.
    #[test]
    fn duplicate_keys_take_the_last_copy() {
        let json = format!(
            r#"{{"results": [{}], "results": [{}]}}"#,
            result(r#"{"a": 1, "b": 2}"#, "correct", "1.0"),
            result(r#"{"b": 2, "a": 1}"#, "correct", "1.0")
        );
        let names =
            |c: &CacheFile| -> Vec<String> { c.params.iter().map(|p| p.name.clone()).collect() };
        assert_eq!(names(&read(&json).unwrap()), ["b", "a"]);
        let json = format!(
            r#"{{"results": [{}]}}"#,
            result(r#"{"b": 1, "a": 2, "b": 3}"#, "correct", "1.0")
        );
        let cache = read(&json).unwrap();
        assert_eq!(names(&cache), ["b", "a"]);
        assert_eq!(cache.entries[0].key, "3,2");
        let json = format!(
            r#"{{"metadata": {{"parameters": ["a", "b"]}}, "results": [{}]}}"#,
            result(r#"{"b": 2, "a": 1}"#, "correct", "1.0")
        );
        assert_eq!(names(&read(&json).unwrap()), ["a", "b"]);
    }

    /// Numbers are one value however written (`1`, `1.0`, `"1"`, `"1e0"`): a configuration
    /// written both ways keeps its best value whatever the results' order; a parameter of
    /// numbers, some in strings, takes the numbers.
    #[test]
    fn numbers_are_one_value_however_written() {
        for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0]] {
            let rows = [
                result(r#"{"a": 1}"#, "correct", "3.0"),
                result(r#"{"a": 1.0}"#, "correct", "5.0"),
                result(r#"{"a": "1e0"}"#, "correct", "4.0"),
            ];
            let picked: Vec<&str> = order.iter().map(|&i| rows[i].as_str()).collect();
            let cache = read(&format!(r#"{{"results": [{}]}}"#, picked.join(","))).unwrap();
            assert_eq!(cache.entries.len(), 1, "{order:?}");
            assert_eq!(cache.optimum(), Some(3.0), "{order:?}");
        }
        let json = format!(
            r#"{{"results": [{}, {}, {}]}}"#,
            result(r#"{"a": "32"}"#, "correct", "3.0"),
            result(r#"{"a": 64}"#, "correct", "2.0"),
            result(r#"{"a": 128.0}"#, "correct", "1.0")
        );
        let cache = read(&json).unwrap();
        assert_eq!(
            cache.params[0].values,
            vec![Value::Int(32), Value::Int(64), Value::Float(128.0)]
        );
        // A string that is not a number keeps the column strings.
        let json = format!(
            r#"{{"results": [{}, {}]}}"#,
            result(r#"{"a": "32"}"#, "correct", "3.0"),
            result(r#"{"a": "wide"}"#, "correct", "2.0")
        );
        let cache = read(&json).unwrap();
        assert_eq!(cache.params[0].values[0], Value::Str("32".into()));
    }

    /// Any `invalidity` but the string `correct` is a failure; so is Kernel Tuner's 1e20.
    #[test]
    fn failures_are_any_invalidity_and_1e20() {
        let row = |inv: &str, value: &str, a: i64| {
            format!(
                r#"{{"configuration": {{"a": {a}}}, "invalidity": {inv},
                    "measurements": [{{"name": "time", "value": {value}}}]}}"#
            )
        };
        let json = format!(
            r#"{{"results": [{}, {}, {}, {}]}}"#,
            row("1", "1.0", 1),
            row("null", "1.0", 2),
            row("\"correct\"", "1e20", 3),
            row("\"correct\"", "2.0", 4)
        );
        let cache = read(&json).unwrap();
        let failed = cache
            .entries
            .iter()
            .filter(|e| matches!(e.outcome, Outcome::Failed(_)))
            .count();
        assert_eq!(failed, 3);
        assert_eq!(cache.optimum(), Some(2.0));
    }

    /// Many distinct values of one parameter read in about linear time (a hash of the values,
    /// not a scan per result): 50,000 results of distinct values, every one an entry.
    #[test]
    fn many_distinct_values_are_read() {
        let rows: Vec<String> = (0..50_000)
            .map(|i| {
                format!(
                    r#"{{"configuration": {{"a": {i}}}, "measurements": [{{"name": "time", "value": {}}}]}}"#,
                    1.0 + i as f64
                )
            })
            .collect();
        let cache = read(&format!(r#"{{"results": [{}]}}"#, rows.join(","))).unwrap();
        assert_eq!(cache.params[0].values.len(), 50_000);
        assert_eq!(cache.entries.len(), 50_000);
        assert_eq!(cache.optimum(), Some(1.0));
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
