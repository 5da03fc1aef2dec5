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
  std::function<const std::string&(Token)> text = [this](Token t) -> const std::string& { return words.at(t); };
  Token Ts(double seconds) { return s.beg + static_cast<Token>(seconds / 0.02 + 0.5); }
};

TEST_F(SegmentsTest, OneSegmentFromTimestampPair) {
  std::vector<Segment> out;
  EXPECT_EQ(AppendSegments(s, {Ts(0), 10, 11, 12, Ts(11.0)}, 0, 1100, text, &out), 1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].t0, 0);
  EXPECT_EQ(out[0].t1, 1100);
  EXPECT_EQ(out[0].text, " And so my");
}

TEST_F(SegmentsTest, TwoSegmentsWithSeekOffsetAndTrailingText) {
  std::vector<Segment> out;
  // ts(0.5) And so ts(2.0) ts(2.4) my ts(5.0) friends   (trailing text ends at seek + seek_delta)
  AppendSegments(s, {Ts(0.5), 10, 11, Ts(2.0), Ts(2.4), 12, Ts(5.0), 13}, 3000, 600, text, &out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].t0, 3050);
  EXPECT_EQ(out[0].t1, 3200);
  EXPECT_EQ(out[0].text, " And so");
  EXPECT_EQ(out[1].t0, 3240);
  EXPECT_EQ(out[1].t1, 3500);
  EXPECT_EQ(out[2].t0, 3500);
  EXPECT_EQ(out[2].t1, 3600);
  EXPECT_EQ(out[2].text, " friends");
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

TEST_F(SegmentsTest, WrapSplitsByCharactersWithInterpolatedTimes) {
  Segment seg;
  seg.t0 = 100;
  seg.t1 = 300;
  seg.tokens = {10, 11, 12, 13};  // " And"(4) " so"(3) " my"(3) " friends"(8): 18 characters
  seg.text = " And so my friends";
  const auto out = WrapSegments({seg}, 8, false, text);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].text, " And so");
  EXPECT_EQ(out[1].text, " my");
  EXPECT_EQ(out[2].text, " friends");
  EXPECT_EQ(out[0].t0, 100);
  EXPECT_EQ(out[0].t1, 100 + 200 * 7 / 18);
  EXPECT_EQ(out[1].t0, out[0].t1);
  EXPECT_EQ(out[1].t1, 100 + 200 * 10 / 18);
  EXPECT_EQ(out[2].t1, 300);
  // max_len 1 gives one token per segment; 0 leaves the segment alone.
  EXPECT_EQ(WrapSegments({seg}, 1, false, text).size(), 4u);
  EXPECT_EQ(WrapSegments({seg}, 0, false, text).size(), 1u);
  EXPECT_EQ(Utf8Length("h\xc3\xa9llo"), 5);
}

TEST_F(SegmentsTest, WrapOnWordsOnlySplitsBeforeASpace) {
  words[20] = "fri";
  words[21] = "ends";
  Segment seg;
  seg.t0 = 0;
  seg.t1 = 100;
  seg.tokens = {10, 20, 21};  // " And" "fri" "ends"
  seg.text = " Andfriends";
  EXPECT_EQ(WrapSegments({seg}, 4, true, text).size(), 1u);  // no token starts with a space
  EXPECT_EQ(WrapSegments({seg}, 4, false, text).size(), 3u);
}

}  // namespace
}  // namespace whisper
