//! Where and when a capture was made: date, host, tool and driver versions.

use kw_core::capture_meta::CaptureProvenance;
use kw_core::device::DeviceInfo;
use kw_core::host::host_name;

/// The version string recorded as `tool_version`.
pub const TOOL_VERSION: &str = concat!("kernel-wisdom ", env!("CARGO_PKG_VERSION"));

/// Now, as captures and wisdom records write dates (RFC 3339, UTC, milliseconds).
pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// The provenance of a capture made now on `device`.
pub fn provenance_now(device: &DeviceInfo) -> CaptureProvenance {
    CaptureProvenance {
        date: now_rfc3339(),
        host: host_name().to_string(),
        tool_version: TOOL_VERSION.to_string(),
        driver_version: device.driver_version.clone(),
    }
}
