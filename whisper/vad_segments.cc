#include "whisper/vad_segments.h"

#include <algorithm>
#include <cmath>

namespace whisper {
namespace {

constexpr int64_t kWindow = 512;
constexpr int64_t kRate = 16000;

// The rules' sample counts (faster-whisper keeps them as floats, sampling_rate * ms / 1000;
// whisper.cpp as ints) and probability threshold for the end of speech.
struct SpanLimits {
  int64_t length = 0;  // samples of audio the spans may reach
  double min_speech = 0;
  double pad = 0;
  double min_silence = 0;
  double min_silence_at_max = 0;
  double max_speech = 0;
  float neg = 0;
};

SpanLimits MakeLimits(int n_probs, int64_t n_samples, const VadParams& params, bool wcpp) {
  SpanLimits l;
  l.length = wcpp ? int64_t{n_probs} * kWindow : n_samples;
  l.min_speech = kRate * params.min_speech_duration_ms / 1000.0;
  l.pad = wcpp ? double(kRate * params.speech_pad_ms / 1000) : kRate * params.speech_pad_ms / 1000.0;
  l.min_silence = kRate * params.min_silence_duration_ms / 1000.0;
  l.min_silence_at_max = kRate * 98 / 1000.0;
  l.max_speech = double(kRate) * params.max_speech_duration_s - kWindow - 2 * l.pad;
  if (wcpp && (params.max_speech_duration_s > 100000.0f || l.max_speech < 0)) l.max_speech = 1e300;
  l.neg = params.neg_threshold;
  if (wcpp || l.neg < 0.0f) l.neg = std::max(params.threshold - 0.15f, 0.01f);
  return l;
}

// Speech spans from the window probabilities (faster-whisper get_speech_timestamps' loop):
// speech starts at a window >= threshold and ends after min_silence below l.neg; a span longer
// than max_speech is cut at the last long-enough silence, or at the window.
void FindSpans(const float* probs, int n_probs, float threshold, const SpanLimits& l, std::vector<SpeechSpan>* out) {
  bool triggered = false;
  bool have = false;  // faster-whisper's non-empty current_speech
  int64_t start = 0, temp_end = 0, prev_end = 0, next_start = 0;
  for (int i = 0; i < n_probs; ++i) {
    const float p = probs[i];
    const int64_t s = kWindow * i;
    if (p >= threshold && temp_end) {
      temp_end = 0;
      if (next_start < prev_end) next_start = s;
    }
    if (p >= threshold && !triggered) {
      triggered = have = true;
      start = s;
      continue;
    }
    if (triggered && double(s - start) > l.max_speech) {
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
    if (p < l.neg && triggered) {
      if (!temp_end) temp_end = s;
      if (double(s - temp_end) > l.min_silence_at_max) prev_end = temp_end;
      if (double(s - temp_end) < l.min_silence) continue;
      if (double(temp_end - start) > l.min_speech) out->push_back({start, temp_end});
      have = false;
      prev_end = next_start = temp_end = 0;
      triggered = false;
      continue;
    }
  }
  if (have && double(l.length - start) > l.min_speech) out->push_back({start, l.length});
}

// whisper.cpp's extra pass: merge stretches less than 200 ms apart, then drop the ones still
// shorter than min_speech_duration_ms.
void MergeCloseSpans(const VadParams& params, std::vector<SpeechSpan>* out) {
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

// Padding (faster-whisper truncates with int() after float arithmetic; whisper.cpp uses ints):
// each span grows by pad on each side within [0, length), or by half the gap when two spans are
// closer than 2 pad.
void PadSpans(const SpanLimits& l, std::vector<SpeechSpan>* out) {
  const double pad = l.pad;
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
        x.end = std::min<int64_t>(l.length, x.end + pad_i);
        next.start = std::max<int64_t>(0, next.start - pad_i);
      }
    } else {
      x.end = std::min<int64_t>(l.length, x.end + pad_i);
    }
  }
}

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
  const SpanLimits limits = MakeLimits(n_probs, n_samples, params, wcpp);
  FindSpans(probs, n_probs, params.threshold, limits, out);
  if (wcpp) MergeCloseSpans(params, out);
  PadSpans(limits, out);
}

}  // namespace whisper
