//! One capture writer: a launch captured by the runtime (`KW_CAPTURE`) and the same launch
//! captured by `kw tune --bundled`'s path (`demo_kernels::opencl::capture`, `kw_capture::record`) give
//! captures of the same schema: the same metadata fields, frame names, problem size and
//! filled provenance (on PoCL; SKIPPED without an OpenCL platform).

mod common;

use kernel_wisdom::{demo_kernels, flush_captures, DeviceBuffer, WisdomKernel};
use kernel_wisdom::{set_capture_settings, CaptureSettings};
use kw_capture::Capture;
use kw_core::capture_meta::CaptureMetadata;
use serde_json::Value;

/// The shape of a JSON value: object keys (recursively) and value kinds, not the values.
fn shape(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), shape(v))).collect()),
        Value::Array(a) => Value::Array(a.iter().map(shape).collect()),
        Value::String(_) => Value::String("string".into()),
        Value::Number(_) => Value::String("number".into()),
        Value::Bool(_) => Value::String("bool".into()),
        Value::Null => Value::Null,
    }
}

#[test]
fn runtime_and_bundled_captures_share_one_schema() {
    let Some(dev) = common::device() else { return };
    let root = std::env::temp_dir().join(format!("kw-one-schema-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let n = 4096usize;

    // The runtime's capture of the default configuration.
    set_capture_settings(Some(CaptureSettings {
        patterns: vec!["vector_add".into()],
        dir: root.join("runtime"),
        skip: 0,
        limit: 1,
        force: true,
    }));
    let kernel =
        WisdomKernel::new(demo_kernels::opencl::vector_add().unwrap(), dev.clone()).unwrap();
    let seq: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 500.0).collect();
    let a = DeviceBuffer::from_slice(dev.as_ref(), &seq).unwrap();
    let c = DeviceBuffer::<f32>::new(dev.as_ref(), n).unwrap();
    c.fill(0.0).unwrap();
    kernel
        .launch(&[c.arg(), a.arg(), a.arg(), (n as i32).into()])
        .unwrap();
    let written = flush_captures();
    set_capture_settings(None);
    assert_eq!(written.len(), 1, "{written:?}");
    let runtime = written.into_iter().next().unwrap().unwrap();

    // The same launch through `kw tune --bundled`'s path.
    let bundled_path = demo_kernels::capture(
        &format!("vector_add:{n}"),
        dev.as_ref(),
        &root.join("bundled"),
    )
    .unwrap();

    let read = |p: &std::path::Path| -> (Capture, CaptureMetadata, Value) {
        let c = Capture::open(p).unwrap();
        let m: CaptureMetadata = c.metadata_as().unwrap();
        let raw: Value = c.metadata_as().unwrap();
        (c, m, raw)
    };
    let (rc, rm, rraw) = read(&runtime);
    let (bc, bm, braw) = read(&bundled_path);

    // Same fields everywhere (device and kernel included), same values where they must agree.
    let (mut rs, mut bs) = (shape(&rraw), shape(&braw));
    for s in [&mut rs, &mut bs] {
        s["provenance"].as_object_mut().unwrap().remove("date");
    }
    assert_eq!(rs, bs, "the two captures differ in schema");
    assert_eq!(rm.problem_size, bm.problem_size);
    assert_eq!(rm.problem_size, vec![n as i64], "the definition's one axis");
    assert_eq!(rm.config, bm.config);
    assert_eq!(rm.kernel, bm.kernel);
    for (r, b) in rm.args.iter().zip(&bm.args) {
        assert_eq!((&r.name, r.ty, r.len), (&b.name, b.ty, b.len));
        assert_eq!((&r.input, &r.output), (&b.input, &b.output), "frame names");
        assert_eq!(r.value, b.value);
        if let Some(frame) = &r.input {
            assert!(frame.ends_with(".before"), "{frame}");
            assert_eq!(
                rc.read_buffer(frame).unwrap(),
                bc.read_buffer(frame).unwrap()
            );
        }
        if let Some(frame) = &r.output {
            assert!(frame.ends_with(".after"), "{frame}");
            assert_eq!(
                rc.read_buffer(frame).unwrap(),
                bc.read_buffer(frame).unwrap()
            );
        }
    }
    for m in [&rm, &bm] {
        assert!(!m.provenance.date.is_empty(), "date recorded");
        assert!(!m.provenance.host.is_empty(), "host recorded");
        assert_eq!(m.provenance.host, kw_core::host::host_name());
        assert!(m.provenance.tool_version.starts_with("kernel-wisdom "));
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// `capture_launch` checks what the runtime checks before anything is compiled or written: the
/// backend, the configuration, the argument count.
#[test]
fn capture_launch_refuses_what_the_runtime_refuses() {
    use kw_capture::record::{capture_launch, HostArg, RecordError};
    let Some(dev) = common::device() else { return };
    let dir = std::env::temp_dir().join(format!("kw-one-schema-bad-{}", std::process::id()));
    let n = 256usize;
    let args = [
        HostArg::buffer(&vec![0f32; n]),
        HostArg::buffer(&vec![1f32; n]),
        HostArg::buffer(&vec![2f32; n]),
        HostArg::scalar(n as i32),
    ];
    let refused = |def: &kernel_wisdom::KernelDef,
                   config: Option<&kernel_wisdom::Config>,
                   args: &[HostArg],
                   what: &str| {
        match capture_launch(&dir, "bad", def, config, dev.as_ref(), args) {
            Err(e @ RecordError::Invalid { .. }) => {
                let text = e.to_string();
                assert!(text.contains(what), "{text}");
            }
            other => panic!("expected a refusal ({what}), got {other:?}"),
        }
    };
    let cuda = kernel_wisdom::demo_kernels::cuda::vector_add().unwrap();
    refused(&cuda, None, &args, "written for CUDA");
    let def = demo_kernels::opencl::vector_add().unwrap();
    let mut config = def.default_config();
    config.set("block_size_x", 48);
    refused(&def, Some(&config), &args, "not a valid configuration");
    refused(&def, None, &args[..3], "3 argument(s) given, 4 declared");
    assert!(!dir.exists() || std::fs::read_dir(&dir).unwrap().next().is_none());
    let _ = std::fs::remove_dir_all(&dir);
}
