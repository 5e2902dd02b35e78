//! The library's kernels select their shipped H100 records as the runtime does (validity at
//! the size, CUDA's grid limits, the fill rule), on a null CUDA device that reports an H100's
//! name, 132 multiprocessors and 227 KiB of shared memory: at each record's own problem size
//! the record itself (step 1), and between records a record of the same device (step 2).

use kernel_wisdom::library::{defs, Library};
use kw_core::device::BackendKind;
use kw_core::null_device::NullDevice;
use kw_core::wisdom::Step;
use std::sync::Arc;

const H100: &str = "NVIDIA H100 80GB HBM3";

#[test]
fn each_shipped_h100_record_is_selected_at_its_own_size_and_a_neighbour_between() {
    let device = NullDevice::new(BackendKind::Cuda).with_info(|info| {
        info.name = H100.into();
        info.max_shared_memory_per_block = 232448;
    });
    let lib = Library::new(Arc::new(device));
    for name in defs::KERNELS {
        let json: serde_json::Value =
            serde_json::from_str(defs::shipped_wisdom(name).unwrap()).unwrap();
        let records: Vec<&serde_json::Value> = json["records"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["device"]["name"] == H100)
            .collect();
        assert!(records.len() >= 4, "{name}");
        for r in records {
            let size: Vec<i64> = r["problem_size"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_i64().unwrap())
                .collect();
            // convolution's third axis is the filter's area (square filters here).
            let kernel = if *name == "convolution" {
                let side = (size[2] as f64).sqrt().round() as usize;
                assert_eq!((side * side) as i64, size[2], "{name} {size:?}");
                lib.convolution_kernel([side, side]).unwrap()
            } else {
                lib.kernel(name).unwrap()
            };
            let choice = kernel.choice(&size);
            assert_eq!(choice.step, Step::ExactDeviceExactSize, "{name} {size:?}");
            for (k, v) in r["config"].as_object().unwrap() {
                assert_eq!(
                    choice.config.get(k).map(|x| x.to_string()),
                    Some(v.to_string().trim_matches('"').to_string()),
                    "{name} {size:?}: {k}"
                );
            }
            // A third more on each axis (no record there), padded as the gemm routines pad
            // before they launch.
            let pad = match *name {
                "gemm" => defs::GEMM_PAD.to_vec(),
                "gemm_f16" => defs::GEMM_F16_PAD.to_vec(),
                _ => vec![1; size.len()],
            };
            let between: Vec<i64> = size
                .iter()
                .zip(&pad)
                .map(|(&v, &p)| ((v + v / 3 + 1) as usize).div_ceil(p) as i64 * p as i64)
                .collect();
            let choice = kernel.choice(&between);
            assert_eq!(choice.step, Step::DeviceNearestSize, "{name} {between:?}");
            let record = choice.record.expect("a record");
            assert_eq!(record.device.name, H100, "{name} {between:?}");
        }
    }
}

/// The shipped records' alternates at sizes nobody tuned (measured on the H100,
/// `docs/measurements/h100-alternates.txt`): n-body at 40,000 bodies selects the 32,768
/// record, whose 256-thread blocks would make a second wave of 25 of 157 blocks there, and
/// takes its 128-thread alternate (313 blocks, balance 313 / (132 x 3) = 0.79; 1.26x faster there);
/// gemm_f16 at 384 x 384 x 1536 keeps the record's 32 x 32 tiles (the 64 x 64 alternate's 36
/// blocks would leave most of the device idle).
#[test]
fn shipped_alternates_are_taken_where_their_blocks_spread_more_evenly() {
    let device = NullDevice::new(BackendKind::Cuda).with_info(|info| {
        info.name = H100.into();
        info.max_shared_memory_per_block = 232448;
    });
    let lib = Library::new(Arc::new(device));
    let nbody = lib.kernel("nbody").unwrap();
    let c = nbody.choice(&[40000]);
    assert_eq!(c.record.as_ref().unwrap().problem_size, vec![32768]);
    assert_eq!(c.config.get("block_size_x"), Some(&128.into()));
    assert_eq!(
        c.record.unwrap().config.get("block_size_x"),
        Some(&256.into())
    );
    // At its own size, the record's own configuration.
    assert_eq!(
        nbody.choice(&[32768]).config.get("block_size_x"),
        Some(&256.into())
    );
    let gemm_f16 = lib.kernel("gemm_f16").unwrap();
    let c = gemm_f16.choice(&[384, 384, 1536]);
    assert_eq!(c.config, c.record.unwrap().config);
}
