// faster-whisper 1.2.1's hallucination_silence_threshold (transcribe.py generate_segments, the
// block "skip silence before possible hallucinations", with its helpers word_anomaly_score,
// is_segment_anomaly and next_words_segment; the same rule as openai-whisper's transcribe.py),
// applied to one window's segments after their words are timed (whisper/word_timestamps.h):
//   - a word's anomaly score: +1 when its probability is below 0.15, +(0.133 - d) * 15 when its
//     duration d is below 0.133 s, +(d - 2) when above 2 s;
//   - a segment is anomalous when it has words and the scores of its first 8 words that are not
//     punctuation (a word that is a substring of "'“¿([{-"'.。,，!！?？:：”)]}、) sum to >= 3 or to
//     >= their count - 0.01 (so a segment of punctuation alone is anomalous);
//   - when the window's first segment with words is anomalous and starts more than `threshold`
//     after the window's start, the window is dropped and decoded again from that start;
//   - otherwise the first anomalous segment with silence before it (more than `threshold` after
//     the previous segment with words, or after the speech before the window; or starting before
//     `threshold` s of the audio; or within 2 s of the window's start) and after it (more than
//     `threshold` before the next segment with words, or the window's content end when there is
//     none; or the next is anomalous too; or within 2 s of the 30 s window's end) is dropped with
//     every segment after it, and the next window starts at max(its start, window start + 1 s),
//     or at the end of the audio when it ends within `threshold` of it.
// Times are seconds in doubles, computed with the same expressions as faster-whisper's.
#ifndef GGML_WHISPER_WHISPER_HALLUCINATION_H_
#define GGML_WHISPER_WHISPER_HALLUCINATION_H_

#include <cstddef>

#include "absl/strings/string_view.h"

namespace whisper {

struct HalWord {
  absl::string_view text;  // as faster-whisper's word["word"] (leading space, merged punctuation)
  double start = 0.0;      // seconds from the start of the audio
  double end = 0.0;
  double probability = 0.0;
};

struct HalSegment {
  double start = 0.0;  // seconds (after the word rules moved it)
  double end = 0.0;
  const HalWord* words = nullptr;  // n_words of them; none: the segment has no words
  size_t n_words = 0;
};

struct HalWindow {
  int seek = 0;            // the window's first frame (10 ms frames)
  int segment_size = 0;    // its content frames (min(3000, frames left in the audio or clip))
  int content_frames = 0;  // frames of the whole audio (faster-whisper's content_frames)
  double threshold = 0.0;  // hallucination_silence_threshold, seconds (>= 0)
  double last_speech = 0.0;  // seconds: where the speech before this window ended
};

struct HalDecision {
  enum Action {
    kKeep,        // nothing found: keep every segment, the next window starts where it would
    kSkipWindow,  // drop the whole window (nothing is output, the prompt and last_speech stay)
    kTruncate,    // keep segments [0, first_dropped) only
  };
  Action action = kKeep;
  size_t first_dropped = 0;  // kTruncate
  int seek = 0;              // kSkipWindow, kTruncate: the next window's first frame
};

// faster-whisper's word_anomaly_score of one word.
double WordAnomalyScore(const HalWord& word);

// faster-whisper's is_segment_anomaly (false for null or a segment without words).
bool IsSegmentAnomaly(const HalSegment* segment);

// The rule of the header comment over a window's segments[0, n), in order.
HalDecision CheckHallucinations(const HalSegment* segments, size_t n, const HalWindow& window);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_HALLUCINATION_H_
