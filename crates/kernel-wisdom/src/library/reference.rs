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
