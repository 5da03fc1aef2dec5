// Model-level benchmarks of Whisper tiny.en, per weight type and thread count (1 and 2):
//   LogMel30s        log-mel of 30 s of audio (480000 samples; counter frames) with the model's
//                    80 x 201 filterbank (does not depend on the weight type: F16 model only)
//   Encode30s        the encoder of one 30 s window (3000 mel frames -> 1500 positions) plus the
//                    cross-attention K/V, i.e. InferenceState::Encode
//   DecodeStepFullKv one decoder token at position n_text_ctx - 1 = 447, attending to a full
//                    447-position self-attention KV cache and the 1500-position cross K/V
//   TranscribeJfk    the whole of jfk.wav (11 s) as whisper-cli transcribes it: log-mel, the window
//                    loop, timestamps, temperature fallback; greedy (-bs 1) and beam search 5
//                    (whisper-cli's default), through whisper_full as the CLI calls it. Audio
//                    decoding and model loading are outside the loop.
// Inputs, found by testdata/paths.h: jfk.wav from the shared data folder
// ($GGML_WHISPER_SHARED/data, else ../shared/data beside the checkout); models/ggml-tiny.en.bin
// (F16, required), and models/ggml-tiny.en-q5_0.bin and models/ggml-tiny.en-q8_0.bin when
// present (tools/bench/run_all.sh makes them with //tools:quantize). $GGML_WHISPER_MODELS
// overrides the models folder.
// The benchmark context records simd_target (the Highway target the kernels dispatch to, which
// GGML_CPU_TARGET can cap) and the models found.
//
//   bazel run -c opt //tools/bench:transcribe_benchmark -- --benchmark_filter=Encode
//
// Overlaps //whisper:model_benchmark (F16 encoder window and full-cache decode step) on purpose,
// so that one binary gives the whole model-level picture for every weight type.
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "kernels/dispatch.h"
#include "testdata/paths.h"
#include "apps/common/audio.h"
#include "whisper/decoding.h"
#include "whisper/mel.h"
#include "whisper/model.h"
#include "whisper/state.h"
#include "whisper/whisper.h"

namespace whisper {
namespace {

struct ModelFile {
  const char* type;  // "F16", "Q5_0", "Q8_0"
  const char* name;  // file name under models/
};

constexpr ModelFile kModels[] = {
    {"F16", "ggml-tiny.en.bin"},
    {"Q5_0", "ggml-tiny.en-q5_0.bin"},
    {"Q8_0", "ggml-tiny.en-q8_0.bin"},
};

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

void BM_LogMel30s(benchmark::State& bench, const WhisperModel* model) {
  const int n_threads = static_cast<int>(bench.range(0));
  const int64_t n = 30 * 16000;
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) {  // a chirp plus a fixed pseudo-noise: every bin non-zero
    x[i] = 0.3f * std::sin(0.05f * i + 1e-6f * i * i) +
           0.01f * static_cast<float>((i * 7919) % 97) / 97.0f;
  }
  const WhisperHparams& hp = model->hparams();
  auto mel =
      MelSpectrogram::Create(model->mel_filters().data(), hp.n_mels, model->n_fft(), n_threads, n);
  if (!mel.ok()) return bench.SkipWithError(mel.status().ToString().c_str());
  for (auto _ : bench) {
    absl::StatusOr<MelView> view = (*mel)->Compute(x.data(), n);
    if (!view.ok()) return bench.SkipWithError(view.status().ToString().c_str());
    benchmark::DoNotOptimize(view->data);
  }
  bench.counters["frames"] = static_cast<double>(MelFrameCount(n));
}

void BM_Encode30s(benchmark::State& bench, const WhisperModel* model) {
  const int n_threads = static_cast<int>(bench.range(0));
  auto st = InferenceState::Create(*model, 1, n_threads);
  if (!st.ok()) return bench.SkipWithError(st.status().ToString().c_str());
  const int n_frames = 2 * model->hparams().n_audio_ctx;
  const std::vector<float> mel(static_cast<size_t>(model->hparams().n_mels) * n_frames, -0.5f);
  for (auto _ : bench) {
    absl::Status s = (*st)->Encode(mel.data(), n_frames, 0);
    if (!s.ok()) return bench.SkipWithError(s.ToString().c_str());
  }
}

void BM_DecodeStepFullKv(benchmark::State& bench, const WhisperModel* model) {
  const int n_threads = static_cast<int>(bench.range(0));
  auto st = InferenceState::Create(*model, 1, n_threads);
  if (!st.ok()) return bench.SkipWithError(st.status().ToString().c_str());
  InferenceState& state = **st;
  const WhisperHparams& hp = model->hparams();
  const int n_frames = 2 * hp.n_audio_ctx;
  const std::vector<float> mel(static_cast<size_t>(hp.n_mels) * n_frames, -0.5f);
  const int n_past = hp.n_text_ctx - 1;
  std::vector<Token> prompt(n_past, 220);  // " " fills positions 0 .. n_text_ctx - 2
  prompt[0] = model->special().sot;
  absl::Status s = state.Encode(mel.data(), n_frames, 0);
  if (s.ok()) s = state.Decode(0, prompt.data(), n_past, 0);
  if (!s.ok()) return bench.SkipWithError(s.ToString().c_str());
  const Token token = 262;
  for (auto _ : bench) {
    s = state.Decode(0, &token, 1, n_past);
    if (!s.ok()) return bench.SkipWithError(s.ToString().c_str());
  }
}

void BM_TranscribeJfk(benchmark::State& bench, whisper_context* ctx, int beam_size) {
  const int n_threads = static_cast<int>(bench.range(0));
  static const absl::StatusOr<std::vector<float>>* audio =
      new absl::StatusOr<std::vector<float>>(LoadAudio16kMono(testdata::SharedData("jfk.wav")));
  if (!audio->ok()) return bench.SkipWithError(audio->status().ToString().c_str());
  const int n_samples = static_cast<int>((*audio)->size());
  // The CLI's call (apps/cli/cli.cc FullParams with default flags): whisper_full on a state of
  // its own, beam 5 or greedy, best-of 5, temperature fallback, previous text as prompt.
  whisper_full_params p =
      whisper_full_default_params(beam_size > 1 ? WHISPER_SAMPLING_BEAM_SEARCH : WHISPER_SAMPLING_GREEDY);
  p.n_threads = n_threads;
  p.no_context = false;
  p.greedy.best_of = 5;
  p.beam_search.beam_size = beam_size;
  // Windows encoded over all iterations: whisper_full calls encoder_begin_callback once per window.
  int n_encode = 0;
  p.encoder_begin_callback = [](whisper_context*, whisper_state*, void* user) {
    ++*static_cast<int*>(user);
    return true;
  };
  p.encoder_begin_callback_user_data = &n_encode;
  whisper_state* st = whisper_init_state(ctx);
  if (st == nullptr) return bench.SkipWithError("whisper_init_state failed");
  int ret = 0;
  for (auto _ : bench) {
    ret = whisper_full_with_state(ctx, st, p, (*audio)->data(), n_samples);
    if (ret != 0) break;
  }
  std::string text;
  const int n_segments = whisper_full_n_segments_from_state(st);
  for (int i = 0; i < n_segments; ++i) text += whisper_full_get_segment_text_from_state(st, i);
  whisper_free_state(st);
  if (ret != 0) return bench.SkipWithError(("whisper_full returned " + std::to_string(ret)).c_str());
  if (text.find("ask not what your country can do for you") == std::string::npos) {
    return bench.SkipWithError(("unexpected transcript: " + text).c_str());
  }
  bench.counters["segments"] = n_segments;
  bench.counters["windows"] = benchmark::Counter(n_encode, benchmark::Counter::kAvgIterations);
  // Real-time factor: seconds of audio per second of compute.
  bench.counters["x_realtime"] =
      benchmark::Counter(n_samples / 16000.0, benchmark::Counter::kIsIterationInvariantRate);
}

// The whisper.h contexts of the loaded models, in the same order (for TranscribeJfk).
std::vector<whisper_context*>& contexts() {
  static auto* c = new std::vector<whisper_context*>();
  return *c;
}

// Loads the model files that exist, in kModels order (F16 first); a missing or unloadable file
// is reported and skipped (main() then requires F16).
std::vector<std::pair<std::string, const WhisperModel*>> LoadModels() {
  std::vector<std::pair<std::string, const WhisperModel*>> models;
  for (const ModelFile& f : kModels) {
    const std::string path = testdata::ModelPath(f.name);
    if (!Exists(path)) {
      std::fprintf(stderr, "transcribe_benchmark: %s not found: skipping %s\n", path.c_str(),
                   f.type);
      continue;
    }
    auto m = WhisperModel::Load(path);
    if (!m.ok()) {
      std::fprintf(stderr, "transcribe_benchmark: %s\n", m.status().ToString().c_str());
      continue;
    }
    models.emplace_back(f.type, m->release());  // lives until exit
    contexts().push_back(whisper_init_from_file_with_params_no_state(path.c_str(), whisper_context_default_params()));
  }
  return models;
}

}  // namespace
}  // namespace whisper

int main(int argc, char** argv) {
  const auto models = whisper::LoadModels();
  if (models.empty() || models[0].first != "F16") {
    const std::string path = testdata::ModelPath("ggml-tiny.en.bin");
    std::fprintf(stderr, "transcribe_benchmark: the F16 model is required\n%s\n",
                 testdata::MissingModelHint(path).c_str());
    return 1;
  }
  std::string names;
  const auto reg = [](const std::string& name, auto fn, auto... args) {
    benchmark::RegisterBenchmark(name.c_str(), fn, args...)
        ->Arg(1)
        ->Arg(2)
        ->ArgName("threads")
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  };
  reg("LogMel30s", whisper::BM_LogMel30s, models[0].second);
  whisper_log_set([](ggml_log_level, const char*, void*) {}, nullptr);
  for (size_t m = 0; m < models.size(); ++m) {
    const auto& [type, model] = models[m];
    names += (names.empty() ? "" : ",") + type;
    reg("Encode30s/" + type, whisper::BM_Encode30s, model);
    reg("DecodeStepFullKv/" + type, whisper::BM_DecodeStepFullKv, model);
    whisper_context* ctx = whisper::contexts()[m];
    if (ctx == nullptr) continue;
    reg("TranscribeJfk/" + type + "/greedy", whisper::BM_TranscribeJfk, ctx, 1);
    reg("TranscribeJfk/" + type + "/beam5", whisper::BM_TranscribeJfk, ctx, 5);
  }
  benchmark::AddCustomContext("simd_target", ggml_cpu_target_name());
  benchmark::AddCustomContext("models", names);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
