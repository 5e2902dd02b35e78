//! [`CacheKey`]: the BLAKE3 hash of everything that changes a compiled binary.

use crate::backend::compile_request::CompileRequest;

/// Identifies one compiled binary: source and embedded headers, kernel name, defines, flags,
/// template arguments, and the target (backend, device, architecture, compiler and driver
/// versions) the backend names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CacheKey([u8; 32]);

/// Bumped when the meaning of a key changes: every old entry then misses.
const KEY_SCHEME: &str = "kernel-wisdom compile cache key 1";

struct Feed(blake3::Hasher);

impl Feed {
    /// Length-prefixed, so that no two different field lists hash the same bytes.
    fn field(&mut self, bytes: &[u8]) {
        self.0.update(&(bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
    }
    fn count(&mut self, n: usize) {
        self.0.update(&(n as u64).to_le_bytes());
    }
}

impl CacheKey {
    /// The key of `req` compiled for `target`: `(name, value)` pairs that identify what the
    /// binary is for (backend, device name, architecture, compiler version, driver version,
    /// the backend's own options). `None` when the request cannot be cached safely: include
    /// directories on disk, whose files may change without the request changing.
    pub fn for_request(target: &[(&str, &str)], req: &CompileRequest<'_>) -> Option<CacheKey> {
        if !req.include_dirs.is_empty() {
            return None;
        }
        let mut f = Feed(blake3::Hasher::new());
        f.field(KEY_SCHEME.as_bytes());
        f.count(target.len());
        for (name, value) in target {
            f.field(name.as_bytes());
            f.field(value.as_bytes());
        }
        f.field(req.source.file_name.as_bytes());
        f.field(req.source.text.as_bytes());
        f.count(req.source.headers.len());
        for h in &req.source.headers {
            f.field(h.name.as_bytes());
            f.field(h.text.as_bytes());
        }
        f.field(req.kernel_name.as_bytes());
        f.count(req.defines.len());
        for (name, value) in req.defines {
            f.field(name.as_bytes());
            f.field(value.as_bytes());
        }
        f.count(req.flags.len());
        for flag in req.flags {
            f.field(flag.as_bytes());
        }
        f.count(req.template_args.len());
        for t in req.template_args {
            f.field(t.as_bytes());
        }
        Some(CacheKey(*f.0.finalize().as_bytes()))
    }

    /// The key as 64 lowercase hex digits (the entry's file name).
    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Parses 64 hex digits.
    pub fn from_hex(text: &str) -> Option<CacheKey> {
        if text.len() != 64 || !text.is_ascii() {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, o) in out.iter_mut().enumerate() {
            *o = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(CacheKey(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel_def::{Header, KernelSource};
    use std::path::PathBuf;

    fn key(
        src: &KernelSource,
        defines: &[(String, String)],
        flags: &[String],
        targs: &[String],
        target: &[(&str, &str)],
    ) -> CacheKey {
        CacheKey::for_request(
            target,
            &CompileRequest {
                source: src,
                kernel_name: "k",
                defines,
                flags,
                include_dirs: &[],
                template_args: targs,
            },
        )
        .expect("cacheable")
    }

    #[test]
    fn every_input_changes_the_key_and_include_dirs_are_not_cached() {
        let src = KernelSource {
            file_name: "k.cl".into(),
            text: "kernel void k() {}".into(),
            headers: vec![Header {
                name: "h.h".into(),
                text: "#define X 1".into(),
            }],
        };
        let d = vec![("A".to_string(), "1".to_string())];
        let t = [("device", "pocl"), ("compiler", "1.2")];
        let base = key(&src, &d, &[], &[], &t);
        assert_eq!(base, key(&src, &d, &[], &[], &t), "deterministic");
        let mut other = src.clone();
        other.headers[0].text = "#define X 2".into();
        assert_ne!(base, key(&other, &d, &[], &[], &t), "header text");
        let mut other = src.clone();
        other.text.push(' ');
        assert_ne!(base, key(&other, &d, &[], &[], &t), "source text");
        let d2 = vec![("A".to_string(), "2".to_string())];
        assert_ne!(base, key(&src, &d2, &[], &[], &t), "define");
        assert_ne!(base, key(&src, &d, &["-O3".into()], &[], &t), "flag");
        assert_ne!(base, key(&src, &d, &[], &["float".into()], &t), "template");
        let t2 = [("device", "pocl"), ("compiler", "1.3")];
        assert_ne!(base, key(&src, &d, &[], &[], &t2), "compiler version");
        // Field boundaries matter: "AB"+"" is not "A"+"B".
        let d3 = vec![("A1".to_string(), String::new())];
        assert_ne!(base, key(&src, &d3, &[], &[], &t));
        assert_eq!(CacheKey::from_hex(&base.hex()), Some(base));
        assert_eq!(CacheKey::from_hex("zz"), None);
        let dirs = vec![PathBuf::from("/usr/include")];
        let req = CompileRequest {
            source: &src,
            kernel_name: "k",
            defines: &d,
            flags: &[],
            include_dirs: &dirs,
            template_args: &[],
        };
        assert!(CacheKey::for_request(&t, &req).is_none());
    }
}
