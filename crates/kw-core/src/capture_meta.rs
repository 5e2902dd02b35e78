//! [`CaptureMetadata`]: what a capture file's JSON header says about the captured launch.
//!
//! The runtime writes it (`kernel-wisdom`, at a captured launch), the tuner reads it (replay);
//! the `kw-capture` container stores it as the caller's metadata. Buffer contents are stored as
//! frames named by [`CapturedArg::input`] (contents before the launch) and
//! [`CapturedArg::output`] (the reference contents after the launch, for every buffer the
//! definition declares written, `Out`/`InOut`, changed or not, and any other buffer the launch
//! changed; captures of earlier versions kept only the changed ones and still load).

use crate::config::Config;
use crate::device::DeviceInfo;
use crate::kernel_def::KernelDef;
use crate::scalar::ScalarType;
use crate::value::Value;
use serde::{Deserialize, Serialize};

/// The version of [`CaptureMetadata`]'s JSON form.
pub const CAPTURE_METADATA_VERSION: u32 = 1;

/// One argument of the captured launch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CapturedArg {
    /// The argument's name in the definition.
    pub name: String,
    /// Element type (buffers) or value type (scalars).
    #[serde(rename = "type")]
    pub ty: ScalarType,
    /// Element count for buffers; `None` for scalars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub len: Option<usize>,
    /// The value, for scalars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// Frame holding the buffer's contents before the launch (buffers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// Frame holding the buffer's contents after the launch: for buffers declared written
    /// (`Out`/`InOut`) and buffers the launch changed; `None` in older captures for a written
    /// buffer the launch left unchanged (`kw tune` then has no reference for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
}

/// A constant-memory symbol's contents at the captured launch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CapturedSymbol {
    /// The symbol's name (as in `kernel.symbols`).
    pub name: String,
    /// Element type.
    #[serde(rename = "type")]
    pub ty: ScalarType,
    /// The number of elements set.
    pub len: usize,
    /// The frame holding its contents.
    pub frame: String,
}

/// Where and when a capture was made.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct CaptureProvenance {
    /// RFC 3339 date.
    #[serde(default)]
    pub date: String,
    /// Host name.
    #[serde(default)]
    pub host: String,
    /// kernel-wisdom version.
    #[serde(default)]
    pub tool_version: String,
    /// Driver version of the capturing device.
    #[serde(default)]
    pub driver_version: String,
}

/// The metadata of one captured launch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaptureMetadata {
    /// Always `"kernel-wisdom/capture"`.
    pub format: String,
    /// [`CAPTURE_METADATA_VERSION`] when written by this version.
    pub version: u32,
    /// The tuning key (same as `kernel.tuning_key`; duplicated for `kw capture ls`).
    pub tuning_key: String,
    /// The full kernel definition, source and headers embedded.
    pub kernel: KernelDef,
    /// The launch's problem size.
    pub problem_size: Vec<i64>,
    /// The configuration the application launched with.
    pub config: Config,
    /// The arguments, in order.
    pub args: Vec<CapturedArg>,
    /// The constant-memory symbols as set for the launch (older captures have none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub symbols: Vec<CapturedSymbol>,
    /// The capturing device.
    pub device: DeviceInfo,
    /// Provenance.
    pub provenance: CaptureProvenance,
}

impl CaptureMetadata {
    /// Checks the format marker and version (a newer version is refused, naming both), that
    /// `tuning_key` is the kernel definition's, the version of the kernel definition inside,
    /// and its tolerances (finite, 0 or more).
    pub fn check_version(&self) -> Result<(), String> {
        if self.format != "kernel-wisdom/capture" {
            return Err(format!(
                "metadata format is `{}`, expected `kernel-wisdom/capture`",
                self.format
            ));
        }
        if self.version == 0 || self.version > CAPTURE_METADATA_VERSION {
            return Err(format!(
                "capture metadata version {} is not supported (this version reads up to {CAPTURE_METADATA_VERSION})",
                self.version
            ));
        }
        if self.tuning_key != self.kernel.tuning_key {
            return Err(format!(
                "the metadata's tuning_key `{}` differs from its kernel definition's `{}` (the file \
                 was edited: kw tune would write the definition's)",
                self.tuning_key, self.kernel.tuning_key
            ));
        }
        // The kernel definition inside is read as it is (not through `KernelDef::from_json`):
        // its version and its tolerances are checked here, before anything runs.
        let def_version = self.kernel.format_version;
        if def_version > crate::kernel_def::KERNEL_DEF_FORMAT_VERSION {
            return Err(format!(
                "the kernel definition's format version {def_version} is newer than this version reads ({})",
                crate::kernel_def::KERNEL_DEF_FORMAT_VERSION
            ));
        }
        for arg in &self.kernel.args {
            if let Some(t) = &arg.tolerance {
                t.validate()
                    .map_err(|e| format!("the tolerance of argument `{}`: {e}", arg.name))?;
            }
        }
        Ok(())
    }
}
