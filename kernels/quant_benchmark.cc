// Throughput of the quantization kernels per Highway target:
//   VecDot/<type>/<target>/n:<n>/rows:<r>  one activation row . r weight rows of n elements;
//                                          counter GFLOPs = 2 n r per call, Gblocks = weight
//                                          blocks per second.
//   VecDotRef/<type>/n:<n>                 the scalar reference, one row.
//   Quantize/<q8_0|q8_1>/<target>          one activation row of 4096 floats; counter
//                                          Gelems = floats per second (and GB/s read).
//   QuantizeRef/<type>                     the scalar quantizers, weights and activations.
//   MulMat/<type>/<target>/square_<N>/threads:<t>  N x N x N through the matmul.h hook
//                                          (quantize b rows, then vec_dot), GFLOP/s, for
//                                          comparison with ggml's figures in
//                                          ../shared/reference/perf_anchors.md.
//
//   bazel run -c opt //kernels:quant_benchmark -- --benchmark_filter='VecDot/q4_0'
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "ggml/types.h"
#include "hwy/targets.h"
#include "kernels/bench_pool.h"
#include "kernels/dispatch.h"
#include "kernels/matmul.h"
#include "kernels/quant_matmul.h"
#include "kernels/quant_ref.h"
#include "kernels/quant_test_util.h"
#include "kernels/quant_traits.h"
#include "kernels/quant_types.h"

namespace ggml_cpu {
namespace {

const ggml_type kWeightTypes[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1,
                                  GGML_TYPE_Q8_0};

// Weight rows and one activation row, quantized through the traits.
struct DotData {
  std::vector<uint8_t> x, y;
  size_t x_nb1;
  DotData(ggml_type type, int64_t n, int64_t rows) {
    const QuantTypeTraits* t = GetQuantTypeTraits(type);
    x_nb1 = ggml_row_size(type, n);
    x.resize(x_nb1 * rows);
    for (int64_t r = 0; r < rows; ++r) {
      const std::vector<float> row = quant_test::GgmlTestData(n, 0.37f * r);
      t->from_float(row.data(), &x[r * x_nb1], n);
    }
    y.resize(ggml_row_size(t->vec_dot_type, n));
    t->from_vec_dot(quant_test::GgmlTestData(n, 1.0f).data(), y.data(), n);
  }
};

// Benchmarks run with the dispatch capped at `target`; false (and an error) if unknown.
bool LimitTarget(benchmark::State& state, const std::string& target) {
  if (ggml_cpu_set_target_limit(target.c_str())) return true;
  state.SkipWithError("unknown target");
  return false;
}

void BM_VecDot(benchmark::State& state, ggml_type type, std::string target) {
  if (!LimitTarget(state, target)) return;
  const int64_t n = state.range(0), rows = state.range(1);
  DotData d(type, n, rows);
  std::vector<float> s(rows);
  const QuantTypeTraits* t = GetQuantTypeTraits(type);
  for (auto _ : state) {
    t->vec_dot(n, rows, d.x.data(), d.x_nb1, d.y.data(), s.data());
    benchmark::DoNotOptimize(s.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPs"] =
      benchmark::Counter(2.0 * n * rows * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["Gblocks"] =
      benchmark::Counter(1e-9 * rows * (n / kQK), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(ggml_cpu_target_name());
  ggml_cpu_set_target_limit("");
}

template <class BlockX, class BlockY>
void BM_VecDotRef(benchmark::State& state, ggml_type type,
                  float (*ref)(int64_t, const BlockX*, const BlockY*)) {
  const int64_t n = state.range(0);
  DotData d(type, n, 1);
  for (auto _ : state) {
    float s = ref(n, reinterpret_cast<const BlockX*>(d.x.data()),
                  reinterpret_cast<const BlockY*>(d.y.data()));
    benchmark::DoNotOptimize(s);
  }
  state.counters["GFLOPs"] =
      benchmark::Counter(2.0 * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Quantize(benchmark::State& state, ggml_type type, std::string target) {
  if (!LimitTarget(state, target)) return;
  constexpr int64_t k = 4096;
  const std::vector<float> x = quant_test::GgmlTestData(k, 0.0f);
  std::vector<uint8_t> y(ggml_row_size(type, k));
  const QuantTypeTraits* t = GetQuantTypeTraits(type);
  for (auto _ : state) {
    t->from_vec_dot(x.data(), y.data(), k);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.counters["Gelems"] =
      benchmark::Counter(k * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetBytesProcessed(state.iterations() * k * sizeof(float));
  state.SetLabel(ggml_cpu_target_name());
  ggml_cpu_set_target_limit("");
}

void BM_QuantizeRef(benchmark::State& state, ggml_type type) {
  constexpr int64_t k = 4096;
  const std::vector<float> x = quant_test::GgmlTestData(k, 0.0f);
  std::vector<uint8_t> y(ggml_row_size(type, k));
  const QuantTypeTraits* t = GetQuantTypeTraits(type);
  // from_float is the scalar reference for weight types; Q8 refs are called directly.
  for (auto _ : state) {
    if (type == GGML_TYPE_Q8_0) {
      quantize_row_q8_0_ref(x.data(), reinterpret_cast<block_q8_0*>(y.data()), k);
    } else if (type == GGML_TYPE_Q8_1) {
      quantize_row_q8_1_ref(x.data(), reinterpret_cast<block_q8_1*>(y.data()), k);
    } else {
      t->from_float(x.data(), y.data(), k);
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.counters["Gelems"] =
      benchmark::Counter(k * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

BenchPool& Pool(int nth) {
  static std::map<int, std::unique_ptr<BenchPool>> pools;
  std::unique_ptr<BenchPool>& p = pools[nth];
  if (!p) p = std::make_unique<BenchPool>(nth);
  return *p;
}

// c[N x N] = a[N x N] (quantized) x b[N x N]^T as the executor will run it: each thread
// quantizes its share of b rows, then (after the pool's join, the barrier) computes its share
// of a rows against every b row.
void BM_MulMat(benchmark::State& state, ggml_type type, std::string target, size_t N, int nth) {
  if (!LimitTarget(state, target)) return;
  const MulMatRowOps& ops = *QuantMulMatRowOps(type);
  DotData d(type, N, N);
  std::vector<float> b(N * N);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = static_cast<float>((i * 104729) % 997) / 997.0f - 0.5f;
  std::vector<float> c(N * N);
  const size_t wsize = MulMatConvertedWorkSize(ops, N, N);
  std::vector<uint8_t> wdata(wsize);
  auto run = [&] {
    Pool(nth).Run([&](int ith, int n_threads) {
      const size_t n0 = N * ith / n_threads, n1 = N * (ith + 1) / n_threads;
      if (!MulMatConvertB(ops, N, b.data(), N, n0, n1, wdata.data(), wsize).ok()) abort();
    });
    Pool(nth).Run([&](int ith, int n_threads) {
      const size_t m0 = N * ith / n_threads, m1 = N * (ith + 1) / n_threads;
      if (!MulMatConverted(ops, N, d.x.data(), d.x_nb1, wdata.data(), wsize, c.data(), N, m0, m1, 0,
                           N)
               .ok()) {
        abort();  // benchmark binary: shapes are fixed above
      }
    });
  };
  run();
  for (auto _ : state) {
    run();
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOPs"] =
      benchmark::Counter(2.0 * N * N * N * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(ggml_cpu_target_name());
  ggml_cpu_set_target_limit("");
}

void RegisterAll() {
  std::vector<std::string> targets;
  for (int64_t t : CompiledAndSupportedTargets()) targets.push_back(hwy::TargetName(t));
  for (ggml_type type : kWeightTypes) {
    const std::string tn = ggml_type_name(type);
    for (const std::string& t : targets) {
      benchmark::RegisterBenchmark(("VecDot/" + tn + "/" + t).c_str(), BM_VecDot, type, t)
          ->ArgNames({"n", "rows"})
          ->Args({1024, 1})
          ->Args({1024, 256})
          ->Args({4096, 64});
    }
  }
  benchmark::RegisterBenchmark("VecDotRef/q4_0", BM_VecDotRef<block_q4_0, block_q8_0>,
                               GGML_TYPE_Q4_0, vec_dot_q4_0_q8_0_ref)
      ->Arg(1024);
  benchmark::RegisterBenchmark("VecDotRef/q4_1", BM_VecDotRef<block_q4_1, block_q8_1>,
                               GGML_TYPE_Q4_1, vec_dot_q4_1_q8_1_ref)
      ->Arg(1024);
  benchmark::RegisterBenchmark("VecDotRef/q5_0", BM_VecDotRef<block_q5_0, block_q8_0>,
                               GGML_TYPE_Q5_0, vec_dot_q5_0_q8_0_ref)
      ->Arg(1024);
  benchmark::RegisterBenchmark("VecDotRef/q5_1", BM_VecDotRef<block_q5_1, block_q8_1>,
                               GGML_TYPE_Q5_1, vec_dot_q5_1_q8_1_ref)
      ->Arg(1024);
  benchmark::RegisterBenchmark("VecDotRef/q8_0", BM_VecDotRef<block_q8_0, block_q8_0>,
                               GGML_TYPE_Q8_0, vec_dot_q8_0_q8_0_ref)
      ->Arg(1024);
  for (ggml_type type : {GGML_TYPE_Q8_0, GGML_TYPE_Q8_1}) {
    for (const std::string& t : targets) {
      benchmark::RegisterBenchmark(
          (std::string("Quantize/") + ggml_type_name(type) + "/" + t).c_str(), BM_Quantize, type,
          t);
    }
  }
  for (ggml_type type : {GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1,
                         GGML_TYPE_Q8_0, GGML_TYPE_Q8_1}) {
    benchmark::RegisterBenchmark((std::string("QuantizeRef/") + ggml_type_name(type)).c_str(),
                                 BM_QuantizeRef, type);
  }
  // mul_mat through the hook on the best target (and AVX2 for the ratio), 1 and 2 threads.
  for (ggml_type type : kWeightTypes) {
    for (const std::string& t : targets) {
      if (t != targets.front() && t != "AVX2") continue;
      for (size_t N : {256, 512, 1024, 2048}) {
        for (int nth : {1, 2}) {
          const std::string name = std::string("MulMat/") + ggml_type_name(type) + "/" + t +
                                   "/square_" + std::to_string(N) +
                                   "/threads:" + std::to_string(nth);
          benchmark::RegisterBenchmark(name.c_str(), BM_MulMat, type, t, N, nth)
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
