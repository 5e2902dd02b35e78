// A 7-point 3D stencil on an nx x ny x nz grid of floats (x fastest):
//   out = c0 * centre + c1 * (the six neighbours); the boundary cells are copied.
// Each thread computes a column of z_per_thread cells along z for its (x, y), reading the
// centre plane's neighbours from global memory (through the read-only path where it exists)
// and keeping the column's previous and next values in registers.
//
// Tuning parameters (defines): block_size_x, block_size_y (threads per block in x, y),
// z_per_thread (cells along z per thread).
#include "dialect.h"

#ifndef block_size_x
#define block_size_x 32
#endif
#ifndef block_size_y
#define block_size_y 4
#endif
#ifndef z_per_thread
#define z_per_thread 8
#endif

KW_KERNEL stencil3d(KW_GLOBAL float* KW_RESTRICT out, KW_GLOBAL const float* KW_RESTRICT in,
                    const int nx, const int ny, const int nz, const float c0, const float c1) {
    const int x = KW_GROUP(0) * block_size_x + KW_LID(0);
    const int y = KW_GROUP(1) * block_size_y + KW_LID(1);
    const int z0 = KW_GROUP(2) * z_per_thread;
    if (x >= nx || y >= ny) {
        return;
    }
    const long plane = (long)nx * ny;
    const int interior_xy = x > 0 && x < nx - 1 && y > 0 && y < ny - 1;
    long i = (long)z0 * plane + (long)y * nx + x;
    float below = z0 > 0 ? in[i - plane] : 0.0f;
    float centre = z0 < nz ? in[i] : 0.0f;
    for (int k = 0; k < z_per_thread; k++) {
        const int z = z0 + k;
        if (z >= nz) {
            break;
        }
        const float above = z + 1 < nz ? in[i + plane] : 0.0f;
        if (interior_xy && z > 0 && z < nz - 1) {
            out[i] = c0 * centre +
                     c1 * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx] + below + above);
        } else {
            out[i] = centre;
        }
        below = centre;
        centre = above;
        i += plane;
    }
}
