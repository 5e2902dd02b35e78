//! Background capture write throughput: 1 GiB of f32 buffers (4 x 256 MiB by default).
//!
//! `cargo bench -p kw-capture --bench capture_write [-- --mib-per-buffer N --buffers K --dir D --no-shuffle]`
//!
//! Reports, for smooth data (sin(i * 0.001)) and random floats: the time `submit` takes on the
//! calling thread, the time until `flush` returns (compression + write + fsync + rename), the
//! throughput in raw bytes per second, the file size vs the raw size, and the read-back speed.

use kw_capture::{BackgroundWriter, Capture, CaptureBuffer, CaptureJob, WriteOptions};
use std::path::PathBuf;
use std::time::Instant;

fn smooth(n: usize, phase: f64) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * 4);
    for i in 0..n {
        out.extend_from_slice(&((i as f64 * 0.001 + phase).sin() as f32).to_le_bytes());
    }
    out
}

/// CPU seconds used by this process so far (user + system, from /proc/self/stat).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn random(n: usize, seed: u64) -> Vec<u8> {
    let mut s = seed | 1;
    let mut out = Vec::with_capacity(n * 4);
    for _ in 0..n {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let f = (s >> 40) as f32 / (1u64 << 24) as f32;
        out.extend_from_slice(&f.to_le_bytes());
    }
    out
}

/// Single-thread speeds of the parts, on one 4 MiB chunk.
fn micro(level: i32) {
    let n = 1 << 20;
    for (kind, data) in [("smooth", smooth(n, 0.0)), ("random", random(n, 7))] {
        let reps = 20;
        let t = Instant::now();
        for _ in 0..reps {
            std::hint::black_box(blake3::hash(std::hint::black_box(&data)));
        }
        let hash = (reps * data.len()) as f64 / t.elapsed().as_secs_f64() / 1e6;
        let mut c = zstd::bulk::Compressor::new(level).expect("compressor");
        let t = Instant::now();
        let mut out = Vec::new();
        for _ in 0..reps {
            out = c.compress(std::hint::black_box(&data)).expect("compress");
        }
        let comp = (reps * data.len()) as f64 / t.elapsed().as_secs_f64() / 1e6;
        let t = Instant::now();
        for _ in 0..reps {
            std::hint::black_box(zstd::bulk::decompress(&out, data.len()).expect("decompress"));
        }
        let dec = (reps * data.len()) as f64 / t.elapsed().as_secs_f64() / 1e6;
        println!(
            "  one core, 4 MiB {kind} chunk: blake3 {hash:.0} MB/s, zstd-{level} compress {comp:.0} MB/s (ratio {:.1}%), decompress {dec:.0} MB/s",
            100.0 * out.len() as f64 / data.len() as f64
        );
    }
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mib: usize = arg(&args, "--mib-per-buffer")
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    let count: usize = arg(&args, "--buffers")
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    let level: i32 = arg(&args, "--level")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let base = arg(&args, "--dir")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let dir = base.join(format!("kw-capture-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create bench dir");
    let n = mib * (1 << 20) / 4;
    let options = WriteOptions {
        level,
        shuffle: !args.iter().any(|a| a == "--no-shuffle"),
        ..WriteOptions::default()
    };
    println!(
        "capture_write: {count} x {mib} MiB f32 buffers, zstd level {level}, shuffle {}, chunk {} KiB, {} threads, dir {}",
        options.shuffle,
        options.chunk_size >> 10,
        options.threads,
        dir.display()
    );
    micro(level);
    for kind in ["smooth", "random"] {
        let buffers: Vec<CaptureBuffer> = (0..count)
            .map(|b| {
                let data = if kind == "smooth" {
                    smooth(n, b as f64)
                } else {
                    random(n, 0x9e37_79b9_7f4a_7c15 ^ b as u64)
                };
                CaptureBuffer::new(format!("buf{b}"), "f32", data)
            })
            .collect();
        let raw: u64 = buffers.iter().map(|b| b.bytes().len() as u64).sum();
        let writer = BackgroundWriter::new(options.clone()).expect("start writer");
        let job = CaptureJob {
            dir: dir.clone(),
            file_stem: format!("bench-{kind}"),
            metadata: serde_json::json!({"tuning_key": "bench", "kind": kind}),
            buffers,
        };
        let cpu0 = cpu_seconds();
        let t0 = Instant::now();
        writer.submit(job);
        let submit = t0.elapsed();
        let results = writer.flush();
        let total = t0.elapsed();
        let cpu = cpu0
            .zip(cpu_seconds())
            .map(|(a, b)| b - a)
            .unwrap_or(f64::NAN);
        let written = results
            .into_iter()
            .next()
            .expect("one result")
            .expect("write ok");
        let file_len = written.sizes.file_len;
        let t1 = Instant::now();
        let cap = Capture::open(&written.path).expect("open");
        let mut back = 0u64;
        for b in 0..count {
            back += cap.read_buffer(&format!("buf{b}")).expect("read").len() as u64;
        }
        let read = t1.elapsed();
        assert_eq!(back, raw);
        println!(
            "{kind:>6}: submit {:>8.3} us | write+fsync {:>7.3} s = {:>7.0} MB/s ({:.2} GiB/s) | file {:>10} B = {:>5.1}% of raw {} B | read back {:>6.0} MB/s",
            submit.as_secs_f64() * 1e6,
            total.as_secs_f64(),
            raw as f64 / total.as_secs_f64() / 1e6,
            raw as f64 / total.as_secs_f64() / (1u64 << 30) as f64,
            file_len,
            100.0 * file_len as f64 / raw as f64,
            raw,
            raw as f64 / read.as_secs_f64() / 1e6,
        );
        println!(
            "        writer CPU time {cpu:.2} s = {:.0} MB per CPU-second; on {} idle cores that is {:.0} MB/s (load average now {})",
            raw as f64 / cpu / 1e6,
            options.threads,
            raw as f64 / cpu / 1e6 * options.threads as f64,
            std::fs::read_to_string("/proc/loadavg").unwrap_or_default().split_whitespace().next().unwrap_or("?"),
        );
        drop(cap);
        let _ = std::fs::remove_file(&written.path);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
