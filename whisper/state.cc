#include "whisper/state.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cpu/graph_compute.h"

namespace whisper {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

absl::Status GgmlError(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", ggml_last_error()));
}

// A no_alloc metadata context for graphs of `graph_size`: each node and each leaf created for
// the graph is one tensor object, plus the graph itself.
ggml_context* NewMetaContext(int graph_size) {
  const size_t bytes = 2 * static_cast<size_t>(graph_size) * ggml_tensor_overhead() +
                       ggml_graph_overhead_custom(graph_size) + 1024;
  const ggml_init_params params = {GGML_PAD(bytes, GGML_MEM_ALIGN), nullptr, true};
  return ggml_init(params);
}

// Every token id in [0, n_vocab); `what` names the caller.
absl::Status CheckTokens(const char* what, const int32_t* tokens, int n_tokens, int n_vocab) {
  if (tokens == nullptr) return absl::InvalidArgumentError(absl::StrCat(what, ": tokens is null"));
  for (int i = 0; i < n_tokens; ++i) {
    if (tokens[i] < 0 || tokens[i] >= n_vocab) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: tokens[%d] = %d is not in [0, n_vocab = %d]", what, i, tokens[i], n_vocab));
    }
  }
  return absl::OkStatus();
}

// The index of the first NaN or infinity in x[0 .. n), or -1 when all are finite. Cheap when
// they are: one sum in 8 partial sums (NaN and +-Inf carry through a sum); the element scan
// runs only when the sum is not finite (it then also tells an overflow of finite values apart).
// No allocation.
int64_t FirstNonFinite(const float* x, int64_t n) {
  float acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) acc[k] += x[i + k];
  }
  float sum = 0.0f;
  for (; i < n; ++i) sum += x[i];
  for (int k = 0; k < 8; ++k) sum += acc[k];
  if (std::isfinite(sum)) return -1;
  for (i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) return i;
  }
  return -1;
}

const char* NonFiniteName(float v) { return std::isnan(v) ? "NaN" : (v > 0 ? "+Inf" : "-Inf"); }

}  // namespace

absl::Status InferenceState::NonFiniteError(const std::string& what, float value, int64_t index) const {
  absl::Status weights = model_.CheckWeightsFinite();
  if (!weights.ok()) return weights;
  return absl::InternalError(absl::StrFormat(
      "%s: %s at index %d (expected finite values); every weight of model '%s' is finite, so the "
      "computation produced it",
      what, NonFiniteName(value), index, model_.path()));
}

InferenceState::InferenceState(const WhisperModel& model, int n_threads, GraphComputeFn compute,
                           const EncoderOptions& encoder)
    : model_(model), n_threads_(n_threads), encoder_options_(encoder), compute_(compute), gelu_(encoder.gelu),
      int8_attention_(encoder.int8_attention) {}

InferenceState::~InferenceState() {
  ggml_gallocr_free(enc_alloc_);
  ggml_gallocr_free(cross_alloc_);
  ggml_gallocr_free(dec_alloc_);
  ggml_gallocr_free(align_alloc_);
  ggml_backend_buffer_free(compute_buffer_);
  ggml_free(align_ctx_);
  ggml_free(enc_ctx_);
  ggml_free(cross_ctx_);
  ggml_free(dec_ctx_);
  ggml_backend_buffer_free(kv_buffer_);
  ggml_free(kv_ctx_);
  ggml_threadpool_free(threadpool_);
}

absl::StatusOr<std::unique_ptr<InferenceState>> InferenceState::Create(const WhisperModel& model,
                                                                   int n_decoders, int n_threads,
                                                                   GraphComputeFn compute,
                                                                   const EncoderOptions& encoder,
                                                                   int n_windows) {
  if (n_decoders < 1 || n_decoders > kMaxStateDecoders) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "InferenceState: n_decoders %d is not in [1, %d]", n_decoders, kMaxStateDecoders));
  }
  if (n_windows < 1 || n_windows > kMaxStateWindows) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "InferenceState: n_windows %d is not in [1, %d]", n_windows, kMaxStateWindows));
  }
  if (n_threads < 1 || n_threads > GGML_THREADPOOL_MAX_THREADS) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "InferenceState: n_threads %d is not in [1, %d]", n_threads, GGML_THREADPOOL_MAX_THREADS));
  }
  std::unique_ptr<InferenceState> state(new InferenceState(model, n_threads, compute, encoder));
  absl::Status s = state->Init(n_decoders, n_windows);
  if (!s.ok()) return s;
  return state;
}

absl::Status InferenceState::AllocateStateBuffer(int n_decoders, int n_windows) {
  const WhisperHparams& h = model_.hparams();
  const int64_t S = h.n_text_state;
  // The state buffer: encoder output, cross K/V, self K/V per decoder.
  const ggml_init_params kv_params = {(1 + 2 * static_cast<size_t>(n_windows) + 2 * static_cast<size_t>(n_decoders)) *
                                          ggml_tensor_overhead(),
                                      nullptr, true};
  kv_ctx_ = ggml_init(kv_params);
  if (kv_ctx_ == nullptr) return GgmlError("InferenceState: state context");
  embd_ = ggml_new_tensor_2d(kv_ctx_, GGML_TYPE_F32, h.n_audio_state, h.n_audio_ctx);
  ggml_set_name(embd_, "embd_enc");
  const int64_t cross_n = static_cast<int64_t>(h.n_text_layer) * h.n_audio_ctx * S;
  const int64_t self_n = static_cast<int64_t>(h.n_text_layer) * h.n_text_ctx * S;
  cross_kvs_.resize(n_windows);
  window_n_ctx_.assign(n_windows, 0);
  for (int w = 0; w < n_windows; ++w) {
    cross_kvs_[w].k = ggml_new_tensor_1d(kv_ctx_, GGML_TYPE_F16, cross_n);
    cross_kvs_[w].v = ggml_new_tensor_1d(kv_ctx_, GGML_TYPE_F16, cross_n);
    if (cross_kvs_[w].k == nullptr || cross_kvs_[w].v == nullptr) break;
    ggml_format_name(cross_kvs_[w].k, w == 0 ? "cross_k" : "cross_k_%d", w);
    ggml_format_name(cross_kvs_[w].v, w == 0 ? "cross_v" : "cross_v_%d", w);
  }
  self_kv_.resize(n_decoders);
  for (int i = 0; i < n_decoders; ++i) {
    self_kv_[i].k = ggml_new_tensor_1d(kv_ctx_, GGML_TYPE_F16, self_n);
    self_kv_[i].v = ggml_new_tensor_1d(kv_ctx_, GGML_TYPE_F16, self_n);
    if (self_kv_[i].k == nullptr || self_kv_[i].v == nullptr) break;
    ggml_format_name(self_kv_[i].k, "self_k_%d", i);
    ggml_format_name(self_kv_[i].v, "self_v_%d", i);
  }
  if (embd_ == nullptr || cross_kvs_.back().v == nullptr || self_kv_.back().v == nullptr) {
    return GgmlError("InferenceState: state tensors");
  }
  kv_buffer_ = ggml_backend_alloc_ctx_tensors(kv_ctx_);
  if (kv_buffer_ == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("InferenceState: state buffer: ", ggml_last_error()));
  }
  // Zeroed before first use, per part: the encoder output here, each decoder's self K/V as that
  // decoder runs (PrepareKv). A state sized for best-of 5 that decodes greedily never touches
  // decoders 1-4's pages, and a decoder's K pages past the positions it used are never touched
  // either, so they stay out of the resident set (tiny.en: 2.75 MB per decoder; the buffer is a
  // fresh mapping from aligned_alloc at this size). A window's cross K/V are not zeroed: Encode's
  // cross graph writes all n_ctx positions of every layer before window_n_ctx_ lets a graph read
  // them (Decode, DecodeBatch, DecodeSequences and Align refuse a window not encoded), and only
  // those are read; so their pages are first touched by the cross graph's threads, not here (a
  // batched tiny.en state of 8 windows: 74 MB that this thread faulted in before the first
  // encoder run).
  memset(embd_->data, 0, ggml_nbytes(embd_));
  self_v_zeroed_.assign(self_kv_.size(), 0);
  self_k_rows_.assign(self_kv_.size(), 0);
  return absl::OkStatus();
}

absl::Status InferenceState::CreateGraphAllocators(int n_decoders) {
  const WhisperHparams& h = model_.hparams();
  enc_ctx_ = NewMetaContext(EncoderGraphSize(h, encoder_options_));
  cross_ctx_ = NewMetaContext(CrossGraphSize(h));
  dec_ctx_ = NewMetaContext(DecoderGraphSize(h, 0, n_decoders));
  if (enc_ctx_ == nullptr || cross_ctx_ == nullptr || dec_ctx_ == nullptr) {
    return GgmlError("InferenceState: graph metadata contexts");
  }
  // One compute buffer for the encoder, cross and decoder graphs, which never run at once: sized
  // by the largest peak (the encoder's) instead of their sum (tiny.en: 21.1 MB instead of 30.3).
  compute_buffer_ = ggml_backend_cpu_buffer_new(0);
  if (compute_buffer_ == nullptr) return GgmlError("InferenceState: compute buffer");
  enc_alloc_ = ggml_gallocr_new_with_buffer(compute_buffer_);
  cross_alloc_ = ggml_gallocr_new_with_buffer(compute_buffer_);
  dec_alloc_ = ggml_gallocr_new_with_buffer(compute_buffer_);
  if (enc_alloc_ == nullptr || cross_alloc_ == nullptr || dec_alloc_ == nullptr) {
    return GgmlError("InferenceState: graph allocators");
  }
  if (compute_ == nullptr && n_threads_ > 1) {
    threadpool_ = ggml_threadpool_new(n_threads_);
    if (threadpool_ == nullptr) return GgmlError("InferenceState: thread pool");
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> InferenceState::ReserveGraphs(int n_decoders) {
  const WhisperHparams& h = model_.hparams();
  size_t work_size = 0;
  auto plan_size = [&](ggml_cgraph* graph) {
    if (compute_ == nullptr) {
      work_size = std::max(work_size, ggml_graph_plan(graph, n_threads_, threadpool_).work_size);
    }
  };
  // Encoder and cross graphs at the full window: reserved, placed and kept.
  absl::Status s = BuildWindowGraphs(h.n_audio_ctx, 0);
  if (!s.ok()) return s;
  plan_size(enc_graph_.graph);
  plan_size(cross_graph_);

  // Decoder worst cases: every position in one step (the largest activations), and one token
  // attending to a full cache. Reserve with the first, plan both.
  for (int n_tokens : {h.n_text_ctx, 1}) {
    ggml_reset(dec_ctx_);
    absl::StatusOr<DecoderGraph> g = BuildDecoderGraph(dec_ctx_, model_, self_kv_[0], cross_kvs_[0],
                                                       h.n_audio_ctx, n_tokens,
                                                       h.n_text_ctx - n_tokens, nullptr, 0, 1, gelu_);
    if (!g.ok()) return g.status();
    if (n_tokens == h.n_text_ctx && !ggml_gallocr_reserve(dec_alloc_, g->graph)) {
      return GgmlError("InferenceState: reserving the decoder graph");
    }
    if (!ggml_gallocr_alloc_graph(dec_alloc_, g->graph)) {
      return GgmlError("InferenceState: placing the decoder graph");
    }
    plan_size(g->graph);
  }
  // A batched step of every decoder near the last position, reserved too (more nodes than the
  // n_text_ctx step, smaller activations): all in window 0 at one n_past (beam search, best-of:
  // one cross-attention product), and each in window b % n_windows at its own n_past
  // (DecodeSequences: a cross-attention product per sequence, the positions input).
  seqs_.resize(n_decoders);
  for (bool distinct : {false, true}) {
    if (distinct && n_windows() == 1) break;
    for (int b = 0; b < n_decoders; ++b) {
      seqs_[b] = DecoderSequence{self_kv_[b], cross_kvs_[distinct ? b % n_windows() : 0], h.n_audio_ctx,
                                 h.n_text_ctx - 1 - (distinct ? b % 2 : 0)};
    }
    ggml_reset(dec_ctx_);
    absl::StatusOr<DecoderGraph> g = BuildSequencesDecoderGraph(dec_ctx_, model_, seqs_.data(), n_decoders, gelu_);
    if (!g.ok()) return g.status();
    if (!ggml_gallocr_reserve(dec_alloc_, g->graph) || !ggml_gallocr_alloc_graph(dec_alloc_, g->graph)) {
      return GgmlError("InferenceState: placing the batched decoder graph");
    }
    plan_size(g->graph);
  }
  return work_size;
}

absl::Status InferenceState::Init(int n_decoders, int n_windows) {
  const WhisperHparams& h = model_.hparams();
  absl::Status s = AllocateStateBuffer(n_decoders, n_windows);
  if (!s.ok()) return s;
  s = CreateGraphAllocators(n_decoders);
  if (!s.ok()) return s;
  absl::StatusOr<size_t> work_size = ReserveGraphs(n_decoders);
  if (!work_size.ok()) return work_size.status();
  step_decoders_.resize(n_decoders);
  step_tokens_.resize(n_decoders);
  ggml_reset(dec_ctx_);
  work_.resize(*work_size);
  logits_.assign(n_decoders, std::vector<float>(h.n_vocab, 0.0f));
  return absl::OkStatus();
}

absl::Status InferenceState::BuildWindowGraphs(int n_ctx, int window) {
  graphs_n_ctx_ = 0;
  ggml_reset(enc_ctx_);
  ggml_reset(cross_ctx_);
  EncoderOptions options = encoder_options_;
  options.gelu = gelu_;
  options.int8_attention = int8_attention_;
  absl::StatusOr<EncoderGraph> enc = BuildEncoderGraph(enc_ctx_, model_, n_ctx, embd_, options);
  if (!enc.ok()) return enc.status();
  absl::StatusOr<ggml_cgraph*> cross =
      BuildCrossGraph(cross_ctx_, model_, n_ctx, embd_, cross_kvs_[window].k, cross_kvs_[window].v);
  if (!cross.ok()) return cross.status();
  // The first build (the full window) sizes the buffer; smaller windows fit in it. Encode places
  // both graphs again before computing them (the buffer is shared with the decoder).
  if (ggml_gallocr_get_max_plan_size(enc_alloc_) == 0 &&
      (!ggml_gallocr_reserve(enc_alloc_, enc->graph) ||
       !ggml_gallocr_reserve(cross_alloc_, *cross))) {
    return GgmlError("InferenceState: reserving the encoder graphs");
  }
  enc_graph_ = *enc;
  cross_graph_ = *cross;
  cross_graph_window_ = window;
  graphs_gelu_ = gelu_;
  graphs_int8_attention_ = int8_attention_;
  graphs_n_ctx_ = n_ctx;
  return absl::OkStatus();
}

absl::Status InferenceState::Compute(ggml_cgraph* graph, const char* what) {
  if (compute_ != nullptr) {
    if (!compute_(graph)) return GgmlError(what);
    return absl::OkStatus();
  }
  ggml_cplan plan = ggml_graph_plan(graph, n_threads_, threadpool_);
  if (plan.work_size > work_.size()) work_.resize(plan.work_size);  // not within reserved shapes
  plan.work_data = work_.empty() ? nullptr : work_.data();
  plan.profile = profile_;
  if (ggml_graph_compute(graph, &plan) != GGML_STATUS_SUCCESS) return GgmlError(what);
  return absl::OkStatus();
}

absl::Status InferenceState::Encode(const float* mel, int n_frames_total, int seek, int audio_ctx,
                                  int n_frames_valid) {
  return EncodeWindow(0, mel, n_frames_total, seek, audio_ctx, n_frames_valid);
}

absl::Status InferenceState::EncodeWindow(int window, const float* mel, int n_frames_total, int seek, int audio_ctx,
                                          int n_frames_valid) {
  const Clock::time_point t0 = Clock::now();
  const WhisperHparams& h = model_.hparams();
  if (window < 0 || window >= n_windows()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("Encode: window %d is not in [0, n_windows = %d)", window, n_windows()));
  }
  if (mel == nullptr || n_frames_total < 0 || seek < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "Encode: mel %s, n_frames_total %d, seek %d (need a mel, n_frames_total >= 0, "
        "seek >= 0)",
        mel == nullptr ? "null" : "set", n_frames_total, seek));
  }
  if (audio_ctx < 0 || audio_ctx > h.n_audio_ctx) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "Encode: audio_ctx %d is not in [0, n_audio_ctx = %d]", audio_ctx, h.n_audio_ctx));
  }
  const int n_ctx = audio_ctx == 0 ? h.n_audio_ctx : audio_ctx;
  window_n_ctx_[window] = 0;
  if (graphs_n_ctx_ != n_ctx || cross_graph_window_ != window || graphs_gelu_ != gelu_ ||
      graphs_int8_attention_ != int8_attention_) {
    absl::Status s = BuildWindowGraphs(n_ctx, window);
    if (!s.ok()) return s;
  }

  // The encoder graph owns the shared compute buffer from here (the decoder steps placed theirs).
  if (!ggml_gallocr_alloc_graph(enc_alloc_, enc_graph_.graph)) return GgmlError("Encode: placing the encoder graph");
  // The window: frames [seek, seek + 2 n_ctx) of each band, zero past the end of the mel.
  ggml_tensor* in = enc_graph_.mel;
  const int64_t n_win = in->ne[0];
  const int64_t n_valid = n_frames_valid < 0 ? n_frames_total : std::min(n_frames_valid, n_frames_total);
  const int64_t n_copy = std::max<int64_t>(0, std::min<int64_t>(n_win, n_valid - int64_t{seek}));
  for (int m = 0; m < h.n_mels; ++m) {
    float* dst = reinterpret_cast<float*>(static_cast<char*>(in->data) + m * in->nb[1]);
    if (n_copy > 0) memcpy(dst, mel + int64_t{m} * n_frames_total + seek, n_copy * sizeof(float));
    std::fill(dst + n_copy, dst + n_win, 0.0f);
  }
  absl::Status s = Compute(enc_graph_.graph, "Encode: encoder graph");
  if (!s.ok()) return s;
  // Its n_ctx columns of S floats (a NaN weight shows here, or in the logits; model.h).
  const float* out = static_cast<const float*>(embd_->data);
  const int64_t bad = FirstNonFinite(out, embd_->ne[0] * n_ctx);
  if (bad >= 0) {
    return NonFiniteError(absl::StrFormat("Encode: the encoder output of window %d (seek %d, position %d of %d)",
                                          window, seek, bad / embd_->ne[0], n_ctx),
                          out[bad], bad);
  }
  // The encoder's output is in the state buffer (embd_): the cross graph may take the bytes.
  if (!ggml_gallocr_alloc_graph(cross_alloc_, cross_graph_)) return GgmlError("Encode: placing the cross graph");
  s = Compute(cross_graph_, "Encode: cross K/V graph");
  if (!s.ok()) return s;
  window_n_ctx_[window] = n_ctx;
  timings_.encode_ms += MsSince(t0);
  timings_.n_encode++;
  return absl::OkStatus();
}

absl::Status InferenceState::Decode(int decoder, const int32_t* tokens, int n_tokens, int n_past, int window) {
  const Clock::time_point t0 = Clock::now();
  const WhisperHparams& h = model_.hparams();
  if (window < 0 || window >= n_windows()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("Decode: window %d is not in [0, n_windows = %d)", window, n_windows()));
  }
  if (window_n_ctx_[window] == 0) {
    return absl::FailedPreconditionError("Decode: no window encoded yet (call Encode first)");
  }
  if (decoder < 0 || decoder >= n_decoders()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "Decode: decoder %d is not in [0, n_decoders = %d]", decoder, n_decoders()));
  }
  absl::Status valid = CheckTokens("Decode", tokens, n_tokens, h.n_vocab);
  if (!valid.ok()) return valid;
  PrepareKv(decoder, n_past, n_tokens);
  ggml_reset(dec_ctx_);
  absl::StatusOr<DecoderGraph> g = BuildDecoderGraph(dec_ctx_, model_, self_kv_[decoder], cross_kvs_[window],
                                                     window_n_ctx_[window], n_tokens, n_past, nullptr, 0, 1, gelu_);
  if (!g.ok()) return g.status();
  if (!ggml_gallocr_alloc_graph(dec_alloc_, g->graph)) {
    return GgmlError("Decode: placing the decoder graph");
  }
  memcpy(g->tokens->data, tokens, sizeof(int32_t) * n_tokens);
  absl::Status s = Compute(g->graph, "Decode: decoder graph");
  if (!s.ok()) return s;
  memcpy(logits_[decoder].data(), g->logits->data, sizeof(float) * h.n_vocab);
  const int64_t bad = FirstNonFinite(logits_[decoder].data(), h.n_vocab);
  if (bad >= 0) {
    return NonFiniteError(absl::StrFormat("Decode: the logits of decoder %d at position %d", decoder,
                                          n_past + n_tokens - 1),
                          logits_[decoder][bad], bad);
  }
  timings_.decode_ms += MsSince(t0);
  timings_.n_decode++;
  timings_.n_decode_tokens += n_tokens;
  return absl::OkStatus();
}

absl::Status InferenceState::DecodeBatch(const int* decoders, const int32_t* tokens, int n, int n_past) {
  if (decoders == nullptr || tokens == nullptr || n < 1 || n > n_decoders()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "DecodeBatch: %d decoders (need 1..%d)%s", n, n_decoders(),
        decoders == nullptr || tokens == nullptr ? ", and non-null decoder and token arrays" : ""));
  }
  if (n == 1) return Decode(decoders[0], tokens, 1, n_past);
  const Clock::time_point t0 = Clock::now();
  const WhisperHparams& h = model_.hparams();
  if (window_n_ctx_[0] == 0) {
    return absl::FailedPreconditionError("DecodeBatch: no window encoded yet (call Encode first)");
  }
  for (int b = 0; b < n; ++b) {
    if (decoders[b] < 0 || decoders[b] >= n_decoders()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "DecodeBatch: decoders[%d] = %d is not in [0, n_decoders = %d)", b, decoders[b], n_decoders()));
    }
    for (int a = 0; a < b; ++a) {
      if (decoders[a] == decoders[b]) {
        return absl::InvalidArgumentError(
            absl::StrFormat("DecodeBatch: decoder %d appears twice (entries %d and %d)", decoders[b], a, b));
      }
    }
  }
  absl::Status valid = CheckTokens("DecodeBatch", tokens, n, h.n_vocab);
  if (!valid.ok()) return valid;
  if (n_past < 0 || n_past >= h.n_text_ctx) {
    return absl::InvalidArgumentError(
        absl::StrFormat("DecodeBatch: n_past %d is not in [0, n_text_ctx = %d)", n_past, h.n_text_ctx));
  }
  for (int b = 0; b < n; ++b) {
    PrepareKv(decoders[b], n_past, 1);
    seqs_[b] = DecoderSequence{self_kv_[decoders[b]], cross_kvs_[0], window_n_ctx_[0], n_past};
  }
  absl::Status s = RunSequences("DecodeBatch", decoders, tokens, n);
  if (!s.ok()) return s;
  timings_.decode_ms += MsSince(t0);
  timings_.n_decode++;
  timings_.n_decode_tokens += n;
  return absl::OkStatus();
}

absl::Status InferenceState::CheckSequenceSteps(const SequenceStep* steps, int n) const {
  const WhisperHparams& h = model_.hparams();
  if (steps == nullptr || n < 1 || n > n_decoders()) {
    return absl::InvalidArgumentError(absl::StrFormat("DecodeSequences: %d sequences (need 1..%d)%s", n,
                                                      n_decoders(), steps == nullptr ? ", and a step array" : ""));
  }
  for (int b = 0; b < n; ++b) {
    const SequenceStep& st = steps[b];
    if (st.decoder < 0 || st.decoder >= n_decoders() || st.window < 0 || st.window >= n_windows()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("DecodeSequences: steps[%d] has decoder %d, window %d (need [0, %d), [0, %d))", b,
                          st.decoder, st.window, n_decoders(), n_windows()));
    }
    if (window_n_ctx_[st.window] == 0) {
      return absl::FailedPreconditionError(
          absl::StrFormat("DecodeSequences: steps[%d]: window %d was never encoded (EncodeWindow)", b, st.window));
    }
    if (st.token < 0 || st.token >= h.n_vocab || st.n_past < 0 || st.n_past >= h.n_text_ctx) {
      return absl::InvalidArgumentError(
          absl::StrFormat("DecodeSequences: steps[%d] has token %d at n_past %d (need [0, %d), [0, %d))", b,
                          st.token, st.n_past, h.n_vocab, h.n_text_ctx));
    }
    for (int a = 0; a < b; ++a) {
      if (steps[a].decoder == st.decoder) {
        return absl::InvalidArgumentError(
            absl::StrFormat("DecodeSequences: decoder %d appears twice (steps %d and %d)", st.decoder, a, b));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status InferenceState::DecodeSequences(const SequenceStep* steps, int n) {
  const Clock::time_point t0 = Clock::now();
  absl::Status s = CheckSequenceSteps(steps, n);
  if (!s.ok()) return s;
  for (int b = 0; b < n; ++b) {
    const SequenceStep& st = steps[b];
    PrepareKv(st.decoder, st.n_past, 1);
    seqs_[b] = DecoderSequence{self_kv_[st.decoder], cross_kvs_[st.window], window_n_ctx_[st.window], st.n_past};
    step_decoders_[b] = st.decoder;
    step_tokens_[b] = st.token;
  }
  s = RunSequences("DecodeSequences", step_decoders_.data(), step_tokens_.data(), n);
  if (!s.ok()) return s;
  timings_.decode_ms += MsSince(t0);
  timings_.n_decode++;
  timings_.n_decode_tokens += n;
  return absl::OkStatus();
}

absl::Status InferenceState::RunSequences(const char* what, const int* decoders, const int32_t* tokens, int n) {
  const WhisperHparams& h = model_.hparams();
  ggml_reset(dec_ctx_);
  absl::StatusOr<DecoderGraph> g = BuildSequencesDecoderGraph(dec_ctx_, model_, seqs_.data(), n, gelu_);
  if (!g.ok()) return g.status();
  if (!ggml_gallocr_alloc_graph(dec_alloc_, g->graph)) {
    return GgmlError(absl::StrCat(what, ": placing the decoder graph"));
  }
  memcpy(g->tokens->data, tokens, sizeof(int32_t) * n);
  if (g->positions != nullptr) {
    int32_t* pos = static_cast<int32_t*>(g->positions->data);
    for (int b = 0; b < n; ++b) pos[b] = seqs_[b].n_past;
  }
  absl::Status s = Compute(g->graph, what);
  if (!s.ok()) return s;
  for (int b = 0; b < n; ++b) {
    float* logits = logits_[decoders[b]].data();
    memcpy(logits, static_cast<const char*>(g->logits->data) + b * g->logits->nb[1], sizeof(float) * h.n_vocab);
    const int64_t bad = FirstNonFinite(logits, h.n_vocab);
    if (bad >= 0) {
      return NonFiniteError(
          absl::StrFormat("%s: the logits of decoder %d at position %d", what, decoders[b], seqs_[b].n_past),
          logits[bad], bad);
    }
  }
  return absl::OkStatus();
}

absl::Status InferenceState::SetAlignmentHeads(const std::vector<AlignmentHead>& heads) {
  const WhisperHparams& h = model_.hparams();
  aheads_.clear();
  ggml_gallocr_free(align_alloc_);
  ggml_free(align_ctx_);
  align_alloc_ = nullptr;
  align_ctx_ = nullptr;
  if (heads.empty()) return absl::OkStatus();
  const int n_heads = static_cast<int>(heads.size());
  align_ctx_ = NewMetaContext(DecoderGraphSize(h, n_heads));
  align_alloc_ = ggml_gallocr_new();
  if (align_ctx_ == nullptr || align_alloc_ == nullptr) return GgmlError("SetAlignmentHeads: graph context");
  absl::StatusOr<DecoderGraph> g = BuildDecoderGraph(align_ctx_, model_, self_kv_[0], cross_kvs_[0], h.n_audio_ctx,
                                                     MaxAlignTokens(h), 0, heads.data(), n_heads, 1, gelu_);
  if (!g.ok()) return g.status();
  if (!ggml_gallocr_reserve(align_alloc_, g->graph) || !ggml_gallocr_alloc_graph(align_alloc_, g->graph)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("SetAlignmentHeads: reserving the alignment graph: ", ggml_last_error()));
  }
  if (compute_ == nullptr) {
    const size_t need = ggml_graph_plan(g->graph, n_threads_, threadpool_).work_size;
    if (need > work_.size()) work_.resize(need);
  }
  ggml_reset(align_ctx_);
  aheads_ = heads;
  return absl::OkStatus();
}

absl::StatusOr<const float*> InferenceState::Align(const int32_t* tokens, int n_tokens, int logits_from, int window,
                                                   int decoder) {
  const Clock::time_point t0 = Clock::now();
  const WhisperHparams& h = model_.hparams();
  align_logits_ = nullptr;
  if (aheads_.empty()) return absl::FailedPreconditionError("Align: no alignment heads (SetAlignmentHeads)");
  if (window < 0 || window >= n_windows() || decoder < 0 || decoder >= n_decoders()) {
    return absl::InvalidArgumentError(absl::StrFormat("Align: window %d, decoder %d (need [0, %d), [0, %d))", window,
                                                      decoder, n_windows(), n_decoders()));
  }
  if (window_n_ctx_[window] == 0) {
    return absl::FailedPreconditionError("Align: no window encoded yet (call Encode first)");
  }
  absl::Status valid = CheckTokens("Align", tokens, n_tokens, h.n_vocab);
  if (!valid.ok()) return valid;
  if (logits_from < -1 || logits_from >= n_tokens) {
    return absl::InvalidArgumentError(
        absl::StrCat("Align: logits_from ", logits_from, " is not -1 or in [0, n_tokens ", n_tokens, ")"));
  }
  PrepareKv(decoder, 0, n_tokens);
  ggml_reset(align_ctx_);
  absl::StatusOr<DecoderGraph> g =
      BuildDecoderGraph(align_ctx_, model_, self_kv_[decoder], cross_kvs_[window], window_n_ctx_[window], n_tokens, 0,
                        aheads_.data(),
                        static_cast<int>(aheads_.size()), logits_from < 0 ? 1 : n_tokens - logits_from, gelu_);
  if (!g.ok()) return g.status();
  if (!ggml_gallocr_alloc_graph(align_alloc_, g->graph)) return GgmlError("Align: placing the alignment graph");
  memcpy(g->tokens->data, tokens, sizeof(int32_t) * n_tokens);
  absl::Status s = Compute(g->graph, "Align: alignment graph");
  if (!s.ok()) return s;
  if (logits_from >= 0) align_logits_ = static_cast<const float*>(g->logits->data);
  timings_.decode_ms += MsSince(t0);
  timings_.n_decode++;
  timings_.n_decode_tokens += n_tokens;
  return static_cast<const float*>(g->aheads_qk->data);
}

void InferenceState::PrepareKv(int decoder, int n_past, int n_tokens) {
  const WhisperHparams& h = model_.hparams();
  const DecoderKv& kv = self_kv_[decoder];
  if (!self_v_zeroed_[decoder]) {  // V: channel rows of n_text_ctx, so every page is written anyway
    memset(kv.v->data, 0, ggml_nbytes(kv.v));
    self_v_zeroed_[decoder] = 1;
  }
  // K: positions are rows of S, so only rows up to the high-water mark are ever touched. Rows
  // [n_past, n_past + n_tokens) are about to be written; rows below n_past that no step wrote
  // are zeroed, so every row a graph reads holds a value.
  const int64_t from = self_k_rows_[decoder];
  const int64_t to = std::min<int64_t>(n_past, h.n_text_ctx);
  if (to > from) {
    const size_t es = sizeof(ggml_fp16_t);
    const int64_t S = h.n_text_state;
    for (int il = 0; il < h.n_text_layer; ++il) {
      memset(static_cast<char*>(kv.k->data) + es * S * (int64_t{h.n_text_ctx} * il + from), 0,
             es * S * (to - from));
    }
  }
  self_k_rows_[decoder] = std::max<int64_t>(from, std::min<int64_t>(int64_t{n_past} + n_tokens, h.n_text_ctx));
}

const float* InferenceState::logits(int decoder) const {
  if (decoder < 0 || decoder >= n_decoders()) return nullptr;
  return logits_[decoder].data();
}

void InferenceState::CopyKv(int src, int dst, int n_tokens) {
  if (src < 0 || src >= n_decoders() || dst < 0 || dst >= n_decoders() || src == dst) return;
  CopyKvRange(src, dst, 0, n_tokens);
  logits_[dst] = logits_[src];  // same size: no allocation
}

void InferenceState::ParallelFor(int n, void (*fn)(void* arg, int i), void* arg) {
  const int nth = std::min(n, n_threads_);
  struct Job {
    void (*fn)(void*, int);
    void* arg;
    int n;
  } job{fn, arg, n};
  auto run = [](void* a, int ith, int nth_run) {
    const Job& j = *static_cast<const Job*>(a);
    for (int i = ith; i < j.n; i += nth_run) j.fn(j.arg, i);
  };
  if (threadpool_ != nullptr && nth > 1 && ggml_threadpool_run(threadpool_, nth, run, &job)) return;
  for (int i = 0; i < n; ++i) fn(arg, i);
}

void InferenceState::CopyKvRange(int src, int dst, int begin, int end) {
  if (src < 0 || src >= n_decoders() || dst < 0 || dst >= n_decoders() || src == dst) return;
  const WhisperHparams& h = model_.hparams();
  const int64_t S = h.n_text_state;
  const int64_t n_ctx = h.n_text_ctx;
  const int64_t e = std::max(0, std::min(end, h.n_text_ctx));
  const int64_t b = std::max<int64_t>(0, std::min<int64_t>(begin, e));
  const size_t es = sizeof(ggml_fp16_t);
  PrepareKv(src, static_cast<int>(e), 0);
  PrepareKv(dst, static_cast<int>(b), static_cast<int>(e - b));  // rows [b, e) written below
  const char* sk = static_cast<const char*>(self_kv_[src].k->data);
  const char* sv = static_cast<const char*>(self_kv_[src].v->data);
  char* dk = static_cast<char*>(self_kv_[dst].k->data);
  char* dv = static_cast<char*>(self_kv_[dst].v->data);
  for (int il = 0; il < h.n_text_layer; ++il) {
    const size_t layer = es * n_ctx * S * il;
    memcpy(dk + layer + es * S * b, sk + layer + es * S * b, es * S * (e - b));  // K: positions are rows of S
    for (int64_t c = 0; c < S; ++c) {  // V: channels are rows of n_text_ctx
      const size_t off = layer + es * (n_ctx * c + b);
      memcpy(dv + off, sv + off, es * (e - b));
    }
  }
}

size_t InferenceState::compute_buffer_size(Graph which) const {
  switch (which) {
    case Graph::kEncoder:
      return ggml_gallocr_get_max_plan_size(enc_alloc_);
    case Graph::kCross:
      return ggml_gallocr_get_max_plan_size(cross_alloc_);
    case Graph::kDecoder:
      return ggml_gallocr_get_max_plan_size(dec_alloc_);
    case Graph::kAlign:
      return align_alloc_ == nullptr ? 0 : ggml_gallocr_get_buffer_size(align_alloc_, 0);
  }
  return 0;
}

size_t InferenceState::compute_buffer_total() const {
  return (compute_buffer_ == nullptr ? 0 : ggml_backend_buffer_get_size(compute_buffer_)) +
         (align_alloc_ == nullptr ? 0 : ggml_gallocr_get_buffer_size(align_alloc_, 0));
}

size_t InferenceState::kv_buffer_size() const {
  return kv_buffer_ == nullptr ? 0 : ggml_backend_buffer_get_size(kv_buffer_);
}

}  // namespace whisper
