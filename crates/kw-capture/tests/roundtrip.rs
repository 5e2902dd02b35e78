//! Round trips: every buffer comes back bit for bit; identical buffers are stored once.

mod common;

use common::{random_bytes, smooth_f32, TempDir};
use kw_capture::{
    write_capture, BackgroundWriter, Capture, CaptureBuffer, CaptureJob, CaptureWriter,
    WriteOptions,
};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

fn small_chunks() -> WriteOptions {
    WriteOptions {
        chunk_size: 4096,
        ..WriteOptions::default()
    }
}

#[test]
fn round_trip_is_bitwise_for_many_types_and_sizes() {
    let dir = TempDir::new("rt");
    let cases: Vec<(&str, &str, Vec<u8>)> = vec![
        ("empty", "f32", Vec::new()),
        ("one_byte", "u8", vec![0xAB]),
        ("f32_small", "f32", smooth_f32(1000, 0.0)),
        ("f64_random", "f64", random_bytes(8 * 3001, 1)),
        ("i32_exact_chunk", "i32", random_bytes(4096, 2)),
        ("i64_chunk_plus_one", "i64", random_bytes(4097, 3)),
        ("u16_many_chunks", "u16", random_bytes(4096 * 7 + 5, 4)),
        ("f32_big_smooth", "f32", smooth_f32(50_000, 1.0)),
        ("zeros", "f32", vec![0; 100_000]),
    ];
    let buffers: Vec<CaptureBuffer> = cases
        .iter()
        .map(|(n, t, d)| CaptureBuffer::new(*n, *t, d.clone()))
        .collect();
    let meta = serde_json::json!({"tuning_key": "vector_add", "problem_size": [1000, 1, 1], "nested": {"x": [1.5, null, "s"]}});
    for threads in [1, 2, 3] {
        let writer = CaptureWriter::new(WriteOptions {
            threads,
            ..small_chunks()
        });
        let written = writer
            .write(dir.path(), &format!("rt{threads}"), &meta, &buffers)
            .expect("write");
        assert_eq!(written.path.parent(), Some(dir.path()));
        let cap = Capture::open(&written.path).expect("open");
        assert_eq!(cap.metadata(), &meta);
        assert_eq!(
            cap.file_len(),
            std::fs::metadata(&written.path).unwrap().len()
        );
        assert_eq!(cap.file_len(), written.sizes.file_len);
        let total: u64 = cases.iter().map(|c| c.2.len() as u64).sum();
        assert_eq!(cap.raw_len(), total);
        let infos: Vec<_> = cap.buffers().collect();
        assert_eq!(infos.len(), cases.len());
        for ((name, ty, data), info) in cases.iter().zip(&infos) {
            assert_eq!(
                (info.name, info.elem_type, info.raw_len),
                (*name, *ty, data.len() as u64)
            );
            let back = cap.read_buffer(name).expect("read");
            assert_eq!(back.len(), data.len());
            assert!(back == *data, "buffer {name} differs");
        }
        let summary = cap.verify().expect("verify");
        assert_eq!(summary.frames, cases.len());
        // The stored raw hash is plain BLAKE3 of the bytes.
        for (f, (_, _, data)) in cap.header().frames.iter().zip(&cases) {
            assert_eq!(f.blake3, blake3::hash(data).to_hex().to_string());
        }
    }
}

#[test]
fn duplicates_are_stored_once() {
    let dir = TempDir::new("dup");
    let a = random_bytes(100_000, 10);
    let b = random_bytes(100_000, 11);
    let shared: Arc<[u8]> = Arc::from(a.clone());
    let dup = vec![
        CaptureBuffer::new("a", "f32", a.clone()),
        CaptureBuffer::new("b", "f32", b.clone()),
        CaptureBuffer::new("a_again", "f32", a.clone()),
        CaptureBuffer::new("a_arc", "i32", shared.clone()),
        CaptureBuffer::new("a_arc2", "i32", shared),
        CaptureBuffer::new("e1", "u8", Vec::new()),
        CaptureBuffer::new("e2", "u8", Vec::new()),
    ];
    let distinct = vec![
        CaptureBuffer::new("a", "f32", a.clone()),
        CaptureBuffer::new("b", "f32", b.clone()),
        CaptureBuffer::new("c", "f32", random_bytes(100_000, 12)),
        CaptureBuffer::new("d", "i32", random_bytes(100_000, 13)),
        CaptureBuffer::new("e", "i32", random_bytes(100_000, 14)),
    ];
    let meta = serde_json::json!({});
    let p_dup = write_capture(dir.path(), "dup", &meta, dup).expect("write dup");
    let p_distinct =
        write_capture(dir.path(), "distinct", &meta, distinct).expect("write distinct");
    let len_dup = std::fs::metadata(&p_dup).unwrap().len();
    let len_distinct = std::fs::metadata(&p_distinct).unwrap().len();
    assert!(
        len_dup < 250_000,
        "dup file {len_dup} bytes: a stored more than once?"
    );
    assert!(len_distinct > 500_000, "distinct file {len_distinct} bytes");
    let cap = Capture::open(&p_dup).expect("open");
    assert_eq!(cap.header().frames.len(), 3, "a, b and the empty buffer");
    let frame = |n: &str| cap.buffers().find(|b| b.name == n).unwrap().frame;
    assert_eq!(frame("a"), frame("a_again"));
    assert_eq!(frame("a"), frame("a_arc"));
    assert_eq!(frame("a"), frame("a_arc2"));
    assert_ne!(frame("a"), frame("b"));
    assert_eq!(frame("e1"), frame("e2"));
    assert!(cap.buffers().find(|b| b.name == "a_arc").unwrap().shared);
    assert!(!cap.buffers().find(|b| b.name == "b").unwrap().shared);
    assert_eq!(cap.read_buffer("a_arc2").unwrap(), a);
    assert_eq!(cap.read_buffer("b").unwrap(), b);
    assert_eq!(cap.read_buffer("e2").unwrap(), Vec::<u8>::new());
    cap.verify().expect("verify");
}

#[test]
fn hostile_stems_stay_inside_the_directory() {
    let dir = TempDir::new("names");
    let inner = dir.path().join("inner");
    std::fs::create_dir(&inner).unwrap();
    for stem in ["../../etc/x", "/abs", "..", "a\u{0}b\nc", ""] {
        let p = write_capture(&inner, stem, &serde_json::json!(null), vec![]).expect("write");
        assert_eq!(
            p.parent(),
            Some(inner.as_path()),
            "{stem:?} -> {}",
            p.display()
        );
        Capture::open(&p).expect("open").verify().expect("verify");
    }
    assert_eq!(dir.entries(), vec!["inner".to_string()]);
}

#[test]
fn typed_metadata_and_errors_for_bad_input() {
    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Meta {
        tuning_key: String,
        problem_size: Vec<u64>,
    }
    let dir = TempDir::new("typed");
    let m = Meta {
        tuning_key: "k".into(),
        problem_size: vec![4, 5],
    };
    let p = write_capture(
        dir.path(),
        "typed",
        &m,
        vec![CaptureBuffer::new("x", "u8", vec![1, 2, 3])],
    )
    .unwrap();
    let cap = Capture::open(&p).unwrap();
    assert_eq!(cap.metadata_as::<Meta>().unwrap(), m);
    let e = cap.metadata_as::<Vec<u8>>().unwrap_err();
    assert!(e.to_string().contains(&p.display().to_string()), "{e}");
    let e = cap.read_buffer("nope").unwrap_err();
    assert!(
        e.to_string().contains("nope") && e.to_string().contains("typed.kwcap"),
        "{e}"
    );

    // Duplicate names and bad options are rejected, and nothing is left behind.
    let dup = vec![
        CaptureBuffer::new("x", "u8", vec![1]),
        CaptureBuffer::new("x", "u8", vec![2]),
    ];
    let e = write_capture(dir.path(), "dupnames", &(), dup).unwrap_err();
    assert!(
        e.to_string().contains("dupnames.kwcap") && e.to_string().contains("`x`"),
        "{e}"
    );
    let bad = CaptureWriter::new(WriteOptions {
        chunk_size: 1000,
        ..WriteOptions::default()
    });
    let e = bad.write(dir.path(), "badopts", &(), &[]).unwrap_err();
    assert!(e.to_string().contains("chunk size"), "{e}");
    assert_eq!(dir.entries(), vec!["typed.kwcap".to_string()]);
}

#[test]
fn background_writer_writes_in_order_and_flushes() {
    let dir = TempDir::new("bg");
    let writer = BackgroundWriter::new(small_chunks()).expect("start");
    let data: Vec<Vec<u8>> = (0..5)
        .map(|i| random_bytes(10_000 * (i + 1), i as u64))
        .collect();
    for (i, d) in data.iter().enumerate() {
        writer.submit(CaptureJob {
            dir: dir.path().to_path_buf(),
            file_stem: format!("job{i}"),
            metadata: serde_json::json!({"i": i}),
            buffers: vec![CaptureBuffer::new("d", "u8", d.clone())],
        });
    }
    // A job that fails: its directory does not exist.
    writer.submit(CaptureJob {
        dir: dir.path().join("missing"),
        file_stem: "bad".into(),
        metadata: serde_json::json!(null),
        buffers: vec![],
    });
    let results = writer.flush();
    assert_eq!(results.len(), 6);
    assert_eq!(writer.pending(), 0);
    for (i, r) in results.iter().take(5).enumerate() {
        let w = r.as_ref().expect("written");
        let cap = Capture::open(&w.path).unwrap();
        assert_eq!(cap.metadata()["i"], i);
        assert_eq!(cap.read_buffer("d").unwrap(), data[i]);
    }
    let e = results[5].as_ref().unwrap_err();
    assert!(e.to_string().contains("missing"), "{e}");
    assert!(writer.flush().is_empty());
    // Dropping flushes: a job submitted just before the drop is on disk afterwards.
    writer.submit(CaptureJob {
        dir: dir.path().to_path_buf(),
        file_stem: "last".into(),
        metadata: serde_json::json!(null),
        buffers: vec![CaptureBuffer::new("d", "u8", vec![7; 100])],
    });
    drop(writer);
    assert!(Capture::open(dir.path().join("last.kwcap")).is_ok());
}
