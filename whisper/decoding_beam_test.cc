// Beam search under OpenAI's rules against CTranslate2 4.x BeamSearch::search (decoding.cc), the
// search faster-whisper 1.2.1 runs: finished beams are refilled, and every finished sequence is
// ranked by CTranslate2's score.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "whisper/decoding.h"
#include "whisper/fake_decoder_backend.h"

namespace whisper {
namespace {

// Beam 2. Step 1: A 0.6, B 0.4. Step 2: A <|endoftext|> 0.33, A C 0.27, B D 0.24, B E 0.16.
// CTranslate2 registers A <|endoftext|> (first of the 2 best) and refills its beam with B D, the
// next candidate that does not end. Step 3: A C J 0.243 goes on, B D <|endoftext|> 0.24 finishes:
// 2 finished, the search ends. Ranked by cum / length without eot: A: ln 0.33 / 2 = -0.554,
// B D: ln 0.24 / 3 = -0.476. A search that retires finished beams instead never decodes B D (ours
// did, and ended with <|0.00|> A).
TEST(BeamSearchOpenAi, FinishedBeamsAreRefilledAsCTranslate2Does) {
  const SpecialTokens s = SpecialTokensForVocab(51864);
  const Token A = 100, B = 101, C = 102, D = 103, E = 104, J = 105;
  auto script = [&](const std::vector<Token>& g, std::vector<float>* l) {
    if (g.empty()) {
      (*l)[s.beg] = 0.0f;
    } else if (g.size() == 1) {
      (*l)[A] = std::log(0.6f);
      (*l)[B] = std::log(0.4f);
    } else if (g.size() == 2 && g[1] == A) {
      (*l)[s.eot] = std::log(0.55f);
      (*l)[C] = std::log(0.45f);
    } else if (g.size() == 2) {
      (*l)[D] = std::log(0.6f);
      (*l)[E] = std::log(0.4f);
    } else if (g.size() == 3 && g[2] == C) {
      (*l)[J] = std::log(0.9f);
      (*l)[s.eot] = std::log(0.1f);
    } else {
      (*l)[s.eot] = 0.0f;
    }
  };
  DecodingParams p;
  p.temperature_inc = 0.0f;
  p.beam_size = 2;
  FakeBackend b(s, DecodersNeeded(p), 1, script);
  WindowDecoder dec(s, 448, p);
  WindowResult r;
  ASSERT_TRUE(dec.Run(b, {s.sot}, 0, 3000, &r).ok());
  // No timestamp after <|0.00|>: one segment over the window (faster-whisper's split).
  EXPECT_EQ(r.tokens, (std::vector<Token>{s.beg, B, D}));
  EXPECT_NEAR(r.sum_logprob, std::log(0.24), 1e-5);
  EXPECT_NEAR(r.avg_logprob, std::log(0.24) / 4, 1e-5);  // faster-whisper: cum / (3 tokens + 1)
  EXPECT_FALSE(r.failed);
}

// At max_length every one of the beam_size best candidates is registered, ended or not, and only
// those (CTranslate2 is_last_step): with max_new_tokens 3 and a prompt of 1, the 2 steps'
// sequences are <|0.00|> A and <|0.00|> B; A's is the more probable.
TEST(BeamSearchOpenAi, TheLastStepRegistersTheBestCandidates) {
  const SpecialTokens s = SpecialTokensForVocab(51864);
  auto script = [&](const std::vector<Token>& g, std::vector<float>* l) {
    if (g.empty()) {
      (*l)[s.beg] = 0.0f;
    } else {
      (*l)[100] = std::log(0.5f);
      (*l)[101] = std::log(0.3f);
      (*l)[s.eot] = std::log(0.2f);
    }
  };
  DecodingParams p;
  p.temperature_inc = 0.0f;
  p.beam_size = 2;
  p.max_new_tokens = 3;  // CTranslate2: min((1 + 3) / 2, 3 + 1) = 2 steps
  FakeBackend b(s, DecodersNeeded(p), 1, script);
  WindowDecoder dec(s, 448, p);
  WindowResult r;
  ASSERT_TRUE(dec.Run(b, {s.sot}, 0, 3000, &r).ok());
  EXPECT_EQ(r.tokens, (std::vector<Token>{s.beg, 100}));
  EXPECT_NEAR(r.sum_logprob, std::log(0.5), 1e-5);
}

}  // namespace
}  // namespace whisper
