// A test kernel: C (m x n) = A (m x k) B (k x n), row-major. Each work-item computes a
// WM x WN block and nothing checks bounds (like CLBlast's Xgemm, which needs its tiles to
// divide the matrix sizes): its definitions declare that with restrictions over the problem
// size (`problem_size.x % (TX * WN) == 0`). A tile that does not divide the size writes where
// it must not.
// SUM (default 0) picks how the dot product is summed: 0 in order, 1 as two interleaved
// partial sums added at the end (a re-associated sum), 2 with fma. WRONG=1 (default 0) adds
// 0.01 to one element: a wrong result that verification must catch. OOB=1 (default 0) also
// writes the last row once more, one row past the end of C (the output stays right); OOB=2
// writes past the end of A (an input).
#ifndef OOB
#define OOB 0
#endif
#ifndef SUM
#define SUM 0
#endif
#ifndef WRONG
#define WRONG 0
#endif
__kernel void gemm_nb(__global float* c, __global const float* a,
                      __global const float* b, int m, int n, int k) {
    int gx = get_global_id(0);
    int gy = get_global_id(1);
    for (int i = 0; i < WM; i++) {
        for (int j = 0; j < WN; j++) {
            int row = gy * WM + i;
            int col = gx * WN + j;
            float acc = 0.0f;
#if SUM == 1
            float acc2 = 0.0f;
            int p = 0;
            for (; p + 1 < k; p += 2) {
                acc += a[row * k + p] * b[p * n + col];
                acc2 += a[row * k + p + 1] * b[(p + 1) * n + col];
            }
            if (p < k) {
                acc += a[row * k + p] * b[p * n + col];
            }
            acc += acc2;
#else
            for (int p = 0; p < k; p++) {
#if SUM == 2
                acc = fma(a[row * k + p], b[p * n + col], acc);
#else
                acc += a[row * k + p] * b[p * n + col];
#endif
            }
#endif
            if (WRONG && row == m / 2 && col == n / 3) {
                acc += 0.01f;
            }
            c[row * n + col] = acc;
            if (OOB == 1 && row == m - 1) {
                c[m * n + col] = acc;
            }
            if (OOB == 2 && row == m - 1) {
                ((__global float*)a)[m * k + col] = 1e9f;
            }
        }
    }
}
