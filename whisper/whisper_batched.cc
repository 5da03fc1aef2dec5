// whisper_full with ggml_batch_size > 1 (whisper/whisper.h): the clips (ClipChunks), or the audio
// or the VAD's joined speech cut into chunks (PlanChunks), transcribed B at a time on a batched InferenceState through
// DecodeScheduler and BatchedTranscriber (whisper/batched_transcribe.h).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "whisper/batched_transcribe.h"
#include "whisper/decode_scheduler.h"
#include "whisper/status_codes.h"
#include "whisper/whisper_impl.h"

namespace whisper {
namespace api {

struct BatchedState {
  std::unique_ptr<DecodeScheduler> sched;  // before ws: its workers stop first
  std::unique_ptr<InferenceState> ws;
  std::unique_ptr<BatchedTranscriber> transcriber;
  int batch_size = 0;  // asked for (ggml_batch_size)
  int n_slots = 0;     // built: windows the state, scheduler and transcriber hold
  int per_slot = 0;
  int n_threads = 0;
  int n_encoder_runs = 0;  // of the last Run
  std::vector<FrameRange> chunks;
  ~BatchedState() {
    sched.reset();
    transcriber.reset();
    ws.reset();
  }
};

void BatchedStateDeleter::operator()(BatchedState* b) const { delete b; }

absl::Status CheckBatchSize(const whisper_full_params& params) {
  const int b = params.ggml_batch_size;
  if (b < 0 || b > WHISPER_GGML_MAX_BATCH_SIZE) {
    return WithKind(absl::InvalidArgumentError(absl::StrFormat(
                        "whisper_full_params.ggml_batch_size = %d: expected 0 or 1 (sequential) or 2 .. %d windows",
                        b, WHISPER_GGML_MAX_BATCH_SIZE)),
                    ErrorKind::kSetup);
  }
  if (b <= 1) return absl::OkStatus();
  // With ggml_clip_timestamps the clips are the chunks: no VAD (faster-whisper 1.2.1's batched
  // transcribe: "If this parameter is provided, VAD won't be used").
  if (params.ggml_n_clip_timestamps == 0 && (params.vad_model_path == nullptr || params.vad_model_path[0] == '\0')) {
    return WithKind(absl::InvalidArgumentError(absl::StrFormat(
                        "whisper_full_params.ggml_batch_size = %d needs vad_model_path (a Silero VAD model: the "
                        "chunks are cut at the pauses it finds) or ggml_clip_timestamps (the chunks)",
                        b)),
                    ErrorKind::kSetup);
  }
  if (params.offset_ms != 0 || params.duration_ms != 0) {
    return WithKind(absl::InvalidArgumentError(absl::StrFormat(
                        "whisper_full_params.ggml_batch_size = %d cannot be combined with offset_ms (%d) or "
                        "duration_ms (%d)",
                        b, params.offset_ms, params.duration_ms)),
                    ErrorKind::kSetup);
  }
  return absl::OkStatus();
}

float BatchedMaxSpeechSeconds(const whisper_full_params& params) {
  const float chunk = params.ggml_chunk_length > 0 ? static_cast<float>(params.ggml_chunk_length) : 30.0f;
  // Room for the padding, the overlap and the 0.1 s of silence joined to a stretch.
  return std::min(params.vad_params.max_speech_duration_s, std::max(1.0f, chunk - 1.0f));
}

namespace {

// The batched InferenceState, scheduler and transcriber for n_chunks chunks: min(batch_size,
// n_chunks, kMaxStateDecoders / per_slot) windows (at least 1), so a file shorter than one chunk
// builds a one-window state, and a batch whose windows would need more than kMaxStateDecoders
// decoders in all runs as many windows as fit, the other chunks in later rounds (with a warning
// in the log). Kept while it holds that many windows for the same batch size, decoders per window
// and threads; else remade. An error only when one window alone needs more than kMaxStateDecoders.
absl::Status EnsureBatched(whisper_state* state, int batch_size, int n_chunks, int per_slot, int n_threads) {
  if (per_slot > InferenceState::kMaxStateDecoders) {
    return WithKind(absl::InvalidArgumentError(absl::StrFormat(
                        "whisper_full_params.ggml_batch_size = %d: one window needs %d decoders, more than %d; "
                        "use a smaller beam or best_of",
                        batch_size, per_slot, InferenceState::kMaxStateDecoders)),
                    ErrorKind::kSetup);
  }
  const int max_slots = std::max(1, InferenceState::kMaxStateDecoders / std::max(1, per_slot));
  const int n_slots = std::max(1, std::min({batch_size, n_chunks, max_slots}));
  if (n_slots < std::min(batch_size, n_chunks)) {
    Log(GGML_LOG_LEVEL_WARN,
        "whisper_full: batched: %d windows of %d decoders each would need %d, more than %d: %d windows at a time\n",
        std::min(batch_size, n_chunks), per_slot, std::min(batch_size, n_chunks) * per_slot,
        InferenceState::kMaxStateDecoders, n_slots);
  }
  if (const BatchedState* b = state->batched.get(); b != nullptr && b->batch_size == batch_size &&
                                                    b->n_slots >= n_slots && b->per_slot == per_slot &&
                                                    b->n_threads == n_threads) {
    return absl::OkStatus();
  }
  state->batched.reset();  // free the old buffers first
  const whisper_context* ctx = state->ctx;
  const WhisperModel& model = *ctx->model;
  EncoderOptions encoder;
  encoder.flash_attn = ctx->params.flash_attn;
  auto ws = InferenceState::Create(model, n_slots * per_slot, n_threads, nullptr, encoder, n_slots);
  if (!ws.ok()) return WithKind(ws.status(), ErrorKind::kSetup);
  if (!ctx->aheads.empty()) {
    absl::Status st = (*ws)->SetAlignmentHeads(ctx->aheads);
    if (!st.ok()) return WithKind(st, ErrorKind::kSetup);
  }
  auto next = std::make_unique<BatchedState>();
  next->ws = std::move(*ws);
  auto sched = DecodeScheduler::Create(next->ws.get(), n_slots);
  if (!sched.ok()) return WithKind(sched.status(), ErrorKind::kSetup);
  next->sched = std::move(*sched);
  const WhisperHparams& h = model.hparams();
  next->transcriber = std::make_unique<BatchedTranscriber>(model.special(), h.n_text_ctx, ctx->token_text,
                                                           n_slots, InferenceState::MaxAlignTokens(h),
                                                           h.n_audio_ctx);
  next->batch_size = batch_size;
  next->n_slots = n_slots;
  next->per_slot = per_slot;
  next->n_threads = n_threads;
  state->batched.reset(next.release());
  return absl::OkStatus();
}

struct ChunkSink {
  whisper_state* state;
  const TranscribeHooks* hooks;
};

void AppendChunk(void* user, int chunk, const SegmentList& segments) {
  (void)chunk;
  auto* sink = static_cast<ChunkSink*>(user);
  SegmentList& r = sink->state->results;
  for (size_t i = 0; i < segments.size(); ++i) r.Append() = segments[i];
  if (segments.size() > 0 && sink->hooks->new_segments != nullptr) {
    sink->hooks->new_segments(sink->hooks->user, static_cast<int>(segments.size()));
  }
}

bool AbortBridge(void* user) {
  const auto* s = static_cast<const whisper_state*>(user);
  return s->abort_callback != nullptr && s->abort_callback(s->abort_callback_user_data);
}

}  // namespace

// Each chunk's speech_end: the end (mel frames) of the last VAD stretch (samples, padded) that
// ends inside it; 0 when none does.
static void SetSpeechEnds(const std::vector<SpeechSpan>& spans, std::vector<FrameRange>* chunks) {
  size_t k = 0;
  for (FrameRange& c : *chunks) {
    c.speech_end = 0;
    while (k < spans.size() && spans[k].end / kMelHop <= c.end) {
      if (spans[k].end / kMelHop > c.start) c.speech_end = static_cast<int>(spans[k].end / kMelHop);
      ++k;
    }
  }
}

// The chunks of the batched mode: the clips (tp.clip_frames) as they are, else cut at VAD's
// pauses (with params.vad, at the start of every stretch of the joined speech, after its join's
// silence; else at the pauses VAD finds in the whole audio, none of which is dropped).
static absl::Status PlanBatchedChunks(whisper_state* state, const whisper_full_params& params,
                                      const TranscribeParams& tp, const float* samples, int n_samples, int n_frames,
                                      std::vector<FrameRange>* chunks) {
  if (tp.n_clips > 0) {
    // Under whisper.cpp's rules the sequential loop skips a clip with less than 100 ms left.
    *chunks = ClipChunks(tp.clip_frames, tp.n_clips, n_frames, tp.decoding.whisper_cpp ? 10 : 1);
    return absl::OkStatus();
  }
  std::vector<int> cuts;
  if (state->vad_state.active) {
    for (const VadState::Join& j : state->vad_state.joins) cuts.push_back(static_cast<int>(j.next_start));
  } else {
    absl::Status st = SpeechCuts(state, params, BatchedMaxSpeechSeconds(params), samples, n_samples, &cuts);
    if (!st.ok()) return WithKind(st, ErrorKind::kSetup);
  }
  const int chunk_frames = tp.chunk_frames > 0 ? std::min(tp.chunk_frames, 3000) : 3000;
  *chunks = PlanChunks(cuts, n_frames, chunk_frames);
  if (!state->vad_state.active) {
    SetSpeechEnds(state->vad_state.spans, chunks);
  } else {
    for (FrameRange& c : *chunks) c.speech_end = c.end;  // the joined audio is all speech
  }
  return absl::OkStatus();
}

absl::Status RunBatched(whisper_state* state, const whisper_full_params& params, const TranscribeParams& clip_tp,
                        const float* samples, int n_samples) {
  const int n_frames = clip_tp.decoding.whisper_cpp ? state->mel_n_len_org : state->mel_n_frames_audio;
  std::vector<FrameRange> chunks;
  absl::Status st = PlanBatchedChunks(state, params, clip_tp, samples, n_samples, n_frames, &chunks);
  if (!st.ok()) return st;
  TranscribeParams tp = clip_tp;  // the clips are the chunks now
  tp.clip_frames = nullptr;
  tp.n_clips = 0;
  st = EnsureBatched(state, params.ggml_batch_size, static_cast<int>(chunks.size()), DecodersNeeded(tp.decoding),
                     params.n_threads);
  if (!st.ok()) return st;
  BatchedState& b = *state->batched;
  b.ws->set_gelu(GeluOfRules(tp.decoding.whisper_cpp));
  b.ws->set_int8_attention(static_cast<Int8Attention>(state->ctx->int8_attention.load()));
  b.chunks.swap(chunks);
  Log(GGML_LOG_LEVEL_INFO, "whisper_full: batched: %zu chunks, %d at a time\n", b.chunks.size(), b.n_slots);
  state->abort_callback = params.abort_callback;
  state->abort_callback_user_data = params.abort_callback_user_data;
  b.sched->SetAbort(AbortBridge, state);
  const InferenceTimings t0 = b.ws->timings();
  const int64_t t_loop = NowUs();
  ChunkSink sink{state, &tp.hooks};
  TranscribeStats stats;
  st = b.transcriber->Run(*b.sched, state->mel_data, state->mel_n_len, n_frames, tp, b.chunks.data(),
                          static_cast<int>(b.chunks.size()), AppendChunk, &sink, &stats);
  b.sched->SetAbort(nullptr, nullptr);
  state->abort_callback = nullptr;
  state->abort_callback_user_data = nullptr;
  const InferenceTimings& t1 = b.ws->timings();
  const int64_t enc_us = static_cast<int64_t>((t1.encode_ms - t0.encode_ms) * 1000.0);
  const int64_t dec_us = static_cast<int64_t>((t1.decode_ms - t0.decode_ms) * 1000.0);
  state->t_encode_us += enc_us;
  state->n_encode += t1.n_encode - t0.n_encode;
  b.n_encoder_runs = t1.n_encode - t0.n_encode;
  state->t_batchd_us += dec_us;
  state->n_batchd += t1.n_decode - t0.n_decode;
  state->t_sample_us += std::max<int64_t>(0, NowUs() - t_loop - enc_us - dec_us);
  state->n_sample += stats.n_windows;
  state->n_fail_p += stats.n_fallbacks;
  if (st.ok()) return st;
  const bool aborted = st.code() == absl::StatusCode::kCancelled;
  const ErrorKind kind = aborted || st.code() != absl::StatusCode::kInvalidArgument ? ErrorKind::kTokenDecode
                                                                                    : ErrorKind::kSetup;
  return WithKind(absl::Status(st.code(), absl::StrCat(aborted ? "aborted: " : "failed: ", st.message())), kind);
}

}  // namespace api
}  // namespace whisper

extern "C" {

int whisper_ggml_batched_stats_from_state(struct whisper_state* state, int* n_chunks, int* n_windows,
                                          int* n_encoder_runs) {
  if (state == nullptr || state->batched == nullptr) return -1;
  const whisper::api::BatchedState& b = *state->batched;
  if (n_chunks != nullptr) *n_chunks = static_cast<int>(b.chunks.size());
  if (n_windows != nullptr) *n_windows = b.n_slots;
  if (n_encoder_runs != nullptr) *n_encoder_runs = b.n_encoder_runs;
  return 0;
}

int whisper_ggml_batched_stats(struct whisper_context* ctx, int* n_chunks, int* n_windows, int* n_encoder_runs) {
  if (ctx == nullptr) return -1;
  return whisper_ggml_batched_stats_from_state(ctx->state, n_chunks, n_windows, n_encoder_runs);
}

}  // extern "C"
