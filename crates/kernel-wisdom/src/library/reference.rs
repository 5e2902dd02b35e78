//! CPU references of the library routines: what tests and `kw bench` compare the devices'
//! results with.

/// The transpose of a rows x cols row-major matrix (a cols x rows one).
pub fn transpose(input: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut out = vec![0f32; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = input[r * cols + c];
        }
    }
    out
}

/// The sum, accumulated in f64.
pub fn sum(input: &[f32]) -> f64 {
    input.iter().map(|&v| f64::from(v)).sum()
}

/// The 7-point stencil on an nx x ny x nz grid (x fastest): `c0 * centre + c1 * (six
/// neighbours)`, boundary cells copied.
pub fn stencil3d(input: &[f32], [nx, ny, nz]: [usize; 3], c0: f32, c1: f32) -> Vec<f32> {
    let mut out = input.to_vec();
    let at = |x: usize, y: usize, z: usize| input[(z * ny + y) * nx + x];
    for z in 1..nz.saturating_sub(1) {
        for y in 1..ny.saturating_sub(1) {
            for x in 1..nx.saturating_sub(1) {
                let n = at(x - 1, y, z)
                    + at(x + 1, y, z)
                    + at(x, y - 1, z)
                    + at(x, y + 1, z)
                    + at(x, y, z - 1)
                    + at(x, y, z + 1);
                out[(z * ny + y) * nx + x] = c0 * at(x, y, z) + c1 * n;
            }
        }
    }
    out
}

/// C = alpha A B + beta C, column-major (A m x k, B k x n, C m x n), accumulated in f64.
pub fn gemm(
    [m, n, k]: [usize; 3],
    alpha: f32,
    a: &[f32],
    b: &[f32],
    beta: f32,
    c: &[f32],
) -> Vec<f32> {
    let mut out = vec![0f32; m * n];
    for j in 0..n {
        for i in 0..m {
            let dot: f64 = (0..k)
                .map(|p| f64::from(a[p * m + i]) * f64::from(b[j * k + p]))
                .sum();
            let prev = if beta == 0.0 {
                0.0
            } else {
                f64::from(c[j * m + i])
            };
            out[j * m + i] = (f64::from(alpha) * dot + f64::from(beta) * prev) as f32;
        }
    }
    out
}

/// `Library::gemm_f16`'s result before its rounding to half: [`gemm`] of the halves'
/// values (bits, as the routine takes them), in f64.
pub fn gemm_f16(
    shape: [usize; 3],
    alpha: f32,
    a: &[u16],
    b: &[u16],
    beta: f32,
    c: &[u16],
) -> Vec<f32> {
    let values =
        |v: &[u16]| -> Vec<f32> { v.iter().map(|&h| super::half::f16_bits_to_f32(h)).collect() };
    gemm(shape, alpha, &values(a), &values(b), beta, &values(c))
}

/// The 2D convolution of `Library::convolution`: a width x height output from an input of
/// (width + fw - 1) x (height + fh - 1), out(x, y) = sum of in(x + j, y + i) filter(i, j)
/// over the fw x fh filter (row-major), accumulated in f64.
pub fn convolution(
    input: &[f32],
    [width, height]: [usize; 2],
    filter: &[f32],
    [fw, fh]: [usize; 2],
) -> Vec<f32> {
    let in_w = width + fw - 1;
    let mut out = vec![0f32; width * height];
    for y in 0..height {
        for x in 0..width {
            out[y * width + x] = convolution_at(input, in_w, filter, [fw, fh], [x, y]).0 as f32;
        }
    }
    out
}

/// One output of [`convolution`], at (x, y) of an input `in_w` wide: the sum, and the sum of
/// its terms' magnitudes (the scale of its rounding error).
pub fn convolution_at(
    input: &[f32],
    in_w: usize,
    filter: &[f32],
    [fw, fh]: [usize; 2],
    [x, y]: [usize; 2],
) -> (f64, f64) {
    let (mut sum, mut scale) = (0f64, 0f64);
    for i in 0..fh {
        for j in 0..fw {
            let t = f64::from(input[(y + i) * in_w + x + j]) * f64::from(filter[i * fw + j]);
            sum += t;
            scale += t.abs();
        }
    }
    (sum, scale)
}

/// `iterations` steps of Rodinia's hotspot on an nx x ny grid (x fastest), in f64: a
/// neighbour outside the grid is the cell itself (Rodinia's CUDA kernel).
pub fn hotspot(
    temp: &[f32],
    power: &[f32],
    [nx, ny]: [usize; 2],
    iterations: usize,
    k: &super::HotspotCoefficients,
) -> Vec<f32> {
    let mut cur: Vec<f64> = temp.iter().map(|&v| f64::from(v)).collect();
    let mut next = cur.clone();
    let [sdc, rx, ry, rz, amb] =
        [k.step_div_cap, k.rx_1, k.ry_1, k.rz_1, k.amb_temp].map(f64::from);
    for _ in 0..iterations {
        for y in 0..ny {
            for x in 0..nx {
                let at = |x: usize, y: usize| cur[y * nx + x];
                let c = at(x, y);
                let w = if x > 0 { at(x - 1, y) } else { c };
                let e = if x + 1 < nx { at(x + 1, y) } else { c };
                let n = if y > 0 { at(x, y - 1) } else { c };
                let s = if y + 1 < ny { at(x, y + 1) } else { c };
                let p = f64::from(power[y * nx + x]);
                next[y * nx + x] = c + sdc
                    * (p + (s + n - 2.0 * c) * ry + (e + w - 2.0 * c) * rx + (amb - c) * rz);
            }
        }
        std::mem::swap(&mut cur, &mut next);
    }
    cur.into_iter().map(|v| v as f32).collect()
}

/// Whether a device's hotspot result `got` is `want` ([`hotspot`]'s) up to f32 rounding over
/// `iterations` steps: `|got - want| <= 2e-6 (iterations + 1) |want| + 1e-4` per cell. The
/// first cell that differs, if one does.
pub fn hotspot_mismatch(got: &[f32], want: &[f32], iterations: usize) -> Option<String> {
    let rel = 2e-6 * (iterations as f64 + 1.0);
    got.iter()
        .zip(want)
        .enumerate()
        .find(|(_, (&g, &w))| {
            let (g, w) = (f64::from(g), f64::from(w));
            let close = (g - w).abs() <= rel * w.abs() + 1e-4; // false for NaN
            !close
        })
        .map(|(i, (g, w))| format!("cell {i}: {g} instead of {w}"))
        .or_else(|| {
            (got.len() != want.len())
                .then(|| format!("{} cells instead of {}", got.len(), want.len()))
        })
}

/// One body after an n-body step, in f64.
#[derive(Clone, Copy, Debug)]
pub struct NbodyBody {
    /// x, y, z and the mass.
    pub pos: [f64; 4],
    /// x, y, z and the fourth value (kept).
    pub vel: [f64; 4],
    /// The sum of the magnitudes of the acceleration's terms: what its rounding error in f32
    /// is relative to.
    pub scale: f64,
}

/// Body `i` after one step of the all-pairs n-body problem (`Library::nbody`), accumulated
/// in f64; `pos` and `vel` hold 4 floats a body.
pub fn nbody_body(pos: &[f32], vel: &[f32], i: usize, step: &super::NbodyStep) -> NbodyBody {
    let p = |j: usize, c: usize| f64::from(pos[4 * j + c]);
    let eps2 = f64::from(step.softening) * f64::from(step.softening);
    let (mut a, mut scale) = ([0f64; 3], 0f64);
    for j in 0..pos.len() / 4 {
        let r = [p(j, 0) - p(i, 0), p(j, 1) - p(i, 1), p(j, 2) - p(i, 2)];
        let d2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + eps2;
        let s = p(j, 3) / (d2 * d2.sqrt());
        for c in 0..3 {
            a[c] += r[c] * s;
        }
        scale += (s * d2.sqrt()).abs();
    }
    let (dt, damping) = (f64::from(step.dt), f64::from(step.damping));
    let mut out = NbodyBody {
        pos: [0.0, 0.0, 0.0, p(i, 3)],
        vel: [0.0, 0.0, 0.0, f64::from(vel[4 * i + 3])],
        scale,
    };
    for c in 0..3 {
        out.vel[c] = (f64::from(vel[4 * i + c]) + a[c] * dt) * damping;
        out.pos[c] = p(i, c) + out.vel[c] * dt;
    }
    out
}

/// Whether a device's body `i` (`got_pos`, `got_vel`: its 4 floats each) matches
/// [`nbody_body`] up to f32 rounding: the acceleration within 1e-4 of its scale, then
/// 1e-6 relative; the fourth values exactly. Why not, if it does not.
pub fn nbody_mismatch(
    pos: &[f32],
    vel: &[f32],
    step: &super::NbodyStep,
    i: usize,
    [got_pos, got_vel]: [&[f32]; 2],
) -> Option<String> {
    let want = nbody_body(pos, vel, i, step);
    let (dt, damping) = (f64::from(step.dt).abs(), f64::from(step.damping).abs());
    for c in 0..4 {
        let (gv, gp) = (f64::from(got_vel[c]), f64::from(got_pos[c]));
        let (tv, tp) = if c == 3 {
            (0.0, 0.0)
        } else {
            let tv = dt * damping * 1e-4 * want.scale + 1e-6 * want.vel[c].abs();
            (tv, dt * tv + 1e-6 * want.pos[c].abs())
        };
        let close = (gv - want.vel[c]).abs() <= tv && (gp - want.pos[c]).abs() <= tp;
        if !close {
            return Some(format!(
                "body {i}, component {c}: position {gp} velocity {gv} instead of {} and {}",
                want.pos[c], want.vel[c]
            ));
        }
    }
    None
}
