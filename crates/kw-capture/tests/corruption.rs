//! Damaged files: truncated at many offsets, bytes flipped at many positions, wrong versions.
//! Every damage is reported as an error naming the file; nothing panics and no wrong data is
//! ever returned.

mod common;

use common::{random_bytes, smooth_f32, TempDir};
use kw_capture::{
    Capture, CaptureBuffer, CaptureError, CaptureWriter, WriteOptions, FORMAT_VERSION,
};
use std::path::Path;

struct Sample {
    bytes: Vec<u8>,
    buffers: Vec<(String, Vec<u8>)>,
}

fn sample(sizes: &[usize], chunk_size: usize) -> Sample {
    let buffers: Vec<(String, Vec<u8>)> = sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let d = if i % 2 == 0 {
                random_bytes(n, i as u64)
            } else {
                smooth_f32(n / 4, i as f64)
            };
            (format!("b{i}"), d)
        })
        .collect();
    let cbs: Vec<CaptureBuffer> = buffers
        .iter()
        .map(|(n, d)| CaptureBuffer::new(n.clone(), "f32", d.clone()))
        .collect();
    let writer = CaptureWriter::new(WriteOptions {
        chunk_size,
        threads: 1,
        ..WriteOptions::default()
    });
    let mut cursor = std::io::Cursor::new(Vec::new());
    writer
        .write_to(
            &mut cursor,
            Path::new("mem.kwcap"),
            serde_json::json!({"tuning_key": "k"}),
            &cbs,
        )
        .expect("encode");
    Sample {
        bytes: cursor.into_inner(),
        buffers,
    }
}

/// Opens `bytes` written to `path`; returns whether any damage was detected. Panics (fails the
/// test) if wrong data comes back or an error does not name the file.
fn check_damaged(path: &Path, bytes: &[u8], s: &Sample) -> bool {
    std::fs::write(path, bytes).expect("write damaged file");
    check_opened(path, Capture::open(path), s)
}

/// Like [`check_damaged`] without the disk: the bytes are checked in memory.
fn check_damaged_in_memory(path: &Path, bytes: &[u8], s: &Sample) -> bool {
    check_opened(path, Capture::from_bytes(path, bytes.to_vec()), s)
}

fn check_opened(path: &Path, opened: Result<Capture, CaptureError>, s: &Sample) -> bool {
    let name = path.display().to_string();
    let named = |e: &CaptureError| {
        assert!(
            e.to_string().starts_with(&name),
            "error does not name the file: {e}"
        );
        assert_eq!(e.path(), path);
    };
    let cap = match opened {
        Err(e) => {
            named(&e);
            return true;
        }
        Ok(c) => c,
    };
    let mut detected = false;
    if let Err(e) = cap.verify() {
        named(&e);
        detected = true;
    }
    let mut read_failed = false;
    for (n, want) in &s.buffers {
        match cap.read_buffer(n) {
            Ok(got) => assert!(got == *want, "buffer {n} came back wrong without an error"),
            Err(e) => {
                named(&e);
                read_failed = true;
            }
        }
    }
    assert_eq!(detected, read_failed, "verify and read_buffer disagree");
    detected
}

#[test]
fn truncation_at_every_offset_of_a_small_file() {
    let dir = TempDir::new("trunc");
    let s = sample(&[0, 3000, 5000, 1], 1024);
    let path = dir.path().join("t.kwcap");
    for cut in 0..s.bytes.len() {
        // Every offset in memory; every 37th (and the shortest) through a real file and mmap.
        assert!(
            check_damaged_in_memory(&path, &s.bytes[..cut], &s),
            "truncation at {cut} went unnoticed"
        );
        if cut > 100 && cut % 37 != 0 {
            continue;
        }
        assert!(
            check_damaged(&path, &s.bytes[..cut], &s),
            "truncation at {cut} went unnoticed"
        );
        if let Err(e) = Capture::open(&path) {
            assert!(
                matches!(
                    e,
                    CaptureError::Truncated { .. } | CaptureError::BadHeader { .. }
                ),
                "cut {cut}: {e}"
            );
        }
    }
    // Appended bytes are damage too.
    let mut longer = s.bytes.clone();
    longer.push(0);
    assert!(check_damaged(&path, &longer, &s));
    assert!(
        !check_damaged(&path, &s.bytes, &s),
        "the intact file must pass"
    );
}

#[test]
fn truncation_of_a_larger_file_at_a_stride() {
    let dir = TempDir::new("trunc-large");
    let s = sample(&[300_000, 200_000, 70_000], 64 * 1024);
    let path = dir.path().join("t.kwcap");
    let mut cut = 0;
    while cut < s.bytes.len() {
        assert!(
            check_damaged(&path, &s.bytes[..cut], &s),
            "truncation at {cut} went unnoticed"
        );
        cut += 997;
    }
    for back in 1..200 {
        let cut = s.bytes.len() - back;
        assert!(
            check_damaged(&path, &s.bytes[..cut], &s),
            "truncation at {cut} went unnoticed"
        );
    }
}

#[test]
fn flipped_bytes_are_detected_everywhere() {
    let dir = TempDir::new("flip");
    let s = sample(&[0, 1500, 2500, 1, 1024], 1024);
    let path = dir.path().join("f.kwcap");
    let n = s.bytes.len();
    for pos in 0..n {
        for mask in [0x01u8, 0x80, 0xFF] {
            if mask == 0xFF && pos % 7 != 0 {
                continue;
            }
            let mut b = s.bytes.clone();
            b[pos] ^= mask;
            assert!(
                check_damaged_in_memory(&path, &b, &s),
                "flip {mask:#x} at {pos} of {n} went unnoticed"
            );
        }
        if pos % 101 == 0 {
            // Now and then through a real file and the memory map too.
            let mut b = s.bytes.clone();
            b[pos] ^= 0x04;
            assert!(
                check_damaged(&path, &b, &s),
                "flip at {pos} of {n} went unnoticed"
            );
        }
    }
}

#[test]
fn flipped_bytes_in_a_larger_file() {
    let dir = TempDir::new("flip-large");
    let s = sample(&[400_000, 100_000], 64 * 1024);
    let path = dir.path().join("f.kwcap");
    let n = s.bytes.len();
    let mut pos = 0;
    while pos < n {
        let mut b = s.bytes.clone();
        b[pos] ^= 0x10;
        assert!(
            check_damaged(&path, &b, &s),
            "flip at {pos} of {n} went unnoticed"
        );
        pos += 1009;
    }
}

#[test]
fn wrong_version_and_foreign_files() {
    let dir = TempDir::new("version");
    let s = sample(&[100], 1024);
    let path = dir.path().join("v.kwcap");
    let mut b = s.bytes.clone();
    b[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    std::fs::write(&path, &b).unwrap();
    match Capture::open(&path) {
        Err(CaptureError::UnsupportedVersion {
            found, supported, ..
        }) => {
            assert_eq!((found, supported), (FORMAT_VERSION + 1, FORMAT_VERSION));
        }
        other => panic!("expected UnsupportedVersion, got {other:?}"),
    }
    let msg = Capture::open(&path).unwrap_err().to_string();
    assert!(
        msg.contains("v.kwcap") && msg.contains(&format!("version {}", FORMAT_VERSION + 1)),
        "{msg}"
    );
    assert!(msg.contains(&format!("version {FORMAT_VERSION}")), "{msg}");

    for (content, what) in [
        (&b"{\"not\": \"a capture\"}"[..], "json"),
        (&b""[..], "empty"),
        (&b"KWCAP"[..], "short magic"),
        (&[0u8; 4096][..], "zeros"),
    ] {
        std::fs::write(&path, content).unwrap();
        let e = Capture::open(&path).unwrap_err();
        assert!(e.to_string().contains("v.kwcap"), "{what}: {e}");
        match what {
            "short magic" | "empty" => {
                assert!(matches!(e, CaptureError::Truncated { .. }), "{what}: {e}")
            }
            _ => assert!(matches!(e, CaptureError::BadMagic { .. }), "{what}: {e}"),
        }
    }
    let e = Capture::open(dir.path().join("missing.kwcap")).unwrap_err();
    assert!(
        matches!(e, CaptureError::Io { .. }) && e.to_string().contains("missing.kwcap"),
        "{e}"
    );
    let e = Capture::open(dir.path()).unwrap_err();
    assert!(e.to_string().contains("not a regular file"), "{e}");
}

#[test]
fn header_that_is_not_json_is_reported() {
    // Rewrite the header with garbage and a matching hash: the JSON error must be reported.
    let dir = TempDir::new("json");
    let s = sample(&[100], 1024);
    let mut b = s.bytes.clone();
    let off = u64::from_le_bytes(b[16..24].try_into().unwrap()) as usize;
    let len = u64::from_le_bytes(b[24..32].try_into().unwrap()) as usize;
    for (i, byte) in b[off..off + len].iter_mut().enumerate() {
        *byte = b"not json at all! "[i % 17];
    }
    let hash = *blake3::hash(&b[off..off + len]).as_bytes();
    b[32..64].copy_from_slice(&hash);
    let path = dir.path().join("j.kwcap");
    std::fs::write(&path, &b).unwrap();
    let e = Capture::open(&path).unwrap_err();
    assert!(matches!(e, CaptureError::BadHeader { .. }), "{e}");
    assert!(
        e.to_string().contains("j.kwcap") && e.to_string().contains("JSON"),
        "{e}"
    );
}

/// A capture of one buffer `b0` whose frame is `chunks` chunks of `raw_len` bytes each, every
/// one the compressed bytes `frame`, with a header whose checksum is recomputed so that the
/// file opens (what a writer that lies would write).
fn forged(dir: &TempDir, name: &str, frame: &[u8], chunks: usize, raw_len: u64) -> Capture {
    let s = sample(&[4096], 1024);
    let b = &s.bytes;
    let at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap()) as usize;
    let (offset, len) = (at(16), at(24));
    assert!(offset > 64 && offset + len + 8 == b.len());
    let mut h: serde_json::Value = serde_json::from_slice(&b[offset..offset + len]).unwrap();
    h["chunk_size"] = raw_len.into();
    let f = &mut h["frames"][0];
    f["raw_len"] = (raw_len * chunks as u64).into();
    f["compressed_len"] = (frame.len() * chunks).into();
    f["chunks"] = (0..chunks)
        .map(|k| {
            serde_json::json!({
                "offset": 64 + k * frame.len(), "compressed_len": frame.len(), "raw_len": raw_len,
                "blake3": blake3::hash(frame).to_hex().to_string(),
            })
        })
        .collect();
    h["buffers"][0]["raw_len"] = (raw_len * chunks as u64).into();
    let text = serde_json::to_vec(&h).unwrap();
    let mut out = b[..64].to_vec();
    for _ in 0..chunks {
        out.extend_from_slice(frame);
    }
    let header_at = out.len() as u64;
    out[16..24].copy_from_slice(&header_at.to_le_bytes());
    out[24..32].copy_from_slice(&(text.len() as u64).to_le_bytes());
    out[32..64].copy_from_slice(blake3::hash(&text).as_bytes());
    out.extend_from_slice(&text);
    out.extend_from_slice(b"KWCAPEND");
    let path = dir.path().join(name);
    std::fs::write(&path, &out).unwrap();
    Capture::open(&path).expect("the header's own checks pass")
}

/// A header that declares more than its frames state (256 KiB over four zstd frames of one
/// byte; with 1 GiB chunks `verify` used about 4 GB on two cores, 2 x the chunk size per
/// core): refused before any memory is set aside.
#[test]
fn a_header_declaring_more_than_its_frames_hold_costs_no_memory() {
    let dir = TempDir::new("declared");
    let tiny = zstd::bulk::compress(&[7u8], 1).unwrap();
    let c = forged(&dir, "declared.kwcap", &tiny, 4, 1 << 16);
    for e in [c.verify().unwrap_err(), c.read_buffer("b0").unwrap_err()] {
        let m = e.to_string();
        assert!(
            m.contains("declared.kwcap")
                && m.contains("its zstd frame holds 1 bytes, the header says 65536"),
            "{m}"
        );
    }
}

/// The same, with a frame that states the declared size in its own header too (a zstd frame
/// header is the writer's to forge as well): one byte of data cannot stand for a gigabyte,
/// whatever the headers say, so nothing is allocated.
#[test]
fn frames_that_state_more_than_their_bytes_can_hold_cost_no_memory() {
    let dir = TempDir::new("forged");
    let chunk = 1u64 << 30;
    // A frame of one byte whose header says 2^30: the single-segment frame header's
    // content-size field widened to 4 bytes (descriptor bits 6-7) and rewritten.
    let mut frame = zstd::bulk::compress(&[7u8], 1).unwrap();
    assert_eq!(
        frame[4] & 0xC0,
        0x00,
        "a 1-byte frame has a 1-byte size field"
    );
    frame[4] = (frame[4] & 0x3F) | 0x80;
    frame.splice(5..6, (chunk as u32).to_le_bytes());
    assert_eq!(
        zstd::zstd_safe::get_frame_content_size(&frame).unwrap(),
        Some(chunk)
    );
    let c = forged(&dir, "forged.kwcap", &frame, 1, chunk);
    for e in [c.verify().unwrap_err(), c.read_buffer("b0").unwrap_err()] {
        let m = e.to_string();
        assert!(m.contains("cannot hold the 1073741824"), "{m}");
    }
}
