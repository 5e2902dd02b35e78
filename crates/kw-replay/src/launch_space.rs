//! The tuning space of a captured launch: the declared space narrowed by the restrictions
//! that depend on the launch (problem size, argument values), so that tuning at a size
//! evaluates only configurations valid there ([`kw_core::kernel_def::launch_check`]).

use kw_core::capture_meta::CaptureMetadata;
use kw_core::device::DeviceInfo;
use kw_core::kernel_def::eval::DefError;
use kw_core::space::TuningSpace;
use kw_core::value::Value;

/// The captured launch's problem size, as three axes (missing ones are 1).
pub fn captured_problem_size(meta: &CaptureMetadata) -> [i64; 3] {
    let mut ps = [1i64; 3];
    for (axis, v) in meta.problem_size.iter().take(3).enumerate() {
        ps[axis] = *v;
    }
    ps
}

/// The captured arguments as expressions see them: a scalar's value, a buffer's element
/// count (0 when the capture lacks it).
pub fn captured_arg_values(meta: &CaptureMetadata) -> Vec<Value> {
    meta.args
        .iter()
        .map(|a| match (&a.value, a.len) {
            (Some(v), _) => v.clone(),
            (None, Some(len)) => Value::Int(i64::try_from(len).unwrap_or(i64::MAX)),
            (None, None) => Value::Int(0),
        })
        .collect()
}

/// The space `kw tune` searches for this capture on `info`: every restriction, with the
/// captured problem size and arguments resolved.
pub fn space_of(meta: &CaptureMetadata, info: &DeviceInfo) -> Result<TuningSpace, DefError> {
    let def = &meta.kernel;
    if !def.has_launch_restrictions() {
        return def.space(Some(info));
    }
    def.space_at(
        Some(info),
        &captured_problem_size(meta),
        &captured_arg_values(meta),
    )
}
