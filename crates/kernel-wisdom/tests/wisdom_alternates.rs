//! A record's alternates (`WisdomRecord::alternates`: other configurations measured at its
//! size): at a size nobody tuned, one is taken instead of the record's configuration when its
//! time there, scaled by how evenly its blocks spread over the compute units here against
//! there, predicts it `ALTERNATE_GAIN` times as fast, and its own balance here (blocks / (units x
//! waves)) is at least `KEEP_FILL`. A null CUDA device (132 compute units, like an H100) records the
//! geometry of every launch, so no GPU is needed.

mod common;

use kernel_wisdom::{demo_kernels, WisdomKernel, ALTERNATE_GAIN};
use kw_core::device::BackendKind;
use kw_core::null_device::NullDevice;
use kw_core::wisdom::*;
use std::sync::{Arc, Mutex};

#[test]
fn an_alternate_whose_blocks_spread_more_evenly_is_taken_between_records() {
    let blocks = Arc::new(Mutex::new(Vec::new()));
    let log = blocks.clone();
    let device = NullDevice::new(BackendKind::Cuda).on_launch(move |g| {
        log.lock().unwrap().push((g.block[0], g.grid[0]));
        Ok(())
    });
    let dir = common::temp_dir("alternates");
    let kernel =
        WisdomKernel::new(demo_kernels::cuda::vector_add().unwrap(), Arc::new(device)).unwrap();
    let space = kernel.space().clone();
    let wisdom_device = common::null_cuda_wisdom_device();
    // 2^20 elements in blocks of 1024 x 8: 128 blocks, one wave of 132 units (0.97), 1 ms.
    let mut record = common::vector_add_record(wisdom_device, &space, 1 << 20, 1024, 8);
    record.objective.median_ms = 1.0;
    let alt = |bx: i64, ept: i64, ms: f64| {
        let mut config = record.config.clone();
        config.set("block_size_x", bx);
        config.set("elems_per_thread", ept);
        Alternate {
            config,
            median_ms: ms,
        }
    };
    record.alternates = vec![
        // 512 blocks there (0.97), a little slower there.
        alt(256, 8, 1.05),
        // Faster there, but 64 blocks (0.48): its balance is too low to be taken.
        alt(1024, 16, 0.5),
        // Evenly spread everywhere, but three times as slow.
        alt(32, 1, 3.0),
    ];
    add_record(&dir, "vector_add", record, ReplacePolicy::Always).unwrap();
    let kernel = kernel.with_wisdom_dir(&dir);
    let launch = |n: usize| {
        kernel.launch(&common::null_vector_add_args(n)).unwrap();
        blocks.lock().unwrap().pop().unwrap()
    };
    let bx = |n: i64| {
        kernel
            .choice(&[n])
            .config
            .get("block_size_x")
            .unwrap()
            .clone()
    };

    // At the record's own size: its configuration.
    assert_eq!(kernel.choice(&[1 << 20]).step, Step::ExactDeviceExactSize);
    assert_eq!(launch(1 << 20), (1024, 128));
    // 1.25 x 2^20: the record's 160 blocks make a second wave of 28 (0.61 against 0.97: it
    // predicts 0.63 of its speed there); 256 x 8 makes 640 blocks (0.97), predicted 0.95.
    let n = 1_310_720;
    const { assert!(0.95 >= ALTERNATE_GAIN * 0.63) };
    assert_eq!(kernel.choice(&[n as i64]).step, Step::DeviceNearestSize);
    assert_eq!(launch(n), (256, 640));
    // Just above 2^20: 131 blocks, as even as there; the record's own configuration.
    assert_eq!(bx(1_069_547), 1024.into());
    // Below: 2^19 gives the record 64 blocks (0.48, predicted 0.5) and 256 x 8 256 blocks
    // (0.97, predicted 0.95): the alternate.
    assert_eq!(bx(1 << 19), 256.into());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A record whose alternate has a time that is not a positive finite number is refused when
/// it is made (the selection would divide by it); in a file, such an alternate (and one that
/// is the record's own configuration, one given twice, or one with a parameter or value the
/// record's space lacks) is left out with a note, and the record is kept.
#[test]
fn a_bad_alternate_costs_only_itself() {
    let space = WisdomKernel::new(
        demo_kernels::cuda::vector_add().unwrap(),
        Arc::new(NullDevice::new(BackendKind::Cuda)),
    )
    .unwrap()
    .space()
    .clone();
    let mut record =
        common::vector_add_record(common::null_cuda_wisdom_device(), &space, 1 << 20, 1024, 8);
    let other = |bx: i64| {
        let mut c = record.config.clone();
        c.set("block_size_x", bx);
        c
    };
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let mut r = record.clone();
        r.alternates = vec![Alternate {
            config: other(256),
            median_ms: bad,
        }];
        let why = r.validate().unwrap_err();
        assert!(why.starts_with("alternate #1 ("), "{why}");
    }
    let mut unknown = other(128);
    unknown.set("no_such_parameter", 3);
    record.alternates = vec![
        Alternate {
            config: other(256),
            median_ms: 0.0,
        },
        Alternate {
            config: record.config.clone(),
            median_ms: 1.5,
        },
        Alternate {
            config: other(512),
            median_ms: 1.2,
        },
        Alternate {
            config: other(512),
            median_ms: 1.3,
        },
        Alternate {
            config: unknown,
            median_ms: 1.2,
        },
        Alternate {
            config: other(48),
            median_ms: 1.2,
        },
    ];
    let mut file = WisdomFile::new("vector_add");
    file.records.push(record.clone());
    // Written as a user's edit would be (save checks nothing of the alternates).
    let dir = common::temp_dir("bad-alternates");
    let path = dir.join("vector_add.json");
    std::fs::write(&path, serde_json::to_string_pretty(&file).unwrap()).unwrap();
    let loaded = WisdomFile::load(&path).unwrap();
    assert!(loaded.rejected.is_empty(), "{:?}", loaded.rejected);
    assert_eq!(loaded.records.len(), 1);
    let kept: Vec<_> = loaded.records[0]
        .alternates
        .iter()
        .map(|a| a.median_ms)
        .collect();
    assert_eq!(kept, vec![1.2], "{:?}", loaded.notes);
    assert_eq!(loaded.notes.len(), 5, "{:?}", loaded.notes);
    for (n, why) in [
        (1, "ms is not a positive finite time"),
        (2, "the record's own configuration"),
        (4, "given twice"),
        (
            5,
            "`no_such_parameter` is not in the record's own tuning space",
        ),
        (6, "value 48 of `block_size_x` is not declared"),
    ] {
        let tag = format!("record #1: alternate #{n} (");
        let line = loaded.notes.iter().find(|l| l.starts_with(&tag));
        assert!(
            line.is_some_and(|l| l.contains(why)),
            "{n} {why}: {:?}",
            loaded.notes
        );
    }
    // Writing another record into the file rewrites it without the bad alternates (they are
    // advisory: a warning, not a refusal after a whole tuning run).
    let mut other = record.clone();
    other.problem_size = vec![1 << 21];
    other.alternates.clear();
    add_record(&dir, "vector_add", other, ReplacePolicy::Always).unwrap();
    let rewritten = WisdomFile::load(&path).unwrap();
    assert_eq!(rewritten.records.len(), 2);
    assert!(rewritten.notes.is_empty(), "{:?}", rewritten.notes);
    let kept: Vec<_> = rewritten.records[0]
        .alternates
        .iter()
        .map(|a| a.median_ms)
        .collect();
    assert_eq!(kept, vec![1.2]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// An alternate that does not compile gives way to the record's own configuration (not the
/// default): the record's configuration is known to work at its size.
#[test]
fn an_alternate_that_does_not_compile_gives_way_to_the_records_own() {
    let blocks = Arc::new(Mutex::new(Vec::new()));
    let log = blocks.clone();
    let device = NullDevice::new(BackendKind::Cuda)
        .on_launch(move |g| {
            log.lock().unwrap().push(g.block[0]);
            Ok(())
        })
        .on_compile(|defines| {
            let bx = defines.iter().find(|(n, _)| n == "block_size_x");
            match bx {
                Some((_, v)) if v == "256" => Err("no 256-thread blocks here".into()),
                _ => Ok(()),
            }
        });
    let dir = common::temp_dir("alternates-compile");
    let kernel =
        WisdomKernel::new(demo_kernels::cuda::vector_add().unwrap(), Arc::new(device)).unwrap();
    let space = kernel.space().clone();
    let mut record =
        common::vector_add_record(common::null_cuda_wisdom_device(), &space, 1 << 20, 1024, 8);
    record.objective.median_ms = 1.0;
    let mut config = record.config.clone();
    config.set("block_size_x", 256);
    record.alternates = vec![Alternate {
        config,
        median_ms: 1.05,
    }];
    assert_ne!(
        kernel.default_config().get("block_size_x"),
        Some(&1024.into()),
        "the default differs from the record's own"
    );
    add_record(&dir, "vector_add", record, ReplacePolicy::Always).unwrap();
    let kernel = kernel.with_wisdom_dir(&dir);
    let n = 1_310_720usize;
    assert_eq!(
        kernel.choice(&[n as i64]).config.get("block_size_x"),
        Some(&256.into())
    );
    kernel.launch(&common::null_vector_add_args(n)).unwrap();
    assert_eq!(blocks.lock().unwrap().pop(), Some(1024));
    assert_eq!(kernel.failures().len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}
