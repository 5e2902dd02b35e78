//! Constant-memory symbols on CUDA (issue 25), with `kernels/convolution/convolution.cu` (a
//! 2D convolution reading its filter from `__constant__ float d_filter[]`):
//! - the runtime: a launch before the filter is set is refused; a wrong type, a longer filter
//!   or an unknown name are refused; every configuration of a space computes the CPU's
//!   result; a filter set again after compiles reaches the modules compiled before;
//! - capture and replay: the capture carries the filter, replay writes it into every
//!   configuration's module, and every evaluated configuration verifies against the capture.
//!
//! Without a CUDA driver each test prints `SKIPPED: ...` and passes.

use kernel_wisdom::library::defs;
use kernel_wisdom::LaunchOptions;
use kernel_wisdom::{
    list_devices, open_device, BackendKind, DeviceBuffer, DeviceSelector, Error, KernelDef,
    WisdomKernel,
};
use kw_capture::record::{capture_launch_with, HostArg, LaunchData, SymbolValue};
use kw_core::backend::Device;
use kw_core::rng::Rng;
use kw_replay::{MeasureOptions, ReplayEvaluator, ReplaySession};
use kw_tune::Evaluator;
use std::sync::Arc;

const W: usize = 300;
const H: usize = 200;
const F: usize = 7;

fn cuda_device(test: &str) -> Option<Arc<dyn Device>> {
    let listed = list_devices().unwrap_or_default();
    let Some(d) = listed.iter().find(|d| d.info.backend == BackendKind::Cuda) else {
        println!("SKIPPED: no CUDA device ({test})");
        return None;
    };
    Some(open_device(&DeviceSelector::Index(d.index)).expect("opening the CUDA device"))
}

fn def() -> KernelDef {
    let mut b = defs::convolution_cuda(W, H, F, &[32, 16, 64], &[4, 1, 8]);
    b.tuning_key("convolution_cmem_test");
    b.build().unwrap()
}

fn random(seed: u64, n: usize) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| (rng.f64() * 2.0 - 1.0) as f32).collect()
}

fn cpu(input: &[f32], filter: &[f32]) -> Vec<f32> {
    let iw = W + F - 1;
    let mut out = vec![0f32; W * H];
    for y in 0..H {
        for x in 0..W {
            let mut s = 0f32;
            for i in 0..F {
                for j in 0..F {
                    s += input[(y + i) * iw + x + j] * filter[i * F + j];
                }
            }
            out[y * W + x] = s;
        }
    }
    out
}

fn assert_close(got: &[f32], want: &[f32], what: &str) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-4 * w.abs().max(1.0),
            "{what}: element {i}: {g} vs {w}"
        );
    }
}

#[test]
fn the_runtime_writes_the_filter_into_every_configurations_module() {
    let Some(dev) = cuda_device("constant symbols, runtime") else {
        return;
    };
    let kernel = WisdomKernel::new(def(), dev.clone()).unwrap();
    let input = random(1, (W + F - 1) * (H + F - 1));
    let filter = random(2, F * F);
    let ib = DeviceBuffer::from_slice(dev.as_ref(), &input).unwrap();
    let ob = DeviceBuffer::<f32>::new(dev.as_ref(), W * H).unwrap();
    let args = [ob.arg(), ib.arg()];
    // Not set yet: refused, naming the symbol.
    let e = kernel.launch(&args).unwrap_err();
    assert!(
        matches!(e, Error::Symbol { .. }) && e.to_string().contains("d_filter"),
        "{e}"
    );
    // Wrong type, too long, unknown: refused.
    for e in [
        kernel.set_symbol("d_filter", &[0f64; 4]).unwrap_err(),
        kernel
            .set_symbol("d_filter", &[0f32; F * F + 1])
            .unwrap_err(),
        kernel.set_symbol("nope", &[0f32; 4]).unwrap_err(),
    ] {
        assert!(matches!(e, Error::Symbol { .. }), "{e}");
    }
    kernel.set_symbol("d_filter", &filter).unwrap();
    let want = cpu(&input, &filter);
    let space = kernel.space().clone();
    let mut checked = 0;
    for p in space.iter().step_by(41) {
        let config = space.config(&p);
        ob.write(&vec![f32::NAN; W * H]).unwrap();
        kernel
            .launch_with(&args, LaunchOptions::new().config(&config))
            .unwrap();
        assert_close(&ob.to_vec().unwrap(), &want, &format!("{{{config}}}"));
        checked += 1;
    }
    assert!(checked > 20, "{checked} configurations checked");
    // Set again: the modules compiled before read the new filter.
    let filter2: Vec<f32> = filter.iter().map(|v| v * -2.0 + 0.25).collect();
    kernel.set_symbol("d_filter", &filter2).unwrap();
    let want2 = cpu(&input, &filter2);
    for p in space.iter().step_by(41).take(5) {
        let config = space.config(&p);
        kernel
            .launch_with(&args, LaunchOptions::new().config(&config))
            .unwrap();
        assert_close(
            &ob.to_vec().unwrap(),
            &want2,
            &format!("again {{{config}}}"),
        );
    }
}

#[test]
fn captures_carry_the_filter_and_replay_writes_it_into_every_module() {
    let Some(dev) = cuda_device("constant symbols, capture and replay") else {
        return;
    };
    let def = def();
    let input = random(3, (W + F - 1) * (H + F - 1));
    let filter = random(4, F * F);
    let dir = std::env::temp_dir().join(format!(
        "kw-cmem-cuda-{}-{}",
        std::process::id(),
        kw_core::files::nonce(5)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let args = [HostArg::buffer(&vec![0f32; W * H]), HostArg::buffer(&input)];
    let symbols = [SymbolValue::new("d_filter", &filter)];
    // Without the filter, no capture.
    let e = capture_launch_with(
        &dir,
        "none",
        &def,
        None,
        dev.as_ref(),
        LaunchData {
            args: &args,
            ..LaunchData::default()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("d_filter"), "{e}");
    let data = LaunchData {
        args: &args,
        symbols: &symbols,
        references: &[],
    };
    let path = capture_launch_with(&dir, "conv", &def, None, dev.as_ref(), data).unwrap();
    let capture = kw_capture::Capture::open(&path).unwrap();
    let reference = capture
        .read_buffer(&kw_capture::record::output_frame_name("output_image"))
        .unwrap();
    let reference: Vec<f32> = reference
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_close(&reference, &cpu(&input, &filter), "the captured output");

    let session = Arc::new(ReplaySession::load(&path, dev.clone()).unwrap());
    assert_eq!(session.symbols(), &symbols);
    let options = MeasureOptions {
        warmup: 1,
        min_samples: 2,
        max_samples: 3,
        ..MeasureOptions::default()
    };
    let mut eval = ReplayEvaluator::new(session.clone(), options, 2);
    let space = session.space().clone();
    let mut passed = 0;
    for p in space.iter().step_by(61) {
        let r = eval.evaluate(&p);
        assert!(r.is_ok(), "{{{}}}: {r:?}", space.config(&p));
        passed += 1;
    }
    assert!(passed > 10, "{passed} configurations evaluated");
    let _ = std::fs::remove_dir_all(&dir);
}
