// whisper.h's whisper_vad_* functions (whisper.cpp 1.8.5's VAD API) over whisper/silero_vad.h and
// whisper/vad_segments.h (whisper.cpp's rules), and the filtered audio + time map that
// whisper_full transcribes with params.vad (whisper.cpp's whisper_vad: speech stretches joined
// with samples_overlap seconds of overlap and 0.1 s of silence between, times mapped back by
// linear interpolation between the stretches' edges; token times in the inserted part go to the
// nearer edge, whisper.cpp 1.9.3's whisper_full_get_token_t0/t1).
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "whisper/silero_vad.h"
#include "whisper/vad_segments.h"
#include "whisper/whisper_impl.h"

struct whisper_vad_context {
  std::unique_ptr<whisper::SileroVad> vad;
  std::vector<float> probs;
};

struct whisper_vad_segments {
  std::vector<whisper::SpeechSpan> spans;  // samples
};

namespace whisper {
namespace api {
namespace {

constexpr int64_t kSplitGapCs = 200;

// whisper.cpp's unit conversions (src/whisper.cpp samples_to_cs / cs_to_samples).
int64_t SamplesToCs(int64_t samples) { return static_cast<int64_t>(samples / 16000.0 * 100.0 + 0.5); }
int64_t CsToSamples(int64_t cs) { return static_cast<int64_t>(cs / 100.0 * 16000 + 0.5); }

VadParams FromC(const whisper_vad_params& p) {
  VadParams v;
  v.threshold = p.threshold;
  v.min_speech_duration_ms = p.min_speech_duration_ms;
  v.min_silence_duration_ms = p.min_silence_duration_ms;
  v.max_speech_duration_s = p.max_speech_duration_s;
  v.speech_pad_ms = p.speech_pad_ms;
  return v;
}

whisper_vad_context* MakeContext(absl::StatusOr<std::unique_ptr<SileroVad>> vad, const char* func) {
  if (!vad.ok()) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: %s\n", func, std::string(vad.status().message()).c_str());
    return nullptr;
  }
  auto* ctx = new whisper_vad_context();
  ctx->vad = std::move(*vad);
  return ctx;
}

}  // namespace

bool DetectSpeech(whisper_vad_context* vctx, const float* samples, int n_samples, bool reset, const char* func) {
  if (vctx == nullptr || (samples == nullptr && n_samples > 0) || n_samples < 0) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: NULL context or samples, or n_samples %d < 0\n", func, n_samples);
    return false;
  }
  if (reset) vctx->vad->Reset();
  const int win = SileroVad::kWindow;
  const int n_windows = (n_samples + win - 1) / win;
  vctx->probs.resize(static_cast<size_t>(n_windows));
  const int n_full = n_samples / win;
  absl::Status st = vctx->vad->Run(samples, n_full, vctx->probs.data());
  if (st.ok() && n_full < n_windows) {  // the last, partial window: zero-padded (whisper.cpp)
    float last[SileroVad::kWindow];
    const int have = n_samples - n_full * win;
    std::memcpy(last, samples + static_cast<int64_t>(n_full) * win, sizeof(float) * have);
    std::fill(last + have, last + win, 0.0f);
    absl::StatusOr<float> p = vctx->vad->Next(last);
    st = p.status();
    if (p.ok()) vctx->probs[static_cast<size_t>(n_full)] = *p;
  }
  if (!st.ok()) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: %s\n", func, std::string(st.message()).c_str());
    return false;
  }
  return true;
}

namespace {

// The state's VAD model for params.vad_model_path (loaded once per path), and the speech
// probabilities of samples in v.ctx->probs. Errors: InvalidArgument without a path; the load's;
// Internal.
absl::Status DetectWithState(VadState& v, const whisper_full_params& params, const float* samples, int n_samples) {
  const char* path = params.vad_model_path;
  if (path == nullptr || path[0] == '\0') {
    return absl::InvalidArgumentError("vad: vad_model_path is not set (e.g. models/ggml-silero-v6.bin)");
  }
  if (v.ctx == nullptr || v.model_path != path) {
    whisper_vad_free(v.ctx);
    v.ctx = nullptr;
    auto vad = SileroVad::Load(path);
    if (!vad.ok()) return vad.status();
    v.ctx = new whisper_vad_context();
    v.ctx->vad = std::move(*vad);
    v.model_path = path;
  }
  // The blocked front end on whisper_full's threads (the state's pool is idle until the chunks
  // are encoded); the probabilities are the same bit for bit on any number (SileroVad::SetThreads).
  absl::Status threads = v.ctx->vad->SetThreads(std::clamp(params.n_threads, 1, 64));
  if (!threads.ok()) return threads;
  if (!DetectSpeech(v.ctx, samples, n_samples, /*reset=*/true, "whisper_full")) {
    return absl::InternalError("vad: speech detection failed");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status SpeechCuts(whisper_state* state, const whisper_full_params& params, float max_speech_s,
                        const float* samples, int n_samples, std::vector<int>* cuts) {
  cuts->clear();
  VadState& v = state->vad_state;
  absl::Status st = DetectWithState(v, params, samples, n_samples);
  if (!st.ok()) return st;
  // faster-whisper 1.2.1 BatchedInferencePipeline.transcribe's VAD: VadOptions(max_speech_duration_s
  // = chunk_length, min_silence_duration_ms = 160), its other defaults, faster-whisper's rules.
  VadParams vp;
  vp.threshold = params.vad_params.threshold;
  vp.min_silence_duration_ms = 160;
  vp.max_speech_duration_s = max_speech_s;
  SpeechTimestamps(v.ctx->probs.data(), static_cast<int>(v.ctx->probs.size()), n_samples, vp,
                   VadRules::kFasterWhisper, &v.spans);
  for (size_t i = 0; i + 1 < v.spans.size(); ++i) {
    // The middle of the pause (padded stretches may touch: then where they meet).
    const int64_t mid = (v.spans[i].end + v.spans[i + 1].start) / 2;
    const int frame = static_cast<int>(mid / kMelHop);
    if (frame > 0 && (cuts->empty() || frame > cuts->back())) cuts->push_back(frame);
  }
  return absl::OkStatus();
}

absl::Status FilterSpeech(whisper_state* state, const whisper_full_params& params, const float* samples,
                          int n_samples) {
  VadState& v = state->vad_state;
  v.map.clear();
  v.joins.clear();
  v.gaps.clear();
  v.filtered.clear();
  v.speech.clear();
  v.active = false;
  absl::Status st = DetectWithState(v, params, samples, n_samples);
  if (!st.ok()) return st;
  SpeechTimestamps(v.ctx->probs.data(), static_cast<int>(v.ctx->probs.size()), n_samples, FromC(params.vad_params),
                   VadRules::kWhisperCpp, &v.spans);
  v.n_spans = static_cast<int>(v.spans.size());
  if (v.spans.empty()) {
    v.active = true;  // no speech: nothing to transcribe
    return absl::OkStatus();
  }
  const int64_t overlap = static_cast<int64_t>(params.vad_params.samples_overlap * 16000);
  const int64_t silence = 16000 / 10;
  const int64_t last = std::max(0, n_samples - 1);
  // Capacity for the most this audio's length could give, so that a later call on audio no
  // longer than this one allocates nothing.
  const size_t most_spans = v.ctx->probs.size() / 2 + 1;
  v.filtered.reserve(static_cast<size_t>(n_samples) + most_spans * static_cast<size_t>(std::max<int64_t>(0, overlap) + silence));
  v.map.reserve(4 * most_spans);
  v.joins.reserve(most_spans);
  v.gaps.reserve(2 * most_spans);
  v.spans.reserve(most_spans);
  v.speech.reserve(most_spans);
  for (size_t i = 0; i < v.spans.size(); ++i) {
    const int64_t orig_start = SamplesToCs(v.spans[i].start), orig_end = SamplesToCs(v.spans[i].end);
    const int64_t start = std::min(CsToSamples(orig_start), last);
    const int64_t end = std::min(CsToSamples(orig_end), last);
    const int64_t end_with_overlap = i + 1 < v.spans.size() ? std::min(end + overlap, last) : end;
    if (end_with_overlap - start <= 0) continue;
    const int64_t offset = static_cast<int64_t>(v.filtered.size());
    v.speech.push_back({orig_start, orig_end});
    v.map.push_back({SamplesToCs(offset), orig_start});
    v.map.push_back({SamplesToCs(offset + end - start), orig_end});
    v.filtered.insert(v.filtered.end(), samples + start, samples + end_with_overlap);
    if (i + 1 < v.spans.size()) {
      const int64_t at = static_cast<int64_t>(v.filtered.size());
      const int64_t next_orig = SamplesToCs(v.spans[i + 1].start);
      v.map.push_back({SamplesToCs(at), orig_end});
      v.map.push_back({SamplesToCs(at + silence), next_orig});
      v.joins.push_back({SamplesToCs(offset + end - start), SamplesToCs(at + silence), orig_end, next_orig});
      // Segments split only where at least 2 s were removed (faster-whisper's default
      // min_silence_duration_ms): shorter pauses stay inside a segment, as without VAD.
      if (next_orig - orig_end >= kSplitGapCs) {
        v.gaps.push_back(v.joins.back().speech_end);
        v.gaps.push_back(v.joins.back().next_start);
      }
      v.filtered.insert(v.filtered.end(), static_cast<size_t>(silence), 0.0f);
    }
  }
  std::sort(v.map.begin(), v.map.end(), [](const VadState::Point& a, const VadState::Point& b) {
    return a.processed < b.processed;
  });
  v.map.erase(std::unique(v.map.begin(), v.map.end(),
                          [](const VadState::Point& a, const VadState::Point& b) { return a.processed == b.processed; }),
              v.map.end());
  v.active = true;
  return absl::OkStatus();
}

int64_t MapVadTime(const whisper_state* state, int64_t t, bool is_start) {
  const std::vector<VadState::Point>& m = state->vad_state.map;
  if (!state->vad_state.active || m.empty()) return t;
  for (const VadState::Join& j : state->vad_state.joins) {
    if (t >= j.speech_end && t < j.next_start) return is_start ? j.next_original : j.end_original;
  }
  if (t <= m.front().processed) return m.front().original;
  if (t >= m.back().processed) return m.back().original;
  auto upper = std::lower_bound(m.begin(), m.end(), t,
                                [](const VadState::Point& p, int64_t x) { return p.processed < x; });
  if (upper->processed == t) return upper->original;
  auto lower = upper - 1;
  const int64_t dp = upper->processed - lower->processed;
  if (dp == 0) return lower->original;
  return lower->original + (t - lower->processed) * (upper->original - lower->original) / dp;
}

int64_t MapVadTokenTime(const whisper_state* state, int64_t t) {
  if (!state->vad_state.active || state->vad_state.map.empty()) return t;
  for (const VadState::Join& j : state->vad_state.joins) {
    if (t > j.speech_end && t < j.next_start) {
      return t <= (j.speech_end + j.next_start) / 2 ? j.end_original : j.next_original;
    }
  }
  // Elsewhere the map is linear between each stretch's edges (its points inside a join are
  // never reached), as 1.9.3's per-stretch interpolation; outside, it clamps to the edges.
  return MapVadTime(state, t, /*is_start=*/false);
}

void MapNewResults(whisper_state* state) {
  SegmentList& r = state->results;
  if (state->vad_state.active) {
    for (size_t i = state->n_results_mapped; i < r.size(); ++i) {
      Segment& s = r[i];
      const int64_t t0 = MapVadTime(state, s.t0, /*is_start=*/true);
      s.t1 = std::max(MapVadTime(state, s.t1, /*is_start=*/false), t0 + 10);
      s.t0 = t0;
      // A token time in removed silence goes to the nearer speech edge, but never outside its
      // segment: the first token of a segment that starts after a removal stays in it, not at
      // the end of the speech before (where 1.9.3 puts it).
      auto token_time = [&](int64_t t) { return std::clamp(MapVadTokenTime(state, t), s.t0, s.t1); };
      for (TokenData& t : s.tokens) {
        if (t.t0 >= 0) t.t0 = token_time(t.t0);
        if (t.t1 >= 0) t.t1 = std::max(token_time(t.t1), t.t0);
        if (t.t_dtw >= 0) t.t_dtw = token_time(t.t_dtw);
      }
    }
  }
  state->n_results_mapped = r.size();
}

}  // namespace api
}  // namespace whisper

using whisper::SileroVad;
using whisper::api::Log;

extern "C" {

struct whisper_vad_context* whisper_vad_init_from_file_with_params(const char* path_model,
                                                                   struct whisper_vad_context_params) {
  if (path_model == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: path_model is NULL\n", __func__);
    return nullptr;
  }
  return whisper::api::MakeContext(SileroVad::Load(path_model), __func__);
}

struct whisper_vad_context* whisper_vad_init_with_params(struct whisper_model_loader* loader,
                                                         struct whisper_vad_context_params) {
  if (loader == nullptr || loader->read == nullptr || loader->eof == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: NULL loader or loader function\n", __func__);
    if (loader != nullptr && loader->close != nullptr) loader->close(loader->context);
    return nullptr;
  }
  std::string bytes;
  char buf[1 << 16];
  constexpr size_t kMax = size_t{64} << 20;  // a Silero file is 1.2 MB; refuse endless sources
  while (!loader->eof(loader->context) && bytes.size() <= kMax) {
    const size_t n = loader->read(loader->context, buf, sizeof(buf));
    if (n == 0) break;
    bytes.append(buf, n);
  }
  if (loader->close != nullptr) loader->close(loader->context);
  if (bytes.size() > kMax) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: the loader gave more than 64 MiB: not a Silero VAD model\n", __func__);
    return nullptr;
  }
  return whisper::api::MakeContext(SileroVad::LoadFromBytes("(loader)", bytes), __func__);
}

bool whisper_vad_detect_speech(struct whisper_vad_context* vctx, const float* samples, int n_samples) {
  return whisper::api::DetectSpeech(vctx, samples, n_samples, /*reset=*/true, __func__);
}
bool whisper_vad_detect_speech_no_reset(struct whisper_vad_context* vctx, const float* samples, int n_samples) {
  return whisper::api::DetectSpeech(vctx, samples, n_samples, /*reset=*/false, __func__);
}
void whisper_vad_reset_state(struct whisper_vad_context* vctx) {
  if (vctx != nullptr) vctx->vad->Reset();
}
int whisper_vad_n_probs(struct whisper_vad_context* vctx) {
  return vctx != nullptr ? static_cast<int>(vctx->probs.size()) : 0;
}
float* whisper_vad_probs(struct whisper_vad_context* vctx) {
  return vctx != nullptr && !vctx->probs.empty() ? vctx->probs.data() : nullptr;
}

struct whisper_vad_segments* whisper_vad_segments_from_probs(struct whisper_vad_context* vctx,
                                                             struct whisper_vad_params params) {
  if (vctx == nullptr) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: NULL context\n", __func__);
    return nullptr;
  }
  auto* out = new whisper_vad_segments();
  const int n = static_cast<int>(vctx->probs.size());
  whisper::SpeechTimestamps(vctx->probs.data(), n, int64_t{n} * SileroVad::kWindow, whisper::api::FromC(params),
                            whisper::VadRules::kWhisperCpp, &out->spans);
  return out;
}

struct whisper_vad_segments* whisper_vad_segments_from_samples(struct whisper_vad_context* vctx,
                                                               struct whisper_vad_params params, const float* samples,
                                                               int n_samples) {
  if (!whisper::api::DetectSpeech(vctx, samples, n_samples, /*reset=*/true, __func__)) return nullptr;
  return whisper_vad_segments_from_probs(vctx, params);
}

int whisper_vad_segments_n_segments(struct whisper_vad_segments* segments) {
  return segments != nullptr ? static_cast<int>(segments->spans.size()) : 0;
}
// Times in centiseconds, as whisper.cpp's (samples_to_cs).
float whisper_vad_segments_get_segment_t0(struct whisper_vad_segments* segments, int i) {
  if (segments == nullptr || i < 0 || static_cast<size_t>(i) >= segments->spans.size()) return 0.0f;
  return static_cast<float>(whisper::api::SamplesToCs(segments->spans[static_cast<size_t>(i)].start));
}
float whisper_vad_segments_get_segment_t1(struct whisper_vad_segments* segments, int i) {
  if (segments == nullptr || i < 0 || static_cast<size_t>(i) >= segments->spans.size()) return 0.0f;
  return static_cast<float>(whisper::api::SamplesToCs(segments->spans[static_cast<size_t>(i)].end));
}
void whisper_vad_free_segments(struct whisper_vad_segments* segments) { delete segments; }
void whisper_vad_free(struct whisper_vad_context* ctx) { delete ctx; }

int whisper_ggml_vad_speech_faster_whisper(struct whisper_vad_context* vctx, struct whisper_vad_params params,
                                           float neg_threshold, const float* samples, int n_samples, int64_t* spans,
                                           int max_spans) {
  if ((spans == nullptr && max_spans > 0) || !(params.threshold > 0.0f && params.threshold < 1.0f)) {
    Log(GGML_LOG_LEVEL_ERROR, "%s: spans is NULL with max_spans %d, or threshold %g is outside (0, 1)\n", __func__,
        max_spans, params.threshold);
    return -1;
  }
  if (!whisper::api::DetectSpeech(vctx, samples, n_samples, /*reset=*/true, __func__)) return -1;
  whisper::VadParams v = whisper::api::FromC(params);
  v.neg_threshold = neg_threshold;
  std::vector<whisper::SpeechSpan> found;
  whisper::SpeechTimestamps(vctx->probs.data(), static_cast<int>(vctx->probs.size()), n_samples, v,
                            whisper::VadRules::kFasterWhisper, &found);
  for (size_t i = 0; i < found.size() && static_cast<int>(i) < max_spans; ++i) {
    spans[2 * i] = found[i].start;
    spans[2 * i + 1] = found[i].end;
  }
  return static_cast<int>(found.size());
}

}  // extern "C"
