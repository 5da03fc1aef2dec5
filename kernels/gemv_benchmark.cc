// The matrix-vector products of one Whisper decoder step, against the memory bandwidth.
//
// A greedy decoder step multiplies every decoder weight by one activation row: for tiny.en
// (n_text_state 384, 4 layers) per layer the self-attention q/k/v/out and cross-attention q/out
// projections (6 x [384, 384]), fc1 [384, 1536] and fc2 [1536, 384], then the vocabulary
// projection [384, 51864] (ggml ne order: [K, M]). That is 56 MB of F16, 30 MB of Q8_0, read
// once per token. Each layer's cross-attention also reads the window's F16 cross K and V once
// per head (6 heads: K [64, 1500], the scores, and V transposed [1500, 64]), 9.2 MB in all,
// whatever the weight type. Far more than the caches hold, so the step is bound by how fast
// these bytes stream from memory. This benchmark runs that sequence of products (MulMatF16, or
// MulMatConvertB + MulMatConverted for Q8_0, with M split across threads as the graph executor
// splits it) and, in the same process, a plain vector read of the same bytes (StreamRead: the
// bandwidth one core or two actually get). Counter `of_stream` = stream time / product time for
// the same bytes and thread count, measured in the same run: 1.0 means the products read the
// weights as fast as a bare loop reads memory.
//
//   bazel run -c opt //kernels:gemv_benchmark
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "ggml/fp16.h"
#include "hwy/highway.h"
#include "kernels/bench_pool.h"
#include "kernels/matmul.h"
#include "kernels/quant_matmul.h"

namespace ggml_cpu {
namespace {

enum class WeightType { kF16, kQ8_0 };

struct Product {
  WeightType type;   // of a
  size_t m, k;       // a ne = [k, m]
  size_t offset;     // bytes from the start of the block
  size_t row_bytes;  // bytes of one row of a
};

size_t RowBytes(WeightType t, size_t k) { return t == WeightType::kF16 ? k * 2 : k / 32 * 34; }

// The tiny.en decoder step's products, in graph order: weights of type t, cross K/V F16.
std::vector<Product> DecoderStep(WeightType t, size_t* total) {
  std::vector<Product> p;
  size_t off = 0;
  auto add = [&](WeightType type, size_t m, size_t k) {
    p.push_back({type, m, k, off, RowBytes(type, k)});
    off += m * RowBytes(type, k);
    off = (off + 63) / 64 * 64;
  };
  for (int layer = 0; layer < 4; ++layer) {
    for (int i = 0; i < 4; ++i) add(t, 384, 384);  // self-attention q, k, v, out
    add(t, 384, 384);                               // cross-attention q
    for (int h = 0; h < 6; ++h) add(WeightType::kF16, 1500, 64);  // scores: K [64, 1500]
    for (int h = 0; h < 6; ++h) add(WeightType::kF16, 64, 1500);  // V^T [1500, 64] x softmax
    add(t, 384, 384);                               // cross-attention out
    add(t, 1536, 384);
    add(t, 384, 1536);
  }
  add(t, 51864, 384);
  *total = off;
  return p;
}

struct Block {  // the weights, one aligned block as in a model's weight buffer
  explicit Block(size_t bytes) : size((bytes + kAlign - 1) / kAlign * kAlign) {
    data = static_cast<uint8_t*>(aligned_alloc(kAlign, size));
    if (data == nullptr) abort();
  }
  ~Block() { free(data); }
  static constexpr size_t kAlign = 64;
  size_t size;
  uint8_t* data;
};

BenchPool& Pool(int nth) {
  static std::map<int, std::unique_ptr<BenchPool>> pools;
  std::unique_ptr<BenchPool>& p = pools[nth];
  if (!p) p = std::make_unique<BenchPool>(nth);
  return *p;
}

// Weights with small varied values (the products' time does not depend on them).
void Fill(const std::vector<Product>& prods, uint8_t* base) {
  std::vector<float> row(1536);  // the longest row
  for (const Product& p : prods) {
    for (size_t i = 0; i < p.m; ++i) {
      for (size_t k = 0; k < p.k; ++k) row[k] = static_cast<float>((i * 131 + k * 7) % 200) / 1000.0f - 0.1f;
      uint8_t* dst = base + p.offset + i * p.row_bytes;
      if (p.type == WeightType::kF16) {
        for (size_t k = 0; k < p.k; ++k) {
          const ggml_fp16_t h = ggml_fp32_to_fp16(row[k]);
          memcpy(dst + 2 * k, &h, 2);
        }
      } else {
        QuantMulMatRowOps(GGML_TYPE_Q8_0)->from_float(row.data(), dst, static_cast<int64_t>(p.k));
      }
    }
  }
}

// Each thread reads its share [begin, end) of every product's rows, as the executor splits M.
void RunStep(const std::vector<Product>& prods, const uint8_t* base, const float* x,
             const uint8_t* xq, float* y, int nth) {
  const MulMatRowOps* q8 = QuantMulMatRowOps(GGML_TYPE_Q8_0);
  static std::vector<std::vector<uint8_t>> work;
  if (work.size() < static_cast<size_t>(nth)) work.resize(static_cast<size_t>(nth), std::vector<uint8_t>(MulMatWorkSize()));
  Pool(nth).Run([&](int ith, int n) {
    std::vector<uint8_t>& w = work[static_cast<size_t>(ith)];
    for (const Product& p : prods) {
      const size_t m0 = p.m * ith / n, m1 = p.m * (ith + 1) / n;
      absl::Status st;
      if (p.type == WeightType::kF16) {
        st = MulMatF16(p.k, reinterpret_cast<const ggml_fp16_t*>(base + p.offset), p.k, x, p.k, y,
                       p.m, m0, m1, 0, 1, w.data(), w.size());
      } else {
        st = MulMatConverted(*q8, p.k, base + p.offset, p.row_bytes, xq,
                             MulMatConvertedWorkSize(*q8, p.k, 1), y, p.m, m0, m1, 0, 1);
      }
      if (!st.ok()) abort();  // benchmark binary: the shapes are fixed above
    }
  });
}

// A bare vectorized read of [base, base + bytes) split across threads: the bandwidth bound. HWY_ATTR
// enables the static target's instructions (without it, GCC refuses to inline NEON ops on aarch64).
HWY_ATTR HWY_NOINLINE uint32_t ReadRange(const uint8_t* p, size_t bytes) {
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::ScalableTag<uint32_t> d;
  const size_t step = hn::Lanes(d) * sizeof(uint32_t);
  auto s0 = hn::Zero(d), s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);
  const uint32_t* w = reinterpret_cast<const uint32_t*>(p);
  const size_t n = bytes / (4 * step) * 4 * hn::Lanes(d);
  for (size_t i = 0; i < n; i += 4 * hn::Lanes(d)) {
    s0 = hn::Add(s0, hn::LoadU(d, w + i));
    s1 = hn::Add(s1, hn::LoadU(d, w + i + hn::Lanes(d)));
    s2 = hn::Add(s2, hn::LoadU(d, w + i + 2 * hn::Lanes(d)));
    s3 = hn::Add(s3, hn::LoadU(d, w + i + 3 * hn::Lanes(d)));
  }
  return hn::GetLane(hn::Add(hn::Add(s0, s1), hn::Add(s2, s3)));
}

double StreamSeconds(const uint8_t* base, size_t bytes, int nth) {
  std::vector<uint32_t> sums(static_cast<size_t>(nth));
  const auto t0 = std::chrono::steady_clock::now();
  Pool(nth).Run([&](int ith, int n) {
    const size_t b0 = bytes * ith / n / 64 * 64, b1 = bytes * (ith + 1) / n / 64 * 64;
    sums[static_cast<size_t>(ith)] = ReadRange(base + b0, b1 - b0);
  });
  benchmark::DoNotOptimize(sums.data());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void BM_DecoderStep(benchmark::State& state, WeightType t, int nth) {
  size_t total = 0;
  const std::vector<Product> prods = DecoderStep(t, &total);
  Block block(total);
  Fill(prods, block.data);
  std::vector<float> x(1536), y(51864);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 17) / 17.0f - 0.5f;
  std::vector<uint8_t> xq(MulMatConvertedWorkSize(*QuantMulMatRowOps(GGML_TYPE_Q8_0), 1536, 1));
  // One activation row in Q8_0 of each K used (384 or 1536): the products only read its prefix.
  QuantMulMatRowOps(GGML_TYPE_Q8_0)->from_float(x.data(), xq.data(), 1536);
  RunStep(prods, block.data, x.data(), xq.data(), y.data(), nth);  // warm up
  double step_s = 0, stream_s = 0;
  for (auto _ : state) {
    // Interleaved with the stream read of the same bytes, so both see the same machine state.
    const auto t0 = std::chrono::steady_clock::now();
    RunStep(prods, block.data, x.data(), xq.data(), y.data(), nth);
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(dt);
    step_s += dt;
    stream_s += StreamSeconds(block.data, total, nth);
    benchmark::DoNotOptimize(y.data());
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["MB"] = static_cast<double>(total) * 1e-6;
  state.counters["GBps"] = static_cast<double>(total) * n / step_s * 1e-9;
  state.counters["stream_GBps"] = static_cast<double>(total) * n / stream_s * 1e-9;
  state.counters["of_stream"] = stream_s / step_s;
}

int RegisterAll() {
  for (int nth : {1, 2}) {
    for (WeightType t : {WeightType::kF16, WeightType::kQ8_0}) {
      const std::string name = std::string("DecoderStep/") + (t == WeightType::kF16 ? "F16" : "Q8_0") +
                               "/tiny_en/threads:" + std::to_string(nth);
      benchmark::RegisterBenchmark(name.c_str(), BM_DecoderStep, t, nth)
          ->UseManualTime()
          ->MinTime(1.0)
          ->Unit(benchmark::kMillisecond);
    }
  }
  return 0;
}

// Registered at start-up; benchmark_main runs them.
const int kRegistered = RegisterAll();

}  // namespace
}  // namespace ggml_cpu
