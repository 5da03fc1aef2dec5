#include "whisper/decoding.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "whisper/fake_decoder_backend.h"

namespace whisper {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

class DecodingTest : public ::testing::Test {
 protected:
  SpecialTokens s = SpecialTokensForVocab(51864);
  std::vector<Token> prompt = {SpecialTokensForVocab(51864).sot};
  DecodingParams Params() {
    DecodingParams p;
    p.temperature_inc = 0.0f;
    return p;
  }
};

TEST_F(DecodingTest, GreedyFollowsArgmaxAndStopsAtEot) {
  const std::vector<Token> script = {s.beg, 10, 11, s.beg + 50, s.eot};
  FakeBackend b(s, 1, 1, [&](const std::vector<Token>& g, std::vector<float>* l) {
    std::fill(l->begin(), l->end(), -10.0f);
    (*l)[script[std::min(g.size(), script.size() - 1)]] = 10.0f;
  });
  WindowDecoder dec(s, 448, Params());
  WindowResult r;
  ASSERT_TRUE(dec.Run(b, prompt, 0, 1100, &r).ok());
  EXPECT_EQ(r.tokens, (std::vector<Token>{s.beg, 10, 11, s.beg + 50}));
  EXPECT_EQ(r.seek_delta, 100);
  EXPECT_FALSE(r.failed);
  EXPECT_EQ(r.n_fallbacks, 0);
  EXPECT_GT(r.avg_logprob, -0.01f);
}

// <|0.00|> 10 <|1.00|>, then <|endoftext|> (p 0.6) or <|1.20|> (p 0.4); the audio ends at 1.05 s.
// Every other logit is -inf, so each earlier step has probability 1.
class AudioEndTest : public DecodingTest {
 protected:
  WindowResult Decode(bool whisper_cpp) {
    FakeBackend b(s, 1, 1, [&](const std::vector<Token>& g, std::vector<float>* l) {
      const Token certain[] = {s.beg, 10, s.beg + 50};
      if (g.size() < 3) {
        (*l)[certain[g.size()]] = 0.0f;
      } else if (g.size() == 3) {
        (*l)[s.eot] = std::log(0.6f);
        (*l)[s.beg + 60] = std::log(0.4f);
      } else {
        (*l)[s.eot] = 0.0f;
      }
    });
    DecodingParams p = Params();
    p.whisper_cpp = whisper_cpp;
    WindowDecoder dec(s, 448, p);
    WindowResult r;
    EXPECT_TRUE(dec.Run(b, prompt, 0, 105, &r).ok());
    return r;
  }
};

// whisper.cpp's rule: a timestamp within 10 frames of the audio end completes the sequence, no
// <|endoftext|> sampled: every accepted token had probability 1.
TEST_F(AudioEndTest, WhisperCppCompletesAtATimestampNearTheEnd) {
  const WindowResult r = Decode(true);
  EXPECT_EQ(r.tokens, (std::vector<Token>{s.beg, 10, s.beg + 50}));
  EXPECT_NEAR(r.sum_logprob, 0.0, 1e-6);
  EXPECT_NEAR(r.avg_logprob, 0.0, 1e-6);
}

// OpenAI's rules (CTranslate2's GreedySearch, which faster-whisper runs) know no audio end: the
// sequence goes on to <|endoftext|>, whose log-probability is in the score: sum_logprob = ln 0.6,
// avg_logprob = ln 0.6 / (3 tokens + 1). Ending at <|1.00|> gave 0 (issue #37: avg_logprob less
// negative than faster-whisper's).
TEST_F(AudioEndTest, OpenAiGoesOnToEotAndScoresIt) {
  const WindowResult r = Decode(false);
  EXPECT_EQ(r.tokens, (std::vector<Token>{s.beg, 10, s.beg + 50}));
  EXPECT_NEAR(r.sum_logprob, std::log(0.6), 1e-5);
  EXPECT_NEAR(r.avg_logprob, std::log(0.6) / 4, 1e-5);
}

// Greedy takes A (p 0.6) then one of ten tokens at p 0.1; beam search finds B (p 0.4) then C
// (p 0.99), the more probable sequence.
// The batched pipeline's one window per chunk (keep_unclosed_tail): the text after the last
// timestamp pair (11 after <|1.00|><|1.00|>) stays in the result; without it the window ends at
// <|1.00|> and the next window would decode 11 again (OpenAI's and whisper.cpp's seek rules).
TEST_F(DecodingTest, KeepUnclosedTailKeepsTheTextAfterTheLastTimestamp) {
  const std::vector<Token> script = {s.beg, 10, s.beg + 50, s.beg + 50, 11, s.eot};
  for (bool keep : {false, true}) {
    FakeBackend b(s, 1, 1, [&](const std::vector<Token>& g, std::vector<float>* l) {
      std::fill(l->begin(), l->end(), -10.0f);
      (*l)[script[std::min(g.size(), script.size() - 1)]] = 10.0f;
    });
    DecodingParams p = Params();
    p.keep_unclosed_tail = keep;
    WindowDecoder dec(s, 448, p);
    WindowResult r;
    ASSERT_TRUE(dec.Run(b, prompt, 0, 3000, &r).ok());
    std::vector<Token> want = {s.beg, 10, s.beg + 50, s.beg + 50};
    if (keep) want.push_back(11);
    EXPECT_EQ(r.tokens, want) << keep;
    EXPECT_EQ(r.seek_delta, 100) << keep;  // the last timestamp either way
  }
}

TEST_F(DecodingTest, BeamSearchFindsTheMoreProbableSequence) {
  const Token A = 100, B = 101, C = 300;
  auto script = [&](const std::vector<Token>& g, std::vector<float>* l) {
    switch (g.size()) {
      case 0: (*l)[s.beg] = 0.0f; break;
      case 1: (*l)[A] = std::log(0.6f); (*l)[B] = std::log(0.4f); break;
      case 2:
        if (g[1] == A) {
          for (int i = 0; i < 10; ++i) (*l)[200 + i] = std::log(0.1f);
        } else {
          (*l)[C] = std::log(0.99f);
          (*l)[C + 1] = std::log(0.01f);
        }
        break;
      case 3: (*l)[s.beg + 50] = 0.0f; break;
      default: (*l)[s.eot] = 0.0f; break;
    }
  };
  {
    FakeBackend b(s, 1, 1, script);
    WindowDecoder dec(s, 448, Params());
    WindowResult r;
    ASSERT_TRUE(dec.Run(b, prompt, 0, 3000, &r).ok());
    EXPECT_EQ(r.tokens, (std::vector<Token>{s.beg, A, 200, s.beg + 50}));
  }
  {
    DecodingParams p = Params();
    p.beam_size = 2;
    FakeBackend b(s, DecodersNeeded(p), 1, script);
    WindowDecoder dec(s, 448, p);
    WindowResult r;
    ASSERT_TRUE(dec.Run(b, prompt, 0, 3000, &r).ok());
    EXPECT_EQ(r.tokens, (std::vector<Token>{s.beg, B, C, s.beg + 50}));
    EXPECT_NEAR(r.sum_logprob, std::log(0.4) + std::log(0.99), 1e-4);
  }
}

// Beam search copies a cache only after the prefix the two decoders share, and never relies on a
// prefix the destination lacks: 4 beams over 31 steps whose candidates keep swapping lineages
// (the script rewards the parity of the token sum), so adoptions cross beams every step.
TEST_F(DecodingTest, BeamSearchCopiesOnlyWhereCachesDiffer) {
  auto script = [&](const std::vector<Token>& g, std::vector<float>* l) {
    if (g.empty()) {
      (*l)[s.beg] = 0.0f;
      return;
    }
    if (g.size() >= 30) {  // a closing timestamp, then the end (30 tokens: under the entropy rule's 32)
      (*l)[g.size() == 30 ? s.beg + 50 : s.eot] = 0.0f;
      return;
    }
    long sum = 0;
    for (Token t : g) sum += t;
    for (int i = 0; i < 6; ++i) (*l)[100 + i] = -0.1f * static_cast<float>((sum + i) % 3) - 0.01f * i;
  };
  DecodingParams p = Params();
  p.beam_size = 4;
  p.max_tokens_per_window = 60;
  FakeBackend b(s, DecodersNeeded(p), 1, script);
  WindowDecoder dec(s, 448, p);
  WindowResult r;
  ASSERT_TRUE(dec.Run(b, prompt, 0, 3000, &r).ok());
  EXPECT_EQ(r.tokens.size(), 31u);
  EXPECT_EQ(b.stale_prefix_copies, 0);
  EXPECT_GT(b.copied_positions, 0);
  // Without the prefix rule every adoption copies its whole sequence: ~4 x 31 x 16 positions.
  EXPECT_LT(b.copied_positions * 4, b.full_copy_positions)
      << b.copied_positions << " of " << b.full_copy_positions;
}

// FakeBackend whose ParallelFor runs the calls out of order (last first) and, with `threads`,
// on two threads at once, counting the calls: the per-sequence filtering must not depend on it.
class ParallelFakeBackend : public FakeBackend {
 public:
  ParallelFakeBackend(const SpecialTokens& s, int n_decoders, int n_prompt, Script script, bool threads)
      : FakeBackend(s, n_decoders, n_prompt, std::move(script)), threads_(threads) {}
  void ParallelFor(int n, void (*fn)(void* arg, int i), void* arg) override {
    ++parallel_runs;
    max_n = std::max(max_n, n);
    if (!threads_) {
      for (int i = n - 1; i >= 0; --i) fn(arg, i);
      return;
    }
    std::thread other([&] {
      for (int i = n - 1; i >= 0; i -= 2) fn(arg, i);
    });
    for (int i = n - 2; i >= 0; i -= 2) fn(arg, i);
    other.join();
  }
  int parallel_runs = 0;
  int max_n = 0;

 private:
  bool threads_;
};

// Beam search (OpenAI's rules and whisper.cpp's) and best-of sampling filter each live sequence
// through DecoderBackend::ParallelFor: run in reverse order or on two threads, the result is the
// serial default's, token for token, and the calls cover every beam.
TEST_F(DecodingTest, ParallelFilteringMatchesSerial) {
  auto script = [&](const std::vector<Token>& g, std::vector<float>* l) {
    if (g.empty()) {
      (*l)[s.beg] = 0.0f;
      return;
    }
    if (g.size() >= 20) {
      (*l)[g.size() == 20 ? s.beg + 50 : s.eot] = 0.0f;
      return;
    }
    long sum = 0;
    for (Token t : g) sum += t;
    for (int i = 0; i < 8; ++i) (*l)[100 + i] = -0.1f * static_cast<float>((sum * 7 + i) % 5) - 0.01f * i;
  };
  for (int mode = 0; mode < 3; ++mode) {
    DecodingParams p = Params();
    p.max_tokens_per_window = 40;
    if (mode < 2) {
      p.beam_size = 5;
      p.whisper_cpp = mode == 1;
    } else {
      p.temperature = 0.6f;
      p.best_of = 4;
    }
    std::vector<std::vector<Token>> results;
    for (int variant = 0; variant < 3; ++variant) {
      WindowDecoder dec(s, 448, p);
      WindowResult r;
      if (variant == 0) {
        FakeBackend b(s, DecodersNeeded(p), 1, script);
        ASSERT_TRUE(dec.Run(b, prompt, 0, 3000, &r).ok());
      } else {
        ParallelFakeBackend b(s, DecodersNeeded(p), 1, script, variant == 2);
        ASSERT_TRUE(dec.Run(b, prompt, 0, 3000, &r).ok());
        EXPECT_GT(b.parallel_runs, 10) << "mode " << mode;
        EXPECT_EQ(b.max_n, mode < 2 ? 5 : 4) << "mode " << mode;
      }
      ASSERT_GT(r.tokens.size(), 10u) << "mode " << mode;
      results.push_back(r.tokens);
    }
    EXPECT_EQ(results[1], results[0]) << "mode " << mode << ": reverse order";
    EXPECT_EQ(results[2], results[0]) << "mode " << mode << ": two threads";
  }
}

TEST_F(DecodingTest, LowConfidenceFallsBackThroughEveryTemperature) {
  auto script = [&](const std::vector<Token>& g, std::vector<float>* l) {
    if (g.empty()) {
      (*l)[s.beg] = 0.0f;
    } else if (g.size() <= 3) {
      for (int i = 0; i < 100; ++i) (*l)[100 + i] = 0.0f;  // log(1/100) each
    } else if (g.size() == 4) {
      (*l)[s.beg + 40] = 0.0f;
    } else {
      (*l)[s.eot] = 0.0f;
    }
  };
  for (const bool whisper_cpp : {false, true}) {
    DecodingParams p = Params();
    p.temperature_inc = 0.2f;
    p.best_of = 3;
    p.whisper_cpp = whisper_cpp;
    FakeBackend b(s, DecodersNeeded(p), 1, script);
    WindowDecoder dec(s, 448, p);
    WindowResult r;
    ASSERT_TRUE(dec.Run(b, prompt, 0, 3000, &r).ok());
    EXPECT_EQ(r.n_fallbacks, 5);  // 0.2, 0.4, 0.6, 0.8, 1.0
    EXPECT_NEAR(r.temperature, 1.0f, 1e-5);
    // 3 tokens at log(1/100) among <|0.00|> ... <|0.80|> <|endoftext|>: whisper.cpp divides by the
    // 5 tokens up to the last timestamp; OpenAI (decoding.py, faster-whisper) by the 5 before
    // <|endoftext|> plus one.
    EXPECT_NEAR(r.avg_logprob, 3 * std::log(0.01) / (whisper_cpp ? 5 : 6), 1e-4) << whisper_cpp;
    EXPECT_FALSE(r.failed);
    ASSERT_EQ(r.tokens.size(), 5u);
    EXPECT_EQ(r.no_speech_prob, 0.0f);
  }
}

// OpenAI's compression-ratio rule: a confident window whose text repeats itself (" I'm sorry." 20
// times: stripped, 219 bytes that zlib.compress makes 22, ratio 9.95 > 2.4) falls back through
// every temperature; with the rule off, or with whisper.cpp's rules (no such rule), it is kept.
TEST_F(DecodingTest, RepetitiveTextFallsBackOnCompressionRatio) {
  auto script = [&](const std::vector<Token>& g, std::vector<float>* l) {
    std::fill(l->begin(), l->end(), -30.0f);
    if (g.empty()) {
      (*l)[s.beg] = 0.0f;
    } else if (g.size() <= 20) {
      (*l)[100] = 0.0f;
    } else if (g.size() == 21) {
      (*l)[s.beg + 100] = 0.0f;
    } else {
      (*l)[s.eot] = 0.0f;
    }
  };
  std::vector<std::string> vocab(s.n_vocab, "?");
  vocab[100] = " I'm sorry.";
  auto token_text = [&vocab](Token t) -> const std::string& { return vocab[static_cast<size_t>(t)]; };
  DecodingParams p = Params();
  p.temperature_inc = 0.2f;
  p.best_of = 2;
  p.compression_ratio_thold = 2.4f;
  for (const bool rule_on : {true, false}) {
    FakeBackend b(s, DecodersNeeded(p), 1, script);
    WindowDecoder dec(s, 448, p, rule_on ? std::function<const std::string&(Token)>(token_text) : nullptr);
    WindowResult r;
    ASSERT_TRUE(dec.Run(b, prompt, 0, 3000, &r).ok());
    ASSERT_EQ(r.tokens.size(), 22u);
    if (rule_on) {
      EXPECT_EQ(r.n_fallbacks, 5) << "0.2, 0.4, 0.6, 0.8, 1.0";
      EXPECT_FLOAT_EQ(r.compression_ratio, 219.0f / 22.0f);
    } else {
      EXPECT_EQ(r.n_fallbacks, 0);
      EXPECT_EQ(r.compression_ratio, 0.0f);
    }
    EXPECT_FALSE(r.failed);
  }
  // Silence wins over repetition, as in faster-whisper: no_speech_prob > no_speech_thold with
  // avg_logprob < logprob_thold keeps the attempt.
  auto silent = [&](const std::vector<Token>& g, std::vector<float>* l) {
    script(g, l);
    if (g.empty()) (*l)[s.nosp] = 3.0f;  // no_speech_prob ~0.95
    if (!g.empty() && g.size() <= 20) (*l)[101] = 0.0f;  // two equal choices: avg_logprob ~ -0.6
  };
  p.logprob_thold = -0.5f;
  FakeBackend b(s, DecodersNeeded(p), 1, silent);
  WindowDecoder dec(s, 448, p, token_text);
  WindowResult r;
  ASSERT_TRUE(dec.Run(b, prompt, 0, 3000, &r).ok());
  EXPECT_GT(r.no_speech_prob, 0.6f);
  EXPECT_LT(r.avg_logprob, -0.5f);
  EXPECT_EQ(r.n_fallbacks, 0);
}

// Every temperature fails. Attempt k (temperature 0.2 k, best_of 1) emits <|0.00|>, reps[k] text
// tokens (" I'm sorry." each, or distinct words), <|2.00|> and <|endoftext|>, or (loop[k]) samples
// " I'm sorry." or an empty token at even odds (log-probability -ln 2 each, whichever is drawn) to
// CTranslate2's max_length (224 steps) under OpenAI's rules, where the sequence ends complete, or
// to whisper.cpp's 220-token cap, which fails it. The first cost_steps[k] text tokens cost
// kCost nats each: the token's raw logit is 0 beside kOthers text tokens at -kL. Costs are put on
// attempts at temperature <= 0.4 only, where the others weigh kOthers e^(-kL / T) <= 1e-5 in the
// sampling, so every attempt is deterministic. OpenAI's avg_logprob = cost_steps kCost /
// (reps + 3) (the sum over every token, <|endoftext|>'s included, / (tokens before it + 1)).
class EveryTemperatureFails : public DecodingTest {
 protected:
  static constexpr int kOthers = 40000;
  static constexpr float kL = 8.7442f;  // kOthers e^-kL = e^2 - 1: a cost of 2 nats
  std::vector<int> reps, cost_steps;
  std::vector<bool> distinct, loop;
  int attempt = -1;
  static double Cost() { return std::log1p(kOthers * std::exp(-static_cast<double>(kL))); }
  FakeBackend::Script Script() {
    return [this](const std::vector<Token>& g, std::vector<float>* l) {
      if (g.empty()) {
        (*l)[s.beg] = 0.0f;
        return;
      }
      if (g.size() == 1) ++attempt;  // each attempt's first decode (one sequence per attempt)
      const int p = static_cast<int>(g.size());
      if (loop[attempt]) {
        (*l)[100] = (*l)[101] = 0.0f;
      } else if (p <= reps[attempt]) {
        (*l)[distinct[attempt] ? 200 + p : 100] = 0.0f;
        if (p <= cost_steps[attempt]) {
          for (int i = 0; i < kOthers; ++i) (*l)[1000 + i] = -kL;
        }
      } else if (p == reps[attempt] + 1) {
        (*l)[s.beg + 100] = 0.0f;
      } else {
        (*l)[s.eot] = 0.0f;
      }
    };
  }
  std::vector<Token> Tokens(int k) const {
    std::vector<Token> t = {s.beg};
    for (int p = 1; p <= reps[k]; ++p) t.push_back(distinct[k] ? 200 + p : 100);
    t.push_back(s.beg + 100);
    return t;
  }
  double AvgLogprob(int k) const { return -cost_steps[k] * Cost() / (reps[k] + 3); }
  DecodingParams FallbackParams() {
    DecodingParams p = Params();
    p.temperature_inc = 0.2f;
    p.best_of = 1;
    p.compression_ratio_thold = 2.4f;
    return p;
  }
  std::vector<std::string> vocab = MakeVocab();
  std::vector<std::string> MakeVocab() const {
    std::vector<std::string> v(s.n_vocab, "");
    v[100] = " I'm sorry.";
    for (int i = 1; i < 40; ++i) v[200 + i] = " word" + std::to_string(i);
    return v;
  }
  WindowResult Run(const DecodingParams& p) {
    attempt = -1;
    FakeBackend b(s, DecodersNeeded(p), 1, Script());
    WindowDecoder dec(s, 448, p, [this](Token t) -> const std::string& { return vocab[static_cast<size_t>(t)]; });
    WindowResult r;
    EXPECT_TRUE(dec.Run(b, prompt, 0, 3000, &r).ok());
    EXPECT_EQ(attempt, 5) << "temperatures 0, 0.2, ..., 1.0";
    return r;
  }
};

// faster-whisper 1.2.1 generate_with_fallback: the attempts at 0, 0.2 and 0.4 are repetitive (20 x
// " I'm sorry.", compression ratio 9.95 > 2.4); the highest avg_logprob -- attempt 1's, sampled at
// 0.2 -- is kept and reported at the final temperature 1.0. The attempts at 0.6 to 1.0 run to
// max_length and complete, as in CTranslate2, but their avg_logprob (224 x -ln 2 / 225) is lower
// and their text repetitive (before, the one at 1.0 was kept).
TEST_F(EveryTemperatureFails, KeepsTheHighestAverageLogprob) {
  reps = {20, 20, 20, 0, 0, 0};
  cost_steps = {3, 1, 2, 0, 0, 0};
  distinct.assign(6, false);
  loop = {false, false, false, true, true, true};
  const WindowResult r = Run(FallbackParams());
  EXPECT_EQ(r.tokens, Tokens(1));
  EXPECT_NEAR(r.avg_logprob, AvgLogprob(1), 1e-5);
  EXPECT_NEAR(r.compression_ratio, 219.0f / 22.0f, 1e-4);
  EXPECT_EQ(r.temperature, 1.0f);
  EXPECT_EQ(r.n_fallbacks, 5);
  EXPECT_EQ(r.seek_delta, 200);
  EXPECT_FALSE(r.failed);
}

// An attempt under the compression-ratio threshold beats any above it: attempts 1 and 2 are a few
// distinct words (ratio < 1) with avg_logprob below -1 (their retry cause), attempt 0 is
// repetitive with -0.26; the better of 1 and 2 is kept.
TEST_F(EveryTemperatureFails, PrefersAttemptsUnderTheCompressionThreshold) {
  reps = {20, 5, 4, 0, 0, 0};
  cost_steps = {3, 5, 4, 0, 0, 0};  // avg_logprob -6 / 23, -10 / 8, -8 / 7
  distinct = {false, true, true, false, false, false};
  loop = {false, false, false, true, true, true};
  ASSERT_LT(AvgLogprob(1), -1.1);
  ASSERT_LT(AvgLogprob(2), -1.1);
  const WindowResult r = Run(FallbackParams());
  EXPECT_EQ(r.tokens, Tokens(2));
  EXPECT_NEAR(r.avg_logprob, AvgLogprob(2), 1e-5);
  EXPECT_LT(r.compression_ratio, 2.4f);
  EXPECT_EQ(r.temperature, 1.0f);
}

// whisper.cpp 1.8.5 (whisper_full_with_state) keeps the last attempt: here the one at 1.0, which
// ran into the token cap, though the attempt at 0 completed.
TEST_F(EveryTemperatureFails, WhisperCppKeepsTheLastAttempt) {
  reps = {3, 0, 0, 0, 0, 0};
  cost_steps = {3, 0, 0, 0, 0, 0};
  distinct = {true, false, false, false, false, false};
  loop = {false, true, true, true, true, true};
  DecodingParams p = FallbackParams();
  p.whisper_cpp = true;
  p.compression_ratio_thold = 0.0f;
  p.logprob_thold = -0.5f;  // attempt 0: 3 x -2 / 5 (whisper.cpp's average) falls back
  const WindowResult r = Run(p);
  EXPECT_TRUE(r.failed);
  EXPECT_EQ(r.temperature, 1.0f);
  EXPECT_TRUE(r.tokens.empty());
}

// "la la la ..." forever: whisper.cpp's rules fail the sequence at their 220-token cap; OpenAI's
// end it at CTranslate2's max_length, min(448 / 2, 448 - (prompt - 1)) = 224 steps for a prompt of
// one token, complete (not failed), one segment over the window (no timestamp after <|0.00|>).
TEST_F(DecodingTest, RepetitionLoopEndsAtTheTokenCap) {
  auto script = [&](const std::vector<Token>& g, std::vector<float>* l) {
    if (g.empty()) {
      (*l)[s.beg] = 0.0f;
    } else {
      (*l)[100 + static_cast<int>(g.size() % 2)] = 0.0f;
    }
  };
  for (bool whisper_cpp : {true, false}) {
    FakeBackend b(s, 1, 1, script);
    DecodingParams p = Params();
    p.whisper_cpp = whisper_cpp;
    WindowDecoder dec(s, 448, p);
    WindowResult r;
    ASSERT_TRUE(dec.Run(b, prompt, 0, 3000, &r).ok());
    if (whisper_cpp) {
      EXPECT_TRUE(r.failed);
      EXPECT_LE(b.n_decode_calls, 1 + 220);
    } else {
      EXPECT_FALSE(r.failed);
      EXPECT_EQ(r.tokens.size(), 224u);  // <|0.00|> and 223 text tokens
      EXPECT_EQ(b.n_decode_calls, 1 + 223);  // the last step's token is not decoded
      EXPECT_EQ(r.seek_delta, 3000);
    }
  }
}

// faster-whisper's temperature as a list (DecodingParams::temperatures): the attempts run at its
// values in order, whatever they are -- here 0.4, 0.0 and 0.3, each failing on log-probability
// (three text tokens of 2 nats each: avg_logprob -6 / 6; at T <= 0.4 the rivals weigh
// kOthers e^(-kL / T) <= 1e-5, so sampling is deterministic) -- and a single negative value
// decodes greedily and is reported as given.
TEST_F(DecodingTest, TemperatureListRunsInOrder) {
  constexpr int kOthers = 40000;
  constexpr float kL = 8.7442f;  // kOthers e^-kL = e^2 - 1
  int attempts = 0;
  auto script = [&](const std::vector<Token>& g, std::vector<float>* l) {
    if (g.empty()) {
      (*l)[s.beg] = 0.0f;
      return;
    }
    if (g.size() == 1) ++attempts;
    if (g.size() <= 3) {
      (*l)[100 + static_cast<int>(g.size())] = 0.0f;
      for (int i = 0; i < kOthers; ++i) (*l)[1000 + i] = -kL;
    } else {
      (*l)[g.size() == 4 ? s.beg + 50 : s.eot] = 0.0f;
    }
  };
  const float temps[3] = {0.4f, 0.0f, 0.3f};
  DecodingParams p = Params();
  p.best_of = 1;
  p.temperatures = temps;
  p.n_temperatures = 3;
  p.logprob_thold = -0.5f;
  p.best_of = 3;
  EXPECT_EQ(DecodersNeeded(p), 3);  // a temperature above 0 samples best_of
  p.best_of = 1;
  {
    FakeBackend b(s, DecodersNeeded(p), 1, script);
    WindowDecoder dec(s, 448, p);
    WindowResult r;
    ASSERT_TRUE(dec.Run(b, prompt, 0, 3000, &r).ok());
    EXPECT_EQ(attempts, 3);
    EXPECT_EQ(r.n_fallbacks, 2);
    EXPECT_EQ(r.temperature, 0.3f);  // every attempt failed: the final temperature is reported
    EXPECT_EQ(r.tokens, (std::vector<Token>{s.beg, 101, 102, 103, s.beg + 50}));
  }
  const float negative[1] = {-0.5f};
  p.temperatures = negative;
  p.n_temperatures = 1;
  attempts = 0;
  FakeBackend b(s, DecodersNeeded(p), 1, script);
  WindowDecoder dec(s, 448, p);
  WindowResult r;
  ASSERT_TRUE(dec.Run(b, prompt, 0, 3000, &r).ok());
  EXPECT_EQ(attempts, 1);
  EXPECT_EQ(r.temperature, -0.5f);
  EXPECT_EQ(r.tokens, (std::vector<Token>{s.beg, 101, 102, 103, s.beg + 50}));  // the argmax at every step
}

TEST(TokenEntropy, CountsOnlyTheWindow) {
  const std::vector<Token> same(40, 7);
  EXPECT_EQ(TokenEntropy(same.data(), 40, 32), 0.0);
  std::vector<Token> two;
  for (int i = 0; i < 32; ++i) two.push_back(i % 2);
  EXPECT_NEAR(TokenEntropy(two.data(), 32, 32), std::log(2.0), 1e-12);
}

TEST_F(DecodingTest, RejectsTooFewDecodersAndLongPrompts) {
  DecodingParams p = Params();
  p.beam_size = 3;
  FakeBackend b(s, 2, 1, [](const std::vector<Token>&, std::vector<float>*) {});
  WindowDecoder dec(s, 448, p);
  WindowResult r;
  EXPECT_FALSE(dec.Run(b, prompt, 0, 3000, &r).ok());
  WindowDecoder dec2(s, 4, Params());
  FakeBackend b1(s, 1, 1, [](const std::vector<Token>&, std::vector<float>*) {});
  EXPECT_FALSE(dec2.Run(b1, std::vector<Token>(4, s.sot), 0, 3000, &r).ok());
}

// Beam 2 (hand-derived; scores are summed log-probabilities to the last timestamp / length): after
// <|0.00|>, A (0.7) or B (0.3), then <|1.00|>; after A <|1.00|>, eot (0.6) or <|1.00|> again (0.4),
// going on with X and 6 certain tokens to <|2.00|>; after B <|1.00|>, eot. Step 4's candidates:
// A-eot (0.42), B-eot (0.3), A-<|1.00|> (0.28). At patience 1 both beams complete there: A's ln 0.7 / 3 = -0.119 beats
// B's. At patience 1.5 (3 sequences) A is set aside and its beam goes on as X: ln 0.28 / 12 =
// -0.106 wins. With faster-whisper's length_penalty 0 the score is the sum (A's ln 0.7 > X's ln
// 0.28) and the search stops when A-eot, the best candidate, completes. sum_logprob reports
// CTranslate2's cumulative score: every step's, eot's included.
class BeamPatienceTest : public DecodingTest {
 protected:
  const Token A = 100, B = 101, X = 102;
  WindowResult Decode(float patience, float fw_length_penalty) {
    auto script = [&](const std::vector<Token>& g, std::vector<float>* l) {
      if (g.empty()) {
        (*l)[s.beg] = 0.0f;
      } else if (g.size() == 1) {
        (*l)[A] = std::log(0.7f);
        (*l)[B] = std::log(0.3f);
      } else if (g.size() == 2) {
        (*l)[s.beg + 50] = 0.0f;
      } else if (g.size() == 3 && g[1] == A) {
        (*l)[s.eot] = std::log(0.6f);
        (*l)[s.beg + 50] = std::log(0.4f);  // the pair's second timestamp, then text
      } else if (g[1] == B || g.back() == s.beg + 100) {
        (*l)[s.eot] = 0.0f;
      } else if (g.size() == 4) {
        (*l)[X] = 0.0f;
      } else if (g.size() < 11) {
        (*l)[200 + static_cast<int>(g.size())] = 0.0f;  // 6 certain tokens after X
      } else {
        (*l)[s.beg + 100] = 0.0f;
      }
    };
    DecodingParams p = Params();
    p.beam_size = 2;
    p.patience = patience;
    p.fw_length_penalty = fw_length_penalty;
    FakeBackend b(s, DecodersNeeded(p), 1, script);
    WindowDecoder dec(s, 448, p);
    WindowResult r;
    EXPECT_TRUE(dec.Run(b, prompt, 0, 3000, &r).ok());
    return r;
  }
};

TEST_F(BeamPatienceTest, PatienceCollectsMoreCompletedSequences) {
  WindowResult r = Decode(1.0f, 1.0f);
  EXPECT_EQ(r.tokens, (std::vector<Token>{s.beg, A, s.beg + 50}));
  r = Decode(1.5f, 1.0f);
  EXPECT_EQ(r.tokens,
            (std::vector<Token>{s.beg, A, s.beg + 50, s.beg + 50, X, 205, 206, 207, 208, 209, 210, s.beg + 100}));
  EXPECT_NEAR(r.sum_logprob, std::log(0.28), 1e-5);
  EXPECT_FALSE(r.failed);
}

// Patience beyond what a window can complete (beam_size per step, < n_text_ctx steps) is the same
// search as the largest reachable one: no allocation in proportion to it (1e9 once took 21 GB) and
// no int overflow (1e30).
TEST_F(BeamPatienceTest, HugePatienceIsTheLargestReachable) {
  const WindowResult reachable = Decode(448.0f, 1.0f);
  for (float patience : {1e9f, 1e30f, 3e38f}) {
    const WindowResult r = Decode(patience, 1.0f);
    EXPECT_EQ(r.tokens, reachable.tokens) << patience;
    EXPECT_EQ(r.sum_logprob, reachable.sum_logprob) << patience;
  }
}

TEST_F(BeamPatienceTest, LengthPenaltyZeroScoresTheSumAndStopsEarly) {
  WindowResult r = Decode(1.5f, 0.0f);
  EXPECT_EQ(r.tokens, (std::vector<Token>{s.beg, A, s.beg + 50}));
  EXPECT_NEAR(r.sum_logprob, std::log(0.42), 1e-5);  // eot's ln 0.6 included
  // faster-whisper's length_penalty 2: ln 0.7 / 9 = -0.040 < ln 0.28 / 144 = -0.0088.
  r = Decode(1.5f, 2.0f);
  EXPECT_EQ(r.tokens.size(), 12u);
}

// faster-whisper's max_new_tokens (CTranslate2: min((prompt + n) / 2, n + 1) steps, the last one
// ending the sequence): text forever after <|0.00|>.
TEST_F(DecodingTest, MaxNewTokensEndsTheWindowAtCTranslate2sMaxLength) {
  auto script = [&](const std::vector<Token>& g, std::vector<float>* l) {
    (*l)[g.empty() ? s.beg : 10 + static_cast<Token>(g.size())] = 0.0f;
  };
  DecodingParams p = Params();
  p.max_new_tokens = 6;
  FakeBackend b(s, 1, 1, script);
  WindowDecoder dec(s, 448, p);
  WindowResult r;
  // Prompt [sot]: min(7 / 2, 7) = 3 steps; no timestamp after <|0.00|>: one segment over the whole
  // window (Transcriber then ends it with the window's audio, faster-whisper's segment_duration).
  ASSERT_TRUE(dec.Run(b, prompt, 0, 1100, &r).ok());
  EXPECT_EQ(r.tokens, (std::vector<Token>{s.beg, 11, 12}));
  EXPECT_EQ(r.seek_delta, 3000);
  EXPECT_FALSE(r.failed);
  // A prompt of 5: min(11 / 2, 7) = 5 steps.
  const std::vector<Token> prompt5 = {s.prev, 1, 2, 3, s.sot};
  FakeBackend b5(s, 1, 5, script);
  ASSERT_TRUE(dec.Run(b5, prompt5, 0, 3000, &r, 4).ok());
  EXPECT_EQ(r.tokens, (std::vector<Token>{s.beg, 11, 12, 13, 14}));
  EXPECT_EQ(r.seek_delta, 3000);
  // INT_MAX new tokens: faster-whisper's ValueError too (the sum once overflowed to a negative
  // length and an empty window).
  DecodingParams pmax = Params();
  pmax.max_new_tokens = std::numeric_limits<int>::max();
  WindowDecoder dec_max(s, 448, pmax);
  const absl::Status st_max = dec_max.Run(b, prompt, 0, 3000, &r);
  EXPECT_EQ(st_max.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st_max.message().find("2147483648"), std::string::npos) << st_max.message();
  // faster-whisper's ValueError: 443 + 6 > 448.
  std::vector<Token> long_prompt(443, 5);
  long_prompt.back() = s.sot;
  absl::Status st = dec.Run(b, long_prompt, 0, 3000, &r);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("max_new_tokens"), std::string::npos) << st.message();
}

// With a forced prefix, CTranslate2's max_length counts the prefix's steps (return_prefix): prompt
// [sot, <|0.00|>, 20, 21] with the last 3 a prefix and max_new_tokens 6: total 10, start_step 0,
// max_length min(10 / 2, 10 - 0) = 5, of which 3 force the prefix: 2 sampled tokens.
TEST_F(DecodingTest, MaxNewTokensCountsThePrefixSteps) {
  FakeBackend b(s, 1, 4, [&](const std::vector<Token>& g, std::vector<float>* l) {
    (*l)[10 + static_cast<Token>(g.size())] = 0.0f;
  });
  DecodingParams p = Params();
  p.max_new_tokens = 6;
  WindowDecoder dec(s, 448, p);
  WindowResult r;
  const std::vector<Token> prefixed = {s.sot, s.beg, 20, 21};
  ASSERT_TRUE(dec.Run(b, prefixed, 0, 3000, &r, 0, 3).ok());
  EXPECT_EQ(r.tokens, (std::vector<Token>{s.beg, 20, 21, 10, 11}));
  EXPECT_FALSE(r.failed);
}

// Cut after a timestamp pair: the segments up to the pair stay and the window moves to it
// (faster-whisper drops the unfinished segment and seeks to the last timestamp).
TEST_F(DecodingTest, MaxNewTokensKeepsTheSegmentsBeforeTheCut) {
  const std::vector<Token> script = {s.beg, 10, s.beg + 50, s.beg + 50, 11, 12, 13, 14};
  FakeBackend b(s, 1, 1, [&](const std::vector<Token>& g, std::vector<float>* l) {
    (*l)[script[std::min(g.size(), script.size() - 1)]] = 0.0f;
  });
  DecodingParams p = Params();
  p.max_new_tokens = 9;  // min(10 / 2, 10) = 5 steps
  WindowDecoder dec(s, 448, p);
  WindowResult r;
  ASSERT_TRUE(dec.Run(b, prompt, 0, 3000, &r).ok());
  EXPECT_EQ(r.tokens, (std::vector<Token>{s.beg, 10, s.beg + 50, s.beg + 50}));
  EXPECT_EQ(r.seek_delta, 100);
  EXPECT_FALSE(r.failed);
}

}  // namespace
}  // namespace whisper
