//! Launches of an argument shape seen before skip re-evaluating the problem size and the
//! buffer checks (`kernel/shape_memo.rs`): they must behave exactly as the full path does. A null
//! device (`kw_core::null_device`) records each launch's geometry and can refuse a
//! configuration, so no GPU is needed.

use kernel_wisdom::{demo_kernels, lit, Config, Error, WisdomKernel};
use kw_core::backend::{KernelArg, RawMem};
use kw_core::device::BackendKind;
use kw_core::null_device::NullDevice;
use kw_core::scalar::ScalarType;
use std::sync::{Arc, Mutex};

/// The launches a null device saw: (block size x, grid x).
type Seen = Arc<Mutex<Vec<(u32, u32)>>>;

/// A null CUDA device recording every launch, refusing blocks of `refuse` threads.
fn recorder(refuse: u32) -> (Arc<NullDevice>, Seen) {
    let seen = Seen::default();
    let log = seen.clone();
    let dev = NullDevice::new(BackendKind::Cuda).on_launch(move |g| {
        log.lock().unwrap().push((g.block[0], g.grid[0]));
        if g.block[0] == refuse {
            Err("refused by the test device".into())
        } else {
            Ok(())
        }
    });
    (Arc::new(dev), seen)
}

fn buf(ptr: u64, len: usize) -> KernelArg<'static> {
    // SAFETY: the recording device never touches memory.
    unsafe { KernelArg::raw_buffer(RawMem::cuda(ptr, len * 4), ScalarType::F32) }
}

/// vector_add's arguments: c, a, b of the given lengths, and n.
fn args(c: usize, a: usize, b: usize, n: i32) -> [KernelArg<'static>; 4] {
    [buf(0x1000, c), buf(0x2000, a), buf(0x3000, b), n.into()]
}

fn take(seen: &Seen) -> Vec<(u32, u32)> {
    std::mem::take(&mut *seen.lock().unwrap())
}

#[test]
fn repeated_shapes_launch_as_the_full_path_does() {
    let (d, seen) = recorder(0);
    // `b` must hold n + 8 elements (declared), the others n (by default).
    let mut builder = demo_kernels::cuda::vector_add_builder();
    builder.buffer_len("b", kernel_wisdom::arg("n") + lit(8));
    let k = WisdomKernel::new(builder.build().unwrap(), d).unwrap();
    let block = k.default_config().get("block_size_x").unwrap();
    let block = block.as_int().unwrap() as u32;
    let grid = |n: u32| n.div_ceil(block);

    for _ in 0..3 {
        k.launch(&args(1000, 1000, 1008, 1000)).unwrap();
    }
    assert_eq!(take(&seen), vec![(block, grid(1000)); 3]);

    // The same shape but for one length: checked again, and refused.
    for _ in 0..2 {
        match k.launch(&args(1000, 1000, 1007, 1000)) {
            Err(Error::BufferTooShort {
                index, required, ..
            }) => assert_eq!((index, required), (2, 1008)),
            other => panic!("expected BufferTooShort, got {other:?}"),
        }
        match k.launch(&args(999, 1000, 1008, 1000)) {
            Err(Error::BufferTooShort {
                index, required, ..
            }) => assert_eq!((index, required), (0, 1000)),
            other => panic!("expected BufferTooShort, got {other:?}"),
        }
    }
    assert!(take(&seen).is_empty(), "nothing launched for short buffers");

    // A different scalar is a different problem size, with its own geometry; going back
    // to the first shape gives the first geometry again.
    k.launch(&args(5000, 5000, 5008, 5000)).unwrap();
    k.launch(&args(5000, 5000, 5008, 5000)).unwrap();
    k.launch(&args(1000, 1000, 1008, 1000)).unwrap();
    assert_eq!(
        take(&seen),
        vec![
            (block, grid(5000)),
            (block, grid(5000)),
            (block, grid(1000))
        ]
    );
    assert!(k.config_for(&[5000, 1, 1]).is_some());
    // Longer buffers than needed: another shape, launched.
    k.launch(&args(2000, 2000, 2000, 1000)).unwrap();
    assert_eq!(take(&seen), vec![(block, grid(1000))]);
}

#[test]
fn a_failing_selection_falls_back_once_and_stays_fallen_back() {
    // The selector picks block size 512; the device refuses blocks of 512 threads.
    let (d, seen) = recorder(512);
    let def = demo_kernels::cuda::vector_add().unwrap();
    let k = WisdomKernel::new(def, d).unwrap();
    let default_block = k
        .default_config()
        .get("block_size_x")
        .unwrap()
        .as_int()
        .unwrap();
    assert_ne!(
        default_block, 512,
        "the test needs a default other than 512"
    );
    let mut chosen: Config = k.default_config().clone();
    chosen.set("block_size_x", 512i64);
    let k = k.with_selector(move |_| Some(chosen.clone()));
    let a = args(4096, 4096, 4096, 4096);
    for _ in 0..4 {
        k.launch(&a).unwrap();
    }
    let launches = take(&seen);
    let default_block = default_block as u32;
    assert_eq!(
        launches,
        vec![
            (512, 8),
            (default_block, 4096u32.div_ceil(default_block)),
            (default_block, 4096u32.div_ceil(default_block)),
            (default_block, 4096u32.div_ceil(default_block)),
            (default_block, 4096u32.div_ceil(default_block)),
        ],
        "the refused configuration is tried once, then the default serves every launch"
    );
    assert_eq!(k.failures().len(), 1, "{:?}", k.failures());
}
