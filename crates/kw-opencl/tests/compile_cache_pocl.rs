//! OpenCL program binaries in the compile cache, on a real device (PoCL in CI): a second
//! compile of the same request loads the binary and compiles nothing; a damaged, foreign or
//! unloadable entry is detected, recompiled and replaced; every kernel computes the right
//! result. Each test uses its own cache directory. Prints `SKIPPED: no OpenCL platform` when
//! OpenCL is not available.

use kw_core::backend::{BackendError, CompileRequest, Device, KernelArg};
use kw_core::compile_cache::{store, CacheKey, CompileCache, Entry};
use kw_core::kernel_def::Header;
use kw_core::{buffer::DeviceBuffer, kernel_def::eval::Geometry, kernel_def::KernelSource};
use kw_opencl::{ClDevice, OpenClBackend};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kw-ocl-cache-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// OpenCL device 0 compiling through a fresh cache in `dir`.
fn device(dir: &Path) -> Option<(ClDevice, Arc<CompileCache>)> {
    let cache = Arc::new(CompileCache::at(dir, 1 << 30));
    match OpenClBackend.open_cl(0) {
        Ok(d) => Some((d.with_compile_cache(cache.clone()), cache)),
        Err(e @ BackendError::Unavailable { .. }) => {
            eprintln!("SKIPPED: no OpenCL platform ({e})");
            None
        }
        Err(e) => panic!("opening OpenCL device 0 failed: {e}"),
    }
}

const AXPY: &str = r#"
#include "inc/axpy.h"
__kernel void axpy(__global float* y, __global const float* x, float a, int n, __local float* scratch) {
    int i = get_global_id(0);
    if (i < n) y[i] = a * x[i] + y[i] + OFFSET;
}
"#;

fn source(text: &str) -> KernelSource {
    KernelSource {
        file_name: "axpy.cl".into(),
        text: text.into(),
        headers: vec![Header {
            name: "inc/axpy.h".into(),
            text: "#define OFFSET 0.5f".into(),
        }],
    }
}

/// Compiles `axpy` with `-DUNIQUE=salt` and checks its result on 1000 elements (with a
/// trailing dynamic `__local` argument, which needs the parameters' address spaces).
fn compile_and_run(d: &ClDevice, src: &KernelSource, salt: &str) {
    let defines = vec![("UNIQUE".to_string(), salt.to_string())];
    let k = d
        .compile(&CompileRequest {
            source: src,
            kernel_name: "axpy",
            defines: &defines,
            flags: &[],
            include_dirs: &[],
            template_args: &[],
        })
        .expect("compile");
    let n = 1000usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let xb = DeviceBuffer::from_slice(d, &x).unwrap();
    let yb = DeviceBuffer::from_slice(d, &vec![1.0f32; n]).unwrap();
    let g = Geometry {
        grid: [(n as u32).div_ceil(64), 1, 1],
        block: [64, 1, 1],
        shared_memory_bytes: 256,
        local_args: Default::default(),
    };
    d.launch(
        k.as_ref(),
        &g,
        &[
            yb.arg(),
            xb.arg(),
            KernelArg::from(2.0f32),
            KernelArg::from(n as i32),
        ],
    )
    .expect("launch");
    let y = yb.to_vec().unwrap();
    for (i, v) in y.iter().enumerate() {
        assert_eq!(*v, 2.0 * i as f32 + 1.5, "element {i}");
    }
}

fn only_entry(dir: &Path) -> PathBuf {
    let entries: Vec<_> = store::list(dir).unwrap();
    assert_eq!(entries.len(), 1, "{entries:?}");
    entries[0].path.clone()
}

#[test]
fn a_second_compile_loads_the_binary() {
    let dir = temp_dir("hit");
    let Some((d, cache)) = device(&dir) else {
        return;
    };
    let src = source(AXPY);
    compile_and_run(&d, &src, "1");
    let s = cache.stats();
    assert_eq!((s.compiles, s.hits, s.stores), (1, 0, 1), "{s:?}");
    let entry = only_entry(&dir);
    let header = store::list(&dir).unwrap()[0].header.clone().unwrap();
    assert_eq!(header.backend, "opencl");
    assert_eq!(header.kernel, "axpy");
    assert_eq!(header.extra, "MMPPL", "parameter address spaces kept");
    // A new device (as a new process would open) with a cache on the same directory.
    let (d2, cache2) = device(&dir).unwrap();
    compile_and_run(&d2, &src, "1");
    let s2 = cache2.stats();
    assert_eq!((s2.compiles, s2.hits), (0, 1), "{s2:?}");
    assert!(entry.exists());
    // Another define is another binary.
    compile_and_run(&d2, &src, "2");
    assert_eq!(cache2.stats().compiles, 1);
    // So is another header text.
    let mut other = src.clone();
    other.headers[0].text = "#define OFFSET 0.5f\n// changed".into();
    compile_and_run(&d2, &other, "1");
    assert_eq!(cache2.stats().compiles, 2);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn damaged_foreign_or_unloadable_entries_are_recompiled_and_replaced() {
    let dir = temp_dir("damage");
    let Some((d, cache)) = device(&dir) else {
        return;
    };
    let src = source(AXPY);
    compile_and_run(&d, &src, "7");
    let path = only_entry(&dir);
    let good = std::fs::read(&path).unwrap();
    let key = CacheKey::from_hex(path.file_stem().unwrap().to_str().unwrap()).unwrap();
    let other_key = CacheKey::from_hex(&"0f".repeat(32)).unwrap();
    let foreign = {
        let mut e = kw_core::compile_cache::entry::decode(&good, Some(&key)).unwrap();
        e.header.key = other_key.hex();
        kw_core::compile_cache::entry::encode(&e)
    };
    // A well-formed entry for this key whose payload the driver cannot load.
    let garbage = kw_core::compile_cache::entry::encode(&Entry {
        header: kw_core::compile_cache::entry::decode(&good, Some(&key))
            .unwrap()
            .header,
        payload: b"this is not a program binary".to_vec(),
    });
    let mut flipped = good.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x10;
    let cases: [(&str, Vec<u8>, bool); 4] = [
        ("truncated", good[..good.len() / 2].to_vec(), false),
        ("corrupted", flipped, false),
        ("foreign", foreign, false),
        ("unloadable", garbage, true),
    ];
    for (what, bytes, driver) in cases {
        std::fs::write(&path, &bytes).unwrap();
        let before = cache.stats();
        compile_and_run(&d, &src, "7");
        let after = cache.stats();
        assert_eq!(after.compiles, before.compiles + 1, "{what}: recompiled");
        assert_eq!(after.hits, before.hits, "{what}: not trusted");
        if driver {
            assert_eq!(after.load_failures, before.load_failures + 1, "{what}");
        } else {
            assert_eq!(after.rejected, before.rejected + 1, "{what}");
        }
        let now = std::fs::read(&path).unwrap();
        let replaced = kw_core::compile_cache::entry::decode(&now, Some(&key));
        assert!(
            replaced.is_ok(),
            "{what}: replaced by a trusted entry: {replaced:?}"
        );
        compile_and_run(&d, &src, "7");
        assert_eq!(
            cache.stats().hits,
            after.hits + 1,
            "{what}: the replacement is used"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn with_the_cache_off_every_compile_runs_the_compiler() {
    let Ok(d) = OpenClBackend.open_cl(0) else {
        eprintln!("SKIPPED: no OpenCL platform");
        return;
    };
    let cache = Arc::new(CompileCache::disabled());
    let d = d.with_compile_cache(cache.clone());
    let src = source(AXPY);
    for _ in 0..3 {
        compile_and_run(&d, &src, "3");
    }
    let s = cache.stats();
    assert_eq!((s.compiles, s.hits, s.stores), (3, 0, 0), "{s:?}");
}

/// Embedded headers written by many threads at once (the state of a fresh machine: the
/// headers' directory does not exist yet, since the header text is new to this run): every
/// compile finds whole headers, and they lie in the user's private directory, never in a
/// predictable shared path.
#[test]
fn headers_compile_from_many_threads_at_once() {
    let Some((d, _)) = device(&temp_dir("threads")) else {
        return;
    };
    let d = d.with_compile_cache(Arc::new(CompileCache::disabled()));
    let nonce = kw_core::files::nonce(1);
    let mut src = source(AXPY);
    src.headers[0].text = format!("#define OFFSET 0.5f\n// run {nonce:016x}\n");
    std::thread::scope(|s| {
        for t in 0..8 {
            let (d, src) = (&d, &src);
            s.spawn(move || compile_and_run(d, src, &t.to_string()));
        }
    });
    let root = kw_core::files::private_temp_dir().unwrap();
    kw_core::files::check_private_dir(&root).unwrap();
    let found = std::fs::read_dir(root.join("opencl-headers"))
        .unwrap()
        .flatten()
        .any(|e| {
            std::fs::read_to_string(e.path().join("inc/axpy.h"))
                .is_ok_and(|t| t.contains(&format!("{nonce:016x}")))
        });
    assert!(
        found,
        "the header lies in the private directory {}",
        root.display()
    );
}
