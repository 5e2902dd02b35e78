//! [`host_name`]: the machine's name as captures and wisdom records note it.

use std::sync::OnceLock;

/// The host name: `/proc/sys/kernel/hostname`, else `/etc/hostname`, else `$HOSTNAME`, else
/// `unknown` (read once per process).
pub fn host_name() -> &'static str {
    static HOST: OnceLock<String> = OnceLock::new();
    HOST.get_or_init(|| {
        ["/proc/sys/kernel/hostname", "/etc/hostname"]
            .iter()
            .find_map(|p| {
                crate::files::read_to_string(
                    std::path::Path::new(p),
                    crate::files::ReadRules::new("host name file", crate::files::caps::SMALL),
                )
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
            })
            .or_else(|| std::env::var("HOSTNAME").ok().filter(|s| !s.is_empty()))
            .unwrap_or_else(|| "unknown".to_string())
    })
}
