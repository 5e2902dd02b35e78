//! The library's hotspot and n-body kernels (`kernel_wisdom::library`, issue 29) on a CUDA
//! device, through NVRTC: 48 configurations spread over each kernel's whole CUDA space
//! (hotspot's `blocks_per_sm` included) and the default, against the CPU reference at sizes
//! no tile divides, and the routines (`common/sim_checks.rs`, the same checks as on PoCL).
//! GEMM: split-K configurations of `gemm` at a skinny shape (the cross-block reduction on a
//! real GPU), `gemm_f16`'s kernel over its whole space and `Library::gemm_f16` at odd sizes.
//! Without a CUDA driver each test prints `SKIPPED: no CUDA driver` and passes.

mod common;
#[path = "common/sim_checks.rs"]
mod sim_checks;

use common::cuda_device;
use kernel_wisdom::library::half::{f16_bits_to_f32, f32_to_f16_bits};
use kernel_wisdom::library::{defs, reference, Library};
use kernel_wisdom::{BackendKind, DeviceBuffer, Error, LaunchOptions, Value, WisdomKernel};
use kw_core::rng::Rng;

fn random(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n).map(|_| (rng.f64() * 2.0 - 1.0) as f32).collect()
}

fn halves(rng: &mut Rng, n: usize) -> Vec<u16> {
    random(rng, n).into_iter().map(f32_to_f16_bits).collect()
}

/// `got` (halves) is `want` to one rounding to half after f32 sums of `k` products of values
/// below 1: 2^-11 of the value, plus k x 2^-23 (the tolerance grows with k).
fn assert_half_close(got: &[u16], want: &[f32], k: usize, what: &str) {
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let g = f16_bits_to_f32(g);
        let bound = w.abs() * 2f32.powi(-11) + k as f32 * 2f32.powi(-23);
        assert!((g - w).abs() <= bound, "{what} element {i}: {g} vs {w}");
    }
}

/// `gemm`'s kernel at a skinny shape (128 x 128 x 4096, split-K's case), every configuration
/// of 48 spread over the CUDA space plus the default and KSPLIT 2..32 of the default,
/// against the CPU reference; the split-K scratch left zeroed after each.
#[test]
fn cuda_gemm_split_k_configurations() {
    let Some(dev) = cuda_device("cuda_gemm_split_k_configurations") else {
        return;
    };
    let kernel = WisdomKernel::new(defs::gemm(BackendKind::Cuda).build().unwrap(), dev).unwrap();
    let d = kernel.device().as_ref();
    let [m, n, k] = [128usize, 128, 4096];
    let mut rng = Rng::new(31);
    let (a, bt) = (random(&mut rng, m * k), random(&mut rng, k * n));
    let b_cm = reference::transpose(&bt, k, n);
    let want = reference::gemm([m, n, k], 1.0, &a, &b_cm, 0.0, &[]);
    let (da, db) = (
        DeviceBuffer::from_slice(d, &a).unwrap(),
        DeviceBuffer::from_slice(d, &bt).unwrap(),
    );
    let dc = DeviceBuffer::<f32>::new(d, m * n).unwrap();
    let (wl, cl) = defs::gemm_scratch_lens(m, n);
    let work = DeviceBuffer::from_slice(d, &vec![0.0f32; wl]).unwrap();
    let counts = DeviceBuffer::from_slice(d, &vec![0i32; cl]).unwrap();
    let args = common::gemm_args([&dc, &da, &db], [m, n, k], [1.0, 0.0], (&work, &counts));
    let mut configs = sim_checks::spread_configs(&kernel, 48);
    for s in [2, 4, 8, 16, 32] {
        let mut c = kernel.default_config().clone();
        c.set("KSPLIT", s);
        configs.push(c);
    }
    let mut split = 0;
    for config in &configs {
        dc.fill(f32::NAN).unwrap();
        kernel
            .launch_with(&args, LaunchOptions::new().config(config))
            .unwrap();
        for (i, (g, w)) in dc.to_vec().unwrap().iter().zip(&want).enumerate() {
            assert!(
                (g - w).abs() <= 1e-3,
                "{{{config}}} element {i}: {g} vs {w}"
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
        split += usize::from(config.get("KSPLIT") != Some(&Value::Int(1)));
    }
    assert!(split >= 5, "{split} split-K configurations");
}

/// `gemm_f16`'s kernel (tensor cores through NVRTC, halves as bits, f32 sums): 64
/// configurations spread over its whole CUDA space, the default and four PREFETCH corners at
/// 264 x 132 x 336 (no
/// block tile divides M or N; N not a multiple of 8; K of 5 tiles of 64 and a partial one, so
/// every pipeline depth refills its stages: the bounds checks and the pipeline),
/// against the CPU reference, all giving the same bits (the definition compares C exactly).
#[test]
fn cuda_gemm_f16_configurations_across_the_space() {
    let Some(dev) = cuda_device("cuda_gemm_f16_configurations_across_the_space") else {
        return;
    };
    let def = defs::gemm_f16(BackendKind::Cuda).build().unwrap();
    let kernel = WisdomKernel::new(def, dev).unwrap();
    let d = kernel.device().as_ref();
    let [m, n, k] = [264usize, 132, 336];
    let mut rng = Rng::new(32);
    // All three column-major (the kernel reads B as it is, not transposed as gemm's).
    let (a, b, c0) = (
        halves(&mut rng, m * k),
        halves(&mut rng, k * n),
        halves(&mut rng, m * n),
    );
    let want = reference::gemm_f16([m, n, k], 0.5, &a, &b, 2.0, &c0);
    let (da, db) = (
        DeviceBuffer::from_slice(d, &a).unwrap(),
        DeviceBuffer::from_slice(d, &b).unwrap(),
    );
    let dc = DeviceBuffer::<u16>::new(d, m * n).unwrap();
    let work = DeviceBuffer::from_slice(d, &[0.0f32]).unwrap();
    let counts = DeviceBuffer::from_slice(d, &[0i32]).unwrap();
    let args = common::gemm_args([&dc, &da, &db], [m, n, k], [0.5, 2.0], (&work, &counts));
    let mut first: Option<Vec<u16>> = None;
    let mut configs = sim_checks::spread_configs(&kernel, 64);
    assert_eq!(
        configs.len(),
        65,
        "64 spread configurations and the default"
    );
    // PREFETCH's corners: two stages, one MMA step per K tile (BLOCK_K 16), and the deepest
    // pipeline, each with the refill overlapping the products.
    for (bk, stages) in [(16, 2), (16, 4), (32, 2), (64, 4)] {
        let mut c = kernel.default_config().clone();
        c.set("BLOCK_K", bk);
        c.set("STAGES", stages);
        c.set("PREFETCH", 1);
        configs.push(c);
    }
    for config in configs {
        dc.write(&c0).unwrap();
        kernel
            .launch_with(&args, LaunchOptions::new().config(&config))
            .unwrap();
        let got = dc.to_vec().unwrap();
        assert_half_close(&got, &want, k, &format!("{{{config}}}"));
        match &first {
            None => first = Some(got),
            Some(f) => assert!(f == &got, "{{{config}}}: other bits than the first"),
        }
    }
}

/// `Library::gemm_f16` at sizes no tile divides (padding, beta 0 with NaN in C, beta 1,
/// k = 0, only K padded), a long K, operands in an application's memory not 16-byte aligned
/// (copied), and wrong lengths refused.
#[test]
fn cuda_gemm_f16_routine() {
    let Some(dev) = cuda_device("cuda_gemm_f16_routine") else {
        return;
    };
    let lib = Library::new(dev.clone());
    let d = dev.as_ref();
    let mut rng = Rng::new(33);
    for (shape, alpha, beta) in [
        ([37usize, 53, 29], 1.5f32, 0.5f32),
        ([1, 1, 1], 2.0, 0.0),
        ([130, 7, 200], 1.0, 0.0),
        ([128, 128, 32], 0.5, 1.0), // no padding
        ([300, 200, 3001], 1.0, 0.0),
        ([5, 9, 0], 1.0, 2.0),    // k = 0: C = beta C
        ([64, 50, 40], 1.0, 0.5), // only K padded (N needs none): C used in place
    ] {
        let [m, n, k] = shape;
        let (a, b, c0) = (
            halves(&mut rng, m * k),
            halves(&mut rng, k * n),
            halves(&mut rng, m * n),
        );
        let want = reference::gemm_f16(shape, alpha, &a, &b, beta, &c0);
        let start = if beta == 0.0 { vec![0x7e00; m * n] } else { c0 };
        let (da, db, dc) = (
            DeviceBuffer::from_slice(d, &a).unwrap(),
            DeviceBuffer::from_slice(d, &b).unwrap(),
            DeviceBuffer::from_slice(d, &start).unwrap(),
        );
        lib.gemm_f16(shape, alpha, &da, &db, beta, &dc).unwrap();
        // A beta of 2 doubles C's values (up to 1): the bound's value term covers it.
        assert_half_close(&dc.to_vec().unwrap(), &want, k, &format!("{shape:?}"));
    }
    // A and B one half (2 bytes) into an allocation, as a CUDA pointer into an array may be:
    // the kernel's 16-byte copies need aligned starts, so the routine copies them first.
    let shape = [64usize, 48, 32];
    let [m, n, k] = shape;
    let (a, b, c0) = (
        halves(&mut rng, m * k),
        halves(&mut rng, k * n),
        halves(&mut rng, m * n),
    );
    let want = reference::gemm_f16(shape, 1.0, &a, &b, 1.0, &c0);
    let shifted = |v: &[u16]| {
        let mut padded = vec![0u16];
        padded.extend_from_slice(v);
        let whole = DeviceBuffer::from_slice(d, &padded).unwrap();
        let at = whole.memory().device_address().unwrap() + 2;
        // SAFETY: `whole` holds v.len() + 1 halves from `at - 2` and outlives the view.
        let raw = unsafe { kernel_wisdom::RawMem::cuda(at, v.len() * 2) };
        (DeviceBuffer::<u16>::view(d, raw).unwrap(), whole)
    };
    let ((da, _wa), (db, _wb)) = (shifted(&a), shifted(&b));
    let dc = DeviceBuffer::from_slice(d, &c0).unwrap();
    lib.gemm_f16(shape, 1.0, &da, &db, 1.0, &dc).unwrap();
    assert_half_close(&dc.to_vec().unwrap(), &want, k, "unaligned A and B");

    // alpha 0 (BLAS): C = beta C; A and B are not read (NaN halves there stay out of C).
    let shape = [37usize, 53, 29];
    let [m, n, k] = shape;
    let c0 = halves(&mut rng, m * n);
    let want = reference::gemm_f16(shape, 0.0, &vec![0; m * k], &vec![0; k * n], 0.5, &c0);
    let (da, db, dc) = (
        DeviceBuffer::from_slice(d, &vec![0x7e00u16; m * k]).unwrap(),
        DeviceBuffer::from_slice(d, &vec![0x7e00u16; k * n]).unwrap(),
        DeviceBuffer::from_slice(d, &c0).unwrap(),
    );
    lib.gemm_f16(shape, 0.0, &da, &db, 0.5, &dc).unwrap();
    assert_half_close(&dc.to_vec().unwrap(), &want, k, "alpha 0");
    // An output sharing memory with an input, here two views of one allocation that meet
    // (halves 0..16 and 8..24): refused; inputs may share.
    let whole = DeviceBuffer::from_slice(d, &[0x3c00u16; 32]).unwrap();
    let base = whole.memory().device_address().unwrap();
    // SAFETY: `whole` holds 32 halves from `base` and outlives the views.
    let view = |at: u64| {
        DeviceBuffer::<u16>::view(d, unsafe { kernel_wisdom::RawMem::cuda(base + at, 32) }).unwrap()
    };
    let (head, tail) = (view(0), view(16));
    let c = DeviceBuffer::from_slice(d, &[0u16; 16]).unwrap();
    lib.gemm_f16([4, 4, 4], 1.0, &head, &tail, 0.0, &c).unwrap();
    let e = lib
        .gemm_f16([4, 4, 4], 1.0, &head, &c, 0.0, &tail)
        .unwrap_err();
    assert!(e.to_string().contains("c and a share memory"), "{e}");
    assert!(head.overlaps(&tail) && !head.overlaps(&c));

    let a = DeviceBuffer::from_slice(d, &[0x3c00u16; 12]).unwrap();
    let c = DeviceBuffer::from_slice(d, &[7u16; 12]).unwrap();
    for shape in [[3, 4, 5], [4, 3, 3], [usize::MAX, 2, 2]] {
        let e = lib.gemm_f16(shape, 1.0, &a, &a, 0.0, &c).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Shape {
                    routine: "gemm_f16",
                    ..
                }
            ),
            "{e}"
        );
    }
    assert_eq!(c.to_vec().unwrap(), vec![7; 12]);
}

#[test]
fn cuda_hotspot_configurations_across_the_space() {
    let Some(dev) = cuda_device("cuda_hotspot_configurations_across_the_space") else {
        return;
    };
    let def = defs::hotspot(BackendKind::Cuda).build().unwrap();
    assert!(def.parameters.iter().any(|p| p.name == "blocks_per_sm"));
    let kernel = WisdomKernel::new(def, dev).unwrap();
    let configs = sim_checks::spread_configs(&kernel, 48);
    // Several blocks of the largest tiles, and edges in both directions.
    sim_checks::hotspot_configs(&kernel, &configs, [1031, 577]);
}

#[test]
fn cuda_hotspot_routine() {
    let Some(dev) = cuda_device("cuda_hotspot_routine") else {
        return;
    };
    sim_checks::hotspot_routine(&dev);
}

#[test]
fn cuda_nbody_configurations_across_the_space() {
    let Some(dev) = cuda_device("cuda_nbody_configurations_across_the_space") else {
        return;
    };
    let def = defs::nbody(BackendKind::Cuda).build().unwrap();
    let kernel = WisdomKernel::new(def, dev).unwrap();
    let configs = sim_checks::spread_configs(&kernel, 48);
    // A second, partial block for 1024 threads x 8 bodies; every 37th body checked.
    sim_checks::nbody_configs(&kernel, &configs, 10_007, 37);
}

#[test]
fn cuda_nbody_routine() {
    let Some(dev) = cuda_device("cuda_nbody_routine") else {
        return;
    };
    sim_checks::nbody_routine(&dev);
}

#[test]
fn cuda_fma_peak_does_the_fmas_it_counts() {
    let Some(dev) = cuda_device("cuda_fma_peak_does_the_fmas_it_counts") else {
        return;
    };
    sim_checks::fma_peak(&dev);
}

/// The CUDA-only paths of stencil3d (`stream_store`'s `__stcs`, several columns per thread)
/// over a slice of its CUDA space against the CPU reference, at a shape no block divides with
/// several blocks along x; and a grid too deep for CUDA (more than 65535 blocks along z) is
/// not valid, so the selection passes over it.
#[test]
fn cuda_stencil3d_columns_and_streaming_stores() {
    let Some(dev) = cuda_device("cuda_stencil3d_columns_and_streaming_stores") else {
        return;
    };
    let def = defs::stencil3d(BackendKind::Cuda).build().unwrap();
    let kernel = WisdomKernel::new(def, dev.clone()).unwrap();
    let shape = [203usize, 37, 19];
    let cells = shape.iter().product();
    let input = random(&mut Rng::new(5), cells);
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
    let mut n = 0;
    for p in kernel.space().iter() {
        let config = kernel.space().config(&p);
        let v = |name: &str| config.get(name).and_then(Value::as_int).unwrap();
        if ![32, 64].contains(&v("block_size_x")) || ![1, 4].contains(&v("block_size_y")) {
            continue;
        }
        if ![1, 2, 8].contains(&v("z_per_thread")) {
            continue;
        }
        dout.fill(f32::NAN).unwrap();
        kernel
            .launch_with(&args, LaunchOptions::new().config(&config))
            .unwrap();
        for (i, (g, w)) in dout.to_vec().unwrap().iter().zip(&want).enumerate() {
            assert!((g - w).abs() <= 1e-5, "{{{config}}} cell {i}: {g} vs {w}");
        }
        n += 1;
    }
    // 2 x 2 block shapes, 3 depths, 3 column counts, 2 store kinds.
    assert_eq!(n, 72);
    // 131072 planes: z_per_thread 1 or 2 needs 65536 blocks or more along z, not valid on
    // CUDA. The library's selection (its shipped records: the H100 ones take 2) must pass
    // over those.
    let lib = Library::new(dev);
    let kernel = lib.kernel("stencil3d").unwrap();
    let zpt = |ps: &[i64; 3]| {
        let c = kernel.select_config(ps).unwrap();
        c.get("z_per_thread").and_then(Value::as_int).unwrap()
    };
    let deep = zpt(&[4, 4, 131_072]);
    assert!((131_072 + deep - 1) / deep <= 65_535, "z_per_thread {deep}");
}

/// transpose's `stream_store` on CUDA, over a slice of its space, at a shape no tile divides.
#[test]
fn cuda_transpose_streaming_stores() {
    let Some(dev) = cuda_device("cuda_transpose_streaming_stores") else {
        return;
    };
    let def = defs::transpose(BackendKind::Cuda).build().unwrap();
    let kernel = WisdomKernel::new(def, dev.clone()).unwrap();
    let (rows, cols) = (517usize, 203usize);
    let input = random(&mut Rng::new(6), rows * cols);
    let want = reference::transpose(&input, rows, cols);
    let din = DeviceBuffer::from_slice(dev.as_ref(), &input).unwrap();
    let dout = DeviceBuffer::<f32>::new(dev.as_ref(), rows * cols).unwrap();
    let args = [
        dout.arg(),
        din.arg(),
        (rows as i32).into(),
        (cols as i32).into(),
    ];
    let mut n = 0;
    for p in kernel.space().iter() {
        let config = kernel.space().config(&p);
        dout.fill(f32::NAN).unwrap();
        kernel
            .launch_with(&args, LaunchOptions::new().config(&config))
            .unwrap();
        assert_eq!(dout.to_vec().unwrap(), want, "{{{config}}}");
        n += 1;
    }
    assert!(n >= 40, "{n} configurations");
}
