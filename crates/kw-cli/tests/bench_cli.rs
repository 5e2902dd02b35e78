//! `kw bench --small --json` on PoCL (issue 29): every library kernel at its small sizes,
//! verified against the CPU reference, with a throughput and the percentage of the copy
//! bandwidth measured in the same run (gemm: GFLOP/s, and no cuBLAS bound on a CPU device,
//! saying why; nbody: GFLOP/s against the FP32 peak measured in the same run); an unknown
//! kernel is refused by name.

fn kw(args: &[&str]) -> std::process::Output {
    kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"))
        .args(args)
        .env("KW_DEVICE", "pthread")
        .output()
        .expect("running kw")
}

/// PoCL's CPU device (else says the test is skipped).
fn pocl_info() -> Option<kernel_wisdom::DeviceInfo> {
    if !pocl() {
        return None;
    }
    kernel_wisdom::list_devices()
        .unwrap()
        .into_iter()
        .find(|d| d.info.name.contains("pthread"))
        .map(|d| d.info)
}

/// Whether PoCL's CPU device is here (else says the test is skipped).
fn pocl() -> bool {
    let here = kernel_wisdom::list_devices()
        .is_ok_and(|d| d.iter().any(|d| d.info.name.contains("pthread")));
    if !here {
        eprintln!("SKIPPED: no PoCL device");
    }
    here
}

#[test]
fn every_library_kernel_is_verified_and_set_against_the_copy_bound() {
    if !pocl() {
        return;
    }
    let out = kw(&["bench", "--small", "--json", "--runs", "3"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // The shipped CUDA records (with CUDA-only parameters such as `read_only` and
    // `stream_store`) never configure an OpenCL device and are left out without a warning.
    assert!(!err.contains("ignoring record"), "{err}");
    let rows: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kernels: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r["kernel"].as_str().unwrap()).collect();
    assert_eq!(
        kernels.into_iter().collect::<Vec<_>>(),
        [
            "convolution",
            "gemm",
            "hotspot",
            "nbody",
            "reduce_sum",
            "stencil3d",
            "transpose"
        ]
    );
    for r in &rows {
        assert_eq!(r["verified"], true, "{r}");
        assert!(r["throughput"].as_f64().unwrap() > 0.0, "{r}");
        if r["kernel"] == "gemm" {
            assert_eq!(r["unit"], "GFLOP/s");
            assert_eq!(r["bound_kind"], "cuBLAS SGEMM");
            assert!(
                r["bound"].is_null() && r["percent_of_bound"].is_null(),
                "{r}"
            );
            assert_eq!(r["no_bound_because"], "not a CUDA device");
            continue;
        }
        if r["kernel"] == "nbody" {
            assert_eq!(r["unit"], "GFLOP/s");
            assert_eq!(r["bound_kind"], "measured FP32 FMA peak");
            let pct = r["percent_of_bound"].as_f64().unwrap();
            assert!(pct > 0.0 && pct.is_finite(), "{r}");
            continue;
        }
        assert_eq!(r["unit"], "GB/s");
        assert!(r["throughput"].as_f64().unwrap() > 0.0, "{r}");
        // The convolution also says its GFLOP/s: 2 per filter tap and output.
        if r["kernel"] == "convolution" {
            let s: Vec<f64> = r["size"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            let gflops = 2.0 * s.iter().product::<f64>() / (r["ms"].as_f64().unwrap() * 1e6);
            let said = r["gflops"].as_f64().unwrap();
            assert!((said - gflops).abs() <= 1e-6 * gflops, "{r}");
        } else {
            assert!(r["gflops"].is_null(), "{r}");
        }
        assert!(r["bound"].as_f64().unwrap() > 0.0, "{r}");
        let pct = r["percent_of_bound"].as_f64().unwrap();
        assert!(pct > 0.0 && pct.is_finite(), "{r}");
        assert!(!r["size"].as_array().unwrap().is_empty());
    }
    // f16 GEMM is CUDA-only: asked for by name on PoCL, a clear error.
    let out = kw(&["bench", "gemm_f16", "--small"]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("`gemm_f16` is CUDA-only"), "{said}");
    let out = kw(&["bench", "gemv", "--small"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no library kernel `gemv`"));
}

/// `--size` runs the given sizes of one kernel; `--config` times the given configuration
/// (verified like the selected one); bad values are refused with their reason.
#[test]
fn given_sizes_and_a_given_configuration() {
    if !pocl() {
        return;
    }
    let out = kw(&[
        "bench",
        "gemm",
        "--size",
        "128x64x32",
        "--size",
        "64x128x16",
        "--json",
        "--runs",
        "2",
        "--config",
        "MWG=32,NWG=16,MDIMC=8,NDIMC=8,MDIMA=8,NDIMB=8,VWN=2",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let sizes: Vec<_> = rows.iter().map(|r| r["size"].clone()).collect();
    assert_eq!(
        sizes,
        [
            serde_json::json!([128, 64, 32]),
            serde_json::json!([64, 128, 16])
        ]
    );
    for r in &rows {
        assert_eq!(r["verified"], true, "{r}");
        assert_eq!(r["selection_step"], "given (--config)");
        let config = r["config"].as_str().unwrap();
        assert!(config.starts_with("MWG=32,NWG=16,"), "{config}");
    }
    // Split-K at a skinny size: 8 splits of K's 16-element tiles, verified.
    let out = kw(&[
        "bench",
        "gemm",
        "--size",
        "32x32x512",
        "--json",
        "--runs",
        "2",
        "--config",
        "MWG=32,NWG=32,MDIMC=8,NDIMC=8,MDIMA=8,NDIMB=8,KSPLIT=8",
    ]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    let row: serde_json::Value = serde_json::from_str(said.trim()).unwrap();
    assert_eq!(row["verified"], true, "{row}");
    assert!(
        row["config"].as_str().unwrap().contains("KSPLIT=8"),
        "{row}"
    );
    // hotspot: nx x ny x iterations; 7 steps with a given factor of 3 take 3 + 3 + 1.
    let out = kw(&[
        "bench",
        "hotspot",
        "--size",
        "19x11x7",
        "--json",
        "--runs",
        "2",
        "--config",
        "temporal_tiling_factor=3,sh_power=1",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let row: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
    assert_eq!(row["size"], serde_json::json!([19, 11, 7]));
    assert_eq!(row["verified"], true, "{row}");
    assert!(row["config"]
        .as_str()
        .unwrap()
        .contains("temporal_tiling_factor=3"));
    for (args, want) in [
        (vec!["bench", "gemm", "--size", "128x64"], "gemm takes 3"),
        (vec!["bench", "nbody", "--size", "64x2"], "nbody takes 1"),
        (
            vec!["bench", "gemm", "transpose", "--size", "8x8"],
            "exactly one kernel",
        ),
        (
            vec!["bench", "gemm", "--size", "64x64x16", "--config", "MWG=7"],
            "no value 7",
        ),
        (
            vec![
                "bench",
                "gemm",
                "transpose",
                "--small",
                "--config",
                "MWG=32",
            ],
            "--config needs exactly one kernel",
        ),
        (
            vec!["bench", "transpose", "--small", "--runs", "0"],
            "--runs",
        ),
        // Refused before the bound is measured: a parameter given twice, no NAME=VALUE at
        // all, gemm_f16 named on an OpenCL device, an empty --device.
        (
            vec![
                "bench",
                "gemm",
                "--size",
                "64x64x16",
                "--config",
                "MWG=64,MWG=32",
            ],
            "`MWG` is given twice",
        ),
        (
            vec!["bench", "gemm", "--size", "64x64x16", "--config", ","],
            "gives no NAME=VALUE",
        ),
        (vec!["bench", "gemm_f16", "--size", "64x64x16"], "CUDA-only"),
        (
            vec!["bench", "transpose", "--small", "--device", ""],
            "--device is empty",
        ),
    ] {
        let out = kw(&args);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("bound:"),
            "{args:?}: refused only after measuring the bound"
        );
    }
}

/// A `--size` whose buffers cannot fit the device is refused before anything is allocated
/// or timed, with the size and the memory it needs (it used to abort allocating, or panic on
/// an overflowing count).
#[test]
fn a_size_beyond_the_device_memory_is_refused() {
    if !pocl() {
        return;
    }
    for (kernel, size) in [
        ("transpose", "99999999999x9999999999"),
        ("reduce_sum", "99999999999999"),
        ("stencil3d", "100000x100000x100000"),
        ("nbody", "18446744073709551615"),
        // Counts beyond u128 saturate (they wrapped to a smaller figure).
        (
            "stencil3d",
            "18446744073709551615x18446744073709551615x18446744073709551615",
        ),
    ] {
        let out = kw(&["bench", kernel, "--size", size]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{kernel} {size}: {err}");
        assert!(
            err.contains(&format!("--size `{size}`")) && err.contains("more than the device's"),
            "{kernel} {size}: {err}"
        );
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("bound:"),
            "refused before timing: {kernel} {size}"
        );
    }
}

/// A `--size` that fits the device's memory but whose largest buffer is more than the device
/// allocates at once (PoCL: `CL_DEVICE_MAX_MEM_ALLOC_SIZE`, a fraction of its memory) is
/// refused by name before anything is allocated (it failed with a bare
/// `CL_INVALID_BUFFER_SIZE`).
#[test]
fn a_buffer_beyond_the_largest_allocation_is_refused() {
    let Some(info) = pocl_info() else {
        return;
    };
    // One float more than the largest allocation: a single buffer of reduce_sum.
    let n = info.max_alloc_bytes / 4 + 1;
    assert!(
        info.max_alloc_bytes > 0,
        "PoCL reports its largest allocation"
    );
    if n * 4 > info.global_memory_bytes {
        eprintln!("SKIPPED: this PoCL device allocates all its memory at once");
        return;
    }
    let size = n.to_string();
    let out = kw(&["bench", "reduce_sum", "--size", &size]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("--size `{size}`"))
            && err.contains("allocates at once")
            && err.contains("CL_DEVICE_MAX_MEM_ALLOC_SIZE"),
        "{err}"
    );
}

/// gemm at sizes the routine pads (no tile divides them): the whole routine is timed and
/// verified; `--config` times the kernel alone at the size given, refused where the
/// configuration's restrictions do not allow that size: that size still gets its JSON line
/// (`verified: false` and the error), and the summary names it.
#[test]
fn gemm_at_sizes_the_routine_pads() {
    if !pocl() {
        return;
    }
    let out = kw(&[
        "bench", "gemm", "--size", "37x5x3", "--size", "130x7x40", "--json", "--runs", "2",
    ]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<serde_json::Value> = said
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2, "{said}");
    for (r, padded) in rows.iter().zip(["128x128x32", "256x128x64"]) {
        assert_eq!(r["verified"], true, "{r}");
        let step = r["selection_step"].as_str().unwrap();
        assert!(
            step.contains(&format!(
                "the whole routine timed on the host clock, padded to {padded}"
            )),
            "{r}"
        );
        assert!(r["ms"].as_f64().unwrap() > 0.0, "{r}");
    }
    let out = kw(&[
        "bench",
        "gemm",
        "--size",
        "37x5x3",
        "--size",
        "128x64x32",
        "--json",
        "--runs",
        "1",
        "--config",
        "MWG=32,NWG=16",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<serde_json::Value> = said
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2, "{said}");
    assert_eq!(rows[0]["size"], serde_json::json!([37, 5, 3]));
    assert_eq!(rows[0]["verified"], false);
    let error = rows[0]["error"].as_str().unwrap();
    assert!(
        error.contains("is not a valid configuration") && error.contains("[37, 5, 3]"),
        "{error}"
    );
    assert_eq!(rows[1]["verified"], true, "{}", rows[1]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("1 of 2 benchmark(s) did not pass: gemm 37x5x3 failed"),
        "{err}"
    );
}

/// A size whose host data this process cannot allocate (here under a 4 GB address-space
/// limit, `ulimit -v`) is refused by name before anything is allocated; it aborted on the
/// failed allocation.
#[cfg(unix)]
#[test]
fn a_size_beyond_the_host_memory_is_refused() {
    let Some(info) = pocl_info() else {
        return;
    };
    // The device limits come first: 2 GiB must fit the device for the host's to decide.
    if info.max_alloc_bytes < (2 << 30) || info.global_memory_bytes < (3 << 30) {
        eprintln!("SKIPPED: this PoCL device does not take a 2 GiB buffer");
        return;
    }
    let script = format!(
        "ulimit -v 4000000 && exec '{}' bench reduce_sum --size 536870912 --runs 1",
        env!("CARGO_BIN_EXE_kw")
    );
    let out = kw_core::child_env::command("sh")
        .args(["-c", &script])
        .env("KW_DEVICE", "pthread")
        .output()
        .expect("running kw");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--size `536870912`") && err.contains("of host memory"),
        "{err}"
    );
}
