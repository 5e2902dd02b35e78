//! The C enums (`kw_type`, `kw_access`, `kw_backend`) and the launch argument `kw_arg`.

use crate::status::{CError, Status};
use kernel_wisdom::{Access, BackendKind, ScalarType};
use std::ffi::{c_int, c_void};

/// The scalar types in `kw_type` order (`KW_I8` = 0 ... `KW_F64` = 9).
pub const TYPES: [ScalarType; 10] = [
    ScalarType::I8,
    ScalarType::I16,
    ScalarType::I32,
    ScalarType::I64,
    ScalarType::U8,
    ScalarType::U16,
    ScalarType::U32,
    ScalarType::U64,
    ScalarType::F32,
    ScalarType::F64,
];

/// A `kw_type` value.
pub fn scalar_type(v: c_int) -> Result<ScalarType, CError> {
    usize::try_from(v)
        .ok()
        .and_then(|i| TYPES.get(i).copied())
        .ok_or_else(|| {
            CError::new(
                Status::Invalid,
                format!("{v} is not a kw_type (KW_I8 = 0 ... KW_F64 = 9)"),
            )
        })
}

/// A `kw_access` value.
pub fn access(v: c_int) -> Result<Access, CError> {
    match v {
        0 => Ok(Access::In),
        1 => Ok(Access::Out),
        2 => Ok(Access::InOut),
        _ => Err(CError::new(
            Status::Invalid,
            format!("{v} is not a kw_access (KW_INPUT = 0, KW_OUTPUT = 1, KW_INOUT = 2)"),
        )),
    }
}

/// A `kw_backend` value: `None` for `KW_BACKEND_AUTO`.
pub fn backend(v: c_int) -> Result<Option<BackendKind>, CError> {
    match v {
        0 => Ok(None),
        1 => Ok(Some(BackendKind::Cuda)),
        2 => Ok(Some(BackendKind::Opencl)),
        _ => Err(CError::new(
            Status::Invalid,
            format!("{v} is not a kw_backend (AUTO = 0, CUDA = 1, OPENCL = 2)"),
        )),
    }
}

/// The `kw_backend` value of a backend.
pub fn backend_code(kind: BackendKind) -> c_int {
    match kind {
        BackendKind::Cuda => 1,
        _ => 2,
    }
}

/// `kw_value`: a scalar argument's value, read as the member its type names.
#[repr(C)]
#[derive(Clone, Copy)]
pub union KwValue {
    /// `KW_I8`
    pub i8: i8,
    /// `KW_I16`
    pub i16: i16,
    /// `KW_I32`
    pub i32: i32,
    /// `KW_I64`
    pub i64: i64,
    /// `KW_U8`
    pub u8: u8,
    /// `KW_U16`
    pub u16: u16,
    /// `KW_U32`
    pub u32: u32,
    /// `KW_U64`
    pub u64: u64,
    /// `KW_F32`
    pub f32: f32,
    /// `KW_F64`
    pub f64: f64,
}

/// `KW_ARG_BUFFER`
pub const ARG_BUFFER: u32 = 0;
/// `KW_ARG_SCALAR`
pub const ARG_SCALAR: u32 = 1;
/// `KW_COUNT_AUTO`: a buffer's element count is asked of the driver.
pub const COUNT_AUTO: usize = usize::MAX;

/// `kw_arg`: one launch argument.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct KwArg {
    /// `KW_ARG_BUFFER` or `KW_ARG_SCALAR`.
    pub kind: u32,
    /// A `kw_type`: the scalar's type or the buffer's element type.
    pub elem_type: u32,
    /// A buffer's device pointer (`CUdeviceptr`, as a pointer) or `cl_mem`.
    pub ptr: *mut c_void,
    /// A buffer's element count, or `KW_COUNT_AUTO`.
    pub count: usize,
    /// A scalar's value.
    pub value: KwValue,
}

impl KwArg {
    /// `kw_arg_buffer(ptr, type, count)`: a buffer of `count` elements of `elem` (or
    /// [`COUNT_AUTO`]), for Rust code calling the C API (tests, benchmarks).
    pub fn buffer(ptr: *mut c_void, elem: ScalarType, count: usize) -> KwArg {
        KwArg {
            kind: ARG_BUFFER,
            elem_type: type_code(elem),
            ptr,
            count,
            value: KwValue { u64: 0 },
        }
    }

    /// `kw_arg_i32(v)`: an `int` scalar.
    pub fn i32(v: i32) -> KwArg {
        KwArg {
            kind: ARG_SCALAR,
            elem_type: type_code(ScalarType::I32),
            ptr: std::ptr::null_mut(),
            count: 0,
            value: KwValue { i32: v },
        }
    }
}

/// The `kw_type` value of a scalar type.
fn type_code(ty: ScalarType) -> u32 {
    TYPES
        .iter()
        .position(|&t| t == ty)
        .map_or(u32::MAX, |i| i as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, offset_of, size_of};

    /// The layout kernel_wisdom.h documents (LP64).
    #[test]
    fn kw_arg_has_the_c_layout() {
        assert_eq!(size_of::<KwValue>(), 8);
        assert_eq!(align_of::<KwValue>(), 8);
        if size_of::<usize>() == 8 {
            assert_eq!(size_of::<KwArg>(), 32);
            assert_eq!(offset_of!(KwArg, elem_type), 4);
            assert_eq!(offset_of!(KwArg, ptr), 8);
            assert_eq!(offset_of!(KwArg, count), 16);
            assert_eq!(offset_of!(KwArg, value), 24);
        }
    }

    #[test]
    fn rust_constructors_fill_what_the_c_helpers_fill() {
        let b = KwArg::buffer(std::ptr::null_mut(), ScalarType::F32, 3);
        assert_eq!((b.kind, b.elem_type, b.count), (ARG_BUFFER, 8, 3));
        let s = KwArg::i32(-7);
        assert_eq!((s.kind, s.elem_type), (ARG_SCALAR, 2));
        // SAFETY: written through the `i32` member.
        assert_eq!(unsafe { s.value.i32 }, -7);
    }

    #[test]
    fn enum_values_out_of_range_are_errors() {
        assert_eq!(scalar_type(8).unwrap(), ScalarType::F32);
        assert_eq!(scalar_type(10).unwrap_err().status, Status::Invalid);
        assert_eq!(scalar_type(-1).unwrap_err().status, Status::Invalid);
        assert_eq!(access(2).unwrap(), Access::InOut);
        assert!(access(3).is_err());
        assert_eq!(backend(0).unwrap(), None);
        assert!(backend(7).is_err());
    }
}
