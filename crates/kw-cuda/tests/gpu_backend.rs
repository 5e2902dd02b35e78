//! GPU tests of the CUDA backend through the `Device` trait. Each prints
//! `SKIPPED: no CUDA driver` and passes where there is no driver.

mod common;

use common::{assert_close, device, request, source, Rng, POISON};
use kw_core::backend::{BackendError, Device, KernelArg};
use kw_core::buffer::DeviceBuffer;
use kw_core::kernel_def::eval::Geometry;
use kw_core::kernel_def::Header;
use kw_cuda::{CudaKernel, ImageKind};

const VECTOR_ADD: &str = r#"
extern "C" __global__ void vector_add(float* __restrict__ c, const float* __restrict__ a,
                                      const float* __restrict__ b, int n) {
    int base = (blockIdx.x * BLOCK_SIZE_X) * ELEMS_PER_THREAD + threadIdx.x;
    #pragma unroll
    for (int k = 0; k < ELEMS_PER_THREAD; k++) {
        int i = base + k * BLOCK_SIZE_X;
        if (i < n) c[i] = a[i] + b[i];
    }
}
"#;

fn geometry(grid: u32, block: u32, shared: u32) -> Geometry {
    Geometry {
        grid: [grid, 1, 1],
        block: [block, 1, 1],
        shared_memory_bytes: shared,
        local_args: Default::default(),
    }
}

#[test]
fn the_device_is_described() {
    let Some(dev) = device("the_device_is_described") else {
        return;
    };
    let info = dev.info();
    println!("{info:#?}");
    println!("NVRTC: {:?}", kw_cuda::nvrtc_library());
    assert!(!info.name.is_empty());
    assert!(
        info.architecture.starts_with("sm_"),
        "{}",
        info.architecture
    );
    assert!(info.uuid.as_deref().is_some_and(|u| u.starts_with("GPU-")));
    assert!(info.compute_units > 0 && info.global_memory_bytes > 0);
    assert!(info.max_threads_per_block >= 512 && info.warp_size == 32);
    assert!(info.max_shared_memory_per_block >= 48 * 1024);
    assert!(
        info.compiler_version.starts_with("NVRTC "),
        "{}",
        info.compiler_version
    );
    assert!(
        info.driver_version.starts_with("CUDA "),
        "{}",
        info.driver_version
    );
}

#[test]
fn vector_add_matches_the_cpu_in_every_configuration() {
    let Some(dev) = device("vector_add_matches_the_cpu_in_every_configuration") else {
        return;
    };
    let mut rng = Rng::new(1);
    let n = 1_000_003usize;
    let a = rng.vec_f32(n);
    let b = rng.vec_f32(n);
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    let da = DeviceBuffer::from_slice(dev, &a).unwrap();
    let db = DeviceBuffer::from_slice(dev, &b).unwrap();
    let dc = DeviceBuffer::<f32>::new(dev, n).unwrap();
    let src = source("vector_add.cu", VECTOR_ADD);
    for block in [32u32, 64, 128, 256, 512, 1024] {
        for ept in [1u32, 2, 4, 8] {
            let defines = vec![
                ("BLOCK_SIZE_X".to_string(), block.to_string()),
                ("ELEMS_PER_THREAD".to_string(), ept.to_string()),
            ];
            let k = dev
                .compile(&request(&src, "vector_add", &defines, &[]))
                .unwrap();
            assert_eq!(k.param_count().unwrap_or(4), 4);
            dc.fill(POISON).unwrap();
            let grid = (n as u32).div_ceil(block * ept);
            dev.launch(
                k.as_ref(),
                &geometry(grid, block, 0),
                &[dc.arg(), da.arg(), db.arg(), KernelArg::from(n as i32)],
            )
            .unwrap();
            dev.synchronize().unwrap();
            assert_close(
                &format!("vector_add block={block} ept={ept}"),
                &dc.to_vec().unwrap(),
                &want,
                0.0,
            );
        }
    }
}

#[test]
fn templated_and_namespaced_kernels_are_found_by_name_expression() {
    let Some(dev) = device("templated_and_namespaced_kernels_are_found_by_name_expression") else {
        return;
    };
    let src = source(
        "scale.cu",
        r#"
namespace kw {
template <typename T, int N>
__global__ void scale(T* out, const T* in, T f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        T v = in[i];
        for (int k = 0; k < N; k++) v *= f;
        out[i] = v;
    }
}
__global__ void negate(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = -x[i];
}
}
"#,
    );
    let mut rng = Rng::new(2);
    let n = 4097usize;
    let x = rng.vec_f32(n);
    let dx = DeviceBuffer::from_slice(dev, &x).unwrap();
    let dy = DeviceBuffer::<f32>::new(dev, n).unwrap();
    let targs = ["float".to_string(), "2".to_string()];
    let k = dev
        .compile(&request(&src, "kw::scale", &[], &targs))
        .unwrap();
    let ck = k.as_any().downcast_ref::<CudaKernel>().unwrap();
    println!(
        "lowered: {} ({:?}, {:?})",
        ck.lowered_name(),
        ck.image_kind(),
        ck.stats()
    );
    assert!(ck.lowered_name().starts_with("_Z"), "{}", ck.lowered_name());
    dy.fill(POISON).unwrap();
    let g = geometry((n as u32).div_ceil(128), 128, 0);
    dev.launch(
        k.as_ref(),
        &g,
        &[
            dy.arg(),
            dx.arg(),
            KernelArg::from(1.5f32),
            KernelArg::from(n as i32),
        ],
    )
    .unwrap();
    let want: Vec<f32> = x.iter().map(|v| v * 1.5 * 1.5).collect();
    assert_close("kw::scale<float, 2>", &dy.to_vec().unwrap(), &want, 1e-6);

    // The same template for double, three multiplications.
    let xd: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    let dxd = DeviceBuffer::from_slice(dev, &xd).unwrap();
    let dyd = DeviceBuffer::<f64>::new(dev, n).unwrap();
    dyd.fill(f64::NAN).unwrap();
    let targs = ["double".to_string(), "3".to_string()];
    let k = dev
        .compile(&request(&src, "kw::scale", &[], &targs))
        .unwrap();
    dev.launch(
        k.as_ref(),
        &g,
        &[
            dyd.arg(),
            dxd.arg(),
            KernelArg::from(-2.0f64),
            KernelArg::from(n as i32),
        ],
    )
    .unwrap();
    let got = dyd.to_vec().unwrap();
    for (i, (&g, &v)) in got.iter().zip(&xd).enumerate() {
        assert_eq!(g, v * -8.0, "element {i}");
    }

    // A namespaced, non-template (C++-mangled) kernel.
    let k = dev.compile(&request(&src, "kw::negate", &[], &[])).unwrap();
    dx.write(&x).unwrap();
    dev.launch(k.as_ref(), &g, &[dx.arg(), KernelArg::from(n as i32)])
        .unwrap();
    let want: Vec<f32> = x.iter().map(|v| -v).collect();
    assert_close("kw::negate", &dx.to_vec().unwrap(), &want, 0.0);
}

#[test]
fn embedded_headers_and_include_directories_are_found() {
    let Some(dev) = device("embedded_headers_and_include_directories_are_found") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("kw-cuda-inc-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("sub/offset.cuh"), "#define KW_OFFSET 10.0f\n").unwrap();
    let mut src = source(
        "with_headers.cu",
        r#"
#include "helpers/twice.cuh"
#include "sub/offset.cuh"
extern "C" __global__ void apply(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = twice(x[i]) + KW_OFFSET + EXTRA;
}
"#,
    );
    src.headers.push(Header {
        name: "helpers/twice.cuh".into(),
        text: "__device__ inline float twice(float v) { return 2.0f * v; }\n".into(),
    });
    let defines = vec![("EXTRA".to_string(), "0.5f".to_string())];
    let dirs = vec![dir.clone()];
    let flags = vec!["--use_fast_math".to_string()];
    let mut req = request(&src, "apply", &defines, &[]);
    req.include_dirs = &dirs;
    req.flags = &flags;
    let k = dev.compile(&req).unwrap();
    let mut rng = Rng::new(3);
    let x = rng.vec_f32(1000);
    let dx = DeviceBuffer::from_slice(dev, &x).unwrap();
    dev.launch(
        k.as_ref(),
        &geometry(4, 256, 0),
        &[dx.arg(), KernelArg::from(1000i32)],
    )
    .unwrap();
    let want: Vec<f32> = x.iter().map(|v| 2.0 * v + 10.5).collect();
    assert_close("headers", &dx.to_vec().unwrap(), &want, 1e-6);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn dynamic_shared_memory_above_48_kib_is_granted() {
    let Some(dev) = device("dynamic_shared_memory_above_48_kib_is_granted") else {
        return;
    };
    let max = dev.info().max_shared_memory_per_block;
    let bytes: u32 = 100 * 1024;
    if max < u64::from(bytes) {
        println!("SKIPPED: device allows {max} bytes of shared memory per block");
        return;
    }
    // Each block reverses its chunk of `per_block` floats through shared memory.
    let src = source(
        "reverse.cu",
        r#"
extern "C" __global__ void reverse_chunks(float* out, const float* in, int per_block) {
    extern __shared__ float buf[];
    const float* src = in + (size_t)blockIdx.x * per_block;
    for (int i = threadIdx.x; i < per_block; i += blockDim.x) buf[i] = src[i];
    __syncthreads();
    float* dst = out + (size_t)blockIdx.x * per_block;
    for (int i = threadIdx.x; i < per_block; i += blockDim.x) dst[i] = buf[per_block - 1 - i];
}
"#,
    );
    let k = dev
        .compile(&request(&src, "reverse_chunks", &[], &[]))
        .unwrap();
    let per_block = (bytes / 4) as usize;
    let blocks = 264usize;
    let mut rng = Rng::new(4);
    let x = rng.vec_f32(per_block * blocks);
    let dx = DeviceBuffer::from_slice(dev, &x).unwrap();
    let dy = DeviceBuffer::<f32>::new(dev, x.len()).unwrap();
    dy.fill(POISON).unwrap();
    dev.launch(
        k.as_ref(),
        &geometry(blocks as u32, 512, bytes),
        &[dy.arg(), dx.arg(), KernelArg::from(per_block as i32)],
    )
    .unwrap();
    let want: Vec<f32> = x
        .chunks(per_block)
        .flat_map(|c| c.iter().rev().copied())
        .collect();
    assert_close("reverse_chunks", &dy.to_vec().unwrap(), &want, 0.0);
}

#[test]
fn wrong_arguments_and_foreign_objects_are_errors() {
    let Some(dev) = device("wrong_arguments_and_foreign_objects_are_errors") else {
        return;
    };
    let src = source("vector_add.cu", VECTOR_ADD);
    let defines = vec![
        ("BLOCK_SIZE_X".to_string(), "128".to_string()),
        ("ELEMS_PER_THREAD".to_string(), "1".to_string()),
    ];
    let k = dev
        .compile(&request(&src, "vector_add", &defines, &[]))
        .unwrap();
    let a = DeviceBuffer::<f32>::new(dev, 16).unwrap();
    let g = geometry(1, 128, 0);
    if k.param_count().is_some() {
        let e = dev
            .launch(k.as_ref(), &g, &[a.arg(), a.arg(), a.arg()])
            .unwrap_err();
        assert!(matches!(e, BackendError::Argument { .. }), "{e}");
        let e = dev
            .launch(
                k.as_ref(),
                &g,
                &[a.arg(), a.arg(), a.arg(), KernelArg::from(16i64)],
            )
            .unwrap_err();
        assert!(matches!(e, BackendError::Argument { index: 3, .. }), "{e}");
        println!("{e}");
    }
    let long = KernelArg::device_buffer(a.memory(), kw_core::scalar::ScalarType::F32, 17);
    let e = dev
        .launch(
            k.as_ref(),
            &g,
            &[long, a.arg(), a.arg(), KernelArg::from(16i32)],
        )
        .unwrap_err();
    assert!(matches!(e, BackendError::Argument { index: 0, .. }), "{e}");
    let e = dev
        .launch(
            k.as_ref(),
            &geometry(1, 4096, 0),
            &[a.arg(), a.arg(), a.arg(), KernelArg::from(16i32)],
        )
        .unwrap_err();
    assert!(matches!(e, BackendError::Launch { .. }), "{e}");
    println!("{e}");
}

#[test]
fn compile_errors_carry_the_build_log() {
    let Some(dev) = device("compile_errors_carry_the_build_log") else {
        return;
    };
    let src = source(
        "broken.cu",
        "extern \"C\" __global__ void broken(float* x) { x[0] = undefined_name; }",
    );
    let e = match dev.compile(&request(&src, "broken", &[], &[])) {
        Err(e) => e,
        Ok(_) => panic!("a broken kernel compiled"),
    };
    println!("{e}");
    match &e {
        BackendError::Compile {
            kernel,
            file,
            log,
            options,
            ..
        } => {
            assert_eq!(kernel, "broken");
            assert_eq!(file, "broken.cu");
            assert!(log.contains("undefined_name"), "{log}");
            assert!(options.contains("-std=c++17"), "{options}");
        }
        other => panic!("unexpected {other}"),
    }
    let src = source("empty.cu", "extern \"C\" __global__ void present() {}");
    assert!(matches!(
        dev.compile(&request(&src, "absent", &[], &[])),
        Err(BackendError::Compile { .. })
    ));
}

#[test]
fn kernels_are_cubin_for_the_exact_architecture() {
    let Some(dev) = device("kernels_are_cubin_for_the_exact_architecture") else {
        return;
    };
    let src = source(
        "empty.cu",
        "extern \"C\" __global__ void present(int* x) { if (x) x[0] = 1; }",
    );
    let k = dev
        .compile_cuda(&request(&src, "present", &[], &[]))
        .unwrap();
    println!(
        "{:?} options `{}` stats {:?}",
        k.image_kind(),
        k.options(),
        k.stats()
    );
    assert_eq!(k.image_kind(), ImageKind::Cubin);
    assert!(k
        .options()
        .contains(&format!("--gpu-architecture={}", dev.info().architecture)));
    assert_eq!(k.param_sizes(), Some(&[8usize][..]));
}

#[test]
fn timed_launches_report_device_time() {
    let Some(dev) = device("timed_launches_report_device_time") else {
        return;
    };
    let src = source("vector_add.cu", VECTOR_ADD);
    let defines = vec![
        ("BLOCK_SIZE_X".to_string(), "256".to_string()),
        ("ELEMS_PER_THREAD".to_string(), "1".to_string()),
    ];
    let k = dev
        .compile(&request(&src, "vector_add", &defines, &[]))
        .unwrap();
    let n = 1usize << 22;
    let a = DeviceBuffer::<f32>::new(dev, n).unwrap();
    a.fill(1.0).unwrap();
    let args = [a.arg(), a.arg(), a.arg(), KernelArg::from(n as i32)];
    let ms = dev
        .launch_timed(k.as_ref(), &geometry((n / 256) as u32, 256, 0), &args)
        .unwrap();
    println!("vector_add of 2^22 floats: {ms:.4} ms");
    assert!(ms > 0.0 && ms < 1000.0, "{ms}");
}

#[test]
fn buffers_round_trip_and_check_their_ranges() {
    let Some(dev) = device("buffers_round_trip_and_check_their_ranges") else {
        return;
    };
    let mut rng = Rng::new(5);
    let x = rng.vec_f32(1024);
    let a = DeviceBuffer::from_slice(dev, &x).unwrap();
    let b = DeviceBuffer::<f32>::new(dev, 2048).unwrap();
    b.fill(POISON).unwrap();
    b.copy_from(&a).unwrap();
    let got = b.to_vec().unwrap();
    assert_eq!(&got[..1024], &x[..]);
    assert!(got[1024..].iter().all(|v| v.is_nan()));
    assert!(matches!(
        a.copy_from(&b),
        Err(BackendError::OutOfRange { .. })
    ));
    assert!(matches!(
        a.memory().write(4000, &[0u8; 100]),
        Err(BackendError::OutOfRange { .. })
    ));
    let empty = dev.alloc(0).unwrap();
    assert_eq!(empty.len_bytes(), 0);
    empty.write(0, &[]).unwrap();
    empty.fill_zero().unwrap();
    // Zeroed on the device (cuMemsetD8Async), every byte.
    b.memory().fill_zero().unwrap();
    assert!(b.to_vec().unwrap().iter().all(|&v| v.to_bits() == 0));
}
