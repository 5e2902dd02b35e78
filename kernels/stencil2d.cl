// Tunable 5-point stencil on a width x height grid (row-major):
//   out[y][x] = C0 * in[y][x] + C1 * (in[y][x-1] + in[y][x+1] + in[y-1][x] + in[y+1][x])
// inside, and out = in on the border.
//
// Tuning parameters (passed as defines):
//   block_size_x, block_size_y  work-group shape
//   tile_y                      rows each work-item computes (consecutive rows)
//   use_local                   1: stage the work-group's tile plus halo in local memory
// The grid divisors are (block_size_x, block_size_y * tile_y).
//
// Dynamic local memory arrives as the trailing `__local` parameter (kernel-wisdom's OpenCL
// convention); its size is (block_size_x + 2) * (block_size_y * tile_y + 2) floats when
// use_local is 1, and unused otherwise.

#ifndef block_size_x
#define block_size_x 16
#endif
#ifndef block_size_y
#define block_size_y 4
#endif
#ifndef tile_y
#define tile_y 1
#endif
#ifndef use_local
#define use_local 0
#endif

#define C0 0.5f
#define C1 0.125f

__kernel void stencil2d(__global float* restrict out,
                        __global const float* restrict in,
                        const int width,
                        const int height,
                        __local float* tile)
{
    const int lx = (int)get_local_id(0);
    const int ly = (int)get_local_id(1);
    const int x = (int)get_group_id(0) * block_size_x + lx;
    const int rows = block_size_y * tile_y;
    const int y0 = (int)get_group_id(1) * rows + ly * tile_y;

#if use_local
    const int tw = block_size_x + 2;
    const int th = rows + 2;
    const int gx0 = (int)get_group_id(0) * block_size_x - 1;
    const int gy0 = (int)get_group_id(1) * rows - 1;
    for (int i = ly * block_size_x + lx; i < tw * th; i += block_size_x * block_size_y) {
        const int gx = gx0 + i % tw;
        const int gy = gy0 + i / tw;
        tile[i] = (gx >= 0 && gx < width && gy >= 0 && gy < height) ? in[gy * width + gx] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif

    if (x >= width) {
        return;
    }
    for (int k = 0; k < tile_y; k++) {
        const int y = y0 + k;
        if (y >= height) {
            return;
        }
        const int i = y * width + x;
        float v;
        if (x == 0 || y == 0 || x == width - 1 || y == height - 1) {
            v = in[i];
        } else {
#if use_local
            const int t = (ly * tile_y + k + 1) * tw + lx + 1;
            v = C0 * tile[t] + C1 * (tile[t - 1] + tile[t + 1] + tile[t - tw] + tile[t + tw]);
#else
            v = C0 * in[i] + C1 * (in[i - 1] + in[i + 1] + in[i - width] + in[i + width]);
#endif
        }
        out[i] = v;
    }
}
