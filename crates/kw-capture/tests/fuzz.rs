//! Fuzz target (mutation fuzzing, `kw_core::mutation_fuzzer`): the capture reader on mutated capture
//! files (header, metadata, frames, index, trailer). Brief in CI; `KW_FUZZ_SECS=600 cargo
//! test --release -p kw-capture --test fuzz -- --nocapture` runs it for 10 minutes. Every
//! input must give a capture or a typed error, never a panic or an absurd allocation.

use kw_capture::{Capture, CaptureBuffer, CaptureWriter, WriteOptions};
use kw_core::mutation_fuzzer::fuzz;
use std::io::Cursor;
use std::path::Path;

fn seed(level: i32, chunk: usize) -> Vec<u8> {
    let meta = serde_json::json!({"format": "kernel-wisdom/capture", "version": 1,
        "tuning_key": "k", "problem_size": [64], "args": [{"name": "x", "len": 64}]});
    let x: Vec<u8> = (0..256u32).map(|i| (i * 7 % 251) as u8).collect();
    let buffers = [
        CaptureBuffer::new("x.in", "f32", x.clone()),
        CaptureBuffer::new("x.out", "f32", x.iter().rev().copied().collect::<Vec<u8>>()),
        CaptureBuffer::new("y.in", "f32", x),
    ];
    let options = WriteOptions {
        level,
        chunk_size: chunk,
        ..WriteOptions::default()
    };
    let mut out = Cursor::new(Vec::new());
    CaptureWriter::new(options)
        .write_to(&mut out, Path::new("seed.kwcap"), meta, &buffers)
        .unwrap();
    out.into_inner()
}

#[test]
fn fuzz_capture_reader() {
    let seeds = [seed(1, 1 << 20), seed(3, 1024)];
    let dict: &[&[u8]] = &[
        b"\xff\xff\xff\xff\xff\xff\xff\x7f",
        b"\0\0\0\0",
        b"KWCAP",
        b"\x28\xb5\x2f\xfd",
    ];
    let r = fuzz("capture", &seeds, dict, 3_000, |input| {
        read_all(input.to_vec());
        // The same input with the header's hash made right again, so that mutations of the
        // header JSON reach its parser and checks (not only the hash check).
        if let Some(fixed) = rehash(input) {
            read_all(fixed);
        }
    });
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

fn rehash(input: &[u8]) -> Option<Vec<u8>> {
    if input.len() < 64 {
        return None;
    }
    let u64_at = |o: usize| Some(u64::from_le_bytes(input.get(o..o + 8)?.try_into().ok()?));
    let (h, l) = (u64_at(16)? as usize, u64_at(24)? as usize);
    let header = input.get(h..h.checked_add(l)?)?;
    let mut out = input.to_vec();
    out[32..64].copy_from_slice(blake3::hash(header).as_bytes());
    Some(out)
}

fn read_all(bytes: Vec<u8>) {
    {
        let Ok(c) = Capture::from_bytes("fuzz.kwcap", bytes) else {
            return;
        };
        let _ = c.verify();
        let names: Vec<String> = c.buffers().map(|b| b.name.to_string()).collect();
        for n in names {
            let _ = c.read_buffer(&n);
        }
        let _ = c.metadata_as::<serde_json::Value>();
    }
}
