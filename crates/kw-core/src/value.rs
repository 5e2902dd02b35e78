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
    /// by value (`16 == 16.0`), bools as the numbers 0 and 1 (`True == 1`), anything else
    /// exactly. How a configuration read from a file (a cache whose entries numpy wrote as
    /// `16.0`, a flag written `1` for a space's `True`, a `Default`) finds its declared value.
    pub fn same(&self, other: &Value) -> bool {
        let whole = |v: &Value| match v {
            Value::Int(i) => Some(*i),
            Value::Bool(b) => Some(*b as i64),
            _ => None,
        };
        match (whole(self), whole(other)) {
            (Some(a), Some(b)) => a == b,
            _ => match (self, other) {
                (Value::Str(_), _) | (_, Value::Str(_)) => self == other,
                _ => {
                    let f = |v: &Value| whole(v).map_or_else(|| v.as_f64(), |i| Some(i as f64));
                    f(self) == f(other)
                }
            },
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

/// A hashable key of a value, equal for values [`Value::same`] finds equal (numbers by value:
/// `16` and `16.0` share one, `True` and `1` too; whole numbers past 2^63 as floats aside).
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub enum ValueKey {
    /// A whole number, however written.
    Int(i64),
    /// Another number, by its bits (every NaN one key).
    Float(u64),
    /// A string.
    Str(String),
}

impl Value {
    /// The value's [`ValueKey`].
    pub fn key(&self) -> ValueKey {
        match self {
            Value::Int(i) => ValueKey::Int(*i),
            Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.2e18 => ValueKey::Int(*f as i64),
            Value::Float(f) if f.is_nan() => ValueKey::Float(f64::NAN.to_bits()),
            Value::Float(f) => ValueKey::Float(f.to_bits()),
            Value::Str(s) => ValueKey::Str(s.clone()),
            Value::Bool(b) => ValueKey::Int(*b as i64),
        }
    }
}

/// A list of values indexed for lookups in constant time: [`ValueIndex::index_of`] answers as
/// [`crate::space::Parameter::index_of`] does (the value itself first, else one equal as
/// Python compares numbers), without scanning the list.
#[derive(Clone, Debug, Default)]
pub struct ValueIndex {
    by_key: std::collections::HashMap<ValueKey, Vec<u32>>,
}

impl ValueIndex {
    /// The index of `values`.
    pub fn new(values: &[Value]) -> ValueIndex {
        let mut by_key: std::collections::HashMap<ValueKey, Vec<u32>> =
            std::collections::HashMap::with_capacity(values.len());
        for (i, v) in values.iter().enumerate() {
            by_key.entry(v.key()).or_default().push(i as u32);
        }
        ValueIndex { by_key }
    }

    /// The position of `v` in `values` (the list this index was made of): the value itself,
    /// else one [`Value::same`] as it.
    pub fn index_of(&self, values: &[Value], v: &Value) -> Option<usize> {
        let candidates = self.by_key.get(&v.key())?;
        let at = |i: &u32| values.get(*i as usize);
        candidates
            .iter()
            .find(|i| at(i) == Some(v))
            .or_else(|| candidates.iter().find(|i| at(i).is_some_and(|x| x.same(v))))
            .map(|&i| i as usize)
    }

    /// Whether `values` holds `v` or a value [`Value::same`] as it (`16.0` is among `[16, 32]`,
    /// as Python compares, and as [`ValueIndex::index_of`] finds it).
    pub fn contains(&self, values: &[Value], v: &Value) -> bool {
        self.index_of(values, v).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The index answers as a scan of the list does (`Parameter::index_of`), for a list that
    /// holds a number in two writings, strings of numbers, bools, NaN and huge numbers.
    #[test]
    fn the_value_index_answers_as_the_scan() {
        let values = vec![
            Value::Int(1),
            Value::Float(1.0),
            Value::Float(2.0),
            Value::Str("16".into()),
            Value::Int(16),
            Value::Bool(true),
            Value::Float(f64::NAN),
            Value::Float(-0.0),
            Value::Int(i64::MAX),
            Value::Float(1e300),
            Value::Float(0.5),
        ];
        let p = crate::space::Parameter::new("p", values.clone());
        let index = ValueIndex::new(&values);
        let probes = values.iter().cloned().chain([
            Value::Float(16.0),
            Value::Int(2),
            Value::Int(0),
            Value::Float(0.0),
            Value::Str("1".into()),
            Value::Bool(false),
            Value::Float(0.25),
            Value::Int(3),
        ]);
        // By value, as Python compares: a cache entry's `16.0` is among `[1, 16]`.
        assert!(ValueIndex::new(&[Value::Int(16)]).contains(&[Value::Int(16)], &Value::Float(16.0)));
        for v in probes {
            assert_eq!(index.index_of(&values, &v), p.index_of(&v), "{v:?}");
            assert_eq!(
                index.contains(&values, &v),
                p.index_of(&v).is_some(),
                "{v:?}"
            );
        }
    }

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
