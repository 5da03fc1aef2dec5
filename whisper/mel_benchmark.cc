// Log-mel of 30 s of audio (480000 samples -> 6000 frames, 3001 of them with an FFT) with the
// tiny.en 80 x 201 filterbank, on 1 and 2 threads. Run:
//   bazel run -c opt //whisper:mel_benchmark
#include <cmath>
#include <cstdint>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "testdata/paths.h"
#include "whisper/mel.h"

namespace whisper {
namespace {

// The filterbank from the model header (80 x 201 float at byte 56; testdata/paths.h finds
// ../shared/data), or triangular filters of similar sparsity if the file is missing.
std::vector<float> LoadFilters() {
  std::vector<float> f(80 * kMelNBins, 0.0f);
  std::ifstream in(testdata::SharedData("header-only-ggml-tiny.en.bin"), std::ios::binary);
  in.seekg(56);
  if (in.read(reinterpret_cast<char*>(f.data()), f.size() * sizeof(float))) return f;
  for (int m = 0; m < 80; ++m) {
    const double center = 1.0 + 198.0 * m / 79;
    for (int k = 0; k < kMelNBins; ++k) {
      f[m * kMelNBins + k] = static_cast<float>(std::fmax(0.0, 1.0 - std::fabs(k - center) / 4));
    }
  }
  return f;
}

void BM_LogMel30s(benchmark::State& state) {
  const int n_threads = static_cast<int>(state.range(0));
  const int64_t n = 30 * 16000;
  std::vector<float> x(n);
  std::mt19937 rng(1);
  std::normal_distribution<float> noise(0.0f, 0.1f);
  for (int64_t i = 0; i < n; ++i) x[i] = 0.3f * std::sin(0.05f * i) + noise(rng);
  const std::vector<float> filters = LoadFilters();
  auto mel = MelSpectrogram::Create(filters.data(), 80, kMelNBins, n_threads, n);
  if (!mel.ok()) {
    state.SkipWithError(std::string(mel.status().message()).c_str());
    return;
  }
  for (auto _ : state) {
    auto view = (*mel)->Compute(x.data(), n);
    benchmark::DoNotOptimize(view->data);
  }
  state.counters["frames"] = static_cast<double>(MelFrameCount(n));
}
BENCHMARK(BM_LogMel30s)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace whisper
