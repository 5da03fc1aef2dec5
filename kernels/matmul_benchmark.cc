// mul_mat GFLOP/s (2*M*N*K per call) for F32 and F16 a, per Highway target and thread count,
// next to OpenBLAS cblas_sgemm on the same shape measured in the same run (counter
// `vs_openblas` = ours / OpenBLAS). Shapes: Whisper tiny/base encoder products and the
// vocabulary projection, and the squares of ../shared/reference/perf_anchors.md.
//
//   bazel run -c opt //kernels:matmul_benchmark -- --benchmark_filter='F32/AVX3_DL'
//
// Threads split M (or N for the wide-N shapes) into equal ranges, as the graph executor will.
#include <cblas.h>
#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "benchmark/benchmark.h"
#include "ggml/fp16.h"
#include "hwy/targets.h"
#include "kernels/bench_pool.h"
#include "kernels/dispatch.h"
#include "kernels/matmul.h"

namespace ggml_cpu {
namespace {

struct Shape {
  const char* name;
  size_t m, n, k;  // a ne = [k, m], b ne = [k, n], c ne = [m, n]
  bool dots = false;  // MulMatF32Dots / MulMatF16Dots (the matvec mode) instead of MulMatF32 / MulMatF16
};

const Shape kShapes[] = {
    {"attn_384x384x1500", 384, 1500, 384},   // tiny encoder Q/K/V/out: W[384,384] x X[384,1500]
    {"mlp1_1536x384x1500", 1536, 1500, 384},  // fc1: W[384,1536] x X[384,1500]
    {"mlp2_384x1536x1500", 384, 1500, 1536},  // fc2: W[1536,384] x X[1536,1500]
    // The same products over 2 and 4 windows in one graph (issue 38: batched encoder, N = B x 1500).
    {"attn_384x384x3000", 384, 3000, 384},   {"attn_384x384x6000", 384, 6000, 384},
    {"mlp1_1536x384x3000", 1536, 3000, 384}, {"mlp1_1536x384x6000", 1536, 6000, 384},
    {"mlp2_384x1536x3000", 384, 3000, 1536}, {"mlp2_384x1536x6000", 384, 6000, 1536},
    // base's encoder (d 512, fc 2048), 1, 2 and 4 windows.
    {"attn_512x512x1500", 512, 1500, 512},   {"attn_512x512x3000", 512, 3000, 512},
    {"attn_512x512x6000", 512, 6000, 512},   {"mlp1_2048x512x1500", 2048, 1500, 512},
    {"mlp1_2048x512x3000", 2048, 3000, 512}, {"mlp1_2048x512x6000", 2048, 6000, 512},
    {"mlp2_512x2048x1500", 512, 1500, 2048}, {"mlp2_512x2048x3000", 512, 3000, 2048},
    {"mlp2_512x2048x6000", 512, 6000, 2048},
    {"logits_51864x384x1", 51864, 1, 384},   // token embedding^T x one decoder state
    {"logits_51864x384x5", 51864, 5, 384},   // the same for a batched beam-5 step
    // base's batched decoder step of 40 sequences (8 windows x 5 beams) in the matvec mode
    // (ggml_mul_mat_set_matvec): fc1, fc2 and the vocabulary projection on the dot path.
    {"dots_fc1_2048x512x40", 2048, 40, 512, true},
    {"dots_fc2_512x2048x40", 512, 40, 2048, true},
    {"dots_logits_51864x512x40", 51864, 40, 512, true},
    {"square_64", 64, 64, 64},       {"square_128", 128, 128, 128},
    {"square_256", 256, 256, 256},   {"square_512", 512, 512, 512},
    {"square_1024", 1024, 1024, 1024}, {"square_2048", 2048, 2048, 2048},
};

BenchPool& Pool(int nth) {
  static std::map<int, std::unique_ptr<BenchPool>> pools;
  std::unique_ptr<BenchPool>& p = pools[nth];
  if (!p) p = std::make_unique<BenchPool>(nth);
  return *p;
}

struct Data {
  std::vector<float> a, b, c;
  std::vector<ggml_fp16_t> a16;
  explicit Data(const Shape& s)
      : a(s.m * s.k), b(s.n * s.k), c(s.m * s.n), a16(s.m * s.k) {
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 104729) % 997) / 997.0f - 0.5f;
    for (size_t i = 0; i < a.size(); ++i) a16[i] = ggml_fp32_to_fp16(a[i]);
  }
};

double Flops(const Shape& s) { return 2.0 * s.m * s.n * s.k; }

// OpenBLAS sgemm GFLOP/s for (shape, threads), measured once per process (>= 0.3 s of calls).
double OpenBlasGflops(const Shape& s, int nth) {
  static std::map<std::pair<std::string, int>, double> cache;
  const auto key = std::make_pair(std::string(s.name), nth);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  Data d(s);
  openblas_set_num_threads(nth);
  auto call = [&] {
    // Row-major C[n][m] = B[n][:] . A[m][:]  ==  B (N x K) * A^T (K x M).
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(s.n),
                static_cast<int>(s.m), static_cast<int>(s.k), 1.0f, d.b.data(),
                static_cast<int>(s.k), d.a.data(), static_cast<int>(s.k), 0.0f, d.c.data(),
                static_cast<int>(s.m));
  };
  call();
  using Clock = std::chrono::steady_clock;
  double best = 1e30, total = 0;
  for (int rep = 0; rep < 1000 && (total < 0.3 || rep < 3); ++rep) {
    const auto t0 = Clock::now();
    call();
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::min(best, dt);
    total += dt;
  }
  const double gflops = Flops(s) / best * 1e-9;
  cache[key] = gflops;
  return gflops;
}

void RunOurs(const Shape& s, Data& d, bool f16, int nth, std::vector<std::vector<char>>& work) {
  // Split the larger output dimension.
  const bool split_m = s.m >= s.n;
  Pool(nth).Run([&](int ith, int n_threads) {
    const size_t total = split_m ? s.m : s.n;
    const size_t begin = total * ith / n_threads, end = total * (ith + 1) / n_threads;
    const size_t m0 = split_m ? begin : 0, m1 = split_m ? end : s.m;
    const size_t n0 = split_m ? 0 : begin, n1 = split_m ? s.n : end;
    std::vector<char>& w = work[ith];
    absl::Status st;
    if (s.dots) {
      st = f16 ? MulMatF16Dots(s.k, d.a16.data(), s.k, d.b.data(), s.k, d.c.data(), s.m, m0, m1, n0, n1)
               : MulMatF32Dots(s.k, d.a.data(), s.k, d.b.data(), s.k, d.c.data(), s.m, m0, m1, n0, n1);
    } else {
      st = f16 ? MulMatF16(s.k, d.a16.data(), s.k, d.b.data(), s.k, d.c.data(), s.m, m0, m1, n0, n1, w.data(),
                           w.size())
               : MulMatF32(s.k, d.a.data(), s.k, d.b.data(), s.k, d.c.data(), s.m, m0, m1, n0, n1, w.data(),
                           w.size());
    }
    if (!st.ok()) abort();  // benchmark binary: shapes are fixed above
  });
}

void BM_MulMat(benchmark::State& state, Shape s, bool f16, std::string target, int nth) {
  if (!ggml_cpu_set_target_limit(target.c_str())) {
    state.SkipWithError("unknown target");
    return;
  }
  const double blas = OpenBlasGflops(s, nth);
  Data d(s);
  std::vector<std::vector<char>> work(nth, std::vector<char>(MulMatWorkSize()));
  RunOurs(s, d, f16, nth, work);  // warm up
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    RunOurs(s, d, f16, nth, work);
    benchmark::DoNotOptimize(d.c.data());
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double ours = Flops(s) * 1e-9 * static_cast<double>(state.iterations()) / secs;
  state.counters["GFLOPs"] =
      benchmark::Counter(Flops(s) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["openblas_GFLOPs"] = blas;
  state.counters["vs_openblas"] = ours / blas;
  state.SetLabel(ggml_cpu_target_name());
  ggml_cpu_set_target_limit("");
}

// OpenBLAS alone, as its own row (BM_MulMat's openblas_GFLOPs is the best of a short timed
// loop before its own run, so both figures come from the same conditions).
void BM_OpenBlas(benchmark::State& state, Shape s, int nth) {
  Data d(s);
  openblas_set_num_threads(nth);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(s.n),
                static_cast<int>(s.m), static_cast<int>(s.k), 1.0f, d.b.data(),
                static_cast<int>(s.k), d.a.data(), static_cast<int>(s.k), 0.0f, d.c.data(),
                static_cast<int>(s.m));
    benchmark::DoNotOptimize(d.c.data());
  }
  state.counters["GFLOPs"] =
      benchmark::Counter(Flops(s) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void RegisterAll() {
  std::vector<std::string> targets;
  for (int64_t t : CompiledAndSupportedTargets()) targets.push_back(hwy::TargetName(t));
  for (const Shape& s : kShapes) {
    for (int nth : {1, 2}) {
      benchmark::RegisterBenchmark(
          (std::string("OpenBLAS/") + s.name + "/threads:" + std::to_string(nth)).c_str(),
          BM_OpenBlas, s, nth)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
      for (bool f16 : {false, true}) {
        for (const std::string& t : targets) {
          // The fallback targets are slow; keep them to shapes that finish quickly.
          const bool slow = t == "SCALAR" || t == "SSSE3" || t == "SSE4";
          if (slow && Flops(s) > 2.0 * 512 * 512 * 512) continue;
          const std::string name = std::string("MulMat/") + (f16 ? "F16/" : "F32/") + t + "/" +
                                   s.name + "/threads:" + std::to_string(nth);
          benchmark::RegisterBenchmark(name.c_str(), BM_MulMat, s, f16, t, nth)
              ->UseRealTime()
              ->Unit(benchmark::kMillisecond);
        }
      }
    }
  }
}

}  // namespace
}  // namespace ggml_cpu

int main(int argc, char** argv) {
  ggml_cpu::RegisterAll();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
