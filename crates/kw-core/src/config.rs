//! [`Config`]: one configuration of a tuning space, with a canonical key and a stable hash.

use crate::value::Value;
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Parameter name -> value, in the tuning space's parameter order.
///
/// Serialised as a JSON object whose keys keep that order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Config(pub Vec<(String, Value)>);

impl Config {
    /// The value of parameter `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// Sets (or adds) parameter `name`.
    pub fn set(&mut self, name: &str, value: impl Into<Value>) {
        let value = value.into();
        match self.0.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = value,
            None => self.0.push((name.to_string(), value)),
        }
    }

    /// Iterates over (name, value) pairs in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v))
    }

    /// The canonical key: `name=value` pairs joined by `,` in parameter order
    /// (values as Python prints them), e.g. `block_size_x=32,tile=2`.
    pub fn key(&self) -> String {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|(n, v)| format!("{n}={}", v.python_str()))
            .collect();
        parts.join(",")
    }

    /// A stable 64-bit hash of [`Config::key`] (FNV-1a), as 16 hex digits; the same on every
    /// platform and version, so it can name files and cache entries.
    pub fn hash_hex(&self) -> String {
        format!("{:016x}", fnv1a64(self.key().as_bytes()))
    }
}

/// FNV-1a, 64 bits: a stable hash for keys (not for security).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.key())
    }
}

impl Serialize for Config {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for Config {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Config, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Config;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object of parameter values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Config, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = a.next_entry::<String, Value>()? {
                    out.push((k, v));
                }
                Ok(Config(out))
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_hash_and_json_keep_order() {
        let mut c = Config::default();
        c.set("zeta", 32);
        c.set("alpha", 2.0);
        c.set("flag", true);
        assert_eq!(c.key(), "zeta=32,alpha=2.0,flag=True");
        assert_eq!(
            c.hash_hex(),
            format!("{:016x}", fnv1a64(b"zeta=32,alpha=2.0,flag=True"))
        );
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(json, r#"{"zeta":32,"alpha":2.0,"flag":true}"#);
        assert_eq!(serde_json::from_str::<Config>(&json).unwrap(), c);
        // FNV-1a reference value for the empty string.
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
    }
}
