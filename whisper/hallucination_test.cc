// whisper/hallucination.h against values derived by hand from faster-whisper 1.2.1's
// transcribe.py generate_segments (word_anomaly_score, is_segment_anomaly and the
// hallucination_silence_threshold block).
#include "whisper/hallucination.h"

#include <vector>

#include "gtest/gtest.h"

namespace whisper {
namespace {

HalWord W(const char* text, double start, double end, double probability = 0.9) {
  HalWord w;
  w.text = text;
  w.start = start;
  w.end = end;
  w.probability = probability;
  return w;
}

HalSegment S(const std::vector<HalWord>& words) {
  HalSegment s;
  s.words = words.data();
  s.n_words = words.size();
  s.start = words.empty() ? 0.0 : words.front().start;
  s.end = words.empty() ? 0.0 : words.back().end;
  return s;
}

TEST(HallucinationTest, WordAnomalyScore) {
  EXPECT_DOUBLE_EQ(WordAnomalyScore(W(" a", 0.0, 0.5, 0.1)), 1.0);                   // improbable
  EXPECT_DOUBLE_EQ(WordAnomalyScore(W(" a", 0.0, 0.05)), (0.133 - 0.05) * 15);        // 1.245: short
  EXPECT_DOUBLE_EQ(WordAnomalyScore(W(" a", 1.0, 4.0)), 1.0);                         // 3 s: long
  EXPECT_DOUBLE_EQ(WordAnomalyScore(W(" a", 0.0, 0.5)), 0.0);
  EXPECT_DOUBLE_EQ(WordAnomalyScore(W(" a", 0.0, 0.0, 0.1)), 1.0 + 0.133 * 15);       // both
}

TEST(HallucinationTest, SegmentAnomaly) {
  EXPECT_FALSE(IsSegmentAnomaly(nullptr));
  const std::vector<HalWord> none;
  HalSegment empty = S(none);
  EXPECT_FALSE(IsSegmentAnomaly(&empty));
  const std::vector<HalWord> fine = {W(" so", 0.0, 0.4), W(" my", 0.4, 0.8)};
  HalSegment s = S(fine);
  EXPECT_FALSE(IsSegmentAnomaly(&s));  // score 0 < 2 - 0.01
  // One improbable word of two: 1 + 0.01 < 2.
  const std::vector<HalWord> one_bad = {W(" so", 0.0, 0.4, 0.1), W(" my", 0.4, 0.8)};
  s = S(one_bad);
  EXPECT_FALSE(IsSegmentAnomaly(&s));
  // A lone improbable word: 1 + 0.01 >= 1.
  const std::vector<HalWord> lone = {W(" you", 0.0, 0.4, 0.1)};
  s = S(lone);
  EXPECT_TRUE(IsSegmentAnomaly(&s));
  // Punctuation alone (substrings of faster-whisper's list) is left out: 0 words, 0.01 >= 0.
  const std::vector<HalWord> punct = {W(".", 0.0, 0.0), W("\"'", 0.0, 0.0)};
  s = S(punct);
  EXPECT_TRUE(IsSegmentAnomaly(&s));
  // " -" (with its space) is no substring of the list: a word of score 0 + 0.133 * 15.
  const std::vector<HalWord> dash = {W(" -", 0.0, 0.0), W(" so", 0.0, 0.4), W(" my", 0.4, 0.8)};
  s = S(dash);
  EXPECT_FALSE(IsSegmentAnomaly(&s));  // 1.995 + 0.01 < 3
  // Only the first 8 non-punctuation words count: 8 fine words, then 3 improbable ones.
  std::vector<HalWord> long_words;
  for (int i = 0; i < 8; ++i) long_words.push_back(W(" w", i * 0.5, i * 0.5 + 0.4));
  for (int i = 0; i < 3; ++i) long_words.push_back(W(" x", 4.0 + i, 4.4 + i, 0.01));
  s = S(long_words);
  EXPECT_FALSE(IsSegmentAnomaly(&s));
  // Three improbable words among many: score 3.
  long_words[1].probability = long_words[2].probability = long_words[3].probability = 0.01;
  s = S(long_words);
  EXPECT_TRUE(IsSegmentAnomaly(&s));
}

TEST(HallucinationTest, LeadingAnomalyAfterSilenceSkipsTheWindow) {
  // The window at 13.56 s (frame 1356) starts with " This" at 18.46 s, improbable: gap 4.9 s > 2,
  // so the window is decoded again from frame 1356 + round(4.9 * 100) = 1846.
  const std::vector<HalWord> words = {W(" This", 18.46, 19.0, 0.05)};
  const HalSegment segs[] = {S(words)};
  HalWindow w;
  w.seek = 1356;
  w.segment_size = 3000;
  w.content_frames = 8000;
  w.threshold = 2.0;
  w.last_speech = 13.56;
  HalDecision d = CheckHallucinations(segs, 1, w);
  EXPECT_EQ(d.action, HalDecision::kSkipWindow);
  EXPECT_EQ(d.seek, 1846);
  // threshold 5: gap 4.9 is not above it; in the loop the segment is 4.9 s after the speech before
  // (not > 5), not within 5 s of the audio's start nor 2 s of the window's: no silence before.
  w.threshold = 5.0;
  d = CheckHallucinations(segs, 1, w);
  EXPECT_EQ(d.action, HalDecision::kKeep);
}

TEST(HallucinationTest, AnomalyBetweenSilencesIsDroppedWithWhatFollows) {
  const std::vector<HalWord> speech = {W(" so", 0.0, 2.5), W(" my", 2.6, 5.0)};
  const std::vector<HalWord> hal = {W(" you", 10.0, 11.0, 0.05)};
  const std::vector<HalWord> more = {W(" and", 20.0, 20.5), W(" then", 20.5, 21.0)};
  const HalSegment segs[] = {S(speech), S(hal), S(more)};
  HalWindow w;
  w.seek = 0;
  w.segment_size = 3000;
  w.content_frames = 6000;
  w.threshold = 2.0;
  // " you": 5 s after the speech before it, 9 s before the next words: dropped with " and then";
  // the next window starts at round(max(0 + 1, 10.0) * 100).
  HalDecision d = CheckHallucinations(segs, 3, w);
  EXPECT_EQ(d.action, HalDecision::kTruncate);
  EXPECT_EQ(d.first_dropped, 1u);
  EXPECT_EQ(d.seek, 1000);
  // Ending within the threshold of the audio's end (content 12 s): the next window is the end.
  w.content_frames = 1200;
  d = CheckHallucinations(segs, 3, w);
  EXPECT_EQ(d.action, HalDecision::kTruncate);
  EXPECT_EQ(d.seek, 1200);
  // A 10 s threshold: 5 s of silence before is not enough, and 10.0 is not < 10: kept.
  w.threshold = 10.0;
  d = CheckHallucinations(segs, 3, w);
  EXPECT_EQ(d.action, HalDecision::kKeep);
  // Followed closely by another anomaly: still silence after (is_segment_anomaly(next)).
  const std::vector<HalWord> hal2 = {W(" you", 11.2, 11.5, 0.05)};
  const HalSegment two[] = {S(speech), S(hal), S(hal2)};
  w.threshold = 2.0;
  w.content_frames = 6000;
  d = CheckHallucinations(two, 3, w);
  EXPECT_EQ(d.action, HalDecision::kTruncate);
  EXPECT_EQ(d.first_dropped, 1u);
  // A segment without words is passed over (it moves neither hal_last_end nor next_words_segment).
  const std::vector<HalWord> none;
  const HalSegment gap[] = {S(speech), S(none), S(hal), S(none)};
  d = CheckHallucinations(gap, 4, w);
  EXPECT_EQ(d.action, HalDecision::kTruncate);
  EXPECT_EQ(d.first_dropped, 2u);
  EXPECT_EQ(d.seek, 1000);  // no next words: hal_next_start = 0 + 30 s
}

TEST(HallucinationTest, LeadingAnomalyWithinTwoSecondsOfTheWindowIsSilentBefore) {
  // The window at 100 s opens with an improbable word at 100.5 s (gap 0.5: no skip), then speech
  // at 104 s: silent before (within 2 s of the window's start) and after (3 s > 2): dropped, and
  // the next window starts at max(100 + 1, 100.5) = 101 s.
  const std::vector<HalWord> hal = {W(" Oh", 100.5, 101.0, 0.05)};
  const std::vector<HalWord> speech = {W(" and", 104.0, 104.5), W(" then", 104.5, 105.0)};
  const HalSegment segs[] = {S(hal), S(speech)};
  HalWindow w;
  w.seek = 10000;
  w.segment_size = 3000;
  w.content_frames = 20000;
  w.threshold = 2.0;
  w.last_speech = 99.0;
  const HalDecision d = CheckHallucinations(segs, 2, w);
  EXPECT_EQ(d.action, HalDecision::kTruncate);
  EXPECT_EQ(d.first_dropped, 0u);
  EXPECT_EQ(d.seek, 10100);
}

}  // namespace
}  // namespace whisper
