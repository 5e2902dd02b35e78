//! `Library::hotspot`: Rodinia's hotspot thermal simulation, N time steps on an nx x ny grid,
//! with temporal tiling (`kernels/library/hotspot.cl`).
//!
//! One launch fuses up to `temporal_tiling_factor` steps (a tuning parameter), so the routine
//! launches ceil(N / temporal_tiling_factor) times, swapping source and destination between
//! launches (the last launch takes what is left: the step count is a kernel argument the
//! kernel clamps). Since the configuration decides how far one launch goes, the routine
//! selects the configuration once per call and launches it explicitly: the launches are not
//! captured (`KW_CAPTURE`) or tuned online. Tune the kernel through its T1 file
//! (`kernels/library/hotspot_T1.json`) with a throughput objective that counts the fused
//! steps ([`HOTSPOT_OBJECTIVE`]).

use super::{defs, expect_len, int, Library};
use crate::builder::KernelBuilder;
use crate::error::Error;
use crate::LaunchOptions;
use kw_core::backend::KernelArg;
use kw_core::buffer::DeviceBuffer;
use kw_core::config::Config;
use kw_core::device::BackendKind;
use kw_core::expr::{arg, device, DeviceAttr};
use std::sync::PoisonError;

/// `kernels/library/hotspot.cl`.
pub const HOTSPOT: &str = include_str!("../../../../kernels/library/hotspot.cl");

/// The objective hotspot is tuned by: cell updates per second (10^9), counting the
/// `temporal_tiling_factor` steps one launch takes (`kw tune --objective`; the definition
/// carries it too).
pub const HOTSPOT_OBJECTIVE: &str =
    "problem_size.x * problem_size.y * temporal_tiling_factor / (time * 1e6)";

const R: &str = "hotspot";

/// The constants of Rodinia's update, as the kernel takes them: `step / Cap`, `1 / Rx`,
/// `1 / Ry`, `1 / Rz` and the ambient temperature (K).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HotspotCoefficients {
    /// The time step over the cell's thermal capacitance.
    pub step_div_cap: f32,
    /// 1 / the lateral thermal resistance along x.
    pub rx_1: f32,
    /// 1 / the lateral thermal resistance along y.
    pub ry_1: f32,
    /// 1 / the vertical thermal resistance (to the heat sink).
    pub rz_1: f32,
    /// The ambient temperature.
    pub amb_temp: f32,
}

impl HotspotCoefficients {
    /// Rodinia's constants for a `width` x `height` metre chip of 0.5 mm silicon split into
    /// nx x ny cells (Rodinia's `hotspot.cu`: `Cap`, `Rx`, `Ry`, `Rz` from the cell's size,
    /// the step from the maximum power density and the precision, ambient 80 K).
    pub fn chip([nx, ny]: [usize; 2], width: f64, height: f64) -> HotspotCoefficients {
        const MAX_PD: f64 = 3.0e6;
        const PRECISION: f64 = 0.001;
        const SPEC_HEAT_SI: f64 = 1.75e6;
        const K_SI: f64 = 100.0;
        const FACTOR_CHIP: f64 = 0.5;
        const T_CHIP: f64 = 0.0005;
        let grid_width = width / nx.max(1) as f64;
        let grid_height = height / ny.max(1) as f64;
        let cap = FACTOR_CHIP * SPEC_HEAT_SI * T_CHIP * grid_width * grid_height;
        let rx = grid_width / (2.0 * K_SI * T_CHIP * grid_height);
        let ry = grid_height / (2.0 * K_SI * T_CHIP * grid_width);
        let rz = T_CHIP / (K_SI * grid_height * grid_width);
        let max_slope = MAX_PD / (FACTOR_CHIP * T_CHIP * SPEC_HEAT_SI);
        let step = PRECISION / max_slope;
        HotspotCoefficients {
            step_div_cap: (step / cap) as f32,
            rx_1: (1.0 / rx) as f32,
            ry_1: (1.0 / ry) as f32,
            rz_1: (1.0 / rz) as f32,
            amb_temp: 80.0,
        }
    }

    /// Rodinia's own chip, 16 x 16 mm, split into nx x ny cells. The explicit scheme is
    /// stable while `step_div_cap * 2 * (rx_1 + ry_1) <= 1`: up to about 1,400 cells a side.
    pub fn rodinia(shape: [usize; 2]) -> HotspotCoefficients {
        HotspotCoefficients::chip(shape, 0.016, 0.016)
    }

    /// Cells of the size of Rodinia's 512 x 512 input (31.25 µm), nx x ny of them: stable at
    /// every grid size (what `kw bench` uses).
    pub fn rodinia_cells([nx, ny]: [usize; 2]) -> HotspotCoefficients {
        const CELL: f64 = 0.016 / 512.0;
        HotspotCoefficients::chip([nx, ny], nx as f64 * CELL, ny as f64 * CELL)
    }
}

impl HotspotCoefficients {
    /// The arguments of the `hotspot` kernel: `iterations` steps (at most the configuration's
    /// `temporal_tiling_factor` are taken) from `src` into `dst` on an nx x ny grid.
    pub fn args<'a>(
        &self,
        [nx, ny]: [i32; 2],
        iterations: i32,
        [dst, src, power]: [&'a DeviceBuffer<f32>; 3],
    ) -> [KernelArg<'a>; 11] {
        [
            dst.arg(),
            src.arg(),
            power.arg(),
            nx.into(),
            ny.into(),
            iterations.into(),
            self.step_div_cap.into(),
            self.rx_1.into(),
            self.ry_1.into(),
            self.rz_1.into(),
            self.amb_temp.into(),
        ]
    }
}

/// `hotspot(dst, src, power, nx, ny, iterations, step_div_cap, rx_1, ry_1, rz_1, amb_temp)`:
/// min(iterations, temporal_tiling_factor) steps of Rodinia's hotspot from `src` into `dst`
/// on an nx x ny grid (x fastest). Problem size (nx, ny); objective [`HOTSPOT_OBJECTIVE`].
pub fn definition(backend: BackendKind) -> KernelBuilder {
    let mut b = defs::builder(R, "hotspot.cl", HOTSPOT, backend);
    let bx = b.tune("block_size_x", [16, 32, 64, 128, 256], 32);
    let by = b.tune("block_size_y", [1, 2, 4, 8, 16, 32], 8);
    let tx = b.tune("tile_size_x", [1, 2, 3, 4], 1);
    let ty = b.tune("tile_size_y", [1, 2, 3, 4, 6, 8], 4);
    b.tune("temporal_tiling_factor", [1, 2, 3, 4, 5, 6, 7, 8], 2);
    b.tune("loop_unroll_factor_t", [1, 2, 3, 4], 1);
    b.tune("sh_power", [0, 1], 0);
    if backend == BackendKind::Cuda {
        b.tune("blocks_per_sm", [0, 1, 2, 3, 4], 0);
        // More blocks than a multiprocessor's 2,048 threads hold cannot be promised.
        b.restriction_text("block_size_x * block_size_y * blocks_per_sm <= 2048");
    }
    b.restriction((bx.clone() * by.clone()).le(device(DeviceAttr::MaxThreadsPerBlock)))
        .restriction_text("block_size_x * block_size_y >= 32")
        .restriction_text("temporal_tiling_factor % loop_unroll_factor_t == 0")
        // Static shared memory: at most 48 KiB in CUDA (more needs a dynamic allocation).
        .restriction_text(
            "(2 + sh_power) * 4 * (block_size_x * tile_size_x + 2 * temporal_tiling_factor) * \
             (block_size_y * tile_size_y + 2 * temporal_tiling_factor) <= \
             min(49152, device.max_shared_memory_per_block)",
        )
        .objective("Gcell-steps/s", HOTSPOT_OBJECTIVE, true)
        .problem_size([arg("nx"), arg("ny")])
        .block_size(bx.clone(), by.clone(), 1)
        .grid_divisors(bx * tx, by * ty, 1)
        .output::<f32>("dst")
        .buffer_len("dst", arg("nx") * arg("ny"))
        .input::<f32>("src")
        .buffer_len("src", arg("nx") * arg("ny"))
        .input::<f32>("power")
        .buffer_len("power", arg("nx") * arg("ny"))
        .scalar::<i32>("nx")
        .scalar::<i32>("ny")
        .scalar::<i32>("iterations")
        .scalar::<f32>("step_div_cap")
        .scalar::<f32>("rx_1")
        .scalar::<f32>("ry_1")
        .scalar::<f32>("rz_1")
        .scalar::<f32>("amb_temp");
    b
}

/// The steps one launch of `config` takes at most.
fn steps_per_launch(config: &Config) -> usize {
    config
        .get("temporal_tiling_factor")
        .and_then(|v| v.as_int())
        .and_then(|v| usize::try_from(v).ok())
        .unwrap_or(1)
        .max(1)
}

impl Library {
    /// `temp_out` = the temperatures `temp_in` after `iterations` steps of Rodinia's hotspot
    /// on an nx x ny grid (x fastest) heated by `power` (W per cell), with the constants
    /// `coefficients` ([`HotspotCoefficients::rodinia`] computes Rodinia's from the grid
    /// size). Any nx and ny, and iterations up to 2^31 - 1 (0 copies `temp_in`); `temp_in` is
    /// left as it was. More than one launch needs a scratch grid: the library allocates one
    /// and keeps it for the next call of the same size. Wrong lengths, more iterations, or
    /// `temp_out` sharing memory with `temp_in` or `power`, are [`Error::Shape`].
    pub fn hotspot(
        &self,
        shape: [usize; 2],
        iterations: usize,
        coefficients: &HotspotCoefficients,
        temp_in: &DeviceBuffer<f32>,
        power: &DeviceBuffer<f32>,
        temp_out: &DeviceBuffer<f32>,
    ) -> Result<(), Error> {
        let grids = [temp_in, power, temp_out];
        self.hotspot_launches(shape, iterations, coefficients, grids, None, false)
            .map(drop)
    }

    /// [`Library::hotspot`] with `config` (else the selected configuration) for every
    /// launch, each timed: the device milliseconds of all launches together (for `kw bench`).
    #[allow(clippy::too_many_arguments)] // the routine's arguments and the configuration
    pub fn hotspot_timed(
        &self,
        shape: [usize; 2],
        iterations: usize,
        coefficients: &HotspotCoefficients,
        temp_in: &DeviceBuffer<f32>,
        power: &DeviceBuffer<f32>,
        temp_out: &DeviceBuffer<f32>,
        config: Option<&Config>,
    ) -> Result<(f64, Config), Error> {
        let grids = [temp_in, power, temp_out];
        self.hotspot_launches(shape, iterations, coefficients, grids, config, true)
    }

    fn hotspot_launches(
        &self,
        [nx, ny]: [usize; 2],
        iterations: usize,
        k: &HotspotCoefficients,
        [temp_in, power, temp_out]: [&DeviceBuffer<f32>; 3],
        given: Option<&Config>,
        timed: bool,
    ) -> Result<(f64, Config), Error> {
        let cells = nx.checked_mul(ny).ok_or_else(|| Error::Shape {
            routine: R,
            message: format!("{nx} x {ny} cells overflow"),
        })?;
        expect_len(R, "temp_in (nx x ny)", temp_in.len(), cells)?;
        expect_len(R, "power (nx x ny)", power.len(), cells)?;
        expect_len(R, "temp_out (nx x ny)", temp_out.len(), cells)?;
        super::separate(
            R,
            &[("temp_out", temp_out.memory())],
            &[("temp_in", temp_in.memory()), ("power", power.memory())],
        )?;
        let (x, y) = (int(R, "nx", nx)?, int(R, "ny", ny)?);
        // A count from C that wrapped (a negative int) is refused, not run for ever.
        int(R, "iterations", iterations)?;
        let kernel = self.kernel(R)?;
        if cells == 0 {
            let config = given.unwrap_or(kernel.default_config()).clone();
            return Ok((0.0, config));
        }
        let config = match given {
            Some(c) => c.clone(),
            None => kernel.select_config(&[i64::from(x), i64::from(y), 1])?,
        };
        let per = steps_per_launch(&config);
        let launches = iterations.div_ceil(per).max(1);
        // Taken out of the library while in use (a call beside this one allocates its own).
        let scratch = if launches > 1 {
            let kept = self
                .scratch
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            match kept.filter(|b| b.len() == cells) {
                Some(b) => Some(b),
                None => Some(DeviceBuffer::<f32>::new(self.device.as_ref(), cells)?),
            }
        } else {
            None
        };
        // The last launch writes temp_out; the ones before alternate with the scratch grid.
        let other = scratch.as_ref().unwrap_or(temp_out);
        let (mut src, mut left, mut ms) = (temp_in, iterations, 0.0);
        for launch in 0..launches {
            let dst = if (launches - 1 - launch).is_multiple_of(2) {
                temp_out
            } else {
                other
            };
            let steps = left.min(per);
            let args = k.args([x, y], int(R, "steps", steps)?, [dst, src, power]);
            let mut options = LaunchOptions::new().config(&config);
            if timed {
                options = options.timed();
            }
            ms += kernel.launch_with(&args, options)?.device_ms.unwrap_or(0.0);
            left -= steps;
            src = dst;
            // Launches are queued without waiting: a long run waits now and then, so the
            // queue (and the driver's memory for it) stays bounded.
            if launch % QUEUED_LAUNCHES == QUEUED_LAUNCHES - 1 {
                self.device.synchronize()?;
            }
        }
        if let Some(b) = scratch {
            *self.scratch.lock().unwrap_or_else(PoisonError::into_inner) = Some(b);
        }
        Ok((ms, config))
    }
}

/// The most hotspot launches queued before the routine waits for them.
const QUEUED_LAUNCHES: usize = 1024;

#[cfg(test)]
mod tests {
    use super::HotspotCoefficients;

    fn close(a: f32, b: f64) -> bool {
        (f64::from(a) - b).abs() <= 1e-6 * b.abs()
    }

    /// Rodinia's 512 x 512 input: Cap = 4.2725e-7, Rx = Ry = 10, Rz = 5120, step = 1.4583e-7.
    #[test]
    fn rodinia_constants_from_the_grid_size() {
        let k = HotspotCoefficients::rodinia([512, 512]);
        assert!(close(k.step_div_cap, 0.341_333_333_333), "{k:?}");
        assert!(close(k.rx_1, 0.1) && close(k.ry_1, 0.1), "{k:?}");
        assert!(close(k.rz_1, 1.0 / 5120.0), "{k:?}");
        assert_eq!(k.amb_temp, 80.0);
        // Stable (step_div_cap * 2 (rx_1 + ry_1) <= 1) up to about 1,400 cells a side.
        let limit = |n| {
            let k = HotspotCoefficients::rodinia([n, n]);
            k.step_div_cap * 2.0 * (k.rx_1 + k.ry_1)
        };
        assert!(limit(1380) <= 1.0 && limit(1390) > 1.0);
        // A wide grid: the cells are wider than high, so x conducts less.
        let k = HotspotCoefficients::rodinia([256, 1024]);
        assert!(k.rx_1 < k.ry_1, "{k:?}");
        // rodinia_cells: Rodinia's 512 cells at every size.
        let big = HotspotCoefficients::rodinia_cells([4096, 8192]);
        let own = HotspotCoefficients::rodinia([512, 512]);
        assert!(close(big.step_div_cap, f64::from(own.step_div_cap)));
        assert!(close(big.rx_1, 0.1) && close(big.ry_1, 0.1) && close(big.rz_1, 1.0 / 5120.0));
    }
}
