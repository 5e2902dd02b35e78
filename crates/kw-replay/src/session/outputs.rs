//! Verifying a run's outputs against the captured reference, on the device or on the host
//! ([`ReplaySession::verify`]), each buffer with its tolerance ([`kw_core::tolerance`]).

use super::{ReplayArg, ReplaySession, VerifyWhere};
use crate::verify::{compare, ToleranceOverride};
use kw_core::backend::BackendError;
use std::sync::PoisonError;
use std::time::Instant;

impl ReplaySession {
    /// Compares every buffer that has a reference with it, on the device where it can.
    /// `Ok(None)` when all match; `Ok(Some(reason))` names the first buffer that differs.
    /// Each buffer's tolerance is the definition's ([`kw_core::tolerance`]) with `tol`'s
    /// overrides.
    pub fn verify(&self, tol: ToleranceOverride) -> Result<Option<String>, BackendError> {
        self.verify_at(tol, VerifyWhere::Auto)
    }

    /// [`ReplaySession::verify`] at a chosen place. On the device, the host reads 24 bytes
    /// per buffer, and the whole buffer only to describe a mismatch.
    ///
    /// [`VerifyWhere::Auto`] decides at the first verification that passes: it compares both
    /// ways, timed (the device twice, its first run may pay one-time costs); the faster way
    /// serves every later verification (on a GPU the device, which reads 24 bytes where the
    /// host reads every output; on a CPU device such as PoCL often the host), and the two
    /// verdicts must agree.
    pub fn verify_at(
        &self,
        tol: ToleranceOverride,
        at: VerifyWhere,
    ) -> Result<Option<String>, BackendError> {
        if at != VerifyWhere::Auto || self.comparer.is_err() {
            return self.compare_outputs(tol, at);
        }
        let decided = *self.auto.lock().unwrap_or_else(PoisonError::into_inner);
        match decided {
            Some(true) => return self.compare_outputs(tol, VerifyWhere::Auto),
            Some(false) => return self.compare_outputs(tol, VerifyWhere::Host),
            None => {}
        }
        let first = self.compare_outputs(tol, VerifyWhere::Auto)?;
        if first.is_some() {
            // A mismatch is described on the host either way: no fair timing. Decide later.
            return Ok(first);
        }
        let started = Instant::now();
        let on_device = self.compare_outputs(tol, VerifyWhere::Auto)?;
        let device_time = started.elapsed();
        let started = Instant::now();
        let on_host = self.compare_outputs(tol, VerifyWhere::Host)?;
        let host_time = started.elapsed();
        if on_device != on_host {
            return Ok(Some(format!(
                "the device comparison ({}) and the host comparison ({}) disagree (a bug: \
                 please report it)",
                on_device.as_deref().unwrap_or("match"),
                on_host.as_deref().unwrap_or("match")
            )));
        }
        *self.auto.lock().unwrap_or_else(PoisonError::into_inner) = Some(device_time <= host_time);
        Ok(on_host)
    }

    /// Whether [`VerifyWhere::Auto`] verification runs on the device: the device can run the
    /// comparison kernel and, once both ways were timed, it was the faster.
    pub fn verifies_on_device(&self) -> bool {
        self.comparer.is_ok()
            && *self.auto.lock().unwrap_or_else(PoisonError::into_inner) != Some(false)
    }

    /// Compares the outputs on the device where `at` allows and it can, else on the host.
    fn compare_outputs(
        &self,
        over: ToleranceOverride,
        at: VerifyWhere,
    ) -> Result<Option<String>, BackendError> {
        for a in &self.args {
            if let ReplayArg::Buffer {
                name,
                elem,
                len,
                working,
                reference: Some(want),
                reference_dev,
                tolerance,
                magnitude,
                ..
            } = a
            {
                let tol = over.apply(*tolerance);
                let on_device = match (at, &self.comparer, reference_dev) {
                    (VerifyWhere::Host, _, _) => None,
                    (_, Ok(c), Some(r)) => Some((c, r)),
                    (VerifyWhere::Device, Err(why), _) => {
                        return Err(BackendError::Api {
                            op: "device-side verification",
                            message: why.clone(),
                        })
                    }
                    (VerifyWhere::Device, Ok(_), None) => {
                        return Err(BackendError::Api {
                            op: "device-side verification",
                            message: format!("buffer `{name}` has no reference on the device"),
                        })
                    }
                    _ => None,
                };
                if let Some((c, r)) = on_device {
                    let s =
                        c.compare(*elem, working.as_ref(), r.as_ref(), *len, tol, *magnitude)?;
                    if s.count == 0 {
                        continue;
                    }
                }
                let mut got = vec![0u8; *len * elem.size()];
                working.read(0, &mut got)?;
                if let Some(m) = compare(*elem, &got, want, tol) {
                    let rule = if elem.is_float() {
                        format!(" (tolerance: {tol}, magnitude {magnitude})")
                    } else {
                        String::new()
                    };
                    return Ok(Some(format!("buffer `{name}`: {m}{rule}")));
                }
                if on_device.is_some() {
                    // The device found a difference the host does not: never a pass.
                    return Ok(Some(format!(
                        "buffer `{name}`: the device comparison found differences that the \
                         host comparison does not (a bug: please report it)"
                    )));
                }
            }
        }
        Ok(None)
    }
}
