// Rodinia's hotspot: the temperature of a chip on an nx x ny grid (x fastest) after
// `iterations` explicit time steps of
//   t' = t + step_div_cap * (power + (t_south + t_north - 2 t) * ry_1
//                                  + (t_east + t_west - 2 t) * rx_1 + (amb_temp - t) * rz_1)
// where a neighbour outside the grid is the cell itself (Rodinia's CUDA kernel clamps its
// neighbour indices to the grid).
//
// Temporal tiling (Rodinia's pyramid): a block computes an output tile of
// (block_size_x * tile_size_x) x (block_size_y * tile_size_y) cells. It loads the tile with a
// halo of temporal_tiling_factor cells on every side into shared memory and takes up to
// temporal_tiling_factor steps there, each over a region one cell smaller on every side than
// the last, so that only the output tile is left valid after the last step. One launch takes
// min(iterations, temporal_tiling_factor) steps (iterations is an argument: the caller passes
// what is left and launches again with the roles of src and dst swapped).
//
// Tuning parameters (defines): block_size_x, block_size_y (threads per block),
// tile_size_x, tile_size_y (output cells per thread along x and y), temporal_tiling_factor
// (steps fused per launch, the halo's width), loop_unroll_factor_t (unroll of the time-step
// loop), sh_power (1: the power tile in shared memory too; 0: read from global memory at each
// step), blocks_per_sm (CUDA only: __launch_bounds__'s minimum blocks per multiprocessor; 0:
// none).
#include "dialect.h"

#ifndef block_size_x
#define block_size_x 32
#endif
#ifndef block_size_y
#define block_size_y 8
#endif
#ifndef tile_size_x
#define tile_size_x 1
#endif
#ifndef tile_size_y
#define tile_size_y 4
#endif
#ifndef temporal_tiling_factor
#define temporal_tiling_factor 2
#endif
#ifndef loop_unroll_factor_t
#define loop_unroll_factor_t 1
#endif
#ifndef sh_power
#define sh_power 0
#endif
#ifndef blocks_per_sm
#define blocks_per_sm 0
#endif

#define HALO temporal_tiling_factor
#define OUT_X (block_size_x * tile_size_x)  // the block's output tile
#define OUT_Y (block_size_y * tile_size_y)
#define EXT_X (OUT_X + 2 * HALO)  // the tile with its halo, in shared memory
#define EXT_Y (OUT_Y + 2 * HALO)
#define PASSES_X ((EXT_X + block_size_x - 1) / block_size_x)  // a thread's columns of it
#define PASSES_Y ((EXT_Y + block_size_y - 1) / block_size_y)

#if blocks_per_sm > 0
#define HOTSPOT_BOUNDS KW_LAUNCH_BOUNDS(block_size_x * block_size_y, blocks_per_sm)
#else
#define HOTSPOT_BOUNDS
#endif

KW_KERNEL HOTSPOT_BOUNDS hotspot(KW_GLOBAL float* KW_RESTRICT dst,
                                 KW_GLOBAL const float* KW_RESTRICT src,
                                 KW_GLOBAL const float* KW_RESTRICT power, const int nx,
                                 const int ny, const int iterations, const float step_div_cap,
                                 const float rx_1, const float ry_1, const float rz_1,
                                 const float amb_temp) {
    KW_SHARED float temp[2][EXT_Y][EXT_X];
#if sh_power
    KW_SHARED float pow_tile[EXT_Y][EXT_X];
#endif
    const int tx = KW_LID(0);
    const int ty = KW_LID(1);
    const int x0 = KW_GROUP(0) * OUT_X - HALO;  // the grid cell of temp[.][0][0]
    const int y0 = KW_GROUP(1) * OUT_Y - HALO;
    const int steps = iterations < 0 ? 0 : iterations < HALO ? iterations : HALO;

    // The tile and its halo; cells outside the grid are never read (their neighbours clamp).
    for (int pj = 0; pj < PASSES_Y; pj++) {
        const int j = ty + pj * block_size_y;
        const int y = y0 + j;
        for (int pi = 0; pi < PASSES_X; pi++) {
            const int i = tx + pi * block_size_x;
            const int x = x0 + i;
            if (j < EXT_Y && i < EXT_X) {
                const int inside = x >= 0 && x < nx && y >= 0 && y < ny;
                const long g = (long)y * nx + x;
                temp[0][j][i] = inside ? src[g] : 0.0f;
#if sh_power
                pow_tile[j][i] = inside ? power[g] : 0.0f;
#endif
            }
        }
    }
    KW_BARRIER();

    // A loop of HALO steps (a multiple of loop_unroll_factor_t: unrolled exactly), the
    // steps past `steps` skipped by the whole block.
    KW_UNROLL(loop_unroll_factor_t)
    for (int s = 1; s <= HALO; s++) {
        if (s <= steps) {  // the same for the whole block: its barrier is reached by all
            const int cur = (s - 1) & 1;
            // Step s computes what the later steps need: the output tile grown by steps - s.
            const int grow = steps - s;
            const int lo_x = HALO - grow;
            const int hi_x = HALO + OUT_X + grow;
            const int lo_y = HALO - grow;
            const int hi_y = HALO + OUT_Y + grow;
            for (int pj = 0; pj < PASSES_Y; pj++) {
                const int j = ty + pj * block_size_y;
                const int y = y0 + j;
                for (int pi = 0; pi < PASSES_X; pi++) {
                    const int i = tx + pi * block_size_x;
                    const int x = x0 + i;
                    if (j >= lo_y && j < hi_y && i >= lo_x && i < hi_x && x >= 0 && x < nx &&
                        y >= 0 && y < ny) {
                        const float c = temp[cur][j][i];
                        const float w = x > 0 ? temp[cur][j][i - 1] : c;
                        const float e = x < nx - 1 ? temp[cur][j][i + 1] : c;
                        const float n = y > 0 ? temp[cur][j - 1][i] : c;
                        const float so = y < ny - 1 ? temp[cur][j + 1][i] : c;
#if sh_power
                        const float p = pow_tile[j][i];
#else
                        const float p = power[(long)y * nx + x];
#endif
                        temp[cur ^ 1][j][i] = c + step_div_cap * (p + (so + n - 2.0f * c) * ry_1 +
                                                                  (e + w - 2.0f * c) * rx_1 +
                                                                  (amb_temp - c) * rz_1);
                    }
                }
            }
            KW_BARRIER();
        }
    }

    // The output tile: tile_size_x x tile_size_y cells per thread.
    const int last = steps & 1;
    for (int pj = 0; pj < tile_size_y; pj++) {
        const int j = HALO + ty + pj * block_size_y;
        const int y = y0 + j;
        for (int pi = 0; pi < tile_size_x; pi++) {
            const int i = HALO + tx + pi * block_size_x;
            const int x = x0 + i;
            if (x < nx && y < ny) {
                dst[(long)y * nx + x] = temp[last][j][i];
            }
        }
    }
}
