//! `kw devices`: every device kw can use, with the index and exact name that `--device`,
//! `KW_DEVICE` and `kw wisdom explain --device` take, and the compile cache and wisdom
//! directories a program started here would use.

use anyhow::Result;
use clap::Args;
use kernel_wisdom::list_devices;
use kw_core::compile_cache::{CacheSettings, CompileCache};

/// Arguments of `kw devices`.
#[derive(Args)]
pub struct DevicesArgs {
    /// A JSON array, one object per device (index, backend, name, vendor, architecture, driver).
    #[arg(long)]
    json: bool,
}

/// Runs `kw devices`.
pub fn run(args: DevicesArgs) -> Result<()> {
    // No device is an answer, not a failure: the reason is said (an OpenCL loader without a
    // platform, no CUDA driver), and so are the cache and wisdom directories.
    let (devices, none_because) = match list_devices() {
        Ok(devices) => (devices, None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    if args.json {
        if let Some(why) = &none_because {
            eprintln!("kw devices: no device: {}", kw_core::diag::printable(why));
        }
        let list: Vec<serde_json::Value> = devices
            .iter()
            .map(|d| {
                serde_json::json!({
                    "index": d.index,
                    "id": d.identity(),
                    "backend": d.info.backend.as_str(),
                    "name": d.info.name,
                    "vendor": d.info.vendor,
                    "architecture": d.info.architecture,
                    "driver": d.info.driver_version,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(());
    }
    if devices.is_empty() {
        match &none_because {
            Some(why) => println!("no device: {}", kw_core::diag::printable(why)),
            None => println!("no device: no CUDA driver and no OpenCL platform answered"),
        }
    }
    if !devices.is_empty() {
        println!("index  backend  architecture  name (vendor, driver)");
    }
    for d in &devices {
        println!(
            "{:<5}  {:<7}  {:<12}  {} ({}, driver {})",
            d.index,
            d.info.backend.as_str(),
            d.info.architecture,
            d.info.name,
            d.info.vendor,
            d.info.driver_version
        );
    }
    println!();
    println!(
        "select one with --device INDEX or --device NAME-SUBSTRING (KW_DEVICE for applications)"
    );
    let settings = CacheSettings::from_env();
    match &settings.dir {
        Some(dir) => {
            let cache = CompileCache::with_settings(&settings);
            match cache.untrusted_reason() {
                None => println!(
                    "compile cache: {} (limit {})",
                    dir.display(),
                    kw_core::diag::bytes(settings.max_bytes)
                ),
                Some(why) => println!("compile cache: not used: {why}"),
            }
        }
        None => println!(
            "compile cache: off ({})",
            settings.off_reason.as_deref().unwrap_or("")
        ),
    }
    for p in &settings.problems {
        println!("  note: {p}");
    }
    let path = kernel_wisdom::search_path(None);
    let shown: Vec<String> = path
        .iter()
        .map(|d| {
            let state = match std::fs::metadata(d) {
                Ok(m) if m.is_dir() => "",
                Ok(_) => " (not a directory)",
                Err(_) => " (missing)",
            };
            format!("{}{state}", d.display())
        })
        .collect();
    println!(
        "wisdom search path (KW_WISDOM_PATH, then the per-user directory kw tune writes to, \
         then the application's directory, ./wisdom by default, then online tuning's directory \
         when it exists): {}",
        shown.join(", ")
    );
    match kw_core::user_dirs::state_dir() {
        Some(d) => println!("kw tune's results logs: {}", d.join("logs").display()),
        None => println!("kw tune's results logs: the current directory (no KW_STATE_DIR or HOME)"),
    }
    Ok(())
}
