// GB/s of the row kernels on Whisper-sized tensors, per Highway target, next to memcpy of the
// same bytes (bytes = input read + output written, for both). Single thread.
//
//   bazel run -c opt //kernels:elementwise_benchmark
#include <string.h>

#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "hwy/targets.h"
#include "kernels/activations.h"
#include "kernels/dispatch.h"
#include "kernels/norm.h"
#include "kernels/softmax.h"

namespace ggml_cpu {
namespace {

struct Rows {
  const char* name;
  size_t n, nrows;
};

// softmax: one encoder head's scores [1500, 1500]; layer norm: encoder state [384, 1500];
// GELU: the MLP hidden layer [1536, 1500].
const Rows kSoftmax = {"softmax_1500x1500", 1500, 1500};
const Rows kNorm = {"layernorm_384x1500", 384, 1500};
const Rows kGelu = {"gelu_1536x1500", 1536, 1500};

std::vector<float> Input(size_t count) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = static_cast<float>((i * 7919) % 2001) / 200.0f - 5.0f;
  return v;
}

void Finish(benchmark::State& state, const Rows& r) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 2 * r.n * r.nrows * 4);
}

void BM_Memcpy(benchmark::State& state, Rows r) {
  const std::vector<float> x = Input(r.n * r.nrows);
  std::vector<float> y(x.size());
  for (auto _ : state) {
    memcpy(y.data(), x.data(), x.size() * 4);
    benchmark::DoNotOptimize(y.data());
  }
  Finish(state, r);
}

template <class Fn>
void RunOnTarget(benchmark::State& state, const std::string& target, Rows r, Fn fn) {
  if (!ggml_cpu_set_target_limit(target.c_str())) {
    state.SkipWithError("unknown target");
    return;
  }
  const std::vector<float> x = Input(r.n * r.nrows);
  std::vector<float> y(x.size());
  for (auto _ : state) {
    fn(x.data(), y.data());
    benchmark::DoNotOptimize(y.data());
  }
  Finish(state, r);
  state.SetLabel(ggml_cpu_target_name());
  ggml_cpu_set_target_limit("");
}

void BM_Softmax(benchmark::State& state, std::string target) {
  SoftmaxParams p;
  p.scale = 0.125f;
  const Rows r = kSoftmax;
  RunOnTarget(state, target, r, [&](const float* x, float* y) {
    SoftmaxRowsF32(r.n, 0, r.nrows, x, r.n, y, r.n, p);
  });
}

void BM_LayerNorm(benchmark::State& state, std::string target) {
  const Rows r = kNorm;
  const std::vector<float> w = Input(r.n), b = Input(r.n);
  RunOnTarget(state, target, r, [&](const float* x, float* y) {
    LayerNormRowsF32(r.n, r.nrows, x, r.n, 1e-5f, w.data(), b.data(), y, r.n);
  });
}

void BM_Gelu(benchmark::State& state, std::string target) {
  const Rows r = kGelu;
  RunOnTarget(state, target, r, [&](const float* x, float* y) {
    GeluF32(r.n * r.nrows, x, y, GeluMode::kTanh);
  });
}

void BM_GeluErf(benchmark::State& state, std::string target) {
  const Rows r = kGelu;
  RunOnTarget(state, target, r, [&](const float* x, float* y) {
    GeluF32(r.n * r.nrows, x, y, GeluMode::kErf);
  });
}

void RegisterAll() {
  for (const Rows& r : {kSoftmax, kNorm, kGelu}) {
    benchmark::RegisterBenchmark((std::string("Memcpy/") + r.name).c_str(), BM_Memcpy, r);
  }
  for (int64_t t : CompiledAndSupportedTargets()) {
    const std::string name = hwy::TargetName(t);
    benchmark::RegisterBenchmark(("Softmax/" + name + "/" + kSoftmax.name).c_str(), BM_Softmax, name);
    benchmark::RegisterBenchmark(("LayerNorm/" + name + "/" + kNorm.name).c_str(), BM_LayerNorm, name);
    benchmark::RegisterBenchmark(("Gelu/" + name + "/" + kGelu.name).c_str(), BM_Gelu, name);
    benchmark::RegisterBenchmark(("GeluErf/" + name + "/" + kGelu.name).c_str(), BM_GeluErf, name);
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
