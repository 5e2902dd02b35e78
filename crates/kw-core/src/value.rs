//! [`Value`]: the scalar type of expressions, parameters and arguments.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A scalar value: an overflow-checked 64-bit integer, a float, a boolean or a string.
///
/// The JSON form is untagged (`3`, `2.5`, `true`, `"float"`); a float that happens to be
/// integral is written with a decimal point (`2.0`) so that it reads back as a float.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    /// Boolean.
    Bool(bool),
    /// 64-bit signed integer; arithmetic on it is overflow-checked.
    Int(i64),
    /// 64-bit float.
    Float(f64),
    /// String (e.g. a type name or a compiler option value).
    Str(String),
}

impl Value {
    /// The name of the value's type, as used in error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "string",
        }
    }

    /// Equal as Python compares parameter values (Kernel Tuner's files are Python's): numbers
    /// by value (`16 == 16.0`), anything else exactly. How a configuration read from a file
    /// (a cache whose entries numpy wrote as `16.0`, a `Default`) finds its declared value.
    pub fn same(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
                self.as_f64() == other.as_f64()
            }
            _ => self == other,
        }
    }

    /// The integer, if this is an int (bools are not ints here).
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The value as a float, if it is a number.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// The boolean, if this is a bool.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The string, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Python-like truthiness: used where Kernel Tuner restrictions treat numbers as conditions.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
        }
    }

    /// The canonical text of the value, as Python's `str()` prints it
    /// (`True`/`False` for bools, `2.0` for integral floats). Used in configuration keys, so
    /// that keys match Kernel Tuner's cache files.
    pub fn python_str(&self) -> String {
        match self {
            Value::Bool(true) => "True".into(),
            Value::Bool(false) => "False".into(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => format_float(*f),
            Value::Str(s) => s.clone(),
        }
    }

    /// The value as C source text for a `-D` define or template argument.
    pub fn c_literal(&self) -> String {
        match self {
            Value::Bool(b) => if *b { "1" } else { "0" }.into(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => format_float(*f),
            Value::Str(s) => s.clone(),
        }
    }
}

/// Formats a float so that it always reads back as a float (`2.0`, `1e-7`, `inf`).
pub(crate) fn format_float(f: f64) -> String {
    if f.is_finite() && f == f.trunc() && f.abs() < 1e16 {
        format!("{f:.1}")
    } else {
        format!("{f:?}")
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => f.write_str(&format_float(*x)),
            Value::Str(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}
impl From<i32> for Value {
    fn from(v: i32) -> Self {
        Value::Int(v as i64)
    }
}
impl From<u32> for Value {
    fn from(v: u32) -> Self {
        Value::Int(v as i64)
    }
}
impl From<usize> for Value {
    fn from(v: usize) -> Self {
        Value::Int(v as i64)
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}
impl From<f32> for Value {
    fn from(v: f32) -> Self {
        Value::Float(v as f64)
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Str(v.to_string())
    }
}
impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Str(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_forms_are_untagged_and_keep_float_type() {
        let vals = vec![
            Value::Int(3),
            Value::Float(2.0),
            Value::Float(0.5),
            Value::Bool(true),
            Value::Str("float".into()),
        ];
        let text = serde_json::to_string(&vals).unwrap();
        assert_eq!(text, r#"[3,2.0,0.5,true,"float"]"#);
        let back: Vec<Value> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, vals);
    }

    #[test]
    fn python_str_matches_python() {
        assert_eq!(Value::Float(2.0).python_str(), "2.0");
        assert_eq!(Value::Bool(false).python_str(), "False");
        assert_eq!(Value::Int(-4).python_str(), "-4");
    }
}
