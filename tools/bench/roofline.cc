// FMA peak (Highway, dispatched as kernels/ is) and the encoder FLOP count; see roofline.h.
#include "tools/bench/roofline.h"

#include <stddef.h>
#include <stdint.h>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tools/bench/roofline.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace whisper::bench {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// 12 independent chains acc = acc * x + y, `iters` steps each. Returns the f32 lanes per vector
// and, in *sink, a value depending on every chain so that none is dead code.
size_t FmaChains(uint64_t iters, float* sink) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  V a0 = hn::Set(d, 1.0f), a1 = hn::Set(d, 1.1f), a2 = hn::Set(d, 1.2f), a3 = hn::Set(d, 1.3f);
  V a4 = hn::Set(d, 1.4f), a5 = hn::Set(d, 1.5f), a6 = hn::Set(d, 1.6f), a7 = hn::Set(d, 1.7f);
  V a8 = hn::Set(d, 1.8f), a9 = hn::Set(d, 1.9f), a10 = hn::Set(d, 2.0f), a11 = hn::Set(d, 2.1f);
  const V x = hn::Set(d, 0.9999999f), y = hn::Set(d, 1e-7f);
  for (uint64_t i = 0; i < iters; ++i) {
    a0 = hn::MulAdd(a0, x, y);
    a1 = hn::MulAdd(a1, x, y);
    a2 = hn::MulAdd(a2, x, y);
    a3 = hn::MulAdd(a3, x, y);
    a4 = hn::MulAdd(a4, x, y);
    a5 = hn::MulAdd(a5, x, y);
    a6 = hn::MulAdd(a6, x, y);
    a7 = hn::MulAdd(a7, x, y);
    a8 = hn::MulAdd(a8, x, y);
    a9 = hn::MulAdd(a9, x, y);
    a10 = hn::MulAdd(a10, x, y);
    a11 = hn::MulAdd(a11, x, y);
  }
  const V s = hn::Add(hn::Add(hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)), hn::Add(hn::Add(a4, a5), hn::Add(a6, a7))),
                      hn::Add(hn::Add(a8, a9), hn::Add(a10, a11)));
  *sink = hn::GetLane(hn::SumOfLanes(d, s));
  return hn::Lanes(d);
}

}  // namespace HWY_NAMESPACE
}  // namespace whisper::bench
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "kernels/dispatch.h"

namespace whisper::bench {

HWY_EXPORT(FmaChains);

namespace {

constexpr int kChains = 12;
volatile float g_sink = 0.0f;

// Seconds for `iters` steps on each of n_threads threads started together; lanes out.
double TimeChains(int n_threads, uint64_t iters, size_t* lanes) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  std::vector<float> sinks(static_cast<size_t>(n_threads));
  std::vector<size_t> n_lanes(static_cast<size_t>(n_threads));
  for (int t = 0; t < n_threads; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) {
      }
      n_lanes[t] = HWY_DYNAMIC_DISPATCH(FmaChains)(iters, &sinks[t]);
    });
  }
  while (ready.load() < n_threads) {
  }
  const auto t0 = std::chrono::steady_clock::now();
  go.store(true, std::memory_order_release);
  for (std::thread& th : threads) th.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  float sum = 0;
  for (float v : sinks) sum += v;
  g_sink = sum;  // the chains' results stay observable
  *lanes = n_lanes[0];
  return s;
}

}  // namespace

FmaPeak MeasureFmaPeak(int n_threads, double seconds) {
  n_threads = std::max(1, n_threads);
  ggml_cpu::InitDispatchOnce();
  size_t lanes = 0;
  // Calibrate the step count to about `seconds` on one thread.
  uint64_t iters = 1 << 16;
  double t = TimeChains(1, iters, &lanes);
  while (t < seconds / 8 && iters < (uint64_t{1} << 40)) {
    iters *= 2;
    t = TimeChains(1, iters, &lanes);
  }
  iters = static_cast<uint64_t>(static_cast<double>(iters) * seconds / std::max(t, 1e-9)) + 1;
  FmaPeak peak;
  for (int r = 0; r < 3; ++r) {
    const double s = TimeChains(n_threads, iters, &lanes);
    const double flops = 2.0 * static_cast<double>(lanes) * kChains * static_cast<double>(iters) * n_threads;
    peak.gflops = std::max(peak.gflops, flops / s / 1e9);
  }
  peak.lanes = static_cast<int>(lanes);
  peak.target = ggml_cpu_target_name();
  return peak;
}

double EncoderFlops(const WhisperHparams& hp, int n_ctx) {
  const double n = n_ctx, d = hp.n_audio_state, mels = hp.n_mels;
  const double conv = 2.0 * 3 * mels * d * (2 * n) + 2.0 * 3 * d * d * n;
  const double layer = 8 * n * d * d + 4 * n * n * d + 16 * n * d * d;
  return conv + hp.n_audio_layer * layer;
}

}  // namespace whisper::bench
#endif  // HWY_ONCE
