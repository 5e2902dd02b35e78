//! [`capture`]: a capture of a bundled kernel on generated inputs, written through the
//! runtime's capture recorder. What `kw tune --bundled NAME[:SIZE]` measures.

use crate::error::Error;
use kw_capture::record::{capture_launch, HostArg};
use kw_core::{backend::Device, device::BackendKind, kernel_def::KernelDef, value::Value};
use std::path::{Path, PathBuf};

/// The bundled kernels [`capture`] knows, as `NAME[:SIZE]` forms.
pub const BUNDLED_SPECS: &str = "vector_add[:N], stencil2d[:WxH], stencil2d-wide[:WxH]";

/// Widens the bundled stencil's space to a few hundred configurations (232 valid on a device
/// with 1024 threads per block): the measurement space of `stencil2d-wide`.
pub fn widen_stencil(def: &mut KernelDef) {
    let widen: [(&str, &[i64]); 3] = [
        ("block_size_x", &[8, 16, 32, 64, 128, 256]),
        ("block_size_y", &[1, 2, 4, 8, 16, 32]),
        ("tile_y", &[1, 2, 4, 8]),
    ];
    for (name, values) in widen {
        if let Some(p) = def.parameters.iter_mut().find(|p| p.name == name) {
            p.values = values.iter().map(|&v| Value::Int(v)).collect();
        }
    }
    def.tuning_key = "stencil2d_wide".into();
}

fn bad_spec(spec: &str, reason: impl Into<String>) -> Error {
    Error::BundledSpec {
        spec: spec.to_string(),
        reason: reason.into(),
    }
}

fn size(spec: &str, text: &str) -> Result<usize, Error> {
    text.parse::<usize>()
        .ok()
        .filter(|&n| n > 0 && i32::try_from(n).is_ok())
        .ok_or_else(|| {
            bad_spec(
                spec,
                format!("`{text}` is not a size from 1 to {}", i32::MAX),
            )
        })
}

fn scalar(n: usize) -> HostArg {
    // `size` checked that every size fits an i32.
    HostArg::scalar(i32::try_from(n).unwrap_or(i32::MAX))
}

/// Launches the bundled kernel named by `spec` (`vector_add[:N]`, default 2^22 elements;
/// `stencil2d[:WxH]` or `stencil2d-wide[:WxH]`, default 1024x1024) once on `device` with its
/// default configuration and generated inputs, and writes the capture into `dir`. The
/// device's backend picks the OpenCL or CUDA source. Returns the file.
pub fn capture(spec: &str, device: &dyn Device, dir: &Path) -> Result<PathBuf, Error> {
    let (name, size_text) = spec.split_once(':').unwrap_or((spec, ""));
    let cuda = device.info().backend == BackendKind::Cuda;
    let seq =
        |n: usize| -> Vec<f32> { (0..n).map(|i| ((i * 7919) % 1000) as f32 / 500.0).collect() };
    let (def, stem, args) = match name {
        "vector_add" => {
            let n = if size_text.is_empty() {
                1 << 22
            } else {
                size(spec, size_text)?
            };
            let def = if cuda {
                super::cuda::vector_add()?
            } else {
                super::opencl::vector_add()?
            };
            let args = vec![
                HostArg::buffer(&vec![0f32; n]),
                HostArg::buffer(&seq(n)),
                HostArg::buffer(&seq(n)),
                scalar(n),
            ];
            (def, format!("vector_add_{n}"), args)
        }
        "stencil2d" | "stencil2d-wide" => {
            let (w, h) = if size_text.is_empty() {
                (1024, 1024)
            } else {
                let (w, h) = size_text
                    .split_once('x')
                    .ok_or_else(|| bad_spec(spec, "expected a size WxH"))?;
                (size(spec, w)?, size(spec, h)?)
            };
            let cells = w
                .checked_mul(h)
                .filter(|&c| i32::try_from(c).is_ok())
                .ok_or_else(|| bad_spec(spec, "W x H is too large"))?;
            let mut def = if cuda {
                super::cuda::stencil2d()?
            } else {
                super::opencl::stencil2d()?
            };
            if name == "stencil2d-wide" {
                widen_stencil(&mut def);
            }
            let args = vec![
                HostArg::buffer(&vec![0f32; cells]),
                HostArg::buffer(&seq(cells)),
                scalar(w),
                scalar(h),
            ];
            (def, format!("{name}_{w}x{h}"), args)
        }
        other => {
            return Err(bad_spec(
                spec,
                format!("unknown bundled kernel `{other}` (known: {BUNDLED_SPECS})"),
            ))
        }
    };
    Ok(capture_launch(dir, &stem, &def, None, device, &args)?)
}
