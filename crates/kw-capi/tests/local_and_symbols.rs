//! `__local` arguments and constant-memory symbols through the C API (issue 25):
//! `kw_builder_arg_local` declares a local argument at the next parameter position (its
//! length a checked expression), `kw_builder_constant_symbol` a symbol (refused for OpenCL with
//! what to do instead), and `kw_kernel_set_symbol` refuses a null array, an unknown name and
//! a count that overflows, each with a precise status and message.

use kernel_wisdom_c::builder::*;
use kernel_wisdom_c::kernel::{kw_kernel_create, kw_kernel_free, kw_kernel_set_symbol};
use kernel_wisdom_c::kw_last_error;
use kernel_wisdom_c::status::Status;
use std::ffi::{c_int, c_void, CStr, CString};

const F32: c_int = 8;

fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

fn last_error() -> String {
    // SAFETY: the library's thread-local message.
    unsafe { CStr::from_ptr(kw_last_error()) }
        .to_string_lossy()
        .into_owned()
}

const SOURCE: &str = "__kernel void stage(__global float* x, __local float* tmp, const int n) {\n\
                      int i = get_global_id(0); int l = get_local_id(0);\n\
                      tmp[l] = i < n ? x[i] : 0.0f; barrier(CLK_LOCAL_MEM_FENCE);\n\
                      if (i < n) x[i] = 2.0f * tmp[l]; }\n";

/// `stage(x, tmp, n)` with `tmp` a local argument of `len` floats.
fn builder(len: &str) -> *mut c_void {
    let mut b = std::ptr::null_mut();
    let (name, file, src) = (c("stage"), c("stage.cl"), c(SOURCE));
    let values = [32i64, 64];
    let bx = c("block_size_x");
    // SAFETY (all): valid strings and arrays of the given lengths.
    unsafe {
        assert_eq!(
            kw_builder_new_from_string(&mut b, name.as_ptr(), file.as_ptr(), src.as_ptr()),
            0
        );
        assert_eq!(
            kw_builder_tune_int(b, bx.as_ptr(), values.as_ptr(), 2, 32),
            0
        );
        let ps = c("args.n");
        assert_eq!(
            kw_builder_problem_size(b, ps.as_ptr(), std::ptr::null(), std::ptr::null()),
            0
        );
        assert_eq!(
            kw_builder_block_size(b, bx.as_ptr(), std::ptr::null(), std::ptr::null()),
            0
        );
        assert_eq!(kw_builder_arg_buffer(b, c("x").as_ptr(), F32, 2), 0);
        let status = kw_builder_arg_local(b, c("tmp").as_ptr(), F32, c(len).as_ptr());
        if status != 0 {
            kw_builder_free(b);
            return std::ptr::null_mut();
        }
        assert_eq!(kw_builder_arg_scalar(b, c("n").as_ptr(), 2), 0);
    }
    b
}

#[test]
fn a_local_argument_is_declared_with_a_checked_length() {
    let b = builder("block_size_x");
    assert!(!b.is_null(), "{}", last_error());
    assert_eq!(kw_builder_check(b), 0, "{}", last_error());
    kw_builder_free(b);
    // A length that does not parse is an expression error naming the argument.
    assert!(builder("block_size_x *").is_null());
    let msg = last_error();
    assert!(msg.contains("local argument `tmp`"), "{msg}");
}

#[test]
fn constant_symbols_are_checked_through_the_c_api() {
    let b = builder("block_size_x");
    // SAFETY: a live builder, a valid string.
    let status = unsafe { kw_builder_constant_symbol(b, c("coeffs").as_ptr(), F32, 16) };
    assert_eq!(status, 0);
    assert_eq!(kw_builder_check(b), Status::Definition as c_int);
    let msg = last_error();
    assert!(
        msg.contains("constant symbol `coeffs`") && msg.contains("`__constant` pointer"),
        "{msg}"
    );
    kw_builder_free(b);
}

#[test]
fn setting_a_symbol_refuses_bad_input_precisely() {
    // A kernel on the first OpenCL device (without symbols: OpenCL has none to set).
    let mut count = 0usize;
    // SAFETY: a valid out-pointer.
    if unsafe { kernel_wisdom_c::device::kw_device_count(&mut count) } != 0 || count == 0 {
        eprintln!("SKIPPED: no devices ({})", last_error());
        return;
    }
    let mut dev = std::ptr::null_mut();
    let sel = c("0");
    // SAFETY: valid out-pointer and string.
    assert_eq!(
        unsafe { kernel_wisdom_c::device::kw_device_open(&mut dev, sel.as_ptr()) },
        0
    );
    let mut backend = 0;
    // SAFETY: a live device, a valid out-pointer.
    unsafe { kernel_wisdom_c::device::kw_device_backend(dev, &mut backend) };
    if backend != 2 {
        eprintln!("SKIPPED: device 0 is not OpenCL");
        kernel_wisdom_c::device::kw_device_free(dev);
        return;
    }
    let b = builder("block_size_x");
    let mut k = std::ptr::null_mut();
    // SAFETY: live handles, a valid out-pointer.
    assert_eq!(
        unsafe { kw_kernel_create(&mut k, b, dev, std::ptr::null()) },
        0,
        "{}",
        last_error()
    );
    let data = [1.0f32; 4];
    let name = c("coeffs");
    // SAFETY (all): live kernel; the data pointer is null or holds 4 floats.
    unsafe {
        let s = kw_kernel_set_symbol(k, name.as_ptr(), F32, std::ptr::null(), 4);
        assert_eq!(s, Status::Null as c_int, "{}", last_error());
        let s = kw_kernel_set_symbol(k, name.as_ptr(), F32, data.as_ptr().cast(), usize::MAX);
        assert_eq!(s, Status::Invalid as c_int, "{}", last_error());
        let s = kw_kernel_set_symbol(k, name.as_ptr(), F32, data.as_ptr().cast(), 4);
        assert_eq!(s, Status::Invalid as c_int, "{}", last_error());
        let msg = last_error();
        assert!(
            msg.contains("no constant symbol `coeffs` is declared"),
            "{msg}"
        );
    }
    kw_kernel_free(k);
    kw_builder_free(b);
    kernel_wisdom_c::device::kw_device_free(dev);
}
