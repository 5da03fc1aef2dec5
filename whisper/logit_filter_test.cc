#include "whisper/logit_filter.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace whisper {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

class LogitFilterTest : public ::testing::Test {
 protected:
  SpecialTokens s = SpecialTokensForVocab(51864);
  std::vector<float> logits = std::vector<float>(51864, 0.0f);
  std::vector<float> logprobs = std::vector<float>(51864, 0.0f);
  void Run(const std::vector<Token>& tokens, bool has_ts = false, int seek_delta = 0,
           LogitFilterParams p = LogitFilterParams()) {
    ApplyLogitFilters(s, p, tokens.data(), static_cast<int>(tokens.size()), has_ts, seek_delta, logits.data(),
                      logprobs.data());
  }
};

TEST(SpecialTokens, EnglishAndMultilingualIds) {
  const SpecialTokens en = SpecialTokensForVocab(51864);
  EXPECT_EQ(en.eot, 50256);
  EXPECT_EQ(en.sot, 50257);
  EXPECT_EQ(en.beg, 50363);
  EXPECT_FALSE(en.multilingual);
  const SpecialTokens multi = SpecialTokensForVocab(51865);
  EXPECT_EQ(multi.eot, 50257);
  EXPECT_EQ(multi.transcribe, 50359);
  EXPECT_EQ(multi.nosp, 50362);
  EXPECT_EQ(multi.beg, 50364);
  const SpecialTokens v3 = SpecialTokensForVocab(51866);
  EXPECT_EQ(v3.translate, 50359);
  EXPECT_EQ(v3.beg, 50365);
  EXPECT_EQ(v3.num_languages, 100);
}

// eot_before_frame (the batched pipeline's one window per chunk): after a segment closed at
// seek_delta (<|0.00|> text <|delta / 100 s|>), a likely eot (logit 30: no timestamp rule removes
// it) is suppressed while seek_delta is below frame 200 only, and not before any timestamp
// (has_ts false), nor when the field is 0 (the default).
TEST_F(LogitFilterTest, EotBeforeFrameSuppressesEotUntilThatFrame) {
  LogitFilterParams p;
  p.eot_before_frame = 200;
  auto eot_suppressed = [&](const std::vector<Token>& tokens, bool has_ts, int delta, const LogitFilterParams& fp) {
    std::fill(logits.begin(), logits.end(), 0.0f);
    logits[s.eot] = 30.0f;
    Run(tokens, has_ts, delta, fp);
    return logits[s.eot] == kNegInf;
  };
  for (int delta : {100, 198, 200, 300}) {
    EXPECT_EQ(eot_suppressed({s.beg, 100, s.beg + delta / 2}, true, delta, p), delta < 200) << delta;
  }
  EXPECT_FALSE(eot_suppressed({100}, false, 0, p));
  EXPECT_FALSE(eot_suppressed({s.beg, 100, s.beg + 50}, true, 100, LogitFilterParams()));
}

TEST_F(LogitFilterTest, FirstTokenSuppressesBlankEotAndLateTimestamps) {
  logits[100] = 5.0f;  // more probable than the 51 allowed timestamps together (e^5 > 51)
  Run({});
  EXPECT_EQ(logits[s.eot], kNegInf);
  EXPECT_EQ(logits[220], kNegInf);
  EXPECT_EQ(logits[s.not_], kNegInf);
  EXPECT_EQ(logits[s.sot], kNegInf);
  EXPECT_EQ(logits[s.sot + 1], kNegInf);  // a language slot
  // max_initial_ts 1.0 s -> timestamps up to beg + 50 allowed, beyond suppressed.
  EXPECT_NE(logits[s.beg + 50], kNegInf);
  EXPECT_EQ(logits[s.beg + 51], kNegInf);
  EXPECT_NE(logits[100], kNegInf);
}

// OpenAI's first step as CTranslate2 4.x applies it for faster-whisper 1.2.1: text (and eot) is
// suppressed even where it is more probable than the timestamps, and the log-probabilities are
// over the allowed timestamps (51 equal logits: log(1/51) each).
TEST_F(LogitFilterTest, OpenAiFirstTokenIsATimestamp) {
  logits[100] = 5.0f;
  LogitFilterParams p;
  p.openai_initial_rule = true;
  Run({}, false, 0, p);
  EXPECT_EQ(logits[100], kNegInf);
  EXPECT_EQ(logits[s.eot], kNegInf);
  EXPECT_NEAR(logprobs[s.beg], -std::log(51.0f), 1e-5);
  EXPECT_NEAR(logprobs[s.beg + 50], -std::log(51.0f), 1e-5);
  EXPECT_EQ(logits[s.beg + 51], kNegInf);
}

// faster-whisper's max_initial_timestamp=0 (index int(round(0 / 0.02)) = 0) allows <|0.00|> only;
// whisper.cpp's rule reads 0 as no limit. 0.01 s is index 0.5, rounded half to even (Python's
// round) to 0; 0.03 s (1.4999...) to 1; 0.07 s (3.5000...1) to 4.
TEST_F(LogitFilterTest, MaxInitialTimestampZeroUnderOpenAiRules) {
  LogitFilterParams p;
  p.openai_initial_rule = true;
  for (const auto& [ts, last] : {std::pair<float, int>{0.0f, 0}, {0.01f, 0}, {0.03f, 1}, {0.07f, 4}}) {
    std::fill(logits.begin(), logits.end(), 0.0f);
    p.max_initial_ts = ts;
    Run({}, false, 0, p);
    EXPECT_NE(logits[s.beg + last], kNegInf) << ts;
    EXPECT_EQ(logits[s.beg + last + 1], kNegInf) << ts;
    EXPECT_NEAR(logprobs[s.beg], -std::log(static_cast<float>(last + 1)), 1e-5) << ts;
  }
  std::fill(logits.begin(), logits.end(), 0.0f);
  LogitFilterParams w;  // whisper.cpp's rules
  w.max_initial_ts = 0.0f;
  Run({}, false, 0, w);
  EXPECT_NE(logits[s.n_vocab - 1], kNegInf);
}

// After a forced prefix (faster-whisper's prefix), CTranslate2 applies no timestamp rule on the
// first sampled token: text and any timestamp may follow, where without the prefix a lone
// timestamp or the initial rule would constrain it; suppress_blank still applies.
TEST_F(LogitFilterTest, NoTimestampRuleRightAfterAPrefix) {
  LogitFilterParams p;
  p.openai_initial_rule = true;
  p.after_prefix = true;
  logits[s.n_vocab - 1] = 9.0f;  // the last timestamp, far more probable than any text
  Run({}, false, 0, p);
  EXPECT_NE(logits[100], kNegInf);
  EXPECT_NE(logits[s.beg + 51], kNegInf);
  EXPECT_EQ(logits[220], kNegInf);
  EXPECT_EQ(logits[s.eot], kNegInf);
  // The second sampled token: the rules again (after text then a timestamp, no text).
  std::fill(logits.begin(), logits.end(), 0.0f);
  Run({100, s.beg + 10}, true, 20, p);
  EXPECT_EQ(logits[100], kNegInf);
  EXPECT_EQ(logits[s.beg + 9], kNegInf);
}

// <|startoflm|> is suppressed unless tinydiarize asks for it (whisper.cpp [TDRZ]).
TEST_F(LogitFilterTest, StartOfLmOnlyWithTinydiarize) {
  Run({s.beg, 100});
  EXPECT_EQ(logits[s.solm], kNegInf);
  std::fill(logits.begin(), logits.end(), 0.0f);
  logits[100] = 10.0f;  // text outweighs the timestamps (e^10 > 1501), which would mask it all
  LogitFilterParams p;
  p.tdrz = true;
  Run({s.beg, 100}, true, 0, p);
  EXPECT_NE(logits[s.solm], kNegInf);
  EXPECT_EQ(logits[s.sot], kNegInf);  // the other control tokens stay suppressed
}

TEST_F(LogitFilterTest, TimestampPairing) {
  // "ts text ts": another timestamp or eot must follow? No: after text+ts, text is suppressed.
  Run({s.beg, 100, s.beg + 10}, true, 20);
  EXPECT_EQ(logits[100], kNegInf);
  EXPECT_EQ(logits[0], kNegInf);
  EXPECT_NE(logits[s.beg + 10], kNegInf);  // the pair's second timestamp
  EXPECT_EQ(logits[s.beg + 9], kNegInf);   // monotonic
  // "ts ts": text must follow.
  std::fill(logits.begin(), logits.end(), 0.0f);
  Run({s.beg, 100, s.beg + 10, s.beg + 10}, true, 20);
  EXPECT_EQ(logits[s.beg + 10], kNegInf);
  EXPECT_EQ(logits[s.beg + 11], kNegInf);
}

// After text the next timestamp is a later one under OpenAI's rules (CTranslate2
// ApplyTimestampRules: ids up to the last timestamp, <|0.00|> included, are suppressed), not
// earlier under whisper.cpp's (seek_delta, which <|0.00|> does not set); after "text ts" the same
// timestamp may follow under both (the next segment opens where this one closed).
TEST_F(LogitFilterTest, AfterTextTheNextTimestampIsLaterUnderOpenAiRules) {
  LogitFilterParams openai;
  openai.openai_initial_rule = true;
  Run({s.beg, 100, s.beg + 10, s.beg + 10, 101}, true, 20, openai);
  EXPECT_EQ(logits[s.beg + 10], kNegInf);
  EXPECT_NE(logits[s.beg + 11], kNegInf);
  std::fill(logits.begin(), logits.end(), 0.0f);
  Run({s.beg, 100, s.beg + 10, s.beg + 10, 101}, true, 20);
  EXPECT_EQ(logits[s.beg + 9], kNegInf);
  EXPECT_NE(logits[s.beg + 10], kNegInf);
  std::fill(logits.begin(), logits.end(), 0.0f);
  Run({s.beg, 100}, false, 0, openai);
  EXPECT_EQ(logits[s.beg], kNegInf);
  EXPECT_NE(logits[s.beg + 1], kNegInf);
  std::fill(logits.begin(), logits.end(), 0.0f);
  Run({s.beg, 100, s.beg + 10}, true, 20, openai);
  EXPECT_NE(logits[s.beg + 10], kNegInf);
  EXPECT_EQ(logits[s.beg + 9], kNegInf);
}

TEST_F(LogitFilterTest, LogprobsAreLogSoftmaxAndTimestampMassWins) {
  // Two text tokens at logit 0, a uniform rest of -inf except timestamps with large mass.
  std::fill(logits.begin(), logits.end(), kNegInf);
  logits[100] = 2.0f;
  logits[101] = 1.0f;
  Run({s.beg, 100}, true, 0);
  double sum = 0.0;
  for (float lp : logprobs) sum += std::exp(static_cast<double>(lp));
  EXPECT_NEAR(sum, 1.0, 1e-6);
  EXPECT_NEAR(logprobs[100], 2.0f - std::log(std::exp(2.0f) + std::exp(1.0f)), 1e-5);
  // Now make the timestamp mass exceed the best text token: text goes to -inf.
  std::fill(logits.begin(), logits.end(), kNegInf);
  logits[100] = 0.0f;
  for (int i = 0; i < 10; ++i) logits[s.beg + 5 + i] = -0.5f;  // sum of probs > p(text)
  Run({s.beg, 100, 101}, true, 0);
  EXPECT_EQ(logprobs[100], kNegInf);
  EXPECT_GT(logprobs[s.beg + 5], -5.0f);
}

// Text at logit 0 and ten timestamps at -0.5: the timestamps' mass (10 e^-0.5 = 6.07) outweighs
// the text (1), which is suppressed. whisper.cpp keeps each timestamp's log-probability from before
// (-0.5 - log(1 + 6.07)); OpenAI's decoding.py and CTranslate2 take log_softmax again over the
// timestamps left: log(1/10) each.
TEST_F(LogitFilterTest, TimestampRuleRenormalizesUnderOpenAiRules) {
  for (const bool renormalize : {false, true}) {
    std::fill(logits.begin(), logits.end(), kNegInf);
    logits[100] = 0.0f;
    for (int i = 0; i < 10; ++i) logits[s.beg + 5 + i] = -0.5f;
    LogitFilterParams p;
    p.renormalize_timestamps = renormalize;
    Run({s.beg, 100, 101}, true, 0, p);
    EXPECT_EQ(logprobs[100], kNegInf);
    const double expected = renormalize ? std::log(0.1) : -0.5 - std::log(1.0 + 10.0 * std::exp(-0.5));
    for (int i = 0; i < 10; ++i) EXPECT_NEAR(logprobs[s.beg + 5 + i], expected, 1e-5) << renormalize;
  }
}

TEST_F(LogitFilterTest, TemperatureDividesLogits) {
  std::fill(logits.begin(), logits.end(), kNegInf);
  logits[100] = 1.0f;
  logits[101] = 0.0f;
  LogitFilterParams p;
  p.temperature = 0.5f;
  p.no_timestamps = true;
  Run({5}, false, 0, p);
  EXPECT_FLOAT_EQ(logits[100], 2.0f);
  EXPECT_NEAR(logprobs[100] - logprobs[101], 2.0f, 1e-6);
  EXPECT_EQ(logits[s.beg + 3], kNegInf);  // no_timestamps
}

// faster-whisper's repetition_penalty (CTranslate2 penalize_previous_tokens), by hand: with penalty
// 2, a positive logit is halved, a negative one doubled, each sampled token once however often it
// was sampled; tokens not sampled keep theirs.
TEST_F(LogitFilterTest, RepetitionPenaltyDividesPositiveAndMultipliesNegativeLogits) {
  std::fill(logits.begin(), logits.end(), kNegInf);
  logits[5] = 2.0f;
  logits[7] = -3.0f;
  logits[8] = 1.0f;
  LogitFilterParams p;
  p.repetition_penalty = 2.0f;
  p.no_timestamps = true;
  Run({5, 7, 5}, false, 0, p);
  EXPECT_FLOAT_EQ(logits[5], 1.0f);
  EXPECT_FLOAT_EQ(logits[7], -6.0f);
  EXPECT_FLOAT_EQ(logits[8], 1.0f);
  // log-softmax of {1, -6, 1}: token 8 is now exactly as likely as token 5, e^7 times token 7.
  EXPECT_NEAR(logprobs[5], std::log(0.5 / (1.0 + 0.5 * std::exp(-7.0))), 1e-6);
  EXPECT_NEAR(logprobs[8] - logprobs[7], 7.0f, 1e-5);
}

// The penalty runs before the timestamp rule, which then sees the penalized text: after <|0.00|>
// and text 100, every timestamp is allowed (logit 0: together log 1501 = 7.31); text 100 (logit
// 10, sampled before) beats them unpenalized, but not at penalty 2 (5 < 7.31), so text is suppressed.
TEST_F(LogitFilterTest, RepetitionPenaltyComesBeforeTheTimestampRule) {
  std::fill(logits.begin(), logits.end(), 0.0f);
  logits[100] = 10.0f;
  LogitFilterParams p;
  p.renormalize_timestamps = true;
  Run({s.beg, 100}, true, 0, p);
  EXPECT_FLOAT_EQ(logits[100], 10.0f);
  std::fill(logits.begin(), logits.end(), 0.0f);
  logits[100] = 10.0f;
  p.repetition_penalty = 2.0f;
  Run({s.beg, 100}, true, 0, p);
  EXPECT_EQ(logits[100], kNegInf);
  EXPECT_NEAR(logprobs[s.beg + 7], -std::log(1501.0), 1e-5);  // renormalized over the timestamps
}

// CTranslate2's NoRepeatNgram, by hand.
TEST(BanRepeatedNgrams, BansTheTokenThatWouldRepeatAnNgram) {
  std::vector<float> l(10, 0.0f);
  const std::vector<Token> a = {1, 2, 3, 1, 2};
  BanRepeatedNgrams(a.data(), 5, 3, 10, l.data());  // "1 2" was followed by 3
  EXPECT_EQ(l[3], kNegInf);
  EXPECT_EQ(std::count(l.begin(), l.end(), kNegInf), 1);
  std::fill(l.begin(), l.end(), 0.0f);
  const std::vector<Token> b = {1, 2, 1, 3, 1};
  BanRepeatedNgrams(b.data(), 5, 2, 10, l.data());  // "1" was followed by 2 and by 3
  EXPECT_EQ(l[2], kNegInf);
  EXPECT_EQ(l[3], kNegInf);
  EXPECT_EQ(std::count(l.begin(), l.end(), kNegInf), 2);
  std::fill(l.begin(), l.end(), 0.0f);
  const std::vector<Token> c = {4, 9, 4};
  BanRepeatedNgrams(c.data(), 3, 1, 10, l.data());  // n = 1: every token sampled
  EXPECT_EQ(std::count(l.begin(), l.end(), kNegInf), 2);
  EXPECT_EQ(l[4], kNegInf);
  EXPECT_EQ(l[9], kNegInf);
  std::fill(l.begin(), l.end(), 0.0f);
  BanRepeatedNgrams(a.data(), 2, 3, 10, l.data());  // fewer tokens than n: nothing
  BanRepeatedNgrams(a.data(), 5, 0, 10, l.data());  // 0: off
  EXPECT_EQ(std::count(l.begin(), l.end(), kNegInf), 0);
}

TEST_F(LogitFilterTest, NoRepeatNgramSizeSuppressesThroughTheFilters) {
  std::fill(logits.begin(), logits.end(), 0.0f);
  LogitFilterParams p;
  p.no_timestamps = true;
  p.no_repeat_ngram_size = 2;
  Run({10, 11, 12, 10}, false, 0, p);
  EXPECT_EQ(logits[11], kNegInf);
  EXPECT_NE(logits[12], kNegInf);
  EXPECT_EQ(logprobs[11], kNegInf);
}

// After a forced prefix, the penalty and the n-gram ban read `output` (the prefix, then the sampled
// tokens), as CTranslate2's logits processors read the sequence its prefix steps wrote: the
// prefix's tokens 20 and 21 are penalized / banned though only 22 was sampled; the other rules
// still see the sampled tokens (no blank rule: one token was sampled).
TEST_F(LogitFilterTest, PenaltyAndNgramBanReadTheForcedPrefix) {
  std::fill(logits.begin(), logits.end(), 1.0f);
  const std::vector<Token> output = {s.beg, 20, 21, 22, 20};
  LogitFilterParams p;
  p.no_timestamps = true;
  p.repetition_penalty = 4.0f;
  p.output = output.data();
  p.n_output = 4;  // <|0.00|> 20 21 | 22
  Run({22}, false, 0, p);
  EXPECT_FLOAT_EQ(logits[20], 0.25f);
  EXPECT_FLOAT_EQ(logits[21], 0.25f);
  EXPECT_FLOAT_EQ(logits[22], 0.25f);
  EXPECT_FLOAT_EQ(logits[23], 1.0f);
  std::fill(logits.begin(), logits.end(), 1.0f);
  p.repetition_penalty = 1.0f;
  p.no_repeat_ngram_size = 2;
  p.n_output = 5;  // <|0.00|> 20 21 | 22 20: "20" was followed by 21 in the prefix
  Run({22, 20}, false, 0, p);
  EXPECT_EQ(logits[21], kNegInf);
  EXPECT_EQ(std::count(logits.begin(), logits.begin() + s.eot, kNegInf), 1);
  std::fill(logits.begin(), logits.end(), 1.0f);
  p.output = nullptr;  // without it: the sampled tokens only ("20" is their last, never followed)
  Run({22, 20}, false, 0, p);
  EXPECT_EQ(std::count(logits.begin(), logits.begin() + s.eot, kNegInf), 0);
}

}  // namespace
}  // namespace whisper
