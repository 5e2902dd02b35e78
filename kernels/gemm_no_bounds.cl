// A test kernel: C (m x n) = A (m x k) B (k x n), row-major. Each work-item computes a
// WM x WN block and nothing checks bounds (like CLBlast's Xgemm, which needs its tiles to
// divide the matrix sizes): its definitions declare that with restrictions over the problem
// size (`problem_size.x % (TX * WN) == 0`). A tile that does not divide the size writes where
// it must not.
__kernel void gemm_nb(__global float* c, __global const float* a,
                      __global const float* b, int m, int n, int k) {
    int gx = get_global_id(0);
    int gy = get_global_id(1);
    for (int i = 0; i < WM; i++) {
        for (int j = 0; j < WN; j++) {
            int row = gy * WM + i;
            int col = gx * WN + j;
            float acc = 0.0f;
            for (int p = 0; p < k; p++) {
                acc += a[row * k + p] * b[p * n + col];
            }
            c[row * n + col] = acc;
        }
    }
}
