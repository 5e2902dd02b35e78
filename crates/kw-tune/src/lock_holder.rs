//! Who holds a results log's lock: the process id and host its lock file records
//! (`log_lock.rs` writes and reads it; [`crate::TuneError::LogLocked`] names it).

use serde::{Deserialize, Serialize};

/// The process holding a results log's lock, as its lock file records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockHolder {
    /// The holder's process id.
    pub pid: u32,
    /// The holder's host name.
    pub host: String,
}

impl std::fmt::Display for LockHolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pid {} on host {}", self.pid, self.host)
    }
}
