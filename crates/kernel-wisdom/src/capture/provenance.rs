//! Where and when a capture was made: date, host, tool and driver versions.

use kw_core::capture_meta::CaptureProvenance;
use kw_core::DeviceInfo;
use std::sync::OnceLock;

/// The version string recorded as `tool_version`.
pub const TOOL_VERSION: &str = concat!("kernel-wisdom ", env!("CARGO_PKG_VERSION"));

/// The host name: `/etc/hostname`, else `$HOSTNAME`, else `unknown` (read once).
pub fn host_name() -> &'static str {
    static HOST: OnceLock<String> = OnceLock::new();
    HOST.get_or_init(|| {
        std::fs::read_to_string("/etc/hostname")
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .or_else(|| std::env::var("HOSTNAME").ok().filter(|s| !s.is_empty()))
            .unwrap_or_else(|| "unknown".to_string())
    })
}

/// The provenance of a capture made now on `device`.
pub fn provenance_now(device: &DeviceInfo) -> CaptureProvenance {
    CaptureProvenance {
        date: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        host: host_name().to_string(),
        tool_version: TOOL_VERSION.to_string(),
        driver_version: device.driver_version.clone(),
    }
}
