//! Duplicate keys in JSON. `serde_json` takes the last of two equal keys (or, for types that
//! keep every entry, both): for files written by someone else (wisdom records, capture
//! metadata) that is ambiguity an attacker can use (the compile gets one value, the launch
//! geometry the other). [`check_unique_keys`] refuses any object, at any depth, that names a
//! key twice, and says where.

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use std::collections::HashSet;
use std::fmt;

/// Checks that no object in the JSON text `text` names a key twice. The error names the
/// duplicate key and where it is (`records[2].config`), with serde_json's line and column.
pub fn check_unique_keys(text: &str) -> Result<(), String> {
    let mut de = serde_json::Deserializer::from_str(text);
    Unique {
        path: String::new(),
    }
    .deserialize(&mut de)
    .and_then(|()| de.end())
    .map_err(|e| e.to_string())
}

struct Unique {
    path: String,
}

impl<'de> DeserializeSeed<'de> for Unique {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl Unique {
    fn at(&self) -> &str {
        if self.path.is_empty() {
            "the top level"
        } else {
            &self.path
        }
    }
}

impl<'de> Visitor<'de> for Unique {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_i128<E>(self, _: i128) -> Result<(), E> {
        Ok(())
    }
    fn visit_u128<E>(self, _: u128) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        while seq
            .next_element_seed(Unique {
                path: format!("{}[{i}]", self.path),
            })?
            .is_some()
        {
            i += 1;
        }
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen: HashSet<String> = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = if self.path.is_empty() {
                key.clone()
            } else {
                format!("{}.{key}", self.path)
            };
            if !seen.insert(key.clone()) {
                return Err(A::Error::custom(format!(
                    "duplicate key `{key}` in {}",
                    self.at()
                )));
            }
            map.next_value_seed(Unique { path })?;
        }
        Ok(())
    }
}

/// What kind of JSON value `v` is, in words for messages (`a string`, `an object`).
pub fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "a list",
        serde_json::Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::check_unique_keys;

    #[test]
    fn duplicates_are_found_at_any_depth() {
        assert!(check_unique_keys(r#"{"a": 1, "b": [1, {"c": 2}], "d": {"e": null}}"#).is_ok());
        let e = check_unique_keys(r#"{"a": 1, "a": 2}"#).unwrap_err();
        assert!(e.contains("duplicate key `a` in the top level"), "{e}");
        let e = check_unique_keys(
            r#"{"records": [{}, {"config": {"block_size_x": 64, "block_size_x": 128}}]}"#,
        )
        .unwrap_err();
        assert!(
            e.contains("duplicate key `block_size_x` in records[1].config"),
            "{e}"
        );
        assert!(check_unique_keys(r#"{"a": 1} trailing"#).is_err());
        assert!(check_unique_keys(r#"[[[{"x": {"x": {"x": 1}}}]]]"#).is_ok());
    }
}
