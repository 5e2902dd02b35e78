//! Reading what C passes (strings, arrays, expression text) and writing strings back, with
//! every failure an error naming the parameter.

use crate::status::{CError, Status};
use kernel_wisdom::Expr;
use std::ffi::{c_char, CStr};

/// A required NUL-terminated UTF-8 string.
///
/// # Safety
/// `p` is null or points at a NUL-terminated string that lives for `'a`.
pub unsafe fn text<'a>(p: *const c_char, what: &str) -> Result<&'a str, CError> {
    if p.is_null() {
        return Err(CError::new(
            Status::Null,
            format!("{what} is a null string"),
        ));
    }
    // SAFETY: non-null and NUL-terminated (the caller's promise).
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|e| CError::new(Status::Invalid, format!("{what} is not UTF-8: {e}")))
}

/// An optional string: null is `None`.
///
/// # Safety
/// As [`text`].
pub unsafe fn opt_text<'a>(p: *const c_char, what: &str) -> Result<Option<&'a str>, CError> {
    if p.is_null() {
        Ok(None)
    } else {
        // SAFETY: as the caller promised.
        unsafe { text(p, what) }.map(Some)
    }
}

/// The most elements one array argument may have (tuning values, strings, events): a
/// larger count is a wrong count (`SIZE_MAX`, a negative number cast to `size_t`), refused
/// before anything is read (`KW_MAX_COUNT` in kernel_wisdom.h).
pub const MAX_COUNT: usize = 1 << 20;

/// `n` elements at `p` (null is allowed when `n` is 0). A count above [`MAX_COUNT`] is
/// `KW_ERROR_INVALID`, a null `p` with `n > 0` `KW_ERROR_NULL`, a pointer not aligned for
/// `T` `KW_ERROR_INVALID`: nothing is read then.
///
/// # Safety
/// `p` is null or points at `n` initialised elements that live for `'a`.
pub unsafe fn slice<'a, T>(p: *const T, n: usize, what: &str) -> Result<&'a [T], CError> {
    if n == 0 {
        return Ok(&[]);
    }
    if n > MAX_COUNT {
        return Err(CError::new(
            Status::Invalid,
            format!(
                "{what}: a count of {n} element(s) is more than the {MAX_COUNT} an array \
                 may hold here (a wrong count, or a negative number passed as size_t?)"
            ),
        ));
    }
    if p.is_null() {
        return Err(CError::new(
            Status::Null,
            format!("{what} is a null array of {n} element(s)"),
        ));
    }
    if !p.is_aligned() {
        return Err(CError::new(
            Status::Invalid,
            format!(
                "{what}: the array at {p:p} is not aligned for its {}-byte elements",
                std::mem::align_of::<T>()
            ),
        ));
    }
    // SAFETY: non-null, aligned, `n` elements (the caller's promise); `n` <= MAX_COUNT so
    // the slice's size (elements of at most a few bytes) stays far below isize::MAX.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// `n` strings at `p`.
///
/// # Safety
/// As [`slice()`] and [`text()`].
pub unsafe fn texts<'a>(
    p: *const *const c_char,
    n: usize,
    what: &str,
) -> Result<Vec<&'a str>, CError> {
    // SAFETY: as the caller promised.
    let ptrs = unsafe { slice(p, n, what) }?;
    ptrs.iter()
        .enumerate()
        // SAFETY: each entry is a string (the caller's promise).
        .map(|(i, &s)| unsafe { text(s, &format!("{what}[{i}]")) })
        .collect()
}

/// Expression text parsed with the project's expression parser; the error names where the
/// text was given (`block size x`) and says where the parse failed.
pub fn expr(text: &str, location: &str) -> Result<Expr, CError> {
    Expr::parse(text).map_err(|e| CError::new(Status::Expression, format!("{location}: {e}")))
}

/// Copies `s` and a terminating NUL into `buf` of `cap` bytes; a buffer that is too small
/// is an error naming the size needed (nothing is written then).
///
/// # Safety
/// `buf` is null or points at `cap` writable bytes.
pub unsafe fn copy_out(s: &str, buf: *mut c_char, cap: usize, what: &str) -> Result<(), CError> {
    if buf.is_null() {
        return Err(CError::new(
            Status::Null,
            format!("{what}: a null output buffer"),
        ));
    }
    let needed = s.len() + 1;
    if cap < needed {
        return Err(CError::new(
            Status::Invalid,
            format!("{what}: the buffer holds {cap} bytes, {needed} are needed"),
        ));
    }
    // SAFETY: `buf` has room for `needed` bytes (checked above); the regions are distinct.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), buf.cast::<u8>(), s.len());
        *buf.add(s.len()) = 0;
    }
    Ok(())
}

/// Writes a handle to a required out-pointer.
///
/// # Safety
/// `out` is null or a valid, writable pointer.
pub unsafe fn put<T>(out: *mut T, value: T, what: &str) -> Result<(), CError> {
    if out.is_null() {
        return Err(CError::new(
            Status::Null,
            format!("{what}: a null output pointer"),
        ));
    }
    // SAFETY: non-null and writable (the caller's promise).
    unsafe { out.write(value) };
    Ok(())
}

/// Checks that an out-pointer is usable before any work is done.
pub fn need_out<T>(out: *mut T, what: &str) -> Result<(), CError> {
    if out.is_null() {
        Err(CError::new(
            Status::Null,
            format!("{what}: a null output pointer"),
        ))
    } else {
        Ok(())
    }
}
