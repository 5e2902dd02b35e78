/* The library's tuned routines through the C API (kw_library_*), on the application's own
 * OpenCL context, queue and buffers: each routine once at a size no tile divides, its result
 * checked against values known in closed form; then wrong lengths, types and handles, each
 * an error status with a message naming the routine and the problem.
 *
 *   library_c [WISDOM_DIR]
 *
 * Prints "ok NAME" per check, "FAIL NAME: ..." for one that went wrong, and "N failure(s)";
 * exit status 0 when every check passed, 77 when there is no PoCL platform. */
#include <math.h>

#include "kernel_wisdom.h"
#include "pocl.h"

static int failures = 0;

static void expect(const char* name, int status, int want, const char* fragment) {
    const char* msg = kw_last_error();
    if (status != want || (want != KW_OK && fragment && strstr(msg, fragment) == NULL)) {
        printf("FAIL %s: status %s (wanted %s), message: %s\n", name, kw_status_name(status),
               kw_status_name(want), msg);
        failures++;
    } else {
        printf("ok %s%s%s\n", name, want == KW_OK ? "" : ": ", want == KW_OK ? "" : msg);
    }
}

/* Counts the elements of `got` that differ from `want` by more than `tol`. */
static void compare(const char* name, const float* got, const float* want, size_t n, float tol) {
    size_t i, wrong = 0;
    for (i = 0; i < n; i++) {
        float d = got[i] - want[i];
        if (d > tol || d < -tol) {
            if (wrong == 0) printf("  %s: element %lu: %g, want %g\n", name, (unsigned long)i,
                                   got[i], want[i]);
            wrong++;
        }
    }
    if (wrong) {
        printf("FAIL %s: %lu of %lu elements wrong\n", name, (unsigned long)wrong,
               (unsigned long)n);
        failures++;
    } else {
        printf("ok %s\n", name);
    }
}

static cl_mem upload(app_cl* app, const float* data, size_t n) {
    cl_mem m = app_buffer(app, n * sizeof(float));
    clEnqueueWriteBuffer(app->queue, m, CL_TRUE, 0, n * sizeof(float), data, 0, NULL, NULL);
    return m;
}

static float* download(app_cl* app, cl_mem m, size_t n) {
    float* out = malloc(n * sizeof(float));
    if (!out) exit(1);
    clEnqueueReadBuffer(app->queue, m, CL_TRUE, 0, n * sizeof(float), out, 0, NULL, NULL);
    return out;
}

static kw_arg f32(cl_mem m, size_t n) { return kw_arg_buffer(m, KW_F32, n); }

int main(int argc, char** argv) {
    enum { R = 37, C = 53, N = 100003, NX = 9, NY = 7, NZ = 5, M = 13, NN = 6, K = 11 };
    enum { W = 20, H = 9, FW = 5, FH = 3, IW = W + FW - 1, IH = H + FH - 1 };
    app_cl app;
    kw_device* dev = NULL;
    kw_library *lib = NULL, *freed = NULL;
    static float a[R * C], want_t[R * C], v[N], grid[NX * NY * NZ], want_s[NX * NY * NZ];
    static float ga[M * K], gb[K * NN], gc[M * NN], want_g[M * NN];
    static float img[IW * IH], filt[FW * FH], want_c[W * H], wide[19];
    cl_mem da, dt, dv, dg, dgo, dga, dgb, dgc, dimg, dconv;
    float *got, total = 0.0f;
    double exact = 0.0;
    int i, j, p, x, y, z, s;
    app_cl_open(&app);
    s = kw_device_attach_opencl(&dev, app.context, app.queue);
    expect("kw_device_attach_opencl", s, KW_OK, NULL);
    s = kw_library_create(&lib, dev, argc > 1 ? argv[1] : NULL);
    expect("kw_library_create", s, KW_OK, NULL);
    if (failures) return 1;

    /* transpose: a[r][c] = r * 100 + c; its transpose t[c][r] the same value. */
    for (i = 0; i < R; i++)
        for (j = 0; j < C; j++) {
            a[i * C + j] = (float)(i * 100 + j);
            want_t[j * R + i] = (float)(i * 100 + j);
        }
    da = upload(&app, a, R * C);
    dt = app_buffer(&app, R * C * sizeof(float));
    s = kw_library_transpose(lib, R, C, f32(da, R * C), kw_arg_buffer(dt, KW_F32, KW_COUNT_AUTO));
    expect("kw_library_transpose", s, KW_OK, NULL);
    got = download(&app, dt, R * C);
    compare("transpose 37x53", got, want_t, R * C, 0.0f);
    free(got);

    /* sum: small integers, exact in f32 at any order of summation. */
    for (i = 0; i < N; i++) {
        v[i] = (float)(i % 7);
        exact += i % 7;
    }
    dv = upload(&app, v, N);
    s = kw_library_sum(lib, f32(dv, N), &total);
    expect("kw_library_sum", s, KW_OK, NULL);
    if (total != (float)exact) {
        printf("FAIL sum: %g, want %g\n", total, exact);
        failures++;
    } else {
        printf("ok sum of %d elements = %g\n", N, total);
    }

    /* stencil3d on a linear field g = x + 10 y + 100 z: the six neighbours sum to 6 g, so
     * with c0 = 0.5, c1 = 0.25 an interior cell becomes 2 g; boundary cells stay g. */
    for (z = 0; z < NZ; z++)
        for (y = 0; y < NY; y++)
            for (x = 0; x < NX; x++) {
                int at = (z * NY + y) * NX + x;
                int interior = x > 0 && x < NX - 1 && y > 0 && y < NY - 1 && z > 0 && z < NZ - 1;
                grid[at] = (float)(x + 10 * y + 100 * z);
                want_s[at] = interior ? 2.0f * grid[at] : grid[at];
            }
    dg = upload(&app, grid, NX * NY * NZ);
    dgo = app_buffer(&app, NX * NY * NZ * sizeof(float));
    s = kw_library_stencil3d(lib, NX, NY, NZ, 0.5f, 0.25f, f32(dg, NX * NY * NZ),
                             f32(dgo, NX * NY * NZ));
    expect("kw_library_stencil3d", s, KW_OK, NULL);
    got = download(&app, dgo, NX * NY * NZ);
    compare("stencil3d 9x7x5", got, want_s, NX * NY * NZ, 0.0f);
    free(got);

    /* gemm, column-major: a(i, p) = i - p, b(p, j) = p + j (small integers: exact sums),
     * c = 2 a b + 0.5 c with c = 4 everywhere. */
    for (i = 0; i < M; i++)
        for (p = 0; p < K; p++) ga[p * M + i] = (float)(i - p);
    for (p = 0; p < K; p++)
        for (j = 0; j < NN; j++) gb[j * K + p] = (float)(p + j);
    for (i = 0; i < M; i++)
        for (j = 0; j < NN; j++) {
            float dot = 0.0f;
            for (p = 0; p < K; p++) dot += (float)(i - p) * (float)(p + j);
            gc[j * M + i] = 4.0f;
            want_g[j * M + i] = 2.0f * dot + 2.0f;
        }
    dga = upload(&app, ga, M * K);
    dgb = upload(&app, gb, K * NN);
    dgc = upload(&app, gc, M * NN);
    s = kw_library_gemm(lib, M, NN, K, 2.0f, f32(dga, M * K), f32(dgb, K * NN), 0.5f,
                        f32(dgc, M * NN));
    expect("kw_library_gemm", s, KW_OK, NULL);
    got = download(&app, dgc, M * NN);
    compare("gemm 13x6x11", got, want_g, M * NN, 1e-3f);
    free(got);

    /* convolution: a filter with one tap, 3 at row 1 column 2: out(x, y) = 3 in(x + 2, y + 1),
     * with in(x, y) = x + 100 y. */
    for (y = 0; y < IH; y++)
        for (x = 0; x < IW; x++) img[y * IW + x] = (float)(x + 100 * y);
    for (i = 0; i < FW * FH; i++) filt[i] = 0.0f;
    filt[1 * FW + 2] = 3.0f;
    for (y = 0; y < H; y++)
        for (x = 0; x < W; x++) want_c[y * W + x] = 3.0f * (float)(x + 2 + 100 * (y + 1));
    dimg = upload(&app, img, IW * IH);
    dconv = app_buffer(&app, W * H * sizeof(float));
    s = kw_library_convolution(lib, W, H, FW, FH, filt, f32(dimg, IW * IH), f32(dconv, W * H));
    expect("kw_library_convolution", s, KW_OK, NULL);
    got = download(&app, dconv, W * H);
    compare("convolution 20x9, filter 5x3", got, want_c, W * H, 0.0f);
    free(got);

    /* hotspot: a uniform grid stays uniform (a neighbour outside is the cell itself), so
     * every cell follows t' = t + sdc (p + (amb - t) rz) from t = 300 with p = 2. */
    {
        enum { HX = 19, HY = 7, STEPS = 5 };
        float temp[HX * HY], pw[HX * HY], want_h[HX * HY];
        double t = 300.0;
        cl_mem dtemp, dpow, dhot;
        for (i = 0; i < HX * HY; i++) {
            temp[i] = 300.0f;
            pw[i] = 2.0f;
        }
        for (i = 0; i < STEPS; i++) t = t + 0.5 * (2.0 + (80.0 - t) * 0.1);
        for (i = 0; i < HX * HY; i++) want_h[i] = (float)t;
        dtemp = upload(&app, temp, HX * HY);
        dpow = upload(&app, pw, HX * HY);
        dhot = app_buffer(&app, HX * HY * sizeof(float));
        s = kw_library_hotspot(lib, HX, HY, STEPS, 0.5f, 0.3f, 0.2f, 0.1f, 80.0f,
                               f32(dtemp, HX * HY), f32(dpow, HX * HY), f32(dhot, HX * HY));
        expect("kw_library_hotspot", s, KW_OK, NULL);
        s = kw_library_hotspot(lib, HX, HY, STEPS, 0.5f, 0.3f, 0.2f, 0.1f, 80.0f,
                               f32(dtemp, HX * HY), f32(dpow, HX * HY), f32(dpow, HX * HY));
        expect("hotspot, temp_out is power", s, KW_ERROR_INVALID,
               "temp_out and power share memory");
        got = download(&app, dhot, HX * HY);
        compare("hotspot 19x7, 5 steps, uniform", got, want_h, HX * HY, 1e-3f);
        free(got);
        s = kw_library_hotspot(lib, HX, HY + 1, STEPS, 0.5f, 0.3f, 0.2f, 0.1f, 80.0f,
                               f32(dtemp, HX * HY), f32(dpow, HX * HY), f32(dhot, HX * HY));
        expect("hotspot, a grid larger than the buffers", s, KW_ERROR_INVALID,
               "library routine `hotspot`");
    }

    /* nbody: 5 bodies, the step computed here in double. */
    {
        enum { NB = 5 };
        float pos[4 * NB], vel[4 * NB], want_p[4 * NB], want_v[4 * NB];
        const float dt = 0.01f, soft = 0.1f;
        size_t b, j, c;
        cl_mem dpos, dvel, dpo, dvo;
        for (b = 0; b < NB; b++) {
            pos[4 * b] = (float)b;
            pos[4 * b + 1] = (float)(b * b % 3);
            pos[4 * b + 2] = 0.5f * (float)b;
            pos[4 * b + 3] = 1.0f + (float)b;
            for (c = 0; c < 4; c++) vel[4 * b + c] = 0.1f * (float)c;
        }
        for (b = 0; b < NB; b++) {
            double a[3] = {0, 0, 0};
            for (j = 0; j < NB; j++) {
                double r[3], d2 = (double)soft * soft, inv;
                for (c = 0; c < 3; c++) {
                    r[c] = (double)pos[4 * j + c] - pos[4 * b + c];
                    d2 += r[c] * r[c];
                }
                inv = pos[4 * j + 3] / (d2 * sqrt(d2));
                for (c = 0; c < 3; c++) a[c] += r[c] * inv;
            }
            for (c = 0; c < 3; c++) {
                want_v[4 * b + c] = (float)(vel[4 * b + c] + a[c] * dt);
                want_p[4 * b + c] = (float)(pos[4 * b + c] + want_v[4 * b + c] * (double)dt);
            }
            want_v[4 * b + 3] = vel[4 * b + 3];
            want_p[4 * b + 3] = pos[4 * b + 3];
        }
        dpos = upload(&app, pos, 4 * NB);
        dvel = upload(&app, vel, 4 * NB);
        dpo = app_buffer(&app, 4 * NB * sizeof(float));
        dvo = app_buffer(&app, 4 * NB * sizeof(float));
        s = kw_library_nbody(lib, NB, dt, soft, 1.0f, f32(dpos, 4 * NB), f32(dvel, 4 * NB),
                             f32(dpo, 4 * NB), f32(dvo, 4 * NB));
        expect("kw_library_nbody", s, KW_OK, NULL);
        got = download(&app, dpo, 4 * NB);
        compare("nbody 5 bodies: positions", got, want_p, 4 * NB, 1e-4f);
        free(got);
        got = download(&app, dvo, 4 * NB);
        compare("nbody 5 bodies: velocities", got, want_v, 4 * NB, 1e-4f);
        free(got);
        s = kw_library_nbody(lib, NB, dt, soft, 1.0f, f32(dpos, 4 * NB), f32(dvel, 4 * NB),
                             f32(dpo, 4 * NB - 1), f32(dvo, 4 * NB));
        expect("nbody, pos_out too short", s, KW_ERROR_INVALID, "library routine `nbody`");
        s = kw_library_nbody(lib, NB, dt, soft, 1.0f, f32(dpos, 4 * NB), f32(dvel, 4 * NB),
                             f32(dpos, 4 * NB), f32(dvo, 4 * NB));
        expect("nbody, pos_out is pos", s, KW_ERROR_INVALID, "pos_out and pos share memory");
    }

    /* Wrong lengths, types and handles: an error with its message, nothing launched. */
    s = kw_library_transpose(lib, 3, 5, f32(da, 12), f32(dt, 15));
    expect("transpose, input too short", s, KW_ERROR_INVALID,
           "library routine `transpose`: input (rows x cols) holds 12 elements, the shape "
           "needs 15");
    s = kw_library_transpose(lib, R, C, f32(da, R * C), kw_arg_buffer(dt, KW_F64, R * C / 2));
    expect("transpose, output of doubles", s, KW_ERROR_ARGUMENTS,
           "library routine `transpose`: output: a buffer of f64 was given, the routine takes f32");
    s = kw_library_transpose(lib, R, C, f32(da, R * C), kw_arg_i32(5));
    expect("transpose, a scalar for a buffer", s, KW_ERROR_ARGUMENTS,
           "library routine `transpose`: output: a scalar was given");
    s = kw_library_transpose(lib, R, C, f32(NULL, R * C), f32(dt, R * C));
    expect("transpose, a null buffer", s, KW_ERROR_NULL,
           "library routine `transpose`: input: a null buffer");
    {
        /* A cl_mem of another context: the argument's fault, as at a kernel launch. */
        app_cl other;
        cl_mem foreign;
        float t = 0.0f;
        app_cl_open(&other);
        foreign = app_buffer(&other, 16 * sizeof(float));
        s = kw_library_sum(lib, f32(foreign, 16), &t);
        expect("sum, a buffer of another context", s, KW_ERROR_ARGUMENTS,
               "library routine `sum`: input: view failed: the cl_mem belongs to another "
               "OpenCL context");
        clReleaseMemObject(foreign);
        app_cl_close(&other);
    }
    s = kw_library_stencil3d(lib, NX, NY, NZ + 1, 0.5f, 0.25f, f32(dg, NX * NY * NZ),
                             f32(dgo, NX * NY * NZ));
    expect("stencil3d, a grid larger than the buffers", s, KW_ERROR_INVALID,
           "library routine `stencil3d`: input (nx x ny x nz) holds 315 elements, the shape "
           "needs 378");
    s = kw_library_gemm(lib, M, NN, K, 1.0f, f32(dga, M * K), f32(dgb, K * NN), 0.0f,
                        f32(dgc, M * NN - 1));
    expect("gemm, c too short", s, KW_ERROR_INVALID,
           "library routine `gemm`: c (m x n) holds 77 elements, the shape needs 78");
    /* gemm_f16 takes halves' bits (KW_U16) and is CUDA-only. */
    s = kw_library_gemm_f16(lib, M, NN, K, 1.0f, kw_arg_buffer(dga, KW_U16, M * K),
                            kw_arg_buffer(dgb, KW_U16, K * NN), 0.0f,
                            kw_arg_buffer(dgc, KW_U16, M * NN));
    expect("gemm_f16 on OpenCL", s, KW_ERROR_DEVICE,
           "library routine `gemm_f16` is CUDA-only; the device is an OpenCL device");
    s = kw_library_gemm_f16(lib, M, NN, K, 1.0f, f32(dga, M * K), f32(dgb, K * NN), 0.0f,
                            f32(dgc, M * NN));
    expect("gemm_f16, f32 buffers", s, KW_ERROR_ARGUMENTS,
           "library routine `gemm_f16`: a: a buffer of f32 was given, the routine takes u16 "
           "(KW_U16)");
    s = kw_library_convolution(lib, W, H, FW, FH, filt, f32(dimg, W * H), f32(dconv, W * H));
    expect("convolution, an input without the halo", s, KW_ERROR_INVALID,
           "library routine `convolution`: input");
    s = kw_library_convolution(lib, 2, 2, 19, 1, wide, f32(dimg, 20 * 2), f32(dconv, 4));
    expect("convolution, a filter too wide", s, KW_ERROR_INVALID,
           "library routine `convolution`: a 19 x 1 filter");
    s = kw_library_convolution(lib, W, H, FW, FH, NULL, f32(dimg, IW * IH), f32(dconv, W * H));
    expect("convolution, a null filter", s, KW_ERROR_NULL, "filter");
    /* A count larger than the buffer (the caller's mistake): refused, never read past. */
    s = kw_library_transpose(lib, R, C + 1, f32(da, R * (C + 1)), f32(dt, R * (C + 1)));
    expect("transpose, counts larger than the buffers", s, KW_ERROR_INVALID,
           "library routine `transpose`: input: the count says 1998 elements, the buffer "
           "holds 1961");
    /* Two sub-buffers of one buffer whose ranges meet (clCreateSubBuffer, 128-byte aligned
     * origins): one memory, refused as an output and an input; ranges apart are fine. */
    {
        cl_buffer_region first = {0, 64 * sizeof(float)}, second = {32 * sizeof(float),
                                                                   64 * sizeof(float)};
        cl_buffer_region apart = {128 * sizeof(float), 64 * sizeof(float)};
        cl_int err1, err2, err3;
        cl_mem parent = app_buffer(&app, 256 * sizeof(float));
        cl_mem s1 = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION,
                                      &first, &err1);
        cl_mem s2 = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION,
                                      &second, &err2);
        cl_mem s3 = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION,
                                      &apart, &err3);
        if (err1 == CL_SUCCESS && err2 == CL_SUCCESS && err3 == CL_SUCCESS) {
            s = kw_library_transpose(lib, 8, 8, f32(s1, 64), f32(s2, 64));
            expect("transpose between overlapping sub-buffers", s, KW_ERROR_INVALID,
                   "output and input share memory");
            s = kw_library_transpose(lib, 8, 8, f32(s1, 64), f32(parent, 64));
            expect("transpose into the parent of its input", s, KW_ERROR_INVALID,
                   "output and input share memory");
            s = kw_library_transpose(lib, 8, 8, f32(s1, 64), f32(s3, 64));
            expect("transpose between sub-buffers apart", s, KW_OK, NULL);
            clReleaseMemObject(s1);
            clReleaseMemObject(s2);
            clReleaseMemObject(s3);
        } else {
            printf("skipped: sub-buffers (%d %d %d)\n", err1, err2, err3);
        }
        clReleaseMemObject(parent);
    }
    /* An output that is one of the inputs: refused (the kernels read while they write). */
    s = kw_library_transpose(lib, R, C, f32(da, R * C), f32(da, R * C));
    expect("transpose in place", s, KW_ERROR_INVALID,
           "library routine `transpose`: output and input share memory");
    s = kw_library_stencil3d(lib, NX, NY, NZ, 0.5f, 0.25f, f32(dg, NX * NY * NZ),
                             f32(dg, NX * NY * NZ));
    expect("stencil3d in place", s, KW_ERROR_INVALID, "output and input share memory");
    s = kw_library_gemm(lib, M, NN, NN, 1.0f, f32(dgc, M * NN), f32(dgb, NN * NN), 0.0f,
                        f32(dgc, M * NN));
    expect("gemm, c is a", s, KW_ERROR_INVALID, "c and a share memory");
    s = kw_library_convolution(lib, W, H, FW, FH, filt, f32(dimg, IW * IH), f32(dimg, W * H));
    expect("convolution in place", s, KW_ERROR_INVALID, "output and input share memory");
    s = kw_library_sum(lib, f32(dv, N), NULL);
    expect("sum, a null result pointer", s, KW_ERROR_NULL, "kw_library_sum");
    s = kw_library_sum(NULL, f32(dv, N), &total);
    expect("sum, a null library", s, KW_ERROR_NULL, "a null kw_library handle");
    s = kw_library_sum((const kw_library*)dev, f32(dv, N), &total);
    expect("sum, a device handle for a library", s, KW_ERROR_HANDLE,
           "a kw_device handle was given where a kw_library is expected");
    kw_library_create(&freed, dev, NULL);
    kw_library_free(freed);
    s = kw_library_sum(freed, f32(dv, N), &total);
    expect("sum, a freed library", s, KW_ERROR_HANDLE, "stale kw_library handle");
    s = kw_library_create(&freed, NULL, NULL);
    expect("create, a null device", s, KW_ERROR_NULL, "a null kw_device handle");
    /* Nothing was launched by the failed calls: the convolution's output is unchanged. */
    got = download(&app, dconv, W * H);
    compare("outputs untouched by failed calls", got, want_c, W * H, 0.0f);
    free(got);

    expect("kw_library_free", kw_library_free(lib), KW_OK, NULL);
    expect("kw_library_free(NULL)", kw_library_free(NULL), KW_OK, NULL);
    kw_device_free(dev);
    clReleaseMemObject(da); clReleaseMemObject(dt); clReleaseMemObject(dv);
    clReleaseMemObject(dg); clReleaseMemObject(dgo); clReleaseMemObject(dga);
    clReleaseMemObject(dgb); clReleaseMemObject(dgc); clReleaseMemObject(dimg);
    clReleaseMemObject(dconv);
    app_cl_close(&app);
    printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
