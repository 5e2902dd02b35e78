// GEMM in the style of CLBlast's Xgemm: C = alpha * A * B + beta * C, with
// M x N output tiles per block held in registers and K tiles staged in shared memory. One
// source for OpenCL C and CUDA (dialect.h). PRECISION (as CLBlast's): 32 (default) for
// float matrices; 16 for IEEE half matrices (their bits as unsigned short, converted with
// dialect.h's kw_half_to_float / kw_float_to_half), products summed in float (alpha and beta
// float too) and C rounded to half once at the end.
//
// Layouts (the routine `Library::gemm` prepares them): A is M x K column-major (`a[k*M + m]`),
// B is given as its transpose, K x N with N fastest (`b[k*N + n]`), C is M x N column-major
// (`c[n*M + m]`). Nothing checks bounds: M must be a multiple of MWG, N of NWG and K of KWG
// (the definition's restrictions over the problem size say so; the routine pads).
//
// Tuning parameters (CLBlast's names and meanings):
//   MWG, NWG     the block's tile of C (M x N)          KWG  the K tile per shared-memory pass
//   MDIMC, NDIMC threads per block along M and N: each computes (MWG/MDIMC) x (NWG/NDIMC)
//   MDIMA, NDIMB the same threads re-shaped to load the A and B tiles (MDIMA along M, NDIMB along N)
//   KWI          the inner loop's unroll over K
//   VWM, VWN     vector widths of the loads of A (along M) and B (along N): 1, 2 or 4
//   STRM, STRN   0: a thread's elements are consecutive; 1: strided by the thread count
//   SA, SB       1: stage the A (B) tile in shared memory; 0: read it from global memory
//   KSPLIT       split-K (not CLBlast's): the K range is split over up to KSPLIT blocks per
//                tile of C (grid z; the launch may give fewer, `KW_NGROUPS(2)`); 1: none
//
// Split-K (grid z = S > 1): block (x, y, s) multiplies the s-th of S near-equal ranges of K
// tiles and writes its partial tile, unscaled, to `work` (S x N x M, split-major); then the
// block that finds itself last of the S (an atomic count per tile of C, `counts`) adds the S
// partials in the order s = 0, 1, ..., S-1 (whichever block came last: the result does not
// depend on scheduling), writes C = alpha * sum + beta * C, and puts the partials and the
// count back to zero. So `work` and `counts` are zero before and after every launch: the
// caller gives zeroed ones once and may reuse them. With S = 1 neither is touched.
#include "dialect.h"

#ifndef MWG
#define MWG 64
#endif
#ifndef NWG
#define NWG 64
#endif
#ifndef KWG
#define KWG 16
#endif
#ifndef MDIMC
#define MDIMC 16
#endif
#ifndef NDIMC
#define NDIMC 16
#endif
#ifndef MDIMA
#define MDIMA 16
#endif
#ifndef NDIMB
#define NDIMB 16
#endif
#ifndef KWI
#define KWI 2
#endif
#ifndef VWM
#define VWM 1
#endif
#ifndef VWN
#define VWN 1
#endif
#ifndef STRM
#define STRM 0
#endif
#ifndef STRN
#define STRN 0
#endif
#ifndef SA
#define SA 1
#endif
#ifndef SB
#define SB 1
#endif
#ifndef KSPLIT
#define KSPLIT 1
#endif
#ifndef PRECISION
#define PRECISION 32
#endif

#define MWI (MWG / MDIMC)            // a thread's elements of C along M
#define NWI (NWG / NDIMC)            // ... along N
#define KDIMA ((MDIMC * NDIMC) / MDIMA)
#define KDIMB ((MDIMC * NDIMC) / NDIMB)
#define MWA (MWG / MDIMA)            // a thread's elements of the A tile along M
#define KWA (KWG / KDIMA)            // ... along K
#define NWB (NWG / NDIMB)
#define KWB (KWG / KDIMB)

// real: an element of A, B and C; realM, realN: VWM (VWN) of them loaded at once; STORE_M/N
// put a loaded vector into floats.
#if PRECISION == 16
typedef unsigned short real;
#define TO_FLOAT(x) kw_half_to_float(x)
#define FROM_FLOAT(x) kw_float_to_half(x)
typedef ushort2 real2;
typedef ushort4 real4;
#else
typedef float real;
#define TO_FLOAT(x) (x)
#define FROM_FLOAT(x) (x)
typedef float2 real2;
typedef float4 real4;
#endif
#if VWM == 1
typedef real realM;
#define STORE_M(dst, i, v) dst[(i)] = TO_FLOAT(v)
#elif VWM == 2
typedef real2 realM;
#define STORE_M(dst, i, v) dst[(i)] = TO_FLOAT((v).x), dst[(i) + 1] = TO_FLOAT((v).y)
#else
typedef real4 realM;
#define STORE_M(dst, i, v)                                                                   \
    dst[(i)] = TO_FLOAT((v).x), dst[(i) + 1] = TO_FLOAT((v).y),                              \
    dst[(i) + 2] = TO_FLOAT((v).z), dst[(i) + 3] = TO_FLOAT((v).w)
#endif
#if VWN == 1
typedef real realN;
#define STORE_N(dst, i, v) dst[(i)] = TO_FLOAT(v)
#elif VWN == 2
typedef real2 realN;
#define STORE_N(dst, i, v) dst[(i)] = TO_FLOAT((v).x), dst[(i) + 1] = TO_FLOAT((v).y)
#else
typedef real4 realN;
#define STORE_N(dst, i, v)                                                                   \
    dst[(i)] = TO_FLOAT((v).x), dst[(i) + 1] = TO_FLOAT((v).y),                              \
    dst[(i) + 2] = TO_FLOAT((v).z), dst[(i) + 3] = TO_FLOAT((v).w)
#endif

// The vector index (in units of VWM) along M of a thread's vector `v` of C's tile.
#if STRM == 0
#define M_INDEX(tid, v) ((tid) * (MWI / VWM) + (v))
#define MA_INDEX(tid, v) ((tid) * (MWA / VWM) + (v))
#else
#define M_INDEX(tid, v) ((tid) + (v) * MDIMC)
#define MA_INDEX(tid, v) ((tid) + (v) * MDIMA)
#endif
#if STRN == 0
#define N_INDEX(tid, v) ((tid) * (NWI / VWN) + (v))
#define NB_INDEX(tid, v) ((tid) * (NWB / VWN) + (v))
#else
#define N_INDEX(tid, v) ((tid) + (v) * NDIMC)
#define NB_INDEX(tid, v) ((tid) + (v) * NDIMB)
#endif

// The column (n) and row (m) of C of a thread's element (nv, nl) x (mv, ml), and its index in
// the thread's accumulators.
#define C_N(nv, nl) ((gn + N_INDEX(tn, (nv))) * VWN + (nl))
#define C_M(mv, ml) ((gm + M_INDEX(tm, (mv))) * VWM + (ml))

KW_KERNEL gemm(KW_GLOBAL real* KW_RESTRICT c, const KW_GLOBAL real* KW_RESTRICT a,
               const KW_GLOBAL real* KW_RESTRICT b, const int M, const int N, const int K,
               const float alpha, const float beta, KW_GLOBAL float* work,
               KW_GLOBAL int* counts) {
    const KW_GLOBAL realM* av = (const KW_GLOBAL realM*)a;
    const KW_GLOBAL realN* bv = (const KW_GLOBAL realN*)b;
    const int tm = KW_LID(0);
    const int tn = KW_LID(1);
    const int tid = tn * MDIMC + tm;
    const int gm = KW_GROUP(0) * (MWG / VWM);  // the block's first vector along M
    const int gn = KW_GROUP(1) * (NWG / VWN);
#if SA
    KW_SHARED realM alm[KWG * (MWG / VWM)];
    const int la0 = tid % MDIMA;
    const int la1 = tid / MDIMA;
#endif
#if SB
    KW_SHARED realN blm[KWG * (NWG / VWN)];
    const int lb0 = tid % NDIMB;
    const int lb1 = tid / NDIMB;
#endif
#if KSPLIT > 1
    // This block's share of the K tiles: [k_begin, k_end), possibly empty.
    const int splits = KW_NGROUPS(2);
    const int split = KW_GROUP(2);
    const long k_tiles = K / KWG;
    const int k_begin = (int)((split * k_tiles) / splits) * KWG;
    const int k_end = (int)(((split + 1) * k_tiles) / splits) * KWG;
    KW_SHARED int last_split;
#else
    const int k_begin = 0;
    const int k_end = K;
#endif
    float acc[NWI][MWI];
    for (int ni = 0; ni < NWI; ni++) {
        for (int mi = 0; mi < MWI; mi++) {
            acc[ni][mi] = 0.0f;
        }
    }
    for (int k0 = k_begin; k0 < k_end; k0 += KWG) {
#if SA
        for (int kia = 0; kia < KWA; kia++) {
            for (int mia = 0; mia < MWA / VWM; mia++) {
                const int mg = MA_INDEX(la0, mia);
                const int kg = la1 * KWA + kia;
                alm[kg * (MWG / VWM) + mg] = av[(long)(k0 + kg) * (M / VWM) + gm + mg];
            }
        }
#endif
#if SB
        for (int kib = 0; kib < KWB; kib++) {
            for (int nib = 0; nib < NWB / VWN; nib++) {
                const int ng = NB_INDEX(lb0, nib);
                const int kg = lb1 * KWB + kib;
                blm[kg * (NWG / VWN) + ng] = bv[(long)(k0 + kg) * (N / VWN) + gn + ng];
            }
        }
#endif
#if SA || SB
        KW_BARRIER();
#endif
        for (int kw = 0; kw < KWG; kw += KWI) {
#ifdef KW_CUDA
#pragma unroll
#endif
            for (int ki = 0; ki < KWI; ki++) {
                const int k = kw + ki;
                float am[MWI];
                float bn[NWI];
                for (int v = 0; v < MWI / VWM; v++) {
                    const int mv = M_INDEX(tm, v);
#if SA
                    const realM x = alm[k * (MWG / VWM) + mv];
#else
                    const realM x = av[(long)(k0 + k) * (M / VWM) + gm + mv];
#endif
                    STORE_M(am, v * VWM, x);
                }
                for (int v = 0; v < NWI / VWN; v++) {
                    const int nv = N_INDEX(tn, v);
#if SB
                    const realN y = blm[k * (NWG / VWN) + nv];
#else
                    const realN y = bv[(long)(k0 + k) * (N / VWN) + gn + nv];
#endif
                    STORE_N(bn, v * VWN, y);
                }
                for (int ni = 0; ni < NWI; ni++) {
                    for (int mi = 0; mi < MWI; mi++) {
                        acc[ni][mi] = KW_FMA(am[mi], bn[ni], acc[ni][mi]);
                    }
                }
            }
        }
#if SA || SB
        KW_BARRIER();
#endif
    }
#if KSPLIT > 1
    const long mn = (long)M * N;
    if (splits > 1) {
        // The partial tile, then the count; the last block of the tile goes on.
        for (int nv = 0; nv < NWI / VWN; nv++) {
            for (int nl = 0; nl < VWN; nl++) {
                for (int mv = 0; mv < MWI / VWM; mv++) {
                    for (int ml = 0; ml < VWM; ml++) {
                        const long at = (long)C_N(nv, nl) * M + C_M(mv, ml);
                        work[split * mn + at] = acc[nv * VWN + nl][mv * VWM + ml];
                    }
                }
            }
        }
        KW_GLOBAL_FENCE();
        KW_BARRIER_GLOBAL();
        const int tile = KW_GROUP(1) * KW_NGROUPS(0) + KW_GROUP(0);
        if (tid == 0) {
            last_split = kw_atomic_inc_i32(&counts[tile]) == splits - 1;
        }
        KW_BARRIER();
        if (!last_split) {
            return;
        }
        KW_GLOBAL_FENCE();
        if (tid == 0) {
            counts[tile] = 0;
        }
    }
#endif
    // C = alpha * acc + beta * C, element by element (column-major, M fastest); with split-K
    // acc is the sum of the partials, in split order.
    for (int nv = 0; nv < NWI / VWN; nv++) {
        for (int nl = 0; nl < VWN; nl++) {
            const int n = C_N(nv, nl);
            const int ni = nv * VWN + nl;
            for (int mv = 0; mv < MWI / VWM; mv++) {
                for (int ml = 0; ml < VWM; ml++) {
                    const int m = C_M(mv, ml);
                    const long at = (long)n * M + m;
                    float sum = acc[ni][mv * VWM + ml];
#if KSPLIT > 1
                    if (splits > 1) {
                        volatile KW_GLOBAL float* partial = work + at;
                        sum = 0.0f;
                        for (int s = 0; s < splits; s++) {
                            sum += partial[s * mn];
                            partial[s * mn] = 0.0f;
                        }
                    }
#endif
                    const float prev = beta == 0.0f ? 0.0f : TO_FLOAT(c[at]);
#if PRECISION == 16
                    // One fused step the compiler cannot contract otherwise: the same bits
                    // in every configuration (C is compared exactly).
                    c[at] = FROM_FLOAT(KW_FMA(alpha, sum, beta * prev));
#else
                    c[at] = alpha * sum + beta * prev;
#endif
                }
            }
        }
    }
}

// Copies a rows_in x cols_in row-major matrix into the top-left corner of a rows_out x
// cols_out one, zero elsewhere; or, with the output the smaller, cuts the corner out. The
// routine's padding (and unpadding) of matrices whose sizes are not multiples of the tiles.
//
// With `transposed` 1, `in` is read as its transpose: out(row, col) = in(col, row) (in is
// rows_in x cols_in, so that corner is cols_in x rows_in). Elements are `real` (PRECISION).
KW_KERNEL copy_pad(KW_GLOBAL real* KW_RESTRICT out, const KW_GLOBAL real* KW_RESTRICT in,
                   const int rows_out, const int cols_out, const int rows_in,
                   const int cols_in, const int transposed) {
    const int col = KW_GROUP(0) * KW_LSIZE(0) + KW_LID(0);
    const int row = KW_GROUP(1) * KW_LSIZE(1) + KW_LID(1);
    if (row < rows_out && col < cols_out) {
        const int r = transposed ? col : row;
        const int s = transposed ? row : col;
        out[(long)row * cols_out + col] =
            r < rows_in && s < cols_in ? in[(long)r * cols_in + s] : (real)0;
    }
}
