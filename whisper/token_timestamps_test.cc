#include "whisper/token_timestamps.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace whisper {
namespace {

TEST(VoiceLength, WeightsAsWhisperCpp) {
  // ' ' 0.01, ',' 2, '.' '!' '?' and digits 3, anything else 1.
  EXPECT_FLOAT_EQ(VoiceLength(" ab"), 2.01f);
  EXPECT_FLOAT_EQ(VoiceLength("a,b."), 1 + 2 + 1 + 3);
  EXPECT_FLOAT_EQ(VoiceLength("42?"), 9.0f);
}

class TokenTimestampsTest : public ::testing::Test {
 protected:
  SpecialTokens s = SpecialTokensForVocab(51864);
  std::map<Token, std::string> words = {{10, " aa"}, {11, " bbbb"}};
  std::function<const std::string&(Token)> text = [this](Token t) -> const std::string& {
    static const std::string kTs = "[_TT_]";
    auto it = words.find(t);
    return it == words.end() ? kTs : it->second;
  };
  TokenData Tok(Token id, Token tid, float pt, float ptsum) {
    TokenData d;
    d.id = id;
    d.tid = tid;
    d.pt = pt;
    d.ptsum = ptsum;
    return d;
  }
};

TEST_F(TokenTimestampsTest, ConfidentTimestampsAndVoiceLengthSplit) {
  // 2 s of constant signal: the energy step 3 never moves an edge (the signal is above half
  // its mean everywhere, and edges only move outwards into a neighbour's time).
  std::vector<float> x(32000, 0.5f);
  TokenTimestamps tt;
  tt.Begin(x.data(), static_cast<int>(x.size()));
  Segment seg;
  seg.t0 = 0;
  seg.t1 = 100;
  // <|0.00|> " aa" " bbbb" <|1.00|>; neither word's timestamp is confident (pt below threshold),
  // so the two words share their interval by voice length: " aa" 2.01, " bbbb" 4.01.
  seg.tokens = {Tok(s.beg, s.beg, 1.0f, 1.0f), Tok(10, s.beg + 20, 0.001f, 0.5f), Tok(11, s.beg + 30, 0.001f, 0.5f),
                Tok(s.beg + 50, s.beg + 50, 1.0f, 1.0f)};
  tt.Compute(s, text, 0.01f, 0.01f, &seg);
  // The closing timestamp at 100 is confident and later than <|0.00|>: tt = 2 * 50 = 100 <= t1,
  // so it ends " bbbb" at 100 and starts at 100. Then tokens[n-2].t1 = t1 = 100.
  EXPECT_EQ(seg.tokens[0].t0, 0);
  EXPECT_EQ(seg.tokens[0].t1, 0);
  EXPECT_EQ(seg.tokens[3].t0, 100);
  EXPECT_EQ(seg.tokens[3].t1, 100);
  // Token 0 has its end (0), so the run without ends is tokens 1..2: they share
  // [tokens[1].t0 = 0, tokens[2].t1 = 100] by voice length, psum = 2.01 + 4.01.
  const int64_t c = static_cast<int64_t>(100 * 2.01 / (2.01 + 4.01));  // 33
  EXPECT_EQ(seg.tokens[1].t0, 0);
  EXPECT_EQ(seg.tokens[1].t1, c);
  EXPECT_EQ(seg.tokens[2].t0, c);
  EXPECT_EQ(seg.tokens[2].t1, 100);
  EXPECT_FLOAT_EQ(seg.tokens[1].vlen, 2.01f);
  for (const TokenData& t : seg.tokens) EXPECT_LE(t.t0, t.t1);
}

TEST_F(TokenTimestampsTest, ConfidentTimestampStartsItsToken) {
  std::vector<float> x(32000, 0.5f);
  TokenTimestamps tt;
  tt.Begin(x.data(), static_cast<int>(x.size()));
  Segment seg;
  seg.t0 = 0;
  seg.t1 = 100;
  // " bbbb" is confidently at <|0.40|> (tid beg + 20 = 40 cs).
  seg.tokens = {Tok(s.beg, s.beg, 1.0f, 1.0f), Tok(10, s.beg + 5, 0.001f, 0.5f), Tok(11, s.beg + 20, 0.9f, 0.5f),
                Tok(s.beg + 50, s.beg + 50, 1.0f, 1.0f)};
  tt.Compute(s, text, 0.01f, 0.01f, &seg);
  EXPECT_EQ(seg.tokens[1].t1, 40);
  EXPECT_EQ(seg.tokens[2].t0, 40);
  EXPECT_EQ(seg.tokens[2].t1, 100);
}

TEST_F(TokenTimestampsTest, NoSignalLeavesTimesUnset) {
  TokenTimestamps tt;
  tt.Begin(nullptr, 0);
  Segment seg;
  seg.t1 = 100;
  seg.tokens = {Tok(10, s.beg, 0.5f, 0.5f), Tok(11, s.beg, 0.5f, 0.5f)};
  tt.Compute(s, text, 0.01f, 0.01f, &seg);
  EXPECT_EQ(seg.tokens[0].t0, -1);
  EXPECT_EQ(seg.tokens[1].t1, -1);
}

}  // namespace
}  // namespace whisper
