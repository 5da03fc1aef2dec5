#include "whisper/hallucination.h"

#include <algorithm>
#include <cmath>

namespace whisper {
namespace {

// faster-whisper 1.2.1 generate_segments' `punctuation`; a word is left out of the anomaly score
// when it is a substring of it (Python's `in`).
constexpr absl::string_view kPunctuation =
    "\"'\xE2\x80\x9C\xC2\xBF([{-\"'.\xE3\x80\x82,\xEF\xBC\x8C!\xEF\xBC\x81?\xEF\xBC\x9F:\xEF\xBC\x9A\xE2\x80\x9D)]}"
    "\xE3\x80\x81";  // "'“¿([{-"'.。,，!！?？:：”)]}、
constexpr double kTimePerFrame = 0.01;  // feature_extractor.time_per_frame (160 / 16000)
constexpr int kFramesPerSecond = 100;   // frames_per_second (16000 // 160)
constexpr int kWindowFrames = 3000;     // feature_extractor.nb_max_frames

// Python's round(x) for an int result: to nearest, ties to even (the default rounding mode).
int RoundHalfEven(double x) { return static_cast<int>(std::nearbyint(x)); }

// next_words_segment over segments[from, n): the first with words, or null.
const HalSegment* NextWordsSegment(const HalSegment* segments, size_t from, size_t n) {
  for (size_t i = from; i < n; ++i) {
    if (segments[i].n_words > 0) return &segments[i];
  }
  return nullptr;
}

}  // namespace

double WordAnomalyScore(const HalWord& word) {
  const double duration = word.end - word.start;
  double score = 0.0;
  if (word.probability < 0.15) score += 1.0;
  if (duration < 0.133) score += (0.133 - duration) * 15;
  if (duration > 2.0) score += duration - 2.0;
  return score;
}

bool IsSegmentAnomaly(const HalSegment* segment) {
  if (segment == nullptr || segment->n_words == 0) return false;
  double score = 0.0;
  size_t n = 0;
  for (size_t i = 0; i < segment->n_words && n < 8; ++i) {
    const HalWord& w = segment->words[i];
    if (kPunctuation.find(w.text) != absl::string_view::npos) continue;  // `w["word"] in punctuation`
    score += WordAnomalyScore(w);
    ++n;
  }
  return score >= 3 || score + 0.01 >= static_cast<double>(n);
}

HalDecision CheckHallucinations(const HalSegment* segments, size_t n, const HalWindow& window) {
  HalDecision d;
  const double threshold = window.threshold;
  const double time_offset = window.seek * kTimePerFrame;
  const double window_end_time = (window.seek + kWindowFrames) * kTimePerFrame;
  const double segment_duration = window.segment_size * kTimePerFrame;
  const double content_duration = window.content_frames * kTimePerFrame;

  // If the first segment might be a hallucination, skip the silence before it.
  const HalSegment* first = NextWordsSegment(segments, 0, n);
  if (first != nullptr && IsSegmentAnomaly(first)) {
    const double gap = first->start - time_offset;
    if (gap > threshold) {
      d.action = HalDecision::kSkipWindow;
      d.seek = window.seek + RoundHalfEven(gap * kFramesPerSecond);
      return d;
    }
  }
  // Skip the silence before any possible hallucination surrounded by silence or more
  // hallucinations.
  double hal_last_end = window.last_speech;
  for (size_t si = 0; si < n; ++si) {
    const HalSegment& segment = segments[si];
    if (segment.n_words == 0) continue;
    if (IsSegmentAnomaly(&segment)) {
      const HalSegment* next = NextWordsSegment(segments, si + 1, n);
      const double hal_next_start = next != nullptr ? next->words[0].start : time_offset + segment_duration;
      const bool silence_before = segment.start - hal_last_end > threshold || segment.start < threshold ||
                                  segment.start - time_offset < 2.0;
      const bool silence_after = hal_next_start - segment.end > threshold || IsSegmentAnomaly(next) ||
                                 window_end_time - segment.end < 2.0;
      if (silence_before && silence_after) {
        d.action = HalDecision::kTruncate;
        d.first_dropped = si;
        d.seek = RoundHalfEven(std::max(time_offset + 1, segment.start) * kFramesPerSecond);
        if (content_duration - segment.end < threshold) d.seek = window.content_frames;
        return d;
      }
    }
    hal_last_end = segment.end;
  }
  return d;
}

}  // namespace whisper
