// whisper/whisper.h: whisper_full_params and their defaults, whisper_full(_with_state,
// _parallel), the results getters, and the VAD entry points (not implemented yet).
#include <algorithm>
#include <cfloat>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <regex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "whisper/vocab.h"
#include "whisper/whisper_impl.h"

// whisper_token_data is handed out as whisper::TokenData (and back to the logits filter).
static_assert(sizeof(whisper_token_data) == sizeof(whisper::TokenData), "token data layouts differ");
static_assert(offsetof(whisper_token_data, t0) == offsetof(whisper::TokenData, t0), "token data layouts differ");
static_assert(offsetof(whisper_token_data, vlen) == offsetof(whisper::TokenData, vlen), "token data layouts differ");
static_assert(std::is_standard_layout<whisper::TokenData>::value, "TokenData must be standard layout");

using whisper::api::CheckPair;
using whisper::api::Log;
using whisper::api::NowUs;

namespace whisper {
namespace api {
namespace {

// whisper.cpp's WHISPER_MAX_DECODERS: beams and best-of candidates per window.
constexpr int kMaxDecoders = 8;
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
  const int64_t ms = t * 10;
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%02d:%02d:%02d.%03d", static_cast<int>(ms / 3600000),
                static_cast<int>(ms / 60000 % 60), static_cast<int>(ms / 1000 % 60), static_cast<int>(ms % 1000));
  return buf;
}

void NewSegments(void* user, int n_new) {
  auto* b = static_cast<CallbackBridge*>(user);
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

// The features of whisper.cpp that this runtime does not have yet: an error naming the field.
bool CheckImplemented(const whisper_full_params& p, const char* func) {
  const char* field = nullptr;
  if (p.grammar_rules != nullptr && p.n_grammar_rules > 0) field = "grammar_rules (grammar-constrained sampling)";
  if (field == nullptr) return true;
  Log(GGML_LOG_LEVEL_ERROR, "%s: whisper_full_params.%s is set but not implemented by this runtime\n", func, field);
  return false;
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

}  // namespace
}  // namespace api
}  // namespace whisper

extern "C" {

struct whisper_vad_params whisper_vad_default_params(void) {
  whisper_vad_params p{};
  p.threshold = 0.5f;
  p.min_speech_duration_ms = 250;
  p.min_silence_duration_ms = 100;
  p.max_speech_duration_s = FLT_MAX;
  p.speech_pad_ms = 30;
  p.samples_overlap = 0.1f;
  return p;
}

struct whisper_vad_context_params whisper_vad_default_context_params(void) {
  whisper_vad_context_params p{};
  p.n_threads = 4;
  p.use_gpu = false;
  p.gpu_device = 0;
  return p;
}

struct whisper_full_params whisper_full_default_params(enum whisper_sampling_strategy strategy) {
  whisper_full_params p{};
  p.strategy = strategy;
  p.n_threads = std::max(1, std::min(4, static_cast<int>(std::thread::hardware_concurrency())));
  p.n_max_text_ctx = 16384;
  p.offset_ms = 0;
  p.duration_ms = 0;
  p.translate = false;
  p.no_context = true;
  p.no_timestamps = false;
  p.single_segment = false;
  p.print_special = false;
  p.print_progress = true;
  p.print_realtime = false;
  p.print_timestamps = true;
  p.token_timestamps = false;
  p.thold_pt = 0.01f;
  p.thold_ptsum = 0.01f;
  p.max_len = 0;
  p.split_on_word = false;
  p.max_tokens = 0;
  p.debug_mode = false;
  p.audio_ctx = 0;
  p.tdrz_enable = false;
  p.suppress_regex = nullptr;
  p.initial_prompt = nullptr;
  p.carry_initial_prompt = false;
  p.prompt_tokens = nullptr;
  p.prompt_n_tokens = 0;
  p.language = "en";
  p.detect_language = false;
  p.suppress_blank = true;
  p.suppress_nst = false;
  p.temperature = 0.0f;
  p.max_initial_ts = 1.0f;
  p.length_penalty = -1.0f;
  p.temperature_inc = 0.2f;
  p.entropy_thold = 2.4f;
  p.logprob_thold = -1.0f;
  p.no_speech_thold = 0.6f;
  p.greedy.best_of = strategy == WHISPER_SAMPLING_GREEDY ? 5 : -1;
  p.beam_search.beam_size = strategy == WHISPER_SAMPLING_BEAM_SEARCH ? 5 : -1;
  p.beam_search.patience = -1.0f;
  p.grammar_penalty = 100.0f;
  p.vad = false;
  p.vad_model_path = nullptr;
  p.vad_params = whisper_vad_default_params();
  return p;
}

struct whisper_full_params* whisper_full_default_params_by_ref(enum whisper_sampling_strategy strategy) {
  return new whisper_full_params(whisper_full_default_params(strategy));
}

void whisper_free_params(struct whisper_full_params* params) { delete params; }

int whisper_full_with_state(struct whisper_context* ctx, struct whisper_state* state,
                            struct whisper_full_params params, const float* samples, int n_samples) {
  using namespace whisper;
  const int64_t t_begin = NowUs();
  if (!CheckPair(ctx, state, __func__)) return -1;
  state->results.Clear();
  if (!api::CheckImplemented(params, __func__)) return -1;
  if (n_samples < 0 || (n_samples > 0 && samples == nullptr)) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: n_samples = %d with %s samples\n", __func__, n_samples,
        samples == nullptr ? "NULL" : "");
    return -1;
  }
  if (params.n_threads < 1 || params.n_threads > GGML_THREADPOOL_MAX_THREADS) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: whisper_full_params.n_threads = %d, expected 1 .. %d\n", __func__,
        params.n_threads, GGML_THREADPOOL_MAX_THREADS);
    return -1;
  }
  state->vad_state.active = false;
  if (params.vad && n_samples > 0) {
    // whisper.cpp's whisper_vad: only the speech stretches, joined; times are mapped back by the
    // segment getters (whisper.cpp does this in whisper_full only; here on every state).
    const absl::Status st = api::FilterSpeech(state, params, samples, n_samples);
    if (!st.ok()) {
      Log(GGML_LOG_LEVEL_ERROR, "%s: %s\n", __func__, std::string(st.message()).c_str());
      return -1;
    }
    if (state->vad_state.filtered.empty()) return 0;  // no speech
    samples = state->vad_state.filtered.data();
    n_samples = static_cast<int>(state->vad_state.filtered.size());
  }
  if (n_samples > 0) {
    if (n_samples < 1600) {  // whisper.cpp: under 100 ms nothing is processed
      Log(GGML_LOG_LEVEL_WARN, "%s: input is too short - %d ms < 100 ms. consider padding the input audio with silence\n",
          __func__, n_samples / 16);
      return 0;
    }
    if (!api::ComputeMel(state, samples, n_samples, params.n_threads, __func__)) return -2;
  } else if (state->mel_data == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: no samples and no mel (whisper_pcm_to_mel / whisper_set_mel)\n", __func__);
    return -1;
  }
  const WhisperModel& model = *ctx->model;
  const WhisperHparams& hp = model.hparams();
  const SpecialTokens& special = model.special();

  // Decoders: whisper.cpp's rules (beam_size for beam search at t = 0, best_of when sampling).
  DecodingParams dp;
  dp.beam_size = params.strategy == WHISPER_SAMPLING_BEAM_SEARCH ? std::max(1, params.beam_search.beam_size) : 1;
  dp.best_of = std::max(1, params.greedy.best_of);
  if (dp.beam_size > api::kMaxDecoders || dp.best_of > api::kMaxDecoders) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: too many decoders requested (%d), max = %d\n", __func__,
        std::max(dp.beam_size, dp.best_of), api::kMaxDecoders);
    return -4;
  }
  if (params.audio_ctx > hp.n_audio_ctx || params.audio_ctx < 0) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: audio_ctx is larger than the maximum allowed (%d > %d)\n", __func__,
        params.audio_ctx, hp.n_audio_ctx);
    return -5;
  }
  if (params.offset_ms < 0 || params.duration_ms < 0) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: offset_ms %d and duration_ms %d must not be negative\n", __func__,
        params.offset_ms, params.duration_ms);
    return -1;
  }
  {
    // whisper.cpp: less than 100 ms (10 frames) between the offset and the end is "too short":
    // a warning, no segments, success.
    const int64_t seek_start = params.offset_ms / 10;
    const int64_t seek_end =
        params.duration_ms == 0 ? state->mel_n_len_org : seek_start + params.duration_ms / 10;
    if (seek_end < seek_start + 10 || seek_start >= state->mel_n_len_org) {
      Log(GGML_LOG_LEVEL_WARN,
          "%s: input is too short - %lld ms < 100 ms (offset %d ms, duration %d ms, audio %d ms). consider padding "
          "the input audio with silence\n",
          __func__, static_cast<long long>((std::min<int64_t>(seek_end, state->mel_n_len_org) - seek_start) * 10),
          params.offset_ms, params.duration_ms, state->mel_n_len_org * 10);
      return 0;
    }
  }
  dp.temperature = params.temperature;
  dp.temperature_inc = params.temperature_inc;
  dp.entropy_thold = params.entropy_thold;
  dp.logprob_thold = params.logprob_thold;
  dp.no_speech_thold = params.no_speech_thold;
  dp.length_penalty = params.length_penalty;
  dp.max_tokens_per_window = hp.n_text_ctx / 2 - 4;
  dp.max_tokens = std::max(0, params.max_tokens);
  dp.single_segment = params.single_segment;
  dp.whisper_cpp = ctx->decoding.load() == WHISPER_GGML_DECODING_WHISPER_CPP;
  // OpenAI's rules add its compression-ratio fallback (2.4, openai/whisper's and faster-whisper's
  // default compression_ratio_threshold) beside the entropy rule; whisper.cpp has only the latter.
  dp.compression_ratio_thold = dp.whisper_cpp ? 0.0f : api::kOpenAiCompressionRatioThold;
  dp.filter.suppress_blank = params.suppress_blank;
  dp.filter.blank_token = model.vocab().id(" ");
  dp.filter.no_timestamps = params.no_timestamps;
  // whisper.cpp: first-release distilled models (2 text layers, not large-v3's vocabulary) need
  // <|notimestamps|>.
  if (hp.n_text_layer == 2 && hp.n_vocab != 51866 && !params.no_timestamps) {
    Log(GGML_LOG_LEVEL_WARN, "%s: using first release distilled models - forcing no_timestamps\n", __func__);
    dp.filter.no_timestamps = true;
  }
  dp.filter.max_initial_ts = params.max_initial_ts;
  dp.filter.tdrz = params.tdrz_enable;
  // Non-speech tokens: whisper.cpp's list, or OpenAI's (faster-whisper's suppress_tokens=[-1]),
  // which adds the music signs' first token (tokenizer.h).
  const std::vector<whisper::Token>* nst = nullptr;
  if (params.suppress_nst) nst = dp.whisper_cpp ? &ctx->non_speech : &ctx->non_speech_openai;
  dp.filter.suppress = nst;
  if (params.suppress_regex != nullptr && params.suppress_regex[0] != '\0') {
    if (!api::PrepareSuppressRegex(ctx, state, params.suppress_regex, nst, __func__)) return -1;
    dp.filter.suppress = &state->suppress_ids;
  }
  api::CallbackBridge bridge{ctx, state, &params};
  if (params.logits_filter_callback != nullptr) {
    dp.filter.hook = api::LogitsFilter;
    dp.filter.hook_user = &bridge;
  }
  if (!api::EnsureInference(state, DecodersNeeded(dp), params.n_threads, __func__)) return -1;

  // Language: detect when asked (or unset) on multilingual models.
  const bool detect = params.language == nullptr || params.language[0] == '\0' ||
                      std::strcmp(params.language, "auto") == 0 || params.detect_language;
  int lang_id = 0;
  if (special.multilingual) {
    if (detect) {
      float probs[kMaxLanguages];
      lang_id = whisper_lang_auto_detect_with_state(ctx, state, 0, params.n_threads, probs);
      if (lang_id < 0) {
        Log(GGML_LOG_LEVEL_ERROR, "%s: failed to auto-detect language\n", __func__);
        return -3;
      }
      Log(GGML_LOG_LEVEL_INFO, "%s: auto-detected language: %s (p = %f)\n", __func__, LanguageCode(lang_id),
          probs[lang_id]);
    } else {
      lang_id = LanguageId(params.language);
      if (lang_id < 0) {
        lang_id = whisper_lang_id(params.language);  // a full name, or logs the unknown code
        if (lang_id < 0) {
          Log(GGML_LOG_LEVEL_ERROR, "%s: whisper_full_params.language = '%s': unknown language\n", __func__,
              params.language);
          return -1;
        }
      }
    }
  }
  state->lang_id = lang_id;
  if (params.detect_language) return 0;

  // The initial prompt: the token list, or the text tokenized (cached while the text is the same).
  const Token* prompt = params.prompt_tokens;
  int n_prompt = params.prompt_tokens != nullptr ? std::max(0, params.prompt_n_tokens) : 0;
  if (params.prompt_tokens == nullptr && params.initial_prompt != nullptr && params.initial_prompt[0] != '\0') {
    if (state->prompt_ids.empty() || state->prompt_text != params.initial_prompt) {
      int skipped = 0;
      state->prompt_ids = ctx->tokenizer->EncodeSkipping(params.initial_prompt, &skipped);
      state->prompt_text = params.initial_prompt;
      if (skipped > 0) {  // whisper.cpp skips them too ("unknown token")
        Log(GGML_LOG_LEVEL_WARN, "%s: initial_prompt: %d byte(s) start no vocabulary entry: skipped\n", __func__,
            skipped);
      }
    }
    prompt = state->prompt_ids.data();
    n_prompt = static_cast<int>(state->prompt_ids.size());
  }

  TranscribeParams tp;
  tp.decoding = dp;
  tp.offset_ms = params.offset_ms;
  tp.duration_ms = params.duration_ms;
  tp.audio_ctx = params.audio_ctx;
  if (dp.whisper_cpp) {
    // whisper.cpp always prompts a window with the text before it (n_max_text_ctx = 0 turns that
    // off); no_context = false also starts from the past text of this state's previous call.
    tp.condition_on_previous_text = true;
    tp.keep_past = !params.no_context;
  } else {
    tp.condition_on_previous_text = !params.no_context;  // OpenAI's condition_on_previous_text
  }
  tp.max_text_ctx = params.n_max_text_ctx;
  tp.language_id = lang_id;
  tp.translate = params.translate && special.multilingual;
  tp.initial_prompt = prompt;
  tp.n_initial_prompt = n_prompt;
  tp.carry_initial_prompt = params.carry_initial_prompt;
  tp.audio_duration_cs = state->mel_n_samples > 0 ? (state->mel_n_samples + 159) / 160 : 0;
  tp.segments.print_special = params.print_special;
  tp.segments.single_segment = params.single_segment;
  tp.segments.tdrz = params.tdrz_enable;
  // VAD: segments must not span the removed silence; splitting them needs token times.
  const bool vad_gaps = state->vad_state.active && !state->vad_state.gaps.empty();
  if (vad_gaps) {
    tp.gaps = state->vad_state.gaps.data();
    tp.n_gaps = static_cast<int>(state->vad_state.gaps.size() / 2);
  }
  if (params.token_timestamps || vad_gaps) {
    if (n_samples > 0) {
      state->token_timestamps.Begin(samples, n_samples);
    } else {
      state->token_timestamps.Begin(nullptr, 0);  // no signal: token times stay -1
    }
    tp.token_timestamps = &state->token_timestamps;
    tp.thold_pt = params.thold_pt;
    tp.thold_ptsum = params.thold_ptsum;
    tp.max_len = params.max_len;
    tp.split_on_word = params.split_on_word;
  }
  if (ctx->params.dtw_token_timestamps && state->word_timestamps != nullptr && state->dtw_enabled) {
    state->word_timestamps->Begin();
    tp.word_timestamps = state->word_timestamps.get();
  }
  tp.hooks.user = &bridge;
  tp.hooks.encoder_begin = api::EncoderBegin;
  tp.hooks.progress = api::Progress;
  tp.hooks.new_segments = api::NewSegments;

  state->abort_callback = params.abort_callback;
  state->abort_callback_user_data = params.abort_callback_user_data;
  api::StateBackend backend(state);
  TranscribeStats stats;
  const int64_t t_enc0 = state->t_encode_us, t_dec0 = state->t_decode_us + state->t_batchd_us + state->t_prompt_us;
  const int64_t t_loop = NowUs();
  // whisper.cpp decodes up to n_len_org (frames overlapping the audio); OpenAI's content_frames
  // is n_samples / 160.
  const int n_frames_audio = dp.whisper_cpp ? state->mel_n_len_org : state->mel_n_frames_audio;
  absl::Status st = state->transcriber->Run(backend, state->mel_data, state->mel_n_len, n_frames_audio, tp,
                                            &state->results, &stats);
  state->abort_callback = nullptr;
  state->abort_callback_user_data = nullptr;
  state->t_sample_us += std::max<int64_t>(0, (NowUs() - t_loop) - (state->t_encode_us - t_enc0) -
                                                 (state->t_decode_us + state->t_batchd_us + state->t_prompt_us - t_dec0));
  state->n_sample += stats.n_windows;
  state->n_fail_p += stats.n_fallbacks;
  (void)t_begin;
  if (!st.ok()) {
    const bool aborted = st.code() == absl::StatusCode::kCancelled;
    Log(GGML_LOG_LEVEL_ERROR, "%s: %s: %s\n", __func__, aborted ? "aborted" : "failed",
        std::string(st.message()).c_str());
    if (st.message().find("encoder") != absl::string_view::npos) return -6;
    return st.code() == absl::StatusCode::kInvalidArgument ? -1 : -8;
  }
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

int whisper_full_parallel(struct whisper_context* ctx, struct whisper_full_params params, const float* samples,
                          int n_samples, int n_processors) {
  if (n_processors <= 1) return whisper_full(ctx, params, samples, n_samples);
  if (n_processors > whisper::api::kMaxProcessors) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: n_processors = %d, expected 1 .. %d (each is a state and a thread)\n", __func__,
        n_processors, whisper::api::kMaxProcessors);
    return -1;
  }
  if (!CheckPair(ctx, ctx != nullptr ? ctx->state : nullptr, __func__)) return -1;
  if (samples == nullptr || n_samples <= 0 || params.offset_ms < 0) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: no samples (n_samples = %d) or negative offset_ms\n", __func__, n_samples);
    return -1;
  }
  const int offset_samples = static_cast<int>(static_cast<int64_t>(WHISPER_SAMPLE_RATE) * params.offset_ms / 1000);
  if (offset_samples >= n_samples) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: offset_ms %d is past the end of the audio\n", __func__, params.offset_ms);
    return -1;
  }
  const int per = (n_samples - offset_samples) / n_processors;
  std::vector<whisper_state*> states;
  std::vector<int> rets(n_processors - 1, 0);
  std::vector<std::thread> workers;
  for (int i = 0; i < n_processors - 1; ++i) {
    whisper_state* s = whisper_init_state(ctx);
    if (s == nullptr) {
      for (auto& w : workers) w.join();
      for (whisper_state* x : states) whisper_free_state(x);
      return -1;
    }
    states.push_back(s);
  }
  for (int i = 0; i < n_processors - 1; ++i) {
    const int start = offset_samples + (i + 1) * per;
    const int n_cur = i == n_processors - 2 ? n_samples - start : per;
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
  int ret = whisper_full_with_state(ctx, ctx->state, p0, samples, offset_samples + per);
  for (auto& w : workers) w.join();
  const int64_t offset_t = params.offset_ms / 10;
  whisper::SegmentList& all = ctx->state->results;
  for (int i = 0; i < n_processors - 1; ++i) {
    if (ret == 0 && rets[i] != 0) ret = rets[i];
    const int64_t shift = 100LL * ((i + 1) * static_cast<int64_t>(per)) / WHISPER_SAMPLE_RATE + offset_t;
    const whisper::SegmentList& part = states[i]->results;
    for (size_t k = 0; k < part.size(); ++k) {
      const whisper::Segment& src = part[k];
      const int64_t prev_t1 = all.empty() ? INT64_MIN : all.back().t1;
      whisper::Segment& dst = all.Append();
      dst = src;
      dst.t0 += shift;
      dst.t1 += shift;
      if (prev_t1 != INT64_MIN) dst.t0 = std::max(dst.t0, prev_t1);
      dst.t1 = std::max(dst.t1, dst.t0);  // whisper.cpp can leave t1 < t0 here
      for (whisper::TokenData& t : dst.tokens) {
        if (t.t0 >= 0) t.t0 += shift;
        if (t.t1 >= 0) t.t1 += shift;
      }
      if (params.new_segment_callback != nullptr) {
        params.new_segment_callback(ctx, ctx->state, 1, params.new_segment_callback_user_data);
      }
    }
    whisper_state& d = *ctx->state;
    const whisper_state& s = *states[i];
    d.t_mel_us += s.t_mel_us;
    d.t_sample_us += s.t_sample_us;
    d.t_encode_us += s.t_encode_us;
    d.t_decode_us += s.t_decode_us;
    d.t_prompt_us += s.t_prompt_us;
    d.n_sample += s.n_sample;
    d.n_encode += s.n_encode;
    d.n_decode += s.n_decode;
    d.n_prompt += s.n_prompt;
    whisper_free_state(states[i]);
  }
  Log(GGML_LOG_LEVEL_WARN, "\n%s: the audio has been split into %d chunks at the following times:\n", __func__,
      n_processors);
  for (int i = 0; i < n_processors - 1; ++i) {
    const int64_t t = 100LL * ((i + 1) * static_cast<int64_t>(per)) / WHISPER_SAMPLE_RATE + offset_t;
    Log(GGML_LOG_LEVEL_WARN, "%s: split %d - %s\n", __func__, i + 1, whisper::api::Timestamp(t).c_str());
  }
  Log(GGML_LOG_LEVEL_WARN, "%s: the transcription quality may be degraded near these boundaries\n", __func__);
  return ret;
}

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

// With VAD, times are mapped from the joined speech back to the audio (whisper.cpp's
// map_processed_to_original_time), segment ends at least 10 cs after their starts.
int64_t whisper_full_get_segment_t0_from_state(struct whisper_state* state, int i) {
  const whisper::Segment* s = SegmentAt(state, i, __func__);
  return s != nullptr ? whisper::api::MapVadTime(state, s->t0, /*is_start=*/true) : 0;
}
int64_t whisper_full_get_segment_t0(struct whisper_context* ctx, int i) {
  return whisper_full_get_segment_t0_from_state(DefaultState(ctx), i);
}
int64_t whisper_full_get_segment_t1_from_state(struct whisper_state* state, int i) {
  const whisper::Segment* s = SegmentAt(state, i, __func__);
  if (s == nullptr) return 0;
  if (!state->vad_state.active) return s->t1;
  const int64_t t0 = whisper::api::MapVadTime(state, s->t0, /*is_start=*/true);
  return std::max(whisper::api::MapVadTime(state, s->t1, /*is_start=*/false), t0 + 10);
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
  if (state->vad_state.active) {  // token times too (whisper.cpp maps segment times only)
    if (d.t0 >= 0) d.t0 = whisper::api::MapVadTime(state, d.t0, /*is_start=*/true);
    if (d.t1 >= 0) d.t1 = whisper::api::MapVadTime(state, d.t1, /*is_start=*/false);
    if (d.t_dtw >= 0) d.t_dtw = whisper::api::MapVadTime(state, d.t_dtw, /*is_start=*/false);
  }
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

int whisper_ggml_full_get_token_word_start_from_state(struct whisper_state* state, int i, int j) {
  if (TokenAt(state, i, j, __func__) == nullptr) return -1;
  const whisper::Segment& s = state->results[i];
  if (s.word_begin.size() != s.tokens.size()) return -1;
  return s.word_begin[j] != 0 ? 1 : 0;
}
int whisper_ggml_full_get_token_word_start(struct whisper_context* ctx, int i, int j) {
  return whisper_ggml_full_get_token_word_start_from_state(DefaultState(ctx), i, j);
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
