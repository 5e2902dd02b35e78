//! What goes wrong is reported, never a panic: bad definitions at `build()`, configurations
//! that do not compile (with the build log), wrong arguments, device selection.

mod common;

use common::device;
use kernel_wisdom::LaunchOptions;
use kernel_wisdom::{
    arg, open_device, Access, Config, DeviceBuffer, DeviceSelector, Error, KernelBuilder, Source,
    WisdomKernel,
};

const FRAGILE: &str = r#"
#if elems_per_thread == 3
#error "elems_per_thread=3 is not supported by this kernel"
#endif
__kernel void fill(__global int* out, const int value, const int n) {
    for (int k = 0; k < elems_per_thread; k++) {
        int i = get_global_id(0) * elems_per_thread + k;
        if (i < n) out[i] = value + k * 0;
    }
}
"#;

fn fragile(default_ept: i64) -> KernelBuilder {
    let mut b = KernelBuilder::new("fill", Source::text("fill.cl", FRAGILE));
    let bx = b.tune("block_size_x", [16, 64], 64);
    let ept = b.tune("elems_per_thread", [1, 2, 3], default_ept);
    b.problem_size([arg("n")])
        .block_size(bx.clone(), 1, 1)
        .grid_divisors(bx * ept, 1, 1)
        .output::<i32>("out")
        .scalar::<i32>("value")
        .scalar::<i32>("n");
    b
}

#[test]
fn a_configuration_that_does_not_compile_surfaces_its_build_log() {
    let Some(dev) = device() else { return };
    let kernel = WisdomKernel::new(fragile(1).build().unwrap(), dev.clone()).unwrap();
    let out = DeviceBuffer::<i32>::new(dev.as_ref(), 100).unwrap();
    let args = [out.arg(), 5i32.into(), 100i32.into()];
    let mut bad = kernel.default_config().clone();
    bad.set("elems_per_thread", 3);
    let err = kernel
        .launch_with(&args, LaunchOptions::new().config(&bad))
        .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::Config { .. }), "{text}");
    assert!(text.contains("is not supported by this kernel"), "{text}");
    assert!(text.contains("elems_per_thread=3"), "{text}");
    // The failure is remembered: asking again does not recompile.
    let before = kernel.compiled_count();
    assert!(kernel
        .launch_with(&args, LaunchOptions::new().config(&bad))
        .is_err());
    assert_eq!(kernel.compiled_count(), before);
}

/// A buffer of another device (or context) is the arguments' fault whatever the
/// configuration: an argument error, and the selection is not blamed (no fallback, no failure
/// recorded), so the next good launch still runs the selected configuration.
#[test]
fn a_foreign_buffer_does_not_demote_the_selection() {
    let Some((index, dev)) = common::opencl_device() else {
        return;
    };
    let other = open_device(&DeviceSelector::Index(index)).unwrap();
    let mut chosen = Config::default();
    chosen.set("block_size_x", 16);
    chosen.set("elems_per_thread", 2);
    let pick = chosen.clone();
    let kernel = WisdomKernel::new(fragile(1).build().unwrap(), dev.clone())
        .unwrap()
        .with_selector(move |_| Some(pick.clone()));
    let n = 1000;
    let foreign = DeviceBuffer::<i32>::new(other.as_ref(), n).unwrap();
    let err = kernel
        .launch(&[foreign.arg(), 7i32.into(), (n as i32).into()])
        .unwrap_err();
    assert!(err.is_arguments_fault(), "{err}");
    assert!(kernel.failures().is_empty(), "{:?}", kernel.failures());
    let out = DeviceBuffer::from_slice(dev.as_ref(), &vec![-1i32; n]).unwrap();
    kernel
        .launch(&[out.arg(), 7i32.into(), (n as i32).into()])
        .unwrap();
    assert!(out.to_vec().unwrap().iter().all(|&x| x == 7));
    assert_eq!(kernel.config_for(&[n as i64, 1, 1]), Some(chosen));
}

#[test]
fn a_selected_configuration_that_fails_falls_back_to_the_default() {
    let Some(dev) = device() else { return };
    let def = fragile(1).build().unwrap();
    let mut bad = Config::default();
    bad.set("block_size_x", 16);
    bad.set("elems_per_thread", 3);
    let chosen = bad.clone();
    let kernel = WisdomKernel::new(def, dev.clone())
        .unwrap()
        .with_selector(move |_| Some(chosen.clone()));
    assert_eq!(kernel.select_config(&[100, 1, 1]).unwrap(), bad);
    let n = 1000;
    let out = DeviceBuffer::from_slice(dev.as_ref(), &vec![-1i32; n]).unwrap();
    kernel
        .launch(&[out.arg(), 42i32.into(), (n as i32).into()])
        .unwrap();
    assert!(out.to_vec().unwrap().iter().all(|&x| x == 42));
    let failures = kernel.failures();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].config, bad);
    assert!(
        failures[0].error.contains("not supported"),
        "{}",
        failures[0].error
    );
    assert_eq!(
        kernel.config_for(&[n as i64, 1, 1]).as_ref(),
        Some(kernel.default_config())
    );
    // Later launches of that size use the default directly: no new failure.
    kernel
        .launch(&[out.arg(), 7i32.into(), (n as i32).into()])
        .unwrap();
    assert_eq!(kernel.failures().len(), 1);
}

#[test]
fn a_default_that_does_not_compile_is_an_error_with_the_log() {
    let Some(dev) = device() else { return };
    let kernel = WisdomKernel::new(fragile(3).build().unwrap(), dev.clone()).unwrap();
    let out = DeviceBuffer::<i32>::new(dev.as_ref(), 10).unwrap();
    let err = kernel
        .launch(&[out.arg(), 1i32.into(), 10i32.into()])
        .unwrap_err();
    assert!(
        err.to_string().contains("not supported by this kernel"),
        "{err}"
    );
}

#[test]
fn wrong_arguments_are_errors_naming_the_argument() {
    let Some(dev) = device() else { return };
    let kernel = WisdomKernel::new(fragile(1).build().unwrap(), dev.clone()).unwrap();
    let ints = DeviceBuffer::<i32>::new(dev.as_ref(), 10).unwrap();
    let floats = DeviceBuffer::<f32>::new(dev.as_ref(), 10).unwrap();
    let err = kernel.launch(&[ints.arg(), 1i32.into()]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::ArgumentCount {
                given: 2,
                expected: 3,
                ..
            }
        ),
        "{err}"
    );
    let err = kernel
        .launch(&[floats.arg(), 1i32.into(), 10i32.into()])
        .unwrap_err();
    assert!(err.to_string().contains("argument 0 `out`"), "{err}");
    assert!(err.to_string().contains("buffer of i32"), "{err}");
    let err = kernel
        .launch(&[ints.arg(), 1i64.into(), 10i32.into()])
        .unwrap_err();
    assert!(err.to_string().contains("argument 1 `value`"), "{err}");
    let err = kernel
        .launch(&[ints.arg(), ints.arg(), 10i32.into()])
        .unwrap_err();
    assert!(err.to_string().contains("scalar i32"), "{err}");
    let mut not_in_space = kernel.default_config().clone();
    not_in_space.set("elems_per_thread", 5);
    let err = kernel
        .launch_with(
            &[ints.arg(), 1i32.into(), 10i32.into()],
            LaunchOptions::new().config(&not_in_space),
        )
        .unwrap_err();
    assert!(matches!(err, Error::InvalidConfig { .. }), "{err}");
}

#[test]
fn a_bad_definition_lists_every_problem_at_build() {
    let mut b = KernelBuilder::new("fill", Source::text("fill.cl", "#include \"missing.h\"\n"));
    let bx = b.tune("block_size_x", [16, 64], 64);
    b.tune("elems_per_thread", [1, 2], 2);
    b.restriction(kernel_wisdom::param("elems_per_thread").le(1))
        .restriction_text("block_size_x <")
        .problem_size([arg("m")])
        .block_size(kernel_wisdom::param("block_sise_x"), 1, 1)
        .grid_divisors(bx, 1, 1)
        .buffer::<i32>("out", Access::Out)
        .scalar::<i32>("n");
    let err = b.build().unwrap_err();
    let Error::Definition { problems, .. } = &err else {
        panic!("expected a definition error, got {err}")
    };
    let text = err.to_string();
    assert!(text.contains("missing.h"), "{text}");
    assert!(text.contains("restriction `block_size_x <`"), "{text}");
    assert!(text.contains("unknown argument `m`"), "{text}");
    assert!(text.contains("did you mean `n`"), "{text}");
    assert!(text.contains("did you mean `block_size_x`"), "{text}");
    assert_eq!(problems.len(), 4, "{text}");

    // Once the names are right, the default breaking a restriction is reported, and a
    // geometry beyond the device is reported when checked against it.
    let mut b = fragile(2);
    b.restriction(kernel_wisdom::param("elems_per_thread").le(1));
    let text = b.build().unwrap_err().to_string();
    assert!(text.contains("breaks restriction"), "{text}");
    let Some(dev) = device() else { return };
    let mut b = fragile(1);
    b.block_size(1 << 20, 1, 1);
    let text = b.build_for(dev.as_ref()).unwrap_err().to_string();
    assert!(text.contains("outside 1..="), "{text}");
}

#[test]
fn devices_are_selected_by_index_and_name() {
    let Some(dev) = device() else { return };
    let name = dev.info().name.clone();
    let part: String = name.chars().take(6).collect::<String>().to_uppercase();
    let by_name = open_device(&DeviceSelector::Name(part)).unwrap();
    assert_eq!(by_name.info().name, name);
    let err = open_device(&DeviceSelector::Index(999)).unwrap_err();
    assert!(err.to_string().contains(&name), "lists the devices: {err}");
    let err = open_device(&DeviceSelector::Name("no such device".into())).unwrap_err();
    assert!(matches!(err, Error::NoDevice { .. }), "{err}");
}

/// Arguments declared with another type than the kernel's parameters (where OpenCL names a
/// basic one): an `int` buffer for a `float*`, or an `int` scalar for a `float`, launched and
/// computed garbage with success; now the launch names the parameter. A `uint` for an `int`
/// (same size and kind) and any buffer for a `uchar*` (bytes) still launch.
#[test]
fn arguments_of_another_type_than_the_kernels_parameters_are_refused() {
    let Some(dev) = device() else { return };
    const SAXPY: &str = "__kernel void saxpy(__global float* y, __global const float* x, \
        const float a, const int n, __global uchar* scratch) { int i = get_global_id(0); \
        if (i < n) y[i] += a * x[i]; }";
    let build = |x_int: bool, a_int: bool, n_uint: bool| {
        let mut b = KernelBuilder::new("saxpy", Source::text("saxpy.cl", SAXPY));
        b.problem_size([arg("n")])
            .block_size(8, 1, 1)
            .output::<f32>("y");
        if x_int {
            b.input::<i32>("x");
        } else {
            b.input::<f32>("x");
        }
        if a_int {
            b.scalar::<i32>("a");
        } else {
            b.scalar::<f32>("a");
        }
        if n_uint {
            b.scalar::<u32>("n");
        } else {
            b.scalar::<i32>("n");
        }
        b.input::<f32>("scratch");
        WisdomKernel::new(b.build().unwrap(), dev.clone()).unwrap()
    };
    let n = 16;
    let y = DeviceBuffer::from_slice(dev.as_ref(), &vec![1f32; n]).unwrap();
    let xf = DeviceBuffer::from_slice(dev.as_ref(), &vec![2f32; n]).unwrap();
    let xi = DeviceBuffer::from_slice(dev.as_ref(), &vec![2i32; n]).unwrap();
    let scratch = DeviceBuffer::from_slice(dev.as_ref(), &vec![0f32; n]).unwrap();

    let e = build(true, false, false)
        .launch(&[
            y.arg(),
            xi.arg(),
            3f32.into(),
            (n as i32).into(),
            scratch.arg(),
        ])
        .unwrap_err()
        .to_string();
    assert!(e.contains("`float*`") && e.contains("buffer of i32"), "{e}");
    assert!(
        e.contains("parameter `x`"),
        "names the kernel's parameter: {e}"
    );
    let e = build(false, true, false)
        .launch(&[
            y.arg(),
            xf.arg(),
            3i32.into(),
            (n as i32).into(),
            scratch.arg(),
        ])
        .unwrap_err()
        .to_string();
    assert!(e.contains("`float`") && e.contains("scalar i32"), "{e}");
    build(false, false, true)
        .launch(&[
            y.arg(),
            xf.arg(),
            3f32.into(),
            (n as u32).into(),
            scratch.arg(),
        ])
        .unwrap();
    assert_eq!(y.to_vec().unwrap(), vec![7f32; n]);
}
