// Model-level benchmarks of Whisper tiny.en, per weight type and thread count (1 and 2):
//   LogMel30s        log-mel of 30 s of audio (480000 samples; counter frames) with the model's
//                    80 x 201 filterbank (does not depend on the weight type: F16 model only)
//   Encode30s        the encoder of one 30 s window (3000 mel frames -> 1500 positions) plus the
//                    cross-attention K/V, i.e. WhisperState::Encode
//   DecodeStepFullKv one decoder token at position n_text_ctx - 1 = 447, attending to a full
//                    447-position self-attention KV cache and the 1500-position cross K/V
//   TranscribeJfk    the whole of jfk.wav (11 s) as whisper-cli transcribes it: log-mel, the window
//                    loop, timestamps, temperature fallback; greedy (-bs 1) and beam search 5
//                    (whisper-cli's default). Audio decoding and model loading are outside the
//                    loop.
// Inputs: jfk.wav from the shared data folder ($GGML_WHISPER_SHARED/data, or ../shared/data
// beside the checkout, or /work/shared/data); models/ggml-tiny.en.bin (F16, required), and
// models/ggml-tiny.en-q5_0.bin and models/ggml-tiny.en-q8_0.bin when present
// (tools/bench/run_all.sh makes them with //tools:quantize). $GGML_WHISPER_MODELS overrides the
// models folder.
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
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "kernels/dispatch.h"
#include "testdata/paths.h"
#include "whisper/audio.h"
#include "whisper/decoding.h"
#include "whisper/mel.h"
#include "whisper/model.h"
#include "whisper/state.h"
#include "whisper/transcribe.h"

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

// $GGML_WHISPER_MODELS, else (under `bazel run`) $BUILD_WORKSPACE_DIRECTORY/models, else the
// models/ folder testdata/paths.h finds from a test's runfiles.
std::string ModelPath(const std::string& name) {
  const char* models = std::getenv("GGML_WHISPER_MODELS");
  const char* ws = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  if ((models == nullptr || *models == '\0') && ws != nullptr && *ws != '\0') {
    return std::string(ws) + "/models/" + name;
  }
  return testdata::ModelPath(name);
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// jfk.wav: $GGML_WHISPER_SHARED/data, else (under `bazel run`) the workspace's sibling shared/,
// else testdata/paths.h's choice.
std::string JfkPath() {
  const char* shared = std::getenv("GGML_WHISPER_SHARED");
  const char* ws = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  if ((shared == nullptr || *shared == '\0') && ws != nullptr && *ws != '\0') {
    const std::string p = std::string(ws) + "/../shared/data/jfk.wav";
    if (Exists(p)) return p;
  }
  return testdata::SharedData("jfk.wav");
}

// Drives a WhisperState from the window loop (as whisper/cli.cc does).
class StateBackend : public ModelBackend {
 public:
  explicit StateBackend(WhisperState* state) : state_(state) {}
  absl::Status Encode(const float* mel, int n_frames, int seek, int audio_ctx,
                      int n_frames_valid) override {
    return state_->Encode(mel, n_frames, seek, audio_ctx, n_frames_valid);
  }
  absl::Status Decode(int d, const Token* tokens, int n, int n_past) override {
    return state_->Decode(d, tokens, n, n_past);
  }
  const float* logits(int d) const override { return state_->logits(d); }
  void CopyKv(int src, int dst, int n) override { state_->CopyKv(src, dst, n); }
  int n_decoders() const override { return state_->n_decoders(); }

 private:
  WhisperState* state_;
};

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
  auto st = WhisperState::Create(*model, 1, n_threads);
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
  auto st = WhisperState::Create(*model, 1, n_threads);
  if (!st.ok()) return bench.SkipWithError(st.status().ToString().c_str());
  WhisperState& state = **st;
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

void BM_TranscribeJfk(benchmark::State& bench, const WhisperModel* model, int beam_size) {
  const int n_threads = static_cast<int>(bench.range(0));
  static const absl::StatusOr<std::vector<float>>* audio =
      new absl::StatusOr<std::vector<float>>(LoadAudio16kMono(JfkPath()));
  if (!audio->ok()) return bench.SkipWithError(audio->status().ToString().c_str());
  const int64_t n_samples = static_cast<int64_t>((*audio)->size());
  const WhisperHparams& hp = model->hparams();
  TranscribeParams tp;  // whisper-cli's defaults (whisper/cli_params.h)
  tp.decoding.beam_size = beam_size;
  tp.decoding.best_of = 5;
  tp.decoding.max_tokens_per_window = hp.n_text_ctx / 2 - 4;
  tp.decoding.filter.blank_token = model->vocab().id(" ");
  tp.audio_duration_cs = (n_samples + 159) / 160;
  auto st = WhisperState::Create(*model, DecodersNeeded(tp.decoding), n_threads);
  if (!st.ok()) return bench.SkipWithError(st.status().ToString().c_str());
  auto mel = MelSpectrogram::Create(model->mel_filters().data(), hp.n_mels, model->n_fft(),
                                    n_threads, n_samples);
  if (!mel.ok()) return bench.SkipWithError(mel.status().ToString().c_str());
  StateBackend backend(st->get());
  auto token_text = [&](Token t) -> const std::string& { return model->vocab().token(t); };
  std::vector<Segment> segments;
  TranscribeStats stats;
  std::string text;
  for (auto _ : bench) {
    absl::StatusOr<MelView> mv = (*mel)->Compute((*audio)->data(), n_samples);
    if (!mv.ok()) return bench.SkipWithError(mv.status().ToString().c_str());
    segments.clear();
    stats = TranscribeStats();
    absl::Status s = Transcribe(backend, model->special(), hp.n_text_ctx, token_text, mv->data,
                                static_cast<int>(mv->n_len), static_cast<int>(mv->n_len_org), tp,
                                &segments, &stats);
    if (!s.ok()) return bench.SkipWithError(s.ToString().c_str());
  }
  for (const Segment& seg : segments) text += seg.text;
  if (text.find("ask not what your country can do for you") == std::string::npos) {
    return bench.SkipWithError(("unexpected transcript: " + text).c_str());
  }
  bench.counters["segments"] = static_cast<double>(segments.size());
  bench.counters["windows"] = stats.n_windows;
  bench.counters["fallbacks"] = stats.n_fallbacks;
  // Real-time factor: seconds of audio per second of compute.
  bench.counters["x_realtime"] =
      benchmark::Counter(n_samples / 16000.0, benchmark::Counter::kIsIterationInvariantRate);
}

// Loads the model files that exist, in kModels order (F16 first); a missing or unloadable file
// is reported and skipped (main() then requires F16).
std::vector<std::pair<std::string, const WhisperModel*>> LoadModels() {
  std::vector<std::pair<std::string, const WhisperModel*>> models;
  for (const ModelFile& f : kModels) {
    const std::string path = ModelPath(f.name);
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
  }
  return models;
}

}  // namespace
}  // namespace whisper

int main(int argc, char** argv) {
  const auto models = whisper::LoadModels();
  if (models.empty() || models[0].first != "F16") {
    const std::string path = whisper::ModelPath("ggml-tiny.en.bin");
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
  for (const auto& [type, model] : models) {
    names += (names.empty() ? "" : ",") + type;
    reg("Encode30s/" + type, whisper::BM_Encode30s, model);
    reg("DecodeStepFullKv/" + type, whisper::BM_DecodeStepFullKv, model);
    reg("TranscribeJfk/" + type + "/greedy", whisper::BM_TranscribeJfk, model, 1);
    reg("TranscribeJfk/" + type + "/beam5", whisper::BM_TranscribeJfk, model, 5);
  }
  benchmark::AddCustomContext("simd_target", ggml_cpu_target_name());
  benchmark::AddCustomContext("models", names);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
