//! Attaching to an application's OpenCL context and queue (PoCL): the application's buffers
//! as arguments, declared buffer lengths, events, bad handles, and captures written at exit
//! on `std::process::exit`.

use kernel_wisdom::interop::opencl::{self, ClDevice, EventList};
use kernel_wisdom::LaunchOptions;
use kernel_wisdom::{arg, demo_kernels, Error, KernelBuilder, Queue, Source, WisdomKernel};
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL};
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use opencl3::platform::get_platforms;
use opencl3::types::{cl_float, CL_BLOCKING};
use std::sync::Arc;

/// Held by each test for its whole run: PoCL tears its devices down when the last context is
/// released and sets them up again at the next query, and a device query racing that (one
/// test dropping its context while another attaches) crashed inside PoCL
/// (`clGetDeviceInfo` -> `strlen`, about 1 run in 10 with parallel tests). Applications that
/// create and drop contexts on several threads at once meet the same driver race.
static POCL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn pocl_turn() -> std::sync::MutexGuard<'static, ()> {
    POCL.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The application's own PoCL context and queue (`None`: no PoCL here).
fn app_setup() -> Option<(Context, CommandQueue)> {
    let platform = get_platforms().ok()?.into_iter().find(|p| {
        p.name()
            .is_ok_and(|n| n.contains("Portable Computing Language"))
    })?;
    let id = *platform.get_devices(CL_DEVICE_TYPE_ALL).ok()?.first()?;
    let context = Context::from_device(&Device::new(id)).ok()?;
    let queue =
        CommandQueue::create_default_with_properties(&context, CL_QUEUE_PROFILING_ENABLE, 0)
            .ok()?;
    Some((context, queue))
}

fn buffer(context: &Context, n: usize) -> Buffer<cl_float> {
    // SAFETY: no host pointer.
    unsafe { Buffer::create(context, CL_MEM_READ_WRITE, n.max(1), std::ptr::null_mut()) }
        .expect("clCreateBuffer")
}

fn write(queue: &CommandQueue, b: &mut Buffer<cl_float>, data: &[f32]) {
    // SAFETY: a blocking write from a live slice no longer than the buffer.
    unsafe { queue.enqueue_write_buffer(b, CL_BLOCKING, 0, data, &[]) }.expect("write");
}

fn read(queue: &CommandQueue, b: &Buffer<cl_float>, n: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; n];
    // SAFETY: a blocking read into a live slice no longer than the buffer.
    unsafe { queue.enqueue_read_buffer(b, CL_BLOCKING, 0, &mut out, &[]) }.expect("read");
    out
}

#[test]
fn declared_lengths_events_and_the_applications_buffers() {
    let _turn = pocl_turn();
    let Some((context, queue)) = app_setup() else {
        eprintln!("SKIPPED: no PoCL OpenCL platform");
        return;
    };
    let device = Arc::new(ClDevice::attach(&context, &queue).expect("attach"));
    // vector_add, but `b` must hold n + 8 elements (a deliberately stricter declaration).
    let mut builder = demo_kernels::opencl::vector_add_builder();
    builder.buffer_len("b", arg("n") + 8);
    let add = WisdomKernel::new(builder.build().unwrap(), device).unwrap();
    let n = 1000usize;
    let (mut a, mut b_short, mut b_long, mut c) = (
        buffer(&context, n),
        buffer(&context, n),
        buffer(&context, n + 8),
        buffer(&context, n),
    );
    let ha: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let hb: Vec<f32> = (0..n + 8).map(|i| 0.5 * i as f32).collect();
    write(&queue, &mut a, &ha);
    write(&queue, &mut b_short, &hb[..n]);
    write(&queue, &mut b_long, &hb);
    write(&queue, &mut c, &vec![-1.0; n]);
    let n_i32 = n as i32;

    let short = [
        opencl::buffer_arg(&c),
        opencl::buffer_arg(&a),
        opencl::buffer_arg(&b_short),
        n_i32.into(),
    ];
    match add.launch_with(&short, LaunchOptions::new().on(opencl::queue(&queue))) {
        Err(Error::BufferTooShort {
            index,
            name,
            len,
            required,
            length,
            ..
        }) => {
            assert_eq!(
                (index, name.as_str(), len, required),
                (2, "b", n, n as u64 + 8)
            );
            assert!(length.contains("args.n + 8"), "{length}");
        }
        other => panic!("expected BufferTooShort, got {other:?}"),
    }
    assert!(
        read(&queue, &c, n).iter().all(|&x| x == -1.0),
        "nothing was launched"
    );

    // The right length: launched on the application's queue, with an event to wait for.
    let args = [
        opencl::buffer_arg(&c),
        opencl::buffer_arg(&a),
        opencl::buffer_arg(&b_long),
        n_i32.into(),
    ];
    let event = add
        .launch_with(
            &args,
            LaunchOptions::new().on(opencl::queue(&queue)).event(),
        )
        .map(|l| l.event)
        .unwrap()
        .expect("OpenCL launches give an event");
    event.wait().unwrap();
    let cl_event = event
        .into_any()
        .downcast::<opencl::ClEvent>()
        .expect("an OpenCL event");
    let expected: Vec<f32> = ha.iter().zip(&hb).map(|(x, y)| x + y).collect();
    assert!(read(&queue, &c, n) == expected, "wrong result");

    // A launch that waits for the application's event.
    let after = EventList::new(&[&cl_event.0]);
    add.launch_with(
        &args,
        LaunchOptions::new().on(opencl::queue_after(&queue, &after)),
    )
    .unwrap();
    queue.finish().unwrap();
    assert!(read(&queue, &c, n) == expected, "wrong result");

    // Raw handles, as a C program passes them.
    // SAFETY: the queue and buffers are live opencl3 objects of this context.
    let raw_queue = unsafe { Queue::opencl_raw(queue.get(), &[]) };
    let raw = |buf: &Buffer<cl_float>, len: usize| {
        use opencl3::memory::ClMem;
        // SAFETY: as above; `len` elements fit.
        let mem = unsafe { kernel_wisdom::RawMem::opencl(buf.get(), len * 4) };
        kernel_wisdom::KernelArg::raw_buffer(mem, kernel_wisdom::ScalarType::F32)
    };
    add.launch_with(
        &[raw(&c, n), raw(&a, n), raw(&b_long, n + 8), n_i32.into()],
        LaunchOptions::new().on(raw_queue),
    )
    .unwrap();
    queue.finish().unwrap();
    assert!(read(&queue, &c, n) == expected, "wrong result");
}

/// A launch on a queue of another context (a C program's mix-up) is refused up front,
/// naming the queue, not handed to the driver to come back as CL_INVALID_CONTEXT blamed on
/// the configuration; the right queue still works after it.
#[test]
fn a_queue_of_another_context_is_refused_by_name() {
    let _turn = pocl_turn();
    let Some((context, queue)) = app_setup() else {
        eprintln!("SKIPPED: no PoCL OpenCL platform");
        return;
    };
    let (_other_context, other_queue) = app_setup().expect("PoCL");
    let device = Arc::new(ClDevice::attach(&context, &queue).expect("attach"));
    let builder = demo_kernels::opencl::vector_add_builder();
    let add = WisdomKernel::new(builder.build().unwrap(), device).unwrap();
    let n = 100usize;
    let (a, b, c) = (
        buffer(&context, n),
        buffer(&context, n),
        buffer(&context, n),
    );
    let args = [
        opencl::buffer_arg(&c),
        opencl::buffer_arg(&a),
        opencl::buffer_arg(&b),
        (n as i32).into(),
    ];
    // SAFETY: a live queue (of another context: what is checked).
    let foreign = unsafe { Queue::opencl_raw(other_queue.get(), &[]) };
    let err = add
        .launch_with(&args, LaunchOptions::new().on(foreign))
        .expect_err("a queue of another context is refused");
    // The caller's fault, whatever the configuration: a selection is never blamed (and
    // replaced by the default) for it.
    assert!(err.is_arguments_fault(), "{err:?}");
    let e = err.to_string();
    assert!(
        e.contains("the command queue does not belong to this OpenCL device: it was created in another OpenCL context"),
        "{e}"
    );
    assert!(add.failures().is_empty(), "{:?}", add.failures());
    assert!(!e.contains("CL_INVALID_CONTEXT"), "{e}");
    add.launch_with(&args, LaunchOptions::new().on(opencl::queue(&queue)))
        .expect("the device's own queue");
    queue.finish().unwrap();
}

#[test]
fn bad_declarations_and_handles_are_errors() {
    let _turn = pocl_turn();
    let mut b = KernelBuilder::new(
        "k",
        Source::text("k.cl", "__kernel void k(__global float* x, int n) {}"),
    );
    b.problem_size([arg("n")])
        .output::<f32>("x")
        .scalar::<i32>("n")
        .buffer_len("y", arg("n"))
        .buffer_len("n", arg("n"));
    let e = b.build().unwrap_err().to_string();
    assert!(e.contains("no argument `y` is declared"), "{e}");
    assert!(e.contains("only buffers have a length"), "{e}");

    // SAFETY: null handles are checked before use.
    let e = unsafe { ClDevice::attach_raw(std::ptr::null_mut(), std::ptr::null_mut()) };
    assert!(e.is_err());

    let Some((context, _queue)) = app_setup() else {
        eprintln!("SKIPPED: no PoCL OpenCL platform");
        return;
    };
    let Some((_, other_queue)) = app_setup() else {
        return;
    };
    let e = ClDevice::attach(&context, &other_queue)
        .err()
        .expect("a queue of another context is refused")
        .to_string();
    assert!(e.contains("not created in the given context"), "{e}");
    // An out-of-order queue: the library's kernels and kw's copies follow each other on the
    // queue without events, so they would overlap there.
    let ooo = CommandQueue::create_default_with_properties(
        &context,
        opencl3::command_queue::CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
        0,
    )
    .expect("an out-of-order queue");
    let e = ClDevice::attach(&context, &ooo)
        .err()
        .expect("an out-of-order queue is refused")
        .to_string();
    assert!(e.contains("out of order"), "{e}");
    // A buffer of another context given to a device (what the C API's views do): refused by
    // name, not handed to the driver.
    use opencl3::memory::ClMem;
    let (other_context, _) = app_setup().expect("PoCL");
    let queue =
        CommandQueue::create_default_with_properties(&context, CL_QUEUE_PROFILING_ENABLE, 0)
            .unwrap();
    let device = ClDevice::attach(&context, &queue).unwrap();
    let foreign = buffer(&other_context, 16);
    // SAFETY: a live buffer of 16 floats.
    let raw = unsafe { kernel_wisdom::RawMem::opencl(foreign.get(), 64) };
    let e = kernel_wisdom::DeviceBuffer::<f32>::view(&device, raw)
        .map(|b| b.len())
        .expect_err("a buffer of another context is refused")
        .to_string();
    assert!(e.contains("belongs to another OpenCL context"), "{e}");
    let own = buffer(&context, 16);
    // SAFETY: a live buffer of 16 floats.
    let raw = unsafe { kernel_wisdom::RawMem::opencl(own.get(), 64) };
    assert_eq!(
        kernel_wisdom::DeviceBuffer::<f32>::view(&device, raw)
            .unwrap()
            .len(),
        16
    );
}

const CHILD_ENV: &str = "KW_ATTACH_EXIT_CHILD";

/// The child: a launch refused for its queue (another context's), then one captured launch,
/// then `std::process::exit` (no flush, no return).
#[test]
fn child_exits_abruptly() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let (context, queue) = app_setup().expect("PoCL");
    let (_other_context, other_queue) = app_setup().expect("PoCL");
    let device = Arc::new(ClDevice::attach(&context, &queue).unwrap());
    let add = WisdomKernel::new(demo_kernels::opencl::vector_add().unwrap(), device).unwrap();
    let n = 5000usize;
    let (a, c) = (buffer(&context, n), buffer(&context, n));
    let args = [
        opencl::buffer_arg(&c),
        opencl::buffer_arg(&a),
        opencl::buffer_arg(&a),
        (n as i32).into(),
    ];
    // SAFETY: a live queue (of another context: what is refused).
    let foreign = unsafe { Queue::opencl_raw(other_queue.get(), &[]) };
    let err = add
        .launch_with(&args, LaunchOptions::new().on(foreign))
        .expect_err("a queue of another context is refused");
    assert!(err.is_arguments_fault(), "{err:?}");
    add.launch_with(&args, LaunchOptions::new().on(opencl::queue(&queue)))
        .unwrap();
    std::process::exit(0);
}

#[test]
fn captures_are_written_when_the_process_exits() {
    let _turn = pocl_turn();
    if app_setup().is_none() {
        eprintln!("SKIPPED: no PoCL OpenCL platform");
        return;
    }
    let dir = std::env::temp_dir().join(format!("kw-attach-exit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = kw_core::child_env::command(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_exits_abruptly",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1")
        .env("KW_CAPTURE", "vector_add")
        .env("KW_CAPTURE_DIR", &dir)
        .env_remove("KW_LOG")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the capture directory")
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}\n{stderr}");
    assert!(files[0].to_string_lossy().ends_with(".kwcap"), "{files:?}");
    assert!(stderr.contains("capture written:"), "{stderr}");
    // The launch refused for its queue was neither counted (the capture limit is 1) nor
    // reported as a capture failure (which would stop capturing the kernel).
    assert!(!stderr.contains("not captured"), "{stderr}");
    kw_capture::Capture::open(&files[0]).expect("a complete, valid capture");
    let _ = std::fs::remove_dir_all(&dir);
}

/// What capture copies before a launch is complete only once the launch's queue and the
/// events the launch waits for are: an upload on another queue that the launch waits for
/// (here held back by a user event until a helper thread opens it) is waited for too.
#[test]
fn synchronizing_a_queue_waits_for_the_events_its_launch_waits_for() {
    use kernel_wisdom::Device;
    use opencl3::event::{
        create_user_event, get_event_info, release_event, set_user_event_status, CL_COMPLETE,
        CL_EVENT_COMMAND_EXECUTION_STATUS,
    };
    let _turn = pocl_turn();
    let Some((context, queue)) = app_setup() else {
        eprintln!("SKIPPED: no PoCL OpenCL platform");
        return;
    };
    let device = ClDevice::attach(&context, &queue).unwrap();
    let uploads = CommandQueue::create_default_with_properties(&context, 0, 0).unwrap();
    let gate = create_user_event(context.get()).expect("clCreateUserEvent");
    let mut b = buffer(&context, 1024);
    let data = vec![1.0f32; 1024];
    // SAFETY: a non-blocking write from `data`, which outlives the wait below.
    let upload = unsafe {
        uploads.enqueue_write_buffer(&mut b, opencl3::types::CL_NON_BLOCKING, 0, &data, &[gate])
    }
    .expect("write");
    let gate_addr = gate as usize;
    let opener = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(100));
        set_user_event_status(gate_addr as opencl3::types::cl_event, CL_COMPLETE)
            .expect("clSetUserEventStatus");
    });
    let wait = [upload.get().cast::<std::ffi::c_void>()];
    // SAFETY: the application's live queue of the device's context, and a live event of it.
    let launch_queue = unsafe { kernel_wisdom::Queue::opencl_raw(queue.get().cast(), &wait) };
    device.synchronize_queue(launch_queue).unwrap();
    let status = get_event_info(upload.get(), CL_EVENT_COMMAND_EXECUTION_STATUS)
        .expect("clGetEventInfo")
        .to_int();
    assert_eq!(
        status, CL_COMPLETE,
        "the upload the launch waits for is done"
    );
    opener.join().unwrap();
    assert_eq!(read(&queue, &b, 4), vec![1.0; 4]);
    // A user event in the wait list itself, not complete yet: the application completes it
    // after the launch call, so waiting for it here would never end; refused by name.
    let later = create_user_event(context.get()).expect("clCreateUserEvent");
    let gated = [later.cast::<std::ffi::c_void>()];
    // SAFETY: as above.
    let gated_queue = unsafe { kernel_wisdom::Queue::opencl_raw(queue.get().cast(), &gated) };
    let e = device
        .synchronize_queue(gated_queue)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("user event") && e.contains("not complete"),
        "{e}"
    );
    set_user_event_status(later, CL_COMPLETE).expect("clSetUserEventStatus");
    device.synchronize_queue(gated_queue).unwrap();
    // SAFETY: created above, no longer used.
    unsafe { release_event(later) }.expect("clReleaseEvent");
    // SAFETY: created above, no longer used.
    unsafe { release_event(gate) }.expect("clReleaseEvent");
}
