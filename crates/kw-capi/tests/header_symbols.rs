//! The hand-written C header and the library agree: every function kernel_wisdom.h declares
//! is defined by the crate (`#[no_mangle] extern "C"`) and exported by the built
//! `libkernel_wisdom_c.so`, and the crate defines nothing the header leaves out. The enum
//! values of the header match the library's.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `kw_...` names of the functions the header declares (not its `static inline` helpers).
fn header_functions() -> BTreeSet<String> {
    let text = std::fs::read_to_string(crate_dir().join("include/kernel_wisdom.h")).unwrap();
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.starts_with("static") || line.starts_with(' ') || line.starts_with('#') {
            continue;
        }
        if let Some(at) = line.find(" kw_").or_else(|| line.find("* kw_")) {
            let rest = &line[at..].trim_start_matches([' ', '*']);
            if let Some(paren) = rest.find('(') {
                out.insert(rest[..paren].to_string());
            }
        }
    }
    out
}

/// `kw_...` names of the crate's `extern "C"` functions.
fn rust_functions() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for entry in std::fs::read_dir(crate_dir().join("src")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for line in text.lines() {
            let l = line.trim_start();
            if let Some(rest) = l
                .strip_prefix("pub unsafe extern \"C\" fn ")
                .or_else(|| l.strip_prefix("pub extern \"C\" fn "))
            {
                out.insert(rest[..rest.find('(').unwrap()].to_string());
            }
        }
    }
    out
}

fn built_library() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let lib = exe.parent()?.join("libkernel_wisdom_c.so");
    lib.exists().then_some(lib)
}

fn exported(lib: &Path) -> Option<BTreeSet<String>> {
    let out = std::process::Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(lib)
        .output()
        .ok()?;
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_whitespace().nth(2))
            .filter(|s| s.starts_with("kw_"))
            .map(str::to_string)
            .collect(),
    )
}

#[test]
fn header_declares_exactly_what_the_library_defines() {
    let header = header_functions();
    let rust = rust_functions();
    assert!(header.len() >= 35, "{header:?}");
    assert_eq!(header, rust, "kernel_wisdom.h and src/*.rs disagree");
    match built_library().and_then(|l| exported(&l)) {
        Some(symbols) => {
            let missing: Vec<_> = header.difference(&symbols).collect();
            assert!(missing.is_empty(), "not exported by the .so: {missing:?}");
        }
        None => {
            eprintln!("SKIPPED: export check (no libkernel_wisdom_c.so next to the tests or no nm)")
        }
    }
}

#[test]
fn header_constants_match_the_library() {
    use kernel_wisdom_c::status::ALL;
    let text = std::fs::read_to_string(crate_dir().join("include/kernel_wisdom.h")).unwrap();
    for s in ALL {
        let name = s.name().to_str().unwrap();
        let decl = format!("{name} = {},", s as i32);
        let last = format!("{name} = {}", s as i32);
        assert!(
            text.contains(&decl) || text.contains(&last),
            "kernel_wisdom.h lacks `{decl}`"
        );
    }
    for (i, t) in kernel_wisdom_c::types::TYPES.iter().enumerate() {
        let name = format!("KW_{}", t.to_string().to_uppercase());
        assert!(
            text.contains(&format!("{name} = {i}")),
            "kernel_wisdom.h lacks {name} = {i}"
        );
    }
    assert!(
        text.contains("KW_INPUT = 0")
            && text.contains("KW_OUTPUT = 1")
            && text.contains("KW_INOUT = 2")
    );
    assert!(text.contains("KW_BACKEND_CUDA = 1") && text.contains("KW_BACKEND_OPENCL = 2"));
    assert!(text.contains("#define KW_ARG_BUFFER 0u") && text.contains("#define KW_ARG_SCALAR 1u"));
}
