//! The wisdom's fill rule (`kw_core::wisdom::select_filling`): at a size nobody tuned, the
//! nearest record's configuration is passed over when it would leave most of the device idle
//! there, in favour of one as near or at the next distance that keeps the device busy; and
//! equal distances go to the nearer volume, then the larger problem. A null CUDA device (132
//! compute units, like an H100) records the geometry of every launch, so no GPU is needed.

mod common;

use kernel_wisdom::{demo_kernels, WisdomKernel};
use kw_core::device::BackendKind;
use kw_core::null_device::NullDevice;
use kw_core::space::TuningSpace;
use kw_core::wisdom::*;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

fn temp_dir(name: &str) -> PathBuf {
    common::temp_dir(&format!("fill-{name}"))
}

/// A record of the null device for vector_add: `n` elements, blocks of `bx` threads each
/// doing `ept` elements (so `n / (bx * ept)` blocks).
fn record(space: &TuningSpace, n: i64, bx: i64, ept: i64) -> WisdomRecord {
    common::vector_add_record(common::null_cuda_wisdom_device(), space, n, bx, ept)
}

/// vector_add's tuning space (on a null CUDA device).
fn vector_add_space() -> TuningSpace {
    let probe = WisdomKernel::new(
        demo_kernels::cuda::vector_add().unwrap(),
        Arc::new(NullDevice::new(BackendKind::Cuda)),
    )
    .unwrap();
    probe.space().clone()
}

/// The fill of a vector_add record's configuration at `size` on 132 units, computed as the
/// runtime does.
fn vector_add_fill(r: &WisdomRecord, size: &[i64]) -> Option<f64> {
    let per_block =
        r.config.get("block_size_x")?.as_int()? * r.config.get("elems_per_thread")?.as_int()?;
    Some(((size[0] as f64 / per_block as f64).ceil() / 132.0).min(1.0))
}

#[test]
fn a_record_that_would_idle_most_of_the_device_gives_way_to_the_second_nearest() {
    let blocks = Arc::new(Mutex::new(Vec::new()));
    let log = blocks.clone();
    let device = NullDevice::new(BackendKind::Cuda).on_launch(move |g| {
        log.lock().unwrap().push((g.block[0], g.grid[0]));
        Ok(())
    });
    let units = 132.0;
    let dir = temp_dir("rule");
    let kernel =
        WisdomKernel::new(demo_kernels::cuda::vector_add().unwrap(), Arc::new(device)).unwrap();
    let space = kernel.space().clone();
    // 2^20 elements in blocks of 1024 x 8: 128 blocks there (97% of 132 units).
    add_record(
        &dir,
        "vector_add",
        record(&space, 1 << 20, 1024, 8),
        ReplacePolicy::IfBetter,
    )
    .unwrap();
    // 2^17 elements in blocks of 128 x 4: 256 blocks there.
    add_record(
        &dir,
        "vector_add",
        record(&space, 1 << 17, 128, 4),
        ReplacePolicy::IfBetter,
    )
    .unwrap();
    let kernel = kernel.with_wisdom_dir(&dir);
    // Launches vector_add over n elements; the (block, grid) the device saw.
    let launch = |n: usize| {
        kernel.launch(&common::null_vector_add_args(n)).unwrap();
        blocks.lock().unwrap().pop().unwrap()
    };

    // 600,000 is nearer 2^20 on a log scale, but 2^20's configuration would give 74 blocks
    // (56% of the units, against 97% at its own size): the second nearest keeps them busy.
    let n = 600_000usize;
    let near = (1u64 << 20) as f64 / 8192.0 / units;
    assert!(74.0 / units < KEEP_FILL * near);
    let choice = kernel.choice(&[n as i64]);
    assert_eq!(choice.step, Step::DeviceNearestSize);
    assert_eq!(choice.record.as_ref().unwrap().problem_size, vec![1 << 17]);
    assert_eq!(launch(n), (128, (n as u32).div_ceil(512)));

    // 900,000: 110 blocks (83%) keeps more than 75% of the 97%: the nearest record decides.
    let n = 900_000usize;
    let choice = kernel.choice(&[n as i64]);
    assert_eq!(choice.record.as_ref().unwrap().problem_size, vec![1 << 20]);
    assert_eq!(launch(n), (1024, (n as u32).div_ceil(8192)));

    // Above every record, the nearest (2^20) fills the device anyway.
    let choice = kernel.choice(&[4 << 20]);
    assert_eq!(choice.record.as_ref().unwrap().problem_size, vec![1 << 20]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_the_geometry_the_nearest_record_decides_and_explain_says_why_when_it_does_not() {
    let space = vector_add_space();
    let records = vec![
        record(&space, 1 << 20, 1024, 8),
        record(&space, 1 << 17, 128, 4),
    ];
    let query = Query {
        device_name: "null device".into(),
        architecture: "sm_90".into(),
        backend: "cuda".into(),
        problem_size: vec![600_000],
    };
    // No fill known (`kw wisdom explain`, or a grid that needs the launch's arguments).
    let plain = select(&records, &query, |_| Ok(()));
    assert_eq!(plain.record, Some(0));
    assert!(plain.fill_note.is_none());
    let filled = select_filling(&records, &query, |_| Ok(()), Some(&vector_add_fill));
    assert_eq!(filled.record, Some(1));
    let text = explain(&records, &query, &filled);
    assert!(text.contains("fill rule: the nearest record #1"), "{text}");
    // Numbered by position in the file, where rejected records keep their places.
    let text = explain_numbered(&records, &[3, 7], &query, &filled);
    assert!(
        text.contains("fill rule: the nearest record #3 (problem size 1048576)")
            && text.contains("; record #7 (problem size"),
        "{text}"
    );
    // An unknown fill for either record keeps the nearest.
    let partial = |r: &WisdomRecord, size: &[i64]| {
        (r.problem_size[0] == 1 << 20)
            .then(|| vector_add_fill(r, size))
            .flatten()
    };
    let kept = select_filling(&records, &query, |_| Ok(()), Some(&partial));
    assert_eq!(kept.record, Some(0));
}

#[test]
fn equal_distances_go_to_the_nearer_volume_and_the_fill_rule_walks_to_the_next_distance() {
    let space = vector_add_space();
    let query = |size: Vec<i64>| Query {
        device_name: "null device".into(),
        architecture: "sm_90".into(),
        backend: "cuda".into(),
        problem_size: size,
    };
    let with_size = |n: i64, bx: i64, ept: i64, size: Vec<i64>| {
        let mut r = record(&space, n, bx, ept);
        r.problem_size = size;
        r
    };
    // 2^9 x 2^11 lies 2 ln 2 from three records (2^8 x 2^8 is 4 ln 2 away): of volumes 2^22,
    // 2^18 and 2^20, the one of the query's volume, 2^10 x 2^10, goes first.
    let records = vec![
        with_size(1 << 20, 256, 8, vec![1 << 8, 1 << 8]),
        with_size(1 << 20, 256, 8, vec![1 << 10, 1 << 12]),
        with_size(1 << 20, 256, 8, vec![1 << 8, 1 << 10]),
        with_size(1 << 20, 256, 8, vec![1 << 10, 1 << 10]),
    ];
    let q = query(vec![1 << 9, 1 << 11]);
    let plain = select(&records, &q, |_| Ok(()));
    assert_eq!(plain.record, Some(3));
    // In another order in the file, the same record.
    let reversed: Vec<_> = records.iter().rev().cloned().collect();
    assert_eq!(select(&reversed, &q, |_| Ok(())).record, Some(0));
    // Without it, volumes 2^18 and 2^22 are as near 2^20: the larger problem goes first.
    let two = vec![records[2].clone(), records[1].clone()];
    assert_eq!(select(&two, &q, |_| Ok(())).record, Some(1));

    // The fill rule walks through the records as near. On one axis: 2^18 lies as far from 2^20 as
    // from 2^16 (volumes as near too), and the larger goes first; its configuration (8192
    // elements a block: 32 blocks here, 128 at its own size) would idle most of the device.
    // The next as near, 2^16's (128 a block), keeps it busy.
    let records = vec![
        record(&space, 1 << 20, 1024, 8),
        record(&space, 1 << 16, 128, 1),
        record(&space, 1 << 22, 1024, 8),
    ];
    let q = query(vec![1 << 18]);
    assert_eq!(select(&records, &q, |_| Ok(())).record, Some(0));
    let filled = select_filling(&records, &q, |_| Ok(()), Some(&vector_add_fill));
    assert_eq!(filled.record, Some(1));
    assert!(filled.fill_note.is_some());
    // On to the next distance: the nearest (2^20) would idle most of the device; 2^16, as near,
    // with 8192 elements a block too, would fill no more of it; 2^21 (3 ln 2 away, 128 a block)
    // keeps it busy, before 2^14 (4 ln 2).
    let records = vec![
        record(&space, 1 << 14, 128, 1),
        record(&space, 1 << 21, 128, 1),
        record(&space, 1 << 16, 1024, 8),
        record(&space, 1 << 20, 1024, 8),
    ];
    let filled = select_filling(&records, &q, |_| Ok(()), Some(&vector_add_fill));
    assert_eq!(filled.record, Some(1));
    // Not farther: with 2^21 idling the device too, 2^14's configuration (which keeps its own
    // small fill anywhere) is not taken; the nearest stays.
    let records = vec![
        record(&space, 1 << 20, 1024, 8),
        record(&space, 1 << 21, 1024, 8),
        record(&space, 1 << 14, 128, 1),
    ];
    let filled = select_filling(&records, &q, |_| Ok(()), Some(&vector_add_fill));
    assert_eq!(filled.record, Some(0));
    assert!(filled.fill_note.is_none());
    // Where the larger one keeps its fill (2048 elements a block: 128 blocks here, 97% of the
    // units, as at its own size), it decides.
    let records = vec![
        record(&space, 1 << 20, 256, 8),
        record(&space, 1 << 16, 128, 1),
    ];
    let filled = select_filling(&records, &q, |_| Ok(()), Some(&vector_add_fill));
    assert_eq!(filled.record, Some(0));
    assert!(filled.fill_note.is_none());
}
