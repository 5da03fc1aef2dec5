// FlashAttn GFLOP/s for one head (4 * n_q * n_kv * d per call: q.k and p.v, as
// tools/bench/roofline.h counts attention) per Highway target, one thread. Shapes: the Whisper
// encoders' self-attention (tiny/base/small: d 64, 1500 queries over 1500 keys, F16 K/V), a
// shorter window, and one decoder query over the cross K/V; f32 products (BM_FlashAttn) and int8
// (BM_FlashAttnInt8, FlashAttnKV::int8).
//
//   bazel run -c opt //kernels:flash_attn_benchmark -- --benchmark_filter='AVX2'
#include <stddef.h>

#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "ggml/fp16.h"
#include "hwy/targets.h"
#include "kernels/dispatch.h"
#include "kernels/flash_attn.h"

namespace ggml_cpu {
namespace {

struct Shape {
  const char* name;
  size_t d, n_kv, n_q;
};

const Shape kShapes[] = {
    {"encoder_d64_1500x1500", 64, 1500, 1500},  // one head of a 30 s window
    {"encoder_d64_500x500", 64, 500, 500},      // a 10 s window (audio_ctx 500)
    {"cross_d64_1500x1", 64, 1500, 1},          // one decoder token over the cross K/V
};

void BM_FlashAttn(benchmark::State& state, Shape s, std::string target, bool int8) {
  if (!ggml_cpu_set_target_limit(target.c_str())) {
    state.SkipWithError("unknown target");
    return;
  }
  std::vector<float> q(s.n_q * s.d), out(s.n_q * s.d);
  std::vector<ggml_fp16_t> k(s.n_kv * s.d), v(s.n_kv * s.d);
  for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<float>((i * 7919) % 1000) / 250.0f - 2.0f;
  for (size_t i = 0; i < k.size(); ++i) k[i] = ggml_fp32_to_fp16(static_cast<float>((i * 104729) % 997) / 499.0f - 1.0f);
  for (size_t i = 0; i < v.size(); ++i) v[i] = ggml_fp32_to_fp16(static_cast<float>((i * 15485863) % 991) / 495.0f - 1.0f);
  FlashAttnKV kv;
  kv.d_k = kv.d_v = s.d;
  kv.n_kv = s.n_kv;
  kv.k_f16 = k.data();
  kv.v_f16 = v.data();
  kv.ldk = kv.ldv = s.d;
  kv.scale = 0.125f;
  kv.int8 = int8;
  FlashAttnQueries qs;
  qs.n_q = s.n_q;
  qs.q = q.data();
  qs.ldq = s.d;
  qs.out = out.data();
  qs.ld_out = s.d;
  std::vector<char> work(FlashAttnWorkSize(s.d, s.d, s.n_kv));
  for (auto _ : state) {
    if (!FlashAttn(kv, qs, work.data(), work.size()).ok()) {
      state.SkipWithError("FlashAttn failed");
      break;
    }
    benchmark::DoNotOptimize(out.data());
  }
  const double flops = 4.0 * static_cast<double>(s.n_q) * static_cast<double>(s.n_kv) * static_cast<double>(s.d);
  state.counters["GFLOPs"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(ggml_cpu_target_name());
  ggml_cpu_set_target_limit("");
}

void Register() {
  for (int64_t t : CompiledAndSupportedTargets()) {
    const std::string target = hwy::TargetName(t);
    if (target == "SCALAR" || target == "SSSE3" || target == "SSE4") continue;  // slow fallbacks
    for (const Shape& s : kShapes) {
      for (bool int8 : {false, true}) {
        const std::string name = std::string(int8 ? "BM_FlashAttnInt8/" : "BM_FlashAttn/") + s.name + "/" + target;
        benchmark::RegisterBenchmark(name.c_str(), BM_FlashAttn, s, target, int8)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
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
  benchmark::Shutdown();
  return 0;
}
