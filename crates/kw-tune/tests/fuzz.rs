//! Fuzz target (mutation fuzzing, `kw_core::mutation_fuzzer`): the results-log reader and the Kernel
//! Tuner export of a log. Brief in CI; `KW_FUZZ_SECS=600 cargo test --release -p kw-tune
//! --test fuzz -- --nocapture` runs it for 10 minutes.

use kw_core::mutation_fuzzer::fuzz;
use kw_tune::log::read_log;

const LOG: &str = r#"{"format":"kw-tune-log","version":1,"fingerprint":"60019aa4a9fb05ff","params":[{"name":"block_size_x","values":[16,32]},{"name":"mode","values":[0,1,2]}],"strategy":"hybrid3","seed":0,"kernel_name":"scale","device_name":"pocl","problem_size":[256],"capture_checksum":"blake3:f2","objective":"time"}
{"eval":1,"key":"32,0","point":[1,0],"config":{"block_size_x":32,"mode":0},"objective":0.0021455,"elapsed_s":0.22,"eval_s":0.10,"samples":[0.003744,0.000547]}
{"eval":2,"key":"16,0","point":[0,0],"config":{"block_size_x":16,"mode":0},"objective":null,"failure":"timed out","elapsed_s":3.29,"eval_s":3.07}
{"eval":3,"key":"32,2","point":[1,2],"config":{"block_size_x":32,"mode":2},"objective":null,"failure":"crashed","elapsed_s":7.6,"eval_s":1.05}
"#;

#[test]
fn fuzz_results_log_reader() {
    let dir = std::env::temp_dir().join(format!("kw-tune-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (path, out) = (dir.join("log.jsonl"), dir.join("cache.json"));
    let dict: &[&[u8]] = &[
        b"\n",
        b"\"point\":[",
        b"\"values\":[",
        b"\"objective\":",
        b"null",
        b"-1",
        b"1e308",
        b"18446744073709551615",
        b"\"params\":[]",
        b"{",
        b"}",
        b"]",
    ];
    let r = fuzz(
        "results-log",
        &[LOG.as_bytes().to_vec()],
        dict,
        2_000,
        |input| {
            std::fs::write(&path, input).unwrap();
            if let Ok(log) = read_log(&path) {
                for rec in &log.records {
                    let _ = rec.result();
                }
                let _ = kw_tune::export::export_log(&path, &out);
            }
        },
    );
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}
