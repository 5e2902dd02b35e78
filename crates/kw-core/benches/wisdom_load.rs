//! Loading a large wisdom file: `WisdomFile::load` (records deserialised straight from the
//! bytes) against the former way (a `serde_json::Value` tree first, then the records), in
//! the same run. Peak memory is measured per process: write the file once
//! (`--mode write --file F`), then load it in separate processes (`--mode new --file F`,
//! `--mode old --file F`) and compare their peak RSS (`VmHWM`).
//!
//! `cargo bench -p kw-core --bench wisdom_load -- [--records N] [--mode both|new|old|write] [--file F]`

use kw_core::config::Config;
use kw_core::space::Parameter;
use kw_core::wisdom::{
    Objective, Provenance, SpaceFingerprint, WisdomDevice, WisdomFile, WisdomRecord,
};
use std::time::Instant;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

/// Loads the file the new way (`WisdomFile::load`) or the old way (a JSON tree first).
fn load(path: &std::path::Path, which: &str) -> usize {
    if which == "new" {
        WisdomFile::load(path).expect("load").records.len()
    } else {
        let text = std::fs::read(path).expect("read");
        let value: serde_json::Value = serde_json::from_slice(&text).expect("json");
        let f: WisdomFile = serde_json::from_value(value).expect("records");
        f.records.len()
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = arg(&args, "--records")
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let mode = arg(&args, "--mode").unwrap_or_else(|| "both".into());
    let given = arg(&args, "--file").map(std::path::PathBuf::from);
    if let (Some(path), "new" | "old") = (&given, mode.as_str()) {
        let before = peak_rss_mib();
        let t = Instant::now();
        let records = load(path, &mode);
        println!(
            "RESULT wisdom_load_{mode}: {:.3} s, {records} records; peak RSS {:.0} MiB (before loading {before:.0} MiB)",
            t.elapsed().as_secs_f64(),
            peak_rss_mib()
        );
        return;
    }
    let params: Vec<Parameter> = (0..8)
        .map(|i| Parameter::new(&format!("p{i}"), [1, 2, 4, 8, 16, 32, 64, 128]))
        .collect();
    let mut file = WisdomFile::new("big");
    file.records = (0..n)
        .map(|i| {
            let mut config = Config::default();
            for (k, p) in params.iter().enumerate() {
                config.set(&p.name, p.values[(i + k) % 8].clone());
            }
            WisdomRecord {
                config,
                problem_size: vec![(i % 4096 + 1) as i64, (i / 4096 + 1) as i64],
                device: WisdomDevice {
                    name: format!("GPU {}", i % 37),
                    vendor: "V".into(),
                    backend: "cuda".into(),
                    architecture: "sm_90".into(),
                    driver: "555.42".into(),
                },
                objective: Objective {
                    median_ms: 0.5 + i as f64 * 1e-6,
                    samples: 15,
                    ..Default::default()
                },
                space: SpaceFingerprint {
                    hash: "0123456789abcdef".into(),
                    parameters: params.clone(),
                },
                provenance: Provenance {
                    date: "2026-11-23T09:00:00Z".into(),
                    host: "node".into(),
                    tool_version: "0.1.0".into(),
                    strategy: "hybrid3".into(),
                    evaluations: 200,
                    capture_file: "k.kwcap".into(),
                    capture_checksum: "blake3:00".into(),
                    verified: Some(true),
                    unverified_reason: String::new(),
                    tolerances: Default::default(),
                    ..Default::default()
                },
                alternates: Vec::new(),
            }
        })
        .collect();
    let path = given.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("kw-wisdom-load-{}.json", std::process::id()))
    });
    file.save(&path).expect("write the file");
    if mode == "write" {
        println!("wrote {} ({n} records)", path.display());
        return;
    }
    drop(file);
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    println!(
        "wisdom_load: {n} records, {:.1} MB; peak RSS after writing {:.0} MiB",
        bytes as f64 / 1e6,
        peak_rss_mib()
    );
    let mut times = Vec::new();
    for which in ["new", "old"] {
        if mode != "both" && mode != which {
            continue;
        }
        let t = Instant::now();
        let records = load(&path, which);
        let s = t.elapsed().as_secs_f64();
        assert_eq!(records, n);
        println!(
            "RESULT wisdom_load_{which}: {s:.3} s for {:.1} MB; peak RSS so far {:.0} MiB",
            bytes as f64 / 1e6,
            peak_rss_mib()
        );
        times.push(s);
    }
    if times.len() == 2 {
        println!(
            "RESULT wisdom_load_speedup: {:.2}x (old / new)",
            times[1] / times[0]
        );
    }
    if given.is_none() {
        let _ = std::fs::remove_file(&path);
    }
}
