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
    assert_eq!(c.params[1].values[1], kw_core::value::Value::Float(2.5));
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
    // No tuned parameters: every entry would be one configuration, and the best of an
    // arbitrary one its optimum.
    let e = CacheFile::load(&temp(
        "nokeys.json",
        br#"{"tune_params_keys": [], "tune_params": {"a": [1, 2]}, "cache": {"1": {"a": 1, "time": 1.0}}}"#,
    ))
    .unwrap_err();
    assert!(
        e.to_string().contains("nokeys.json")
            && e.to_string().contains("`tune_params_keys` is empty"),
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
        e.contains("t1.json") && e.contains("condition #1") && e.contains("column 6"),
        "{e}"
    );
}

/// Flat chains of 50,000 terms are an error, not a stack overflow (in parsing, or in any walk
/// of the tree: evaluation, printing, serialisation, dropping); chains within the limit
/// survive every walk.
#[test]
fn long_flat_chains_are_errors_not_stack_overflows() {
    use kw_core::expr::Expr;
    use kw_core::parse::MAX_TREE_DEPTH;
    for sep in [" + ", " * ", " < ", " - "] {
        let text = vec!["x"; 50_000].join(sep);
        let err = Expr::parse(&text).expect_err(sep);
        assert!(err.to_string().contains("too deep"), "{sep}: {err}");
    }
    // `and` / `or` chains that long are grouped as a balanced tree (they are associative),
    // which every walk handles: printed and read back, serialised and read back.
    for sep in [" and ", " or "] {
        let text = vec!["x"; 50_000].join(sep);
        let e = Expr::parse(&text).expect(sep);
        assert!(kw_core::parse::tree_depth(&e) <= MAX_TREE_DEPTH);
        assert_eq!(Expr::parse(&e.to_string()).unwrap(), e);
        let json = serde_json::to_string(&e).unwrap();
        assert_eq!(serde_json::from_str::<Expr>(&json).unwrap(), e);
    }
    // The same built from shorter chains in parentheses.
    let inner = vec!["1"; 30].join(" + ");
    let text = format!("({inner}) * ({inner}) + {}", vec!["2"; 30].join(" + "));
    assert!(Expr::parse(&text).is_err());
    let text = format!("({inner}) * ({inner})");
    assert!(Expr::parse(&text).is_ok());
    // At the limit: parsed, evaluated, printed and read back, serialised and read back,
    // cloned, visited, dropped.
    let n = MAX_TREE_DEPTH;
    let text = vec!["1"; n].join(" + ");
    let e = Expr::parse(&text).expect("within the limit");
    let scope = kw_core::eval::EmptyScope;
    assert_eq!(
        e.eval(&scope).unwrap(),
        kw_core::value::Value::Int(n as i64)
    );
    let printed = e.to_string();
    assert_eq!(Expr::parse(&printed).unwrap(), e);
    let json = serde_json::to_string(&e).unwrap();
    assert_eq!(serde_json::from_str::<Expr>(&json).unwrap(), e);
    let copy = e.clone();
    let mut nodes = 0;
    copy.visit(&mut |_| nodes += 1);
    assert_eq!(nodes, 2 * n - 1);
    drop(copy);
    // Deep JSON of any shape is refused by the JSON reader's own limit.
    let deep = format!(
        "{}{{\"lit\":1}}{}",
        "{\"unary\":{\"op\":\"neg\",\"arg\":".repeat(20_000),
        "}}".repeat(20_000)
    );
    assert!(serde_json::from_str::<Expr>(&deep).is_err());
}

/// Found by the expression fuzz target (`tests/fuzz.rs`): strings with control characters
/// print with `\u{..}` escapes that must read back; a float literal beyond the largest float
/// would be infinite, which JSON cannot hold (the capture could not be read back).
#[test]
fn fuzz_findings_of_the_expression_parser() {
    use kw_core::{expr::Expr, value::Value};
    let e = Expr::Lit(Value::Str("a\u{1}b\u{7f}".into()));
    assert_eq!(Expr::parse(&e.to_string()).unwrap(), e);
    assert_eq!(
        Expr::parse("\"x\\u{41}\"").unwrap(),
        Expr::Lit(Value::Str("xA".into()))
    );
    assert!(Expr::parse("\"\\u{110000}\"").is_err());
    assert!(Expr::parse("\"\\u{}\"").is_err());
    let err = Expr::parse("x != 1e999").unwrap_err();
    assert!(
        err.to_string().contains("beyond the largest float"),
        "{err}"
    );
    assert!(Expr::parse("x != -1e999").is_err());
}

/// Found by the 10-minute expression fuzz run: 60 nested `!` parsed, but printed with two
/// parentheses per level the text nested deeper than the parser accepts. Prefix operators
/// and conditionals now count towards the tree-depth limit, and print with one pair each.
#[test]
fn deep_prefix_operators_print_and_read_back() {
    use kw_core::expr::Expr;
    use kw_core::parse::MAX_TREE_DEPTH;
    for op in ["!", "not ", "-"] {
        let ok = format!("{}x", op.repeat(MAX_TREE_DEPTH - 1));
        let e = Expr::parse(&ok).unwrap_or_else(|err| panic!("{op}: {err}"));
        assert_eq!(Expr::parse(&e.to_string()).unwrap(), e, "{op}");
        let deep = format!("{}x", op.repeat(MAX_TREE_DEPTH + 5));
        assert!(Expr::parse(&deep).is_err(), "{op}");
    }
    let chain = format!("{}0", "1 if c else ".repeat(MAX_TREE_DEPTH + 5));
    assert!(Expr::parse(&chain).is_err());
    let e = Expr::parse("-3 + -(x) - -(2 ** 2)").unwrap();
    assert_eq!(Expr::parse(&e.to_string()).unwrap(), e);
}

/// A published file's `Default` that breaks its own conditions (benchmark_hub's dedispersion
/// and hotspot) was refused when tuned: the first valid configuration is the default instead,
/// with a note naming the condition.
#[test]
fn a_default_breaking_the_conditions_is_replaced_with_a_note() {
    let t1 = br#"{"ConfigurationSpace": {"TuningParameters": [
        {"Name": "tile_size_x", "Type": "int", "Values": "[1, 2, 4]", "Default": 1},
        {"Name": "tile_stride_x", "Type": "int", "Values": "[0, 1]", "Default": 1}],
        "Conditions": [{"Expression": "tile_size_x > 1 or tile_stride_x == 0", "Parameters": ["tile_size_x", "tile_stride_x"]}]}}"#;
    let path = temp("bad_default_T1.json", t1);
    let spec = kw_core::kernel_tuner::T1Spec::load(&path).unwrap();
    let defaults: Vec<String> = spec.params.iter().map(|p| p.default.to_string()).collect();
    assert_eq!(defaults, ["1", "0"], "the first valid configuration");
    let note = spec.notes.join("\n");
    assert!(
        note.contains("bad_default_T1.json")
            && note.contains("breaks condition #1 `tile_size_x > 1 or tile_stride_x == 0`")
            && note.contains("tile_stride_x=1"),
        "{note}"
    );
    // A valid default stays, with no note.
    let good = String::from_utf8(t1.to_vec())
        .unwrap()
        .replace(r#""Default": 1}],"#, r#""Default": 0}],"#);
    let spec = kw_core::kernel_tuner::T1Spec::load(&temp("good_default_T1.json", good.as_bytes()))
        .unwrap();
    assert_eq!(spec.params[1].default.to_string(), "0");
    assert!(spec.notes.is_empty(), "{:?}", spec.notes);
}

/// Kernel Tuner writes with Python's `json.dumps`: `NaN` and `Infinity` (a metric, or a time,
/// that is not finite) made the whole file unreadable, as did a byte-order mark and a cache
/// stopped before its first result.
#[test]
fn python_json_constants_a_bom_and_an_empty_cache_read() {
    use kw_core::kernel_tuner::Outcome;
    let full = format!(
        "\u{feff}{}\"2,2.5\": {{\"a\": 2, \"b\": 2.5, \"time\": NaN, \"GFLOP/s\": -Infinity, \"note\": \"NaN stays\"}}, \
         \"1,1.0x\": {{\"a\": 1, \"b\": 1.0, \"time\": Infinity}}}}}}",
        CACHE.replacen("\"time\": 3.5,", "\"time\": 3.5, \"GFLOP/s\": NaN,", 1)
    );
    let c = CacheFile::load(&temp("nan.json", full.as_bytes())).unwrap();
    assert_eq!(c.entries.len(), 5);
    assert_eq!(c.optimum(), Some(3.5), "the finite time is the best");
    let failed = |key: &str| {
        matches!(
            c.entries.iter().find(|e| e.key == key).unwrap().outcome,
            Outcome::Failed(_)
        )
    };
    assert!(failed("2,2.5") && failed("1,1.0x"), "not finite: failed");
    let header_only = CACHE.split("\"cache\": {").next().unwrap().to_string() + "\"cache\": {\n";
    let c = CacheFile::load(&temp("header_only.json", header_only.as_bytes())).unwrap();
    assert!(c.entries.is_empty());
}

/// A value listed twice in a T1 file was refused when written the same (`[1, 1, 2]`) and
/// kept twice when written another way (`[1, 1.0, 2]`, one value to Python): each is now
/// counted once, with a note.
#[test]
fn a_t1_value_listed_twice_is_counted_once_with_a_note() {
    for values in [r#""[1, 1, 2]""#, r#"[1, 1.0, 2]"#] {
        let t1 = format!(
            r#"{{"ConfigurationSpace": {{"TuningParameters": [{{"Name": "a", "Type": "int", "Values": {values}, "Default": 1}}], "Conditions": []}}}}"#
        );
        let spec = kw_core::kernel_tuner::T1Spec::load(&temp("twice_T1.json", t1.as_bytes()))
            .expect(values);
        assert_eq!(spec.params[0].values.len(), 2, "{values}");
        let note = spec.notes.join("\n");
        assert!(
            note.contains("`a` lists a value more than once (1"),
            "{values}: {note}"
        );
    }
}

/// A `ProblemSize` of `[96.0]` is the size 96 (as Python's `int()` takes it); one the reader
/// cannot use (`["96"]`, `[0]`) leaves the conditions over it out with a note saying why, not
/// that the file gives none.
#[test]
fn a_t1_problem_size_written_as_floats_or_badly_is_said_as_such() {
    let t1 = |size: &str| {
        format!(
            r#"{{"ConfigurationSpace": {{"TuningParameters": [{{"Name": "a", "Type": "int", "Values": "[16, 32, 64]", "Default": 16}}],
            "Conditions": [{{"Expression": "ProblemSize[0] % a == 0"}}]}}, "KernelSpecification": {{"ProblemSize": {size}}}}}"#
        )
    };
    let spec =
        kw_core::kernel_tuner::T1Spec::load(&temp("ps_float_T1.json", t1("[96.0]").as_bytes()))
            .unwrap();
    assert!(spec.notes.is_empty(), "{:?}", spec.notes);
    assert_eq!(spec.restrictions.len(), 1);
    for (size, says) in [
        ("[\"96\"]", "in a form kw cannot read"),
        ("[0]", "every axis must be at least 1"),
    ] {
        let spec =
            kw_core::kernel_tuner::T1Spec::load(&temp("ps_bad_T1.json", t1(size).as_bytes()))
                .unwrap();
        let note = spec.notes.join("\n");
        assert!(
            note.contains(says) && note.contains("left out"),
            "{size}: {note}"
        );
        assert!(spec.restrictions.is_empty());
    }
}

/// A value that is not of the parameter's declared `Type` (`uint` listing -1, `float`
/// listing a string) was taken without a word: it is used as written, with a note.
#[test]
fn a_t1_value_not_of_its_type_is_noted() {
    for (ty, values, shown) in [
        ("uint", "[-1, 2]", "-1 (int)"),
        ("float", r#"[1.5, "x"]"#, "\"x\" (string)"),
    ] {
        let t1 = format!(
            r#"{{"ConfigurationSpace": {{"TuningParameters": [{{"Name": "a", "Type": "{ty}", "Values": {values}}}], "Conditions": []}}}}"#
        );
        let spec =
            kw_core::kernel_tuner::T1Spec::load(&temp("type_T1.json", t1.as_bytes())).expect(ty);
        let note = spec.notes.join("\n");
        assert!(
            note.contains(&format!("is of Type `{ty}` but lists {shown}")),
            "{note}"
        );
        assert_eq!(spec.params[0].values.len(), 2);
    }
}

/// A JSON array of Kernel Tuner restriction strings is Python, as a T1 file's conditions:
/// `(a and b) == 32` compares `b` when `a` is true.
#[test]
fn restriction_strings_of_a_json_array_are_read_as_python() {
    let path = temp("rj.json", br#"["(a and b) == 32"]"#);
    let r = kw_core::kernel_tuner::load_restrictions(&path, None).unwrap();
    let space = kw_core::space::TuningSpace::new(
        vec![
            kw_core::space::Parameter::new("a", [0, 1, 2]),
            kw_core::space::Parameter::new("b", [16, 32]),
        ],
        r.exprs,
    )
    .unwrap();
    assert_eq!(space.len(), 2);
}
