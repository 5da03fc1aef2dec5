// The machine benchmarks behind whisper.h's whisper_bench_memcpy[_str] and
// whisper_bench_ggml_mul_mat[_str], with their sizes as parameters so tests can run them small.
// They follow whisper.cpp 1.8.5 (src/whisper.cpp, "Temporary interface needed for exposing ggml
// interface") line for line in what they measure and print, and differ in three ways: they run
// on this runtime's kernels (cpu/graph_compute.h, one thread pool per call), a failed
// allocation or bad thread count is an error string instead of a crash, and the memcpy
// benchmark perturbs its source deterministically instead of with rand().
#ifndef GGML_WHISPER_WHISPER_WHISPER_BENCH_H_
#define GGML_WHISPER_WHISPER_WHISPER_BENCH_H_

#include <stddef.h>

#include <string>
#include <vector>

namespace whisper {

// whisper.cpp's sizes: two 1024e6-byte arrays copied 20 times per measurement.
inline constexpr size_t kBenchMemcpyBytes = static_cast<size_t>(1024 * 1e6);
inline constexpr int kBenchMemcpyIterations = 20;

// memcpy bandwidth. Copies an array of `bytes` bytes `n_iter` times: once after a heat-up copy
// ("heat-up"), again on one thread ("( 1 thread)"), then for k = 1 .. n_threads split into k
// equal slices copied by k threads at once ("(%2d thread)"), each as whisper.cpp prints it:
//   "memcpy: %7.2f GB/s (heat-up)\n" ... "sum:    %f\n"
// where GB/s is n_iter * bytes / seconds / 1e9 and sum is the sum of the destination's bytes
// (as signed char) over the three stages, which keeps the compiler from removing the copies.
// Returns false with a one-line message in *out instead when n_threads is not in
// [1, GGML_THREADPOOL_MAX_THREADS], bytes < 1, n_iter < 1, or the arrays cannot be allocated.
bool BenchMemcpy(int n_threads, size_t bytes, int n_iter, std::string* out);

// whisper.cpp's sizes: square N x N matrices for N in 64 .. 4096, at most 128 timed runs each.
std::vector<size_t> BenchMulMatSizes();
inline constexpr int kBenchMulMatMaxRuns = 128;

// ggml_mul_mat throughput. For each N in `sizes` and each weight type Q4_0, Q4_1, Q5_0, Q5_1,
// Q8_0, F16, F32: a = [N, N] (ne0 = N) of that type, b = [N, N] F32, c = ggml_mul_mat(a, b)
// computed on n_threads threads; one untimed run, then timed runs until their total exceeds 1 s
// with at least 3 runs, or max_runs runs. GFLOPS = 2 N^3 runs / seconds / 1e9. a's and b's bytes
// are i & 0x3F (whisper.cpp's fill). Three lines per N, as whisper.cpp prints them:
//   "%4zu x %4zu: Q4_0 %7.1f GFLOPS (%3d runs) | Q4_1 %7.1f GFLOPS (%3d runs)\n"
//   "%4zu x %4zu: Q5_0 ... | Q5_1 ... | Q8_0 ...\n"
//   "%4zu x %4zu: F16  ... | F32  ...\n"
// Returns false with a one-line message in *out instead when n_threads is not in
// [1, GGML_THREADPOOL_MAX_THREADS], an N is 0 or not a multiple of 32 (the quantized block
// size), max_runs < 3, or memory, the thread pool or a graph compute fails.
bool BenchMulMat(int n_threads, const std::vector<size_t>& sizes, int max_runs, std::string* out);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_WHISPER_BENCH_H_
