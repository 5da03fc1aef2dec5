#include "apps/server/state_pool.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "apps/server/log_capture.h"
#include "tools/convert/ct2_folder.h"

namespace whisper::server {

namespace {

// Each state transcribes 1 s of silence (greedy, n_threads threads), so its buffers (and the
// shared batch's) are in memory before the first request. The graphs are reserved at their
// largest when the state is made (whisper/state.cc), so one attempt of at most 8 tokens is enough:
// without the caps a model that never ends its text (random weights: the fuzzer's) decodes to
// CTranslate2's max_length at every fallback temperature. Errors: Internal.
absl::Status WarmUp(whisper_context* ctx, const std::vector<whisper_state*>& states, int n_threads) {
  const std::vector<float> silence(WHISPER_SAMPLE_RATE, 0.0f);
  whisper_full_params w = whisper_full_default_params(WHISPER_SAMPLING_GREEDY);
  w.temperature_inc = 0.0f;
  w.ggml_max_new_tokens = 8;
  w.n_threads = n_threads;
  w.print_progress = false;
  w.language = "en";
  for (whisper_state* s : states) {
    ErrorCapture errors;  // the library's message (e.g. a model file with a NaN weight) into the error
    if (whisper_full_with_state(ctx, s, w, silence.data(), static_cast<int>(silence.size())) != 0) {
      return absl::InternalError(absl::StrCat("warm-up transcription failed: ", errors.FirstOr("no error logged")));
    }
  }
  return absl::OkStatus();
}

// The model at `path` without states (WHISPER_GGML_INIT_NO_STATE): a ggml file, or a CTranslate2
// folder (faster-whisper's) converted in memory as the CLI and the Python module do
// (tools/convert/ct2_folder.h), the image freed once loaded and the messages naming the folder.
// With pick_heads, DTW is on with the alignment heads preset of the model's shape, if it has one
// (*preset; WHISPER_AHEADS_NONE otherwise), chosen within the one load
// (WHISPER_GGML_INIT_HEADS_FOR_SHAPE). Errors: Ct2FolderToGgmlImage's, prefixed with the folder;
// InvalidArgument with the loader's message.
absl::StatusOr<whisper_context*> InitContext(const std::string& path, whisper_context_params cparams, bool pick_heads,
                                             whisper_alignment_heads_preset* preset) {
  ErrorCapture errors;
  std::vector<uint8_t> image;
  if (ggml_whisper::convert::IsDirectory(path)) {
    absl::StatusOr<std::vector<uint8_t>> converted = ggml_whisper::convert::Ct2FolderToGgmlImage(path);
    if (!converted.ok()) {
      return absl::Status(converted.status().code(), absl::StrCat("cannot load the CTranslate2 model folder '", path,
                                                                  "': ", converted.status().message()));
    }
    image = *std::move(converted);
  }
  const int flags = WHISPER_GGML_INIT_NO_STATE | (pick_heads ? WHISPER_GGML_INIT_HEADS_FOR_SHAPE : 0);
  whisper_context* ctx = image.empty()
                             ? whisper_ggml_init(path.c_str(), nullptr, 0, nullptr, cparams, flags)
                             : whisper_ggml_init(nullptr, image.data(), image.size(), path.c_str(), cparams, flags);
  if (ctx == nullptr) return absl::InvalidArgumentError(errors.FirstOr(absl::StrCat("cannot load model '", path, "'")));
  if (pick_heads) *preset = whisper_ggml_alignment_heads_preset_for_model(ctx);
  return ctx;
}

}  // namespace

int DecodersForRequest(int beam_size, int best_of) {
  const int sampled = std::max(1, best_of);
  return beam_size > 1 ? 2 * std::max(beam_size, sampled) : sampled;
}

absl::StatusOr<std::unique_ptr<LoadedModel>> LoadedModel::Load(const std::string& path, int parallel, int queue,
                                                               whisper_ggml_decoding decoding, int warmup_threads,
                                                               const std::string& dtw, bool flash_attn,
                                                               const std::string& compute_type,
                                                               const BatchOptions& batch, int int8_attention) {
  if (parallel < 1 || queue < 0) {
    return absl::InvalidArgumentError(absl::StrCat("LoadedModel::Load: parallel = ", parallel, ", queue = ", queue,
                                                   ", expected parallel >= 1 and queue >= 0"));
  }
  ErrorCapture errors;
  std::unique_ptr<LoadedModel> m(new LoadedModel());
  m->path_ = path;
  m->queue_ = queue;
  whisper_context_params cparams = whisper_context_default_params();
  cparams.use_gpu = false;
  cparams.flash_attn = flash_attn;
  char msg[256] = "";
  const int ct = whisper_ggml_set_compute_type(&cparams, compute_type.c_str(), msg, sizeof(msg));
  if (ct < 0) return absl::InvalidArgumentError(absl::StrCat("LoadedModel::Load: ", msg));
  if (ct > 0) std::fprintf(stderr, "note: --compute-type %s\n", msg);
  whisper_alignment_heads_preset preset = WHISPER_AHEADS_NONE;
  if (!dtw.empty()) {
    preset = whisper_ggml_alignment_heads_preset_from_name(dtw.c_str());
    if (preset == WHISPER_AHEADS_NONE) {
      return absl::InvalidArgumentError(absl::StrCat("LoadedModel::Load: dtw preset '", dtw, "' is unknown"));
    }
    cparams.dtw_token_timestamps = true;
    cparams.dtw_aheads_preset = preset;
    m->dtw_every_request_ = true;
  }
  absl::StatusOr<whisper_context*> ctx = InitContext(path, cparams, /*pick_heads=*/dtw.empty(), &preset);
  if (!ctx.ok()) return ctx.status();
  m->ctx_ = *ctx;  // states: below
  m->words_available_ = preset != WHISPER_AHEADS_NONE;
  if (whisper_ggml_set_decoding(m->ctx_, decoding) != 0) {
    return absl::InvalidArgumentError(errors.FirstOr("whisper_ggml_set_decoding failed"));
  }
  if (whisper_ggml_set_int8_attention(m->ctx_, int8_attention) != 0) {  // before the batch and states
    return absl::InvalidArgumentError(errors.FirstOr("whisper_ggml_set_int8_attention failed"));
  }
  if (batch.decoders_per_slot > 0 && parallel >= 2) {
    m->batch_ = whisper_ggml_batch_init(m->ctx_, parallel, batch.decoders_per_slot, batch.n_threads);
    if (m->batch_ == nullptr) {
      return absl::ResourceExhaustedError(errors.FirstOr(absl::StrCat("'", path, "': cannot make the decoder batch of ",
                                                                      parallel, " slots")));
    }
  }
  for (int i = 0; i < parallel; ++i) {
    whisper_state* s = whisper_init_state(m->ctx_);
    if (s == nullptr) {
      return absl::ResourceExhaustedError(
          errors.FirstOr(absl::StrCat("'", path, "': cannot make whisper_state ", i + 1, " of ", parallel)));
    }
    whisper_ggml_state_set_dtw(s, m->dtw_every_request_ ? 1 : 0);
    if (m->batch_ != nullptr) whisper_ggml_state_set_batch(s, m->batch_);
    m->states_.push_back(s);
  }
  m->free_ = m->states_;
  if (warmup_threads > 0) {
    if (absl::Status st = WarmUp(m->ctx_, m->states_, warmup_threads); !st.ok()) {
      return absl::InternalError(errors.FirstOr(absl::StrCat("'", path, "': ", st.message())));
    }
  }
  return m;
}

LoadedModel::~LoadedModel() {
  for (whisper_state* s : states_) whisper_free_state(s);
  whisper_ggml_batch_free(batch_);
  whisper_free(ctx_);
}

LoadedModel::Lease::~Lease() {
  if (pool_ != nullptr) pool_->Release(state_);
}

absl::StatusOr<LoadedModel::Lease> LoadedModel::Acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  if (free_.empty()) {
    if (waiting_ >= queue_) {
      return absl::ResourceExhaustedError(absl::StrCat("server busy: all ", states_.size(),
                                                       " transcription slots are in use and ", waiting_,
                                                       " requests are queued (--parallel, --queue)"));
    }
    ++waiting_;
    cv_.wait(lock, [this] { return !free_.empty(); });
    --waiting_;
  }
  whisper_state* s = free_.back();
  free_.pop_back();
  return Lease(this, s);
}

void LoadedModel::Release(whisper_state* state) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(state);
  }
  cv_.notify_one();
}

int LoadedModel::busy() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(states_.size() - free_.size());
}

int LoadedModel::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return waiting_;
}

}  // namespace whisper::server
