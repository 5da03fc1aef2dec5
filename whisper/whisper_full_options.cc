// whisper_full's parameters: their defaults (whisper_full_default_params, whisper.cpp 1.8.5's
// values, and the VAD defaults), and the faster-whisper 1.2.1 options (whisper/whisper.h's ggml_*
// extension fields and beam_search.patience) onto DecodingParams and TranscribeParams, each
// checked; declared in whisper/whisper_impl.h.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "whisper/status_codes.h"
#include "whisper/whisper_impl.h"

namespace whisper {
namespace api {
namespace {

constexpr char kFull[] = "whisper_full_with_state";

absl::Status SetupError(const std::string& message) {
  return WithKind(absl::InvalidArgumentError(message), ErrorKind::kSetup);
}

// faster-whisper's tokenization of a prefix or hotwords (get_prompt: tokenizer.encode(" " +
// text.strip())) into *ids, cached while the text equals *cached. ASCII whitespace is stripped.
void TokenizeHint(whisper_context* ctx, const char* text, const char* field, std::string* cached,
                  std::vector<Token>* ids) {
  if (!ids->empty() && *cached == text) return;
  int skipped = 0;
  *ids = ctx->tokenizer->EncodeOpenAi(SpaceAndStripped(text), &skipped);
  *cached = text;
  if (skipped > 0) {
    Log(GGML_LOG_LEVEL_WARN, "%s: %s: %d byte(s) start no vocabulary entry: skipped\n", kFull, field, skipped);
  }
}

// The offset of the first byte of `s` (NUL-terminated) that does not start or continue a well-formed
// UTF-8 character (overlong forms, surrogates and code points past U+10FFFF are ill-formed, as in
// Unicode's Table 3-7), or npos when it is all valid.
size_t InvalidUtf8At(const char* s) {
  const auto* u = reinterpret_cast<const unsigned char*>(s);
  for (size_t i = 0; u[i] != 0;) {
    const unsigned char b = u[i];
    const int len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (len == 0) return i;
    uint32_t cp = len == 1 ? b : b & (0x7F >> len);
    for (int k = 1; k < len; ++k) {
      if ((u[i + k] >> 6) != 2) return i;  // also stops at the NUL
      cp = cp << 6 | (u[i + k] & 0x3F);
    }
    constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::string::npos;
}

}  // namespace

std::string SpaceAndStripped(const char* text) {
  const std::string s(text);
  const char* ws = " \t\n\r\f\v";
  const size_t b = s.find_first_not_of(ws);
  return b == std::string::npos ? std::string(" ") : " " + s.substr(b, s.find_last_not_of(ws) - b + 1);
}

absl::Status FillFasterWhisperOptions(const whisper_full_params& params, DecodingParams* dp) {
  const float patience = params.beam_search.patience;
  dp->patience = patience > 0.0f ? patience : 1.0f;  // OpenAI decoding.py: `patience or 1.0`
  if (std::isnan(patience) || std::isinf(patience) ||
      (dp->beam_size > 1 && std::round(static_cast<float>(dp->beam_size) * dp->patience) < 1.0f)) {
    return SetupError(absl::StrFormat("whisper_full_params.beam_search.patience = %g: expected a finite value with "
                                      "round(beam_size %d * patience) >= 1 (<= 0: 1)",
                                      patience, dp->beam_size));
  }
  if (!std::isfinite(params.ggml_length_penalty)) {
    return SetupError(absl::StrFormat("whisper_full_params.ggml_length_penalty = %g: expected a finite value",
                                      params.ggml_length_penalty));
  }
  dp->fw_length_penalty = params.ggml_length_penalty;
  if (!(params.ggml_repetition_penalty > 0.0f) || std::isinf(params.ggml_repetition_penalty)) {
    return SetupError(absl::StrFormat("whisper_full_params.ggml_repetition_penalty = %g: expected a finite value > 0 "
                                      "(1: off)",
                                      params.ggml_repetition_penalty));
  }
  dp->filter.repetition_penalty = params.ggml_repetition_penalty;
  if (params.ggml_no_repeat_ngram_size < 0) {
    return SetupError(absl::StrFormat("whisper_full_params.ggml_no_repeat_ngram_size = %d: expected >= 0 (0: off)",
                                      params.ggml_no_repeat_ngram_size));
  }
  dp->filter.no_repeat_ngram_size = params.ggml_no_repeat_ngram_size;
  if (params.ggml_max_new_tokens < 0) {
    return SetupError(absl::StrFormat("whisper_full_params.ggml_max_new_tokens = %d: expected >= 0 (0: no limit)",
                                      params.ggml_max_new_tokens));
  }
  dp->max_new_tokens = params.ggml_max_new_tokens;
  if (std::isnan(params.ggml_prompt_reset_on_temperature)) {
    return SetupError("whisper_full_params.ggml_prompt_reset_on_temperature = nan: expected a number");
  }
  const int n_t = params.ggml_n_temperatures;
  if (n_t < 0 || (n_t > 0 && params.ggml_temperatures == nullptr)) {
    return SetupError(absl::StrFormat("whisper_full_params.ggml_n_temperatures = %d with ggml_temperatures %s: "
                                      "expected a count >= 0 of the array's values (0: temperature and "
                                      "temperature_inc)",
                                      n_t, params.ggml_temperatures == nullptr ? "NULL" : "set"));
  }
  for (int k = 0; k < n_t; ++k) {
    if (!std::isfinite(params.ggml_temperatures[k])) {
      return SetupError(absl::StrFormat("whisper_full_params.ggml_temperatures[%d] = %g: expected a finite value", k,
                                        params.ggml_temperatures[k]));
    }
  }
  dp->temperatures = n_t > 0 ? params.ggml_temperatures : nullptr;
  dp->n_temperatures = n_t;
  for (const auto& [field, text] : {std::pair<const char*, const char*>{"ggml_prepend_punctuations",
                                                                       params.ggml_prepend_punctuations},
                                     {"ggml_append_punctuations", params.ggml_append_punctuations}}) {
    const size_t bad = text == nullptr ? std::string::npos : InvalidUtf8At(text);
    if (bad != std::string::npos) {
      return SetupError(absl::StrFormat("whisper_full_params.%s = \"%s\": byte %d (0x%02x) is not valid UTF-8; "
                                        "expected UTF-8 text (NULL: faster-whisper's default set)",
                                        field, absl::CHexEscape(text), bad, static_cast<unsigned char>(text[bad])));
    }
  }
  if (params.ggml_chunk_length < 0 || params.ggml_chunk_length > 30) {
    return SetupError(absl::StrFormat("whisper_full_params.ggml_chunk_length = %d: expected 1 .. 30 seconds (0: 30)",
                                      params.ggml_chunk_length));
  }
  return absl::OkStatus();
}

absl::Status SuppressList(whisper_context* ctx, whisper_state* state, const whisper_full_params& params,
                          bool whisper_cpp, const std::vector<Token>** list) {
  const std::vector<Token>* nst = whisper_cpp ? &ctx->non_speech : &ctx->non_speech_openai;
  *list = params.suppress_nst ? nst : nullptr;
  const int n = params.ggml_n_suppress_tokens;
  if (params.ggml_suppress_tokens == nullptr && n == 0) return absl::OkStatus();
  if (n < 0 || params.ggml_suppress_tokens == nullptr) {
    return SetupError(absl::StrFormat("whisper_full_params.ggml_n_suppress_tokens = %d with ggml_suppress_tokens "
                                      "%s: expected a count >= 0 of the list's ids",
                                      n, params.ggml_suppress_tokens == nullptr ? "NULL" : "set"));
  }
  state->suppress_list.clear();
  bool add_nst = false;
  for (int i = 0; i < n; ++i) {
    const Token t = params.ggml_suppress_tokens[i];
    if (t < -1 || t >= whisper_n_vocab(ctx)) {
      return SetupError(absl::StrFormat("whisper_full_params.ggml_suppress_tokens[%d] = %d: expected a token id in "
                                        "[0, %d) or -1 (the non-speech tokens)",
                                        i, t, whisper_n_vocab(ctx)));
    }
    if (t == -1) {
      add_nst = true;
    } else {
      state->suppress_list.push_back(t);
    }
  }
  if (add_nst) state->suppress_list.insert(state->suppress_list.end(), nst->begin(), nst->end());
  *list = &state->suppress_list;
  return absl::OkStatus();
}

void SetPromptOptions(whisper_context* ctx, whisper_state* state, const whisper_full_params& params,
                      TranscribeParams* tp) {
  if (params.ggml_prefix != nullptr && params.ggml_prefix[0] != '\0') {
    TokenizeHint(ctx, params.ggml_prefix, "ggml_prefix", &state->prefix_text, &state->prefix_ids);
    tp->prefix = state->prefix_ids.data();
    tp->n_prefix = static_cast<int>(state->prefix_ids.size());
  }
  if (params.ggml_hotwords != nullptr && params.ggml_hotwords[0] != '\0') {
    TokenizeHint(ctx, params.ggml_hotwords, "ggml_hotwords", &state->hotwords_text, &state->hotwords_ids);
    tp->hotwords = state->hotwords_ids.data();
    tp->n_hotwords = static_cast<int>(state->hotwords_ids.size());
  }
  tp->chunk_frames = params.ggml_chunk_length * 100;
}

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
  p.ggml_multilingual = false;
  p.ggml_compression_ratio_thold = 2.4f;  // faster-whisper's compression_ratio_threshold
  p.ggml_clip_timestamps = nullptr;       // faster-whisper's clip_timestamps "0": everything
  p.ggml_n_clip_timestamps = 0;
  p.ggml_hallucination_silence_thold = -1.0f;  // off: faster-whisper's None
  // faster-whisper 1.2.1's defaults (transcribe()).
  p.ggml_length_penalty = 1.0f;
  p.ggml_repetition_penalty = 1.0f;
  p.ggml_no_repeat_ngram_size = 0;
  p.ggml_max_new_tokens = 0;
  p.ggml_prompt_reset_on_temperature = 0.5f;
  p.ggml_prefix = nullptr;
  p.ggml_hotwords = nullptr;
  p.ggml_suppress_tokens = nullptr;
  p.ggml_n_suppress_tokens = 0;
  p.ggml_chunk_length = 0;
  p.ggml_batch_size = 0;  // sequential
  p.ggml_temperatures = nullptr;  // temperature, temperature_inc
  p.ggml_n_temperatures = 0;
  p.ggml_prepend_punctuations = nullptr;  // faster-whisper's "'“¿([{-
  p.ggml_append_punctuations = nullptr;   // faster-whisper's "'.。,，!！?？:：”)]}、
  return p;
}

struct whisper_full_params* whisper_full_default_params_by_ref(enum whisper_sampling_strategy strategy) {
  return new whisper_full_params(whisper_full_default_params(strategy));
}

void whisper_free_params(struct whisper_full_params* params) { delete params; }

}  // extern "C"
