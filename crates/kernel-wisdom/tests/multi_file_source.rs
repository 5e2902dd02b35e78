//! Kernels made of several files (`Source::files`, issue 25): compiled as one translation unit
//! in order, includes found beside each file, and compiler messages that name the user's file
//! and line (not the driver's temporary copy). On PoCL in CI.

mod common;

use common::device;
use kernel_wisdom::{arg, DeviceBuffer, KernelBuilder, Source, WisdomKernel};
use std::path::PathBuf;

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "kw-multi-file-{tag}-{}-{}",
        std::process::id(),
        kw_core::files::nonce(0)
    ));
    std::fs::create_dir_all(d.join("inc")).unwrap();
    d
}

fn builder(files: &[PathBuf]) -> KernelBuilder {
    let mut b = KernelBuilder::new("scale", Source::files(files));
    let bx = b.tune("block_size_x", [32, 64], 64);
    b.problem_size([arg("n")])
        .block_size(bx.clone(), 1, 1)
        .grid_divisors(bx, 1, 1)
        .output::<f32>("y")
        .input::<f32>("x")
        .scalar::<i32>("n");
    b
}

#[test]
fn files_compile_in_order_with_includes_beside_each() {
    let Some(dev) = device() else { return };
    let d = dir("ok");
    std::fs::write(d.join("common.cl"), "#define SCALE 3.0f\n").unwrap();
    std::fs::write(d.join("inc/offset.h"), "#define OFFSET 0.5f\n").unwrap();
    std::fs::write(
        d.join("part1.cl"),
        "#include \"inc/offset.h\"\nfloat scaled(float v) { return SCALE * v + OFFSET; }",
    )
    .unwrap();
    std::fs::write(
        d.join("part2.cl"),
        "__kernel void scale(__global float* y, __global const float* x, int n) {\n\
         int i = get_global_id(0);\n if (i < n) y[i] = scaled(x[i]);\n}\n",
    )
    .unwrap();
    let files = [d.join("common.cl"), d.join("part1.cl"), d.join("part2.cl")];
    let def = builder(&files).build().unwrap();
    assert_eq!(def.source.file_name, "common.cl");
    assert_eq!(def.source.headers.len(), 1, "inc/offset.h embedded");
    let n = 1000usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let xb = DeviceBuffer::from_slice(dev.as_ref(), &x).unwrap();
    let yb = DeviceBuffer::<f32>::new(dev.as_ref(), n).unwrap();
    let kernel = WisdomKernel::new(def, dev.clone()).unwrap();
    kernel
        .launch(&[yb.arg(), xb.arg(), (n as i32).into()])
        .unwrap();
    let y = yb.to_vec().unwrap();
    for (i, v) in y.iter().enumerate() {
        assert_eq!(*v, 3.0 * i as f32 + 0.5, "element {i}");
    }
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn compile_errors_name_the_file_and_line() {
    let Some(dev) = device() else { return };
    let d = dir("error");
    std::fs::write(d.join("first.cl"), "#define A 1\n#define B 2\n").unwrap();
    std::fs::write(
        d.join("second.cl"),
        "__kernel void scale(__global float* y, __global const float* x, int n) {\n\
         int i = get_global_id(0);\n  y[i] = undeclared_thing;\n}\n",
    )
    .unwrap();
    let def = builder(&[d.join("first.cl"), d.join("second.cl")])
        .build()
        .unwrap();
    let kernel = WisdomKernel::new(def, dev.clone()).unwrap();
    let xb = DeviceBuffer::<f32>::new(dev.as_ref(), 64).unwrap();
    let yb = DeviceBuffer::<f32>::new(dev.as_ref(), 64).unwrap();
    let err = kernel
        .launch(&[yb.arg(), xb.arg(), 64i32.into()])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("second.cl:3:"),
        "the error names second.cl, line 3: {err}"
    );
    // A single file's errors name it too (not the driver's temporary file).
    let mut b = KernelBuilder::new(
        "scale",
        Source::text(
            "mine.cl",
            "__kernel void scale(__global float* y, __global const float* x, int n) {\n\
             y[0] = oops;\n}\n",
        ),
    );
    let bx = b.tune("block_size_x", [32], 32);
    b.problem_size([arg("n")])
        .block_size(bx.clone(), 1, 1)
        .grid_divisors(bx, 1, 1)
        .output::<f32>("y")
        .input::<f32>("x")
        .scalar::<i32>("n");
    let kernel = WisdomKernel::new(b.build().unwrap(), dev.clone()).unwrap();
    let err = kernel
        .launch(&[yb.arg(), xb.arg(), 64i32.into()])
        .unwrap_err()
        .to_string();
    assert!(err.contains("mine.cl:2:"), "{err}");
    // No file at all is a definition problem, not a crash.
    let e = builder(&[]).build().unwrap_err().to_string();
    assert!(e.contains("no file"), "{e}");
    let _ = std::fs::remove_dir_all(d);
}
