// whisper/whisper.h: whisper_full_params and their defaults, and whisper_full(_with_state,
// _parallel) as named steps; failures carry their kind (whisper/status_codes.h) to one place
// that logs them and returns whisper.cpp's code (ReportFull). The results' getters are in
// whisper/whisper_results.cc.
#include <algorithm>
#include <cfloat>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "whisper/status_codes.h"
#include "whisper/vocab.h"
#include "whisper/whisper_impl.h"

using whisper::api::CheckPair;
using whisper::api::Log;
using whisper::api::NowUs;

namespace whisper {
namespace api {
namespace {

// whisper_full_parallel: at most this many parts (each a whisper_state and a thread; whisper.cpp
// has no limit, and 1000 parts of jfk.wav took 17 GB).
constexpr int kMaxProcessors = 64;
// OpenAI whisper transcribe()'s compression_ratio_threshold default (faster-whisper's too).
constexpr float kOpenAiCompressionRatioThold = 2.4f;

// What the window loop's hooks need to call the C callbacks.
struct CallbackBridge {
  whisper_context* ctx;
  whisper_state* state;
  const whisper_full_params* params;
};

bool EncoderBegin(void* user) {
  auto* b = static_cast<CallbackBridge*>(user);
  if (b->params->encoder_begin_callback == nullptr) return true;
  const bool go = b->params->encoder_begin_callback(b->ctx, b->state, b->params->encoder_begin_callback_user_data);
  if (!go) Log(GGML_LOG_LEVEL_ERROR, "whisper_full_with_state: encoder_begin_callback returned false - aborting\n");
  return go;
}

void Progress(void* user, int pct) {
  auto* b = static_cast<CallbackBridge*>(user);
  if (b->params->progress_callback != nullptr) {
    b->params->progress_callback(b->ctx, b->state, pct, b->params->progress_callback_user_data);
  }
}

std::string Timestamp(int64_t t) {  // whisper.cpp to_timestamp: "hh:mm:ss.mmm"
  char buf[32];
  return whisper_ggml_format_timestamp(t, 0, buf, sizeof(buf));
}

void NewSegments(void* user, int n_new) {
  auto* b = static_cast<CallbackBridge*>(user);
  MapNewResults(b->state);  // the callbacks see the input's times
  if (b->params->print_realtime) {
    const SegmentList& r = b->state->results;
    for (size_t i = r.size() - static_cast<size_t>(n_new); i < r.size(); ++i) {
      if (b->params->print_timestamps) {
        std::printf("[%s --> %s]  %s\n", Timestamp(r[i].t0).c_str(), Timestamp(r[i].t1).c_str(), r[i].text.c_str());
      } else {
        std::printf("%s", r[i].text.c_str());
      }
      std::fflush(stdout);
    }
  }
  if (b->params->new_segment_callback != nullptr) {
    b->params->new_segment_callback(b->ctx, b->state, n_new, b->params->new_segment_callback_user_data);
  }
}

void LogitsFilter(void* user, const TokenData* tokens, int n_tokens, float* logits) {
  auto* b = static_cast<CallbackBridge*>(user);
  b->params->logits_filter_callback(b->ctx, b->state, reinterpret_cast<const whisper_token_data*>(tokens), n_tokens,
                                    logits, b->params->logits_filter_callback_user_data);
}

// whisper.cpp's suppress_regex: every token whose text (whisper_token_to_str) matches the whole
// ECMAScript regex is suppressed at every step, after the logits filter callback. The ids are
// found once per regex (whisper.cpp matches the vocabulary at each step). False, with a message,
// for an invalid regex. `nst`: the non-speech list to add (null: none).
bool PrepareSuppressRegex(whisper_context* ctx, whisper_state* state, const char* regex,
                          const std::vector<Token>* nst, const char* func) {
  if (state->suppress_regex == regex && state->suppress_regex_nst == nst && !state->suppress_ids.empty()) {
    return true;
  }
  state->suppress_regex.clear();
  state->suppress_ids.clear();
  try {
    const std::regex re(regex);
    if (nst != nullptr) state->suppress_ids = *nst;
    for (int t = 0; t < whisper_n_vocab(ctx); ++t) {
      if (std::regex_match(whisper_token_to_str(ctx, t), re)) state->suppress_ids.push_back(t);
    }
  } catch (const std::regex_error& e) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: whisper_full_params.suppress_regex = '%s': not a valid regular expression (%s)\n",
        func, regex, e.what());
    state->suppress_ids.clear();
    return false;
  }
  state->suppress_regex = regex;
  state->suppress_regex_nst = nst;
  if (state->suppress_ids.empty()) state->suppress_ids.push_back(-1);  // "matched nothing", cached; skipped below
  return true;
}


// ---- whisper_full_with_state, step by step -----------------------------------------------------
// Each step returns OK or the failure with its kind (whisper/status_codes.h); ReportFull logs it
// and turns it into whisper.cpp's return value. A failure whose helper has logged it already
// carries no message (Logged). `*done`: the call has finished successfully (nothing to decode).

constexpr char kFull[] = "whisper_full_with_state";

// A failure its helper has logged already: -1 (kSetup) unless another kind is given.
absl::Status Logged(ErrorKind kind = ErrorKind::kSetup) { return WithKind(absl::UnknownError(""), kind); }

absl::Status SetupError(const std::string& message) {
  return WithKind(absl::InvalidArgumentError(message), ErrorKind::kSetup);
}

// The arguments whisper_full_with_state checks before touching the audio.
// ggml_clip_timestamps into state->clip_frames (faster-whisper's seek_points: round(t * 100), an
// odd count ended by the audio's end, which Transcriber caps to the audio) and
// ggml_hallucination_silence_thold, each checked; VAD is off with clips (a warning).
absl::Status CheckClips(whisper_state* state, const whisper_full_params& params) {
  const int n = params.ggml_n_clip_timestamps;
  state->clip_frames.clear();
  if (n < 0 || (n > 0 && params.ggml_clip_timestamps == nullptr)) {
    return SetupError(absl::StrFormat("whisper_full_params.ggml_n_clip_timestamps = %d with %s ggml_clip_timestamps: "
                                      "expected >= 0 values in an array", n,
                                      params.ggml_clip_timestamps == nullptr ? "NULL" : "an"));
  }
  for (int i = 0; i < n; ++i) {
    const float t = params.ggml_clip_timestamps[i];
    if (!(t >= 0.0f) || std::isinf(t)) {
      return SetupError(absl::StrFormat("whisper_full_params.ggml_clip_timestamps[%d] = %g: expected seconds >= 0", i,
                                        t));
    }
    // Python's round(): to nearest, ties to even; at most ~116 days so the frame fits an int.
    state->clip_frames.push_back(static_cast<int>(std::min(1e9, std::nearbyint(static_cast<double>(t) * 100.0))));
  }
  if (n % 2 == 1) state->clip_frames.push_back(INT_MAX);
  if (n > 0 && (params.offset_ms != 0 || params.duration_ms != 0)) {
    return SetupError(absl::StrFormat("whisper_full_params.ggml_clip_timestamps with offset_ms %d / duration_ms %d: "
                                      "expected offset_ms and duration_ms 0 (the clips say what to transcribe)",
                                      params.offset_ms, params.duration_ms));
  }
  if (n > 0 && params.vad) {
    // faster-whisper 1.2.1 transcribe(): "vad_filter will be ignored if clip_timestamps is used".
    Log(GGML_LOG_LEVEL_WARN, "%s: vad is ignored with whisper_full_params.ggml_clip_timestamps (as faster-whisper's "
        "vad_filter with clip_timestamps)\n", kFull);
  }
  const float h = params.ggml_hallucination_silence_thold;
  if (std::isnan(h) || std::isinf(h)) {
    return SetupError(absl::StrFormat("whisper_full_params.ggml_hallucination_silence_thold = %g: expected seconds "
                                      ">= 0, or negative for off", h));
  }
  return absl::OkStatus();
}

absl::Status CheckCall(whisper_context* ctx, whisper_state* state, const whisper_full_params& params,
                       const float* samples, int n_samples) {
  if (!CheckPair(ctx, state, kFull)) return Logged();
  state->results.Clear();
  state->n_results_mapped = 0;
  state->vad_state.speech.clear();  // whisper_full_n_vad_segments: 0 unless this call's VAD finds speech
  if (n_samples < 0 || (n_samples > 0 && samples == nullptr)) {
    return SetupError(absl::StrFormat("n_samples = %d with %s samples", n_samples, samples == nullptr ? "NULL" : ""));
  }
  if (params.n_threads < 1 || params.n_threads > GGML_THREADPOOL_MAX_THREADS) {
    return SetupError(absl::StrFormat("whisper_full_params.n_threads = %d, expected 1 .. %d", params.n_threads,
                                      GGML_THREADPOOL_MAX_THREADS));
  }
  return CheckClips(state, params);
}

// VAD (whisper.cpp's whisper_vad: only the speech stretches, joined; the results are mapped back
// to the input's times as they come, MapNewResults), then the log-mel of what is left.
absl::Status PrepareAudio(whisper_state* state, const whisper_full_params& params, const float* samples,
                          int n_samples, bool* done) {
  state->vad_state.active = false;
  if (params.vad && params.ggml_n_clip_timestamps == 0 && n_samples > 0) {
    const absl::Status st = FilterSpeech(state, params, samples, n_samples);
    if (!st.ok()) return SetupError(std::string(st.message()));
    if (state->vad_state.filtered.empty()) {  // no speech
      *done = true;
      return absl::OkStatus();
    }
    samples = state->vad_state.filtered.data();
    n_samples = static_cast<int>(state->vad_state.filtered.size());
  }
  if (n_samples > 0) {
    if (n_samples < 1600) {  // whisper.cpp: under 100 ms nothing is processed
      Log(GGML_LOG_LEVEL_WARN, "%s: input is too short - %d ms < 100 ms. consider padding the input audio with silence\n",
          kFull, n_samples / 16);
      *done = true;
      return absl::OkStatus();
    }
    if (!ComputeMel(state, samples, n_samples, params.n_threads, kFull)) return Logged(ErrorKind::kMel);
  } else if (state->mel_data == nullptr) {
    return SetupError("no samples and no mel (whisper_pcm_to_mel / whisper_set_mel)");
  }
  return absl::OkStatus();
}

// The decoder count (whisper.cpp's rules: beam_size for beam search at t = 0, best_of when
// sampling), audio_ctx and the offsets against the model and the mel.
absl::Status CheckWindows(whisper_context* ctx, whisper_state* state, const whisper_full_params& params,
                          DecodingParams* dp, bool* done) {
  const WhisperHparams& hp = ctx->model->hparams();
  dp->beam_size = params.strategy == WHISPER_SAMPLING_BEAM_SEARCH ? std::max(1, params.beam_search.beam_size) : 1;
  dp->beam_search = params.strategy == WHISPER_SAMPLING_BEAM_SEARCH;
  dp->best_of = std::max(1, params.greedy.best_of);
  static_assert(WHISPER_GGML_MAX_DECODERS == kMaxDecodingWidth, "whisper.h and decoding.h disagree");
  if (dp->beam_size > WHISPER_GGML_MAX_DECODERS || dp->best_of > WHISPER_GGML_MAX_DECODERS) {
    return WithKind(absl::InvalidArgumentError(absl::StrFormat("too many decoders requested (%d), max = %d",
                                                               std::max(dp->beam_size, dp->best_of), WHISPER_GGML_MAX_DECODERS)),
                    ErrorKind::kTooManyDecoders);
  }
  if (params.audio_ctx > hp.n_audio_ctx || params.audio_ctx < 0) {
    return WithKind(absl::InvalidArgumentError(absl::StrFormat("audio_ctx is larger than the maximum allowed (%d > %d)",
                                                               params.audio_ctx, hp.n_audio_ctx)),
                    ErrorKind::kAudioCtx);
  }
  if (params.offset_ms < 0 || params.duration_ms < 0) {
    return SetupError(absl::StrFormat("offset_ms %d and duration_ms %d must not be negative", params.offset_ms,
                                      params.duration_ms));
  }
  // whisper.cpp: less than 100 ms (10 frames) between the offset and the end is "too short": a
  // warning, no segments, success.
  const int64_t seek_start = params.offset_ms / 10;
  const int64_t seek_end = params.duration_ms == 0 ? state->mel_n_len_org : seek_start + params.duration_ms / 10;
  if (seek_end < seek_start + 10 || seek_start >= state->mel_n_len_org) {
    Log(GGML_LOG_LEVEL_WARN,
        "%s: input is too short - %lld ms < 100 ms (offset %d ms, duration %d ms, audio %d ms). consider padding "
        "the input audio with silence\n",
        kFull, static_cast<long long>((std::min<int64_t>(seek_end, state->mel_n_len_org) - seek_start) * 10),
        params.offset_ms, params.duration_ms, state->mel_n_len_org * 10);
    *done = true;
  }
  return absl::OkStatus();
}

// The rest of the decoding parameters: thresholds, the rules (whisper.cpp's or OpenAI's) and the
// logit filter (suppression lists, the regex, the caller's hook through `bridge`).
absl::Status FillDecoding(whisper_context* ctx, whisper_state* state, const whisper_full_params& params,
                          CallbackBridge* bridge, DecodingParams* dp) {
  const WhisperModel& model = *ctx->model;
  const WhisperHparams& hp = model.hparams();
  dp->temperature = params.temperature;
  dp->temperature_inc = params.temperature_inc;
  dp->entropy_thold = params.entropy_thold;
  dp->logprob_thold = params.logprob_thold;
  dp->no_speech_thold = params.no_speech_thold;
  dp->length_penalty = params.length_penalty;
  dp->max_tokens_per_window = hp.n_text_ctx / 2 - 4;
  dp->max_tokens = std::max(0, params.max_tokens);
  dp->single_segment = params.single_segment;
  dp->whisper_cpp = ctx->decoding.load() == WHISPER_GGML_DECODING_WHISPER_CPP;
  // OpenAI's rules add its compression-ratio fallback (params.ggml_compression_ratio_thold, 2.4 by
  // default as faster-whisper's compression_ratio_threshold; 0: off) beside the entropy rule;
  // whisper.cpp has only the latter.
  if (!(params.ggml_compression_ratio_thold >= 0.0f)) {
    return SetupError(absl::StrFormat("whisper_full_params.ggml_compression_ratio_thold = %g: expected >= 0 "
                                      "(0: no compression-ratio check)",
                                      params.ggml_compression_ratio_thold));
  }
  dp->compression_ratio_thold = dp->whisper_cpp ? 0.0f : params.ggml_compression_ratio_thold;
  absl::Status st = FillFasterWhisperOptions(params, dp);
  if (!st.ok()) return st;
  dp->filter.suppress_blank = params.suppress_blank;
  dp->filter.blank_token = model.vocab().id(" ");
  dp->filter.no_timestamps = params.no_timestamps;
  // whisper.cpp: first-release distilled models (2 text layers, not large-v3's vocabulary) need
  // <|notimestamps|>.
  if (hp.n_text_layer == 2 && hp.n_vocab != 51866 && !params.no_timestamps) {
    Log(GGML_LOG_LEVEL_WARN, "%s: using first release distilled models - forcing no_timestamps\n", kFull);
    dp->filter.no_timestamps = true;
  }
  dp->filter.max_initial_ts = params.max_initial_ts;
  // OpenAI's first-step rule (faster-whisper's max_initial_timestamp: 0 allows <|0.00|> only).
  dp->filter.openai_initial_rule = !dp->whisper_cpp;
  if (!dp->whisper_cpp && !(params.max_initial_ts >= 0.0f)) {
    return SetupError(absl::StrFormat("whisper_full_params.max_initial_ts = %g: expected >= 0 seconds under "
                                      "OpenAI's rules (faster-whisper's max_initial_timestamp)",
                                      params.max_initial_ts));
  }
  dp->filter.tdrz = params.tdrz_enable;
  const std::vector<Token>* nst = nullptr;
  st = SuppressList(ctx, state, params, dp->whisper_cpp, &nst);
  if (!st.ok()) return st;
  dp->filter.suppress = nst;
  if (params.suppress_regex != nullptr && params.suppress_regex[0] != '\0') {
    if (nst == &state->suppress_list) state->suppress_regex.clear();  // the list may have changed
    if (!PrepareSuppressRegex(ctx, state, params.suppress_regex, nst, kFull)) return Logged();
    dp->filter.suppress = &state->suppress_ids;
  }
  if (params.logits_filter_callback != nullptr) {
    dp->filter.hook = LogitsFilter;
    dp->filter.hook_user = bridge;
  }
  return PrepareGrammar(ctx, state, params, dp);
}

// The language: detected when asked (or unset) on multilingual models, else the code or name
// given; 0 on English-only models.
absl::Status ChooseLanguage(whisper_context* ctx, whisper_state* state, const whisper_full_params& params,
                            int* lang_id) {
  *lang_id = 0;
  if (!ctx->model->special().multilingual) return absl::OkStatus();
  const bool detect = params.language == nullptr || params.language[0] == '\0' ||
                      std::strcmp(params.language, "auto") == 0 || params.detect_language;
  if (detect) {
    // faster-whisper 1.2.1 transcribe(): from the first clip's start when it lies in the audio
    // (int(start * frames_per_second) < content_frames), else from 0.
    int offset_ms = 0;
    if (!state->clip_frames.empty() && params.ggml_clip_timestamps != nullptr) {
      const int frame = static_cast<int>(std::min(1e9, static_cast<double>(params.ggml_clip_timestamps[0]) * 100.0));
      if (frame < state->mel_n_frames_audio) offset_ms = frame * 10;
    }
    float probs[kMaxLanguages];
    *lang_id = whisper_lang_auto_detect_with_state(ctx, state, offset_ms, params.n_threads, probs);
    if (*lang_id < 0) return WithKind(absl::InternalError("failed to auto-detect language"), ErrorKind::kLanguage);
    Log(GGML_LOG_LEVEL_INFO, "%s: auto-detected language: %s (p = %f)\n", kFull, LanguageCode(*lang_id),
        probs[*lang_id]);
    return absl::OkStatus();
  }
  *lang_id = LanguageId(params.language);
  if (*lang_id < 0) *lang_id = whisper_lang_id(params.language);  // a full name, or logs the unknown code
  if (*lang_id < 0) {
    return SetupError(absl::StrFormat("whisper_full_params.language = '%s': unknown language", params.language));
  }
  return absl::OkStatus();
}

// The initial prompt into tp: the token list, or the text tokenized (cached while the text and
// the rules are the same): whisper.cpp's whisper_tokenize of the text under its rules;
// faster-whisper's tokenizer.encode(" " + initial_prompt.strip()) under OpenAI's (transcribe.py).
void SetPrompt(whisper_context* ctx, whisper_state* state, const whisper_full_params& params, TranscribeParams* tp) {
  tp->initial_prompt = params.prompt_tokens;
  tp->n_initial_prompt = params.prompt_tokens != nullptr ? std::max(0, params.prompt_n_tokens) : 0;
  if (params.prompt_tokens != nullptr || params.initial_prompt == nullptr || params.initial_prompt[0] == '\0') return;
  const bool openai = !tp->decoding.whisper_cpp;
  if (state->prompt_ids.empty() || state->prompt_text != params.initial_prompt || state->prompt_openai != openai) {
    int skipped = 0;
    state->prompt_ids = openai ? ctx->tokenizer->EncodeOpenAi(SpaceAndStripped(params.initial_prompt), &skipped)
                               : ctx->tokenizer->EncodeSkipping(params.initial_prompt, &skipped);
    state->prompt_text = params.initial_prompt;
    state->prompt_openai = openai;
    if (skipped > 0) {  // whisper.cpp skips them too ("unknown token")
      Log(GGML_LOG_LEVEL_WARN, "%s: initial_prompt: %d byte(s) start no vocabulary entry: skipped\n", kFull,
          skipped);
    }
  }
  tp->initial_prompt = state->prompt_ids.data();
  tp->n_initial_prompt = static_cast<int>(state->prompt_ids.size());
}

// The window loop's parameters but the timestamps' (SetTimestamps).
void FillTranscribe(whisper_context* ctx, whisper_state* state, const whisper_full_params& params,
                    const DecodingParams& dp, int lang_id, TranscribeParams* tp) {
  tp->decoding = dp;
  tp->offset_ms = params.offset_ms;
  tp->duration_ms = params.duration_ms;
  tp->audio_ctx = params.audio_ctx;
  if (dp.whisper_cpp) {
    // whisper.cpp always prompts a window with the text before it (n_max_text_ctx = 0 turns that
    // off); no_context = false also starts from the past text of this state's previous call.
    tp->condition_on_previous_text = true;
    tp->keep_past = !params.no_context;
  } else {
    tp->condition_on_previous_text = !params.no_context;  // OpenAI's condition_on_previous_text
  }
  tp->prompt_reset_on_temperature = params.ggml_prompt_reset_on_temperature;
  tp->max_text_ctx = params.n_max_text_ctx;
  tp->language_id = lang_id;
  tp->multilingual = params.ggml_multilingual && ctx->model->special().multilingual;
  if (params.ggml_multilingual && !ctx->model->special().multilingual) {
    // faster-whisper 1.2.1 transcribe(): "The current model is English-only but the multilingual
    // parameter is set to True; setting to False instead."
    Log(GGML_LOG_LEVEL_WARN, "%s: whisper_full_params.ggml_multilingual is set but the model is English-only: "
        "ignored (one language, en)\n", kFull);
  }
  tp->translate = params.translate && ctx->model->special().multilingual;
  tp->carry_initial_prompt = params.carry_initial_prompt;
  tp->segments.print_special = params.print_special;
  tp->segments.single_segment = params.single_segment;
  tp->segments.tdrz = params.tdrz_enable;
  tp->clip_frames = state->clip_frames.empty() ? nullptr : state->clip_frames.data();
  tp->n_clips = static_cast<int>(state->clip_frames.size() / 2);
  SetPrompt(ctx, state, params, tp);
  SetPromptOptions(ctx, state, params, tp);
}

// Token times (heuristic, over `samples`, the audio behind the mel) and DTW word times when asked,
// and VAD's gaps: segments must not span the removed silence, and splitting them needs token times.
void SetTimestamps(whisper_context* ctx, whisper_state* state, const whisper_full_params& params,
                   const float* samples, int n_samples, TranscribeParams* tp) {
  const bool vad_gaps = state->vad_state.active && !state->vad_state.gaps.empty();
  if (vad_gaps) {
    tp->gaps = state->vad_state.gaps.data();
    tp->n_gaps = static_cast<int>(state->vad_state.gaps.size() / 2);
  }
  if (params.token_timestamps || vad_gaps) {
    if (n_samples > 0) {
      state->token_timestamps.Begin(samples, n_samples);
    } else {
      state->token_timestamps.Begin(nullptr, 0);  // no signal: token times stay -1
    }
    tp->token_timestamps = &state->token_timestamps;
    tp->thold_pt = params.thold_pt;
    tp->thold_ptsum = params.thold_ptsum;
    tp->max_len = params.max_len;
    tp->split_on_word = params.split_on_word;
  }
  if (ctx->params.dtw_token_timestamps && state->word_timestamps != nullptr && state->dtw_enabled) {
    // whisper_full_params.ggml_*_punctuations (checked as UTF-8 by FillFasterWhisperOptions).
    const char* prepend = params.ggml_prepend_punctuations;
    const char* append = params.ggml_append_punctuations;
    state->word_timestamps->Begin(prepend != nullptr ? prepend : WordTimestamps::kDefaultPrepended,
                                  append != nullptr ? append : WordTimestamps::kDefaultAppended);
    tp->word_timestamps = state->word_timestamps.get();
  }
  // faster-whisper applies hallucination_silence_threshold only with word_timestamps=True.
  if (params.ggml_hallucination_silence_thold >= 0.0f) {
    if (tp->word_timestamps == nullptr || tp->decoding.whisper_cpp) {
      Log(GGML_LOG_LEVEL_WARN, "%s: whisper_full_params.ggml_hallucination_silence_thold = %g is ignored: it needs DTW "
          "word timestamps (dtw_token_timestamps) and OpenAI's decoding rules\n", kFull,
          params.ggml_hallucination_silence_thold);
    } else {
      tp->hallucination_silence_thold = params.ggml_hallucination_silence_thold;
    }
  }
}

// The window loop over the state's mel, with the call's abort check, and whisper.cpp's counters.
// A failure comes back with the loop's kind and "aborted: " or "failed: " before its message.
absl::Status RunWindows(whisper_state* state, const whisper_full_params& params, const TranscribeParams& tp) {
  state->abort_callback = params.abort_callback;
  state->abort_callback_user_data = params.abort_callback_user_data;
  StateBackend backend(state);
  TranscribeStats stats;
  const int64_t t_enc0 = state->t_encode_us, t_dec0 = state->t_decode_us + state->t_batchd_us + state->t_prompt_us;
  const int64_t t_loop = NowUs();
  // whisper.cpp decodes up to n_len_org (frames overlapping the audio); OpenAI's content_frames
  // is n_samples / 160.
  const int n_frames_audio = tp.decoding.whisper_cpp ? state->mel_n_len_org : state->mel_n_frames_audio;
  const absl::Status st = state->transcriber->Run(backend, state->mel_data, state->mel_n_len, n_frames_audio, tp,
                                                  &state->results, &stats);
  state->abort_callback = nullptr;
  state->abort_callback_user_data = nullptr;
  state->t_sample_us += std::max<int64_t>(0, (NowUs() - t_loop) - (state->t_encode_us - t_enc0) -
                                                 (state->t_decode_us + state->t_batchd_us + state->t_prompt_us - t_dec0));
  state->n_sample += stats.n_windows;
  state->n_fail_p += stats.n_fallbacks;
  if (st.ok()) return st;
  const bool aborted = st.code() == absl::StatusCode::kCancelled;
  return WithKind(absl::Status(st.code(), absl::StrCat(aborted ? "aborted: " : "failed: ", st.message())), KindOf(st));
}

// whisper_full_with_state's steps in order. The results are in the input's time base when it
// returns, whatever it returns.
absl::Status FullWithState(whisper_context* ctx, whisper_state* state, const whisper_full_params& params,
                           const float* samples, int n_samples) {
  absl::Status st = CheckCall(ctx, state, params, samples, n_samples);
  if (st.ok()) st = CheckBatchSize(params);
  bool done = false;
  whisper_full_params vad_params = params;  // batched: stretches cut to fit a chunk
  if (params.ggml_batch_size > 1) vad_params.vad_params.max_speech_duration_s = BatchedMaxSpeechSeconds(params);
  if (st.ok()) st = PrepareAudio(state, vad_params, samples, n_samples, &done);
  if (!st.ok() || done) return st;
  if (state->vad_state.active) {
    samples = state->vad_state.filtered.data();
    n_samples = static_cast<int>(state->vad_state.filtered.size());
  }
  DecodingParams dp;
  st = CheckWindows(ctx, state, params, &dp, &done);
  if (!st.ok() || done) return st;
  CallbackBridge bridge{ctx, state, &params};
  st = FillDecoding(ctx, state, params, &bridge, &dp);
  if (!st.ok()) return st;
  if (!EnsureInference(state, DecodersNeeded(dp), params.n_threads, kFull)) return Logged();
  state->ws->set_gelu(GeluOfRules(dp.whisper_cpp));  // the rules read once (FillDecoding)
  int lang_id = 0;
  st = ChooseLanguage(ctx, state, params, &lang_id);
  if (!st.ok()) return st;
  state->lang_id = lang_id;
  if (params.detect_language) return absl::OkStatus();
  TranscribeParams tp;
  FillTranscribe(ctx, state, params, dp, lang_id, &tp);
  SetTimestamps(ctx, state, params, samples, n_samples, &tp);
  tp.hooks.user = &bridge;
  tp.hooks.encoder_begin = EncoderBegin;
  tp.hooks.progress = Progress;
  tp.hooks.new_segments = NewSegments;
  if (params.ggml_batch_size > 1) {
    st = RunBatched(state, params, tp, samples, n_samples);
  } else {
    st = UsesSharedBatch(state, params, tp) ? RunShared(state, params, tp) : RunWindows(state, params, tp);
  }
  MapNewResults(state);
  return st;
}

// Logs a failure of whisper_full_with_state (unless its helper did) and returns whisper.cpp's
// code for it: the one place the C API turns a library error into a number.
int ReportFull(const absl::Status& st) {
  if (!st.ok() && !st.message().empty()) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: %s\n", kFull, std::string(st.message()).c_str());
  }
  return WhisperFullReturnCode(st);
}

// ---- whisper_full_parallel, step by step -------------------------------------------------------

constexpr char kParallel[] = "whisper_full_parallel";

// whisper.cpp's split: n_processors equal parts of the audio after the offset, the last taking
// the remainder; part 0 starts at 0 (and keeps offset_ms), part i > 0 at offset + i * per.
struct PartPlan {
  int offset_samples = 0;
  int per = 0;  // samples per part
  int Start(int i) const { return i == 0 ? 0 : offset_samples + i * per; }
  // The centiseconds a part's times are shifted by in the whole audio.
  int64_t ShiftCs(int i, int offset_ms) const {
    return i == 0 ? 0 : 100LL * (i * static_cast<int64_t>(per)) / WHISPER_SAMPLE_RATE + offset_ms / 10;
  }
};

bool PlanParts(whisper_context* ctx, const float* samples, int n_samples, int offset_ms, int n_processors,
               PartPlan* plan) {
  if (n_processors > kMaxProcessors) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: n_processors = %d, expected 1 .. %d (each is a state and a thread)\n", kParallel,
        n_processors, kMaxProcessors);
    return false;
  }
  if (!CheckPair(ctx, ctx != nullptr ? ctx->state : nullptr, kParallel)) return false;
  if (samples == nullptr || n_samples <= 0 || offset_ms < 0) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: no samples (n_samples = %d) or negative offset_ms\n", kParallel, n_samples);
    return false;
  }
  plan->offset_samples = static_cast<int>(static_cast<int64_t>(WHISPER_SAMPLE_RATE) * offset_ms / 1000);
  if (plan->offset_samples >= n_samples) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: offset_ms %d is past the end of the audio\n", kParallel, offset_ms);
    return false;
  }
  plan->per = (n_samples - plan->offset_samples) / n_processors;
  return true;
}

// Runs part 0 on the context's state on this thread and the others on `states` (one each) on
// their own threads; returns the first non-zero code, part 0's first. Each part's results are in
// its own input's time base (VAD, if on, ran on the part).
int RunParts(whisper_context* ctx, const whisper_full_params& params, const float* samples, int n_samples,
             const PartPlan& plan, const std::vector<whisper_state*>& states) {
  const int n_others = static_cast<int>(states.size());
  std::vector<int> rets(n_others, 0);
  std::vector<std::thread> workers;
  for (int i = 0; i < n_others; ++i) {
    const int start = plan.Start(i + 1);
    const int n_cur = i == n_others - 1 ? n_samples - start : plan.per;
    whisper_full_params p = params;
    p.offset_ms = 0;
    p.print_progress = false;
    p.print_realtime = false;
    p.new_segment_callback = nullptr;
    p.new_segment_callback_user_data = nullptr;
    p.progress_callback = nullptr;
    p.progress_callback_user_data = nullptr;
    workers.emplace_back([ctx, s = states[i], p, samples, start, n_cur, &rets, i] {
      rets[i] = whisper_full_with_state(ctx, s, p, samples + start, n_cur);
    });
  }
  whisper_full_params p0 = params;
  p0.print_realtime = false;
  int ret = whisper_full_with_state(ctx, ctx->state, p0, samples, plan.offset_samples + plan.per);
  for (auto& w : workers) w.join();
  for (int r : rets) {
    if (ret == 0 && r != 0) ret = r;
  }
  return ret;
}

// Appends a part's segments to the context's state, shifted by `shift` centiseconds, each
// starting no earlier than the previous one ends, announced one by one; the same for its VAD
// speech stretches (whisper_full_get_vad_segment_t0/t1).
void AppendPart(whisper_context* ctx, const whisper_full_params& params, const whisper_state& part, int64_t shift) {
  SegmentList& all = ctx->state->results;
  for (size_t k = 0; k < part.results.size(); ++k) {
    const Segment& src = part.results[k];
    const int64_t prev_t1 = all.empty() ? INT64_MIN : all.back().t1;
    Segment& dst = all.Append();
    dst = src;
    dst.t0 += shift;
    dst.t1 += shift;
    if (prev_t1 != INT64_MIN) dst.t0 = std::max(dst.t0, prev_t1);
    dst.t1 = std::max(dst.t1, dst.t0);  // whisper.cpp can leave t1 < t0 here
    dst.window.seek += shift;
    for (TokenData& t : dst.tokens) {
      if (t.t0 >= 0) t.t0 += shift;
      if (t.t1 >= 0) t.t1 += shift;
      if (t.t_dtw >= 0) t.t_dtw += shift;
    }
    if (params.new_segment_callback != nullptr) {
      params.new_segment_callback(ctx, ctx->state, 1, params.new_segment_callback_user_data);
    }
  }
  ctx->state->n_results_mapped = all.size();
  std::vector<VadState::Speech>& speech = ctx->state->vad_state.speech;
  for (const VadState::Speech& v : part.vad_state.speech) {
    const int64_t t0 = speech.empty() ? v.t0 + shift : std::max(v.t0 + shift, speech.back().t1);
    speech.push_back({t0, std::max(v.t1 + shift, t0)});
  }
}

void AddCounters(const whisper_state& s, whisper_state* d) {
  d->t_mel_us += s.t_mel_us;
  d->t_sample_us += s.t_sample_us;
  d->t_encode_us += s.t_encode_us;
  d->t_decode_us += s.t_decode_us;
  d->t_prompt_us += s.t_prompt_us;
  d->n_sample += s.n_sample;
  d->n_encode += s.n_encode;
  d->n_decode += s.n_decode;
  d->n_prompt += s.n_prompt;
}

void LogSplits(const PartPlan& plan, int n_processors, int offset_ms) {
  Log(GGML_LOG_LEVEL_WARN, "\n%s: the audio has been split into %d chunks at the following times:\n", kParallel,
      n_processors);
  for (int i = 1; i < n_processors; ++i) {
    Log(GGML_LOG_LEVEL_WARN, "%s: split %d - %s\n", kParallel, i, Timestamp(plan.ShiftCs(i, offset_ms)).c_str());
  }
  Log(GGML_LOG_LEVEL_WARN, "%s: the transcription quality may be degraded near these boundaries\n", kParallel);
}

int FullParallel(whisper_context* ctx, const whisper_full_params& params, const float* samples, int n_samples,
                 int n_processors) {
  if (params.ggml_n_clip_timestamps != 0) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: whisper_full_params.ggml_clip_timestamps with n_processors = %d: expected "
        "n_processors 1 (the clips are times in the whole audio)\n", kParallel, n_processors);
    return -1;
  }
  PartPlan plan;
  if (!PlanParts(ctx, samples, n_samples, params.offset_ms, n_processors, &plan)) return -1;
  std::vector<whisper_state*> states;
  for (int i = 0; i < n_processors - 1; ++i) {
    whisper_state* s = whisper_init_state(ctx);
    if (s == nullptr) {
      for (whisper_state* x : states) whisper_free_state(x);
      return -1;
    }
    states.push_back(s);
  }
  const int ret = RunParts(ctx, params, samples, n_samples, plan, states);
  for (int i = 0; i < n_processors - 1; ++i) {
    AppendPart(ctx, params, *states[i], plan.ShiftCs(i + 1, params.offset_ms));
    AddCounters(*states[i], ctx->state);
    whisper_free_state(states[i]);
  }
  LogSplits(plan, n_processors, params.offset_ms);
  return ret;
}

}  // namespace
}  // namespace api
}  // namespace whisper

extern "C" {

int whisper_full_with_state(struct whisper_context* ctx, struct whisper_state* state,
                            struct whisper_full_params params, const float* samples, int n_samples) {
  return whisper::api::ReportFull(whisper::api::FullWithState(ctx, state, params, samples, n_samples));
}

int whisper_ggml_set_int8_attention(struct whisper_context* ctx, int mode) {
  if (ctx == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: whisper_context is NULL\n", __func__);
    return -1;
  }
  if (mode != whisper::kInt8AttentionAuto && mode != whisper::kInt8AttentionOff && mode != whisper::kInt8AttentionOn) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: unknown mode %d (expected -1 auto, 0 off or 1 on)\n", __func__, mode);
    return -1;
  }
  ctx->int8_attention.store(mode);
  return 0;
}

int whisper_ggml_set_decoding(struct whisper_context* ctx, enum whisper_ggml_decoding decoding) {
  if (ctx == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: whisper_context is NULL\n", __func__);
    return -1;
  }
  if (decoding != WHISPER_GGML_DECODING_WHISPER_CPP && decoding != WHISPER_GGML_DECODING_OPENAI) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: unknown decoding %d (expected %d whisper.cpp or %d OpenAI)\n", __func__,
        static_cast<int>(decoding), WHISPER_GGML_DECODING_WHISPER_CPP, WHISPER_GGML_DECODING_OPENAI);
    return -1;
  }
  ctx->decoding.store(decoding);
  return 0;
}

int whisper_full(struct whisper_context* ctx, struct whisper_full_params params, const float* samples,
                 int n_samples) {
  return whisper_full_with_state(ctx, ctx != nullptr ? ctx->state : nullptr, params, samples, n_samples);
}

// whisper.cpp 1.8.5 runs VAD once over the whole audio and splits the speech it keeps; here each
// part runs its own (whisper_full_with_state), so each part's times are its input's before they
// are shifted by where the part starts.
int whisper_full_parallel(struct whisper_context* ctx, struct whisper_full_params params, const float* samples,
                          int n_samples, int n_processors) {
  if (n_processors <= 1) return whisper_full(ctx, params, samples, n_samples);
  return whisper::api::FullParallel(ctx, params, samples, n_samples, n_processors);
}

}  // extern "C"
