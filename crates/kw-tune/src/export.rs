//! A results log in other tools' formats: a Kernel Tuner cache file, so that Kernel Tuner (and
//! every tool reading its files, this project's simulation included) can use what a run
//! measured, and a T4 results file (the auto-tuning community's `results-schema.json`, as
//! Kernel Tuner writes it), so results compare with other tools' on the same benchmark.

use crate::error::TuneError;
use crate::log::{read_log, LogHeader, LogRecord};
use serde_json::{json, Map, Value as Json};
use std::path::Path;

/// Kernel Tuner's own names for failed configurations (written as the `time` value).
const KT_FAILURES: &[&str] = &[
    "CompilationFailedConfig",
    "RuntimeFailedConfig",
    "InvalidConfig",
];

/// The Kernel Tuner cache-file JSON of a log's header and records. A failed configuration
/// gets a Kernel Tuner failure name as its `time` (and its reason as `__error__` when the
/// reason is not one of those names).
pub fn kt_cache_json(header: &LogHeader, records: &[LogRecord]) -> Json {
    let keys: Vec<&str> = header.params.iter().map(|p| p.name.as_str()).collect();
    let mut tune_params = Map::new();
    for p in &header.params {
        tune_params.insert(p.name.clone(), json!(p.values));
    }
    let mut cache = Map::new();
    for r in records {
        let mut rec = Map::new();
        for (name, value) in r.config.iter() {
            rec.insert(name.to_string(), json!(value));
        }
        match (&r.objective, &r.failure) {
            (Some(v), None) => {
                // A maximised objective's log holds scores (the values negated): the cache
                // holds the values, marked higher-is-better below.
                let v = if header.maximize { -v } else { *v };
                rec.insert(header.objective.clone(), json!(v));
                rec.insert("times".into(), json!([v]));
            }
            (_, failure) => {
                let reason = failure.as_deref().unwrap_or("RuntimeFailedConfig");
                if KT_FAILURES.contains(&reason) {
                    rec.insert(header.objective.clone(), json!(reason));
                } else {
                    rec.insert(header.objective.clone(), json!("RuntimeFailedConfig"));
                    rec.insert("__error__".into(), json!(reason));
                }
            }
        }
        rec.insert("compile_time".into(), json!(0.0));
        rec.insert("verification_time".into(), json!(0));
        rec.insert("benchmark_time".into(), json!(r.eval_s * 1000.0));
        rec.insert("strategy_time".into(), json!(0));
        rec.insert("framework_time".into(), json!(0.0));
        rec.insert("timestamp".into(), json!(r.elapsed_s));
        cache.insert(r.key.clone(), Json::Object(rec));
    }
    // Captures record three axes; Kernel Tuner writes a 1-D size as a number.
    let mut size = header.problem_size.clone().unwrap_or_default();
    while size.len() > 1 && size.last() == Some(&1) {
        size.pop();
    }
    let problem_size = match size.as_slice() {
        [one] => json!(one),
        many => json!(many),
    };
    let file = json!({
        "device_name": header.device_name.clone().unwrap_or_default(),
        "kernel_name": header.kernel_name.clone().unwrap_or_default(),
        "problem_size": problem_size,
        "tune_params_keys": keys,
        "tune_params": tune_params,
        "objective": header.objective,
        "objective_higher_is_better": header.maximize,
        "cache": cache,
    });
    file
}

/// The log's records that can be exported or reported: those whose configuration, point and
/// key agree with each other and with the header's parameters (an edited line that disagrees
/// is left out, with one warning naming each, as a resume leaves it out).
pub fn consistent_records(
    log: &Path,
    header: &LogHeader,
    records: Vec<LogRecord>,
) -> Vec<LogRecord> {
    let why = |r: &LogRecord| disagreement(header, r);
    let mut dropped = Vec::new();
    let kept: Vec<LogRecord> = records
        .into_iter()
        .filter(|r| match why(r) {
            Some(w) => {
                dropped.push(format!("evaluation {}: {w}", r.eval));
                false
            }
            None => true,
        })
        .collect();
    if !dropped.is_empty() {
        kw_core::diag::warn(&format!(
            "{}: left out {} record(s) whose configuration, point and key disagree (an edited \
             log?): {}",
            log.display(),
            dropped.len(),
            dropped.join("; ")
        ));
    }
    kept
}

/// Writes the results log at `log` as a Kernel Tuner cache file at `out` (atomically); returns
/// how many configurations it holds (one per distinct configuration: a log may hold one twice).
pub fn export_log(log: &Path, out: &Path) -> Result<usize, TuneError> {
    let mut contents = read_log(log)?;
    contents.records = consistent_records(log, &contents.header, contents.records);
    let json = kt_cache_json(&contents.header, &contents.records);
    let configurations = json["cache"].as_object().map_or(0, |c| c.len());
    let text = serde_json::to_string_pretty(&json).map_err(|e| TuneError::LogFormat {
        path: out.to_path_buf(),
        line: 0,
        message: e.to_string(),
    })?;
    kw_core::files::write_atomic(out, text.as_bytes(), kw_core::files::FileModes::get())
        .map_err(|e| TuneError::io(out, e))?;
    Ok(configurations)
}

/// The T4 version written (`schema_version` of `results-schema.json`).
pub const T4_SCHEMA_VERSION: &str = "1.0.0";

/// The T4 `invalidity` of a failure reason (the prefixes kw's evaluators write).
fn t4_invalidity(reason: &str) -> &'static str {
    if reason.starts_with("compile failed") || reason == "CompilationFailedConfig" {
        "compile"
    } else if reason.starts_with("wrong result") {
        "correctness"
    } else if reason.starts_with("timed out") {
        "timeout"
    } else if reason.starts_with("invalid configuration") || reason == "InvalidConfig" {
        "constraints"
    } else {
        "runtime"
    }
}

/// The T4 results JSON of a log's header and records: one result per evaluation, with the
/// configuration, the objective's measurements (`times.runtimes`: the timed samples in
/// milliseconds where the log has them), `invalidity` (`correct` for a valid result, as Kernel
/// Tuner writes, else `compile`, `runtime`, `correctness`, `timeout` or `constraints`) and
/// `correctness` (1 verified or not checked, 0 wrong). A failure's reason is kept as
/// `error`. A maximised objective's measurements are its values (the log holds them negated),
/// and the metadata's `objective_higher_is_better` says so.
pub fn t4_json(header: &LogHeader, records: &[LogRecord]) -> Json {
    let mut json = t4_head(header);
    json["results"] = Json::Array(records.iter().map(|r| t4_result(header, r)).collect());
    json
}

/// The T4 file without its results: the schema version and the metadata.
fn t4_head(header: &LogHeader) -> Json {
    json!({
        "schema_version": T4_SCHEMA_VERSION,
        "metadata": {
            "kernel_name": header.kernel_name.clone().unwrap_or_default(),
            "device_name": header.device_name.clone().unwrap_or_default(),
            "problem_size": header.problem_size.clone().unwrap_or_default(),
            "strategy": header.strategy.clone().unwrap_or_default(),
            "objective": header.objective,
            "objective_higher_is_better": header.maximize,
            "parameters": header.params.iter().map(|p| p.name.clone()).collect::<Vec<_>>(),
            "tool": "kernel-wisdom",
        },
    })
}

/// One evaluation as a T4 result ([`t4_json`]).
fn t4_result(header: &LogHeader, r: &LogRecord) -> Json {
    let unit = if header.objective == "time" { "ms" } else { "" };
    let mut configuration = Map::new();
    for (name, value) in r.config.iter() {
        configuration.insert(name.to_string(), json!(value));
    }
    let runtimes = r.samples.clone().unwrap_or_default();
    let mut out = json!({
        "timestamp": r.elapsed_s,
        "configuration": configuration,
        "objectives": [header.objective],
        "times": {
            "runtimes": runtimes,
            "benchmark": r.eval_s * 1000.0,
        },
    });
    match (&r.objective, &r.failure) {
        (Some(v), None) => {
            out["invalidity"] = json!("correct");
            out["correctness"] = json!(1);
            // A maximised objective's log holds scores: the values negated.
            let v = if header.maximize { -v } else { *v };
            out["measurements"] = json!([{"name": header.objective, "value": v, "unit": unit}]);
        }
        (_, failure) => {
            let reason = failure.as_deref().unwrap_or("no objective recorded");
            let invalidity = t4_invalidity(reason);
            out["invalidity"] = json!(invalidity);
            out["correctness"] = json!(i32::from(invalidity != "correctness"));
            out["measurements"] = json!([]);
            out["error"] = json!(reason);
        }
    }
    out
}

/// Writes the results log at `log` as a T4 results file at `out` (atomically); returns how
/// many results it holds.
pub fn export_log_t4(log: &Path, out: &Path) -> Result<usize, TuneError> {
    let mut contents = read_log(log)?;
    contents.records = consistent_records(log, &contents.header, contents.records);
    // Written one result per line, each built and dropped in turn: the whole file as one JSON
    // tree took about 25 times the log's size in memory (2.5 GB for a 100 MB log).
    let format_error = |e: serde_json::Error| TuneError::LogFormat {
        path: out.to_path_buf(),
        line: 0,
        message: e.to_string(),
    };
    let head = serde_json::to_string(&t4_head(&contents.header)).map_err(format_error)?;
    // `{...}` without its closing brace, then the results as its last field.
    let head = head.strip_suffix('}').unwrap_or(&head);
    let mut text = String::with_capacity(contents.records.len() * 320 + head.len() + 32);
    text.push_str(head);
    text.push_str(",\"results\":[\n");
    for (i, r) in contents.records.iter().enumerate() {
        if i > 0 {
            text.push_str(",\n");
        }
        text.push_str(
            &serde_json::to_string(&t4_result(&contents.header, r)).map_err(format_error)?,
        );
    }
    text.push_str("\n]}\n");
    kw_core::files::write_atomic(out, text.as_bytes(), kw_core::files::FileModes::get())
        .map_err(|e| TuneError::io(out, e))?;
    Ok(contents.records.len())
}

/// Why a log record disagrees with itself or the header (its configuration, point and key),
/// if it does.
fn disagreement(header: &LogHeader, r: &LogRecord) -> Option<String> {
    if r.config.iter().count() != header.params.len() {
        return Some(format!(
            "its configuration `{}` does not name the log's {} parameters",
            r.config.key(),
            header.params.len()
        ));
    }
    if r.point.len() != header.params.len() {
        return Some(format!(
            "its `point` has {} index(es), not one per parameter of the log ({})",
            r.point.len(),
            header.params.len()
        ));
    }
    let mut key = Vec::with_capacity(header.params.len());
    for (p, &i) in header.params.iter().zip(r.point.iter()) {
        let Some(v) = r.config.get(&p.name) else {
            return Some(format!("it has no value of `{}`", p.name));
        };
        // As `Parameter::index_of`: the value itself first (`1` and `1.0` may both be
        // values), then the same number written otherwise.
        let at = p
            .values
            .iter()
            .position(|x| x == v)
            .or_else(|| p.values.iter().position(|x| x.same(v)));
        if at != Some(i as usize) {
            return Some(match at {
                None => format!("value {v} of `{}` is not among the log's values", p.name),
                Some(_) => format!(
                    "its configuration `{}` is not its point {:?}",
                    r.config.key(),
                    r.point
                ),
            });
        }
        key.push(v.python_str());
    }
    let key = key.join(",");
    (r.key != key).then(|| format!("its key `{}` is not its configuration's `{key}`", r.key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kw_core::space::{Parameter, TuningSpace};

    /// An edited record (a value the log's parameters lack, a configuration that is not its
    /// point, a key that is not its configuration's) is left out of an export; the others
    /// are kept as they are.
    #[test]
    fn records_that_disagree_are_left_out_of_exports() {
        let space = TuningSpace::new(
            vec![
                Parameter::new("bx", [32, 64]),
                Parameter::new("t", ["float", "double"]),
            ],
            vec![],
        )
        .unwrap();
        let header = LogHeader::new(&space);
        let record = |eval: u64, point: Vec<u32>| LogRecord {
            eval,
            key: space.kt_key(&point),
            config: space.config(&point),
            point,
            objective: Some(1.0),
            failure: None,
            elapsed_s: 0.0,
            eval_s: 0.0,
            samples: None,
            device: None,
        };
        let good = record(1, vec![1, 0]);
        let mut other_value = record(2, vec![0, 0]);
        other_value.config.set("bx", 63);
        let mut not_its_point = record(3, vec![0, 1]);
        not_its_point.point = vec![1, 1];
        let mut not_its_key = record(4, vec![1, 1]);
        not_its_key.key = "32,double".into();
        let kept = consistent_records(
            Path::new("log.jsonl"),
            &header,
            vec![good.clone(), other_value, not_its_point, not_its_key],
        );
        assert_eq!(kept, vec![good.clone()]);
        // A short point is said as such (it was "does not name the log's 2 parameters").
        let mut short = good;
        short.point = vec![1];
        let why = disagreement(&header, &short).unwrap();
        assert_eq!(
            why,
            "its `point` has 1 index(es), not one per parameter of the log (2)"
        );
    }
}
