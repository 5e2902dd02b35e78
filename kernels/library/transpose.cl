// Matrix transpose, out[c][r] = in[r][c] for a rows x cols row-major matrix of floats, any
// size (edge tiles are guarded). One block moves a tile_dim x tile_dim tile: it reads rows of
// the tile with coalesced loads into shared memory (block_rows rows per pass) and writes them
// back as coalesced rows of the transposed tile.
//
// Tuning parameters (defines): tile_dim (the tile's side, = block_size_x), block_rows
// (= block_size_y; tile_dim / block_rows rows per thread), tile_pad (1: one extra column per
// shared-memory row against bank conflicts), use_shared (0: a direct transpose without
// shared memory, coalesced on reads only), stream_store (CUDA only: 1 writes the output
// with evict-first stores).
#include "dialect.h"

#ifndef tile_dim
#define tile_dim 32
#endif
#ifndef block_rows
#define block_rows 8
#endif
#ifndef tile_pad
#define tile_pad 1
#endif
#ifndef use_shared
#define use_shared 1
#endif
#ifndef stream_store
#define stream_store 0
#endif

#if stream_store
#define TRANSPOSE_STORE(p, v) kw_store_stream_f32((p), (v))
#else
#define TRANSPOSE_STORE(p, v) (*(p) = (v))
#endif

KW_KERNEL transpose(KW_GLOBAL float* KW_RESTRICT out, KW_GLOBAL const float* KW_RESTRICT in,
                    const int rows, const int cols) {
    const int tx = KW_LID(0);
    const int ty = KW_LID(1);
    // This block's tile: column tile x, row tile y. A CUDA grid has at most 65535 blocks
    // along y, so the definition folds the row tiles beyond into x (x = fold * col_tiles
    // blocks): block (x, y) takes column tile x % col_tiles and row tile
    // (x / col_tiles) * 65535 + y; a block past the last row tile finds every row out of
    // bounds and moves nothing (no early return: PoCL mishandles one before a barrier). Below
    // 4.2 million rows nothing is folded. ((cols - 1) / tile_dim + 1: no overflow near
    // INT_MAX.)
    int tile_c = KW_GROUP(0), tile_r = KW_GROUP(1);
    const int col_tiles = cols > 0 ? (cols - 1) / tile_dim + 1 : 0;
    if (col_tiles > 0 && KW_NGROUPS(0) > col_tiles) {
        const int row_tiles = (rows - 1) / tile_dim + 1;
        tile_r += (tile_c / col_tiles) * KW_NGROUPS(1);
        tile_c %= col_tiles;
        tile_r = min(tile_r, row_tiles);  // past the last: every row out of bounds
    }
    const int c0 = tile_c * tile_dim;
    const int r0 = tile_r * tile_dim;
#if use_shared
    KW_SHARED float tile[tile_dim][tile_dim + tile_pad];
    for (int j = ty; j < tile_dim; j += block_rows) {
        const int r = r0 + j;
        const int c = c0 + tx;
        if (r < rows && c < cols) {
            tile[j][tx] = in[(long)r * cols + c];
        }
    }
    KW_BARRIER();
    for (int j = ty; j < tile_dim; j += block_rows) {
        const int r = c0 + j;  // a row of the output: a column of the input
        const int c = r0 + tx;
        if (r < cols && c < rows) {
            TRANSPOSE_STORE(&out[(long)r * rows + c], tile[tx][j]);
        }
    }
#else
    for (int j = ty; j < tile_dim; j += block_rows) {
        const int r = r0 + j;
        const int c = c0 + tx;
        if (r < rows && c < cols) {
            TRANSPOSE_STORE(&out[(long)c * rows + r], in[(long)r * cols + c]);
        }
    }
#endif
}
