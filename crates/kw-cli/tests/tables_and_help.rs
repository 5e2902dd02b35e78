//! The listing and showing commands print aligned tables under a capital header (`kw capture
//! ls`, `kw wisdom ls`, `kw cache ls`, `kw capture show`'s space and arguments); `kw cache
//! ls` says what sets entries of one kernel apart; every `--help` ends with examples.

mod common;

use std::path::Path;

fn kw(dir: &Path, args: &[&str]) -> String {
    let out = common::kw_in(dir)
        .env("KW_CACHE_DIR", dir.join("cache"))
        .args(args)
        .output()
        .expect("running kw");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "kw {args:?}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

#[test]
fn every_help_ends_with_examples() {
    let dir = common::unique_dir("help");
    for c in [
        "devices",
        "space",
        "space stats",
        "wisdom",
        "wisdom ls",
        "wisdom show",
        "wisdom explain",
        "wisdom merge",
        "capture",
        "capture ls",
        "capture show",
        "capture verify",
        "capture from-t1",
        "simulate",
        "tune",
        "cache",
        "cache ls",
        "cache stats",
        "cache clear",
        "log",
        "log export",
        "report",
    ] {
        let mut args: Vec<&str> = c.split(' ').collect();
        args.push("--help");
        let help = kw(&dir, &args);
        let tail = help
            .rsplit_once("\nExamples:\n")
            .unwrap_or_else(|| panic!("`kw {c} --help` has no examples:\n{help}"))
            .1;
        assert!(
            tail.lines().all(|l| l.starts_with("  ")) && tail.contains("kw "),
            "`kw {c} --help` does not end with examples:\n{tail}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ls_and_show_print_tables() {
    if kernel_wisdom::list_devices().is_err() {
        eprintln!("SKIPPED: no OpenCL platform");
        return;
    }
    let dir = common::unique_dir("tables");
    kw(
        &dir,
        &[
            "tune",
            "--bundled",
            "vector_add:4096",
            "--budget",
            "4",
            "--samples",
            "1",
            "--confirm-rounds",
            "0",
        ],
    );
    let show = kw(&dir, &["capture", "show", "captures/vector_add_4096.kwcap"]);
    for needle in [
        "space:        96 valid configurations of 96 (4 parameters)",
        "  PARAMETER         VALUES                       DEFAULT  LAUNCHED\n",
        "  block_size_x      32, 64, 128, 256, 512, 1024  256      256\n",
        "configuration launched: block_size_x=256,elems_per_thread=1,strided=1,unroll=0\n",
        "  #  NAME  TYPE  KIND    VALUE OR LENGTH  CAPTURED\n",
        "  0  c     f32   buffer  4096 elements    in, reference out\n",
        "  3  n     i32   scalar  4096             -\n",
    ] {
        assert!(show.contains(needle), "missing {needle:?} in:\n{show}");
    }
    let captures = kw(&dir, &["capture", "ls"]);
    assert!(
        captures.starts_with("FILE                   TUNING KEY  PROBLEM SIZE  DATE"),
        "{captures}"
    );
    let wisdom = kw(&dir, &["wisdom", "ls", "wisdom"]);
    assert!(
        wisdom.starts_with("FILE                    TUNING KEY  RECORDS  DEVICES\n"),
        "{wisdom}"
    );
    assert!(
        wisdom.contains("wisdom/vector_add.json  vector_add  1        "),
        "{wisdom}"
    );
    // Without a directory: the search path (here the per-user directory).
    assert!(kw(&dir, &["wisdom", "ls"]).contains("vector_add.json"));
    let cache = kw(&dir, &["cache", "ls"]);
    let mut lines = cache.lines().skip(1);
    let head = lines.next().unwrap();
    assert!(
        head.starts_with("KEY ") && head.ends_with("DIFFERS BY"),
        "{cache}"
    );
    let column = head.find("DIFFERS BY").unwrap();
    let differs: Vec<&str> = lines
        .filter(|l| l.contains(" vector_add "))
        .map(|l| &l[column..])
        .collect();
    assert!(differs.len() >= 2, "{cache}");
    let distinct: std::collections::BTreeSet<&&str> = differs.iter().collect();
    assert_eq!(
        distinct.len(),
        differs.len(),
        "entries not told apart:\n{cache}"
    );
    assert!(
        differs.iter().all(|d| d.contains("block_size_x=")
            || d.contains("elems_per_thread=")
            || d.contains("strided=")
            || d.contains("unroll=")),
        "{cache}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `kw bench --help` names every library kernel (it once left gemm_f16 out).
#[test]
fn bench_help_names_every_library_kernel() {
    let dir = common::unique_dir("bench-help");
    let text = kw(&dir, &["bench", "--help"]);
    // Each as a word of the list (gemm's name is inside gemm_f16's).
    let words: Vec<&str> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .collect();
    for k in kernel_wisdom::library::defs::KERNELS {
        assert!(
            words.contains(k),
            "{k} missing from kw bench --help:\n{text}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
