//! `kw devices` lists what `--device` and `KW_DEVICE` select from, with the exact names, and
//! the compile cache and wisdom directories in use (issue 30).

use kernel_wisdom::list_devices;

#[test]
fn kw_devices_lists_every_device_with_its_exact_name() {
    let devices = list_devices().unwrap_or_default();
    if devices.is_empty() {
        eprintln!("SKIPPED: no device");
        return;
    }
    let cache = std::env::temp_dir().join(format!("kw-devices-cache-{}", std::process::id()));
    let out = kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"))
        .arg("devices")
        .env("KW_CACHE_DIR", &cache)
        .env("KW_WISDOM_PATH", "/nonexistent-kw-wisdom")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for d in &devices {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("{:<5}  ", d.index)))
            .unwrap_or_else(|| panic!("device {} missing: {text}", d.index));
        assert!(line.contains(&d.info.name), "{line}");
        assert!(line.contains(d.info.backend.as_str()), "{line}");
    }
    assert!(
        text.contains(&format!("compile cache: {}", cache.display())),
        "{text}"
    );
    assert!(text.contains("/nonexistent-kw-wisdom (missing)"), "{text}");
    let json = kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"))
        .args(["devices", "--json"])
        .output()
        .unwrap();
    let list: Vec<serde_json::Value> = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(list.len(), devices.len());
    assert_eq!(list[0]["name"], devices[0].info.name.as_str());
    let _ = std::fs::remove_dir_all(cache);
}

/// The library's errors print in words through `Debug` too, as `fn main() -> Result<(),
/// Error>` shows them.
#[test]
fn library_errors_debug_print_in_words() {
    let Err(e) = kernel_wisdom::open_device(&kernel_wisdom::DeviceSelector::Index(9999)) else {
        panic!("a device 9999 opened");
    };
    let debug = format!("{e:?}");
    assert_eq!(debug, e.to_string());
    assert!(!debug.contains("NoDevice {"), "{debug}");
}

/// Without any platform (an ICD loader with no vendor file), `kw devices` says why there is
/// no device and still shows the cache and wisdom directories, exit status 0: no device is
/// an answer. `--json` prints an empty list and says why on stderr.
#[test]
fn kw_devices_without_a_platform_says_why() {
    let empty = std::env::temp_dir().join(format!("kw-devices-no-icd-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let run = |json: bool| {
        let mut cmd = kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"));
        cmd.arg("devices").env("OCL_ICD_VENDORS", &empty);
        if json {
            cmd.arg("--json");
        }
        cmd.output().unwrap()
    };
    let out = run(false);
    let text = String::from_utf8_lossy(&out.stdout);
    if text.lines().any(|l| l.starts_with("0    ")) {
        // A CUDA device, or an ICD loader that ignores OCL_ICD_VENDORS.
        eprintln!("SKIPPED: a device is still listed without OpenCL vendors: {text}");
        let _ = std::fs::remove_dir_all(&empty);
        return;
    }
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("no device: "), "{text}");
    assert!(text.contains("compile cache"), "{text}");
    assert!(text.contains("wisdom search path"), "{text}");
    let json = run(true);
    assert!(json.status.success());
    let list: Vec<serde_json::Value> = serde_json::from_slice(&json.stdout).unwrap();
    assert!(list.is_empty());
    assert!(
        String::from_utf8_lossy(&json.stderr).contains("no device: "),
        "{}",
        String::from_utf8_lossy(&json.stderr)
    );
    let _ = std::fs::remove_dir_all(&empty);
}
