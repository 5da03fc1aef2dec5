// Silero VAD v6 over the first 60 s of long_speech.flac (1875 windows): window by window through
// SileroVad::Next (one front-end graph and one LSTM graph per window) against SileroVad::Run (the
// front end 64 windows per graph, on 1 and on 2 threads: wall time, and the calling thread's CPU
// time). Items/s are windows. Build with -c opt:
//   bazel run -c opt //whisper:silero_vad_benchmark
#include <memory>
#include <vector>

#include "apps/common/audio.h"
#include "benchmark/benchmark.h"
#include "testdata/paths.h"
#include "whisper/silero_vad.h"

namespace whisper {
namespace {

struct Fixture {
  std::unique_ptr<SileroVad> vad;
  std::vector<float> audio;
  int n = 0;
};

// Loads once; aborts the benchmark (state.SkipWithError) when the model or audio is missing.
Fixture* Get(benchmark::State& state) {
  static Fixture* f = [] {
    auto* fx = new Fixture();
    auto vad = SileroVad::Load(testdata::ModelPath("ggml-silero-v6.bin"));
    auto audio = LoadAudio16kMono(testdata::SharedData("long_speech.flac"));
    if (!vad.ok() || !audio.ok()) return fx;
    fx->vad = std::move(*vad);
    fx->audio = std::move(*audio);
    fx->n = static_cast<int>(std::min<size_t>(fx->audio.size(), 60 * 16000) / SileroVad::kWindow);
    return fx;
  }();
  if (f->vad == nullptr) state.SkipWithError("models/ggml-silero-v6.bin or long_speech.flac missing");
  return f;
}

void BM_VadNext(benchmark::State& state) {
  Fixture* f = Get(state);
  if (f->vad == nullptr) return;
  for (auto _ : state) {
    f->vad->Reset();
    for (int w = 0; w < f->n; ++w) benchmark::DoNotOptimize(f->vad->Next(f->audio.data() + size_t(w) * 512));
  }
  state.SetItemsProcessed(state.iterations() * f->n);
}
BENCHMARK(BM_VadNext)->Unit(benchmark::kMillisecond);

// Arg: the front end's threads (SileroVad::SetThreads). CPU time is the calling thread's.
void BM_VadRun(benchmark::State& state) {
  Fixture* f = Get(state);
  if (f->vad == nullptr) return;
  if (!f->vad->SetThreads(static_cast<int>(state.range(0))).ok()) {
    state.SkipWithError("SetThreads failed");
    return;
  }
  std::vector<float> probs(f->n);
  for (auto _ : state) {
    f->vad->Reset();
    benchmark::DoNotOptimize(f->vad->Run(f->audio.data(), f->n, probs.data()));
  }
  state.SetItemsProcessed(state.iterations() * f->n);
}
BENCHMARK(BM_VadRun)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace whisper

BENCHMARK_MAIN();
