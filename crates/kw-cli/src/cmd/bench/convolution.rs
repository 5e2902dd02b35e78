//! `kw bench convolution`: the library's 2D convolution (`Library::convolution`) at
//! `WIDTHxHEIGHTxFWxFH`, set against the device-to-device copy bandwidth (effective bytes:
//! the padded input read once and the output written once), with its GFLOP/s (2 per filter
//! tap and output).

use super::{random, time, Opts, Row};
use anyhow::Result;
use kernel_wisdom::library::{reference, Library};
use kernel_wisdom::{BackendKind, DeviceBuffer};
use kw_core::rng::Rng;

/// The convolution at `[width, height, fw, fh]`: the routine as an application calls it
/// (what `KW_CAPTURE=kw_convolution` captures), then its kernel timed at the selected
/// configuration (or `--config`) and that launch's output checked against the CPU (every
/// output at small sizes, a strided sample of 4096 at large ones).
pub(super) fn bench(lib: &Library, size: &[usize], opts: &Opts, bound_gbs: f64) -> Result<Row> {
    let [w, h, fw, fh] = [size[0], size[1], size[2], size[3]];
    let d = lib.device().as_ref();
    let mut rng = Rng::new(size.iter().sum::<usize>() as u64);
    let in_w = w + fw - 1;
    let input = random(&mut rng, in_w * (h + fh - 1));
    let filter = random(&mut rng, fw * fh);
    let din = DeviceBuffer::from_slice(d, &input)?;
    let dout = DeviceBuffer::<f32>::new(d, w * h)?;
    lib.convolution([w, h], [fw, fh], &filter, &din, &dout)?;
    // The kernel itself: in CUDA the routine left the filter in its symbol; in OpenCL it is
    // the last argument.
    let kernel = lib.convolution_kernel([fw, fh])?;
    let dfilter = DeviceBuffer::from_slice(d, &filter)?;
    let mut args = vec![dout.arg(), din.arg(), (w as i32).into(), (h as i32).into()];
    if d.info().backend != BackendKind::Cuda {
        args.push(dfilter.arg());
    }
    dout.fill(f32::NAN)?;
    let ps = [w as i64, h as i64, (fw * fh) as i64];
    let (ms, config, step) = time(&kernel, &ps, &args, opts)?;
    let got = dout.to_vec()?;
    let verified = (0..w * h).step_by((w * h / 4096).max(1)).all(|at| {
        let (want, scale) =
            reference::convolution_at(&input, in_w, &filter, [fw, fh], [at % w, at / w]);
        (f64::from(got[at]) - want).abs() <= 1e-5 * scale + 1e-6
    });
    let bytes = (input.len() + w * h) * 4;
    let seconds = ms * 1e-3;
    Ok(Row {
        kernel: "convolution",
        size: size.to_vec(),
        verified,
        ms,
        throughput: bytes as f64 / seconds / 1e9,
        unit: "GB/s",
        bound: Ok(bound_gbs),
        bound_kind: "device-to-device copy",
        gflops: Some(2.0 * (w * h * fw * fh) as f64 / seconds / 1e9),
        config,
        step,
    })
}
