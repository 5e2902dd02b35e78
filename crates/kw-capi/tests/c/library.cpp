// The library's tuned routines through kernel_wisdom.hpp (kw::Library) on the application's
// own memory: each routine once, its result checked against values known in closed form;
// wrong lengths throw kw::error with the status and a message naming the routine.
//
//   library_cpp
//
// Built two ways: by the CMake tests on PoCL (the application's OpenCL context, queue and
// cl_mem buffers; crates/kw-capi/tests/c_programs.rs), and with -DKW_TEST_CUDA by
// `tools/gpu.sh capi` with nvcc (cudaMalloc memory, the CUDA runtime's primary context).
// Prints "ok NAME" per check, "FAIL NAME: ..." for one that went wrong, and "N failure(s)";
// exit status 0 when every check passed, 77 when there is no PoCL platform.
#include "kernel_wisdom.hpp"

#ifdef KW_TEST_CUDA
#include <cuda_runtime.h>
#else
extern "C" {
#include "pocl.h"
}
#endif

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

namespace {

int failures = 0;

void check(const std::string& name, bool ok, const std::string& detail = "") {
    if (ok) {
        std::cout << "ok " << name << "\n";
    } else {
        std::cout << "FAIL " << name << ": " << detail << "\n";
        failures++;
    }
}

// `body` must throw kw::error with `status` and a message holding `fragment`.
void expect_error(const std::string& name, int status, const std::string& fragment,
                  const std::function<void()>& body) {
    try {
        body();
        check(name, false, "no error");
    } catch (const kw::error& e) {
        const std::string what = e.what();
        check(name, e.status() == status && what.find(fragment) != std::string::npos,
              std::string(kw_status_name(e.status())) + ": " + what);
        if (e.status() == status) std::cout << "  " << what << "\n";
    }
}

#ifdef KW_TEST_CUDA
// The application's CUDA memory, in the CUDA runtime's context.
struct App {
    using Mem = float*;
    kw::Device device = open();
    static kw::Device open() {
        if (cudaFree(nullptr) != cudaSuccess) {  // creates the runtime's primary context
            std::cerr << "no CUDA device\n";
            std::exit(77);
        }
        return kw::Device::attach_cuda_primary(0);
    }
    Mem alloc(size_t n) {
        void* p = nullptr;
        if (cudaMalloc(&p, n * sizeof(float)) != cudaSuccess) std::exit(1);
        return static_cast<Mem>(p);
    }
    Mem upload(const std::vector<float>& v) {
        Mem m = alloc(v.size());
        cudaMemcpy(m, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice);
        cudaDeviceSynchronize();  // before the library's stream reads it
        return m;
    }
    // The library's work is on the device's own stream: waited for before the copy.
    std::vector<float> download(Mem m, size_t n) {
        device.synchronize();
        std::vector<float> v(n);
        cudaMemcpy(v.data(), m, n * sizeof(float), cudaMemcpyDeviceToHost);
        return v;
    }
    void release(Mem m) { cudaFree(m); }
};
#else
// The application's OpenCL context, queue and buffers on PoCL.
struct App {
    using Mem = cl_mem;
    app_cl cl = open();
    kw::Device device = kw::Device::attach_opencl(cl.context, cl.queue);
    static app_cl open() {
        app_cl a;
        app_cl_open(&a);
        return a;
    }
    ~App() { app_cl_close(&cl); }
    Mem alloc(size_t n) { return app_buffer(&cl, n * sizeof(float)); }
    Mem upload(const std::vector<float>& v) {
        Mem m = alloc(v.size());
        clEnqueueWriteBuffer(cl.queue, m, CL_TRUE, 0, v.size() * sizeof(float), v.data(), 0,
                             nullptr, nullptr);
        return m;
    }
    // The library's work is on the application's queue: the blocking read waits for it.
    std::vector<float> download(Mem m, size_t n) {
        std::vector<float> v(n);
        clEnqueueReadBuffer(cl.queue, m, CL_TRUE, 0, n * sizeof(float), v.data(), 0, nullptr,
                            nullptr);
        return v;
    }
    void release(Mem m) { clReleaseMemObject(m); }
};
#endif

size_t wrong(const std::vector<float>& got, const std::vector<float>& want, float tol) {
    size_t n = 0;
    for (size_t i = 0; i < got.size(); i++) n += std::fabs(got[i] - want[i]) > tol;
    return n + (got.size() != want.size());
}

}  // namespace

int main() {
    App app;
    try {
        kw::Library lib(app.device);
        auto buf = [](App::Mem m, size_t n) { return kw::buffer<float>(m, n); };

        // transpose 29 x 41: a[r][c] = r * 100 + c.
        const size_t rows = 29, cols = 41;
        std::vector<float> a(rows * cols), want_t(rows * cols);
        for (size_t r = 0; r < rows; r++)
            for (size_t c = 0; c < cols; c++)
                a[r * cols + c] = want_t[c * rows + r] = static_cast<float>(r * 100 + c);
        App::Mem da = app.upload(a), dt = app.alloc(a.size());
        lib.transpose(rows, cols, buf(da, a.size()), buf(dt, a.size()));
        check("transpose 29x41", wrong(app.download(dt, a.size()), want_t, 0.0f) == 0);

        // sum of 1..n: exact in f32.
        std::vector<float> v(4097);
        for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(i + 1);
        App::Mem dv = app.upload(v);
        const float total = lib.sum(buf(dv, v.size()));
        check("sum 1..4097", total == 4097.0f * 4098.0f / 2.0f, std::to_string(total));

        // stencil3d on g = x + 10 y + 100 z, c0 0.5, c1 0.25: interior 2 g, boundary g.
        const size_t nx = 6, ny = 5, nz = 7;
        std::vector<float> g(nx * ny * nz), want_s(g.size());
        for (size_t z = 0; z < nz; z++)
            for (size_t y = 0; y < ny; y++)
                for (size_t x = 0; x < nx; x++) {
                    const size_t at = (z * ny + y) * nx + x;
                    const bool inside = x > 0 && x + 1 < nx && y > 0 && y + 1 < ny && z > 0 &&
                                        z + 1 < nz;
                    g[at] = static_cast<float>(x + 10 * y + 100 * z);
                    want_s[at] = inside ? 2.0f * g[at] : g[at];
                }
        App::Mem dg = app.upload(g), dgo = app.alloc(g.size());
        lib.stencil3d(nx, ny, nz, 0.5f, 0.25f, buf(dg, g.size()), buf(dgo, g.size()));
        check("stencil3d 6x5x7", wrong(app.download(dgo, g.size()), want_s, 0.0f) == 0);

        // gemm: A = the 7 x 3 matrix of ones, B (3 x 4) with b(p, j) = j, beta 0:
        // c(i, j) = alpha * 3 j.
        const size_t m = 7, n = 4, k = 3;
        std::vector<float> ga(m * k, 1.0f), gb(k * n), want_g(m * n);
        for (size_t j = 0; j < n; j++)
            for (size_t p = 0; p < k; p++) gb[j * k + p] = static_cast<float>(j);
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < m; i++) want_g[j * m + i] = 1.5f * 3.0f * j;
        App::Mem dga = app.upload(ga), dgb = app.upload(gb);
        App::Mem dgc = app.upload(std::vector<float>(m * n, NAN));
        lib.gemm(m, n, k, 1.5f, buf(dga, ga.size()), buf(dgb, gb.size()), 0.0f,
                 buf(dgc, m * n));
        check("gemm 7x4x3", wrong(app.download(dgc, m * n), want_g, 1e-5f) == 0);
        // alpha 0 (BLAS): c = beta c, A not read (its NaNs stay out of c).
        App::Mem dnan = app.upload(std::vector<float>(m * k, NAN));
        lib.gemm(m, n, k, 0.0f, buf(dnan, m * k), buf(dgb, gb.size()), 0.5f, buf(dgc, m * n));
        std::vector<float> half_g(want_g);
        for (float& x : half_g) x *= 0.5f;
        check("gemm 7x4x3, alpha 0", wrong(app.download(dgc, m * n), half_g, 1e-5f) == 0);
        app.release(dnan);

        // convolution with a 3 x 3 box filter of ones on a field of ones: 9 everywhere.
        const size_t w = 17, h = 4;
        const size_t padded = (w + 2) * (h + 2);
        App::Mem dimg = app.upload(std::vector<float>(padded, 1.0f));
        App::Mem dconv = app.alloc(w * h);
        lib.convolution(w, h, 3, 3, std::vector<float>(9, 1.0f), buf(dimg, padded),
                        buf(dconv, w * h));
        check("convolution 17x4, 3x3 box",
              wrong(app.download(dconv, w * h), std::vector<float>(w * h, 9.0f), 0.0f) == 0);

        // Wrong lengths: kw::error with the status and the routine's message.
        expect_error("transpose, output too short", KW_ERROR_INVALID,
                     "library routine `transpose`: output (cols x rows) holds 1188 elements, "
                     "the shape needs 1189",
                     [&] {
                         lib.transpose(rows, cols, buf(da, a.size()), buf(dt, a.size() - 1));
                     });
        expect_error("convolution, filter of 8 for 3 x 3", KW_ERROR_INVALID,
                     "library routine `convolution`: filter holds 8 elements", [&] {
                         lib.convolution(w, h, 3, 3, std::vector<float>(8, 1.0f),
                                         buf(dimg, padded), buf(dconv, w * h));
                     });
        // An output that is its input (another view of the same memory): refused.
        expect_error("transpose in place", KW_ERROR_INVALID,
                     "library routine `transpose`: output and input share memory", [&] {
                         lib.transpose(rows, cols, buf(da, a.size()), buf(da, a.size()));
                     });
        expect_error("sum of doubles", KW_ERROR_ARGUMENTS,
                     "library routine `sum`: input: a buffer of f64", [&] {
                         lib.sum(kw::buffer<double>(dv, v.size() / 2));
                     });
#ifndef KW_TEST_CUDA
        // A float* is a CUDA device pointer: on OpenCL (a host pointer by mistake) refused,
        // never handed to the driver as a cl_mem.
        expect_error("sum of a host pointer on OpenCL", KW_ERROR_ARGUMENTS,
                     "a T* argument is taken as a CUDA device pointer", [&] {
                         lib.sum(v.data());
                     });
#endif
        for (App::Mem mem : {da, dt, dv, dg, dgo, dga, dgb, dgc, dimg, dconv}) app.release(mem);
    } catch (const kw::error& e) {
        std::cout << "FAIL: " << e.what() << "\n";
        failures++;
    }
    std::cout << failures << " failure(s)\n";
    return failures ? 1 : 0;
}
