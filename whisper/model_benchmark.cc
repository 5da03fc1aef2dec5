// Encoder and decoder-step time of the real tiny.en model (models/ggml-tiny.en.bin), the figures
// of whisper.cpp's whisper-bench "encode" and "decode" lines. Run with -c opt:
//   bazel run -c opt //whisper:model_benchmark
// BM_Encode: one 30 s window (3000 mel frames -> 1500 positions, encoder + cross K/V), by
// thread count and GELU (0: the model's erf form, OpenAI's rules; 1: whisper.cpp's tanh form;
// whisper/encoder.h Gelu). BM_DecodeStep: one token at position n_text_ctx - 1, attending to a full
// 447-position KV cache. The mel input is constant (as whisper-bench's empty mel): the cost
// does not depend on the values. Counters report the graph allocator buffer sizes (bytes).
#include <cstdio>
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "testdata/paths.h"
#include "whisper/model.h"
#include "whisper/state.h"

namespace whisper {
namespace {

const WhisperModel* Model() {
  static const WhisperModel* model = [] {
    absl::StatusOr<std::unique_ptr<WhisperModel>> m =
        WhisperModel::Load(testdata::ModelPath("ggml-tiny.en.bin"));
    if (!m.ok()) {
      fprintf(stderr, "%s\n%s\n", m.status().ToString().c_str(),
              testdata::MissingModelHint(testdata::ModelPath("ggml-tiny.en.bin")).c_str());
      return static_cast<WhisperModel*>(nullptr);
    }
    return m->release();
  }();
  return model;
}

void BM_Encode(benchmark::State& bench) {
  const WhisperModel* model = Model();
  if (model == nullptr) return bench.SkipWithError("model missing");
  const int n_threads = static_cast<int>(bench.range(0));
  EncoderOptions options;
  options.gelu = bench.range(1) == 0 ? Gelu::kErf : Gelu::kTanh;
  absl::StatusOr<std::unique_ptr<InferenceState>> st = InferenceState::Create(*model, 1, n_threads, nullptr, options);
  if (!st.ok()) return bench.SkipWithError(st.status().ToString().c_str());
  const int n_frames = 2 * model->hparams().n_audio_ctx;
  const std::vector<float> mel(static_cast<size_t>(model->hparams().n_mels) * n_frames, -0.5f);
  for (auto _ : bench) {
    absl::Status s = (*st)->Encode(mel.data(), n_frames, 0);
    if (!s.ok()) return bench.SkipWithError(s.ToString().c_str());
  }
  bench.counters["encoder_buf"] = (*st)->compute_buffer_size(Graph::kEncoder);
  bench.counters["cross_buf"] = (*st)->compute_buffer_size(Graph::kCross);
  bench.counters["decoder_buf"] = (*st)->compute_buffer_size(Graph::kDecoder);
  bench.counters["kv_buf"] = (*st)->kv_buffer_size();
}
BENCHMARK(BM_Encode)->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_DecodeStep(benchmark::State& bench) {
  const WhisperModel* model = Model();
  if (model == nullptr) return bench.SkipWithError("model missing");
  const int n_threads = static_cast<int>(bench.range(0));
  absl::StatusOr<std::unique_ptr<InferenceState>> st = InferenceState::Create(*model, 1, n_threads);
  if (!st.ok()) return bench.SkipWithError(st.status().ToString().c_str());
  InferenceState& state = **st;
  const int n_frames = 2 * model->hparams().n_audio_ctx;
  const std::vector<float> mel(static_cast<size_t>(model->hparams().n_mels) * n_frames, -0.5f);
  const int n_ctx = model->hparams().n_text_ctx;
  std::vector<int32_t> prompt(n_ctx - 1, 220);  // " " repeated fills positions 0 .. n_ctx - 2
  prompt[0] = model->special().sot;
  if (!state.Encode(mel.data(), n_frames, 0).ok() ||
      !state.Decode(0, prompt.data(), n_ctx - 1, 0).ok()) {
    return bench.SkipWithError("prompt failed");
  }
  const int32_t token = 262;
  for (auto _ : bench) {
    absl::Status s = state.Decode(0, &token, 1, n_ctx - 1);
    if (!s.ok()) return bench.SkipWithError(s.ToString().c_str());
  }
}
BENCHMARK(BM_DecodeStep)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace whisper
