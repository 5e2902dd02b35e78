//! First launch of a kernel in a new process, cold and warm compile cache (shared by the
//! `first_launch` bench (OpenCL) and `kw-cuda`'s `cuda_launch` bench): each pair starts the
//! bench binary twice as a child process ([`CHILD_FLAG`]) on one fresh cache directory and one
//! kernel source no earlier run compiled; each child opens the device (not timed), then times
//! `WisdomKernel::new` + the first launch + synchronize. The first child compiles (cold), the
//! second loads the binary the first stored (warm).

use kernel_wisdom::{DeviceBuffer, KernelDef, WisdomKernel};
use kw_core::backend::Device;
use std::sync::Arc;
use std::time::Instant;

/// The flag that makes the bench binary a child.
pub const CHILD_FLAG: &str = "--child-first-launch";

/// The upper median.
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The child: times the first launch of `def` (a bundled `vector_add`, made unique by
/// `KW_BENCH_NONCE`) on `device` in this new process, through the compile cache of `KW_CACHE_DIR`, and prints one
/// `FIRST_LAUNCH ms=.. compiles=.. hits=..` line.
pub fn child(
    device: Arc<dyn Device>,
    mut def: KernelDef,
    n: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let nonce = std::env::var("KW_BENCH_NONCE")?;
    def.source
        .text
        .push_str(&format!("\n// first_launch bench process pair {nonce}\n"));
    let a = DeviceBuffer::from_slice(device.as_ref(), &vec![1.0f32; n])?;
    let b = DeviceBuffer::from_slice(device.as_ref(), &vec![2.0f32; n])?;
    let c = DeviceBuffer::<f32>::new(device.as_ref(), n)?;
    let args = [c.arg(), a.arg(), b.arg(), (n as i32).into()];
    let t = Instant::now();
    let kernel = WisdomKernel::new(def, device.clone())?;
    kernel.launch(&args)?;
    device.synchronize()?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    if c.to_vec()?.iter().any(|&v| v != 3.0) {
        return Err("wrong result".into());
    }
    let stats = device
        .compile_cache()
        .map(|c| c.stats())
        .unwrap_or_default();
    println!(
        "FIRST_LAUNCH ms={ms:.4} compiles={} hits={}",
        stats.compiles, stats.hits
    );
    Ok(())
}

/// One child run: `(ms, compiles, hits)`.
fn run_child(cache: &std::path::Path, nonce: &str, n: usize) -> Result<(f64, u64, u64), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = std::process::Command::new(exe)
        .args([CHILD_FLAG, "--n", &n.to_string()])
        .env("KW_CACHE_DIR", cache)
        .env_remove("KW_CACHE")
        .env("KW_BENCH_NONCE", nonce)
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("FIRST_LAUNCH"))
        .ok_or_else(|| {
            format!(
                "child failed: {text}{}",
                String::from_utf8_lossy(&out.stderr)
            )
        })?;
    let field = |name: &str| -> Result<f64, String> {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(name))
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("no {name} in `{line}`"))
    };
    Ok((
        field("ms=")?,
        field("compiles=")? as u64,
        field("hits=")? as u64,
    ))
}

/// Cold and warm first launches in new processes (see the module docs).
pub fn cold_and_warm(pairs: usize, n: usize) -> Result<(), Box<dyn std::error::Error>> {
    let base = std::env::temp_dir().join(format!("kw-first-launch-cache-{}", std::process::id()));
    let (mut cold, mut warm) = (Vec::new(), Vec::new());
    let (mut counts_cold, mut counts_warm) = ((0, 0), (0, 0));
    for pair in 0..pairs {
        let dir = base.join(pair.to_string());
        let _ = std::fs::remove_dir_all(&dir);
        let nonce = format!(
            "{}-{pair}",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)?
                .as_nanos()
        );
        let c = run_child(&dir, &nonce, n).map_err(std::io::Error::other)?;
        let w = run_child(&dir, &nonce, n).map_err(std::io::Error::other)?;
        cold.push(c.0);
        warm.push(w.0);
        counts_cold = (counts_cold.0 + c.1, counts_cold.1 + c.2);
        counts_warm = (counts_warm.0 + w.1, counts_warm.1 + w.2);
    }
    let _ = std::fs::remove_dir_all(&base);
    let (c, w) = (median(&mut cold), median(&mut warm));
    println!(
        "first launch of a kernel in a new process (WisdomKernel::new + launch + sync, \
         vector_add n = {n}, median of {pairs} process pairs):"
    );
    println!(
        "  cold compile cache:  {c:.3} ms  ({} compiles, {} cache hits in all)",
        counts_cold.0, counts_cold.1
    );
    println!(
        "  warm compile cache:  {w:.3} ms  ({} compiles, {} cache hits in all)",
        counts_warm.0, counts_warm.1
    );
    println!("  ratio (warm / cold): {:.3}", w / c);
    println!(
        "RESULT first_launch_process_ms cold={c:.3} warm={w:.3} ratio={:.4}",
        w / c
    );
    Ok(())
}
