//! SCRATCH (not committed): prints the library's selection on a null H100 for PROBE_SIZES.
use kernel_wisdom::library::{defs, Library};
use kw_core::device::BackendKind;
use kw_core::null_device::NullDevice;
use std::sync::Arc;

#[test]
fn probe() {
    let Ok(path) = std::env::var("PROBE_SIZES") else {
        return;
    };
    let device = NullDevice::new(BackendKind::Cuda).with_info(|info| {
        info.name = "NVIDIA H100 80GB HBM3".into();
        info.max_shared_memory_per_block = 232448;
        info.compute_units = 132;
    });
    let lib = Library::new(Arc::new(device));
    let mut out = String::new();
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        let (name, size) = (w[0], w[1]);
        let v: Vec<i64> = size.split('x').map(|s| s.parse().unwrap()).collect();
        let (kernel, ps) = match name {
            "convolution" => (
                lib.convolution_kernel([v[2] as usize, v[3] as usize])
                    .unwrap(),
                vec![v[0], v[1], v[2] * v[3]],
            ),
            "gemm" | "gemm_f16" => {
                let pad = if name == "gemm" {
                    defs::GEMM_PAD
                } else {
                    defs::GEMM_F16_PAD
                };
                let ps = v
                    .iter()
                    .zip(pad)
                    .map(|(&x, p)| (x as usize).div_ceil(p) as i64 * p as i64)
                    .collect();
                (lib.kernel(name).unwrap(), ps)
            }
            _ => (lib.kernel(name).unwrap(), v.clone()),
        };
        let c = kernel.choice(&ps);
        let rec = c
            .record
            .as_ref()
            .map(|r| format!("{:?}", r.problem_size))
            .unwrap_or("-".into());
        let cfg: Vec<String> = c.config.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut cfg = cfg;
        cfg.sort();
        out += &format!("{name} {size} {} {rec} {:?}\n", cfg.join(","), c.step);
    }
    std::fs::write(std::env::var("PROBE_OUT").unwrap(), out).unwrap();
}
