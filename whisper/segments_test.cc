#include "whisper/segments.h"

#include <map>
#include <string>

#include "gtest/gtest.h"

namespace whisper {
namespace {

class SegmentsTest : public ::testing::Test {
 protected:
  SpecialTokens s = SpecialTokensForVocab(51864);
  std::map<Token, std::string> words = {{10, " And"}, {11, " so"}, {12, " my"}, {13, " friends"}};
  std::function<const std::string&(Token)> text = [this](Token t) -> const std::string& {
    auto it = words.find(t);
    if (it != words.end()) return it->second;
    static std::map<Token, std::string> names;
    return names[t] = "[_TT_" + std::to_string(t - s.beg) + "]";
  };
  Token Ts(double seconds) { return s.beg + static_cast<Token>(seconds / 0.02 + 0.5); }
  static std::vector<TokenData> Data(const std::vector<Token>& ids) {
    std::vector<TokenData> d(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) d[i].id = ids[i];
    return d;
  }
  static std::vector<Token> Ids(const Segment& seg) {
    std::vector<Token> ids;
    for (const TokenData& t : seg.tokens) ids.push_back(t.id);
    return ids;
  }
};

TEST_F(SegmentsTest, OneSegmentFromTimestampPair) {
  SegmentList out;
  EXPECT_EQ(AppendSegments(s, Data({Ts(0), 10, 11, 12, Ts(11.0)}), 0, 1100, text, {}, 0.25f, &out), 1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].t0, 0);
  EXPECT_EQ(out[0].t1, 1100);
  EXPECT_EQ(out[0].text, " And so my");
  EXPECT_FLOAT_EQ(out[0].no_speech_prob, 0.25f);
  // whisper.cpp's layout: the opening and the closing timestamp belong to the segment.
  EXPECT_EQ(Ids(out[0]), (std::vector<Token>{Ts(0), 10, 11, 12, Ts(11.0)}));
}

// tinydiarize: <|startoflm|> before a closing timestamp marks that segment's speaker turn; the
// mark is cleared at each closing timestamp, emitted segment or not (whisper.cpp).
TEST_F(SegmentsTest, StartOfLmMarksTheSpeakerTurnWithTinydiarize) {
  SegmentOptions tdrz;
  tdrz.tdrz = true;
  const std::vector<TokenData> toks =
      Data({Ts(0), 10, s.solm, Ts(1.0), Ts(1.0), 11, Ts(2.0), Ts(2.0), s.solm, Ts(2.5), Ts(2.5), 12, Ts(3.0), 13});
  SegmentList out;
  AppendSegments(s, toks, 0, 400, text, tdrz, 0.0f, &out);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_TRUE(out[0].speaker_turn_next);
  EXPECT_EQ(out[0].text, " And");  // a special token: not text
  EXPECT_FALSE(out[1].speaker_turn_next);
  EXPECT_FALSE(out[2].speaker_turn_next);  // the turn before 2.5 s closed no text
  EXPECT_EQ(out[2].text, " my");
  EXPECT_FALSE(out[3].speaker_turn_next);
  SegmentList plain;
  AppendSegments(s, toks, 0, 400, text, {}, 0.0f, &plain);
  ASSERT_EQ(plain.size(), 4u);
  EXPECT_FALSE(plain[0].speaker_turn_next);
}

TEST_F(SegmentsTest, TwoSegmentsWithSeekOffsetAndTrailingText) {
  SegmentList out;
  // ts(0.5) And so ts(2.0) ts(2.4) my ts(5.0) friends   (trailing text ends at seek + seek_delta)
  AppendSegments(s, Data({Ts(0.5), 10, 11, Ts(2.0), Ts(2.4), 12, Ts(5.0), 13}), 3000, 600, text, {}, 0.0f, &out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].t0, 3050);
  EXPECT_EQ(out[0].t1, 3200);
  EXPECT_EQ(out[0].text, " And so");
  // A window opening at a timestamp other than <|0.00|> leaves it out (whisper.cpp: it closes
  // an empty segment).
  EXPECT_EQ(Ids(out[0]), (std::vector<Token>{10, 11, Ts(2.0)}));
  EXPECT_EQ(out[1].t0, 3240);
  EXPECT_EQ(out[1].t1, 3500);
  // The skipped second timestamp of the pair belongs to no segment.
  EXPECT_EQ(Ids(out[1]), (std::vector<Token>{12, Ts(5.0)}));
  EXPECT_EQ(out[2].t0, 3500);
  EXPECT_EQ(out[2].t1, 3600);
  EXPECT_EQ(out[2].text, " friends");
  EXPECT_EQ(Ids(out[2]), (std::vector<Token>{13}));
}

TEST_F(SegmentsTest, SingleSegmentAndPrintSpecial) {
  SegmentList out;
  SegmentOptions one;
  one.single_segment = true;
  AppendSegments(s, Data({Ts(0.5), 10, 11, Ts(2.0), Ts(2.4), 12, Ts(5.0)}), 0, 3000, text, one, 0.0f, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].t0, 50);
  EXPECT_EQ(out[0].t1, 3000);
  EXPECT_EQ(out[0].text, " And so my");
  SegmentOptions special;
  special.print_special = true;
  out.Clear();
  AppendSegments(s, Data({Ts(0), 10, Ts(1.0)}), 0, 100, text, special, 0.0f, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].text, "[_TT_0] And[_TT_50]");
}

TEST_F(SegmentsTest, ListKeepsCapacityAcrossClear) {
  SegmentList out;
  AppendSegments(s, Data({Ts(0), 10, 11, 12, Ts(11.0)}), 0, 1100, text, {}, 0.0f, &out);
  const char* text_buffer = out[0].text.data();
  const TokenData* token_buffer = out[0].tokens.data();
  out.Clear();
  EXPECT_TRUE(out.empty());
  AppendSegments(s, Data({Ts(0), 11, Ts(3.0)}), 0, 300, text, {}, 0.0f, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].text, " so");
  EXPECT_EQ(out[0].text.data(), text_buffer);  // the same storage, reused
  EXPECT_EQ(out[0].tokens.data(), token_buffer);
}

TEST_F(SegmentsTest, SeekAdvance) {
  // Single timestamp ending: the whole window (bounded by what is left).
  EXPECT_EQ(SeekAdvance(s, {Ts(0), 10, Ts(11.0)}, 1100, 4000), 3000);
  EXPECT_EQ(SeekAdvance(s, {Ts(0), 10, Ts(11.0)}, 1100, 1200), 1200);
  // Ends with a pair: seek to the last timestamp.
  EXPECT_EQ(SeekAdvance(s, {Ts(0), 10, Ts(5.0), Ts(5.0), 11, Ts(24.0), Ts(24.0)}, 2400, 6000), 2400);
  // Ends with a single timestamp after consecutive ones: whole window (OpenAI's rule).
  EXPECT_EQ(SeekAdvance(s, {Ts(0), 10, Ts(5.0), Ts(5.0), 11, Ts(24.0)}, 2400, 6000), 3000);
  // Nothing decoded: whole window, never zero.
  EXPECT_EQ(SeekAdvance(s, {}, 0, 6000), 3000);
}

// whisper.cpp whisper_wrap_segment: split before the text token that passes max_len, at that
// token's t0; timestamps carry no text.
TEST_F(SegmentsTest, WrapSplitsByCharactersAtTokenTimes) {
  SegmentList list;
  Segment& seg = list.Append();
  seg.t0 = 100;
  seg.t1 = 300;
  // <|1.00|> " And"(4) " so"(3) " my"(3) " friends"(8) <|3.00|>: 18 characters
  seg.tokens = Data({Ts(1.0), 10, 11, 12, 13, Ts(3.0)});
  const int64_t t0s[] = {100, 100, 140, 170, 200, 300};
  for (size_t i = 0; i < seg.tokens.size(); ++i) seg.tokens[i].t0 = t0s[i];
  seg.text = " And so my friends";
  EXPECT_EQ(WrapLastSegment(s, 8, false, text, &list), 3);
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].text, " And so");
  EXPECT_EQ(list[1].text, " my");
  EXPECT_EQ(list[2].text, " friends");
  EXPECT_EQ(list[0].t0, 100);
  EXPECT_EQ(list[0].t1, 170);  // " my" starts at 170
  EXPECT_EQ(list[1].t0, 170);
  EXPECT_EQ(list[1].t1, 200);
  EXPECT_EQ(list[2].t0, 200);
  EXPECT_EQ(list[2].t1, 300);
  EXPECT_EQ(Ids(list[0]), (std::vector<Token>{Ts(1.0), 10, 11}));
  EXPECT_EQ(Ids(list[2]), (std::vector<Token>{13, Ts(3.0)}));
  EXPECT_EQ(Utf8Length("h\xc3\xa9llo"), 5);
}

// VAD gaps: <|1.00|> " And" " so" | gap [250, 270) | " my" " friends" <|3.00|>. The first text
// token at or after 250 is " my" (t0 260): the head ends at the gap's start, the tail starts at
// its end; each piece's text is its own tokens'. A segment that does not span the gap, or a gap
// before the second text token, leaves it whole.
TEST_F(SegmentsTest, SplitAtGap) {
  SegmentList list;
  Segment& seg = list.Append();
  seg.t0 = 100;
  seg.t1 = 300;
  seg.tokens = Data({Ts(1.0), 10, 11, 12, 13, Ts(3.0)});
  const int64_t t0s[] = {100, 100, 140, 260, 280, 300};
  for (size_t i = 0; i < seg.tokens.size(); ++i) seg.tokens[i].t0 = t0s[i];
  seg.text = " And so my friends";
  seg.word_begin = {0, 1, 1, 1, 1, 0};
  EXPECT_FALSE(SplitLastSegmentAtGap(s, 310, 320, text, &list));  // after the segment
  EXPECT_FALSE(SplitLastSegmentAtGap(s, 50, 120, text, &list));   // not inside it
  ASSERT_TRUE(SplitLastSegmentAtGap(s, 250, 270, text, &list));
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].text, " And so");
  EXPECT_EQ(list[1].text, " my friends");
  EXPECT_EQ(list[0].t0, 100);
  EXPECT_EQ(list[0].t1, 250);
  EXPECT_EQ(list[1].t0, 270);
  EXPECT_EQ(list[1].t1, 300);
  EXPECT_EQ(Ids(list[0]), (std::vector<Token>{Ts(1.0), 10, 11}));
  EXPECT_EQ(Ids(list[1]), (std::vector<Token>{12, 13, Ts(3.0)}));
  EXPECT_EQ(list[0].word_begin, (std::vector<uint8_t>{0, 1, 1}));
  EXPECT_EQ(list[1].word_begin, (std::vector<uint8_t>{1, 1, 0}));
  // A gap whose first later token is the segment's first text token: no split.
  Segment& one = list.Append();
  one.t0 = 400;
  one.t1 = 600;
  one.tokens = Data({10, 11});
  one.tokens[0].t0 = 450;
  one.tokens[1].t0 = 500;
  EXPECT_FALSE(SplitLastSegmentAtGap(s, 420, 440, text, &list));
  EXPECT_EQ(list.size(), 3u);
}

TEST_F(SegmentsTest, WrapLimits) {
  words[20] = "fri";
  words[21] = "ends";
  auto one = [&](const std::vector<Token>& ids, int max_len, bool on_word) {
    SegmentList list;
    Segment& seg = list.Append();
    seg.t1 = 100;
    seg.tokens = Data(ids);
    return WrapLastSegment(s, max_len, on_word, text, &list);
  };
  EXPECT_EQ(one({10, 20, 21}, 4, true), 1);   // no later token starts with a space
  EXPECT_EQ(one({10, 20, 21}, 4, false), 3);
  EXPECT_EQ(one({10, 11, 12, 13}, 1, false), 4);  // one token per segment
  EXPECT_EQ(one({10, 11, 12, 13}, 0, false), 1);  // 0: unchanged
}

// A byte-level BPE token may hold part of a character: 甚 is E7 94 9A, 至 E8 87 B3. With
// words_are_characters (-ml 1 -sow on Chinese) a piece ends only after a whole character, and
// every whole character starts a word; without it no token starts with a space, so nothing splits.
TEST_F(SegmentsTest, WrapAtWholeCharacters) {
  words[30] = "\xE7\x94";      // 甚, first two bytes
  words[31] = "\x9A";          // 甚, last byte
  words[32] = "\xE8\x87\xB3";  // 至
  words[33] = "\xE6\x83\x85\xE5\x86\xB5";  // 情况: two characters in one token
  auto wrap = [&](bool characters, SegmentList* list) {
    Segment& seg = list->Append();
    seg.t1 = 400;
    seg.tokens = Data({30, 31, 32, 33});
    for (int i = 0; i < 4; ++i) seg.tokens[i].t0 = 100 * i;
    return WrapLastSegment(s, 1, /*split_on_word=*/true, text, list, characters);
  };
  SegmentList chars;
  ASSERT_EQ(wrap(true, &chars), 3);
  EXPECT_EQ(chars[0].text, "\xE7\x94\x9A");
  EXPECT_EQ(chars[1].text, "\xE8\x87\xB3");
  EXPECT_EQ(chars[1].t0, 200);
  EXPECT_EQ(chars[2].text, "\xE6\x83\x85\xE5\x86\xB5");  // a token is never cut
  EXPECT_EQ(Utf8Length(chars[0].text), 1);
  SegmentList spaces;
  EXPECT_EQ(wrap(false, &spaces), 1);
}

TEST(Utf8Test, EndsInsideCharacter) {
  EXPECT_FALSE(EndsInsideUtf8Character(""));
  EXPECT_FALSE(EndsInsideUtf8Character(" a"));
  EXPECT_TRUE(EndsInsideUtf8Character("\xE7"));
  EXPECT_TRUE(EndsInsideUtf8Character("a\xE7\x94"));
  EXPECT_FALSE(EndsInsideUtf8Character("\xE7\x94\x9A"));
  EXPECT_TRUE(EndsInsideUtf8Character("\xF0\x9F\x98"));       // 😀 F0 9F 98 80, 3 of 4 bytes
  EXPECT_FALSE(EndsInsideUtf8Character("\xF0\x9F\x98\x80"));
  EXPECT_FALSE(EndsInsideUtf8Character("\x9A"));  // a stray continuation byte cannot be completed
}

}  // namespace
}  // namespace whisper
