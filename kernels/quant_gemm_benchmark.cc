// Encoder-shaped matrix-matrix products with 8-bit weights, GFLOP/s (2*M*N*K per product) on the
// dispatched target, 1 and 2 threads (M split in 64-row ranges, as the graph executor splits):
//   Int8:    QuantGemm over Q8_0 panels and Q8_0 activations (activation quantization and
//            weight packing included in the timed product, as the executor pays them);
//   Dequant: MulMatDequant (Q8_0 weights dequantized into the F32 GEMM's panels; the path the
//            executor took before);
//   F16:     MulMatF16 on the same weights in F16 (the F16 model's product);
//   VecDot:  MulMatConverted (the executor's path for fewer than 16 columns), small N only.
//
//   bazel run -c opt //kernels:quant_gemm_benchmark -- --benchmark_repetitions=3
#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "ggml/fp16.h"
#include "kernels/bench_pool.h"
#include "kernels/matmul.h"
#include "kernels/quant_gemm.h"
#include "kernels/quant_matmul.h"
#include "kernels/quant_ref.h"
#include "kernels/quant_types.h"

namespace ggml_cpu {
namespace {

struct Shape {
  size_t m, n, k;  // a ne = [k, m], b ne = [k, n], c ne = [m, n]
};

// tiny.en (n_state 384) and base (512) encoder products at n_ctx 1500: attention projections
// (n_state x n_state), fc1 (4 n_state x n_state), fc2 (n_state x 4 n_state).
// Then few columns (a prompt of 16-64 tokens), where the graph executor's threshold between the
// vec_dot path (VecDot: MulMatConverted, activations quantized, each weight block read once
// per 4 columns) and the GEMMs was measured; and a batched decoder step's 40 columns, which the
// matvec mode (ggml/ops.h ggml_mul_mat_set_matvec) sends to VecDot.
const Shape kShapes[] = {{384, 1500, 384}, {1536, 1500, 384}, {384, 1500, 1536},
                         {512, 1500, 512}, {2048, 1500, 512}, {512, 1500, 2048},
                         {384, 8, 384},    {384, 16, 384},    {1536, 16, 384},
                         {384, 32, 384},   {1536, 64, 384},
                         // base's decoder step of 40 sequences (8 windows x 5 beams): fc1, fc2
                         // and the vocabulary projection (28 MB of Q8_0: streamed from memory).
                         {2048, 40, 512},  {512, 40, 2048},  {51864, 40, 512}};

BenchPool& Pool(int nth) {
  static std::map<int, std::unique_ptr<BenchPool>> pools;
  std::unique_ptr<BenchPool>& p = pools[nth];
  if (!p) p = std::make_unique<BenchPool>(nth);
  return *p;
}

struct Data {
  Shape s;
  std::vector<float> af, b, c;
  std::vector<block_q8_0> aq;
  std::vector<ggml_fp16_t> a16;
  std::vector<uint8_t> packed, qb;
  std::vector<std::vector<uint8_t>> work;
  explicit Data(const Shape& sh)
      : s(sh), af(sh.m * sh.k), b(sh.n * sh.k), c(sh.m * sh.n), aq(sh.m * sh.k / 32), a16(sh.m * sh.k),
        packed(QuantGemmPackedBytesA(sh.k, sh.m)), qb(sh.n * QuantGemmRowBytesB(sh.k)) {
    for (size_t i = 0; i < af.size(); ++i) af[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 104729) % 997) / 997.0f - 0.5f;
    quantize_row_q8_0_ref(af.data(), aq.data(), static_cast<int64_t>(af.size()));
    for (size_t i = 0; i < af.size(); ++i) a16[i] = ggml_fp32_to_fp16(af[i]);
    for (int t = 0; t < 2; ++t) work.emplace_back(MulMatWorkSize());
  }
};

Data& GetData(size_t i) {
  static std::map<size_t, std::unique_ptr<Data>> cache;
  std::unique_ptr<Data>& d = cache[i];
  if (!d) d = std::make_unique<Data>(kShapes[i]);
  return *d;
}

// Rows [m0, m1) of thread ith: 64-row ranges split evenly.
void ThreadRows(size_t m, int ith, int nth, size_t* m0, size_t* m1) {
  const size_t units = (m + 63) / 64;
  *m0 = std::min(m, units * ith / nth * 64);
  *m1 = std::min(m, units * (ith + 1) / nth * 64);
}

enum Kind { kInt8, kDequant, kF16, kVecDot };

void BM_Gemm(benchmark::State& state, size_t shape, Kind kind, int nth) {
  Data& d = GetData(shape);
  const Shape s = d.s;
  BenchPool& pool = Pool(nth);
  const size_t rb = QuantGemmRowBytesB(s.k);
  const size_t panels = (s.m + 15) / 16;
  std::atomic<int> barrier{0};
  for (auto _ : state) {
    barrier.store(0);
    pool.Run([&](int ith, int n_th) {
      size_t m0, m1;
      ThreadRows(s.m, ith, n_th, &m0, &m1);
      if (kind == kInt8) {
        const size_t n0 = s.n * ith / n_th, n1 = s.n * (ith + 1) / n_th;
        const size_t p0 = panels * ith / n_th, p1 = panels * (ith + 1) / n_th;
        (void)QuantGemmPackA(GGML_TYPE_Q8_0, s.k, d.aq.data(), s.k / 32 * sizeof(block_q8_0), s.m, p0, p1,
                             d.packed.data(), d.packed.size());
        (void)QuantGemmQuantizeB(s.k, d.b.data(), s.k, n0, n1, d.qb.data(), d.qb.size());
        barrier.fetch_add(1);
        while (barrier.load() < n_th) {
        }
        (void)QuantGemm(GGML_TYPE_Q8_0, s.k, d.packed.data(), d.packed.size(), s.m, d.qb.data(), s.n * rb,
                        d.c.data(), s.m, m0, m1, 0, s.n);
      } else if (kind == kVecDot) {
        const MulMatRowOps& ops = *QuantMulMatRowOps(GGML_TYPE_Q8_0);
        const size_t n0 = s.n * ith / n_th, n1 = s.n * (ith + 1) / n_th;
        (void)MulMatConvertB(ops, s.k, d.b.data(), s.k, n0, n1, d.qb.data(), d.qb.size());
        barrier.fetch_add(1);
        while (barrier.load() < n_th) {
        }
        (void)MulMatConverted(ops, s.k, d.aq.data(), s.k / 32 * sizeof(block_q8_0), d.qb.data(), d.qb.size(),
                              d.c.data(), s.m, m0, m1, 0, s.n);
      } else if (kind == kDequant) {
        (void)MulMatDequant(*QuantMulMatDequantOps(GGML_TYPE_Q8_0), s.k, d.aq.data(),
                            s.k / 32 * sizeof(block_q8_0), d.b.data(), s.k, d.c.data(), s.m, m0, m1, 0, s.n,
                            d.work[ith].data(), d.work[ith].size());
      } else {
        (void)MulMatF16(s.k, d.a16.data(), s.k, d.b.data(), s.k, d.c.data(), s.m, m0, m1, 0, s.n,
                        d.work[ith].data(), d.work[ith].size());
      }
    });
    benchmark::DoNotOptimize(d.c.data());
  }
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * s.m * s.n * s.k, benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
}

void Register() {
  const char* kinds[] = {"Int8", "Dequant", "F16", "VecDot"};
  for (size_t i = 0; i < sizeof(kShapes) / sizeof(kShapes[0]); ++i) {
    for (int nth : {1, 2}) {
      for (int kind = 0; kind < 4; ++kind) {
        if (kind == kVecDot && kShapes[i].n > 64) continue;  // hundreds of ms per product
        const Shape& s = kShapes[i];
        const std::string name = std::string(kinds[kind]) + "/" + std::to_string(s.m) + "x" + std::to_string(s.n) +
                                 "x" + std::to_string(s.k) + "/threads:" + std::to_string(nth);
        benchmark::RegisterBenchmark(name.c_str(), BM_Gemm, i, static_cast<Kind>(kind), nth)->UseRealTime();
      }
    }
  }
}

}  // namespace
}  // namespace ggml_cpu

int main(int argc, char** argv) {
  ggml_cpu::Register();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
