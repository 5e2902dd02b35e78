//! The OpenCL backend on a real device (PoCL on development and CI machines). Each test
//! prints `SKIPPED: no OpenCL platform` and returns when OpenCL is not available.

use kw_core::backend::{Backend, BackendError, CompileRequest, Device, KernelArg};
use kw_core::{buffer::DeviceBuffer, kernel_def::eval::Geometry, kernel_def::KernelSource};
use kw_opencl::OpenClBackend;
use std::sync::Arc;

/// OpenCL device 0, or the one `KW_DEVICE` names (an OpenCL index or a name substring, e.g.
/// `KW_DEVICE=NVIDIA` where PoCL and NVIDIA platforms are both installed).
fn device() -> Option<Arc<dyn Device>> {
    let wanted = std::env::var("KW_DEVICE").unwrap_or_default();
    let wanted = wanted.trim().to_lowercase();
    let index = match (wanted.parse::<usize>(), OpenClBackend.devices()) {
        _ if wanted.is_empty() => 0,
        (Ok(i), _) => i,
        (Err(_), Ok(list)) => list
            .iter()
            .position(|d| d.name.to_lowercase().contains(&wanted))
            .unwrap_or_else(|| panic!("no OpenCL device matches KW_DEVICE={wanted}")),
        (Err(_), Err(_)) => 0,
    };
    match OpenClBackend.open(index) {
        Ok(d) => Some(d),
        Err(e @ BackendError::Unavailable { .. }) => {
            eprintln!("SKIPPED: no OpenCL platform ({e})");
            None
        }
        Err(e) => panic!("opening OpenCL device {index} failed: {e}"),
    }
}

fn source(text: &str) -> KernelSource {
    KernelSource {
        file_name: "test.cl".into(),
        text: text.into(),
        headers: vec![],
    }
}

fn request<'a>(
    src: &'a KernelSource,
    name: &'a str,
    defines: &'a [(String, String)],
) -> CompileRequest<'a> {
    CompileRequest {
        source: src,
        kernel_name: name,
        defines,
        flags: &[],
        include_dirs: &[],
        template_args: &[],
    }
}

const SCALE: &str = r#"
#include "scale.h"
__kernel void scale(__global float* out, __global const float* in, float factor, int n) {
    int i = get_global_id(0);
    if (i < n) out[i] = in[i] * factor + OFFSET;
}
"#;

#[test]
fn device_info_describes_the_device() {
    let Some(d) = device() else { return };
    let info = d.info();
    assert!(!info.name.is_empty());
    assert!(info.max_threads_per_block >= 1);
    assert!(info.compute_units >= 1);
    assert!(!info.architecture.is_empty());
    println!("OpenCL device under test: {}", info.summary());
    let all = OpenClBackend.devices().unwrap();
    assert!(all.contains(info), "{info:?} is listed");
}

#[test]
fn buffers_round_trip_and_check_ranges() {
    let Some(d) = device() else { return };
    let data: Vec<i32> = (0..1000).map(|i| i * 7 - 300).collect();
    let a = DeviceBuffer::from_slice(d.as_ref(), &data).unwrap();
    assert_eq!(a.to_vec().unwrap(), data);
    let b = DeviceBuffer::<i32>::new(d.as_ref(), 1000).unwrap();
    b.copy_from(&a).unwrap();
    assert_eq!(b.to_vec().unwrap(), data);
    b.write_at(998, &[1, 2]).unwrap();
    assert_eq!(&b.to_vec().unwrap()[997..], &[data[997], 1, 2]);
    let err = b.write_at(999, &[1, 2]).unwrap_err();
    assert!(matches!(err, BackendError::OutOfRange { .. }), "{err}");
    let empty = DeviceBuffer::<f64>::new(d.as_ref(), 0).unwrap();
    assert!(empty.to_vec().unwrap().is_empty());
}

#[test]
fn a_buffer_beyond_the_largest_allocation_is_refused_by_name() {
    let Some(d) = device() else { return };
    let limit = d.info().max_alloc_bytes;
    assert!(limit > 0, "OpenCL reports CL_DEVICE_MAX_MEM_ALLOC_SIZE");
    assert!(limit <= d.info().global_memory_bytes);
    let err = d.alloc(limit as usize + 1).map(|_| ()).unwrap_err();
    assert!(
        matches!(err, BackendError::AllocTooLarge { bytes, limit: l, .. } if bytes == limit + 1 && l == limit),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains("CL_DEVICE_MAX_MEM_ALLOC_SIZE") && text.contains(&limit.to_string()),
        "{text}"
    );
}

#[test]
fn compiles_with_defines_and_headers_and_launches() {
    let Some(d) = device() else { return };
    let mut src = source(SCALE);
    src.headers.push(kw_core::kernel_def::Header {
        name: "scale.h".into(),
        text: "#define OFFSET ((float)ADD)\n".into(),
    });
    let defines = vec![("ADD".to_string(), "3".to_string())];
    let k = d.compile(&request(&src, "scale", &defines)).unwrap();
    assert_eq!(k.param_count(), Some(4));
    let n = 1000usize;
    let input: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 + 1.0).collect();
    let a = DeviceBuffer::from_slice(d.as_ref(), &input).unwrap();
    let out = DeviceBuffer::from_slice(d.as_ref(), &vec![f32::NAN; n]).unwrap();
    let g = Geometry {
        grid: [(n as u32).div_ceil(64), 1, 1],
        block: [64, 1, 1],
        shared_memory_bytes: 0,
        local_args: Default::default(),
    };
    let args = [
        out.arg(),
        a.arg(),
        KernelArg::from(2.0f32),
        KernelArg::from(n as i32),
    ];
    let ms = d.launch_timed(k.as_ref(), &g, &args).unwrap();
    assert!(ms >= 0.0);
    let got = out.to_vec().unwrap();
    for i in 0..n {
        assert_eq!(got[i], input[i] * 2.0 + 3.0, "element {i}");
    }
    // Wrong argument count and a type the kernel cannot take are errors, not crashes.
    let err = d.launch(k.as_ref(), &g, &args[..3]).unwrap_err();
    assert!(err.to_string().contains("takes 4 parameters"), "{err}");
    let swapped = [out.arg(), a.arg(), a.arg(), KernelArg::from(n as i32)];
    let err = d.launch(k.as_ref(), &g, &swapped).unwrap_err();
    assert!(err.to_string().contains("argument 2"), "{err}");
    assert!(err.to_string().contains("scalar"), "{err}");
    let g_local = Geometry {
        shared_memory_bytes: 64,
        local_args: Default::default(),
        ..g
    };
    let err = d.launch(k.as_ref(), &g_local, &args).unwrap_err();
    assert!(err.to_string().contains("__local"), "{err}");
}

#[test]
fn a_build_failure_carries_the_build_log() {
    let Some(d) = device() else { return };
    let src = source("__kernel void broken(__global float* x) { x[0] = undeclared_name; }\n");
    let err = d.compile(&request(&src, "broken", &[])).unwrap_err();
    match &err {
        BackendError::Compile { log, kernel, .. } => {
            assert_eq!(kernel, "broken");
            assert!(log.contains("undeclared_name"), "log: {log}");
        }
        other => panic!("expected a compile error, got {other}"),
    }
    assert!(err.to_string().contains("undeclared_name"));
    let src = source("__kernel void fine(__global float* x) { x[0] = 1.0f; }\n");
    let err = d.compile(&request(&src, "missing", &[])).unwrap_err();
    assert!(err.to_string().contains("fine"), "{err}");
}

/// An empty source is a typed compile error (OpenCL would read length 0 as NUL-terminated
/// and read past the buffer).
#[test]
fn an_empty_source_is_a_compile_error() {
    let Some(d) = device() else { return };
    let src = source("");
    let err = d.compile(&request(&src, "anything", &[])).unwrap_err();
    assert!(
        matches!(&err, BackendError::Compile { reason, .. } if reason.contains("empty")),
        "{err}"
    );
}

#[test]
fn dynamic_local_memory_is_a_trailing_local_parameter() {
    let Some(d) = device() else { return };
    // Reverses each block of 64 through local memory.
    let src = source(
        r#"
__kernel void reverse_blocks(__global int* out, __global const int* in, __local int* tmp) {
    int l = get_local_id(0), n = get_local_size(0), g = get_group_id(0);
    tmp[l] = in[g * n + l];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[g * n + l] = tmp[n - 1 - l];
}
"#,
    );
    let k = d.compile(&request(&src, "reverse_blocks", &[])).unwrap();
    let input: Vec<i32> = (0..256).map(|i| i * 3 + 1).collect();
    let a = DeviceBuffer::from_slice(d.as_ref(), &input).unwrap();
    let out = DeviceBuffer::from_slice(d.as_ref(), &[-1i32; 256]).unwrap();
    let g = Geometry {
        grid: [4, 1, 1],
        block: [64, 1, 1],
        shared_memory_bytes: 64 * 4,
        local_args: Default::default(),
    };
    d.launch(k.as_ref(), &g, &[out.arg(), a.arg()]).unwrap();
    let got = out.to_vec().unwrap();
    for b in 0..4 {
        for l in 0..64 {
            assert_eq!(got[b * 64 + l], input[b * 64 + 63 - l]);
        }
    }
}

#[test]
fn objects_of_another_device_are_refused() {
    let Some(d1) = device() else { return };
    let Some(d2) = device() else { return };
    let src = source("__kernel void one(__global int* x) { x[get_global_id(0)] = 1; }\n");
    let k = d1.compile(&request(&src, "one", &[])).unwrap();
    let buf = DeviceBuffer::<i32>::new(d2.as_ref(), 4).unwrap();
    let g = Geometry {
        grid: [1, 1, 1],
        block: [4, 1, 1],
        shared_memory_bytes: 0,
        local_args: Default::default(),
    };
    let err = d2.launch(k.as_ref(), &g, &[buf.arg()]).unwrap_err();
    assert!(matches!(err, BackendError::Foreign { .. }), "{err}");
    // The arguments' fault, whatever the configuration.
    let err = d1.launch(k.as_ref(), &g, &[buf.arg()]).unwrap_err();
    assert!(
        matches!(err, BackendError::Argument { index: 0, .. })
            && err
                .to_string()
                .contains("does not belong to this OpenCL device"),
        "{err}"
    );
}

/// The memory behind a buffer argument.
fn mem_of(arg: KernelArg<'_>) -> kw_core::backend::Mem<'_> {
    match arg {
        KernelArg::Buffer { mem, .. } => mem,
        KernelArg::Scalar(_) => unreachable!("a buffer"),
    }
}

#[test]
fn snapshots_keep_the_contents_at_their_place_on_the_queue_and_read_back_elsewhere() {
    let Some(dev) = device() else {
        return;
    };
    let first: Vec<u32> = (0..1000).collect();
    let second: Vec<u32> = (0..100).map(|i| i * 7 + 1).collect();
    let a = DeviceBuffer::from_slice(dev.as_ref(), &first).unwrap();
    let b = DeviceBuffer::from_slice(dev.as_ref(), &second).unwrap();
    let queue = kw_core::backend::Queue::DEFAULT;
    let sources = [
        (mem_of(a.arg()), 4000),
        (mem_of(b.arg()), 40),
        (mem_of(b.arg()), 0),
    ];
    let snapshot = dev.snapshot_on(queue, &sources).unwrap();
    // Overwritten at once, on the same queue: the copies were enqueued before.
    a.write(&vec![0; 1000]).unwrap();
    b.write(&vec![5; 100]).unwrap();
    let got = std::thread::spawn(move || snapshot.read())
        .join()
        .unwrap()
        .unwrap();
    let bytes = |v: &[u32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_ne_bytes()).collect() };
    assert_eq!(got.len(), 3);
    assert_eq!(got[0], bytes(&first));
    assert_eq!(got[1], bytes(&second[..10]));
    assert!(got[2].is_empty());
    assert_eq!(a.to_vec().unwrap(), vec![0; 1000]);
    // More bytes than the source holds: refused, nothing copied.
    let err = dev
        .snapshot_on(queue, &[(mem_of(b.arg()), 404)])
        .err()
        .expect("out of range");
    assert!(matches!(err, BackendError::OutOfRange { .. }), "{err}");
}
