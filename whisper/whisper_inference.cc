// The inference side of a whisper_state (whisper/whisper_impl.h): making its InferenceState (with
// the context's DTW alignment heads), its log-mel, and StateBackend, the window loop's model
// backend over it (abort checks and whisper.cpp's timing counters around each graph).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "whisper/status_codes.h"
#include "whisper/whisper_impl.h"

namespace whisper {
namespace api {

bool EnsureInference(whisper_state* state, int n_decoders, int n_threads, const char* func) {
  if (n_threads < 1 || n_threads > GGML_THREADPOOL_MAX_THREADS) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: n_threads = %d, expected 1 .. %d\n", func, n_threads, GGML_THREADPOOL_MAX_THREADS);
    return false;
  }
  const Gelu gelu = GeluOfRules(state->ctx->decoding.load() == WHISPER_GGML_DECODING_WHISPER_CPP);
  const auto int8 = static_cast<Int8Attention>(state->ctx->int8_attention.load());
  if (state->ws != nullptr && state->ws->n_decoders() >= n_decoders && state->ws->n_threads() == n_threads) {
    state->ws->set_gelu(gelu);
    state->ws->set_int8_attention(int8);
    return true;
  }
  const int want = std::max(n_decoders, state->ws != nullptr ? state->ws->n_decoders() : 1);
  state->ws.reset();  // free the old buffers first: peak memory is one state's
  EncoderOptions encoder;
  encoder.flash_attn = state->ctx->params.flash_attn;  // -fa / -nfa
  encoder.gelu = gelu;
  encoder.int8_attention = int8;
  auto ws = InferenceState::Create(*state->ctx->model, want, n_threads, nullptr, encoder);
  if (!ws.ok()) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: cannot create the inference state (%d decoders, %d threads): %s\n", func, want,
        n_threads, std::string(ws.status().message()).c_str());
    return false;
  }
  state->ws = std::move(*ws);
  const std::vector<AlignmentHead>& aheads = state->ctx->aheads;
  if (!aheads.empty()) {
    absl::Status st = state->ws->SetAlignmentHeads(aheads);
    if (!st.ok()) {
      Log(GGML_LOG_LEVEL_ERROR, "%s: DTW timestamps: %s\n", func, std::string(st.message()).c_str());
      state->ws.reset();
      return false;
    }
    if (state->word_timestamps == nullptr) {
      const WhisperHparams& h = state->ctx->model->hparams();
      state->word_timestamps = std::make_unique<WordTimestamps>(InferenceState::MaxAlignTokens(h), h.n_audio_ctx);
    }
  }
  return true;
}

bool ComputeMel(whisper_state* state, const float* samples, int n_samples, int n_threads, const char* func) {
  if (samples == nullptr || n_samples < kMelPadFront + 1) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: %s samples, n_samples = %d: need at least %d\n", func,
        samples == nullptr ? "NULL" : "too few", n_samples, kMelPadFront + 1);
    return false;
  }
  if (n_threads < 1 || n_threads > GGML_THREADPOOL_MAX_THREADS) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: n_threads = %d, expected 1 .. %d\n", func, n_threads, GGML_THREADPOOL_MAX_THREADS);
    return false;
  }
  for (int i = 0; i < n_samples; ++i) {
    if (!std::isfinite(samples[i])) {
      Log(GGML_LOG_LEVEL_ERROR, "%s: sample %d is %s: samples must be finite\n", func, i,
          std::isnan(samples[i]) ? "NaN" : "infinite");
      return false;
    }
  }
  const int64_t t0 = NowUs();
  const WhisperModel& model = *state->ctx->model;
  // Whatever happens below, the old mel is gone: never leave a pointer into freed memory.
  state->mel_data = nullptr;
  state->mel_n_len = state->mel_n_len_org = state->mel_n_frames_audio = 0;
  state->mel_n_samples = 0;
  if (state->mel == nullptr || state->mel->n_threads() != n_threads) {
    state->mel.reset();
    auto m = MelSpectrogram::Create(model.mel_filters().data(), model.hparams().n_mels, model.n_fft(), n_threads,
                                    n_samples);
    if (!m.ok()) {
      Log(GGML_LOG_LEVEL_ERROR, "%s: %s\n", func, std::string(m.status().message()).c_str());
      return false;
    }
    state->mel = std::move(*m);
  }
  auto view = state->mel->Compute(samples, n_samples);
  if (!view.ok()) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: %s\n", func, std::string(view.status().message()).c_str());
    return false;
  }
  state->mel_data = view->data;
  state->mel_n_len = static_cast<int>(view->n_len);
  state->mel_n_len_org = static_cast<int>(view->n_len_org);
  state->mel_n_frames_audio = n_samples / kMelHop;
  state->mel_n_samples = n_samples;
  state->t_mel_us += NowUs() - t0;
  return true;
}

absl::Status StateBackend::CheckAbort(const char* what) const {
  if (s_->abort_callback != nullptr && s_->abort_callback(s_->abort_callback_user_data)) {
    return absl::CancelledError(absl::StrFormat("aborted by abort_callback before the %s", what));
  }
  return absl::OkStatus();
}

absl::Status StateBackend::Encode(const float* mel, int n_frames, int seek, int audio_ctx, int n_frames_valid) {
  absl::Status st = CheckAbort("encoder");
  if (!st.ok()) return WithKind(st, ErrorKind::kEncode);
  const int64_t t0 = NowUs();
  st = s_->ws->Encode(mel, n_frames, seek, audio_ctx, n_frames_valid);
  s_->t_encode_us += NowUs() - t0;
  s_->n_encode++;
  return WithKind(st, ErrorKind::kEncode);
}

absl::Status StateBackend::Decode(int decoder, const Token* tokens, int n_tokens, int n_past) {
  // whisper.cpp's -8 is the pass over the prompt (from position 0), -9 a later step.
  const ErrorKind kind = n_past == 0 ? ErrorKind::kPromptDecode : ErrorKind::kTokenDecode;
  absl::Status st = CheckAbort("decoder step");
  if (!st.ok()) return WithKind(st, kind);
  const int64_t t0 = NowUs();
  st = s_->ws->Decode(decoder, tokens, n_tokens, n_past);
  const int64_t dt = NowUs() - t0;
  if (n_tokens > 1) {
    s_->t_prompt_us += dt;
    s_->n_prompt++;
  } else {
    s_->t_decode_us += dt;
    s_->n_decode++;
  }
  return WithKind(st, kind);
}

absl::Status StateBackend::DecodeBatch(const int* decoders, const Token* tokens, int n, int n_past) {
  if (n == 1) return Decode(decoders[0], tokens, 1, n_past);
  absl::Status st = CheckAbort("batched decoder step");
  if (!st.ok()) return WithKind(st, ErrorKind::kTokenDecode);
  const int64_t t0 = NowUs();
  st = s_->ws->DecodeBatch(decoders, tokens, n, n_past);
  // whisper.cpp's "batchd" line: steps of several decoders' tokens.
  s_->t_batchd_us += NowUs() - t0;
  s_->n_batchd++;
  return WithKind(st, ErrorKind::kTokenDecode);
}

absl::StatusOr<ModelBackend::AlignmentLogits> StateBackend::Align(const Token* tokens, int n_tokens,
                                                                   int logits_from) {
  absl::Status st = CheckAbort("alignment pass");
  if (!st.ok()) return st;
  const int64_t t0 = NowUs();
  absl::StatusOr<const float*> qk = s_->ws->Align(tokens, n_tokens, logits_from);
  s_->t_prompt_us += NowUs() - t0;
  s_->n_prompt++;
  if (!qk.ok()) return qk.status();
  AlignmentLogits out;
  out.qk = *qk;
  out.n_heads = s_->ws->n_alignment_heads();
  out.n_audio_ctx = s_->ws->n_audio_ctx();
  out.logits = s_->ws->align_logits();
  out.n_vocab = s_->ctx->model->hparams().n_vocab;
  return out;
}

}  // namespace api
}  // namespace whisper
