//! OpenCL `__local` arguments anywhere in the parameter list (issue 25): declared with
//! `KernelBuilder::local` between the other arguments, sized per configuration by an
//! expression of the tuning parameters, passed by the runtime (the application's launch
//! leaves them out); a `__constant` pointer argument is an ordinary buffer. Constant-memory
//! symbols are refused for OpenCL with a message that says what to do instead. On PoCL.

mod common;

use common::device;
use kernel_wisdom::LaunchOptions;
use kernel_wisdom::{arg, lit, param, DeviceBuffer, Error, KernelBuilder, Source, WisdomKernel};

const SOURCE: &str = include_str!("../../kw-cli/tests/t1/smooth.cl");

fn builder() -> KernelBuilder {
    let mut b = KernelBuilder::new("smooth", Source::text("smooth.cl", SOURCE));
    let bx = b.tune("block_size_x", [8, 16, 32], 16);
    let tile = b.tune("tile_size", [1, 2, 4], 1);
    b.tune("use_blocked", [0, 1], 0);
    b.tune("variant", [0], 0);
    b.problem_size([arg("n")])
        .block_size(bx.clone(), 1, 1)
        .grid_divisors(bx.clone() * tile.clone(), 1, 1)
        .output::<f32>("out")
        .local::<f32>("tile", param("block_size_x") * param("tile_size") + lit(2))
        .input::<f32>("in")
        .buffer_len("weights", lit(3))
        .input::<f32>("weights")
        .local::<f32>("w_local", 3)
        .scalar::<i32>("n");
    b
}

fn expected(input: &[f32], w: [f32; 3]) -> Vec<f32> {
    let n = input.len() as isize;
    let at = |i: isize| {
        if i < 0 || i >= n {
            0.0
        } else {
            input[i as usize]
        }
    };
    (0..n)
        .map(|i| w[0] * at(i - 1) + w[1] * at(i) + w[2] * at(i + 1))
        .collect()
}

#[test]
fn local_arguments_between_others_are_sized_per_configuration() {
    let Some(dev) = device() else { return };
    let def = builder().build().unwrap();
    assert_eq!(
        def.local_args
            .iter()
            .map(|l| l.position)
            .collect::<Vec<_>>(),
        [1, 4],
        "`tile` after `out`, `w_local` after `weights`"
    );
    let kernel = WisdomKernel::new(def, dev.clone()).unwrap();
    let n = 777usize;
    let input: Vec<f32> = (0..n).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
    let w = [0.5f32, -1.0, 2.0];
    let ib = DeviceBuffer::from_slice(dev.as_ref(), &input).unwrap();
    let wb = DeviceBuffer::from_slice(dev.as_ref(), &w).unwrap();
    let ob = DeviceBuffer::<f32>::new(dev.as_ref(), n).unwrap();
    let want = expected(&input, w);
    // Every configuration: the local arguments' sizes follow block_size_x * tile_size.
    for config in kernel.space().iter().map(|p| kernel.space().config(&p)) {
        ob.write(&vec![f32::NAN; n]).unwrap();
        kernel
            .launch_with(
                &[ob.arg(), ib.arg(), wb.arg(), (n as i32).into()],
                LaunchOptions::new().config(&config),
            )
            .unwrap_or_else(|e| panic!("{{{config}}}: {e}"));
        let got = ob.to_vec().unwrap();
        for (i, (g, e)) in got.iter().zip(&want).enumerate() {
            assert!(
                (g - e).abs() <= 1e-5,
                "{{{config}}} element {i}: {g} vs {e}"
            );
        }
    }
    // The application passes its four arguments; five are refused, naming the count.
    let e = kernel
        .launch(&[ob.arg(), ib.arg(), wb.arg(), wb.arg(), (n as i32).into()])
        .unwrap_err();
    assert!(matches!(e, Error::ArgumentCount { .. }), "{e}");
}

#[test]
fn constant_symbols_are_refused_for_opencl_with_what_to_do_instead() {
    let mut b = builder();
    b.constant_symbol::<f32>("weights_c", 3);
    let e = b.build().unwrap_err().to_string();
    assert!(
        e.contains("constant symbol `weights_c`") && e.contains("`__constant` pointer argument"),
        "{e}"
    );
}

#[test]
fn local_arguments_are_refused_where_they_cannot_stand() {
    // Two at one position, and one past the end of the parameter list.
    let mut def = builder().build().unwrap();
    def.local_args[1].position = 1;
    let text = def
        .check(None)
        .iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(text.contains("position 1 is taken twice"), "{text}");
    def.local_args[1].position = 9;
    let text = def
        .check(None)
        .iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(text.contains("position 9 is outside"), "{text}");
}

/// `__local` memory beyond the device's (`CL_DEVICE_LOCAL_MEM_SIZE`, 512 KiB on PoCL): PoCL
/// aborts the process at such a launch (an assertion in its pthread device), so the launch
/// is refused first, naming the bytes and the limit; the kernel still launches after it.
#[test]
fn local_memory_beyond_the_device_is_refused_not_launched() {
    let Some(dev) = device() else { return };
    let mut b = KernelBuilder::new("smooth", Source::text("smooth.cl", SOURCE));
    let bx = b.tune("block_size_x", [8, 16], 16);
    let tile = b.tune("tile_size", [1, 100_000], 1);
    b.tune("use_blocked", [0], 0);
    b.tune("variant", [0], 0);
    b.problem_size([arg("n")])
        .block_size(bx.clone(), 1, 1)
        .grid_divisors(bx.clone(), 1, 1)
        .output::<f32>("out")
        .local::<f32>("tile", param("block_size_x") * tile + lit(2))
        .input::<f32>("in")
        .buffer_len("weights", lit(3))
        .input::<f32>("weights")
        .local::<f32>("w_local", 3)
        .scalar::<i32>("n");
    let kernel = WisdomKernel::new(b.build().unwrap(), dev.clone()).unwrap();
    let n = 64usize;
    let ib = DeviceBuffer::from_slice(dev.as_ref(), &vec![1.0f32; n]).unwrap();
    let wb = DeviceBuffer::from_slice(dev.as_ref(), &[0.0f32, 1.0, 0.0]).unwrap();
    let ob = DeviceBuffer::<f32>::new(dev.as_ref(), n).unwrap();
    let args = [ob.arg(), ib.arg(), wb.arg(), (n as i32).into()];
    let big = kernel_wisdom::Config(vec![
        ("block_size_x".into(), 16i64.into()),
        ("tile_size".into(), 100_000i64.into()),
        ("use_blocked".into(), 0i64.into()),
        ("variant".into(), 0i64.into()),
    ]);
    let err = kernel
        .launch_with(&args, LaunchOptions::new().config(&big))
        .expect_err("6.4 MB of local memory is refused");
    // An invalid configuration where the device is known (its geometry), before the
    // backend's own check at the launch: the configuration's fault (KW_ERROR_LAUNCH in the
    // C API), as for a kernel's own local arrays, never the arguments'.
    assert!(
        matches!(err, kernel_wisdom::Error::InvalidConfig { .. }),
        "{err:?}"
    );
    assert!(!err.is_arguments_fault(), "{err:?}");
    let e = err.to_string();
    assert!(e.contains("CL_DEVICE_LOCAL_MEM_SIZE"), "{e}");
    assert!(
        e.contains("bytes of local memory, more than the device's"),
        "{e}"
    );
    let small = kernel_wisdom::Config(vec![
        ("block_size_x".into(), 16i64.into()),
        ("tile_size".into(), 1i64.into()),
        ("use_blocked".into(), 0i64.into()),
        ("variant".into(), 0i64.into()),
    ]);
    kernel
        .launch_with(&args, LaunchOptions::new().config(&small))
        .expect("a configuration within the device's local memory");
    let got = ob.to_vec().unwrap();
    assert!(got[1..n - 1].iter().all(|&v| v == 1.0), "{got:?}");
}

/// A kernel whose own `__local` array is larger than the device's local memory: PoCL's
/// compiler accepts it and its launch aborted the process; the launch is refused instead.
#[test]
fn a_kernel_whose_own_local_arrays_are_too_large_is_refused() {
    let Some(dev) = device() else { return };
    let limit = dev.info().max_shared_memory_per_block;
    let floats = limit / 4 + 4096;
    let source = format!(
        "__kernel void big(__global float* out, const int n) {{\n\
         __local float s[{floats}];\n\
         const int i = get_global_id(0);\n\
         s[get_local_id(0)] = (float)i;\n\
         barrier(CLK_LOCAL_MEM_FENCE);\n\
         if (i < n) out[i] = s[get_local_id(0)] + s[{last}];\n\
         }}\n",
        last = floats - 1
    );
    let mut b = KernelBuilder::new("big", Source::text("big.cl", source));
    let bx = b.tune("block_size_x", [16], 16);
    b.problem_size([arg("n")])
        .block_size(bx.clone(), 1, 1)
        .grid_divisors(bx, 1, 1)
        .output::<f32>("out")
        .scalar::<i32>("n");
    let kernel = WisdomKernel::new(b.build().unwrap(), dev.clone()).unwrap();
    let out = DeviceBuffer::<f32>::new(dev.as_ref(), 64).unwrap();
    match kernel.launch(&[out.arg(), 64i32.into()]) {
        Err(err) => {
            // The configuration's fault (KW_ERROR_LAUNCH in the C API), as for `__local`
            // arguments past the limit.
            assert!(!err.is_arguments_fault(), "{err:?}");
            let e = err.to_string();
            assert!(e.contains("CL_DEVICE_LOCAL_MEM_SIZE"), "{e}");
            assert!(e.contains("bytes of local memory"), "{e}");
        }
        Ok(()) => panic!("a launch past the device's local memory ran"),
    }
}
