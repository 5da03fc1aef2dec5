// whisper/whisper.h: contexts, states, logging, the low-level calls (mel, encode, decode,
// tokenize, language detection) and the model getters. whisper_full is in whisper_full.cc.
#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "kernels/dispatch.h"
#include "whisper/vocab.h"
#include "whisper/weight_convert.h"
#include "whisper/whisper_bench.h"
#include "whisper/whisper_impl.h"

namespace whisper {

static_assert(static_cast<int>(AheadsPreset::kTinyEn) == WHISPER_AHEADS_TINY_EN &&
                  static_cast<int>(AheadsPreset::kNTopMost) == WHISPER_AHEADS_N_TOP_MOST &&
                  static_cast<int>(AheadsPreset::kCustom) == WHISPER_AHEADS_CUSTOM &&
                  static_cast<int>(AheadsPreset::kLargeV3Turbo) == WHISPER_AHEADS_LARGE_V3_TURBO,
              "AheadsPreset mirrors whisper_alignment_heads_preset");

namespace api {
namespace {

// Full names of whisper.cpp's g_lang, by id (a fact table; the codes are in whisper/vocab.cc).
constexpr const char* kLanguageNames[kMaxLanguages] = {
    "english", "chinese", "german", "spanish", "russian", "korean", "french", "japanese",
    "portuguese", "turkish", "polish", "catalan", "dutch", "arabic", "swedish", "italian",
    "indonesian", "hindi", "finnish", "vietnamese", "hebrew", "ukrainian", "greek", "malay",
    "czech", "romanian", "danish", "hungarian", "tamil", "norwegian", "thai", "urdu", "croatian",
    "bulgarian", "lithuanian", "latin", "maori", "malayalam", "welsh", "slovak", "telugu",
    "persian", "latvian", "bengali", "serbian", "azerbaijani", "slovenian", "kannada", "estonian",
    "macedonian", "breton", "basque", "icelandic", "armenian", "nepali", "mongolian", "bosnian",
    "kazakh", "albanian", "swahili", "galician", "marathi", "punjabi", "sinhala", "khmer", "shona",
    "yoruba", "somali", "afrikaans", "occitan", "georgian", "belarusian", "tajik", "sindhi",
    "gujarati", "amharic", "yiddish", "lao", "uzbek", "faroese", "haitian creole", "pashto",
    "turkmen", "nynorsk", "maltese", "sanskrit", "luxembourgish", "myanmar", "tibetan", "tagalog",
    "malagasy", "assamese", "tatar", "hawaiian", "lingala", "hausa", "bashkir", "javanese",
    "sundanese", "cantonese",
};

void DefaultLog(ggml_log_level level, const char* text, void*) {
  if (level == GGML_LOG_LEVEL_DEBUG) return;
  std::fputs(text, stderr);
  std::fflush(stderr);
}

std::atomic<ggml_log_callback> g_log{DefaultLog};
std::atomic<void*> g_log_user{nullptr};

// ggml's messages carry no newline; whisper's callback expects whisper.cpp-style lines.
void ForwardGgml(ggml_log_level level, const char* text, void*) {
  Log(level, "ggml: %s\n", text);
}

// params.ggml_weight_type as WhisperModel::Load takes it: nullopt without ggml_convert_weights
// (the file's types). A value that is not a weight type is an error naming the field.
absl::StatusOr<std::optional<ggml_type>> WeightType(const whisper_context_params& params) {
  if (!params.ggml_convert_weights) return std::optional<ggml_type>();
  const int t = params.ggml_weight_type;
  if (t < 0 || t >= GGML_TYPE_COUNT || !IsWeightType(static_cast<ggml_type>(t))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "whisper_context_params.ggml_weight_type = %d (%s) is not a weight type the matrix kernels multiply: "
        "expected %d (f32), %d (f16), %d (q4_0), %d (q4_1), %d (q5_0), %d (q5_1) or "
        "%d (q8_0)",
        t, t >= 0 && t < GGML_TYPE_COUNT ? ggml_type_name(static_cast<ggml_type>(t)) : "not a ggml_type",
        GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1,
        GGML_TYPE_Q8_0));
  }
  return std::optional<ggml_type>(static_cast<ggml_type>(t));
}

// Loads the file at path (or the image at buffer when path is NULL) with the params' weight type.
absl::StatusOr<std::unique_ptr<WhisperModel>> LoadModel(const char* path, const void* buffer, size_t size,
                                                        const char* name, const whisper_context_params& params) {
  absl::StatusOr<std::optional<ggml_type>> type = WeightType(params);
  if (!type.ok()) return type.status();
  if (path != nullptr) return WhisperModel::Load(path, *type);
  return WhisperModel::LoadFromBuffer(buffer, size, name, *type);
}

whisper_context* InitFromModel(absl::StatusOr<std::unique_ptr<WhisperModel>> model, whisper_context_params params,
                               bool with_state, int64_t t_start, const char* func) {
  if (!model.ok()) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: %s\n", func, std::string(model.status().message()).c_str());
    return nullptr;
  }
  std::vector<AlignmentHead> aheads;
  if (params.dtw_token_timestamps) {
    std::vector<AlignmentHead> custom;
    for (size_t i = 0; params.dtw_aheads.heads != nullptr && i < params.dtw_aheads.n_heads; ++i) {
      custom.push_back({params.dtw_aheads.heads[i].n_text_layer, params.dtw_aheads.heads[i].n_head});
    }
    const WhisperHparams& h = (*model)->hparams();
    absl::StatusOr<std::vector<AlignmentHead>> heads =
        AlignmentHeadsFor(static_cast<AheadsPreset>(params.dtw_aheads_preset), params.dtw_n_top, custom.data(),
                          custom.size(), h.n_text_layer, h.n_text_head);
    if (!heads.ok()) {
      Log(GGML_LOG_LEVEL_ERROR, "%s: dtw_token_timestamps: %s\n", func, std::string(heads.status().message()).c_str());
      return nullptr;
    }
    aheads = std::move(*heads);
  }
  auto* ctx = new whisper_context();
  ctx->aheads = std::move(aheads);
  ctx->model = std::move(*model);
  ctx->params = params;
  const WhisperVocab& vocab = ctx->model->vocab();
  ctx->tokenizer = std::make_unique<Tokenizer>(vocab);  // the vocabulary lives as long as ctx->model
  ctx->non_speech = ctx->tokenizer->NonSpeechTokens();
  ctx->non_speech_openai = ctx->tokenizer->OpenAiNonSpeechTokens();
  const WhisperVocab* v = &vocab;
  ctx->token_text = [v](Token t) -> const std::string& { return v->token(t); };
  ctx->t_start_us = t_start;
  ctx->t_load_us = NowUs() - t_start;
  const WhisperHparams& hp = ctx->model->hparams();
  Log(GGML_LOG_LEVEL_INFO,
      "whisper_model_load: loaded '%s': type %s, n_vocab %d, n_audio_state %d, n_text_layer %d, ftype %d, model "
      "buffer %.2f MB\n",
      ctx->model->path().c_str(), ctx->model->type_name(), hp.n_vocab, hp.n_audio_state, hp.n_text_layer,
      hp.ftype, ctx->model->weights_buffer_size() / 1e6);
  if (params.ggml_convert_weights) {
    Log(GGML_LOG_LEVEL_INFO, "whisper_model_load: %d of %d tensors converted to %s at load\n",
        ctx->model->n_converted(), ctx->model->n_tensors(),
        ggml_type_name(static_cast<ggml_type>(params.ggml_weight_type)));
  }
  if (with_state) {
    ctx->state = whisper_init_state(ctx);
    if (ctx->state == nullptr) {
      whisper_free(ctx);
      return nullptr;
    }
  }
  return ctx;
}

whisper_context* InitFromLoader(whisper_model_loader* loader, whisper_context_params params, bool with_state,
                                const char* func) {
  const int64_t t0 = NowUs();
  if (loader == nullptr || loader->read == nullptr || loader->eof == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: loader is NULL or has no read/eof function\n", func);
    if (loader != nullptr && loader->close != nullptr) loader->close(loader->context);
    return nullptr;
  }
  std::vector<uint8_t> bytes;
  size_t n = 0;
  while (!loader->eof(loader->context)) {
    if (bytes.size() - n < (1u << 20)) bytes.resize(bytes.size() + (8u << 20));
    const size_t got = loader->read(loader->context, bytes.data() + n, bytes.size() - n);
    if (got == 0) break;
    n += got;
  }
  if (loader->close != nullptr) loader->close(loader->context);
  return InitFromModel(LoadModel(nullptr, bytes.data(), n, "<whisper_model_loader>", params), params, with_state, t0,
                       func);
}

}  // namespace

void Log(ggml_log_level level, const char* fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  const int len = std::vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  ggml_log_callback cb = g_log.load();
  if (cb == nullptr) return;
  if (len >= 0 && static_cast<size_t>(len) >= sizeof(buf)) {
    std::string big(static_cast<size_t>(len) + 1, '\0');
    va_start(args, fmt);
    std::vsnprintf(&big[0], big.size(), fmt, args);
    va_end(args);
    cb(level, big.c_str(), g_log_user.load());
    return;
  }
  cb(level, buf, g_log_user.load());
}

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool CheckPair(const whisper_context* ctx, const whisper_state* state, const char* func) {
  if (ctx == nullptr || ctx->model == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: whisper_context is NULL\n", func);
    return false;
  }
  if (state == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: whisper_state is NULL (a context from a _no_state init has no default state)\n",
        func);
    return false;
  }
  if (state->ctx != ctx) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: the whisper_state was made for another whisper_context\n", func);
    return false;
  }
  return true;
}

}  // namespace api
}  // namespace whisper

using whisper::api::CheckPair;
using whisper::api::Log;
using whisper::api::NowUs;

extern "C" {

const char* whisper_version(void) { return "1.8.5-ggml_whisper"; }

void whisper_log_set(ggml_log_callback log_callback, void* user_data) {
  whisper::api::g_log.store(log_callback != nullptr ? log_callback : whisper::api::DefaultLog);
  whisper::api::g_log_user.store(user_data);
  ggml_log_set(whisper::api::ForwardGgml, nullptr);
}

struct whisper_context_params whisper_context_default_params(void) {
  whisper_context_params p{};
  p.use_gpu = true;
  p.flash_attn = true;
  p.gpu_device = 0;
  p.dtw_token_timestamps = false;
  p.dtw_aheads_preset = WHISPER_AHEADS_NONE;
  p.dtw_n_top = -1;
  p.dtw_aheads.n_heads = 0;
  p.dtw_aheads.heads = nullptr;
  p.dtw_mem_size = 1024 * 1024 * 128;
  p.ggml_convert_weights = false;
  p.ggml_weight_type = GGML_TYPE_F16;
  return p;
}

struct whisper_context_params* whisper_context_default_params_by_ref(void) {
  return new whisper_context_params(whisper_context_default_params());
}

void whisper_free_context_params(struct whisper_context_params* params) { delete params; }

struct whisper_context* whisper_init_from_file_with_params_no_state(const char* path_model,
                                                                    struct whisper_context_params params) {
  const int64_t t0 = NowUs();
  if (path_model == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: path_model is NULL\n", __func__);
    return nullptr;
  }
  return whisper::api::InitFromModel(whisper::api::LoadModel(path_model, nullptr, 0, nullptr, params), params, false, t0, __func__);
}

struct whisper_context* whisper_init_from_buffer_with_params_no_state(void* buffer, size_t buffer_size,
                                                                      struct whisper_context_params params) {
  const int64_t t0 = NowUs();
  return whisper::api::InitFromModel(whisper::api::LoadModel(nullptr, buffer, buffer_size, "<buffer>", params), params,
                                     false, t0, __func__);
}

struct whisper_context* whisper_ggml_init(const char* path, void* buffer, size_t buffer_size, const char* name,
                                          struct whisper_context_params params, int flags) {
  const int64_t t0 = NowUs();
  constexpr int kKnown = WHISPER_GGML_INIT_NO_STATE | WHISPER_GGML_INIT_HEADS_FOR_SHAPE;
  if ((path == nullptr && buffer == nullptr) || (flags & ~kKnown) != 0) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: path %s, buffer %s, flags %d: expected a path or a buffer, flags of %d\n",
        __func__, path == nullptr ? "NULL" : "set", buffer == nullptr ? "NULL" : "set", flags, kKnown);
    return nullptr;
  }
  absl::StatusOr<std::unique_ptr<whisper::WhisperModel>> model =
      path != nullptr ? whisper::api::LoadModel(path, nullptr, 0, nullptr, params)
                      : whisper::api::LoadModel(nullptr, buffer, buffer_size, name != nullptr ? name : "<buffer>",
                                                params);
  if (model.ok() && (flags & WHISPER_GGML_INIT_HEADS_FOR_SHAPE) != 0 && !params.dtw_token_timestamps) {
    const whisper::WhisperHparams& h = (*model)->hparams();
    const whisper::AheadsPreset preset = whisper::AlignmentHeadsPresetForDims(h.n_vocab, h.n_audio_layer,
                                                                              h.n_text_layer);
    if (preset != whisper::AheadsPreset::kNone) {
      params.dtw_token_timestamps = true;
      params.dtw_aheads_preset = static_cast<whisper_alignment_heads_preset>(preset);
    }
  }
  return whisper::api::InitFromModel(std::move(model), params, (flags & WHISPER_GGML_INIT_NO_STATE) == 0, t0,
                                     __func__);
}

struct whisper_context* whisper_init_with_params_no_state(struct whisper_model_loader* loader,
                                                          struct whisper_context_params params) {
  return whisper::api::InitFromLoader(loader, params, false, __func__);
}

struct whisper_context* whisper_init_from_file_with_params(const char* path_model,
                                                           struct whisper_context_params params) {
  const int64_t t0 = NowUs();
  if (path_model == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: path_model is NULL\n", __func__);
    return nullptr;
  }
  return whisper::api::InitFromModel(whisper::api::LoadModel(path_model, nullptr, 0, nullptr, params), params, true, t0, __func__);
}

struct whisper_context* whisper_init_from_buffer_with_params(void* buffer, size_t buffer_size,
                                                             struct whisper_context_params params) {
  const int64_t t0 = NowUs();
  return whisper::api::InitFromModel(whisper::api::LoadModel(nullptr, buffer, buffer_size, "<buffer>", params), params,
                                     true, t0, __func__);
}

struct whisper_context* whisper_init_with_params(struct whisper_model_loader* loader,
                                                 struct whisper_context_params params) {
  return whisper::api::InitFromLoader(loader, params, true, __func__);
}

struct whisper_context* whisper_init_from_file(const char* path_model) {
  return whisper_init_from_file_with_params(path_model, whisper_context_default_params());
}
struct whisper_context* whisper_init_from_buffer(void* buffer, size_t buffer_size) {
  return whisper_init_from_buffer_with_params(buffer, buffer_size, whisper_context_default_params());
}
struct whisper_context* whisper_init(struct whisper_model_loader* loader) {
  return whisper_init_with_params(loader, whisper_context_default_params());
}
struct whisper_context* whisper_init_from_file_no_state(const char* path_model) {
  return whisper_init_from_file_with_params_no_state(path_model, whisper_context_default_params());
}
struct whisper_context* whisper_init_from_buffer_no_state(void* buffer, size_t buffer_size) {
  return whisper_init_from_buffer_with_params_no_state(buffer, buffer_size, whisper_context_default_params());
}
struct whisper_context* whisper_init_no_state(struct whisper_model_loader* loader) {
  return whisper_init_with_params_no_state(loader, whisper_context_default_params());
}

struct whisper_state* whisper_init_state(struct whisper_context* ctx) {
  if (ctx == nullptr || ctx->model == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: whisper_context is NULL\n", __func__);
    return nullptr;
  }
  auto* state = new whisper_state();
  state->ctx = ctx;
  const int n_threads = std::max(1, std::min(4, static_cast<int>(std::thread::hardware_concurrency())));
  if (!whisper::api::EnsureInference(state, 1, n_threads, __func__)) {
    delete state;
    return nullptr;
  }
  state->transcriber = std::make_unique<whisper::Transcriber>(ctx->model->special(),
                                                              ctx->model->hparams().n_text_ctx, ctx->token_text);
  const whisper::InferenceState& ws = *state->ws;
  Log(GGML_LOG_LEVEL_INFO,
      "%s: kv cache and encoder output %.2f MB; compute buffer %.2f MB (peaks: encoder %.2f MB, cross %.2f MB, "
      "decoder %.2f MB)\n",
      __func__, ws.kv_buffer_size() / 1e6, ws.compute_buffer_total() / 1e6,
      ws.compute_buffer_size(whisper::Graph::kEncoder) / 1e6, ws.compute_buffer_size(whisper::Graph::kCross) / 1e6,
      ws.compute_buffer_size(whisper::Graph::kDecoder) / 1e6);
  return state;
}

int whisper_ctx_init_openvino_encoder_with_state(struct whisper_context*, struct whisper_state*, const char*,
                                                 const char*, const char*) {
  Log(GGML_LOG_LEVEL_ERROR, "%s: OpenVINO is not supported by this runtime (CPU, Highway kernels)\n", __func__);
  return 1;
}

int whisper_ctx_init_openvino_encoder(struct whisper_context* ctx, const char* model_path, const char* device,
                                      const char* cache_dir) {
  return whisper_ctx_init_openvino_encoder_with_state(ctx, nullptr, model_path, device, cache_dir);
}

void whisper_free_state(struct whisper_state* state) { delete state; }

void whisper_free(struct whisper_context* ctx) {
  if (ctx == nullptr) return;
  whisper_free_state(ctx->state);
  delete ctx;
}

int whisper_pcm_to_mel_with_state(struct whisper_context* ctx, struct whisper_state* state, const float* samples,
                                  int n_samples, int n_threads) {
  if (!CheckPair(ctx, state, __func__)) return -1;
  return whisper::api::ComputeMel(state, samples, n_samples, n_threads, __func__) ? 0 : -1;
}

int whisper_pcm_to_mel(struct whisper_context* ctx, const float* samples, int n_samples, int n_threads) {
  return whisper_pcm_to_mel_with_state(ctx, ctx != nullptr ? ctx->state : nullptr, samples, n_samples, n_threads);
}

int whisper_set_mel_with_state(struct whisper_context* ctx, struct whisper_state* state, const float* data, int n_len,
                               int n_mel) {
  if (!CheckPair(ctx, state, __func__)) return -1;
  const int want = ctx->model->hparams().n_mels;
  if (n_mel != want) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: invalid number of mel bands: %d (expected %d)\n", __func__, n_mel, want);
    return -1;
  }
  if (data == nullptr || n_len < 1) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: %s, n_len = %d (expected >= 1 frames)\n", __func__,
        data == nullptr ? "data is NULL" : "no frames", n_len);
    return -1;
  }
  state->mel_own.assign(data, data + static_cast<size_t>(n_len) * n_mel);
  state->mel_data = state->mel_own.data();
  state->mel_n_len = state->mel_n_len_org = state->mel_n_frames_audio = n_len;
  state->mel_n_samples = 0;
  return 0;
}

int whisper_set_mel(struct whisper_context* ctx, const float* data, int n_len, int n_mel) {
  return whisper_set_mel_with_state(ctx, ctx != nullptr ? ctx->state : nullptr, data, n_len, n_mel);
}

int whisper_encode_with_state(struct whisper_context* ctx, struct whisper_state* state, int offset, int n_threads) {
  if (!CheckPair(ctx, state, __func__)) return -1;
  if (state->mel_data == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: no mel: call whisper_pcm_to_mel or whisper_set_mel first\n", __func__);
    return -1;
  }
  if (offset < 0 || offset >= state->mel_n_len) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: offset %d is outside the mel's %d frames\n", __func__, offset, state->mel_n_len);
    return -1;
  }
  const int n_dec = state->ws != nullptr ? state->ws->n_decoders() : 1;
  if (!whisper::api::EnsureInference(state, n_dec, n_threads, __func__)) return -1;
  whisper::api::StateBackend backend(state);
  absl::Status st = backend.Encode(state->mel_data, state->mel_n_len, offset, 0, state->mel_n_len);
  if (!st.ok()) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: failed to eval: %s\n", __func__, std::string(st.message()).c_str());
    return -1;
  }
  return 0;
}

int whisper_encode(struct whisper_context* ctx, int offset, int n_threads) {
  return whisper_encode_with_state(ctx, ctx != nullptr ? ctx->state : nullptr, offset, n_threads);
}

int whisper_decode_with_state(struct whisper_context* ctx, struct whisper_state* state, const whisper_token* tokens,
                              int n_tokens, int n_past, int n_threads) {
  if (!CheckPair(ctx, state, __func__)) return -1;
  if (state->ws == nullptr || state->ws->n_audio_ctx() == 0) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: nothing encoded: call whisper_encode first\n", __func__);
    return -1;
  }
  if (n_threads != state->ws->n_threads()) {
    // Recreating the state would drop the encoded window; decode with the encoder's threads.
    Log(GGML_LOG_LEVEL_DEBUG, "%s: n_threads %d ignored: the state computes with %d\n", __func__, n_threads,
        state->ws->n_threads());
  }
  whisper::api::StateBackend backend(state);
  absl::Status st = backend.Decode(0, tokens, n_tokens, n_past);
  if (!st.ok()) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: failed to eval: %s\n", __func__, std::string(st.message()).c_str());
    return 1;
  }
  return 0;
}

int whisper_decode(struct whisper_context* ctx, const whisper_token* tokens, int n_tokens, int n_past,
                   int n_threads) {
  return whisper_decode_with_state(ctx, ctx != nullptr ? ctx->state : nullptr, tokens, n_tokens, n_past, n_threads);
}

int whisper_tokenize(struct whisper_context* ctx, const char* text, whisper_token* tokens, int n_max_tokens) {
  if (ctx == nullptr || ctx->tokenizer == nullptr || text == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: %s is NULL\n", __func__, text == nullptr ? "text" : "whisper_context");
    return INT_MIN;
  }
  int skipped = 0;
  const std::vector<whisper::Token> ids = ctx->tokenizer->EncodeSkipping(text, &skipped);
  if (skipped > 0) {  // whisper.cpp logs "unknown token" per skipped byte
    Log(GGML_LOG_LEVEL_WARN, "%s: %d byte(s) of the text start no vocabulary entry: skipped\n", __func__, skipped);
  }
  const int n = static_cast<int>(ids.size());
  if (n_max_tokens < n || (tokens == nullptr && n > 0)) {
    if (n_max_tokens > 0) {
      Log(GGML_LOG_LEVEL_ERROR, "%s: too many resulting tokens: %d (max %d)\n", __func__, n, n_max_tokens);
    }
    return -n;
  }
  for (int i = 0; i < n; ++i) tokens[i] = ids[i];
  return n;
}

int whisper_token_count(struct whisper_context* ctx, const char* text) {
  const int n = whisper_tokenize(ctx, text, nullptr, 0);
  return n == INT_MIN ? -1 : -n;  // INT_MIN: NULL arguments
}

int whisper_lang_max_id(void) { return whisper::kMaxLanguages - 1; }

int whisper_lang_id(const char* lang) {
  if (lang == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: lang is NULL\n", __func__);
    return -1;
  }
  const int id = whisper::LanguageId(lang);
  if (id >= 0) return id;
  for (int i = 0; i < whisper::kMaxLanguages; ++i) {
    if (std::strcmp(whisper::api::kLanguageNames[i], lang) == 0) return i;
  }
  Log(GGML_LOG_LEVEL_ERROR, "%s: unknown language '%s'\n", __func__, lang);
  return -1;
}

const char* whisper_lang_str(int id) {
  const char* code = whisper::LanguageCode(id);
  if (code == nullptr) Log(GGML_LOG_LEVEL_ERROR, "%s: unknown language id %d\n", __func__, id);
  return code;
}

const char* whisper_lang_str_full(int id) {
  if (id < 0 || id >= whisper::kMaxLanguages) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: unknown language id %d\n", __func__, id);
    return nullptr;
  }
  return whisper::api::kLanguageNames[id];
}

int whisper_lang_auto_detect_with_state(struct whisper_context* ctx, struct whisper_state* state, int offset_ms,
                                        int n_threads, float* lang_probs) {
  if (!CheckPair(ctx, state, __func__)) return -1;
  const int seek = offset_ms / 10;
  if (seek < 0) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: offset %dms is before the start of the audio\n", __func__, offset_ms);
    return -1;
  }
  if (state->mel_data == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: no mel: call whisper_pcm_to_mel or whisper_set_mel first\n", __func__);
    return -2;
  }
  if (seek >= state->mel_n_len_org) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: offset %dms is past the end of the audio (%dms)\n", __func__, offset_ms,
        state->mel_n_len_org * 10);
    return -2;
  }
  const whisper::SpecialTokens& special = ctx->model->special();
  if (!special.multilingual) {
    Log(GGML_LOG_LEVEL_WARN, "%s: the model is English-only: language 'en'\n", __func__);
    if (lang_probs != nullptr) {
      for (int i = 0; i < whisper::kMaxLanguages; ++i) lang_probs[i] = i == 0 ? 1.0f : 0.0f;
    }
    return 0;
  }
  const int n_dec = state->ws != nullptr ? state->ws->n_decoders() : 1;
  if (!whisper::api::EnsureInference(state, n_dec, n_threads, __func__)) return -6;
  whisper::api::StateBackend backend(state);
  // The window's frames past the audio are zeros, as faster-whisper's detect_language pads its
  // features (pad_or_trim). Its features of n samples have n / 160 + 1 frames (the STFT's frame
  // centred on the last sample, computed over 160 zeros of padding, included): one more than the
  // frames its transcription decodes (content_frames = frames - 1), so one more than
  // mel_n_frames_audio here. Measured on Whisper base, jfk.wav: p(en) 0.944652 with n / 160
  // frames, faster-whisper 0.945194 (0.944958 when it is given n / 160 frames).
  const int n_frames_valid = std::min(state->mel_n_frames_audio + 1, state->mel_n_len);
  auto id = whisper::DetectLanguage(backend, special, state->mel_data, state->mel_n_len, n_frames_valid, seek,
                                    lang_probs);
  if (!id.ok()) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: %s\n", __func__, std::string(id.status().message()).c_str());
    return state->ws->n_audio_ctx() == 0 ? -6 : -7;
  }
  return *id;
}

int whisper_lang_auto_detect(struct whisper_context* ctx, int offset_ms, int n_threads, float* lang_probs) {
  return whisper_lang_auto_detect_with_state(ctx, ctx != nullptr ? ctx->state : nullptr, offset_ms, n_threads,
                                             lang_probs);
}

#define WHISPER_HP_GETTER(name, expr)                                       \
  int name(struct whisper_context* ctx) {                                   \
    if (ctx == nullptr || ctx->model == nullptr) {                          \
      Log(GGML_LOG_LEVEL_ERROR, "%s: whisper_context is NULL\n", __func__); \
      return -1;                                                            \
    }                                                                       \
    const whisper::WhisperHparams& hp = ctx->model->hparams();              \
    (void)hp;                                                               \
    return (expr);                                                          \
  }

WHISPER_HP_GETTER(whisper_n_vocab, hp.n_vocab)
WHISPER_HP_GETTER(whisper_n_text_ctx, hp.n_text_ctx)
WHISPER_HP_GETTER(whisper_n_audio_ctx, hp.n_audio_ctx)
WHISPER_HP_GETTER(whisper_is_multilingual, ctx->model->special().multilingual ? 1 : 0)
WHISPER_HP_GETTER(whisper_model_n_vocab, hp.n_vocab)
WHISPER_HP_GETTER(whisper_model_n_audio_ctx, hp.n_audio_ctx)
WHISPER_HP_GETTER(whisper_model_n_audio_state, hp.n_audio_state)
WHISPER_HP_GETTER(whisper_model_n_audio_head, hp.n_audio_head)
WHISPER_HP_GETTER(whisper_model_n_audio_layer, hp.n_audio_layer)
WHISPER_HP_GETTER(whisper_model_n_text_ctx, hp.n_text_ctx)
WHISPER_HP_GETTER(whisper_model_n_text_state, hp.n_text_state)
WHISPER_HP_GETTER(whisper_model_n_text_head, hp.n_text_head)
WHISPER_HP_GETTER(whisper_model_n_text_layer, hp.n_text_layer)
WHISPER_HP_GETTER(whisper_model_n_mels, hp.n_mels)
WHISPER_HP_GETTER(whisper_model_ftype, hp.ftype)
WHISPER_HP_GETTER(whisper_model_type, hp.n_audio_layer == 4    ? 1
                                      : hp.n_audio_layer == 6  ? 2
                                      : hp.n_audio_layer == 12 ? 3
                                      : hp.n_audio_layer == 24 ? 4
                                      : hp.n_audio_layer == 32 ? 5
                                                               : 0)

#undef WHISPER_HP_GETTER

int whisper_n_len_from_state(struct whisper_state* state) {
  if (state == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: whisper_state is NULL\n", __func__);
    return -1;
  }
  return state->mel_n_len_org;
}

int whisper_n_len(struct whisper_context* ctx) {
  return whisper_n_len_from_state(ctx != nullptr ? ctx->state : nullptr);
}

float* whisper_get_logits_from_state(struct whisper_state* state) {
  if (state == nullptr || state->ws == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: whisper_state is NULL\n", __func__);
    return nullptr;
  }
  return const_cast<float*>(state->ws->logits(0));
}

float* whisper_get_logits(struct whisper_context* ctx) {
  return whisper_get_logits_from_state(ctx != nullptr ? ctx->state : nullptr);
}

const char* whisper_token_to_str(struct whisper_context* ctx, whisper_token token) {
  if (ctx == nullptr || ctx->model == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: whisper_context is NULL\n", __func__);
    return nullptr;
  }
  if (token < 0 || token >= ctx->model->vocab().n_vocab()) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: token %d is not in [0, n_vocab %d)\n", __func__, token,
        ctx->model->vocab().n_vocab());
    return nullptr;
  }
  return ctx->model->vocab().token(token).c_str();
}

const char* whisper_model_type_readable(struct whisper_context* ctx) {
  if (ctx == nullptr || ctx->model == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: whisper_context is NULL\n", __func__);
    return nullptr;
  }
  return ctx->model->type_name();
}

#define WHISPER_TOKEN_GETTER(name, field)                                   \
  whisper_token name(struct whisper_context* ctx) {                         \
    if (ctx == nullptr || ctx->model == nullptr) {                          \
      Log(GGML_LOG_LEVEL_ERROR, "%s: whisper_context is NULL\n", __func__); \
      return -1;                                                            \
    }                                                                       \
    return ctx->model->special().field;                                     \
  }

WHISPER_TOKEN_GETTER(whisper_token_eot, eot)
WHISPER_TOKEN_GETTER(whisper_token_sot, sot)
WHISPER_TOKEN_GETTER(whisper_token_solm, solm)
WHISPER_TOKEN_GETTER(whisper_token_prev, prev)
WHISPER_TOKEN_GETTER(whisper_token_nosp, nosp)
WHISPER_TOKEN_GETTER(whisper_token_not, not_)
WHISPER_TOKEN_GETTER(whisper_token_beg, beg)
WHISPER_TOKEN_GETTER(whisper_token_translate, translate)
WHISPER_TOKEN_GETTER(whisper_token_transcribe, transcribe)

#undef WHISPER_TOKEN_GETTER

whisper_token whisper_token_lang(struct whisper_context* ctx, int lang_id) {
  if (ctx == nullptr || ctx->model == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: whisper_context is NULL\n", __func__);
    return -1;
  }
  return ctx->model->special().Language(lang_id);
}

struct whisper_timings* whisper_get_timings(struct whisper_context* ctx) {
  if (ctx == nullptr || ctx->state == nullptr) return nullptr;
  const whisper_state& s = *ctx->state;
  auto per = [](int64_t us, int n) { return 1e-3f * us / std::max(1, n); };
  ctx->timings.sample_ms = per(s.t_sample_us, s.n_sample);
  ctx->timings.encode_ms = per(s.t_encode_us, s.n_encode);
  ctx->timings.decode_ms = per(s.t_decode_us, s.n_decode);
  ctx->timings.batchd_ms = per(s.t_batchd_us, s.n_batchd);
  ctx->timings.prompt_ms = per(s.t_prompt_us, s.n_prompt);
  return &ctx->timings;
}

void whisper_print_timings(struct whisper_context* ctx) {
  if (ctx == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: whisper_context is NULL\n", __func__);
    return;
  }
  const int64_t t_end_us = NowUs();
  Log(GGML_LOG_LEVEL_INFO, "\n");
  Log(GGML_LOG_LEVEL_INFO, "%s:     load time = %8.2f ms\n", __func__, ctx->t_load_us / 1000.0f);
  if (ctx->state != nullptr) {
    const whisper_state& s = *ctx->state;
    auto line = [&](const char* name, int64_t us, int n) {
      Log(GGML_LOG_LEVEL_INFO, "whisper_print_timings: %8s time = %8.2f ms / %5d runs ( %8.2f ms per run)\n", name,
          1e-3f * us, n, 1e-3f * us / std::max(1, n));  // whisper.cpp prints max(1, n) runs
    };
    Log(GGML_LOG_LEVEL_INFO, "%s:     fallbacks = %3d p / %3d h\n", __func__, s.n_fail_p, s.n_fail_h);
    Log(GGML_LOG_LEVEL_INFO, "%s:      mel time = %8.2f ms\n", __func__, s.t_mel_us / 1000.0f);
    line("sample", s.t_sample_us, s.n_sample);
    line("encode", s.t_encode_us, s.n_encode);
    line("decode", s.t_decode_us, s.n_decode);
    line("batchd", s.t_batchd_us, s.n_batchd);
    line("prompt", s.t_prompt_us, s.n_prompt);
  }
  Log(GGML_LOG_LEVEL_INFO, "%s:    total time = %8.2f ms\n", __func__, (t_end_us - ctx->t_start_us) / 1000.0f);
}

void whisper_reset_timings(struct whisper_context* ctx) {
  if (ctx == nullptr) return;
  ctx->t_start_us = NowUs();
  if (ctx->state != nullptr) {
    whisper_state& s = *ctx->state;
    s.t_mel_us = s.t_sample_us = s.t_encode_us = s.t_decode_us = s.t_batchd_us = s.t_prompt_us = 0;
    s.n_sample = s.n_encode = s.n_decode = s.n_batchd = s.n_prompt = 0;
  }
}

const char* whisper_print_system_info(void) {
  static std::once_flag once;
  static char info[256];
  std::call_once(once, [] {
    std::snprintf(info, sizeof(info), "WHISPER : COREML = 0 | OPENVINO = 0 | CPU : %s = 1 | HIGHWAY = 1 | ",
                  ggml_cpu_target_name());
  });
  return info;
}

namespace {
// The text of the calling thread's last whisper_bench_*_str call (whisper.cpp keeps one static
// string for all threads).
thread_local std::string bench_text;
}  // namespace

const char* whisper_bench_memcpy_str(int n_threads) {
  if (!whisper::BenchMemcpy(n_threads, whisper::kBenchMemcpyBytes, whisper::kBenchMemcpyIterations, &bench_text)) {
    Log(GGML_LOG_LEVEL_ERROR, "%s", bench_text.c_str());
  }
  return bench_text.c_str();
}

int whisper_bench_memcpy(int n_threads) {
  const bool ok =
      whisper::BenchMemcpy(n_threads, whisper::kBenchMemcpyBytes, whisper::kBenchMemcpyIterations, &bench_text);
  if (!ok) {
    Log(GGML_LOG_LEVEL_ERROR, "%s", bench_text.c_str());
    return -1;
  }
  std::fputs(bench_text.c_str(), stderr);
  return 0;
}

const char* whisper_bench_ggml_mul_mat_str(int n_threads) {
  if (!whisper::BenchMulMat(n_threads, whisper::BenchMulMatSizes(), whisper::kBenchMulMatMaxRuns, &bench_text)) {
    Log(GGML_LOG_LEVEL_ERROR, "%s", bench_text.c_str());
  }
  return bench_text.c_str();
}

int whisper_bench_ggml_mul_mat(int n_threads) {
  const bool ok = whisper::BenchMulMat(n_threads, whisper::BenchMulMatSizes(), whisper::kBenchMulMatMaxRuns, &bench_text);
  if (!ok) {
    Log(GGML_LOG_LEVEL_ERROR, "%s", bench_text.c_str());
    return -1;
  }
  std::fputs(bench_text.c_str(), stderr);
  return 0;
}

}  // extern "C"
