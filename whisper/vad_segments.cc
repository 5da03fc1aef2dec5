#include "whisper/vad_segments.h"

#include <algorithm>
#include <cmath>

namespace whisper {
namespace {
constexpr int64_t kWindow = 512;
constexpr int64_t kRate = 16000;
}  // namespace

VadParams WhisperCppVadParams() {
  VadParams p;
  p.threshold = 0.5f;
  p.min_speech_duration_ms = 250;
  p.min_silence_duration_ms = 100;
  p.speech_pad_ms = 30;
  return p;
}

void SpeechTimestamps(const float* probs, int n_probs, int64_t n_samples, const VadParams& params, VadRules rules,
                      std::vector<SpeechSpan>* out) {
  out->clear();
  const bool wcpp = rules == VadRules::kWhisperCpp;
  const int64_t length = wcpp ? int64_t{n_probs} * kWindow : n_samples;
  // faster-whisper keeps these as floats (sampling_rate * ms / 1000); whisper.cpp as ints.
  const double min_speech = kRate * params.min_speech_duration_ms / 1000.0;
  const double pad = wcpp ? double(kRate * params.speech_pad_ms / 1000) : kRate * params.speech_pad_ms / 1000.0;
  const double min_silence = kRate * params.min_silence_duration_ms / 1000.0;
  const double min_silence_at_max = kRate * 98 / 1000.0;
  double max_speech = double(kRate) * params.max_speech_duration_s - kWindow - 2 * pad;
  if (wcpp && (params.max_speech_duration_s > 100000.0f || max_speech < 0)) max_speech = 1e300;
  float neg = params.neg_threshold;
  if (wcpp || neg < 0.0f) neg = std::max(params.threshold - 0.15f, 0.01f);

  bool triggered = false;
  bool have = false;  // faster-whisper's non-empty current_speech
  int64_t start = 0, temp_end = 0, prev_end = 0, next_start = 0;
  for (int i = 0; i < n_probs; ++i) {
    const float p = probs[i];
    const int64_t s = kWindow * i;
    if (p >= params.threshold && temp_end) {
      temp_end = 0;
      if (next_start < prev_end) next_start = s;
    }
    if (p >= params.threshold && !triggered) {
      triggered = have = true;
      start = s;
      continue;
    }
    if (triggered && double(s - start) > max_speech) {
      if (prev_end) {
        out->push_back({start, prev_end});
        have = false;
        if (next_start < prev_end) {
          triggered = false;
        } else {
          start = next_start;
          have = true;
        }
        prev_end = next_start = temp_end = 0;
      } else {
        out->push_back({start, s});
        have = false;
        prev_end = next_start = temp_end = 0;
        triggered = false;
        continue;
      }
    }
    if (p < neg && triggered) {
      if (!temp_end) temp_end = s;
      if (double(s - temp_end) > min_silence_at_max) prev_end = temp_end;
      if (double(s - temp_end) < min_silence) continue;
      if (double(temp_end - start) > min_speech) out->push_back({start, temp_end});
      have = false;
      prev_end = next_start = temp_end = 0;
      triggered = false;
      continue;
    }
  }
  if (have && double(length - start) > min_speech) out->push_back({start, length});

  if (wcpp) {
    // Merge stretches less than 200 ms apart, then drop the ones still too short.
    size_t w = 0;
    for (size_t r = 0; r < out->size(); ++r) {
      if (w > 0 && (*out)[r].start - (*out)[w - 1].end < kRate * 200 / 1000) {
        (*out)[w - 1].end = (*out)[r].end;
      } else {
        (*out)[w++] = (*out)[r];
      }
    }
    out->resize(w);
    const int64_t min_speech_i = kRate * params.min_speech_duration_ms / 1000;
    out->erase(std::remove_if(out->begin(), out->end(),
                              [&](const SpeechSpan& x) { return x.end - x.start < min_speech_i; }),
               out->end());
  }

  // Padding (faster-whisper truncates with int() after float arithmetic; whisper.cpp uses ints).
  const int64_t pad_i = static_cast<int64_t>(pad);
  for (size_t i = 0; i < out->size(); ++i) {
    SpeechSpan& x = (*out)[i];
    if (i == 0) x.start = std::max<int64_t>(0, static_cast<int64_t>(std::floor(x.start - pad)));
    if (i + 1 < out->size()) {
      SpeechSpan& next = (*out)[i + 1];
      const int64_t gap = next.start - x.end;
      if (double(gap) < 2 * pad) {
        x.end += gap / 2;
        next.start = std::max<int64_t>(0, next.start - gap / 2);
      } else {
        x.end = std::min<int64_t>(length, x.end + pad_i);
        next.start = std::max<int64_t>(0, next.start - pad_i);
      }
    } else {
      x.end = std::min<int64_t>(length, x.end + pad_i);
    }
  }
}

}  // namespace whisper
