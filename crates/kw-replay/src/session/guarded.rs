//! Guarded evaluation ([`crate::guard`]): checking every buffer's guard region after a
//! configuration ran, and restoring every buffer after a failed evaluation.

use super::{ReplayArg, ReplaySession};
use crate::error::ReplayError;
use crate::guard;
use kw_capture::Capture;
use kw_core::backend::BackendError;

impl ReplaySession {
    /// The first out-of-bounds write found in the buffers' guard regions, as a failure
    /// reason naming the buffer and the byte offset; `None` when every guard is intact.
    pub fn check_guards(&self) -> Result<Option<String>, BackendError> {
        for a in &self.args {
            if let ReplayArg::Buffer {
                name,
                elem,
                len,
                working,
                ..
            } = a
            {
                let bytes = *len * elem.size();
                if let Some(at) = guard::first_change(working.as_ref(), bytes)? {
                    return Ok(Some(format!(
                        "out-of-bounds write: buffer `{name}` ({len} elements of {elem}, {bytes} \
                         bytes) was written at byte offset {at}, element {}, past its end",
                        at / elem.size().max(1)
                    )));
                }
            }
        }
        Ok(None)
    }

    /// Restores every buffer after a failed evaluation: the buffers the launch writes from
    /// their pristine copies, the read-only inputs from the capture file (a kernel may have
    /// written them by mistake), and every guard region.
    pub fn restore_all(&self) -> Result<(), ReplayError> {
        let dev_err = |name: &str, e: BackendError| ReplayError::Device {
            path: self.path.clone(),
            kernel: self.meta.kernel.kernel_name.clone(),
            what: format!("restoring buffer `{name}`"),
            source: Box::new(e),
        };
        let mut capture = None;
        for (i, a) in self.args.iter().enumerate() {
            let ReplayArg::Buffer {
                name,
                elem,
                len,
                working,
                pristine,
                ..
            } = a
            else {
                continue;
            };
            let bytes = *len * elem.size();
            match pristine {
                Some(p) => working.copy_from(p.as_ref()),
                None => match self.meta.args.get(i).and_then(|c| c.input.as_deref()) {
                    Some(frame) => {
                        if capture.is_none() {
                            capture = Some(Capture::open(&self.path).map_err(|e| {
                                ReplayError::Capture {
                                    path: self.path.clone(),
                                    source: Box::new(e),
                                }
                            })?);
                        }
                        let data = capture
                            .as_ref()
                            .map(|c| c.read_buffer(frame))
                            .transpose()
                            .map_err(|e| ReplayError::Capture {
                                path: self.path.clone(),
                                source: Box::new(e),
                            })?
                            .unwrap_or_default();
                        working.write(0, &data)
                    }
                    None => working.fill_zero(),
                },
            }
            .and_then(|()| guard::fill(working.as_ref(), bytes))
            .map_err(|e| dev_err(name, e))?;
        }
        Ok(())
    }
}
