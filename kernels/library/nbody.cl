// One time step of the all-pairs n-body problem (the CUDA SDK's and KTT's n-body): bodies as
// float4 (x, y, z, mass) and velocities as float4 (x, y, z, unused), n of each, any n.
//   a_i = sum_j m_j r_ij / (|r_ij|^2 + softening_sq)^(3/2),  r_ij = p_j - p_i (j = i adds 0)
//   v_i' = (v_i + a_i dt) damping,  p_i' = p_i + v_i' dt  (mass and v.w kept)
// 20 floating-point operations per interaction by the usual convention (GPU Gems 3, ch. 31).
//
// Tuning parameters (defines): block_size_x (threads per block), outer_unroll (bodies per
// thread, each body's interactions sharing the loads of p_j), inner_unroll (unroll of the loop
// over j), use_shared (1: the block loads tiles of block_size_x bodies into shared memory;
// 0: every thread reads p_j from global memory, through the caches), vector_loads (1: p_j
// read as one float4; 0: as four floats).
#include "dialect.h"

#ifndef block_size_x
#define block_size_x 128
#endif
#ifndef outer_unroll
#define outer_unroll 1
#endif
#ifndef inner_unroll
#define inner_unroll 4
#endif
#ifndef use_shared
#define use_shared 1
#endif
#ifndef vector_loads
#define vector_loads 1
#endif

#if vector_loads
#define LOAD_BODY(b, p, j) b = ((KW_GLOBAL const float4*)(p))[j]
#else
#define LOAD_BODY(b, p, j)       \
    b.x = (p)[4 * (long)(j)];     \
    b.y = (p)[4 * (long)(j) + 1]; \
    b.z = (p)[4 * (long)(j) + 2]; \
    b.w = (p)[4 * (long)(j) + 3]
#endif

// Body b's pull on the bodies of this thread (20 flops each by the convention).
#define INTERACT(b)                                                        \
    for (int u = 0; u < outer_unroll; u++) {                               \
        const float rx = (b).x - px[u];                                    \
        const float ry = (b).y - py[u];                                    \
        const float rz = (b).z - pz[u];                                    \
        const float d2 = KW_FMA(rx, rx, KW_FMA(ry, ry, KW_FMA(rz, rz, softening_sq))); \
        const float inv = KW_RSQRT(d2);                                    \
        const float s = (b).w * (inv * inv * inv);                         \
        ax[u] = KW_FMA(rx, s, ax[u]);                                      \
        ay[u] = KW_FMA(ry, s, ay[u]);                                      \
        az[u] = KW_FMA(rz, s, az[u]);                                      \
    }

KW_KERNEL KW_LAUNCH_BOUNDS(block_size_x, 1) nbody(KW_GLOBAL float* KW_RESTRICT pos_out, KW_GLOBAL float* KW_RESTRICT vel_out,
                KW_GLOBAL const float* KW_RESTRICT pos, KW_GLOBAL const float* KW_RESTRICT vel,
                const int n, const float dt, const float softening_sq, const float damping) {
    const int lid = KW_LID(0);
    const int first = KW_GROUP(0) * (block_size_x * outer_unroll) + lid;
    float px[outer_unroll], py[outer_unroll], pz[outer_unroll];
    float ax[outer_unroll], ay[outer_unroll], az[outer_unroll];
    for (int u = 0; u < outer_unroll; u++) {
        const int i = first + u * block_size_x;
        const int in = i < n;
        px[u] = in ? pos[4 * (long)i] : 0.0f;
        py[u] = in ? pos[4 * (long)i + 1] : 0.0f;
        pz[u] = in ? pos[4 * (long)i + 2] : 0.0f;
        ax[u] = 0.0f;
        ay[u] = 0.0f;
        az[u] = 0.0f;
    }
#if use_shared
    KW_SHARED float4 tile[block_size_x];
    for (int base = 0; base < n; base += block_size_x) {
        const int j = base + lid;
        float4 b;
        if (j < n) {
            LOAD_BODY(b, pos, j);
        } else {  // no mass: adds nothing (softening_sq > 0 keeps it finite)
            b.x = 0.0f;
            b.y = 0.0f;
            b.z = 0.0f;
            b.w = 0.0f;
        }
        tile[lid] = b;
        KW_BARRIER();
        KW_UNROLL(inner_unroll)
        for (int k = 0; k < block_size_x; k++) {
            const float4 t = tile[k];
            INTERACT(t)
        }
        KW_BARRIER();
    }
#else
    // Unrolled by hand (a loop of unknown trip count): inner_unroll bodies at a time, then
    // the rest one by one.
    int j = 0;
    for (; j + inner_unroll <= n; j += inner_unroll) {
#pragma unroll
        for (int q = 0; q < inner_unroll; q++) {
            float4 b;
            LOAD_BODY(b, pos, j + q);
            INTERACT(b)
        }
    }
    for (; j < n; j++) {
        float4 b;
        LOAD_BODY(b, pos, j);
        INTERACT(b)
    }
#endif
    for (int u = 0; u < outer_unroll; u++) {
        const int i = first + u * block_size_x;
        if (i < n) {
            const long o = 4 * (long)i;
            const float vx = (vel[o] + ax[u] * dt) * damping;
            const float vy = (vel[o + 1] + ay[u] * dt) * damping;
            const float vz = (vel[o + 2] + az[u] * dt) * damping;
            vel_out[o] = vx;
            vel_out[o + 1] = vy;
            vel_out[o + 2] = vz;
            vel_out[o + 3] = vel[o + 3];
            pos_out[o] = px[u] + vx * dt;
            pos_out[o + 1] = py[u] + vy * dt;
            pos_out[o + 2] = pz[u] + vz * dt;
            pos_out[o + 3] = pos[o + 3];
        }
    }
}
