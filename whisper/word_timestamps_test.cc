#include "whisper/word_timestamps.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace whisper {
namespace {

const SpecialTokens kSpecial = SpecialTokensForVocab(51864);  // tiny.en's ids

// Token ids of this test's made-up vocabulary (text ids < eot).
enum : Token { kAnd = 100, kSo = 101, kComma = 102, kMy = 103, kQuote = 104 };

const std::string& Text(Token t) {
  static const std::map<Token, std::string> texts = {
      {kAnd, " And"}, {kSo, " so"}, {kComma, ","}, {kMy, " my"}, {kQuote, " \""}};
  static const std::string empty;
  auto it = texts.find(t);
  return it == texts.end() ? empty : it->second;
}

TokenData Tok(Token id) {
  TokenData t;
  t.id = id;
  return t;
}

// One head over rows sot, <|notimestamps|>, text..., eot: aligned row k (k = 0 the
// <|notimestamps|> row) attends to frames [8 k, 8 k + 8); the DTW path then enters row k at
// 8 k (whisper/dtw_test.cc BlockDiagonalAttention), so text token k runs from 8 k to 8 (k + 1)
// positions, 0.16 s per token.
std::vector<float> Blocks(int n_text, int F) {
  const int T = n_text + 3;
  std::vector<float> qk(static_cast<size_t>(T) * F, 0.0f);
  for (int k = 0; k <= n_text; ++k) {
    for (int f = 8 * k; f < 8 * k + 8 && f < F; ++f) qk[static_cast<size_t>(k + 1) * F + f] = 10.0f;
  }
  return qk;
}

// One segment <|0.00|> " And" " so" "," <|1.00|> at seek 0. Jumps [0, 8, 16, 24]: words " And"
// 0.00-0.16, " so" 0.16-0.32, "," 0.32-0.48. Median of the non-zero durations 0.16 (max 0.32):
// nothing is cut. "," merges into " so" ("so," keeps 0.16-0.32). The segment: first word starts
// at 0.00 (not > 0.5 s after the segment start, so the segment takes it), last word ends at 0.32
// (the segment end 1.00 is not 0.5 s before it, so the segment ends at 0.32).
TEST(WordTimestampsTest, OpenAiRulesOnOneSegment) {
  SegmentList list;
  Segment& s = list.Append();
  s.t0 = 0;
  s.t1 = 100;
  s.tokens = {Tok(kSpecial.beg), Tok(kAnd), Tok(kSo), Tok(kComma), Tok(kSpecial.beg + 50)};
  WordTimestamps words(32, 64);
  words.Begin();
  const Token sot = kSpecial.sot;
  const std::vector<Token>& seq = words.Sequence(kSpecial, &sot, 1, list, 0, 1);
  EXPECT_EQ(seq, (std::vector<Token>{kSpecial.sot, kSpecial.not_, kAnd, kSo, kComma, kSpecial.eot}));
  const std::vector<float> qk = Blocks(3, 40);
  ASSERT_TRUE(words.Compute(kSpecial, Text, qk.data(), 1, 40, 40, 1, 0, true, &list, 0, 1).ok());
  const Segment& r = list[0];
  EXPECT_EQ(r.t0, 0);
  EXPECT_EQ(r.t1, 32);
  EXPECT_EQ(r.word_begin, (std::vector<uint8_t>{0, 1, 1, 0, 0}));
  EXPECT_EQ(r.tokens[1].t0, 0);
  EXPECT_EQ(r.tokens[1].t1, 16);
  EXPECT_EQ(r.tokens[2].t0, 16);
  EXPECT_EQ(r.tokens[2].t1, 32);
  EXPECT_EQ(r.tokens[3].t0, 32);  // "," inside " so,": its DTW start clamped to the word
  EXPECT_EQ(r.tokens[3].t1, 32);
  // whisper.cpp's t_dtw: where the path leaves each token's row (2 * jump, centiseconds).
  EXPECT_EQ(r.tokens[1].t_dtw, 16);
  EXPECT_EQ(r.tokens[2].t_dtw, 32);
  EXPECT_EQ(r.tokens[3].t_dtw, 48);
  EXPECT_EQ(r.tokens[0].t0, 0);   // timestamp tokens: the time they name
  EXPECT_EQ(r.tokens[4].t1, 100);
  EXPECT_EQ(words.last_end(), 32);
}

// Two segments at seek 1000 cs: [" \"" " And"] and [" so" " my"]. Jumps 0, 8, 16, 24, 32
// (0.16 s per token), plus 10.00 s. The prepended quote " \"" merges into " And": the word
// " \" And" keeps "And"'s 10.16-10.32 (the quote's own time is dropped), so segment 0 becomes
// 10.16-10.32. Segment 1 (9.50-11.00): its start is not more than 0.5 s after its first word's
// start (9.50 - 0.5 > 10.32 is false), so it takes the word's 10.32; it ends at " my"'s 10.64.
TEST(WordTimestampsTest, PrependedPunctuationAndSeekOffset) {
  SegmentList list;
  Segment& a = list.Append();
  a.t0 = 1000;
  a.t1 = 1030;
  a.tokens = {Tok(kSpecial.beg), Tok(kQuote), Tok(kAnd), Tok(kSpecial.beg + 15)};
  Segment& b = list.Append();
  b.t0 = 950;
  b.t1 = 1100;
  b.tokens = {Tok(kSpecial.beg + 15), Tok(kSo), Tok(kMy), Tok(kSpecial.beg + 50)};
  WordTimestamps words(32, 64);
  words.Begin();
  const Token sot = kSpecial.sot;
  ASSERT_EQ(words.Sequence(kSpecial, &sot, 1, list, 0, 2).size(), 7u);
  const std::vector<float> qk = Blocks(4, 48);
  ASSERT_TRUE(words.Compute(kSpecial, Text, qk.data(), 1, 48, 48, 1, 1000, true, &list, 0, 2).ok());
  EXPECT_EQ(list[0].word_begin, (std::vector<uint8_t>{0, 1, 0, 0}));
  EXPECT_EQ(list[0].tokens[1].t0, 1016);  // the quote takes " And"'s start
  EXPECT_EQ(list[0].tokens[2].t1, 1032);
  EXPECT_EQ(list[0].t0, 1016);
  EXPECT_EQ(list[0].t1, 1032);
  EXPECT_EQ(list[1].word_begin, (std::vector<uint8_t>{0, 1, 1, 0}));
  EXPECT_EQ(list[1].t0, 1032);
  EXPECT_EQ(list[1].t1, 1064);
  EXPECT_EQ(words.last_end(), 1064);
}

// faster-whisper's append_punctuations="" (merge_punctuations with an empty set): "," stays a word
// of its own (0.32-0.48, hand-derived as in OpenAiRulesOnOneSegment), so the segment ends at its
// end; and prepend_punctuations="" keeps the quote " \"" a word before " And" (10.00-10.16), so
// segment 0 starts at 10.00. A set without "," ("\u3002" only) leaves it unmerged too.
TEST(WordTimestampsTest, PunctuationSetsFromBegin) {
  for (const char* appended : {"", "\xE3\x80\x82"}) {
    SegmentList list;
    Segment& s = list.Append();
    s.t0 = 0;
    s.t1 = 100;
    s.tokens = {Tok(kSpecial.beg), Tok(kAnd), Tok(kSo), Tok(kComma), Tok(kSpecial.beg + 50)};
    WordTimestamps words(32, 64);
    words.Begin(WordTimestamps::kDefaultPrepended, appended);
    const Token sot = kSpecial.sot;
    words.Sequence(kSpecial, &sot, 1, list, 0, 1);
    const std::vector<float> qk = Blocks(3, 40);
    ASSERT_TRUE(words.Compute(kSpecial, Text, qk.data(), 1, 40, 40, 1, 0, true, &list, 0, 1).ok());
    EXPECT_EQ(list[0].word_begin, (std::vector<uint8_t>{0, 1, 1, 1, 0})) << appended;
    EXPECT_EQ(list[0].tokens[3].t0, 32);
    EXPECT_EQ(list[0].tokens[3].t1, 48);
    EXPECT_EQ(list[0].t1, 48);
    ASSERT_EQ(words.n_segment_words(0), 3u);
    EXPECT_EQ(words.segment_word(0, 2).text, ",");
  }
  SegmentList list;
  Segment& a = list.Append();
  a.t0 = 1000;
  a.t1 = 1030;
  a.tokens = {Tok(kSpecial.beg), Tok(kQuote), Tok(kAnd), Tok(kSpecial.beg + 15)};
  WordTimestamps words(32, 64);
  words.Begin("", WordTimestamps::kDefaultAppended);
  const Token sot = kSpecial.sot;
  words.Sequence(kSpecial, &sot, 1, list, 0, 1);
  const std::vector<float> qk = Blocks(2, 48);
  ASSERT_TRUE(words.Compute(kSpecial, Text, qk.data(), 1, 48, 48, 1, 1000, true, &list, 0, 1).ok());
  EXPECT_EQ(list[0].word_begin, (std::vector<uint8_t>{0, 1, 1, 0}));
  EXPECT_EQ(list[0].tokens[1].t0, 1000);
  EXPECT_EQ(list[0].tokens[1].t1, 1016);
  EXPECT_EQ(list[0].t0, 1000);
  EXPECT_EQ(words.prepended(), "");
}

// whisper.cpp's rules: t_dtw only; segments, t0/t1 and word marks untouched.
TEST(WordTimestampsTest, WhisperCppRulesSetOnlyTdtw) {
  SegmentList list;
  Segment& s = list.Append();
  s.t0 = 0;
  s.t1 = 100;
  s.tokens = {Tok(kSpecial.beg), Tok(kAnd), Tok(kSo), Tok(kSpecial.beg + 50)};
  WordTimestamps words(32, 64);
  const Token sot = kSpecial.sot;
  words.Sequence(kSpecial, &sot, 1, list, 0, 1);
  const std::vector<float> qk = Blocks(2, 40);
  ASSERT_TRUE(words.Compute(kSpecial, Text, qk.data(), 1, 40, 40, 1, 200, false, &list, 0, 1).ok());
  EXPECT_EQ(list[0].tokens[1].t_dtw, 216);
  EXPECT_EQ(list[0].tokens[2].t_dtw, 232);
  EXPECT_EQ(list[0].tokens[1].t0, -1);
  EXPECT_TRUE(list[0].word_begin.empty());
  EXPECT_EQ(list[0].t1, 100);
}

// A window without text: no sequence, nothing to do.
TEST(WordTimestampsTest, NoTextNoSequence) {
  SegmentList list;
  Segment& s = list.Append();
  s.tokens = {Tok(kSpecial.beg), Tok(kSpecial.beg + 50)};
  WordTimestamps words(32, 64);
  const Token sot = kSpecial.sot;
  EXPECT_TRUE(words.Sequence(kSpecial, &sot, 1, list, 0, 1).empty());
}

}  // namespace
}  // namespace whisper
