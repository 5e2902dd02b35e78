//! Bad input gives errors that name the file or the position; nothing panics.

use kw_core::kernel_tuner::{load_space_spec, CacheFile, KtError};
use std::io::Write;

fn temp(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("kw-core-bad-input-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::File::create(&path)
        .unwrap()
        .write_all(bytes)
        .unwrap();
    path
}

const CACHE: &str = r#"{
"device_name": "Dev", "kernel_name": "k", "problem_size": [64, 1], "tune_params_keys": ["a", "b"],
"tune_params": {"a": [1, 2], "b": [1.0, 2.5]}, "objective": "time",
"cache": {
"1,1.0": {"a": 1, "b": 1.0, "time": 3.5, "times": [3.4, 3.6]},
"1,2.5": {"a": 1, "b": 2.5, "time": "CompilationFailedConfig"},
"2,1.0": {"a": 2, "b": 1.0, "time": 1e20},
"#;

#[test]
fn crashed_writer_file_is_repaired() {
    let path = temp("crashed.json", CACHE.as_bytes());
    let c = CacheFile::load(&path).unwrap();
    assert_eq!(c.entries.len(), 3);
    assert_eq!(c.optimum(), Some(3.5));
    assert_eq!(c.params[1].values[1], kw_core::Value::Float(2.5));
}

#[test]
fn truncated_files_name_the_file_and_never_panic() {
    let full = format!(
        "{}\"2,2.5\": {{\"a\": 2, \"b\": 2.5, \"time\": 2.0}}}}}}",
        CACHE
    );
    assert!(CacheFile::load(&temp("full.json", full.as_bytes())).is_ok());
    for cut in 0..full.len() {
        let path = temp("cut.json", &full.as_bytes()[..cut]);
        match CacheFile::load(&path) {
            Ok(_) => {}
            Err(e) => assert!(e.to_string().contains("cut.json"), "{e}"),
        }
    }
}

#[test]
fn not_json_and_wrong_shape() {
    let e = CacheFile::load(&temp("garbage.json", b"\x00\x01 hello")).unwrap_err();
    assert!(
        matches!(e, KtError::Json { .. }) && e.to_string().contains("garbage.json"),
        "{e}"
    );
    let e = CacheFile::load(&temp("shape.json", b"{\"tune_params\": 3}")).unwrap_err();
    assert!(
        e.to_string().contains("shape.json") && e.to_string().contains("tune_params_keys"),
        "{e}"
    );
    let e = load_space_spec(&temp("other.json", b"[1, 2]")).unwrap_err();
    assert!(e.to_string().contains("neither"), "{e}");
    let e = CacheFile::load(std::path::Path::new("/nonexistent/x.json")).unwrap_err();
    assert!(e.to_string().contains("/nonexistent/x.json"), "{e}");
    let e = CacheFile::load(&temp("bad.json.gz", &[0x1f, 0x8b, 8, 0, 1, 2, 3])).unwrap_err();
    assert!(e.to_string().contains("bad.json.gz"), "{e}");
}

#[test]
fn bad_t1_conditions_name_the_position() {
    let t1 = br#"{"ConfigurationSpace": {"TuningParameters": [{"Name": "a", "Type": "int", "Values": "[1, 2]", "Default": 1}],
                 "Conditions": [{"Expression": "a >= ", "Parameters": ["a"]}]}}"#;
    let e = load_space_spec(&temp("t1.json", t1))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("t1.json") && e.contains("condition #0") && e.contains("column 6"),
        "{e}"
    );
}
