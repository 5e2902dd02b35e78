//! `Library::nbody`: one time step of the all-pairs n-body problem
//! (`kernels/library/nbody.cl`, the CUDA SDK's and KTT's scheme), and `fma_peak`, the kernel
//! that measures the device's single-precision peak for `kw bench`
//! (`kernels/library/fma_peak.cl`).

use super::{defs, expect_len, int, Library};
use crate::builder::KernelBuilder;
use crate::error::Error;
use kw_core::backend::KernelArg;
use kw_core::buffer::DeviceBuffer;
use kw_core::device::BackendKind;
use kw_core::expr::{arg, device, DeviceAttr};
use kw_core::tolerance::Tolerance;

/// `kernels/library/nbody.cl`.
pub const NBODY: &str = include_str!("../../../../kernels/library/nbody.cl");
/// `kernels/library/fma_peak.cl`.
pub const FMA_PEAK: &str = include_str!("../../../../kernels/library/fma_peak.cl");

/// Floating-point operations counted per body-body interaction: the usual convention (GPU
/// Gems 3, ch. 31; the CUDA SDK's `nbody`), with the reciprocal square root as one.
pub const FLOPS_PER_INTERACTION: f64 = 20.0;

/// Independent FMA chains per thread in `fma_peak` (its `CHAINS`).
pub const FMA_PEAK_CHAINS: usize = 16;

const R: &str = "nbody";

/// The constants of a time step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NbodyStep {
    /// The time step.
    pub dt: f32,
    /// The softening length: distances are `sqrt(r^2 + softening^2)`; must be positive (it
    /// also makes a body's pull on itself zero instead of 0 / 0).
    pub softening: f32,
    /// Velocities are multiplied by it after the update (1: none; the CUDA SDK's damping).
    pub damping: f32,
}

/// `nbody(pos_out, vel_out, pos, vel, n, dt, softening_sq, damping)`: one step of n bodies
/// (float4 each: x, y, z, mass; velocities x, y, z, kept). Problem size n.
pub fn definition(backend: BackendKind) -> KernelBuilder {
    let mut b = defs::builder(R, "nbody.cl", NBODY, backend);
    let bx = b.tune("block_size_x", [32, 64, 128, 256, 512, 1024], 128);
    let outer = b.tune("outer_unroll", [1, 2, 4, 8], 1);
    b.tune("inner_unroll", [1, 2, 4, 8, 16, 32], 4);
    b.tune("use_shared", [0, 1], 1);
    b.tune("vector_loads", [0, 1], 1);
    // Sums of n terms in another order (and the hardware's reciprocal square root) differ
    // in their last bits.
    let tolerance = Tolerance {
        rtol: 1e-4,
        ..Tolerance::default()
    };
    b.restriction(bx.clone().le(device(DeviceAttr::MaxThreadsPerBlock)))
        .restriction_text("use_shared == 0 or inner_unroll <= block_size_x")
        .problem_size([arg("n")])
        .block_size(bx.clone(), 1, 1)
        .grid_divisors(bx * outer, 1, 1)
        .output::<f32>("pos_out")
        .buffer_len("pos_out", arg("n") * 4)
        .tolerance("pos_out", tolerance)
        .output::<f32>("vel_out")
        .buffer_len("vel_out", arg("n") * 4)
        .tolerance("vel_out", tolerance)
        .input::<f32>("pos")
        .buffer_len("pos", arg("n") * 4)
        .input::<f32>("vel")
        .buffer_len("vel", arg("n") * 4)
        .scalar::<i32>("n")
        .scalar::<f32>("dt")
        .scalar::<f32>("softening_sq")
        .scalar::<f32>("damping");
    b
}

/// `fma_peak(out, n, iterations, m, c)`: n threads, each [`FMA_PEAK_CHAINS`] x `iterations`
/// FMAs, writing one float. Problem size n; one configuration (256 threads per block).
pub fn fma_peak(backend: BackendKind) -> KernelBuilder {
    let mut b = defs::builder("fma_peak", "fma_peak.cl", FMA_PEAK, backend);
    let bx = b.tune("block_size_x", [256], 256);
    b.restriction(bx.clone().le(device(DeviceAttr::MaxThreadsPerBlock)))
        .problem_size([arg("n")])
        .block_size(bx.clone(), 1, 1)
        .grid_divisors(bx, 1, 1)
        .output::<f32>("out")
        .buffer_len("out", arg("n"))
        .scalar::<i32>("n")
        .scalar::<i32>("iterations")
        .scalar::<f32>("m")
        .scalar::<f32>("c");
    b
}

impl NbodyStep {
    /// The arguments of the `nbody` kernel for n bodies (`n` must fit an `i32`).
    pub fn args<'a>(
        &self,
        n: i32,
        [pos, vel]: [&'a DeviceBuffer<f32>; 2],
        [pos_out, vel_out]: [&'a DeviceBuffer<f32>; 2],
    ) -> [KernelArg<'a>; 8] {
        [
            pos_out.arg(),
            vel_out.arg(),
            pos.arg(),
            vel.arg(),
            n.into(),
            self.dt.into(),
            (self.softening * self.softening).into(),
            self.damping.into(),
        ]
    }
}

impl Library {
    /// One time step of `n` bodies: `pos` holds x, y, z and the mass of each body (4 floats
    /// a body), `vel` its velocity (x, y, z and a fourth value, kept); the new positions and
    /// velocities go to `pos_out` and `vel_out`. Every body pulls every other with
    /// `m r / (r^2 + softening^2)^(3/2)` (G = 1). Any n; wrong lengths or a softening that is
    /// not positive are [`Error::Shape`].
    pub fn nbody(
        &self,
        n: usize,
        step: &NbodyStep,
        [pos, vel]: [&DeviceBuffer<f32>; 2],
        [pos_out, vel_out]: [&DeviceBuffer<f32>; 2],
    ) -> Result<(), Error> {
        let len = n.checked_mul(4).ok_or_else(|| Error::Shape {
            routine: R,
            message: format!("{n} bodies overflow"),
        })?;
        expect_len(R, "pos (4 x n)", pos.len(), len)?;
        expect_len(R, "vel (4 x n)", vel.len(), len)?;
        expect_len(R, "pos_out (4 x n)", pos_out.len(), len)?;
        expect_len(R, "vel_out (4 x n)", vel_out.len(), len)?;
        // The kernel's reciprocal square root flushes denormals (`KW_RSQRT`): softening^2,
        // the smallest distance it sees, must be a normal float.
        let squared = step.softening * step.softening;
        if !(step.softening > 0.0 && squared.is_normal()) {
            return Err(Error::Shape {
                routine: R,
                message: format!(
                    "softening {} is not a positive number whose square is a normal float (about 1.1e-19 to 1.8e19)",
                    step.softening
                ),
            });
        }
        super::separate(
            R,
            &[("pos_out", pos_out.memory()), ("vel_out", vel_out.memory())],
            &[("pos", pos.memory()), ("vel", vel.memory())],
        )?;
        let bodies = int(R, "n", n)?;
        self.kernel(R)?
            .launch(&step.args(bodies, [pos, vel], [pos_out, vel_out]))
    }
}
