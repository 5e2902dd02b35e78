//! CUDA images (cubin or PTX) in the compile cache, on a GPU: a second compile of the same
//! request loads the image without NVRTC and computes the right result; a damaged or
//! unloadable entry is recompiled and replaced. Each test uses its own cache directory.
//! Prints `SKIPPED: no CUDA driver` and passes where there is no driver.

mod common;

use common::{request, source};
use kw_core::backend::{BackendError, Device, KernelArg};
use kw_core::buffer::DeviceBuffer;
use kw_core::compile_cache::{entry, store, CacheKey, CompileCache, Entry};
use kw_core::kernel_def::eval::Geometry;
use kw_cuda::{CudaBackend, CudaDevice, CudaKernel};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A fresh CUDA device 0 (a new context user, as a new process would be) compiling through a
/// cache in `dir`.
fn device(dir: &Path, test: &str) -> Option<(CudaDevice, Arc<CompileCache>)> {
    let cache = Arc::new(CompileCache::at(dir, 1 << 30));
    match CudaBackend::new().open_cuda(0) {
        Ok(d) => Some((d.with_compile_cache(cache.clone()), cache)),
        Err(BackendError::Unavailable { reason, .. }) => {
            println!("SKIPPED: no CUDA driver ({test}: {reason})");
            None
        }
        Err(e) => panic!("opening CUDA device 0: {e}"),
    }
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kw-cuda-cache-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

const SCALE: &str = r#"
namespace kw {
template <typename T, int F>
__global__ void scale(T* y, const T* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * F + SALT;
}
}
"#;

/// Compiles `kw::scale<float, 3>` with `-DSALT=salt`, runs it and checks the result.
fn compile_and_run(dev: &CudaDevice, salt: &str) -> CudaKernel {
    let src = source("scale.cu", SCALE);
    let defines = vec![("SALT".to_string(), salt.to_string())];
    let targs = ["float".to_string(), "3".to_string()];
    let k = dev
        .compile_cuda(&request(&src, "kw::scale", &defines, &targs))
        .expect("compile");
    let n = 1000usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let dx = DeviceBuffer::from_slice(dev, &x).unwrap();
    let dy = DeviceBuffer::<f32>::new(dev, n).unwrap();
    let g = Geometry {
        grid: [(n as u32).div_ceil(128), 1, 1],
        block: [128, 1, 1],
        shared_memory_bytes: 0,
        local_args: Default::default(),
    };
    dev.launch(&k, &g, &[dy.arg(), dx.arg(), KernelArg::from(n as i32)])
        .expect("launch");
    let y = dy.to_vec().unwrap();
    let s: f32 = salt.parse().unwrap();
    for (i, v) in y.iter().enumerate() {
        assert_eq!(*v, 3.0 * i as f32 + s, "element {i}");
    }
    k
}

#[test]
fn a_second_compile_loads_the_image_without_nvrtc() {
    let dir = temp_dir("hit");
    let Some((dev, cache)) = device(&dir, "a_second_compile_loads_the_image_without_nvrtc") else {
        return;
    };
    let first = compile_and_run(&dev, "1");
    assert!(!first.stats().from_cache);
    assert!(first.stats().nvrtc_ms > 0.0);
    let (dev2, cache2) = device(&dir, "second device").unwrap();
    let second = compile_and_run(&dev2, "1");
    println!("cold {:?}\nwarm {:?}", first.stats(), second.stats());
    assert!(second.stats().from_cache);
    assert_eq!(second.stats().nvrtc_ms, 0.0);
    assert_eq!(second.lowered_name(), first.lowered_name());
    assert_eq!(second.image_kind(), first.image_kind());
    assert_eq!((cache.stats().compiles, cache2.stats().compiles), (1, 0));
    assert_eq!(cache2.stats().hits, 1);
    compile_and_run(&dev2, "2");
    assert_eq!(cache2.stats().compiles, 1, "another define compiles");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn damaged_or_unloadable_entries_are_recompiled() {
    let dir = temp_dir("damage");
    let Some((dev, cache)) = device(&dir, "damaged_or_unloadable_entries_are_recompiled") else {
        return;
    };
    compile_and_run(&dev, "5");
    let listed = store::list(&dir).unwrap();
    assert_eq!(listed.len(), 1);
    let path = listed[0].path.clone();
    let key = CacheKey::from_hex(path.file_stem().unwrap().to_str().unwrap()).unwrap();
    let good = std::fs::read(&path).unwrap();
    let header = entry::decode(&good, Some(&key)).unwrap().header;
    let unloadable = entry::encode(&Entry {
        header,
        payload: b"not an image".to_vec(),
    });
    let cases = [
        ("truncated", good[..good.len() - 1].to_vec(), false),
        ("unloadable", unloadable, true),
    ];
    for (what, bytes, driver) in cases {
        std::fs::write(&path, &bytes).unwrap();
        let before = cache.stats();
        let k = compile_and_run(&dev, "5");
        assert!(!k.stats().from_cache, "{what}");
        let after = cache.stats();
        assert_eq!(after.compiles, before.compiles + 1, "{what}");
        if driver {
            assert_eq!(after.load_failures, before.load_failures + 1, "{what}");
        } else {
            assert_eq!(after.rejected, before.rejected + 1, "{what}");
        }
        assert!(
            compile_and_run(&dev, "5").stats().from_cache,
            "{what}: replaced"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}
