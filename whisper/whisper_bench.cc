#include "whisper/whisper_bench.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "cpu/graph_compute.h"
#include "cpu/threadpool.h"
#include "ggml/ggml.h"
#include "ggml/graph.h"
#include "ggml/ops.h"

namespace whisper {
namespace {

double Seconds(std::chrono::steady_clock::time_point t0, std::chrono::steady_clock::time_point t1) {
  return std::chrono::duration<double>(t1 - t0).count();
}

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using Bytes = std::unique_ptr<char, FreeDeleter>;

struct CopyPair {
  Bytes src, dst;
};

// Two arrays of `bytes`, src[i] = i (as whisper.cpp), dst copied once. False if malloc fails.
bool MakePair(size_t bytes, CopyPair* p) {
  p->src.reset(static_cast<char*>(std::malloc(bytes)));
  p->dst.reset(static_cast<char*>(std::malloc(bytes)));
  if (p->src == nullptr || p->dst == nullptr) return false;
  char* src = p->src.get();
  for (size_t i = 0; i < bytes; ++i) src[i] = static_cast<char>(i);
  std::memcpy(p->dst.get(), src, bytes);
  return true;
}

// Perturbs one byte of the source between copies (whisper.cpp: src[rand() % size] = rand() %
// 256) from a per-call counter, so repeated copies cannot be merged.
void Perturb(char* src, size_t bytes, size_t* counter) {
  ++*counter;
  src[(*counter * 2654435761u) % bytes] = static_cast<char>(*counter);
}

double SumBytes(const char* p, size_t bytes) {
  double sum = 0.0;
  for (size_t i = 0; i < bytes; ++i) sum += p[i];
  return sum;
}

// Copies on one thread n_iter times; returns the seconds spent in memcpy.
double TimeSerialCopies(CopyPair& p, size_t bytes, int n_iter, size_t* counter) {
  double t = 0.0;
  for (int i = 0; i < n_iter; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    std::memcpy(p.dst.get(), p.src.get(), bytes);
    t += Seconds(t0, std::chrono::steady_clock::now());
    Perturb(p.src.get(), bytes, counter);
  }
  return t;
}

}  // namespace

bool BenchMemcpy(int n_threads, size_t bytes, int n_iter, std::string* out) {
  out->clear();
  if (n_threads < 1 || n_threads > GGML_THREADPOOL_MAX_THREADS) {
    *out = absl::StrFormat("whisper_bench_memcpy: n_threads = %d, expected 1 .. %d\n", n_threads,
                           GGML_THREADPOOL_MAX_THREADS);
    return false;
  }
  if (bytes < 1 || n_iter < 1) {
    *out = absl::StrFormat("whisper_bench_memcpy: bytes = %zu, n_iter = %d, expected both >= 1\n", bytes, n_iter);
    return false;
  }
  const double total = static_cast<double>(n_iter) * static_cast<double>(bytes);
  double sum = 0.0;
  size_t counter = 0;
  const char* stage_names[2] = {"heat-up", " 1 thread"};
  for (const char* stage : stage_names) {
    CopyPair p;
    if (!MakePair(bytes, &p)) {
      *out = absl::StrFormat("whisper_bench_memcpy: cannot allocate two arrays of %zu bytes\n", bytes);
      return false;
    }
    const double t = TimeSerialCopies(p, bytes, n_iter, &counter);
    absl::StrAppendFormat(out, "memcpy: %7.2f GB/s (%s)\n", total / (t * 1e9), stage);
    sum += SumBytes(p.dst.get(), bytes);
  }
  for (int k = 1; k <= n_threads; ++k) {
    CopyPair p;
    if (!MakePair(bytes, &p)) {
      *out = absl::StrFormat("whisper_bench_memcpy: cannot allocate two arrays of %zu bytes\n", bytes);
      return false;
    }
    char* src = p.src.get();
    char* dst = p.dst.get();
    // Thread th copies bytes [th * bytes / k, (th + 1) * bytes / k), n_iter times.
    auto slice = [&](int th) {
      const size_t i0 = static_cast<size_t>(th) * bytes / k;
      const size_t i1 = static_cast<size_t>(th + 1) * bytes / k;
      if (i1 == i0) return;
      size_t local = static_cast<size_t>(th) << 32;
      for (int i = 0; i < n_iter; ++i) {
        std::memcpy(dst + i0, src + i0, i1 - i0);
        Perturb(src + i0, i1 - i0, &local);
      }
    };
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    threads.reserve(k - 1);
    for (int th = 0; th < k - 1; ++th) threads.emplace_back(slice, th);
    slice(k - 1);
    for (std::thread& t : threads) t.join();
    const double t = Seconds(t0, std::chrono::steady_clock::now());
    absl::StrAppendFormat(out, "memcpy: %7.2f GB/s (%2d thread)\n", total / (t * 1e9), k);
    sum += SumBytes(dst, bytes);
  }
  absl::StrAppendFormat(out, "sum:    %f\n", sum);
  return true;
}

std::vector<size_t> BenchMulMatSizes() { return {64, 128, 256, 512, 1024, 2048, 4096}; }

namespace {

// What every timed product of BenchMulMat shares: its arena, executor and work buffer.
struct MulMatBench {
  size_t arena = 0;
  char* arena_mem = nullptr;
  int n_threads = 1;
  ggml_threadpool* pool = nullptr;
  int max_runs = 0;
  std::vector<uint8_t>* work = nullptr;
};

// BenchMulMat's argument checks; *n_max = the largest size. False with the message in *out.
bool CheckMulMatArgs(int n_threads, const std::vector<size_t>& sizes, int max_runs, size_t* n_max,
                     std::string* out) {
  if (n_threads < 1 || n_threads > GGML_THREADPOOL_MAX_THREADS) {
    *out = absl::StrFormat("whisper_bench_ggml_mul_mat: n_threads = %d, expected 1 .. %d\n", n_threads,
                           GGML_THREADPOOL_MAX_THREADS);
    return false;
  }
  if (max_runs < 3) {
    *out = absl::StrFormat("whisper_bench_ggml_mul_mat: max_runs = %d, expected >= 3\n", max_runs);
    return false;
  }
  *n_max = 0;
  for (size_t n : sizes) {
    if (n == 0 || n % 32 != 0 || n > 65536) {
      *out = absl::StrFormat("whisper_bench_ggml_mul_mat: size %zu, expected a multiple of 32 in 32 .. 65536\n", n);
      return false;
    }
    *n_max = n > *n_max ? n : *n_max;
  }
  return true;
}

// Times the product of an n x n `type` matrix by an n x n F32 one (whisper.cpp's data: byte i is
// i & 0x3F): one heat-up, then up to max_runs runs, stopping after 1 s once there are 3. Sets
// *gflops and *runs; false with the message in *out when a step fails.
bool TimeMulMat(const MulMatBench& bench, size_t n, ggml_type type, double* gflops, int* runs, std::string* out) {
  ggml_init_params params = {bench.arena, bench.arena_mem, false};
  std::unique_ptr<ggml_context, void (*)(ggml_context*)> ctx(ggml_init(params), ggml_free);
  ggml_tensor* a = ctx ? ggml_new_tensor_2d(ctx.get(), type, n, n) : nullptr;
  ggml_tensor* b = a ? ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, n, n) : nullptr;
  ggml_tensor* c = b ? ggml_mul_mat(ctx.get(), a, b) : nullptr;
  ggml_cgraph* gf = c ? ggml_new_graph(ctx.get()) : nullptr;
  auto fail = [&] {
    *out = absl::StrFormat("whisper_bench_ggml_mul_mat: %zu x %zu %s: %s\n", n, n, ggml_type_name(type),
                           ggml_last_error());
    return false;
  };
  if (gf == nullptr || !ggml_build_forward_expand(gf, c)) return fail();
  for (ggml_tensor* t : {a, b}) {
    uint8_t* data = static_cast<uint8_t*>(t->data);
    const size_t nbytes = ggml_nbytes(t);
    for (size_t i = 0; i < nbytes; ++i) data[i] = static_cast<uint8_t>(i & 0x3F);
  }
  std::vector<uint8_t>& work = *bench.work;
  ggml_cplan plan = ggml_graph_plan(gf, bench.n_threads, bench.pool);
  if (work.size() < plan.work_size) work.resize(plan.work_size);
  plan.work_data = work.empty() ? nullptr : work.data();
  if (ggml_graph_compute(gf, &plan) != GGML_STATUS_SUCCESS) return fail();  // heat-up
  double t_sum = 0.0;
  for (int i = 0; i < bench.max_runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const ggml_status s = ggml_graph_compute(gf, &plan);
    t_sum += Seconds(t0, std::chrono::steady_clock::now());
    if (s != GGML_STATUS_SUCCESS) return fail();
    ++*runs;
    if (t_sum > 1.0 && *runs >= 3) break;
  }
  *gflops = 2.0 * static_cast<double>(n) * n * n * *runs / t_sum * 1e-9;
  return true;
}

}  // namespace

bool BenchMulMat(int n_threads, const std::vector<size_t>& sizes, int max_runs, std::string* out) {
  out->clear();
  size_t n_max = 0;
  if (!CheckMulMatArgs(n_threads, sizes, max_runs, &n_max, out)) return false;
  // a, b and c of the largest N in f32, plus the headers and the graph (whisper.cpp's arena).
  const size_t arena = 3 * n_max * n_max * sizeof(float) + 3 * ggml_tensor_overhead() + ggml_graph_overhead() + 1024;
  Bytes arena_mem(static_cast<char*>(std::malloc(arena)));
  if (arena_mem == nullptr) {
    *out = absl::StrFormat("whisper_bench_ggml_mul_mat: cannot allocate the %zu-byte arena\n", arena);
    return false;
  }
  std::unique_ptr<ggml_threadpool, void (*)(ggml_threadpool*)> pool(
      n_threads > 1 ? ggml_threadpool_new(n_threads) : nullptr, ggml_threadpool_free);
  if (n_threads > 1 && pool == nullptr) {
    *out = absl::StrFormat("whisper_bench_ggml_mul_mat: %s\n", ggml_last_error());
    return false;
  }
  static constexpr ggml_type kTypes[7] = {GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1,
                                          GGML_TYPE_Q8_0, GGML_TYPE_F16,  GGML_TYPE_F32};
  std::vector<uint8_t> work;
  const MulMatBench bench{arena, arena_mem.get(), n_threads, pool.get(), max_runs, &work};
  for (const size_t n : sizes) {
    double gflops[7] = {};
    int runs[7] = {};
    for (int k = 0; k < 7; ++k) {
      if (!TimeMulMat(bench, n, kTypes[k], &gflops[k], &runs[k], out)) return false;
    }
    absl::StrAppendFormat(out, "%4zu x %4zu: Q4_0 %7.1f GFLOPS (%3d runs) | Q4_1 %7.1f GFLOPS (%3d runs)\n", n, n,
                          gflops[0], runs[0], gflops[1], runs[1]);
    absl::StrAppendFormat(out,
                          "%4zu x %4zu: Q5_0 %7.1f GFLOPS (%3d runs) | Q5_1 %7.1f GFLOPS (%3d runs) | Q8_0 %7.1f "
                          "GFLOPS (%3d runs)\n",
                          n, n, gflops[2], runs[2], gflops[3], runs[3], gflops[4], runs[4]);
    absl::StrAppendFormat(out, "%4zu x %4zu: F16  %7.1f GFLOPS (%3d runs) | F32  %7.1f GFLOPS (%3d runs)\n", n, n,
                          gflops[5], runs[5], gflops[6], runs[6]);
  }
  return true;
}

}  // namespace whisper
