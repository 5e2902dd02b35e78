//! Reading T1 benchmark files (issue 25): what a file asks for becomes a definition and
//! argument data, or an error naming the file, the field and what is supported.

use kw_core::kernel_tuner::T1Benchmark;
use kw_core::scalar::HostArg;
use std::path::{Path, PathBuf};

fn write(dir: &Path, spec: &serde_json::Value) -> PathBuf {
    std::fs::write(
        dir.join("k.cl"),
        "__kernel void k(__global float* a, int n) { a[get_global_id(0)] = n; }\n",
    )
    .unwrap();
    let p = dir.join("k_T1.json");
    std::fs::write(&p, serde_json::to_string(spec).unwrap()).unwrap();
    p
}

fn spec(arguments: serde_json::Value, language: &str) -> serde_json::Value {
    serde_json::json!({
        "ConfigurationSpace": {
            "TuningParameters": [
                {"Name": "block_size_x", "Type": "int", "Values": "[32, 64]", "Default": 100},
                {"Name": "filter", "Type": "int", "Values": "[3, 5, 7]", "Default": 3}
            ],
            "Conditions": []
        },
        "KernelSpecification": {
            "Language": language, "KernelName": "k", "KernelFile": "k.cl",
            "GlobalSize": {"X": "n"}, "LocalSize": {"X": "block_size_x"},
            "ProblemSize": [1000],
            "Arguments": arguments
        }
    })
}

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "kw-t1-{tag}-{}-{}",
        std::process::id(),
        kw_core::files::nonce(0)
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn a_benchmark_loads_with_its_data() {
    let d = dir("ok");
    let args = serde_json::json!([
        {"Name": "a", "Type": "float4", "MemoryType": "Vector", "AccessType": "ReadWrite",
         "FillType": "Random", "RandomSeed": 3, "Size": "ProblemSize[0] + max(filter) - 1"},
        {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "FillValue": 1000},
        {"Name": "g", "Type": "int16", "MemoryType": "Vector", "FillType": "Generator",
         "DataSource": "i % 7", "Size": 10}
    ]);
    let p = write(&d, &spec(args.clone(), "OpenCL"));
    let b = T1Benchmark::load(&p).unwrap();
    // float4 x 1006 = 4024 f32; the invalid Default 100 is fixed to 32 with a note.
    let HostArg::Buffer { bytes, .. } = &b.inputs[0] else {
        panic!()
    };
    assert_eq!(bytes.len(), 4 * 1006 * 4);
    assert!(
        b.notes.iter().any(|n| n.contains("`Default` 100")),
        "{:?}",
        b.notes
    );
    assert!(
        b.notes.iter().any(|n| n.contains("seed 3")),
        "{:?}",
        b.notes
    );
    assert_eq!(b.def.parameters[0].default, kw_core::value::Value::Int(32));
    let HostArg::Buffer { bytes: g, .. } = &b.inputs[2] else {
        panic!()
    };
    let g: Vec<i16> = g
        .chunks(2)
        .map(|c| i16::from_le_bytes([c[0], c[1]]))
        .collect();
    assert_eq!(g, vec![0, 1, 2, 3, 4, 5, 6, 0, 1, 2]);
    // The same seed gives the same data.
    assert_eq!(T1Benchmark::load(&p).unwrap().inputs[0], b.inputs[0]);
    assert!(b.def.defines.contains_key("kernel_tuner"));
    // The schema's version: 1 is read without a word, another is read the same way and said.
    assert!(!b.notes.iter().any(|n| n.contains("FormatVersion")));
    let mut versioned = spec(args.clone(), "OpenCL");
    versioned["General"] = serde_json::json!({"FormatVersion": 2});
    let b = T1Benchmark::load(&write(&d, &versioned)).unwrap();
    assert!(
        b.notes
            .iter()
            .any(|n| n.contains("General.FormatVersion is 2; this reader follows version 1")),
        "{:?}",
        b.notes
    );
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn what_is_not_supported_is_an_error_naming_file_and_field() {
    let d = dir("errors");
    let scalar = serde_json::json!([{"Name": "n", "Type": "int32", "MemoryType": "Scalar"}]);
    for (args, language, needle) in [
        (
            scalar.clone(),
            "Vulkan",
            "`KernelSpecification.Language` Vulkan is not supported",
        ),
        (
            serde_json::json!([{"Name": "s", "Type": "float", "MemoryType": "Symbol", "Size": 4}]),
            "OpenCL",
            "argument `s` is a constant-memory symbol, which kw sets from the host in CUDA only",
        ),
        (
            serde_json::json!([{"Name": "h", "Type": "half", "MemoryType": "Vector", "Size": 4}]),
            "CUDA",
            "`half` arguments are not supported",
        ),
        (
            serde_json::json!([{"Name": "x", "Type": "float", "MemoryType": "Vector",
                                "Size": 4, "FillType": "BinaryHDF"}]),
            "OpenCL",
            "`FillType` BinaryHDF is not supported",
        ),
        (
            serde_json::json!([{"Name": "x", "Type": "float", "MemoryType": "Vector",
                                "Size": 4, "FillType": "BinaryRaw", "DataSource": "x.bin"}]),
            "OpenCL",
            "x.bin",
        ),
        // Values that the file does not hold, or that do not fit their type, are refused
        // (they were read as -1, as zeros, or cut to 32 bits).
        (
            serde_json::json!([{"Name": "x", "Type": "float", "MemoryType": "Vector",
                                "Size": 4096.5}]),
            "OpenCL",
            "`Size` 4096.5 is not a whole number",
        ),
        (
            serde_json::json!([{"Name": "x", "Type": "float", "MemoryType": "Vector",
                                "Size": 4, "FillType": "Constant", "FillValue": "abc"}]),
            "OpenCL",
            "`FillValue` \"abc\" is not a number",
        ),
        (
            serde_json::json!([{"Name": "n", "Type": "int32", "MemoryType": "Scalar",
                                "FillValue": 4294967360u64}]),
            "OpenCL",
            "`FillValue` 4294967360 does not fit i32",
        ),
        (
            serde_json::json!([{"Name": "n", "Type": "int32", "MemoryType": "Scalar",
                                "FillValue": 2.5}]),
            "OpenCL",
            "`FillValue` 2.5 does not fit i32",
        ),
        (
            serde_json::json!([{"Name": "x", "Type": "uint8", "MemoryType": "Vector",
                                "Size": 4, "FillType": "Generator", "DataSource": "i * 100"}]),
            "OpenCL",
            "at i = 3: 300 does not fit u8",
        ),
    ] {
        let p = write(&d, &spec(args, language));
        let e = T1Benchmark::load(&p).unwrap_err().to_string();
        assert!(e.contains("k_T1.json") && e.contains(needle), "{e}");
    }
    // `SharedMemory` must be a whole number of bytes, 0 or more (it was read as 0 when it
    // was not a whole number, and a negative one reached the launch).
    for (value, needle) in [
        (
            serde_json::json!(-5),
            "`SharedMemory` -5: give a whole number of bytes, 0 to 2^63 - 1",
        ),
        (
            serde_json::json!(1.5),
            "`SharedMemory` 1.5: give a whole number of bytes, 0 to 2^63 - 1",
        ),
        (
            serde_json::json!(true),
            "`SharedMemory` must be a number of bytes or an expression",
        ),
    ] {
        let mut s = spec(scalar.clone(), "OpenCL");
        s["KernelSpecification"]["SharedMemory"] = value;
        let e = T1Benchmark::load(&write(&d, &s)).unwrap_err().to_string();
        assert!(e.contains("k_T1.json") && e.contains(needle), "{e}");
    }
    for value in [serde_json::json!(4096), serde_json::json!(4096.0)] {
        let mut s = spec(scalar.clone(), "OpenCL");
        s["KernelSpecification"]["SharedMemory"] = value;
        let b = T1Benchmark::load(&write(&d, &s)).unwrap();
        assert_eq!(b.def.shared_memory.to_string(), "4096");
    }
    // BinaryRaw with the right size loads, relative to the JSON file.
    std::fs::write(d.join("x.bin"), [0u8; 16]).unwrap();
    let args = serde_json::json!([{"Name": "x", "Type": "float", "MemoryType": "Vector",
                                   "Size": 4, "FillType": "BinaryRaw", "DataSource": "x.bin"}]);
    assert!(T1Benchmark::load(&write(&d, &spec(args, "OpenCL"))).is_ok());
    // A number given as a string, and a whole number written with a fraction, still load.
    let args = serde_json::json!([{"Name": "x", "Type": "float", "MemoryType": "Vector",
                                   "Size": 4.0, "FillType": "Constant", "FillValue": "7.5"},
                                  {"Name": "n", "Type": "int32", "MemoryType": "Scalar",
                                   "FillValue": 12.0}]);
    assert!(T1Benchmark::load(&write(&d, &spec(args, "OpenCL"))).is_ok());
    let _ = std::fs::remove_dir_all(d);
}

/// `LocalSize` given as a number is that number (a whole float too; `16.0` was read as 1),
/// and a number that is no size, or a constant `GlobalSize` below 1 (a benchmark of nothing),
/// is an error naming the field.
#[test]
fn numeric_and_constant_sizes_are_checked() {
    let d = dir("sizes");
    let args = serde_json::json!([{"Name": "n", "Type": "int32", "MemoryType": "Scalar",
                                   "FillValue": 1000}]);
    let with = |local: serde_json::Value, global: Option<serde_json::Value>| {
        let mut s = spec(args.clone(), "OpenCL");
        let ks = &mut s["KernelSpecification"];
        ks["LocalSize"] = serde_json::json!({ "X": local });
        if let Some(g) = global {
            ks.as_object_mut().unwrap().remove("ProblemSize");
            ks["GlobalSize"] = g;
        }
        T1Benchmark::load(&write(&d, &s))
    };
    let b = with(serde_json::json!(16.0), None).unwrap();
    assert_eq!(b.def.block_size[0].to_string(), "16");
    for (bad, why) in [
        (serde_json::json!(16.5), "is not a whole number"),
        (serde_json::json!(0), "is below 1"),
        (serde_json::json!(-4), "is below 1"),
        (
            serde_json::json!(9223372036854775807i64),
            "is too large (at most 2147483647)",
        ),
        (
            serde_json::json!(18446744073709551615u64),
            "is too large (at most 2147483647)",
        ),
        (
            serde_json::json!(1e300),
            "is too large (at most 2147483647)",
        ),
    ] {
        let e = with(bad.clone(), None).unwrap_err().to_string();
        assert!(e.contains(&format!("`LocalSize.X` {bad} {why}")), "{e}");
    }
    let b = with(
        serde_json::json!(8),
        Some(serde_json::json!({"X": "1000 / 2"})),
    )
    .unwrap();
    assert_eq!(b.def.problem_size[0].to_string(), "500");
    for (g, why) in [
        ("0", "is 0"),
        ("1 // 0", "cannot be evaluated"),
        ("2.5", "is 2.5"),
    ] {
        let e = with(serde_json::json!(8), Some(serde_json::json!({"X": g})))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`GlobalSize.X` `"), "{e}");
        assert!(e.contains(why), "{e}");
        assert!(e.contains("k_T1.json"), "{e}");
    }
    // Over parameters: checked at the `Default` configuration (a capture of nothing was
    // written).
    let e = with(
        serde_json::json!(8),
        Some(serde_json::json!({"X": "block_size_x - 32"})),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("at the `Default` configuration is 0"), "{e}");
    // A global size over parameters alone (no `Modifiers`): the problem size is its
    // work-items at the `Default` configuration (block_size_x 32: 100 is not a value), said
    // in a note, so that
    // two sizes of one kernel are two problem sizes (both were 1).
    for (global, cuda_type, items) in [
        ("6400 // block_size_x", true, 6400),
        ("12800 // block_size_x", true, 12800),
        ("block_size_x * 4", false, 128),
    ] {
        let mut s = spec(args.clone(), "OpenCL");
        let ks = &mut s["KernelSpecification"];
        ks.as_object_mut().unwrap().remove("ProblemSize");
        ks["GlobalSize"] = serde_json::json!({ "X": global });
        if cuda_type {
            ks["GlobalSizeType"] = serde_json::json!("CUDA");
        }
        let b = T1Benchmark::load(&write(&d, &s)).unwrap();
        let ps: Vec<String> = b.def.problem_size.iter().map(|e| e.to_string()).collect();
        assert_eq!(ps, [items.to_string(), "1".into(), "1".into()], "{global}");
        assert!(
            b.notes
                .iter()
                .any(|n| n.contains("`GlobalSize` depends on parameters")
                    && n.contains(&format!("{items} x 1 x 1"))),
            "{:?}",
            b.notes
        );
    }
    // `ProblemSize[i]` in a `Size`: the constant global size of a file without a
    // `ProblemSize` (it was 1: a buffer of one element); none where the global size is over
    // parameters (an error, not 1).
    let sized = serde_json::json!([
        {"Name": "a", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadWrite",
         "FillType": "Constant", "FillValue": 0.0, "Size": "ProblemSize[0] * ProblemSize[1]"}
    ]);
    for (global, len) in [
        (serde_json::json!({"X": "100", "Y": "37"}), Some(3700)),
        (
            serde_json::json!({"X": "block_size_x * 4", "Y": "37"}),
            None,
        ),
    ] {
        let mut s = spec(sized.clone(), "OpenCL");
        let ks = &mut s["KernelSpecification"];
        ks.as_object_mut().unwrap().remove("ProblemSize");
        ks["GlobalSize"] = global;
        match (T1Benchmark::load(&write(&d, &s)), len) {
            (Ok(b), Some(len)) => {
                let HostArg::Buffer { bytes, .. } = &b.inputs[0] else {
                    panic!("a buffer")
                };
                assert_eq!(bytes.len(), len * 4);
            }
            (Err(e), None) => assert!(e.to_string().contains("problem size axis 0"), "{e}"),
            (r, _) => panic!("{:?}", r.map(|b| b.name)),
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// Kernel Tuner's `MemType: Constant` on a vector (its OpenCL convolution example's filter,
/// a `__constant float*` parameter) is an ordinary buffer argument in OpenCL, and a
/// constant-memory symbol set from the host in CUDA.
#[test]
fn mem_type_constant_is_a_buffer_in_opencl_and_a_symbol_in_cuda() {
    let d = dir("memtype");
    let args = serde_json::json!([
        {"Name": "a", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadWrite",
         "FillType": "Constant", "FillValue": 0.0, "Size": "ProblemSize[0]"},
        {"Name": "f", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadOnly",
         "MemType": "Constant", "FillType": "Random", "RandomSeed": 2, "Size": 9}
    ]);
    let b = T1Benchmark::load(&write(&d, &spec(args.clone(), "OpenCL"))).unwrap();
    assert_eq!(b.def.args.len(), 2);
    assert_eq!(b.def.args[1].name, "f");
    assert!(b.symbols.is_empty());
    let b = T1Benchmark::load(&write(&d, &spec(args, "CUDA"))).unwrap();
    assert_eq!(b.def.args.len(), 1);
    assert_eq!(b.symbols.len(), 1);
    assert_eq!(b.symbols[0].name, "f");
    let _ = std::fs::remove_dir_all(&d);
}

/// The names of the headers a benchmark's kernel embeds.
fn header_names(b: &T1Benchmark) -> Vec<&str> {
    b.def
        .source
        .headers
        .iter()
        .map(|h| h.name.as_str())
        .collect()
}

/// Headers are found in the `-I` directories of `CompilerOptions` too (relative to the T1
/// file, as Kernel Tuner's compiler finds them), embedded, and the `-I` options not passed on.
#[test]
fn headers_are_found_in_the_include_directories_of_compiler_options() {
    let d = dir("include");
    let args = serde_json::json!([{"Name": "n", "Type": "int32", "MemoryType": "Scalar",
                                   "FillValue": 1000}]);
    let mut s = spec(args, "OpenCL");
    s["KernelSpecification"]["KernelFile"] = serde_json::json!("inc_k.cl");
    std::fs::write(
        d.join("inc_k.cl"),
        "#include \"defs.h\"\n__kernel void k(int n) { (void)SCALE; }\n",
    )
    .unwrap();
    let p = write(&d, &s);
    let e = T1Benchmark::load(&p).unwrap_err().to_string();
    assert!(
        e.contains("`#include \"defs.h\"`: not found beside it"),
        "{e}"
    );
    std::fs::create_dir_all(d.join("inc/more")).unwrap();
    std::fs::write(
        d.join("inc/defs.h"),
        "#include \"more.h\"\n#define SCALE 2\n",
    )
    .unwrap();
    std::fs::write(d.join("inc/more/more.h"), "#define MORE 1\n").unwrap();
    for options in [
        serde_json::json!(["-I inc", "-Iinc/more", "-DX=1"]),
        serde_json::json!(["-I", "inc", "-DX=1", "-I", "inc/more"]),
    ] {
        s["KernelSpecification"]["CompilerOptions"] = options;
        let b = T1Benchmark::load(&write(&d, &s)).unwrap();
        let names = header_names(&b);
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(
            names.contains(&"defs.h") && names.contains(&"more.h"),
            "{names:?}"
        );
        assert_eq!(b.def.compiler_flags, ["-DX=1"]);
    }
    s["KernelSpecification"]["CompilerOptions"] = serde_json::json!(["-I elsewhere"]);
    let e = T1Benchmark::load(&write(&d, &s)).unwrap_err().to_string();
    assert!(
        e.contains("or in the `-I` directories [\"elsewhere\"]"),
        "{e}"
    );
    for (options, why) in [
        (serde_json::json!(["-I"]), "followed by nothing"),
        (serde_json::json!(["-I", "-DX=1"]), "followed by `-DX=1`"),
    ] {
        s["KernelSpecification"]["CompilerOptions"] = options;
        let e = T1Benchmark::load(&write(&d, &s)).unwrap_err().to_string();
        assert!(e.contains(why), "{e}");
    }
    // `#include <...>`: from the `-I` directories, embedded (the `-I` is not passed on);
    // one found in none is left to the compiler (a system header).
    std::fs::write(
        d.join("inc_k.cl"),
        "#include <defs.h>\n#include <stdint.h>\n__kernel void k(int n) { (void)SCALE; }\n",
    )
    .unwrap();
    s["KernelSpecification"]["CompilerOptions"] = serde_json::json!(["-Iinc", "-Iinc/more"]);
    let b = T1Benchmark::load(&write(&d, &s)).unwrap();
    assert_eq!(header_names(&b), ["defs.h", "more.h"]);
    assert!(b.def.compiler_flags.is_empty());
    // A header that goes up with `..` (it failed at the compile, blaming the options), and
    // one too large to read (it was "not found"): refused when the file loads, saying why.
    std::fs::write(
        d.join("inc/more/up.cl"),
        "#include \"../defs.h\"\n__kernel void k(int n) {}\n",
    )
    .unwrap();
    s["KernelSpecification"]["KernelFile"] = serde_json::json!("inc/more/up.cl");
    let e = T1Benchmark::load(&write(&d, &s)).unwrap_err().to_string();
    assert!(e.contains("must be a relative path without `..`"), "{e}");
    let big = std::fs::File::create(d.join("big.h")).unwrap();
    big.set_len(kw_core::files::caps::SOURCE + 1).unwrap();
    std::fs::write(
        d.join("big.cl"),
        "#include \"big.h\"\n__kernel void k(int n) {}\n",
    )
    .unwrap();
    s["KernelSpecification"]["KernelFile"] = serde_json::json!("big.cl");
    let e = T1Benchmark::load(&write(&d, &s)).unwrap_err().to_string();
    assert!(
        e.contains("`#include \"big.h\"`: ") && !e.contains("not found"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// The published T1 files of `../shared` load: without their kernel file the error names
/// the field; with a kernel beside them (this repository's convolution, standing in for the
/// published one), the constant-memory filter (`MemType: Constant`) becomes a symbol and the
/// images the kernel's two arguments.
#[test]
fn published_files_are_read_or_refused_precisely() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/tuning-spaces");
    if !shared.is_dir() {
        eprintln!("SKIPPED: ../shared is not beside the checkout");
        return;
    }
    let e = T1Benchmark::load(&shared.join("convolution_T1.json"))
        .unwrap_err()
        .to_string();
    // The kernel file is not shipped beside the published spec.
    assert!(
        e.contains("convolution_T1.json") && e.contains("KernelFile"),
        "{e}"
    );
    let d = dir("published");
    std::fs::copy(
        shared.join("convolution_T1.json"),
        d.join("convolution_T1.json"),
    )
    .unwrap();
    let kernel =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernels/convolution/convolution.cu");
    std::fs::copy(kernel, d.join("convolution_milo.cu")).unwrap();
    let b = T1Benchmark::load(&d.join("convolution_T1.json")).unwrap();
    let names: Vec<&str> = b.def.args.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["output_image", "input_image"]);
    assert_eq!(b.def.symbols.len(), 1);
    assert_eq!(b.def.symbols[0].name, "d_filter");
    assert_eq!(b.def.symbols[0].len, 15 * 15);
    assert_eq!(b.symbols[0].bytes.len(), 15 * 15 * 4);
    assert_eq!(b.def.backend, kw_core::device::BackendKind::Cuda);
    assert!(b.def.check(None).is_empty(), "{:?}", b.def.check(None));
    let _ = std::fs::remove_dir_all(d);
}

/// This repository's CUDA convolution benchmark (`kernels/convolution/convolution_T1.json`):
/// a `Symbol` argument, seeded data, the file's budget.
#[test]
fn the_convolution_benchmark_declares_its_constant_filter() {
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernels/convolution/convolution_T1.json");
    let b = T1Benchmark::load(&p).unwrap();
    assert_eq!(b.def.symbols[0].name, "d_filter");
    assert_eq!(b.symbols[0].bytes.len(), 225 * 4);
    assert_eq!(b.def.args.len(), 2);
    assert_eq!(b.budget.evaluations, Some(100));
    assert!(b
        .notes
        .iter()
        .any(|n| n.contains("`d_filter`: random data, seed 2")));
    assert!(b.def.check(None).is_empty(), "{:?}", b.def.check(None));
    // The same seed gives the same filter.
    assert_eq!(T1Benchmark::load(&p).unwrap().symbols, b.symbols);
}

/// Quirks of published T1 files (benchmark_hub's hotspot and gemm specs): a `Default` that is
/// not among the `Values`, a one-element list as a `Default`, fields this reader does not use,
/// and `Random` arguments without a seed (which must still differ from each other).
#[test]
fn published_quirks_are_read_with_notes() {
    let d = dir("quirks");
    let mut s = spec(
        serde_json::json!([
            {"Name": "power", "Type": "float", "MemoryType": "Vector", "FillType": "Random", "Size": 64},
            {"Name": "temp", "Type": "float", "MemoryType": "Vector", "FillType": "Random", "Size": 64}
        ]),
        "OpenCL",
    );
    s["ConfigurationSpace"]["TuningParameters"][1]["Default"] = serde_json::json!([5]);
    s["BenchmarkConfig"] = serde_json::json!({"dataSize": 4096});
    s["KernelSpecification"]["Misc"] = serde_json::json!({"jitify": true});
    s["KernelSpecification"]["Stream"] = serde_json::Value::Null;
    let p = write(&d, &s);
    let b = T1Benchmark::load(&p).unwrap();
    assert_eq!(b.def.parameters[1].default, kw_core::value::Value::Int(5));
    let notes = b.notes.join("\n");
    assert!(notes.contains("`Default` 100 of `block_size_x`"), "{notes}");
    assert!(
        notes.contains("not used by kw: BenchmarkConfig, KernelSpecification.Misc"),
        "{notes}"
    );
    assert!(notes.contains("GlobalSize"), "{notes}");
    assert!(!notes.contains("Stream"), "{notes}");
    assert!(notes.contains("`power`: random data, seed 0"), "{notes}");
    assert!(notes.contains("`temp`: random data, seed 1"), "{notes}");
    assert_ne!(b.inputs[0], b.inputs[1], "unseeded random arguments differ");
    // The space reader takes the same fallback (kw space stats): never a refusal.
    let space = kw_core::kernel_tuner::load_space_spec(&p).unwrap();
    assert_eq!(space.params[0].default, kw_core::value::Value::Int(32));
    assert_eq!(space.notes.len(), 1, "{:?}", space.notes);
    // A default equal to a value as Python compares them (1 == 1.0) is that value, in a
    // list that mixes floats and ints, either way round.
    s["ConfigurationSpace"]["TuningParameters"][0]["Values"] = serde_json::json!("[0.5, 1, 2]");
    s["ConfigurationSpace"]["TuningParameters"][0]["Default"] = serde_json::json!(1);
    s["ConfigurationSpace"]["TuningParameters"][1]["Values"] = serde_json::json!("[3, 5, 7]");
    s["ConfigurationSpace"]["TuningParameters"][1]["Default"] = serde_json::json!(5.0);
    let p = write(&d, &s);
    let space = kw_core::kernel_tuner::load_space_spec(&p).unwrap();
    assert_eq!(space.params[0].default, kw_core::value::Value::Int(1));
    assert_eq!(space.params[1].default, kw_core::value::Value::Int(5));
    // The one note: 0.5 is no `int`, the parameter's Type.
    assert_eq!(space.notes.len(), 1, "{:?}", space.notes);
    assert!(
        space.notes[0].contains("of Type `int` but lists 0.5"),
        "{:?}",
        space.notes
    );
    let _ = std::fs::remove_dir_all(d);
}

/// A condition over the problem size (`ProblemSize[i]`, a kw extension): a benchmark checks
/// it per launch; the space alone (`kw space stats`, `kw simulate --t1`) takes it at the
/// file's own `ProblemSize`, and leaves it out with a note when the file gives none.
#[test]
fn conditions_over_the_problem_size() {
    let d = dir("problem-size");
    let mut s = spec(serde_json::json!([]), "OpenCL");
    s["ConfigurationSpace"]["Conditions"] = serde_json::json!([
        {"Expression": "ProblemSize[0] % block_size_x == 0", "Parameters": ["block_size_x"]},
        {"Expression": "filter < 7", "Parameters": ["filter"]}
    ]);
    // 1000 is a multiple of neither 32 nor 64; 960 of both; 1024 of both, 992 of 32 only.
    for (size, valid) in [(1000, 0), (960, 4), (992, 2)] {
        s["KernelSpecification"]["ProblemSize"] = serde_json::json!([size]);
        let p = write(&d, &s);
        let spec = kw_core::kernel_tuner::load_space_spec(&p).unwrap();
        let space =
            kw_core::space::TuningSpace::new(spec.params.clone(), spec.restrictions.clone())
                .unwrap();
        assert_eq!(space.len(), valid, "ProblemSize {size}");
        let bench = T1Benchmark::load(&p).unwrap();
        assert!(
            bench
                .def
                .restrictions
                .iter()
                .any(|r| r.to_string().contains("problem_size[0]")),
            "the benchmark checks it per launch"
        );
    }
    s["KernelSpecification"]
        .as_object_mut()
        .unwrap()
        .remove("ProblemSize");
    let p = write(&d, &s);
    let spec = kw_core::kernel_tuner::T1Spec::load(&p).unwrap();
    assert_eq!(spec.restrictions.len(), 1, "only `filter < 7` is kept");
    assert!(
        spec.notes.iter().any(|n| n.contains("left out")),
        "{:?}",
        spec.notes
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// The T1 file's conditions as restrictions of other results (`kw simulate --t1` of a cache
/// file): those over the problem size are taken at the results' size, not the file's.
#[test]
fn restrictions_over_the_problem_size_are_taken_at_the_results_size() {
    use kw_core::kernel_tuner::load_restrictions;
    let d = dir("restrictions-size");
    let mut s = spec(serde_json::json!([]), "OpenCL");
    s["ConfigurationSpace"]["Conditions"] = serde_json::json!([
        {"Expression": "ProblemSize[0] % block_size_x == 0", "Parameters": ["block_size_x"]},
        {"Expression": "filter < 7", "Parameters": ["filter"]}
    ]);
    s["KernelSpecification"]["ProblemSize"] = serde_json::json!([1000]);
    let p = write(&d, &s);
    let params = kw_core::kernel_tuner::load_space_spec(&p).unwrap().params;
    let valid = |r: &kw_core::kernel_tuner::Restrictions| {
        kw_core::space::TuningSpace::new(params.clone(), r.exprs.clone())
            .unwrap()
            .len()
    };
    // The file's own size (1000): no block size divides it.
    let own = load_restrictions(&p, None).unwrap();
    assert_eq!(valid(&own), 0);
    assert!(!own.notes.iter().any(|n| n.contains("left out")));
    // Results at 960 (a multiple of 32 and 64): all 4 configurations; at 992, the 2 of 32.
    assert_eq!(valid(&load_restrictions(&p, Some(&[960])).unwrap()), 4);
    assert_eq!(valid(&load_restrictions(&p, Some(&[992, 5])).unwrap()), 2);
    // Results whose size lacks the axis: left out, said in a note.
    let none = load_restrictions(&p, Some(&[])).unwrap();
    assert_eq!(valid(&none), 4);
    assert!(
        none.notes.iter().any(|n| n.contains("left out")),
        "{:?}",
        none.notes
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// KTT's T1 files (HiPerCoRe/KTT `Examples/CoulombSum2d/CoulombSum2dScript.json`): no
/// `LocalSize`, the launch built from `GlobalSize` and `Modifiers`; `CompilerOptions` as one
/// string; KTT's type names (`Float`, `UnsignedInt`).
#[test]
fn ktt_modifiers_compiler_option_strings_and_type_names() {
    use kw_core::config::Config;
    use kw_core::value::Value;
    let d = dir("ktt");
    std::fs::write(
        d.join("c.cl"),
        "__kernel void c(__global const float* atoms, __global float* grid, int n) {}\n",
    )
    .unwrap();
    let file = |modifiers: serde_json::Value, extra: serde_json::Value| {
        let mut ks = serde_json::json!({
            "Language": "OpenCL", "KernelName": "c", "KernelFile": "c.cl",
            "CompilerOptions": "-cl-fast-relaxed-math  -DKTT=1",
            "GlobalSize": {"X": 512, "Y": 512, "Z": 1},
            "Modifiers": modifiers,
            "Arguments": [
                {"Type": "Float", "Size": 64, "FillType": "Random", "FillValue": 1.0,
                 "AccessType": "ReadOnly", "MemoryType": "Vector"},
                {"Type": "float", "Size": 262144, "FillType": "Constant", "FillValue": 0.0,
                 "AccessType": "WriteOnly", "MemoryType": "Vector"},
                {"Type": "Int", "FillValue": 16, "MemoryType": "Scalar"}
            ]
        });
        for (k, v) in extra.as_object().unwrap() {
            ks[k] = v.clone();
        }
        let spec = serde_json::json!({
            "ConfigurationSpace": {
                "TuningParameters": [
                    {"Name": "WORK_GROUP_SIZE_X", "Type": "UnsignedInt", "Values": "[16, 32]", "Default": 16},
                    {"Name": "WORK_GROUP_SIZE_Y", "Type": "UnsignedInt", "Values": "[1, 2, 4]", "Default": 1},
                    {"Name": "OUTER_UNROLL_FACTOR", "Type": "UnsignedInt", "Values": "[1, 2, 4, 8]", "Default": 1}
                ],
                "Conditions": []
            },
            "KernelSpecification": ks
        });
        let p = d.join("c_T1.json");
        std::fs::write(&p, serde_json::to_string(&spec).unwrap()).unwrap();
        T1Benchmark::load(&p)
    };
    let modifiers = serde_json::json!([
        {"Type": "Global", "Dimension": "X", "Parameter": "OUTER_UNROLL_FACTOR", "Action": "Divide"},
        {"Type": "Local", "Dimension": "X", "Parameter": "WORK_GROUP_SIZE_X", "Action": "Multiply"},
        {"Type": "Local", "Dimension": "Y", "Parameter": "WORK_GROUP_SIZE_Y", "Action": "Multiply"}
    ]);
    let b = file(modifiers.clone(), serde_json::json!({})).unwrap();
    assert!(
        !b.notes.iter().any(|n| n.contains("Modifiers")),
        "{:?}",
        b.notes
    );
    let config = |x: i64, y: i64, u: i64| {
        Config(vec![
            ("WORK_GROUP_SIZE_X".into(), Value::Int(x)),
            ("WORK_GROUP_SIZE_Y".into(), Value::Int(y)),
            ("OUTER_UNROLL_FACTOR".into(), Value::Int(u)),
        ])
    };
    // Global 512 / 4 = 128 work-items in X over 32-wide groups: 4 groups; 512 / 2 in Y.
    let g = b
        .def
        .geometry(&config(32, 2, 4), &[512, 512, 1], None, None)
        .unwrap();
    assert_eq!(g.block, [32, 2, 1]);
    assert_eq!(g.grid, [4, 256, 1]);
    let g = b
        .def
        .geometry(&config(16, 4, 1), &[512, 512, 1], None, None)
        .unwrap();
    assert_eq!(g.block, [16, 4, 1]);
    assert_eq!(g.grid, [32, 128, 1]);
    // The problem is the global size before the modifiers: two grids of one kernel are two
    // problem sizes (two wisdom records), not both 1.
    let ps: Vec<String> = b.def.problem_size.iter().map(|e| e.to_string()).collect();
    assert_eq!(ps, ["512", "512", "1"]);
    // One string of options: split at spaces.
    let flags = &b.def.compiler_flags;
    assert!(
        flags.iter().any(|f| f == "-cl-fast-relaxed-math"),
        "{flags:?}"
    );
    assert!(flags.iter().any(|f| f == "-DKTT=1"), "{flags:?}");
    // KTT's names for the argument types.
    let HostArg::Buffer { bytes, .. } = &b.inputs[0] else {
        panic!("a buffer")
    };
    assert_eq!(bytes.len(), 64 * 4);

    // Modifiers that cannot be applied are errors naming the modifier.
    for (m, why) in [
        (
            serde_json::json!([{"Type": "Global", "Dimension": "X", "Parameter": "NOPE", "Action": "Divide"}]),
            "`KernelSpecification.Modifiers` #1: `Parameter` \"NOPE\" is not one of the TuningParameters",
        ),
        (
            serde_json::json!([{"Type": "Local", "Dimension": "W", "Parameter": "WORK_GROUP_SIZE_X", "Action": "Multiply"}]),
            "`KernelSpecification.Modifiers` #1: `Dimension` \"W\" is not X, Y or Z",
        ),
        (
            serde_json::json!([{"Type": "Local", "Dimension": "X", "Parameter": "WORK_GROUP_SIZE_X", "Action": "Multiply"},
                               {"Type": "Local", "Dimension": "X", "Parameter": "WORK_GROUP_SIZE_X", "Action": "Power"}]),
            "`KernelSpecification.Modifiers` #2: `Action` \"Power\" is not supported",
        ),
        (
            serde_json::json!({"Type": "Local"}),
            "`KernelSpecification.Modifiers` must be a list",
        ),
    ] {
        let e = file(m, serde_json::json!({})).unwrap_err().to_string();
        assert!(e.contains(why), "{e}");
        assert!(e.contains("c_T1.json"), "{e}");
    }
    // A script is refused even beside a parameter (this reader cannot run it).
    let e = file(
        serde_json::json!([{"Type": "Local", "Dimension": "X", "Parameter": "WORK_GROUP_SIZE_X",
                            "Action": "Multiply", "Script": "WORK_GROUP_SIZE_X * 2"}]),
        serde_json::json!({}),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("#1: a modifier's `Script` is not supported"),
        "{e}"
    );
    // Keys a modifier does not have are said, as other unused fields are.
    let b = file(
        serde_json::json!([{"Type": "Local", "Dimension": "X", "Parameter": "WORK_GROUP_SIZE_X",
                            "Action": "Multiply", "Foo": 1}]),
        serde_json::json!({}),
    )
    .unwrap();
    assert!(
        b.notes
            .iter()
            .any(|n| n.contains("not used by kw: KernelSpecification.Modifiers #1.Foo")),
        "{:?}",
        b.notes
    );
    // No modifiers at all, and no `LocalSize`: KTT's block of 1, not `block_size_x`.
    let b = file(serde_json::json!([]), serde_json::json!({})).unwrap();
    let g = b
        .def
        .geometry(&config(16, 1, 1), &[512, 512, 1], None, None)
        .unwrap();
    assert_eq!(g.block, [1, 1, 1]);
    assert_eq!(g.grid, [512, 512, 1]);
    // A Global modifier with a ProblemSize (the grid then comes from GridDiv*): refused.
    let e = file(modifiers, serde_json::json!({"ProblemSize": [512, 512]}))
        .unwrap_err()
        .to_string();
    assert!(e.contains("give a `GlobalSize` instead"), "{e}");
    // A Kernel Tuner file without `LocalSize` or `block_size_x`: Kernel Tuner's 256 threads,
    // said in a note.
    let b = file(serde_json::Value::Null, serde_json::json!({})).unwrap();
    let g = b
        .def
        .geometry(&config(16, 1, 1), &[512, 512, 1], None, None)
        .unwrap();
    assert_eq!(g.block, [256, 1, 1]);
    assert!(
        b.notes.iter().any(|n| n.contains("blocks of 256 threads")),
        "{:?}",
        b.notes
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// KTT's argument conventions: a reference's `ValidationMethod` / `ValidationThreshold` is
/// the output's tolerance; `Random` with a `FillValue` draws from 0 to it (KTT's bound);
/// `Ascending` counts up from `FillValue`; fields kw does not read (`Order`, `TypeSize`) are
/// named in the "not used" note.
#[test]
fn ktt_validation_thresholds_random_bounds_and_unused_argument_fields() {
    use kw_core::tolerance::Tolerance;
    let d = dir("ktt-args");
    let with = |reference: serde_json::Value| {
        let args = serde_json::json!([
            {"Name": "a", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadWrite",
             "FillType": "Random", "FillValue": 20.0, "RandomSeed": 5, "Size": 1000,
             "Order": 0, "TypeSize": 4},
            {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "FillValue": 1000, "Order": 1},
            {"Name": "b", "Type": "int32", "MemoryType": "Vector", "AccessType": "ReadOnly",
             "FillType": "Ascending", "FillValue": 7, "Size": 10, "Order": 2}
        ]);
        let mut s = spec(args, "OpenCL");
        s["KernelSpecification"]["ReferenceArguments"] = serde_json::json!([reference]);
        T1Benchmark::load(&write(&d, &s))
    };
    let b = with(
        serde_json::json!({"Name": "r", "TargetName": "a", "FillType": "Constant",
        "FillValue": 1.0, "ValidationMethod": "SideBySideComparison",
        "ValidationThreshold": 0.001, "Type": "float"}),
    )
    .unwrap();
    assert_eq!(
        b.def.args[0].tolerance,
        Some(Tolerance::new(0.0, 0.001).unwrap())
    );
    // Random from 0 to 20 (positions, masses: KTT's data is positive).
    let HostArg::Buffer { bytes, .. } = &b.inputs[0] else {
        panic!("a buffer")
    };
    let values: Vec<f32> = bytes
        .chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert!(
        values.iter().all(|&v| (0.0..20.0).contains(&v)),
        "{values:?}"
    );
    assert!(values.iter().any(|&v| v > 10.0), "spread over the range");
    // Ascending from 7.
    let HostArg::Buffer { bytes, .. } = &b.inputs[2] else {
        panic!("a buffer")
    };
    let ints: Vec<i32> = bytes
        .chunks(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(ints, (7..17).collect::<Vec<i32>>());
    let notes = b.notes.join("\n");
    assert!(
        notes.contains("KernelSpecification.Arguments[].Order (3x)"),
        "{notes}"
    );
    assert!(
        notes.contains("KernelSpecification.Arguments[].TypeSize (1x)"),
        "{notes}"
    );
    assert!(
        notes.contains("KernelSpecification.ReferenceArguments[].Type (1x)"),
        "{notes}"
    );
    assert!(notes.contains("drawn evenly from 0 to 20"), "{notes}");
    // A relative comparison: kw's relative tolerance, with a note saying how it differs.
    let b = with(
        serde_json::json!({"Name": "r", "TargetName": "a", "FillType": "Constant",
        "FillValue": 1.0, "ValidationMethod": "SideBySideRelativeComparison",
        "ValidationThreshold": 0.01}),
    )
    .unwrap();
    assert_eq!(
        b.def.args[0].tolerance,
        Some(Tolerance::new(0.01, 0.0).unwrap())
    );
    assert!(b.notes.iter().any(|n| n.contains("not of each element's")));
    // Errors name the reference and the field.
    for (reference, why) in [
        (
            serde_json::json!({"Name": "r", "TargetName": "a", "ValidationMethod": "Eyeball",
                               "ValidationThreshold": 0.1}),
            "`ValidationMethod` \"Eyeball\" is not supported",
        ),
        (
            serde_json::json!({"Name": "r", "TargetName": "a", "ValidationThreshold": -1}),
            "`ValidationThreshold` -1 is not a finite number, 0 or more",
        ),
        (
            serde_json::json!({"Name": "r", "TargetName": "a",
                               "ValidationMethod": "SideBySideComparison"}),
            "without a `ValidationThreshold`",
        ),
    ] {
        let e = with(reference).unwrap_err().to_string();
        assert!(e.contains(why), "{e}");
        assert!(e.contains("`ReferenceArguments` #1 `r`"), "{e}");
    }
    // A threshold written as a string is read as a `FillValue` is.
    let b = with(
        serde_json::json!({"Name": "r", "TargetName": "a", "FillType": "Constant",
                                    "FillValue": 1.0, "ValidationThreshold": "0.5"}),
    )
    .unwrap();
    assert_eq!(
        b.def.args[0].tolerance,
        Some(Tolerance::new(0.0, 0.5).unwrap())
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// `Random` with a bound on integer types draws whole numbers from 0 to the bound, both
/// included (a bound of 1 gave only zeros); a bound a type cannot hold is refused naming the
/// bound (it named a value drawn, and depended on the seed); a threshold on an integer output
/// is said to be unused; `Arguments` are numbered from 1; float `Ascending` past 2^24 is noted.
#[test]
fn random_bounds_on_integers_and_integer_thresholds() {
    let d = dir("ktt-int");
    let load = |a: serde_json::Value, reference: Option<serde_json::Value>| {
        let args = serde_json::json!([
            {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "FillValue": 1000},
            a
        ]);
        let mut s = spec(args, "OpenCL");
        if let Some(r) = reference {
            s["KernelSpecification"]["ReferenceArguments"] = serde_json::json!([r]);
        }
        T1Benchmark::load(&write(&d, &s))
    };
    let ints = |b: &T1Benchmark| -> Vec<i32> {
        let HostArg::Buffer { bytes, .. } = &b.inputs[1] else {
            panic!("a buffer")
        };
        bytes
            .chunks(4)
            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    };
    let random = |ty: &str, bound: serde_json::Value| {
        serde_json::json!({"Name": "x", "Type": ty, "MemoryType": "Vector",
            "AccessType": "ReadWrite", "FillType": "Random", "FillValue": bound, "Size": 200})
    };
    let b = load(random("int32", serde_json::json!(1)), None).unwrap();
    let v = ints(&b);
    assert!(v.iter().all(|&x| x == 0 || x == 1), "{v:?}");
    assert!(v.contains(&0) && v.contains(&1), "{v:?}");
    let b = load(random("int32", serde_json::json!(-3)), None).unwrap();
    let v = ints(&b);
    assert!(v.iter().all(|&x| (-3..=0).contains(&x)), "{v:?}");
    assert!(v.contains(&-3), "{v:?}");
    for (ty, bound, why) in [
        (
            "int8",
            serde_json::json!(1000),
            "`FillValue` bound 1000: values up to it do not fit i8",
        ),
        (
            "uint32",
            serde_json::json!(-5),
            "`FillValue` bound -5: values up to it do not fit u32",
        ),
        (
            "int64",
            serde_json::json!(9.3e18),
            "`FillValue` bound 9.3e18",
        ),
        ("float", serde_json::json!(1e300), "`FillValue` bound 1e300"),
    ] {
        let e = load(random(ty, bound), None).unwrap_err().to_string();
        assert!(e.contains(why), "{e}");
        assert!(e.contains("`Arguments` #2 `x`"), "{e}");
    }
    // A threshold on an integer output: integers compare exactly, said in a note.
    let out = serde_json::json!({"Name": "x", "Type": "int32", "MemoryType": "Vector",
        "AccessType": "ReadWrite", "FillType": "Constant", "FillValue": 0, "Size": 10});
    let b = load(
        out,
        Some(
            serde_json::json!({"Name": "r", "TargetName": "x", "FillType": "Constant",
                                "FillValue": 3, "ValidationThreshold": 2}),
        ),
    )
    .unwrap();
    assert_eq!(b.def.args[1].tolerance, None);
    assert!(
        b.notes
            .iter()
            .any(|n| n.contains("`ValidationThreshold` is not used") && n.contains("exactly")),
        "{:?}",
        b.notes
    );
    // Float `Ascending` past 2^24 repeats values: noted.
    let asc = serde_json::json!({"Name": "x", "Type": "float", "MemoryType": "Vector",
        "AccessType": "ReadWrite", "FillType": "Ascending", "FillValue": 16777200, "Size": 100});
    let b = load(asc, None).unwrap();
    assert!(
        b.notes.iter().any(|n| n.contains("only up to 2^24")),
        "{:?}",
        b.notes
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// A grid a modifier makes negative says so (it read "expected 0 ..= 2^32-1").
#[test]
fn a_negative_grid_is_said_to_be_negative() {
    let d = dir("neg-grid");
    let mut s = spec(serde_json::json!([]), "OpenCL");
    s["ConfigurationSpace"]["TuningParameters"] = serde_json::json!([
        {"Name": "WG", "Type": "int", "Values": "[1, 200]", "Default": 1}
    ]);
    let ks = s["KernelSpecification"].as_object_mut().unwrap();
    ks.remove("ProblemSize");
    ks.insert("GlobalSize".into(), serde_json::json!({"X": 100}));
    ks.insert("LocalSize".into(), serde_json::json!({"X": 1}));
    ks.insert(
        "Modifiers".into(),
        serde_json::json!([{"Type": "Global", "Dimension": "X", "Parameter": "WG",
                            "Action": "Subtract"}]),
    );
    let b = T1Benchmark::load(&write(&d, &s)).unwrap();
    use kw_core::{config::Config, value::Value};
    let config = Config(vec![("WG".into(), Value::Int(200))]);
    let e = b
        .def
        .geometry(&config, &[100, 1, 1], None, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("is -100: negative"), "{e}");
    let _ = std::fs::remove_dir_all(&d);
}
