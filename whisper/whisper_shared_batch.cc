// Continuous batching of whisper_full calls (whisper_ggml.h whisper_ggml_batch_*, issue 38 part
// 3): one InferenceState of n_slots windows and its DecodeScheduler, shared by the whisper_states
// attached to it. Each call's window loop is one RunOne job on the calling thread; its one-token
// steps join those of the other calls in flight (whisper/decode_scheduler.h).
#include <algorithm>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "whisper/decode_scheduler.h"
#include "whisper/status_codes.h"
#include "whisper/whisper_impl.h"

struct whisper_ggml_batch {
  whisper_context* ctx = nullptr;
  std::unique_ptr<whisper::InferenceState> ws;
  std::unique_ptr<whisper::DecodeScheduler> sched;  // after ws: destroyed (its workers joined) first
  int per_slot = 0;
  whisper::Gelu gelu = whisper::Gelu::kErf;  // of the context's decoding rules at whisper_ggml_batch_init
};

namespace whisper {
namespace api {
namespace {

// The window loop's backend on a slot of the shared batch: SlotBackend plus what StateBackend
// adds over a state's own buffers (the call's abort check before every graph, error kinds,
// whisper.cpp's counters; the times include the wait for the batch's state).
class SharedSlotBackend : public ModelBackend {
 public:
  SharedSlotBackend(whisper_state* state, SlotBackend* slot) : s_(state), slot_(slot) {}
  absl::Status Encode(const float* mel, int n_frames, int seek, int audio_ctx, int n_frames_valid) override {
    absl::Status st = CheckAbort("encoder");
    if (!st.ok()) return WithKind(st, ErrorKind::kEncode);
    const int64_t t0 = NowUs();
    st = slot_->Encode(mel, n_frames, seek, audio_ctx, n_frames_valid);
    s_->t_encode_us += NowUs() - t0;
    s_->n_encode++;
    return WithKind(st, ErrorKind::kEncode);
  }
  absl::Status Decode(int decoder, const Token* tokens, int n_tokens, int n_past) override {
    const ErrorKind kind = n_past == 0 ? ErrorKind::kPromptDecode : ErrorKind::kTokenDecode;
    absl::Status st = CheckAbort("decoder step");
    if (st.ok() && n_tokens == 1) st = CheckStep(tokens, 1, n_past);
    if (!st.ok()) return WithKind(st, kind);
    const int64_t t0 = NowUs();
    st = slot_->Decode(decoder, tokens, n_tokens, n_past);
    Count(n_tokens > 1 ? &s_->t_prompt_us : &s_->t_decode_us, n_tokens > 1 ? &s_->n_prompt : &s_->n_decode, t0);
    return WithKind(st, kind);
  }
  absl::Status DecodeBatch(const int* decoders, const Token* tokens, int n, int n_past) override {
    absl::Status st = CheckAbort("batched decoder step");
    if (st.ok()) st = CheckStep(tokens, n, n_past);
    if (!st.ok()) return WithKind(st, ErrorKind::kTokenDecode);
    const int64_t t0 = NowUs();
    st = slot_->DecodeBatch(decoders, tokens, n, n_past);
    Count(n > 1 ? &s_->t_batchd_us : &s_->t_decode_us, n > 1 ? &s_->n_batchd : &s_->n_decode, t0);
    return WithKind(st, ErrorKind::kTokenDecode);
  }
  const float* logits(int decoder) const override { return slot_->logits(decoder); }
  void CopyKv(int src, int dst, int begin, int end) override { slot_->CopyKv(src, dst, begin, end); }
  int n_decoders() const override { return slot_->n_decoders(); }
  absl::StatusOr<AlignmentLogits> Align(const Token* tokens, int n_tokens, int logits_from = -1) override {
    absl::Status st = CheckAbort("alignment pass");
    if (!st.ok()) return st;
    const int64_t t0 = NowUs();
    absl::StatusOr<AlignmentLogits> out = slot_->Align(tokens, n_tokens, logits_from);
    Count(&s_->t_prompt_us, &s_->n_prompt, t0);
    return out;
  }

 private:
  absl::Status CheckAbort(const char* what) const {
    if (s_->abort_callback != nullptr && s_->abort_callback(s_->abort_callback_user_data)) {
      return absl::CancelledError(absl::StrFormat("aborted by abort_callback before the %s", what));
    }
    return absl::OkStatus();
  }
  // A one-token step joins the other calls' steps, and InferenceState::DecodeSequences fails the
  // whole batch for one bad sequence: check this call's tokens and position before they join.
  absl::Status CheckStep(const Token* tokens, int n, int n_past) const {
    const WhisperHparams& h = s_->ctx->model->hparams();
    if (n_past < 0 || n_past >= h.n_text_ctx) {
      return absl::InvalidArgumentError(
          absl::StrFormat("decoder step at position %d: expected 0 .. %d (n_text_ctx - 1)", n_past, h.n_text_ctx - 1));
    }
    for (int b = 0; tokens != nullptr && b < n; ++b) {
      if (tokens[b] < 0 || tokens[b] >= h.n_vocab) {
        return absl::InvalidArgumentError(
            absl::StrFormat("decoder step: token %d is not in [0, %d) (n_vocab)", tokens[b], h.n_vocab));
      }
    }
    return absl::OkStatus();
  }
  static void Count(int64_t* t_us, int* n, int64_t t0) {
    *t_us += NowUs() - t0;
    ++*n;
  }
  whisper_state* s_;
  SlotBackend* slot_;
};

struct SharedJob {
  whisper_state* state;
  const TranscribeParams* tp;
  int n_frames_audio;
  TranscribeStats stats;
};

absl::Status RunSharedJob(void* arg, int job, SlotBackend& slot) {
  (void)job;
  SharedJob& j = *static_cast<SharedJob*>(arg);
  SharedSlotBackend backend(j.state, &slot);
  whisper_state* s = j.state;
  return s->transcriber->Run(backend, s->mel_data, s->mel_n_len, j.n_frames_audio, *j.tp, &s->results, &j.stats);
}

}  // namespace

bool UsesSharedBatch(const whisper_state* state, const whisper_full_params& params, const TranscribeParams& tp) {
  const whisper_ggml_batch* b = state->shared_batch;
  return b != nullptr && params.ggml_batch_size <= 1 && DecodersNeeded(tp.decoding) <= b->per_slot;
}

absl::Status RunShared(whisper_state* state, const whisper_full_params& params, const TranscribeParams& tp) {
  // The batch's graphs run for every call in flight at once, so they all need its GELU.
  if (state->shared_batch->gelu != GeluOfRules(tp.decoding.whisper_cpp)) {
    return WithKind(absl::FailedPreconditionError(absl::StrFormat(
                        "the shared batch was made under %s decoding rules (its GELU), this call uses %s's: make "
                        "the batch (whisper_ggml_batch_init) after whisper_ggml_set_decoding",
                        tp.decoding.whisper_cpp ? "OpenAI's" : "whisper.cpp's",
                        tp.decoding.whisper_cpp ? "whisper.cpp" : "OpenAI")),
                    ErrorKind::kSetup);
  }
  state->abort_callback = params.abort_callback;
  state->abort_callback_user_data = params.abort_callback_user_data;
  // whisper.cpp decodes up to n_len_org (frames overlapping the audio); OpenAI's content_frames
  // is n_samples / 160 (as RunWindows).
  SharedJob job{state, &tp, tp.decoding.whisper_cpp ? state->mel_n_len_org : state->mel_n_frames_audio, {}};
  const int64_t t_enc0 = state->t_encode_us, t_dec0 = state->t_decode_us + state->t_batchd_us + state->t_prompt_us;
  const int64_t t_loop = NowUs();
  const absl::Status st = state->shared_batch->sched->RunOne(RunSharedJob, &job);
  state->abort_callback = nullptr;
  state->abort_callback_user_data = nullptr;
  state->t_sample_us += std::max<int64_t>(0, (NowUs() - t_loop) - (state->t_encode_us - t_enc0) -
                                                 (state->t_decode_us + state->t_batchd_us + state->t_prompt_us - t_dec0));
  state->n_sample += job.stats.n_windows;
  state->n_fail_p += job.stats.n_fallbacks;
  if (st.ok()) return st;
  const bool aborted = st.code() == absl::StatusCode::kCancelled;
  return WithKind(absl::Status(st.code(), absl::StrCat(aborted ? "aborted: " : "failed: ", st.message())), KindOf(st));
}

}  // namespace api
}  // namespace whisper

extern "C" {

struct whisper_ggml_batch* whisper_ggml_batch_init(struct whisper_context* ctx, int n_slots, int n_decoders_per_slot,
                                                   int n_threads) {
  using whisper::InferenceState;
  using whisper::api::Log;
  if (ctx == nullptr || ctx->model == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: whisper_context is NULL\n", __func__);
    return nullptr;
  }
  if (n_slots < 1 || n_slots > InferenceState::kMaxStateWindows || n_decoders_per_slot < 1 ||
      static_cast<int64_t>(n_slots) * n_decoders_per_slot > InferenceState::kMaxStateDecoders) {
    Log(GGML_LOG_LEVEL_ERROR,
        "%s: n_slots = %d, n_decoders_per_slot = %d: expected 1 .. %d slots, at least one decoder each, and at most "
        "%d decoders in all\n",
        __func__, n_slots, n_decoders_per_slot, InferenceState::kMaxStateWindows, InferenceState::kMaxStateDecoders);
    return nullptr;
  }
  if (n_threads < 1 || n_threads > GGML_THREADPOOL_MAX_THREADS) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: n_threads = %d, expected 1 .. %d\n", __func__, n_threads,
        GGML_THREADPOOL_MAX_THREADS);
    return nullptr;
  }
  whisper::EncoderOptions encoder;
  encoder.flash_attn = ctx->params.flash_attn;
  encoder.gelu = whisper::api::GeluOfRules(ctx->decoding.load() == WHISPER_GGML_DECODING_WHISPER_CPP);
  encoder.int8_attention = static_cast<whisper::Int8Attention>(ctx->int8_attention.load());
  auto ws = InferenceState::Create(*ctx->model, n_slots * n_decoders_per_slot, n_threads, nullptr, encoder, n_slots);
  absl::Status st = ws.status();
  if (st.ok() && !ctx->aheads.empty()) st = (*ws)->SetAlignmentHeads(ctx->aheads);
  if (!st.ok()) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: cannot create the batch's inference state (%d slots of %d decoders): %s\n", __func__,
        n_slots, n_decoders_per_slot, std::string(st.message()).c_str());
    return nullptr;
  }
  auto b = std::make_unique<whisper_ggml_batch>();
  b->ctx = ctx;
  b->ws = std::move(*ws);
  b->per_slot = n_decoders_per_slot;
  b->gelu = encoder.gelu;
  auto sched = whisper::DecodeScheduler::Create(b->ws.get(), n_slots);
  if (!sched.ok()) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: %s\n", __func__, std::string(sched.status().message()).c_str());
    return nullptr;
  }
  b->sched = std::move(*sched);
  return b.release();
}

void whisper_ggml_batch_free(struct whisper_ggml_batch* batch) { delete batch; }

int whisper_ggml_state_set_batch(struct whisper_state* state, struct whisper_ggml_batch* batch) {
  if (state == nullptr || (batch != nullptr && batch->ctx != state->ctx)) {
    whisper::api::Log(GGML_LOG_LEVEL_ERROR, "%s: %s\n", __func__,
                      state == nullptr ? "whisper_state is NULL" : "the batch was made for another whisper_context");
    return -1;
  }
  state->shared_batch = batch;
  return 0;
}

int whisper_ggml_batch_stats(const struct whisper_ggml_batch* batch, int64_t* n_steps, int64_t* n_sequences) {
  if (batch == nullptr) return -1;
  batch->sched->StepCounts(n_steps, n_sequences);
  return 0;
}

}  // extern "C"
