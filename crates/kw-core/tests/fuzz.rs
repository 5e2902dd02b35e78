//! Fuzz targets (mutation fuzzing, [`kw_core::mutation_fuzzer`]): the expression parser, Python-style
//! value lists, wisdom files, Kernel Tuner cache and T1 files. Each runs briefly in CI;
//! `KW_FUZZ_SECS=600 cargo test --release -p kw-core --test fuzz -- --nocapture` runs each
//! for 10 minutes. A panic (or a stack overflow, which aborts the run) is a finding; findings
//! become regression cases in `crates/kw-core/tests/bad_input.rs`.

use kw_core::expr::Expr;
use kw_core::mutation_fuzzer::fuzz;
use kw_core::wisdom::{explain, select, Query, WisdomFile};
use std::path::PathBuf;

const EXPR_DICT: &[&[u8]] = &[
    b" and ",
    b" or ",
    b"not ",
    b" if ",
    b" else ",
    b"+",
    b"-",
    b"*",
    b"/",
    b"//",
    b"%",
    b"**",
    b"==",
    b"!=",
    b"<=",
    b">",
    b"(",
    b")",
    b"[",
    b"]",
    b",",
    b"min(",
    b"max(",
    b"div_ceil(",
    b"args.n",
    b"args[0]",
    b"problem_size[1]",
    b"device.warp_size",
    b"9223372036854775807",
    b"-9223372036854775808",
    b"1e308",
    b"0.0",
    b"\"s\"",
    b"true",
    b"x",
    b" for i in range(",
];

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kw-core-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn fuzz_expression_parser() {
    let seeds: Vec<Vec<u8>> = [
        "use_padding==0 or block_size_x % 32 != 0",
        "block_size_x * block_size_y <= device.max_threads_per_block",
        "a if b > 2 else min(c, div_ceil(args.n, 4)) ** 2",
        "not (x < y <= z) and -3 // 2 == -2",
        "[1] + [2 * i for i in range(1, 11) if i % 2 == 0]",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    let r = fuzz("expression", &seeds, EXPR_DICT, 5_000, |input| {
        let Ok(text) = std::str::from_utf8(input) else {
            return;
        };
        let _ = kw_core::kernel_tuner::parse_value_list(text);
        let Ok(e) = Expr::parse(text) else { return };
        // Whatever parses prints, parses back to the same tree, evaluates without a panic
        // and survives its JSON form.
        let printed = e.to_string();
        let again = Expr::parse(&printed).unwrap_or_else(|err| panic!("{printed:?}: {err}"));
        assert_eq!(again, e, "{printed}");
        let _ = e.eval(&kw_core::eval::EmptyScope);
        let json = serde_json::to_string(&e).unwrap();
        let back: Expr = serde_json::from_str(&json).unwrap_or_else(|err| panic!("{json}: {err}"));
        assert_eq!(back, e);
    });
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

fn wisdom_seed() -> Vec<u8> {
    br#"{"format":"kernel-wisdom","version":1,"tuning_key":"k","records":[{"config":{"bx":64,"u":2},
"problem_size":[4096,1],"device":{"name":"G","vendor":"V","backend":"cuda","architecture":"sm_90","driver":"1"},
"objective":{"median_ms":0.5,"samples":10},"space":{"hash":"ab","parameters":[{"name":"bx","values":[32,64],"default":32},
{"name":"u","values":[1,2],"default":1}]},"provenance":{"date":"2026-01-01","strategy":"random","evaluations":3}}]}"#
        .to_vec()
}

#[test]
fn fuzz_wisdom_reader() {
    let path = temp("wisdom.json");
    let dict: &[&[u8]] = &[
        b"\"version\":",
        b"\"records\":",
        b"\"median_ms\":",
        b"-1",
        b"1e999",
        b"null",
        b"{",
        b"}",
        b"[",
        b"]",
        b"\xEF\xBB\xBF",
        b"\"problem_size\":[",
        b"0",
        b"9223372036854775807",
        b"\"bx\":64,",
        b"\"config\":{\"bx\":32,\"bx\":64},",
        b"\"median_ms\":0.0",
        b"\"problem_size\":[]",
        b"[-4096]",
    ];
    let query = Query {
        device_name: "G".into(),
        architecture: "sm_90".into(),
        backend: "cuda".into(),
        problem_size: vec![4096],
    };
    let r = fuzz("wisdom", &[wisdom_seed()], dict, 2_000, |input| {
        std::fs::write(&path, input).unwrap();
        if let Ok(f) = WisdomFile::load(&path) {
            // Whatever loads is valid: no duplicate parameter, a positive finite time, a
            // problem size of axes of at least 1.
            for r in &f.records {
                assert!(r.validate().is_ok(), "{r:?}");
                let mut names: Vec<&str> = r.config.iter().map(|(n, _)| n).collect();
                let n = names.len();
                names.sort_unstable();
                names.dedup();
                assert_eq!(names.len(), n, "a duplicate parameter loaded: {r:?}");
            }
            let s = select(&f.records, &query, |_| Ok(()));
            let _ = explain(&f.records, &query, &s);
            let (merged, _) = kw_core::wisdom::merge_files(vec![f]);
            assert!(merged.len() <= 1);
        }
    });
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

const CACHE: &str = r#"{
"device_name": "Dev", "kernel_name": "k", "problem_size": [64, 1], "tune_params_keys": ["a", "b"],
"tune_params": {"a": [1, 2], "b": [1.0, 2.5]}, "objective": "time",
"cache": {
"1,1.0": {"a": 1, "b": 1.0, "time": 3.5, "times": [3.4, 3.6]},
"1,2.5": {"a": 1, "b": 2.5, "time": "CompilationFailedConfig"},
"2,1.0": {"a": 2, "b": 1.0, "time": 1e20}
}}"#;

const T1: &str = r#"{"General": {"FormatVersion": 1},
"ConfigurationSpace": {"TuningParameters": [
  {"Name": "block_size_x", "Type": "int", "Values": "[16*i for i in range(1,9)]", "Default": 16},
  {"Name": "tile", "Type": "int", "Values": "[1, 2, 4]", "Default": 1}],
 "Conditions": [{"Expression": "block_size_x * tile <= 256", "Parameters": ["block_size_x", "tile"]}]},
"KernelSpecification": {"KernelName": "k"}}"#;

#[test]
fn fuzz_kernel_tuner_readers() {
    let path = temp("kt.json");
    let dict: &[&[u8]] = &[
        b"\"tune_params_keys\"",
        b"\"tune_params\"",
        b"\"cache\"",
        b"\"time\"",
        b"\"Values\"",
        b"\"Conditions\"",
        b"\"Expression\"",
        b"\"Default\"",
        b"range(",
        b",",
        b"}",
        b"]",
        b"null",
        b"\x1f\x8b",
    ];
    let seeds = [CACHE.as_bytes().to_vec(), T1.as_bytes().to_vec()];
    let r = fuzz("kernel-tuner", &seeds, dict, 2_000, |input| {
        std::fs::write(&path, input).unwrap();
        let _ = kw_core::kernel_tuner::CacheFile::load(&path);
        let _ = kw_core::kernel_tuner::load_space_spec(&path);
        let _ = kw_core::kernel_tuner::load_restrictions(&path, None);
        let _ = kw_core::kernel_tuner::load_restrictions(&path, Some(&[64, 0, -1]));
    });
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

/// The compile cache's entry format: no input makes the decoder panic, and an entry is
/// accepted only for the key it names (a relabelled entry never decodes for another key).
#[test]
fn fuzz_cache_entry_decoder() {
    use kw_core::compile_cache::{entry, CacheKey, Entry, EntryHeader};
    let key = CacheKey::from_hex(&"ab".repeat(32)).unwrap();
    let other = CacheKey::from_hex(&"cd".repeat(32)).unwrap();
    let seed = entry::encode(&Entry {
        header: EntryHeader {
            key: key.hex(),
            backend: "opencl".into(),
            kernel: "k".into(),
            device: "d".into(),
            kind: "opencl-binary".into(),
            symbol: "k".into(),
            options: "-DX=1".into(),
            created: 1,
            extra: "MMP".into(),
        },
        payload: (0..200u8).collect(),
    });
    let dict: &[&[u8]] = &[
        b"KWCACHE\n",
        b"\x01\x00\x00\x00",
        b"\xff\xff\xff\xff",
        b"\"key\":",
        b"\"payload\"",
        b"{}",
    ];
    let r = fuzz("cache-entry", &[seed], dict, 3_000, |input| {
        let _ = entry::decode_header(input);
        for k in [&key, &other] {
            if let Ok(e) = entry::decode(input, Some(k)) {
                assert_eq!(e.header.key, k.hex());
            }
        }
    });
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}
