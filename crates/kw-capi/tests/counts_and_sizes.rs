//! Bad counts, lengths and problem sizes through the C API's `extern "C"` functions, called
//! from Rust as C calls them (issue #28): every one is a precise status and message, never a
//! read past the caller's array, a panic (caught or not) or an allocation failure; a launch
//! whose problem size is negative is refused naming the kernel and the size, and one with an
//! empty axis launches nothing. Launches run on the first OpenCL device (PoCL); without one
//! those parts print `SKIPPED`.

use kernel_wisdom::ScalarType;
use kernel_wisdom_c::builder::*;
use kernel_wisdom_c::device::{kw_device_count, kw_device_free, kw_device_open};
use kernel_wisdom_c::kernel::{
    kw_kernel_create, kw_kernel_free, kw_kernel_launch, kw_kernel_launch_opencl,
};
use kernel_wisdom_c::kw_last_error;
use kernel_wisdom_c::status::Status;
use kernel_wisdom_c::types::KwArg;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Once;

/// Panics seen anywhere in this process: bad input must be a typed error, not a caught panic.
static PANICS: AtomicUsize = AtomicUsize::new(0);

fn count_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.fetch_add(1, Ordering::SeqCst);
            previous(info);
        }));
    });
}

fn last_error() -> String {
    // SAFETY: the library's thread-local message.
    unsafe { CStr::from_ptr(kw_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// `status` is `want`, and the message holds every fragment.
#[track_caller]
fn expect(what: &str, status: c_int, want: Status, fragments: &[&str]) {
    let msg = last_error();
    assert_eq!(
        status, want as c_int,
        "{what}: status {status}, wanted {want:?}; message: {msg}"
    );
    for f in fragments {
        assert!(msg.contains(f), "{what}: `{f}` missing from: {msg}");
    }
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "{what}: a panic");
}

fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

const SOURCE: &str = "__kernel void scale(__global float* x, const float s, const int n) {\n\
                      int i = get_global_id(0); if (i < n) x[i] *= s; }\n";

/// A builder for `scale(x, s, n)` with problem size `problem_size` (none when empty).
fn builder(problem_size: &str) -> *mut c_void {
    let mut b = std::ptr::null_mut();
    let (name, file, src) = (c("scale"), c("scale.cl"), c(SOURCE));
    let values = [32i64, 64];
    // SAFETY (all): valid strings and arrays of the given lengths.
    unsafe {
        assert_eq!(
            kw_builder_new_from_string(&mut b, name.as_ptr(), file.as_ptr(), src.as_ptr()),
            0
        );
        let bx = c("block_size_x");
        assert_eq!(
            kw_builder_tune_int(b, bx.as_ptr(), values.as_ptr(), 2, 32),
            0
        );
        if !problem_size.is_empty() {
            let ps = c(problem_size);
            assert_eq!(
                kw_builder_problem_size(b, ps.as_ptr(), std::ptr::null(), std::ptr::null()),
                0,
                "{}",
                last_error()
            );
        }
        assert_eq!(
            kw_builder_block_size(b, bx.as_ptr(), std::ptr::null(), std::ptr::null()),
            0
        );
        assert_eq!(
            kw_builder_grid_divisors(b, bx.as_ptr(), std::ptr::null(), std::ptr::null()),
            0
        );
        assert_eq!(kw_builder_arg_buffer(b, c("x").as_ptr(), 8, 2), 0);
        assert_eq!(kw_builder_arg_scalar(b, c("s").as_ptr(), 8), 0);
        assert_eq!(kw_builder_arg_scalar(b, c("n").as_ptr(), 2), 0);
    }
    b
}

/// Every (pointer, count) entry point of the builder: a count no array can have
/// (`SIZE_MAX`, and one whose bytes overflow) and a null array with a non-zero count are
/// `KW_ERROR_INVALID` / `KW_ERROR_NULL` naming the parameter and the count.
#[test]
fn absurd_counts_and_null_arrays_are_typed_errors() {
    count_panics();
    let b = builder("args.n");
    let p = c("p");
    let ints = [1i64, 2];
    let doubles = [1.0f64, 2.0];
    let one = c("1");
    let strs: [*const c_char; 2] = [one.as_ptr(), one.as_ptr()];
    for count in [usize::MAX, usize::MAX / 4, 1 << 40] {
        let n = count.to_string();
        // SAFETY (all): the calls must refuse the count before reading any element.
        unsafe {
            expect(
                "tune_int SIZE_MAX",
                kw_builder_tune_int(b, p.as_ptr(), ints.as_ptr(), count, 1),
                Status::Invalid,
                &["values", &n],
            );
            expect(
                "tune_double",
                kw_builder_tune_double(b, p.as_ptr(), doubles.as_ptr(), count, 1.0),
                Status::Invalid,
                &["values", &n],
            );
            expect(
                "tune_string",
                kw_builder_tune_string(b, p.as_ptr(), strs.as_ptr(), count, one.as_ptr()),
                Status::Invalid,
                &["values", &n],
            );
            expect(
                "template_args",
                kw_builder_template_args(b, strs.as_ptr(), count),
                Status::Invalid,
                &["template_args", &n],
            );
            expect(
                "compiler_flags",
                kw_builder_compiler_flags(b, strs.as_ptr(), count),
                Status::Invalid,
                &["compiler_flags", &n],
            );
        }
    }
    // SAFETY (all): null arrays with non-zero counts are refused before any read.
    unsafe {
        expect(
            "null values",
            kw_builder_tune_int(b, p.as_ptr(), std::ptr::null(), 3, 1),
            Status::Null,
            &["values", "null array of 3"],
        );
        expect(
            "null strings",
            kw_builder_compiler_flags(b, std::ptr::null(), 2),
            Status::Null,
            &["compiler_flags", "null array of 2"],
        );
        // A null entry inside the array names its index.
        let with_null: [*const c_char; 2] = [one.as_ptr(), std::ptr::null()];
        expect(
            "null entry",
            kw_builder_tune_string(b, p.as_ptr(), with_null.as_ptr(), 2, one.as_ptr()),
            Status::Null,
            &["values[1]"],
        );
        // A misaligned array is refused, not read.
        let bytes = [0u8; 24];
        let misaligned = bytes.as_ptr().wrapping_add(1).cast::<i64>();
        let misaligned = if misaligned.is_aligned() {
            bytes.as_ptr().wrapping_add(2).cast::<i64>()
        } else {
            misaligned
        };
        expect(
            "misaligned",
            kw_builder_tune_int(b, p.as_ptr(), misaligned, 2, 1),
            Status::Invalid,
            &["values", "aligned"],
        );
        // Enum values out of range.
        expect(
            "backend 7",
            kw_builder_backend(b, 7),
            Status::Invalid,
            &["not a kw_backend"],
        );
        expect(
            "type -1",
            kw_builder_arg_scalar(b, c("m").as_ptr(), -1),
            Status::Invalid,
            &["not a kw_type"],
        );
        // The builder is still usable.
        assert_eq!(kw_builder_check(b), 0, "{}", last_error());
        kw_builder_free(b);

        // Values no definition can use: a definition error listing them, never a panic.
        let b = builder("args.n");
        let odd = [f64::NAN, f64::INFINITY, 1.0, 1.0];
        let t = c("t");
        expect(
            "NaN values",
            kw_builder_tune_double(b, t.as_ptr(), odd.as_ptr(), odd.len(), f64::NAN),
            Status::Ok,
            &[],
        );
        expect(
            "NaN default",
            kw_builder_check(b),
            Status::Definition,
            &["parameter `t`"],
        );
        kw_builder_free(b);
    }
}

/// The first OpenCL device, opened through the C API.
fn opencl_device() -> Option<*mut c_void> {
    let mut count = 0usize;
    // SAFETY: a valid out-pointer.
    if unsafe { kw_device_count(&mut count) } != 0 {
        eprintln!("SKIPPED: no devices ({})", last_error());
        return None;
    }
    for i in 0..count {
        let mut d = std::ptr::null_mut();
        let sel = c(&i.to_string());
        let mut backend = 0;
        // SAFETY: valid out-pointers and string.
        unsafe {
            if kw_device_open(&mut d, sel.as_ptr()) == 0
                && kernel_wisdom_c::device::kw_device_backend(d, &mut backend) == 0
                && backend == 2
            {
                return Some(d);
            }
            kw_device_free(d);
        }
    }
    eprintln!("SKIPPED: no OpenCL device");
    None
}

fn kernel(dev: *mut c_void, problem_size: &str) -> *mut c_void {
    let b = builder(problem_size);
    let mut k = std::ptr::null_mut();
    // SAFETY: live handles, a valid out-pointer.
    let status = unsafe { kw_kernel_create(&mut k, b, dev, std::ptr::null()) };
    assert_eq!(status, 0, "{}", last_error());
    kw_builder_free(b);
    k
}

/// The argument count is checked before any argument is read: an array of 3 passed as 4
/// (or as `SIZE_MAX`) is "4 argument(s) given, the kernel takes 3", not a message about
/// whatever lies after the caller's array.
#[test]
fn the_argument_count_is_checked_before_the_arguments() {
    count_panics();
    let Some(dev) = opencl_device() else { return };
    let k = kernel(dev, "args.n");
    // The fourth entry stands for what lies past a 3-element array: a null buffer.
    let args = [
        KwArg::buffer(0x10 as *mut c_void, ScalarType::F32, 8),
        KwArg::i32(0),
        KwArg::i32(8),
        KwArg::buffer(std::ptr::null_mut(), ScalarType::F32, 8),
    ];
    // SAFETY (all): the calls must refuse the count before reading past 3 entries.
    unsafe {
        expect(
            "4 for 3",
            kw_kernel_launch(k, std::ptr::null_mut(), args.as_ptr(), 4),
            Status::Arguments,
            &["kernel `scale`", "4 argument(s) given, the kernel takes 3"],
        );
        expect(
            "SIZE_MAX for 3",
            kw_kernel_launch(k, std::ptr::null_mut(), args.as_ptr(), usize::MAX),
            Status::Arguments,
            &[&format!(
                "{} argument(s) given, the kernel takes 3",
                usize::MAX
            )],
        );
        expect(
            "2 for 3",
            kw_kernel_launch(k, std::ptr::null_mut(), args.as_ptr(), 2),
            Status::Arguments,
            &["2 argument(s) given, the kernel takes 3"],
        );
        // A failed launch leaves no event to release: whatever *out_event held, it is NULL.
        let mut event = std::ptr::dangling_mut::<c_void>();
        expect(
            "opencl 4 for 3",
            kw_kernel_launch_opencl(
                k,
                std::ptr::null_mut(),
                std::ptr::null(),
                0,
                &mut event,
                args.as_ptr(),
                4,
            ),
            Status::Arguments,
            &["4 argument(s) given, the kernel takes 3"],
        );
        assert!(
            event.is_null(),
            "out_event after a failed launch: {event:?}"
        );
        expect(
            "wait events SIZE_MAX",
            kw_kernel_launch_opencl(
                k,
                std::ptr::null_mut(),
                [std::ptr::null_mut::<c_void>()].as_ptr(),
                usize::MAX,
                std::ptr::null_mut(),
                args.as_ptr(),
                3,
            ),
            Status::Invalid,
            &["wait_events", &usize::MAX.to_string()],
        );
        expect(
            "null wait events",
            kw_kernel_launch_opencl(
                k,
                std::ptr::null_mut(),
                std::ptr::null(),
                2,
                std::ptr::null_mut(),
                args.as_ptr(),
                3,
            ),
            Status::Null,
            &["wait_events"],
        );
        kw_kernel_free(k);
        kw_device_free(dev);
    }
}

/// Problem sizes at launch: a negative axis is `KW_ERROR_ARGUMENTS` naming the kernel and
/// the size; an empty axis (0 elements) launches nothing and succeeds, as a loop over no
/// elements does; a definition without a problem size is refused when the kernel is made.
#[test]
fn negative_and_empty_problem_sizes_at_launch() {
    count_panics();
    let Some(dev) = opencl_device() else { return };
    let k = kernel(dev, "args.n");
    // A launch that is refused never touches its buffer, and one of 0 elements needs none:
    // count 0 with a dangling (non-null) pointer, as a C caller may pass for an empty vector.
    let mem = 0x10 as *mut c_void;
    for n in [-4096, -1] {
        let args = [
            KwArg::buffer(mem, ScalarType::F32, 0),
            KwArg {
                value: kernel_wisdom_c::types::KwValue { f32: 2.0 },
                elem_type: 8,
                ..KwArg::i32(0)
            },
            KwArg::i32(n),
        ];
        // SAFETY: 3 arguments; the launch is refused before the buffer is used.
        let status = unsafe { kw_kernel_launch(k, std::ptr::null_mut(), args.as_ptr(), 3) };
        expect(
            "negative problem size",
            status,
            Status::Arguments,
            &["kernel `scale`", "problem_size[0]", &n.to_string()],
        );
    }
    let args = [
        KwArg::buffer(mem, ScalarType::F32, 0),
        KwArg {
            value: kernel_wisdom_c::types::KwValue { f32: 2.0 },
            elem_type: 8,
            ..KwArg::i32(0)
        },
        KwArg::i32(0),
    ];
    // SAFETY: 3 arguments; nothing is launched for 0 elements.
    let status = unsafe { kw_kernel_launch(k, std::ptr::null_mut(), args.as_ptr(), 3) };
    expect("empty problem size", status, Status::Ok, &[]);
    // Through the OpenCL entry point: no launch, so no event.
    let mut event = std::ptr::dangling_mut::<c_void>();
    // SAFETY: 3 arguments, no wait events, a writable out-pointer.
    let status = unsafe {
        kw_kernel_launch_opencl(
            k,
            std::ptr::null_mut(),
            std::ptr::null(),
            0,
            &mut event,
            args.as_ptr(),
            3,
        )
    };
    expect("empty problem size, OpenCL", status, Status::Ok, &[]);
    assert!(event.is_null(), "no launch, no event");
    kw_kernel_free(k);

    // A constant negative size is found when the kernel is made.
    let b = builder("-4096");
    let mut k = std::ptr::null_mut();
    // SAFETY: live handles, a valid out-pointer.
    let status = unsafe { kw_kernel_create(&mut k, b, dev, std::ptr::null()) };
    expect(
        "constant negative size",
        status,
        Status::Definition,
        &["kernel `scale`", "problem_size[0]", "-4096"],
    );
    kw_builder_free(b);

    // No problem size at all.
    let b = builder("");
    // SAFETY: live handles, a valid out-pointer.
    let status = unsafe { kw_kernel_create(&mut k, b, dev, std::ptr::null()) };
    expect(
        "no problem size",
        status,
        Status::Definition,
        &["kernel `scale`", "problem_size", "needs 1 to 3 axes, has 0"],
    );
    kw_builder_free(b);
    kw_device_free(dev);
}
