//! The byte-shuffle filter: recorded per frame, bitwise round trips, smaller files for smooth
//! floats, and files written without it (as before the filter existed) still read.

mod common;

use common::{random_bytes, smooth_f32, TempDir};
use kw_capture::{Capture, CaptureBuffer, CaptureWriter, WriteOptions};

fn buffers() -> Vec<CaptureBuffer> {
    vec![
        CaptureBuffer::new("smooth", "f32", smooth_f32(300_001, 0.5)),
        CaptureBuffer::new("doubles", "f64", random_bytes(8 * 5000 + 3, 9)),
        CaptureBuffer::new("halves", "u16", random_bytes(2 * 7001, 5)),
        CaptureBuffer::new("bytes", "u8", random_bytes(777, 6)),
        CaptureBuffer::new("opaque", "my_struct", random_bytes(4096, 7)),
    ]
}

fn write(dir: &TempDir, stem: &str, shuffle: bool) -> Capture {
    let writer = CaptureWriter::new(WriteOptions {
        chunk_size: 1 << 16,
        shuffle,
        ..WriteOptions::default()
    });
    let w = writer
        .write(dir.path(), stem, &serde_json::json!({}), &buffers())
        .expect("write");
    Capture::open(&w.path).expect("open")
}

fn filters(c: &Capture) -> Vec<Option<String>> {
    c.header()
        .buffers
        .iter()
        .map(|b| c.header().frames[b.frame].filter.clone())
        .collect()
}

#[test]
fn shuffled_and_plain_files_read_back_bitwise() {
    let dir = TempDir::new("filter");
    let shuffled = write(&dir, "shuffled", true);
    let plain = write(&dir, "plain", false);
    assert_eq!(
        filters(&shuffled),
        [
            Some("shuffle4"),
            Some("shuffle8"),
            Some("shuffle2"),
            None,
            None
        ]
        .map(|f| f.map(str::to_string))
    );
    assert!(filters(&plain).iter().all(Option::is_none));
    // A file without the filter has no `filter` key at all: exactly what writers before the
    // filter produced, which this reader must keep reading.
    let raw = std::fs::read(plain.path()).unwrap();
    let text = String::from_utf8_lossy(&raw);
    assert!(!text.contains("\"filter\""));
    assert!(
        String::from_utf8_lossy(&std::fs::read(shuffled.path()).unwrap())
            .contains("\"filter\":\"shuffle4\"")
    );
    for c in [&shuffled, &plain] {
        c.verify().expect("verify");
        for b in buffers() {
            assert!(c.read_buffer(&b.name).unwrap() == b.bytes(), "{}", b.name);
        }
    }
    let size =
        |c: &Capture, name: &str| c.buffers().find(|b| b.name == name).unwrap().compressed_len;
    assert!(
        size(&shuffled, "smooth") * 3 < size(&plain, "smooth") * 2,
        "shuffled {} vs plain {}",
        size(&shuffled, "smooth"),
        size(&plain, "smooth")
    );
}
