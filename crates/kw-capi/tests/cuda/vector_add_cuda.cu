// A CUDA runtime application (cudaMalloc, its own cudaStream_t) that launches the tunable
// kernels/vector_add.cu through kernel_wisdom.hpp, and compares the result bitwise with a
// plain <<<>>> launch of the same kernel compiled by nvcc (default configuration).
// Built and run by tools/capi-h100.sh (nvcc, a GPU); not part of the CI tests.
//
//   vector_add_cuda KERNEL_FILE N                 -> "REPORT config=... wrong=... identical=..."
//   vector_add_cuda KERNEL_FILE N --bench ROUNDS  -> per-launch host cost: plain
//                                                   cuLaunchKernel vs kernel-wisdom
#include "kernel_wisdom.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// The same kernel, compiled by nvcc with the file's default configuration.
#include "vector_add.cu"

#define CUDA_CHECK(call)                                                                  \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) {                                                          \
            std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));              \
            std::exit(1);                                                                 \
        }                                                                                 \
    } while (0)
#define CU_CHECK(call)                                                                    \
    do {                                                                                  \
        CUresult r_ = (call);                                                             \
        if (r_ != CUDA_SUCCESS) {                                                         \
            std::fprintf(stderr, "%s: CUresult %d\n", #call, static_cast<int>(r_));      \
            std::exit(1);                                                                 \
        }                                                                                 \
    } while (0)

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s KERNEL_FILE N [--bench ROUNDS]\n", argv[0]);
        return 2;
    }
    const int n = std::atoi(argv[2]);
    const int rounds = (argc >= 5 && std::strcmp(argv[3], "--bench") == 0) ? std::atoi(argv[4]) : 0;
    const size_t bytes = static_cast<size_t>(n) * sizeof(float);

    // The application's own CUDA setup.
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaFree(nullptr));  // makes the primary context current
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    float *d_a, *d_b, *d_c, *d_ref;
    CUDA_CHECK(cudaMalloc(&d_a, bytes));
    CUDA_CHECK(cudaMalloc(&d_b, bytes));
    CUDA_CHECK(cudaMalloc(&d_c, bytes));
    CUDA_CHECK(cudaMalloc(&d_ref, bytes));
    std::vector<float> ha(n), hb(n), hc(n), href(n);
    for (int i = 0; i < n; i++) {
        ha[i] = static_cast<float>(i % 97) * 0.25f;
        hb[i] = static_cast<float>(i % 13) - 6.0f;
    }
    CUDA_CHECK(cudaMemcpyAsync(d_a, ha.data(), bytes, cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaMemcpyAsync(d_b, hb.data(), bytes, cudaMemcpyHostToDevice, stream));

    try {
        // The tunable kernel, declared once.
        kw::KernelBuilder builder("vector_add", argv[1]);
        auto bx = builder.tune("block_size_x", {32, 64, 128, 256, 512, 1024}, 128);
        auto ept = builder.tune("elems_per_thread", {1, 2, 4, 8}, 1);
        builder.tune("strided", {0, 1}, 1);
        builder.tune("unroll", {0, 1}, 0);
        builder.restriction(bx <= kw::device_attr("max_threads_per_block"))
            .problem_size(kw::arg("n"))
            .block_size(bx)
            .grid_divisors(bx * ept)
            .output<float>("c")
            .input<float>("a")
            .input<float>("b")
            .scalar<int>("n");
        kw::Device device = kw::Device::attach_cuda_current();
        kw::WisdomKernel kernel(builder, device);

        // kernel-wisdom on the application's stream with its cudaMalloc pointers ...
        kernel.launch(stream, d_c, d_a, d_b, n);
        // ... and the plain launch of the same kernel.
        const int block = 128;
        vector_add<<<(n + block - 1) / block, block, 0, stream>>>(d_ref, d_a, d_b, n);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaMemcpyAsync(hc.data(), d_c, bytes, cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaMemcpyAsync(href.data(), d_ref, bytes, cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        int wrong = 0;
        for (int i = 0; i < n; i++)
            if (hc[i] != ha[i] + hb[i]) wrong++;
        const bool identical = std::memcmp(hc.data(), href.data(), bytes) == 0;
        std::printf("device: %s\n", device.name().c_str());
        std::printf("REPORT config=%s wrong=%d identical=%d\n", kernel.config(n).c_str(), wrong,
                    identical ? 1 : 0);

        if (rounds > 0) {
            // Per-launch host cost, in one run: runs of 8 launches, timed on the host, then a
            // synchronisation; variants alternate so that drift hits all alike.
            CUfunction f;
            CUDA_CHECK(cudaGetFuncBySymbol(&f, reinterpret_cast<const void*>(vector_add)));
            CUdeviceptr pc = reinterpret_cast<CUdeviceptr>(d_ref);
            CUdeviceptr pa = reinterpret_cast<CUdeviceptr>(d_a);
            CUdeviceptr pb = reinterpret_cast<CUdeviceptr>(d_b);
            int nn = n;
            void* params[] = {&pc, &pa, &pb, &nn};
            const unsigned grid = static_cast<unsigned>((n + block - 1) / block);
            const char* names[3] = {"cuLaunchKernel", "kw launch (driver-reported sizes)",
                                    "kw launch (counts given)"};
            std::vector<double> samples[3];
            for (int r = 0; r < rounds; r++) {
                for (int v = 0; v < 3; v++) {
                    auto t0 = std::chrono::steady_clock::now();
                    for (int j = 0; j < 8; j++) {
                        if (v == 0)
                            CU_CHECK(cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0,
                                                    reinterpret_cast<CUstream>(stream), params,
                                                    nullptr));
                        else if (v == 1)
                            kernel.launch(stream, d_c, d_a, d_b, n);
                        else
                            kernel.launch(stream, kw::buffer<float>(d_c, n),
                                          kw::buffer<float>(d_a, n), kw::buffer<float>(d_b, n),
                                          n);
                    }
                    auto t1 = std::chrono::steady_clock::now();
                    CUDA_CHECK(cudaStreamSynchronize(stream));
                    samples[v].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 8);
                }
            }
            const double base = median(samples[0]);
            std::printf("BENCH n=%d rounds=%d (median host time per launch, runs of 8)\n", n, rounds);
            for (int v = 0; v < 3; v++) {
                const double m = median(samples[v]);
                std::printf("BENCH %-36s %8.3f us  %+7.3f us  x%.3f\n", names[v], m, m - base,
                            m / base);
            }
        }
    } catch (const kw::error& e) {
        std::fprintf(stderr, "kernel-wisdom: %s\n", e.what());
        return 1;
    }
    cudaFree(d_a);
    cudaFree(d_b);
    cudaFree(d_c);
    cudaFree(d_ref);
    cudaStreamDestroy(stream);
    return 0;
}
