//! Devices are identified the same way in every process: with two PoCL devices of one name
//! (`POCL_DEVICES="pthread pthread"`), `kw tune --device N` hands its evaluation worker the
//! device's identity, and the worker opens exactly that device; a selector applies within
//! the capture's backend and one that matches nothing there fails clearly.

mod common;

use std::process::Output;

fn kw(dir: &std::path::Path, args: &[&str]) -> Output {
    common::kw_in(dir)
        .env("POCL_DEVICES", "pthread pthread")
        .env("KW_LOG", "debug")
        .args(args)
        .output()
        .expect("running kw")
}

#[test]
fn a_worker_opens_the_device_its_parent_chose() {
    if kernel_wisdom::list_devices().is_err() {
        eprintln!("SKIPPED: no OpenCL platform");
        return;
    }
    let dir = common::unique_dir("device-identity");
    let listed = kw(&dir, &["devices", "--json"]);
    let devices: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("JSON");
    let pocl: Vec<&serde_json::Value> = devices
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["backend"] == "opencl" && d["name"].as_str().unwrap().starts_with("pthread"))
        .collect();
    if pocl.len() < 2 {
        eprintln!(
            "SKIPPED: PoCL lists {} pthread device(s) with POCL_DEVICES=\"pthread pthread\"",
            pocl.len()
        );
        return;
    }
    // Same names, different identities.
    assert_eq!(pocl[0]["name"], pocl[1]["name"]);
    assert_ne!(pocl[0]["id"], pocl[1]["id"]);
    for d in &pocl[..2] {
        let index = d["index"].to_string();
        let out = kw(
            &dir,
            &[
                "tune",
                "--device",
                &index,
                "--bundled",
                "vector_add:4096",
                "--budget",
                "2",
                "--samples",
                "1",
                "--log",
                &format!("run{index}.jsonl"),
                "--wisdom-dir",
                "wis",
                "--confirm-rounds",
                "0",
            ],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        let id = d["id"].as_str().unwrap();
        assert!(
            stderr.contains(&format!("evaluation worker opened {id}\n")),
            "device {index} ({id}): {stderr}"
        );
    }
    // An index that is no OpenCL device: a clear error naming the backend and the devices.
    let out = kw(
        &dir,
        &[
            "tune",
            "--device",
            "99",
            "captures/vector_add_4096.kwcap",
            "--budget",
            "1",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("no device matches index 99 among the OpenCL devices"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
