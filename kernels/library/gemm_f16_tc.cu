// GEMM on IEEE half matrices with tensor cores (CUDA, sm_80 and later): C = alpha * A * B +
// beta * C. The products are summed in float by `mma.sync.m16n8k16` (f16 operands, f32
// accumulators) and each element of C is rounded to half once, at the end (alpha and beta are
// float). CUDA only: inline PTX (cp.async, ldmatrix, mma.sync), no CUDA header needed.
//
// Layouts (BLAS's; the routine `Library::gemm_f16` passes its operands as they are): A is
// M x K column-major (`a[k*M + m]`), B is K x N column-major (`b[n*K + k]`), C is M x N
// column-major (`c[n*M + m]`). Elements are the halves' bits (unsigned short). Loads are
// bounds-checked per 8 elements (16 bytes: A's along M, B's along K) and stores per element,
// so the tiles need not divide the sizes, but M must be a multiple of 8 and K of 16 (the
// definition's restrictions; the routine pads to them). A and B must start at 16-byte
// aligned addresses (cp.async; the routine copies them where they do not).
//
// Arguments: gemm.cl's ten (c, a, b, M, N, K, alpha, beta, work, counts); `work` and `counts`
// are not used. There is no split-K: every configuration adds the products of each element
// of C in the same order (k ascending, 16 at a time, into one f32 accumulator), so C's bits
// agree across the space and C is compared exactly.
//
// Tuning parameters:
//   BLOCK_M, BLOCK_N  the block's tile of C (M x N)
//   BLOCK_K           the K tile of one pipeline stage (a multiple of 16)
//   WARPS_M, WARPS_N  warps per block along M and N: each warp computes a
//                     (BLOCK_M / WARPS_M) x (BLOCK_N / WARPS_N) tile of m16n8k16 products
//   STAGES            K tiles in flight (the cp.async pipeline's depth; dynamic shared memory
//                     of 2 * STAGES * (BLOCK_K * (BLOCK_M + SKEW) + BLOCK_N * (BLOCK_K + SKEW))
//                     bytes)
//   SKEW              halves of padding after each shared-memory row: 8 puts the 8 rows one
//                     ldmatrix reads in different banks; 0 none
//   BLOCKS_PER_SM     the blocks per multiprocessor the compiler keeps registers for
//                     (`__launch_bounds__`'s second argument): with 2, a thread gets at most
//                     65536 / (2 x the block's threads) registers
//   GROUP_M           block order: blocks walk C in groups of GROUP_M tile rows (along M),
//                     column by column, so a wave of blocks shares tiles of A and B in the L2;
//                     1: along N first (one tile row of C after another)
//   PREFETCH          0: each K tile begins with the barrier, the refill of a stage and its
//                     first fragments; 1: the refill is issued after the first step's
//                     products, and the next K tile's first fragments are loaded (after the
//                     barrier) while the last step's products run, so the warps reach the
//                     barrier with products in flight (1.12-1.14x at 4096^3 with 256 x 128
//                     x 64 tiles and 3 stages on an H100; slower with 2 stages, where the
//                     refill has one step less to arrive)
#include "dialect.h"

#ifndef BLOCK_M
#define BLOCK_M 128
#endif
#ifndef BLOCK_N
#define BLOCK_N 128
#endif
#ifndef BLOCK_K
#define BLOCK_K 32
#endif
#ifndef WARPS_M
#define WARPS_M 2
#endif
#ifndef WARPS_N
#define WARPS_N 2
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef SKEW
#define SKEW 8
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef BLOCKS_PER_SM
#define BLOCKS_PER_SM 1
#endif
#ifndef PREFETCH
#define PREFETCH 0
#endif

#define KW_THREADS (32 * WARPS_M * WARPS_N)
// A warp's tile of C and its m16 x n8 fragments.
#define WARP_M (BLOCK_M / WARPS_M)
#define WARP_N (BLOCK_N / WARPS_N)
#define FRAG_M (WARP_M / 16)
#define FRAG_N (WARP_N / 8)
// Shared-memory rows (halves), as in device memory: a stage holds BLOCK_K rows (k) of
// BLOCK_M of A's tile, then BLOCK_N rows (n) of BLOCK_K of B's.
#define ROW_A (BLOCK_M + SKEW)
#define ROW_B (BLOCK_K + SKEW)
#define STAGE_HALVES (BLOCK_K * ROW_A + BLOCK_N * ROW_B)

#if BLOCK_K % 16 != 0 || WARP_M % 16 != 0 || WARP_N % 16 != 0
#error "BLOCK_K, BLOCK_M / WARPS_M and BLOCK_N / WARPS_N must be multiples of 16"
#endif

// A shared-memory pointer as the 32-bit address PTX's shared state space takes.
KW_INLINE unsigned kw_shared_address(const void* p) {
    unsigned r;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
    return r;
}

// 16 bytes from device memory to shared memory, asynchronously; zeros where `valid` is 0
// (nothing read: the source size is 0).
KW_INLINE void kw_copy16(unsigned dst, const void* src, int valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src),
                 "r"(valid ? 16 : 0));
}

// Four 8x8 matrices of halves from shared memory (`_trans`: each transposed): lane l gives
// the address of row l % 8 of matrix l / 8.
KW_INLINE void kw_ldmatrix_x4(unsigned (&r)[4], unsigned address) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}
KW_INLINE void kw_ldmatrix_x4_trans(unsigned (&r)[4], unsigned address) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

// d += a (16 x 16, row) * b (16 x 8, col), f16 operands and f32 accumulators.
KW_INLINE void kw_mma_16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Copies of 16 bytes (8 halves) per K tile: A's tile is BLOCK_K rows (k) of BLOCK_M / 8
// copies, B's BLOCK_N rows (n) of BLOCK_K / 8. Both copies-per-row divide the block's threads
// (a multiple of 32), so a thread copies the same column of every COPY_ROWS_A-th (B) row:
// its addresses are computed once per block, and a K tile moves them by a constant.
#define COPIES_A (BLOCK_K * (BLOCK_M / 8))
#define COPIES_B (BLOCK_N * (BLOCK_K / 8))
#define COPY_ROWS_A (KW_THREADS / (BLOCK_M / 8))
#define COPY_ROWS_B (KW_THREADS / (BLOCK_K / 8))
#define ITERS_A ((COPIES_A + KW_THREADS - 1) / KW_THREADS)
#define ITERS_B ((COPIES_B + KW_THREADS - 1) / KW_THREADS)
#if KW_THREADS % (BLOCK_M / 8) != 0 || KW_THREADS % (BLOCK_K / 8) != 0
#error "the copies per row (BLOCK_M / 8, BLOCK_K / 8) must divide the block's threads"
#endif

// The K tile starting at k0 into the stage at shared byte address `stage`; zeros outside the
// matrices. `a_src` / `b_src`: this thread's first copy's source at k0 = 0 (A: row a_row,
// in range along M when `a_in`; B: row n, column b_col); `a_dst` / `b_dst`: its byte offsets
// in a stage.
KW_INLINE void kw_load_tile(unsigned stage, const unsigned short* a, const unsigned short* b,
                            const unsigned short* a_src, const unsigned short* b_src,
                            unsigned a_dst, unsigned b_dst, int a_row, bool a_in, int n,
                            int b_col, int M, int N, int K, int k0, int tid) {
    KW_UNROLL(ITERS_A)
    for (int r = 0; r < ITERS_A; r++) {
        if (COPIES_A % KW_THREADS == 0 || tid + r * KW_THREADS < COPIES_A) {
            const int valid = a_in && k0 + a_row + r * COPY_ROWS_A < K;
            kw_copy16(stage + a_dst + r * (COPY_ROWS_A * ROW_A * 2),
                      valid ? a_src + (size_t)(k0 + r * COPY_ROWS_A) * M : a, valid);
        }
    }
    KW_UNROLL(ITERS_B)
    for (int r = 0; r < ITERS_B; r++) {
        if (COPIES_B % KW_THREADS == 0 || tid + r * KW_THREADS < COPIES_B) {
            const int valid = n + r * COPY_ROWS_B < N && k0 + b_col < K;
            kw_copy16(stage + b_dst + r * (COPY_ROWS_B * ROW_B * 2),
                      valid ? b_src + (size_t)r * COPY_ROWS_B * K + k0 : b, valid);
        }
    }
}

// A warp's fragments of 16 k (from kk) of a stage: FRAG_M of A (m16 x k16 each), FRAG_N of
// B (k16 x n8, two per ldmatrix). `sa` / `sb`: this lane's ldmatrix address of the first
// fragment at k 0; the others are constant offsets from it.
KW_INLINE void kw_load_fragments(unsigned (&fa)[FRAG_M][4], unsigned (&fb)[FRAG_N / 2][4],
                                 unsigned sa, unsigned sb, int kk) {
    KW_UNROLL(FRAG_M)
    for (int i = 0; i < FRAG_M; i++) {
        kw_ldmatrix_x4_trans(fa[i], sa + (kk * ROW_A + i * 16) * 2);
    }
    KW_UNROLL(FRAG_N / 2)
    for (int j = 0; j < FRAG_N / 2; j++) {
        kw_ldmatrix_x4(fb[j], sb + (j * 16 * ROW_B + kk) * 2);
    }
}

// The products of one step of 16 k: every m16n8k16 of the warp's tile.
KW_INLINE void kw_mma_step(float (&acc)[FRAG_M][FRAG_N][4], const unsigned (&fa)[FRAG_M][4],
                           const unsigned (&fb)[FRAG_N / 2][4]) {
    KW_UNROLL(FRAG_M)
    for (int i = 0; i < FRAG_M; i++) {
        KW_UNROLL(FRAG_N)
        for (int j = 0; j < FRAG_N; j++) {
            kw_mma_16816(acc[i][j], fa[i], fb[j / 2][(j & 1) * 2], fb[j / 2][(j & 1) * 2 + 1]);
        }
    }
}

KW_KERNEL KW_LAUNCH_BOUNDS(KW_THREADS, BLOCKS_PER_SM)
gemm_f16_tc(unsigned short* c, const unsigned short* KW_RESTRICT a,
            const unsigned short* KW_RESTRICT b, const int M, const int N, const int K,
            const float alpha, const float beta, float* work, int* counts) {
    extern __shared__ __align__(16) unsigned short kw_smem[];
    (void)work;
    (void)counts;
    // This block's tile of C, in GROUP_M order.
    const int tiles_m = gridDim.x, tiles_n = gridDim.y;
    const int id = blockIdx.y * tiles_m + blockIdx.x;
    const int per_group = GROUP_M * tiles_n;
    const int first_m = (id / per_group) * GROUP_M;
    const int group_rows = min(tiles_m - first_m, GROUP_M);
    const int tile_m = first_m + (id % per_group) % group_rows;
    const int tile_n = (id % per_group) / group_rows;
    const int m0 = tile_m * BLOCK_M, n0 = tile_n * BLOCK_N;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int warp_m = (warp % WARPS_M) * WARP_M, warp_n = (warp / WARPS_M) * WARP_N;
    // Shared memory by byte address from here on (PTX's 32-bit shared addresses).
    const unsigned smem = kw_shared_address(kw_smem);

    // This thread's first copy of a K tile: A's row (k) and column (m), B's row (n) and
    // column (k); their sources at k0 = 0 and places in a stage (bytes).
    const int a_row = tid / (BLOCK_M / 8), a_col = (tid % (BLOCK_M / 8)) * 8;
    const int b_row = tid / (BLOCK_K / 8), b_col = (tid % (BLOCK_K / 8)) * 8;
    const bool a_in = m0 + a_col < M;
    const unsigned short* a_src = a + (size_t)a_row * M + m0 + a_col;
    const unsigned short* b_src = b + (size_t)(n0 + b_row) * K + b_col;
    const unsigned a_dst = (unsigned)(a_row * ROW_A + a_col) * 2;
    const unsigned b_dst = (unsigned)(BLOCK_K * ROW_A + b_row * ROW_B + b_col) * 2;

    float acc[FRAG_M][FRAG_N][4];
    KW_UNROLL(FRAG_M)
    for (int i = 0; i < FRAG_M; i++) {
        KW_UNROLL(FRAG_N)
        for (int j = 0; j < FRAG_N; j++) {
            acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.0f;
        }
    }

    const int tiles_k = (K + BLOCK_K - 1) / BLOCK_K;
    KW_UNROLL(STAGES)
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < tiles_k) {
            kw_load_tile(smem + s * (STAGE_HALVES * 2), a, b, a_src, b_src, a_dst, b_dst, a_row,
                         a_in, n0 + b_row, b_col, M, N, K, s * BLOCK_K, tid);
        }
        asm volatile("cp.async.commit_group;");
    }
    // ldmatrix's row (lane % 8) and which of the four 8x8 matrices (lane / 8) this lane
    // addresses. A (rows k, transposed): matrices (m 0-7, k 0-7), (m 8-15, k 0-7),
    // (m 0-7, k 8-15), (m 8-15, k 8-15): the fragment's four registers. B (rows n):
    // (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15): two n8 fragments.
    // As byte offsets in a stage, of this warp's first fragments.
    const int l_row = (lane & 7) + ((lane >> 4) & 1) * 8, l_col = ((lane >> 3) & 1) * 8;
    const unsigned frag_a = (unsigned)(l_row * ROW_A + warp_m + l_col) * 2;
    const unsigned frag_b = (unsigned)(BLOCK_K * ROW_A + (warp_n + l_row) * ROW_B + l_col) * 2;

    // The stages read and written next, in turn. The fragments of the next 16 k are loaded
    // before the products of these are issued (two sets of registers), so the loads' latency
    // hides behind the MMAs.
    int read = 0, write = STAGES - 1;
    unsigned stage = smem, fa[2][FRAG_M][4], fb[2][FRAG_N / 2][4];
#if PREFETCH
    asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 2));
    __syncthreads();
    kw_load_fragments(fa[0], fb[0], stage + frag_a, stage + frag_b, 0);
#endif
    for (int kt = 0; kt < tiles_k; kt++) {
        const int next = kt + STAGES - 1;
#if !PREFETCH
        asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 2));
        __syncthreads();
        // Every warp is done with the stage read in the previous iteration: refill it.
        if (next < tiles_k) {
            kw_load_tile(smem + write * (STAGE_HALVES * 2), a, b, a_src, b_src, a_dst, b_dst,
                         a_row, a_in, n0 + b_row, b_col, M, N, K, next * BLOCK_K, tid);
        }
        asm volatile("cp.async.commit_group;");
        write = write == STAGES - 1 ? 0 : write + 1;
        stage = smem + read * (STAGE_HALVES * 2);
        read = read == STAGES - 1 ? 0 : read + 1;
        kw_load_fragments(fa[0], fb[0], stage + frag_a, stage + frag_b, 0);
#endif
        KW_UNROLL(BLOCK_K / 16)
        for (int step = 0; step < BLOCK_K / 16; step++) {
            if (step + 1 < BLOCK_K / 16) {
                kw_load_fragments(fa[(step + 1) & 1], fb[(step + 1) & 1], stage + frag_a,
                                  stage + frag_b, (step + 1) * 16);
            }
            // Steps past K (zeros) are skipped: every configuration adds the same terms.
            if (kt * BLOCK_K + step * 16 < K) {
                kw_mma_step(acc, fa[step & 1], fb[step & 1]);
            }
#if PREFETCH
            if (step == 0) {
                // Every warp passed the barrier after its last read of the stage refilled.
                if (next < tiles_k) {
                    kw_load_tile(smem + write * (STAGE_HALVES * 2), a, b, a_src, b_src, a_dst,
                                 b_dst, a_row, a_in, n0 + b_row, b_col, M, N, K,
                                 next * BLOCK_K, tid);
                }
                asm volatile("cp.async.commit_group;");
                write = write == STAGES - 1 ? 0 : write + 1;
            }
            if (step + 1 == BLOCK_K / 16) {
                // The next K tile's first fragments, while this step's products run.
                asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 2));
                __syncthreads();
                read = read == STAGES - 1 ? 0 : read + 1;
                stage = smem + read * (STAGE_HALVES * 2);
                if (kt + 1 < tiles_k) {
                    kw_load_fragments(fa[0], fb[0], stage + frag_a, stage + frag_b, 0);
                }
            }
#endif
        }
    }
    asm volatile("cp.async.wait_group 0;");

    // Accumulator d[r] of fragment (i, j) is C's element (row g + 8 (r / 2), column
    // 2 t + r % 2) of that 16 x 8 fragment, g = lane / 4, t = lane % 4.
    KW_UNROLL(FRAG_M)
    for (int i = 0; i < FRAG_M; i++) {
        KW_UNROLL(FRAG_N)
        for (int j = 0; j < FRAG_N; j++) {
            KW_UNROLL(4)
            for (int r = 0; r < 4; r++) {
                const int m = m0 + warp_m + i * 16 + (lane >> 2) + (r >> 1) * 8;
                const int n = n0 + warp_n + j * 8 + (lane & 3) * 2 + (r & 1);
                if (m < M && n < N) {
                    const size_t at = (size_t)n * M + m;
                    const float prev = beta == 0.0f ? 0.0f : kw_half_to_float(c[at]);
                    c[at] = kw_float_to_half(KW_FMA(alpha, acc[i][j][r], beta * prev));
                }
            }
        }
    }
}
