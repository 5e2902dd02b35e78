// A 7-point 3D stencil on an nx x ny x nz grid of floats (x fastest):
//   out = c0 * centre + c1 * (the six neighbours); the boundary cells are copied.
// Each thread computes x_per_thread columns of z_per_thread cells along z (the columns
// block_size_x apart in x, so that a warp's loads stay contiguous), reading the centre plane's
// neighbours from global memory (through the read-only path where it exists) and keeping each
// column's previous and next values in registers.
//
// Tuning parameters (defines): block_size_x, block_size_y (threads per block in x, y),
// z_per_thread (cells along z per thread), x_per_thread (columns per thread: more loads in
// flight per thread), stream_store (CUDA only: 1 writes the output with evict-first stores,
// meant to leave the L2 to the input planes that neighbouring blocks read again).
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
#ifndef x_per_thread
#define x_per_thread 1
#endif
#ifndef stream_store
#define stream_store 0
#endif

#if stream_store
#define STENCIL_STORE(p, v) kw_store_stream_f32((p), (v))
#else
#define STENCIL_STORE(p, v) (*(p) = (v))
#endif

KW_KERNEL stencil3d(KW_GLOBAL float* KW_RESTRICT out, KW_GLOBAL const float* KW_RESTRICT in,
                    const int nx, const int ny, const int nz, const float c0, const float c1) {
    const int x0 = KW_GROUP(0) * (block_size_x * x_per_thread) + KW_LID(0);
    const int y = KW_GROUP(1) * block_size_y + KW_LID(1);
    const int z0 = KW_GROUP(2) * z_per_thread;
    if (x0 >= nx || y >= ny) {
        return;
    }
    const long plane = (long)nx * ny;
    const int interior_y = y > 0 && y < ny - 1;
    const long first = (long)z0 * plane + (long)y * nx + x0;
    float below[x_per_thread];
    float centre[x_per_thread];
    // Column j lies at x0 + j * block_size_x, inside the grid while j * block_size_x < nx - x0
    // (written so, it cannot overflow an int near INT_MAX: x0 < nx here).
    KW_UNROLL(x_per_thread)
    for (int j = 0; j < x_per_thread; j++) {
        const long i = first + j * block_size_x;
        const int inside = j * block_size_x < nx - x0;
        below[j] = inside && z0 > 0 ? in[i - plane] : 0.0f;
        centre[j] = inside && z0 < nz ? in[i] : 0.0f;
    }
    for (int k = 0; k < z_per_thread; k++) {
        const int z = z0 + k;
        if (z >= nz) {
            break;
        }
        const int interior_z = z > 0 && z < nz - 1;
        KW_UNROLL(x_per_thread)
        for (int j = 0; j < x_per_thread; j++) {
            if (j * block_size_x < nx - x0) {
                const int x = x0 + j * block_size_x;
                const long i = first + (long)k * plane + j * block_size_x;
                const float above = z + 1 < nz ? in[i + plane] : 0.0f;
                float v = centre[j];
                if (interior_y && interior_z && x > 0 && x < nx - 1) {
                    v = c0 * centre[j] + c1 * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx] +
                                               below[j] + above);
                }
                STENCIL_STORE(&out[i], v);
                below[j] = centre[j];
                centre[j] = above;
            }
        }
    }
}
