// 2D convolution (as Kernel Tuner's convolution benchmark: a cross-correlation, the filter not
// flipped) of a width x height output from an input padded by the filter's halo:
//   out[y][x] = sum over i < FILTER_HEIGHT, j < FILTER_WIDTH of in[y + i][x + j] * filter[i][j]
// with the input (width + FILTER_WIDTH - 1) x (height + FILTER_HEIGHT - 1), row-major, x fastest.
// A 'same' convolution with a zero boundary is this one on an input padded with zeros.
//
// The filter is in constant memory: in CUDA the `__constant__` array `filter` (written from the
// host before the launch), in OpenCL a `__constant` pointer argument after `height`. Its size
// is compile-time (defines FILTER_WIDTH, FILTER_HEIGHT), so its loops unroll.
//
// Tuning parameters (defines): block_size_x, block_size_y (threads per block); tile_size_x,
// tile_size_y (outputs per thread in x and y, block_size apart); use_shmem (stage the block's
// input tile in shared memory); use_padding (one extra column per shared-memory row against
// bank conflicts); read_only (CUDA only, a keyword of OpenCL C: loads through the read-only
// cache, __ldg).
// Every output is guarded: any width and height.
#include "dialect.h"

#ifndef FILTER_WIDTH
#define FILTER_WIDTH 15
#endif
#ifndef FILTER_HEIGHT
#define FILTER_HEIGHT 15
#endif
#ifndef block_size_x
#define block_size_x 16
#endif
#ifndef block_size_y
#define block_size_y 16
#endif
#ifndef tile_size_x
#define tile_size_x 1
#endif
#ifndef tile_size_y
#define tile_size_y 1
#endif
#ifndef use_shmem
#define use_shmem 1
#endif
#ifndef use_padding
#define use_padding 0
#endif

#define span_x (block_size_x * tile_size_x)
#define span_y (block_size_y * tile_size_y)
#define sh_w (span_x + FILTER_WIDTH - 1)
#define sh_h (span_y + FILTER_HEIGHT - 1)
#define sh_pitch (sh_w + use_padding)

#if KW_CUDA
__constant__ float filter[FILTER_HEIGHT * FILTER_WIDTH];
#define KW_FILTER_PARAM
#else
#define KW_FILTER_PARAM , __constant float* KW_RESTRICT filter
#endif

#if KW_CUDA && defined(read_only) && read_only
#define LOAD(p) __ldg(p)
#else
#define LOAD(p) (*(p))
#endif

KW_KERNEL convolution(KW_GLOBAL float* KW_RESTRICT out, KW_GLOBAL const float* KW_RESTRICT in,
                      const int width, const int height KW_FILTER_PARAM) {
    const int in_w = width + FILTER_WIDTH - 1;
    const int tx = KW_LID(0);
    const int ty = KW_LID(1);
    const int x0 = KW_GROUP(0) * span_x;
    const int y0 = KW_GROUP(1) * span_y;
#if use_shmem
    const int in_h = height + FILTER_HEIGHT - 1;
    KW_SHARED float sh[sh_h * sh_pitch];
    for (int i = ty; i < sh_h; i += block_size_y) {
        for (int j = tx; j < sh_w; j += block_size_x) {
            const int y = y0 + i;
            const int x = x0 + j;
            sh[i * sh_pitch + j] = (y < in_h && x < in_w) ? LOAD(&in[y * in_w + x]) : 0.0f;
        }
    }
    KW_BARRIER();
#else
    // Outputs past the edge read the last row or column (in bounds) and are not stored.
    int row[tile_size_y];
    int col[tile_size_x];
    for (int ti = 0; ti < tile_size_y; ti++) {
        const int y = y0 + ty + ti * block_size_y;
        row[ti] = (y < height ? y : height - 1) * in_w;
    }
    for (int tj = 0; tj < tile_size_x; tj++) {
        const int x = x0 + tx + tj * block_size_x;
        col[tj] = x < width ? x : width - 1;
    }
#endif
    float sum[tile_size_y][tile_size_x];
#pragma unroll
    for (int ti = 0; ti < tile_size_y; ti++) {
#pragma unroll
        for (int tj = 0; tj < tile_size_x; tj++) {
            sum[ti][tj] = 0.0f;
        }
    }
#pragma unroll
    for (int i = 0; i < FILTER_HEIGHT; i++) {
#pragma unroll
        for (int j = 0; j < FILTER_WIDTH; j++) {
            const float f = filter[i * FILTER_WIDTH + j];
#pragma unroll
            for (int ti = 0; ti < tile_size_y; ti++) {
#pragma unroll
                for (int tj = 0; tj < tile_size_x; tj++) {
#if use_shmem
                    const float v =
                        sh[(ty + ti * block_size_y + i) * sh_pitch + tx + tj * block_size_x + j];
#else
                    const float v = LOAD(&in[row[ti] + i * in_w + col[tj] + j]);
#endif
                    sum[ti][tj] = KW_FMA(v, f, sum[ti][tj]);
                }
            }
        }
    }
#pragma unroll
    for (int ti = 0; ti < tile_size_y; ti++) {
#pragma unroll
        for (int tj = 0; tj < tile_size_x; tj++) {
            const int y = y0 + ty + ti * block_size_y;
            const int x = x0 + tx + tj * block_size_x;
            if (y < height && x < width) {
                out[y * width + x] = sum[ti][tj];
            }
        }
    }
}
