//! The library routines (`kernel_wisdom::library`, issue 29) on PoCL: every configuration
//! of a reduced tuning space of each kernel, at shapes that no tile divides, against the CPU
//! reference; the routines at random shapes (a property test over the selected
//! configuration); wrong shapes are typed errors and launch nothing.

mod common;

use common::device;
use kernel_wisdom::library::{defs, reference, Library};
use kernel_wisdom::LaunchOptions;
use kernel_wisdom::{BackendKind, DeviceBuffer, Error, KernelDef, Value, WisdomKernel};
use kw_core::rng::Rng;
use std::sync::Arc;

/// `def` with each named parameter limited to the given values (its default among them).
fn reduced(mut def: KernelDef, keep: &[(&str, &[i64])]) -> KernelDef {
    for (name, values) in keep {
        let p = def.parameters.iter_mut().find(|p| p.name == *name).unwrap();
        p.values = values.iter().map(|&v| Value::Int(v)).collect();
        if !p.values.contains(&p.default) {
            p.default = p.values[0].clone();
        }
    }
    def
}

fn random(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n).map(|_| (rng.f64() * 2.0 - 1.0) as f32).collect()
}

/// Every configuration of `kernel`'s space, launched by `run`, which checks the result.
fn every_config(kernel: &WisdomKernel, mut run: impl FnMut(&kernel_wisdom::Config)) -> usize {
    let space = kernel.space().clone();
    let mut n = 0;
    for p in space.iter() {
        run(&space.config(&p));
        n += 1;
    }
    n
}

#[test]
fn transpose_every_configuration_of_a_reduced_space() {
    let Some(dev) = device() else { return };
    let def = reduced(
        defs::transpose(BackendKind::Opencl).build().unwrap(),
        &[("tile_dim", &[8, 16, 32]), ("block_rows", &[1, 4, 8])],
    );
    let n = transpose_every_config(&dev, def, (37, 53), 1);
    assert!(n >= 12, "{n} configurations");
}

/// Every configuration of `def` (a reduced transpose) on a random rows x cols matrix against
/// the CPU's transpose; how many there were.
fn transpose_every_config(
    dev: &Arc<dyn kernel_wisdom::Device>,
    def: KernelDef,
    (rows, cols): (usize, usize),
    seed: u64,
) -> usize {
    let kernel = WisdomKernel::new(def, dev.clone()).unwrap();
    let input = random(&mut Rng::new(seed), rows * cols);
    let want = reference::transpose(&input, rows, cols);
    let din = DeviceBuffer::from_slice(dev.as_ref(), &input).unwrap();
    let dout = DeviceBuffer::<f32>::new(dev.as_ref(), rows * cols).unwrap();
    let args = [
        dout.arg(),
        din.arg(),
        (rows as i32).into(),
        (cols as i32).into(),
    ];
    every_config(&kernel, |config| {
        dout.fill(f32::NAN).unwrap();
        kernel
            .launch_with(&args, LaunchOptions::new().config(config))
            .unwrap();
        assert!(dout.to_vec().unwrap() == want, "{{{config}}}");
    })
}

/// A matrix taller than 65535 tiles (CUDA's most blocks along y): the definition caps the
/// grid's y at 65535 and folds the row tiles beyond into x, where the kernel finds them (and
/// the blocks past the last tile move nothing), with and without shared memory.
#[test]
fn transpose_taller_than_the_grid() {
    let Some(dev) = device() else { return };
    let def = reduced(
        defs::transpose(BackendKind::Opencl).build().unwrap(),
        &[("tile_dim", &[8]), ("block_rows", &[2, 8])],
    );
    let (rows, cols) = (65535 * 8 + 13, 3);
    let info = dev.info().clone();
    let mut config8 = def.default_config();
    config8.set("tile_dim", Value::Int(8));
    config8.set("block_rows", Value::Int(8));
    let g = def
        .geometry(&config8, &[cols as i64, rows as i64, 1], None, Some(&info))
        .unwrap();
    assert_eq!(
        g.grid,
        [2, 65535, 1],
        "65537 row tiles: a second column of blocks"
    );
    let n = transpose_every_config(&dev, def, (rows, cols), 11);
    assert_eq!(n, 6, "tile_pad and use_shared over two block_rows");
}

#[test]
fn reduce_sum_every_configuration_of_a_reduced_space() {
    let Some(dev) = device() else { return };
    let def = reduced(
        defs::reduce_sum(BackendKind::Opencl).build().unwrap(),
        &[
            ("block_size_x", &[32, 128]),
            ("items_per_thread", &[1, 4]),
            ("passes", &[1, 8]),
        ],
    );
    let kernel = WisdomKernel::new(def, dev.clone()).unwrap();
    let n: usize = 100_003;
    let input: Vec<f32> = (0..n).map(|i| ((i * 7) % 19) as f32 * 0.25).collect();
    let want = reference::sum(&input);
    let din = DeviceBuffer::from_slice(dev.as_ref(), &input).unwrap();
    let out = DeviceBuffer::<f32>::new(dev.as_ref(), 1).unwrap();
    let args = [out.arg(), din.arg(), (n as i32).into()];
    let count = every_config(&kernel, |config| {
        out.fill(0.0).unwrap();
        kernel
            .launch_with(&args, LaunchOptions::new().config(config))
            .unwrap();
        let got = f64::from(out.to_vec().unwrap()[0]);
        assert!(
            (got - want).abs() <= 1e-4 * want.abs(),
            "{{{config}}}: {got} vs {want}"
        );
    });
    assert_eq!(count, 16);
}

#[test]
fn stencil3d_every_configuration_of_a_reduced_space() {
    let Some(dev) = device() else { return };
    let def = reduced(
        defs::stencil3d(BackendKind::Opencl).build().unwrap(),
        &[
            ("block_size_x", &[16, 32]),
            ("block_size_y", &[1, 4]),
            ("z_per_thread", &[1, 3, 8]),
            ("x_per_thread", &[1, 3]),
        ],
    );
    let kernel = WisdomKernel::new(def, dev.clone()).unwrap();
    // Several groups along x for every block_size_x * x_per_thread (at most 96 here), the
    // last one partial.
    let shape = [203, 11, 13];
    let cells = shape.iter().product();
    let input = random(&mut Rng::new(2), cells);
    let want = reference::stencil3d(&input, shape, 0.4, 0.1);
    let din = DeviceBuffer::from_slice(dev.as_ref(), &input).unwrap();
    let dout = DeviceBuffer::<f32>::new(dev.as_ref(), cells).unwrap();
    let [x, y, z] = shape.map(|v| v as i32);
    let args = [
        dout.arg(),
        din.arg(),
        x.into(),
        y.into(),
        z.into(),
        0.4f32.into(),
        0.1f32.into(),
    ];
    let n = every_config(&kernel, |config| {
        dout.fill(f32::NAN).unwrap();
        kernel
            .launch_with(&args, LaunchOptions::new().config(config))
            .unwrap();
        for (i, (g, w)) in dout.to_vec().unwrap().iter().zip(&want).enumerate() {
            assert!((g - w).abs() <= 1e-5, "{{{config}}} cell {i}: {g} vs {w}");
        }
    });
    assert_eq!(n, 24);
}

/// Every configuration of a reduced space, split-K (`KSPLIT` 4 and 32, cut to K's tiles)
/// included, at a square shape whose K tiles the splits do not divide evenly and at a skinny
/// one (small M x N, long K), against the CPU reference; split-K leaves its scratch zeroed
/// and gives the same bits on a second launch (its sum's order is fixed).
#[test]
fn gemm_every_configuration_of_a_reduced_space() {
    let Some(dev) = device() else { return };
    let def = reduced(
        defs::gemm(BackendKind::Opencl).build().unwrap(),
        &[
            ("MWG", &[32]),
            ("NWG", &[32]),
            ("KWG", &[16]),
            ("MDIMC", &[8]),
            ("NDIMC", &[8]),
            ("MDIMA", &[8, 16]),
            ("NDIMB", &[8]),
            ("KWI", &[8]),
            ("VWM", &[1, 4]),
            ("VWN", &[2]),
            ("STRM", &[1]),
            ("STRN", &[1]),
            ("SB", &[1]),
            ("KSPLIT", &[1, 4, 32]),
        ],
    );
    let kernel = WisdomKernel::new(def, dev.clone()).unwrap();
    // Sizes the tiles divide (the kernel has no bounds checks); B given transposed (k x n,
    // n fastest), as the routine passes it. 80 = 5 tiles of 16 in 4 splits: 1, 1, 1, 2.
    let mut total = 0;
    for (seed, [m, n, k]) in [(5, [64usize, 96, 80]), (6, [32, 32, 1024])] {
        let mut rng = Rng::new(seed);
        let (a, b, c0) = (
            random(&mut rng, m * k),
            random(&mut rng, k * n),
            random(&mut rng, m * n),
        );
        let b_cm = reference::transpose(&b, k, n); // column-major k x n
        let want = reference::gemm([m, n, k], 1.5, &a, &b_cm, -0.5, &c0);
        let (da, db) = (
            DeviceBuffer::from_slice(dev.as_ref(), &a).unwrap(),
            DeviceBuffer::from_slice(dev.as_ref(), &b).unwrap(),
        );
        let dc = DeviceBuffer::<f32>::new(dev.as_ref(), m * n).unwrap();
        let (work_len, counts_len) = defs::gemm_scratch_lens(m, n);
        let work = DeviceBuffer::from_slice(dev.as_ref(), &vec![0.0f32; work_len]).unwrap();
        let counts = DeviceBuffer::from_slice(dev.as_ref(), &vec![0i32; counts_len]).unwrap();
        let args = common::gemm_args([&dc, &da, &db], [m, n, k], [1.5, -0.5], (&work, &counts));
        let run = |config: &kernel_wisdom::Config| {
            dc.write(&c0).unwrap();
            kernel
                .launch_with(&args, LaunchOptions::new().config(config))
                .unwrap();
            dc.to_vec().unwrap()
        };
        let mut split = 0;
        total += every_config(&kernel, |config| {
            let got = run(config);
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (g - w).abs() <= 1e-4 * (1.0 + w.abs()),
                    "{m}x{n}x{k} {{{config}}} element {i}: {g} vs {w}"
                );
            }
            assert!(
                work.to_vec().unwrap().iter().all(|&x| x == 0.0),
                "{{{config}}}"
            );
            assert!(
                counts.to_vec().unwrap().iter().all(|&x| x == 0),
                "{{{config}}}"
            );
            if config.get("KSPLIT") != Some(&Value::Int(1)) {
                split += 1;
                let again = run(config);
                assert!(
                    got.iter()
                        .zip(&again)
                        .all(|(x, y)| x.to_bits() == y.to_bits()),
                    "{m}x{n}x{k} {{{config}}}: a second launch differs"
                );
            }
        });
        assert!(split >= 10, "{split} split-K configurations");
    }
    assert_eq!(total, 30, "15 configurations at each shape");
}

#[test]
fn gemm_routine_at_sizes_no_tile_divides() {
    let Some(dev) = device() else { return };
    let lib = Library::new(dev.clone());
    let mut rng = Rng::new(11);
    let shapes = [
        ([37usize, 53, 29], 1.5f32, 0.5f32),
        ([1, 1, 1], 2.0, 0.0),
        ([130, 7, 200], 1.0, 0.0),
        ([128, 128, 32], 0.5, 1.0), // no padding
        ([5, 9, 0], 1.0, 2.0),      // k = 0: C = beta C
        ([37, 53, 29], 1.0, 0.0),   // kept copies of these lengths again, other contents
    ];
    // Three times over, on new data: the second pass reuses the padded copies the first kept (their
    // old contents must not show), then after they were freed.
    for pass in 0..3 {
        if pass == 2 {
            lib.free_workspace();
        }
        for (shape, alpha, beta) in shapes {
            let [m, n, k] = shape;
            let (a, b, c0) = (
                random(&mut rng, m * k),
                random(&mut rng, k * n),
                random(&mut rng, m * n),
            );
            let want = reference::gemm(shape, alpha, &a, &b, beta, &c0);
            let da = DeviceBuffer::from_slice(dev.as_ref(), &a).unwrap();
            let db = DeviceBuffer::from_slice(dev.as_ref(), &b).unwrap();
            let start: Vec<f32> = if beta == 0.0 {
                vec![f32::NAN; m * n]
            } else {
                c0
            };
            let dc = DeviceBuffer::from_slice(dev.as_ref(), &start).unwrap();
            lib.gemm(shape, alpha, &da, &db, beta, &dc).unwrap();
            for (i, (g, w)) in dc.to_vec().unwrap().iter().zip(&want).enumerate() {
                assert!(
                    (g - w).abs() <= 1e-4 * (1.0 + w.abs()),
                    "{shape:?} element {i}: {g} vs {w}"
                );
            }
        }
    }
    // Lengths that do not fit the shape are typed errors; nothing is written.
    let a = DeviceBuffer::from_slice(dev.as_ref(), &[1.0f32; 12]).unwrap();
    let c = DeviceBuffer::from_slice(dev.as_ref(), &[7.0f32; 12]).unwrap();
    for shape in [[3, 4, 5], [4, 3, 3], [usize::MAX, 2, 2]] {
        let e = lib.gemm(shape, 1.0, &a, &a, 0.0, &c).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Shape {
                    routine: "gemm",
                    ..
                }
            ),
            "{e}"
        );
    }
    assert_eq!(c.to_vec().unwrap(), vec![7.0; 12]);
}

/// `Library::gemm` with wisdom that selects split-K (`KSPLIT` 8) at a skinny padded size:
/// right results at that size padded and unpadded, twice (the kept scratch, left zeroed, is
/// reused), and at a small size where the nearest record's `KSPLIT` is cut to K's 2 tiles.
#[test]
fn gemm_routine_with_split_k_selected_by_wisdom() {
    use kw_core::wisdom::{add_record, Objective, Provenance, ReplacePolicy};
    use kw_core::wisdom::{SpaceFingerprint, WisdomDevice, WisdomRecord};
    let Some(dev) = device() else { return };
    let dir = std::env::temp_dir().join(format!(
        "kw-gemm-splitk-{}-{}",
        std::process::id(),
        kw_core::files::nonce(9)
    ));
    let probe = WisdomKernel::new(
        defs::gemm(BackendKind::Opencl).build().unwrap(),
        dev.clone(),
    )
    .unwrap();
    let mut config = probe.default_config().clone();
    config.set("KSPLIT", 8);
    let info = dev.info();
    let record = WisdomRecord {
        config,
        problem_size: vec![128, 128, 1024],
        device: WisdomDevice {
            name: info.name.clone(),
            vendor: String::new(),
            backend: info.backend.as_str().into(),
            architecture: info.architecture.clone(),
            driver: String::new(),
        },
        objective: Objective {
            median_ms: 1.0,
            samples: 1,
            ..Default::default()
        },
        space: SpaceFingerprint::of(probe.space()),
        provenance: Provenance::default(),
        alternates: Vec::new(),
    };
    add_record(&dir, "kw_gemm", record, ReplacePolicy::IfBetter).unwrap();
    let lib = Library::new(dev.clone()).with_wisdom_dir(&dir);
    let kernel = lib.kernel("gemm").unwrap();
    assert_eq!(
        kernel.choice(&[128, 128, 1024]).config.get("KSPLIT"),
        Some(&Value::Int(8))
    );
    let mut rng = Rng::new(12);
    for shape in [
        [100usize, 120, 1000],
        [128, 128, 1024],
        [100, 120, 1000],
        [40, 30, 20],
    ] {
        let [m, n, k] = shape;
        let (a, b, c0) = (
            random(&mut rng, m * k),
            random(&mut rng, k * n),
            random(&mut rng, m * n),
        );
        let want = reference::gemm(shape, 0.75, &a, &b, 0.5, &c0);
        let da = DeviceBuffer::from_slice(dev.as_ref(), &a).unwrap();
        let db = DeviceBuffer::from_slice(dev.as_ref(), &b).unwrap();
        let dc = DeviceBuffer::from_slice(dev.as_ref(), &c0).unwrap();
        lib.gemm(shape, 0.75, &da, &db, 0.5, &dc).unwrap();
        for (i, (g, w)) in dc.to_vec().unwrap().iter().zip(&want).enumerate() {
            assert!(
                (g - w).abs() <= 1e-4 * (1.0 + w.abs()),
                "{shape:?} element {i}: {g} vs {w}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `Library::gemm_f16` (tensor cores: CUDA only) on OpenCL: a typed error before any check
/// or launch, and no OpenCL definition. (Its kernel is tested on CUDA: `library_cuda.rs`.)
#[test]
fn gemm_f16_is_cuda_only() {
    let Some(dev) = device() else { return };
    let [m, n, k] = [64usize, 96, 80];
    let da = DeviceBuffer::<u16>::new(dev.as_ref(), m * k).unwrap();
    let db = DeviceBuffer::<u16>::new(dev.as_ref(), k * n).unwrap();
    let dc = DeviceBuffer::<u16>::new(dev.as_ref(), m * n).unwrap();
    // The routine: CUDA only, a typed error on OpenCL before any check or launch.
    let lib = Library::new(dev.clone());
    let e = lib
        .gemm_f16([m, n, k], 1.0, &da, &db, 0.0, &dc)
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Unsupported {
                routine: "gemm_f16",
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("CUDA-only"), "{e}");
    assert!(matches!(
        defs::definition("gemm_f16", BackendKind::Opencl),
        Err(Error::Unsupported { .. })
    ));
}

/// `copy_pad` with `transposed` 1 (a transpose and its padding in one pass; the f32
/// kernel here, the same source): out(r, c) = in(c, r) inside the corner, zero outside.
#[test]
fn copy_pad_transposed_pads_the_transpose() {
    let Some(dev) = device() else { return };
    let lib = Library::new(dev.clone());
    let kernel = lib.kernel("copy_pad").unwrap();
    let ([ro, co], [ri, ci]) = ([48usize, 40], [30usize, 35]);
    let input = random(&mut Rng::new(9), ri * ci);
    let din = DeviceBuffer::from_slice(dev.as_ref(), &input).unwrap();
    let out = DeviceBuffer::from_slice(dev.as_ref(), &vec![f32::NAN; ro * co]).unwrap();
    kernel
        .launch(&[
            out.arg(),
            din.arg(),
            (ro as i32).into(),
            (co as i32).into(),
            (ri as i32).into(),
            (ci as i32).into(),
            1i32.into(),
        ])
        .unwrap();
    let got = out.to_vec().unwrap();
    for r in 0..ro {
        for c in 0..co {
            let want = if c < ri && r < ci {
                input[c * ci + r]
            } else {
                0.0
            };
            assert_eq!(got[r * co + c], want, "({r}, {c})");
        }
    }
}

#[test]
fn the_routines_at_random_shapes_and_wrong_shapes_refused() {
    let Some(dev) = device() else { return };
    let lib = Library::new(dev.clone());
    let mut rng = Rng::new(3);
    for _ in 0..6 {
        let (rows, cols) = (1 + rng.below(90) as usize, 1 + rng.below(90) as usize);
        let input = random(&mut rng, rows * cols);
        let a = DeviceBuffer::from_slice(dev.as_ref(), &input).unwrap();
        let t = DeviceBuffer::<f32>::new(dev.as_ref(), rows * cols).unwrap();
        lib.transpose(rows, cols, &a, &t).unwrap();
        assert_eq!(
            t.to_vec().unwrap(),
            reference::transpose(&input, rows, cols)
        );
        let got = f64::from(lib.sum(&a).unwrap());
        let want = reference::sum(&input);
        let scale: f64 = input.iter().map(|v| f64::from(v.abs())).sum();
        assert!((got - want).abs() <= 1e-5 * scale + 1e-6, "{got} vs {want}");
        let shape = [
            2 + rng.below(20) as usize,
            2 + rng.below(9) as usize,
            2 + rng.below(9) as usize,
        ];
        let cells = shape.iter().product();
        let g = random(&mut rng, cells);
        let gi = DeviceBuffer::from_slice(dev.as_ref(), &g).unwrap();
        let go = DeviceBuffer::<f32>::new(dev.as_ref(), cells).unwrap();
        lib.stencil3d(shape, 0.5, 0.125, &gi, &go).unwrap();
        let want = reference::stencil3d(&g, shape, 0.5, 0.125);
        for (i, (x, w)) in go.to_vec().unwrap().iter().zip(&want).enumerate() {
            assert!((x - w).abs() <= 1e-5, "{shape:?} cell {i}: {x} vs {w}");
        }
    }
    // Lengths that do not fit the shape: typed errors naming the routine; nothing launched.
    let a = DeviceBuffer::from_slice(dev.as_ref(), &[1.0f32; 12]).unwrap();
    let t = DeviceBuffer::from_slice(dev.as_ref(), &[7.0f32; 12]).unwrap();
    for e in [
        lib.transpose(3, 5, &a, &t).unwrap_err(),
        lib.transpose(usize::MAX, 2, &a, &t).unwrap_err(),
        lib.stencil3d([2, 2, 2], 1.0, 0.0, &a, &t).unwrap_err(),
    ] {
        assert!(matches!(e, Error::Shape { .. }), "{e}");
    }
    assert_eq!(t.to_vec().unwrap(), vec![7.0; 12], "nothing launched");
    assert!(matches!(lib.kernel("gemv"), Err(Error::Shape { .. })));
    // An output that is an input (the same buffer, or another view of its memory) is refused:
    // in place, the kernels read cells they have already written.
    let sq = DeviceBuffer::from_slice(dev.as_ref(), &[7.0f32; 16]).unwrap();
    let e = lib.transpose(4, 4, &sq, &sq).unwrap_err();
    assert!(
        e.to_string().contains("output and input share memory"),
        "{e}"
    );
    assert!(!sq.overlaps(&t));
    let e = lib.gemm([4, 3, 4], 1.0, &sq, &t, 0.0, &t).unwrap_err();
    assert!(e.to_string().contains("c and b share memory"), "{e}");
    assert_eq!(sq.to_vec().unwrap(), vec![7.0; 16], "nothing launched");
    // alpha 0 (BLAS): C = beta C, A and B not read (their NaNs stay out), padded or not.
    for [m, n, k] in [[5usize, 3, 7], [128, 128, 32]] {
        let a = DeviceBuffer::from_slice(dev.as_ref(), &vec![f32::NAN; m * k]).unwrap();
        let b = DeviceBuffer::from_slice(dev.as_ref(), &vec![f32::NAN; k * n]).unwrap();
        let start: Vec<f32> = (0..m * n).map(|i| i as f32).collect();
        let c = DeviceBuffer::from_slice(dev.as_ref(), &start).unwrap();
        lib.gemm([m, n, k], 0.0, &a, &b, 0.5, &c).unwrap();
        let want: Vec<f32> = start.iter().map(|v| v * 0.5).collect();
        assert_eq!(c.to_vec().unwrap(), want, "alpha 0 at {m} x {n} x {k}");
    }
    // k 0: C = beta C too (the launch over an empty K used to leave C as it was).
    let none = DeviceBuffer::<f32>::new(dev.as_ref(), 0).unwrap();
    let c = DeviceBuffer::from_slice(dev.as_ref(), &[2.0f32; 6]).unwrap();
    lib.gemm([2, 3, 0], 1.0, &none, &none, 0.25, &c).unwrap();
    assert_eq!(c.to_vec().unwrap(), vec![0.5; 6], "k 0");
    let _ = Arc::clone(lib.device());
}

/// Each library kernel's T1 file (`kernels/library/*_T1.json`, what `kw tune --t1` tunes)
/// describes the kernel the library launches: the same source, parameters, values, defaults
/// and arguments.
#[test]
fn each_t1_file_matches_the_library_definition() {
    let dir = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../kernels/library"
    ));
    // A copy at a small problem size (the published sizes fill hundreds of MiB with random
    // data, slow in a debug build); everything else as shipped.
    let tmp = std::env::temp_dir().join(format!(
        "kw-library-t1-{}-{}",
        std::process::id(),
        kw_core::files::nonce(9)
    ));
    std::fs::create_dir_all(&tmp).unwrap();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, tmp.join(path.file_name().unwrap())).unwrap();
    }
    for name in defs::KERNELS {
        let file = tmp.join(format!("{name}_T1.json"));
        let mut json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        let size = &mut json["KernelSpecification"]["ProblemSize"];
        let axes = size.as_array().unwrap().len();
        *size = serde_json::json!(vec![8; axes]);
        std::fs::write(&file, json.to_string()).unwrap();
        let t1 = kw_core::kernel_tuner::T1Benchmark::load(&file).unwrap();
        // gemm_f16 is CUDA-only (its T1 file's `Language` is CUDA).
        let backend = if *name == "gemm_f16" {
            BackendKind::Cuda
        } else {
            BackendKind::Opencl
        };
        let def = defs::definition(name, backend).unwrap();
        assert_eq!(t1.def.backend, backend, "{name}");
        assert_eq!(t1.def.kernel_name, def.kernel_name);
        assert_eq!(t1.def.tuning_key, def.tuning_key, "{name}");
        assert_eq!(t1.def.source.text, def.source.text, "{name}");
        assert_eq!(t1.def.source.headers, def.source.headers, "{name}");
        assert_eq!(t1.def.parameters, def.parameters, "{name}");
        // The same launch geometry (block and grid) for every configuration (the first 400 of
        // a large space) at two problem sizes, one that no block divides.
        let info = {
            use kw_core::backend::Device;
            kw_core::null_device::NullDevice::new(backend)
                .info()
                .clone()
        };
        let space = def.space(Some(&info)).unwrap();
        for p in space.iter().take(400) {
            let config = space.config(&p);
            for mut ps in [[8, 8, 8], [1003, 37, 5]] {
                ps[axes..].fill(1); // the axes a problem has not are 1

                let geometry = |d: &KernelDef| {
                    let g = d.geometry(&config, &ps, None, Some(&info)).unwrap();
                    (g.grid, g.block, g.shared_memory_bytes)
                };
                assert_eq!(geometry(&t1.def), geometry(&def), "{name} {{{config}}}");
            }
        }
        let names = |d: &KernelDef| {
            d.args
                .iter()
                .map(|a| (a.name.clone(), a.ty, a.access))
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&t1.def), names(&def), "{name}");
        // The restrictions over the problem size (a kernel without bounds checks: the tiles
        // must divide the sizes) are the T1 file's too: tuning it at another size never
        // launches a configuration that reads or writes out of bounds.
        let over_size = |e: &kw_core::expr::Expr| {
            let mut found = false;
            e.visit(&mut |n| found |= matches!(n, kw_core::expr::Expr::ProblemSize(_)));
            found
        };
        for r in def.restrictions.iter().filter(|r| over_size(r)) {
            assert!(
                t1.def.restrictions.contains(r),
                "{name}: the T1 file lacks the restriction `{r}`"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
}
