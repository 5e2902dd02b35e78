//! C and C++ applications on kernel-wisdom's C API, on PoCL (no GPU): the library this
//! build produced is installed to a temporary prefix by `tools/install-capi.sh`; the
//! programs of `tests/c/` are built through the installed CMake package (C with
//! `-std=c99 -Wall -Wextra -Werror -pedantic`, C++ with `-std=c++17 -Wall -Wextra -Werror`)
//! and once through pkg-config. Each application creates its own OpenCL context, queue and
//! buffers, launches the tunable `kernels/vector_add.cl` and checks it against a CPU
//! reference; with `KW_CAPTURE` the capture exists after it exits (no flush call); `kw tune`
//! tunes it; the next run, with `KW_LOG=debug`, selects the tuned configuration (and so does
//! one given the wisdom directory through `kw_kernel_create`). A C program
//! feeds the API bad input (null, stale and wrong-kind handles, wrong argument count and
//! types, bad expression text) and must get an error with a message for each.
//!
//! Prints `SKIPPED: ...` when cmake, a C or C++ compiler or the PoCL platform is missing
//! (`tools/setup.sh` installs them).

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

const POCL: &str = "Portable Computing Language";
/// Exit status of the programs when the PoCL platform is missing.
const NO_PLATFORM: i32 = 77;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Where this test build's library is: `target/<profile>/deps`, next to the test binary
/// (`cargo test` builds libkernel_wisdom_c.{so,a} there and copies them up to
/// `target/<profile>` only on `cargo build`).
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent().expect("target/<profile>/deps").to_path_buf()
}

/// `target/<profile>`, where cargo puts binaries (`kw`).
fn build_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>")
        .to_path_buf()
}

fn have(tool: &str) -> bool {
    kw_core::child_env::command(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn pocl_present() -> bool {
    opencl3::platform::get_platforms()
        .is_ok_and(|ps| ps.iter().any(|p| p.name().is_ok_and(|n| n.contains(POCL))))
}

/// Why the tests cannot run here, if they cannot.
fn missing() -> Option<String> {
    for tool in ["cmake", "cc", "c++"] {
        if !have(tool) {
            return Some(format!("no `{tool}` (tools/setup.sh installs it)"));
        }
    }
    if !pocl_present() {
        return Some("no PoCL OpenCL platform".into());
    }
    if !lib_dir().join("libkernel_wisdom_c.so").exists() {
        return Some(format!(
            "no libkernel_wisdom_c.so in {}",
            lib_dir().display()
        ));
    }
    None
}

fn check(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The install prefix and the CMake build directory, made once for all tests.
struct Built {
    root: PathBuf,
    prefix: PathBuf,
    bin: PathBuf,
}

fn built() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| {
        // Under the target directory (the install holds a copy of the ~100 MB debug static
        // library): replaced by the next run, removed by `cargo clean`.
        let root = build_dir().join("kw-capi-test");
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let prefix = root.join("prefix");
        let out = kw_core::child_env::command(repo().join("tools/install-capi.sh"))
            .arg(&prefix)
            .arg("--from")
            .arg(lib_dir())
            .output()
            .expect("running tools/install-capi.sh");
        check(&out, "tools/install-capi.sh");
        let bin = root.join("build");
        let out = kw_core::child_env::command("cmake")
            .arg("-S")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c"))
            .arg("-B")
            .arg(&bin)
            .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display()))
            .arg("-DCMAKE_BUILD_TYPE=Debug")
            .output()
            .expect("running cmake");
        check(&out, "cmake configure");
        let out = kw_core::child_env::command("cmake")
            .arg("--build")
            .arg(&bin)
            .args(["-j", "2"])
            .output()
            .expect("running cmake --build");
        check(
            &out,
            "cmake --build (C with -std=c99 -pedantic -Werror, C++17 -Werror)",
        );
        Built { root, prefix, bin }
    })
}

/// The `kw` binary: `KW_BIN`, else the one next to this build, built when missing.
fn kw_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("KW_BIN") {
        return PathBuf::from(p);
    }
    let kw = build_dir().join("kw");
    if !kw.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let out = kw_core::child_env::command(cargo)
            .current_dir(repo())
            .args(["build", "-p", "kw-cli", "--bin", "kw"])
            .output()
            .expect("building kw");
        check(&out, "cargo build -p kw-cli");
    }
    kw
}

/// Runs a test program in `dir` with a clean kernel-wisdom environment plus `vars`.
fn run(program: &Path, args: &[&str], dir: &Path, vars: &[(&str, &Path)]) -> Output {
    let mut cmd = kw_core::child_env::command(program);
    cmd.args(args)
        .current_dir(dir)
        .env("KW_TEST_PLATFORM", POCL);
    for v in [
        "KW_CAPTURE",
        "KW_CAPTURE_DIR",
        "KW_LOG",
        "KW_WISDOM_PATH",
        "KW_DEVICE",
    ] {
        cmd.env_remove(v);
    }
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.output().expect("running a test program")
}

/// `key=value` of the program's `REPORT` line.
fn report(out: &Output, key: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("REPORT "))
        .unwrap_or_else(|| panic!("no REPORT in:\n{stdout}"));
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key} in {line}"))
        .to_string()
}

fn captures(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.map(|e| e.expect("entry").path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

/// Plain run, capture run, `kw tune`, selection run, for one application binary.
fn capture_tune_select(program: &str) {
    if let Some(why) = missing() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let b = built();
    let exe = b.bin.join(program);
    let kernel = repo().join("kernels/vector_add.cl");
    let kernel = kernel.to_str().unwrap();
    let dir = b.root.join(format!("run-{program}"));
    std::fs::create_dir_all(&dir).unwrap();
    let caps = dir.join("caps");
    let tuned = dir.join("tuned");
    let n = "5000";

    // 1. Plain: right results with the default configuration.
    let out = run(&exe, &[kernel, n], &dir, &[]);
    if out.status.code() == Some(NO_PLATFORM) {
        eprintln!("SKIPPED: {program} found no PoCL platform");
        return;
    }
    check(&out, program);
    assert_eq!(report(&out, "wrong"), "0");
    let default = report(&out, "config");
    assert_eq!(
        default,
        "block_size_x=64,elems_per_thread=1,strided=1,unroll=0"
    );

    // 2. Capture: the file exists after the program exits; it has no flush call.
    let out = run(
        &exe,
        &[kernel, n],
        &dir,
        &[
            ("KW_CAPTURE", Path::new("vector_add")),
            ("KW_CAPTURE_DIR", &caps),
        ],
    );
    check(&out, program);
    let files = captures(&caps);
    assert_eq!(
        files.len(),
        1,
        "{files:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("capture written:"));

    // 3. Tune it.
    let out = kw_core::child_env::command(kw_bin())
        .current_dir(&dir)
        .arg("tune")
        .arg(&files[0])
        .args(["--strategy", "random", "--budget", "8", "--samples", "3"])
        .arg("--wisdom-dir")
        .arg(&tuned)
        .output()
        .expect("running kw tune");
    check(&out, "kw tune");
    let wisdom: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(tuned.join("vector_add.json")).expect("wisdom written"),
    )
    .unwrap();
    let best = &wisdom["records"][0]["config"];

    // 4. The application again, with that wisdom: the tuned record is selected.
    let out = run(
        &exe,
        &[kernel, n],
        &dir,
        &[("KW_WISDOM_PATH", &tuned), ("KW_LOG", Path::new("debug"))],
    );
    check(&out, program);
    assert_eq!(report(&out, "wrong"), "0");
    let chosen = report(&out, "config");
    for (name, value) in best.as_object().expect("a configuration") {
        assert!(
            chosen.contains(&format!("{name}={value}")),
            "{program} chose {chosen}, the tuned record is {best}"
        );
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("using record #1 of") && stderr.contains("vector_add.json"),
        "KW_LOG=debug does not show the selection:\n{stderr}"
    );

    // 5. The wisdom directory given to kw_kernel_create instead of KW_WISDOM_PATH.
    let out = run(&exe, &[kernel, n, tuned.to_str().unwrap()], &dir, &[]);
    check(&out, program);
    assert_eq!(report(&out, "wrong"), "0");
    assert_eq!(
        report(&out, "config"),
        chosen,
        "with the wisdom directory as an argument"
    );
    println!("{program}: tuned and selected {chosen} (default {default})");
}

#[test]
fn c_application_capture_tune_select() {
    capture_tune_select("vector_add_c");
}

#[test]
fn cpp_application_capture_tune_select() {
    capture_tune_select("vector_add_cpp");
    if missing().is_none() {
        // The C++ program also checks that a wrongly typed scalar is an error.
        let b = built();
        let kernel = repo().join("kernels/vector_add.cl");
        let out = run(
            &b.bin.join("vector_add_cpp"),
            &[kernel.to_str().unwrap(), "300"],
            &b.root,
            &[],
        );
        check(&out, "vector_add_cpp");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("WRONG_TYPE KW_ERROR_ARGUMENTS: kernel `vector_add`: argument 3 `n`: expected scalar i32, got scalar f64"),
            "{stdout}"
        );
        assert!(
            stdout.contains(
                "HOST_POINTER KW_ERROR_ARGUMENTS: a T* argument is taken as a CUDA device pointer"
            ),
            "{stdout}"
        );
        assert!(
            stdout.contains(
                "INFINITY KW_ERROR_INVALID: kw::Expr: an infinity is not a number of the expression language"
            ),
            "{stdout}"
        );
    }
}

#[test]
fn c_bad_input_is_an_error_never_a_crash() {
    if let Some(why) = missing() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let b = built();
    let out = run(&b.bin.join("bad_input"), &[], &b.root, &[]);
    check(&out, "bad_input");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("0 failure(s)"), "{stdout}");
    assert!(
        stdout.lines().filter(|l| l.starts_with("ok ")).count() >= 40,
        "{stdout}"
    );
}

#[test]
fn static_library_and_pkg_config() {
    if let Some(why) = missing() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let b = built();
    let kernel = repo().join("kernels/vector_add.cl");
    let kernel = kernel.to_str().unwrap();
    // The C program linked against libkernel_wisdom.a.
    let out = run(
        &b.bin.join("vector_add_c_static"),
        &[kernel, "777"],
        &b.root,
        &[],
    );
    check(&out, "vector_add_c_static");
    assert_eq!(report(&out, "wrong"), "0");

    if !have("pkg-config") {
        eprintln!("SKIPPED: pkg-config part (no pkg-config)");
        return;
    }
    let pc_path = b.prefix.join("lib/pkgconfig");
    let flags = kw_core::child_env::command("pkg-config")
        .args(["--cflags", "--libs", "kernel_wisdom"])
        .env("PKG_CONFIG_PATH", &pc_path)
        .output()
        .expect("running pkg-config");
    check(&flags, "pkg-config --cflags --libs kernel_wisdom");
    let flags = String::from_utf8_lossy(&flags.stdout).into_owned();
    assert!(flags.contains("-lkernel_wisdom"), "{flags}");
    let exe = b.root.join("vector_add_pkg_config");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/vector_add.c");
    let out = kw_core::child_env::command("cc")
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-o"])
        .arg(&exe)
        .arg(&src)
        .args(flags.split_whitespace())
        .arg(format!("-Wl,-rpath,{}", b.prefix.join("lib").display()))
        .arg("-lOpenCL")
        .output()
        .expect("running cc");
    check(&out, "cc with pkg-config flags");
    let out = run(&exe, &[kernel, "1234"], &b.root, &[]);
    check(&out, "vector_add_pkg_config");
    assert_eq!(report(&out, "wrong"), "0");
    let needed = kw_core::child_env::command("readelf")
        .arg("-d")
        .arg(&exe)
        .output();
    if let Ok(o) = needed {
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.contains("libkernel_wisdom.so.0"), "{text}");
    }
}

/// The library's routines (`kw_library_*`) from C (`tests/c/library.c`) and through
/// `kw::Library` in C++ (`tests/c/library.cpp`): every routine on the application's own
/// OpenCL buffers, checked against values known in closed form; wrong lengths, types and
/// handles each return their status with a message naming the routine (C++: throw
/// `kw::error`). The programs print one `ok` or `FAIL` line per check.
fn library_program(program: &str, min_checks: usize, routines: &[&str]) {
    if let Some(why) = missing() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let b = built();
    let dir = b.root.join(format!("run-{program}"));
    std::fs::create_dir_all(&dir).unwrap();
    let out = run(&b.bin.join(program), &[], &dir, &[]);
    if out.status.code() == Some(NO_PLATFORM) {
        eprintln!("SKIPPED: {program} found no PoCL platform");
        return;
    }
    check(&out, program);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("\n0 failure(s)"), "{stdout}");
    let oks = stdout.lines().filter(|l| l.starts_with("ok ")).count();
    assert!(oks >= min_checks, "{oks} checks passed:\n{stdout}");
    for routine in routines {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(&format!("ok {routine}"))),
            "no passed check of {routine}:\n{stdout}"
        );
    }
}

#[test]
fn c_library_routines_and_their_errors() {
    let all = [
        "transpose",
        "sum",
        "stencil3d",
        "gemm",
        "convolution",
        "hotspot",
        "nbody",
    ];
    library_program("library_c", 35, &all);
}

#[test]
fn cpp_library_routines_and_their_errors() {
    library_program(
        "library_cpp",
        8,
        &["transpose", "sum", "stencil3d", "gemm", "convolution"],
    );
}
