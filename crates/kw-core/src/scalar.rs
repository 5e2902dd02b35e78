//! Scalar element types of kernel arguments: [`ScalarType`], the [`Scalar`] trait for Rust
//! types, and [`ScalarValue`], a scalar argument in a fixed-size, allocation-free form.

use crate::value::Value;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The element type of a buffer argument or the type of a scalar argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScalarType {
    /// `int8_t` / `char`
    I8,
    /// `int16_t` / `short`
    I16,
    /// `int32_t` / `int`
    I32,
    /// `int64_t` / `long`
    I64,
    /// `uint8_t` / `uchar`
    U8,
    /// `uint16_t` / `ushort`
    U16,
    /// `uint32_t` / `uint`
    U32,
    /// `uint64_t` / `ulong`
    U64,
    /// `float`
    F32,
    /// `double`
    F64,
}

impl ScalarType {
    /// Size in bytes.
    pub fn size(self) -> usize {
        match self {
            ScalarType::I8 | ScalarType::U8 => 1,
            ScalarType::I16 | ScalarType::U16 => 2,
            ScalarType::I32 | ScalarType::U32 | ScalarType::F32 => 4,
            ScalarType::I64 | ScalarType::U64 | ScalarType::F64 => 8,
        }
    }

    /// The Rust name (`f32`), as used in JSON.
    pub fn name(self) -> &'static str {
        match self {
            ScalarType::I8 => "i8",
            ScalarType::I16 => "i16",
            ScalarType::I32 => "i32",
            ScalarType::I64 => "i64",
            ScalarType::U8 => "u8",
            ScalarType::U16 => "u16",
            ScalarType::U32 => "u32",
            ScalarType::U64 => "u64",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
        }
    }

    /// Whether this is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, ScalarType::F32 | ScalarType::F64)
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A Rust type that can be a kernel scalar argument or a buffer element.
///
/// `bytemuck::Pod` makes host <-> device copies safe byte views.
pub trait Scalar: bytemuck::Pod + Send + Sync + PartialEq + fmt::Debug + 'static {
    /// The matching [`ScalarType`].
    const TYPE: ScalarType;
    /// The value as an expression [`Value`] (ints as `Int`, floats as `Float`).
    fn to_value(self) -> Value;
}

macro_rules! impl_scalar {
    ($($t:ty => $v:ident, $conv:expr);* $(;)?) => {$(
        impl Scalar for $t {
            const TYPE: ScalarType = ScalarType::$v;
            fn to_value(self) -> Value {
                #[allow(clippy::redundant_closure_call)]
                ($conv)(self)
            }
        }
    )*};
}
impl_scalar! {
    i8 => I8, |x: i8| Value::Int(x.into());
    i16 => I16, |x: i16| Value::Int(x.into());
    i32 => I32, |x: i32| Value::Int(x.into());
    i64 => I64, |x: i64| Value::Int(x);
    u8 => U8, |x: u8| Value::Int(x.into());
    u16 => U16, |x: u16| Value::Int(x.into());
    u32 => U32, |x: u32| Value::Int(x.into());
    u64 => U64, |x: u64| i64::try_from(x).map(Value::Int).unwrap_or(Value::Float(x as f64));
    f32 => F32, |x: f32| Value::Float(x.into());
    f64 => F64, |x: f64| Value::Float(x);
}

/// A scalar argument: its type and its bytes in native byte order, stored inline (no heap
/// allocation), so building launch arguments costs nothing on the hot path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScalarValue {
    ty: ScalarType,
    bytes: [u8; 8],
}

impl ScalarValue {
    /// A scalar argument from a Rust value.
    pub fn new<T: Scalar>(value: T) -> ScalarValue {
        let mut bytes = [0u8; 8];
        let src = bytemuck::bytes_of(&value);
        bytes[..src.len()].copy_from_slice(src);
        ScalarValue { ty: T::TYPE, bytes }
    }

    /// The scalar's type.
    pub fn ty(&self) -> ScalarType {
        self.ty
    }

    /// The scalar's bytes, exactly `ty().size()` of them, as the kernel expects them.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes[..self.ty.size()]
    }

    /// The value as an expression [`Value`].
    pub fn to_value(&self) -> Value {
        fn get<T: Scalar>(b: &[u8; 8]) -> Value {
            bytemuck::pod_read_unaligned::<T>(&b[..std::mem::size_of::<T>()]).to_value()
        }
        match self.ty {
            ScalarType::I8 => get::<i8>(&self.bytes),
            ScalarType::I16 => get::<i16>(&self.bytes),
            ScalarType::I32 => get::<i32>(&self.bytes),
            ScalarType::I64 => get::<i64>(&self.bytes),
            ScalarType::U8 => get::<u8>(&self.bytes),
            ScalarType::U16 => get::<u16>(&self.bytes),
            ScalarType::U32 => get::<u32>(&self.bytes),
            ScalarType::U64 => get::<u64>(&self.bytes),
            ScalarType::F32 => get::<f32>(&self.bytes),
            ScalarType::F64 => get::<f64>(&self.bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_values_round_trip() {
        assert_eq!(ScalarValue::new(-3i16).to_value(), Value::Int(-3));
        assert_eq!(ScalarValue::new(2.5f32).to_value(), Value::Float(2.5));
        assert_eq!(ScalarValue::new(7u64).bytes().len(), 8);
        assert_eq!(ScalarValue::new(7u8).bytes(), &[7]);
        assert_eq!(ScalarValue::new(1.0f64).ty(), ScalarType::F64);
        let t: ScalarType = serde_json::from_str("\"u32\"").unwrap();
        assert_eq!(t, ScalarType::U32);
        assert_eq!(serde_json::to_string(&ScalarType::F64).unwrap(), "\"f64\"");
    }
}

/// The contents of a constant-memory symbol ([`crate::kernel_def::SymbolDef`]) on the host.
#[derive(Clone, Debug, PartialEq)]
pub struct SymbolValue {
    /// The symbol's name.
    pub name: String,
    /// Its element type.
    pub ty: ScalarType,
    /// Its contents (a whole number of elements, at most the symbol's size).
    pub bytes: Vec<u8>,
}

impl SymbolValue {
    /// A symbol's contents from typed data.
    pub fn new<T: Scalar>(name: &str, data: &[T]) -> SymbolValue {
        SymbolValue {
            name: name.to_string(),
            ty: T::TYPE,
            bytes: bytemuck::cast_slice(data).to_vec(),
        }
    }
}

/// A launch argument on the host.
#[derive(Clone, Debug, PartialEq)]
pub enum HostArg {
    /// A buffer: element type and raw bytes.
    Buffer {
        /// Element type.
        ty: ScalarType,
        /// Contents.
        bytes: Vec<u8>,
    },
    /// A scalar.
    Scalar(ScalarValue),
}

impl HostArg {
    /// A buffer holding `data`.
    pub fn buffer<T: Scalar>(data: &[T]) -> HostArg {
        HostArg::Buffer {
            ty: T::TYPE,
            bytes: bytemuck::cast_slice(data).to_vec(),
        }
    }

    /// A scalar.
    pub fn scalar<T: Scalar>(v: T) -> HostArg {
        HostArg::Scalar(ScalarValue::new(v))
    }
}
