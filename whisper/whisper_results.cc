// whisper/whisper.h: the results of whisper_full (segments, tokens, their times and texts) as
// the getters hand them out; whisper/whisper_full.cc fills them, in the input's time base.
#include <cstddef>
#include <cstring>
#include <memory>
#include <type_traits>

#include "absl/strings/ascii.h"
#include "whisper/compression_ratio.h"
#include "whisper/whisper_impl.h"

// whisper_token_data is handed out as whisper::TokenData (and back to the logits filter).
static_assert(sizeof(whisper_token_data) == sizeof(whisper::TokenData), "token data layouts differ");
static_assert(offsetof(whisper_token_data, t0) == offsetof(whisper::TokenData, t0), "token data layouts differ");
static_assert(offsetof(whisper_token_data, vlen) == offsetof(whisper::TokenData, vlen), "token data layouts differ");
static_assert(std::is_standard_layout<whisper::TokenData>::value, "TokenData must be standard layout");

using whisper::api::CheckPair;
using whisper::api::Log;

extern "C" {

// ---- Results ----------------------------------------------------------------------------------

static const whisper::Segment* SegmentAt(const whisper_state* state, int i, const char* func) {
  if (state == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: whisper_state is NULL\n", func);
    return nullptr;
  }
  if (i < 0 || static_cast<size_t>(i) >= state->results.size()) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: segment %d is out of range [0, %zu)\n", func, i, state->results.size());
    return nullptr;
  }
  return &state->results[static_cast<size_t>(i)];
}

static const whisper::TokenData* TokenAt(const whisper_state* state, int i, int j, const char* func) {
  const whisper::Segment* s = SegmentAt(state, i, func);
  if (s == nullptr) return nullptr;
  if (j < 0 || static_cast<size_t>(j) >= s->tokens.size()) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: token %d of segment %d is out of range [0, %zu)\n", func, j, i, s->tokens.size());
    return nullptr;
  }
  return &s->tokens[static_cast<size_t>(j)];
}

static whisper_state* DefaultState(whisper_context* ctx) { return ctx != nullptr ? ctx->state : nullptr; }

int whisper_full_n_segments_from_state(struct whisper_state* state) {
  if (state == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: whisper_state is NULL\n", __func__);
    return 0;
  }
  return static_cast<int>(state->results.size());
}
int whisper_full_n_segments(struct whisper_context* ctx) { return whisper_full_n_segments_from_state(DefaultState(ctx)); }

int whisper_full_lang_id_from_state(struct whisper_state* state) { return state != nullptr ? state->lang_id : -1; }
int whisper_full_lang_id(struct whisper_context* ctx) { return whisper_full_lang_id_from_state(DefaultState(ctx)); }

// Times are the input's (with VAD, whisper_full mapped them back from the joined speech).
int whisper_ggml_full_get_segment_lang_id_from_state(struct whisper_state* state, int i) {
  const whisper::Segment* s = SegmentAt(state, i, __func__);
  return s != nullptr ? s->language_id : -1;
}
int whisper_ggml_full_get_segment_lang_id(struct whisper_context* ctx, int i) {
  return whisper_ggml_full_get_segment_lang_id_from_state(DefaultState(ctx), i);
}

int64_t whisper_full_get_segment_t0_from_state(struct whisper_state* state, int i) {
  const whisper::Segment* s = SegmentAt(state, i, __func__);
  return s != nullptr ? s->t0 : 0;
}
int64_t whisper_full_get_segment_t0(struct whisper_context* ctx, int i) {
  return whisper_full_get_segment_t0_from_state(DefaultState(ctx), i);
}
int64_t whisper_full_get_segment_t1_from_state(struct whisper_state* state, int i) {
  const whisper::Segment* s = SegmentAt(state, i, __func__);
  return s != nullptr ? s->t1 : 0;
}
int64_t whisper_full_get_segment_t1(struct whisper_context* ctx, int i) {
  return whisper_full_get_segment_t1_from_state(DefaultState(ctx), i);
}
bool whisper_full_get_segment_speaker_turn_next_from_state(struct whisper_state* state, int i) {
  const whisper::Segment* s = SegmentAt(state, i, __func__);
  return s != nullptr && s->speaker_turn_next;
}
bool whisper_full_get_segment_speaker_turn_next(struct whisper_context* ctx, int i) {
  return whisper_full_get_segment_speaker_turn_next_from_state(DefaultState(ctx), i);
}
const char* whisper_full_get_segment_text_from_state(struct whisper_state* state, int i) {
  const whisper::Segment* s = SegmentAt(state, i, __func__);
  return s != nullptr ? s->text.c_str() : nullptr;
}
const char* whisper_full_get_segment_text(struct whisper_context* ctx, int i) {
  return whisper_full_get_segment_text_from_state(DefaultState(ctx), i);
}
float whisper_full_get_segment_no_speech_prob_from_state(struct whisper_state* state, int i) {
  const whisper::Segment* s = SegmentAt(state, i, __func__);
  return s != nullptr ? s->no_speech_prob : 0.0f;
}
float whisper_full_get_segment_no_speech_prob(struct whisper_context* ctx, int i) {
  return whisper_full_get_segment_no_speech_prob_from_state(DefaultState(ctx), i);
}
int whisper_full_n_tokens_from_state(struct whisper_state* state, int i) {
  const whisper::Segment* s = SegmentAt(state, i, __func__);
  return s != nullptr ? static_cast<int>(s->tokens.size()) : 0;
}
int whisper_full_n_tokens(struct whisper_context* ctx, int i) {
  return whisper_full_n_tokens_from_state(DefaultState(ctx), i);
}
const char* whisper_full_get_token_text_from_state(struct whisper_context* ctx, struct whisper_state* state, int i,
                                                   int j) {
  if (!CheckPair(ctx, state, __func__)) return nullptr;
  const whisper::TokenData* t = TokenAt(state, i, j, __func__);
  return t != nullptr ? ctx->model->vocab().token(t->id).c_str() : nullptr;
}
const char* whisper_full_get_token_text(struct whisper_context* ctx, int i, int j) {
  return whisper_full_get_token_text_from_state(ctx, DefaultState(ctx), i, j);
}
whisper_token whisper_full_get_token_id_from_state(struct whisper_state* state, int i, int j) {
  const whisper::TokenData* t = TokenAt(state, i, j, __func__);
  return t != nullptr ? t->id : -1;
}
whisper_token whisper_full_get_token_id(struct whisper_context* ctx, int i, int j) {
  return whisper_full_get_token_id_from_state(DefaultState(ctx), i, j);
}
whisper_token_data whisper_full_get_token_data_from_state(struct whisper_state* state, int i, int j) {
  const whisper::TokenData* t = TokenAt(state, i, j, __func__);
  whisper_token_data d{};
  if (t == nullptr) {
    d.id = d.tid = -1;
    d.t0 = d.t1 = d.t_dtw = -1;
    return d;
  }
  std::memcpy(&d, t, sizeof(d));
  return d;
}
whisper_token_data whisper_full_get_token_data(struct whisper_context* ctx, int i, int j) {
  return whisper_full_get_token_data_from_state(DefaultState(ctx), i, j);
}
float whisper_full_get_token_p_from_state(struct whisper_state* state, int i, int j) {
  const whisper::TokenData* t = TokenAt(state, i, j, __func__);
  return t != nullptr ? t->p : 0.0f;
}
float whisper_full_get_token_p(struct whisper_context* ctx, int i, int j) {
  return whisper_full_get_token_p_from_state(DefaultState(ctx), i, j);
}

// whisper.cpp 1.9.3's token and VAD-segment times. The token data is already in the input's
// time (MapNewResults mapped it by 1.9.3's token rule), so these read it; -1 out of range.
int64_t whisper_full_get_token_t0_from_state(struct whisper_state* state, int i, int j) {
  const whisper::TokenData* t = TokenAt(state, i, j, __func__);
  return t != nullptr ? t->t0 : -1;
}
int64_t whisper_full_get_token_t0(struct whisper_context* ctx, int i, int j) {
  return whisper_full_get_token_t0_from_state(DefaultState(ctx), i, j);
}
int64_t whisper_full_get_token_t1_from_state(struct whisper_state* state, int i, int j) {
  const whisper::TokenData* t = TokenAt(state, i, j, __func__);
  return t != nullptr ? t->t1 : -1;
}
int64_t whisper_full_get_token_t1(struct whisper_context* ctx, int i, int j) {
  return whisper_full_get_token_t1_from_state(DefaultState(ctx), i, j);
}

static const whisper::VadState::Speech* VadSegmentAt(const whisper_state* state, int i, const char* func) {
  if (state == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: whisper_state is NULL\n", func);
    return nullptr;
  }
  const auto& speech = state->vad_state.speech;
  if (i < 0 || static_cast<size_t>(i) >= speech.size()) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: VAD segment %d is out of range [0, %zu)\n", func, i, speech.size());
    return nullptr;
  }
  return &speech[static_cast<size_t>(i)];
}
int whisper_full_n_vad_segments_from_state(struct whisper_state* state) {
  if (state == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: whisper_state is NULL\n", __func__);
    return 0;
  }
  return static_cast<int>(state->vad_state.speech.size());
}
int whisper_full_n_vad_segments(struct whisper_context* ctx) {
  return whisper_full_n_vad_segments_from_state(DefaultState(ctx));
}
int64_t whisper_full_get_vad_segment_t0_from_state(struct whisper_state* state, int i) {
  const whisper::VadState::Speech* v = VadSegmentAt(state, i, __func__);
  return v != nullptr ? v->t0 : -1;
}
int64_t whisper_full_get_vad_segment_t0(struct whisper_context* ctx, int i) {
  return whisper_full_get_vad_segment_t0_from_state(DefaultState(ctx), i);
}
int64_t whisper_full_get_vad_segment_t1_from_state(struct whisper_state* state, int i) {
  const whisper::VadState::Speech* v = VadSegmentAt(state, i, __func__);
  return v != nullptr ? v->t1 : -1;
}
int64_t whisper_full_get_vad_segment_t1(struct whisper_context* ctx, int i) {
  return whisper_full_get_vad_segment_t1_from_state(DefaultState(ctx), i);
}

int whisper_ggml_full_get_token_word_start_from_state(struct whisper_state* state, int i, int j) {
  if (TokenAt(state, i, j, __func__) == nullptr) return -1;
  const whisper::Segment& s = state->results[i];
  if (s.word_begin.size() != s.tokens.size()) return -1;
  return s.word_begin[j] != 0 ? 1 : 0;
}
int whisper_ggml_full_get_token_word_start(struct whisper_context* ctx, int i, int j) {
  return whisper_ggml_full_get_token_word_start_from_state(DefaultState(ctx), i, j);
}

float whisper_ggml_full_get_token_word_probability_from_state(struct whisper_state* state, int i, int j) {
  if (TokenAt(state, i, j, __func__) == nullptr) return -1.0f;
  const whisper::Segment& s = state->results[i];
  if (s.word_probability.size() != s.tokens.size()) return -1.0f;
  return s.word_probability[j];
}
float whisper_ggml_full_get_token_word_probability(struct whisper_context* ctx, int i, int j) {
  return whisper_ggml_full_get_token_word_probability_from_state(DefaultState(ctx), i, j);
}

float whisper_ggml_full_get_segment_avg_logprob_from_state(struct whisper_state* state, int i) {
  const whisper::Segment* s = SegmentAt(state, i, __func__);
  if (s == nullptr) return 0.0f;
  const whisper::Token eot = state->ctx->model->special().eot;
  double sum = 0.0;
  int n = 0;
  for (const whisper::TokenData& t : s->tokens) {
    if (t.id >= eot) continue;
    sum += t.plog;
    ++n;
  }
  return n > 0 ? static_cast<float>(sum / n) : 0.0f;
}
float whisper_ggml_full_get_segment_avg_logprob(struct whisper_context* ctx, int i) {
  return whisper_ggml_full_get_segment_avg_logprob_from_state(DefaultState(ctx), i);
}

float whisper_ggml_full_get_segment_compression_ratio_from_state(struct whisper_state* state, int i) {
  const whisper::Segment* s = SegmentAt(state, i, __func__);
  if (s == nullptr) return 0.0f;
  if (state->compression == nullptr) state->compression = std::make_unique<whisper::CompressionRatio>();
  return static_cast<float>(state->compression->Of(absl::StripAsciiWhitespace(s->text)));
}
float whisper_ggml_full_get_segment_compression_ratio(struct whisper_context* ctx, int i) {
  return whisper_ggml_full_get_segment_compression_ratio_from_state(DefaultState(ctx), i);
}

int whisper_ggml_full_get_segment_decoding_from_state(struct whisper_state* state, int i,
                                                    struct whisper_ggml_segment_decoding* out) {
  if (out == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: out is NULL\n", __func__);
    return -1;
  }
  const whisper::Segment* s = SegmentAt(state, i, __func__);
  if (s == nullptr) return -1;
  *out = {s->window.seek, s->window.temperature, s->window.avg_logprob, s->window.compression_ratio,
          s->opening_timestamp};
  return 0;
}
int whisper_ggml_full_get_segment_decoding(struct whisper_context* ctx, int i, struct whisper_ggml_segment_decoding* out) {
  return whisper_ggml_full_get_segment_decoding_from_state(DefaultState(ctx), i, out);
}

int whisper_ggml_state_set_dtw(struct whisper_state* state, int enabled) {
  if (state == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: whisper_state is NULL\n", __func__);
    return -1;
  }
  state->dtw_enabled = enabled != 0;
  return 0;
}

}  // extern "C"
