#include "whisper/transcribe.h"

#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "gtest/gtest.h"

namespace whisper {
namespace {

// Every window says " a" from 0 to 10 s and " b" from 10 to 20 s, then ends with a timestamp pair.
class ScriptedModel : public ModelBackend {
 public:
  explicit ScriptedModel(const SpecialTokens& s) : s_(s), kv_(1), logits_(s.n_vocab) {}
  absl::Status Encode(const float*, int, int seek, int, int) override {
    seeks.push_back(seek);
    return absl::OkStatus();
  }
  absl::Status Decode(int, const Token* tokens, int n, int n_past) override {
    kv_.resize(n_past);
    kv_.insert(kv_.end(), tokens, tokens + n);
    if (n_past == 0) {
      prompts.emplace_back(tokens, tokens + n);
      n_prompt_ = n;
    }
    const std::vector<Token> script = {s_.beg, 10, s_.beg + 500, s_.beg + 500, 11, s_.beg + 1000, s_.beg + 1000,
                                       s_.eot};
    const size_t g = kv_.size() - n_prompt_;
    std::fill(logits_.begin(), logits_.end(), -std::numeric_limits<float>::infinity());
    logits_[script[std::min(g, script.size() - 1)]] = 0.0f;
    return absl::OkStatus();
  }
  const float* logits(int) const override { return logits_.data(); }
  void CopyKv(int, int, int) override {}
  int n_decoders() const override { return 1; }

  std::vector<int> seeks;
  std::vector<std::vector<Token>> prompts;

 private:
  SpecialTokens s_;
  std::vector<Token> kv_;
  std::vector<float> logits_;
  size_t n_prompt_ = 0;
};

TEST(Transcribe, WindowsSeekToTheLastTimestampPairAndCarryThePrompt) {
  const SpecialTokens s = SpecialTokensForVocab(51864);
  ScriptedModel model(s);
  std::map<Token, std::string> words = {{10, " a"}, {11, " b"}};
  auto text = [&](Token t) -> const std::string& { return words.at(t); };
  TranscribeParams p;
  p.decoding.temperature_inc = 0.0f;
  std::vector<Segment> segs;
  TranscribeStats stats;
  ASSERT_TRUE(Transcribe(model, s, 448, text, nullptr, 7500, 4500, p, &segs, &stats).ok());
  EXPECT_EQ(model.seeks, (std::vector<int>{0, 2000, 4000}));
  ASSERT_EQ(segs.size(), 5u);
  const int64_t expect[5][2] = {{0, 1000}, {1000, 2000}, {2000, 3000}, {3000, 4000}, {4000, 4500}};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(segs[i].t0, expect[i][0]) << i;
    EXPECT_EQ(segs[i].t1, expect[i][1]) << i;
  }
  EXPECT_EQ(segs[4].text, " a");
  // Window 2's prompt: prev, window 1's tokens, sot.
  ASSERT_EQ(model.prompts.size(), 3u);
  EXPECT_EQ(model.prompts[0], (std::vector<Token>{s.sot}));
  const std::vector<Token> w1 = {s.beg, 10, s.beg + 500, s.beg + 500, 11, s.beg + 1000, s.beg + 1000};
  std::vector<Token> p2 = {s.prev};
  p2.insert(p2.end(), w1.begin(), w1.end());
  p2.push_back(s.sot);
  EXPECT_EQ(model.prompts[1], p2);
  EXPECT_EQ(stats.n_windows, 3);
}

// A multilingual vocabulary: the prompt carries the language and task tokens, and language
// detection picks the language token with the largest logit after [sot].
class MultilingualModel : public ModelBackend {
 public:
  explicit MultilingualModel(const SpecialTokens& s) : s_(s), logits_(s.n_vocab, 0.0f) {}
  absl::Status Encode(const float*, int, int, int, int) override { return absl::OkStatus(); }
  absl::Status Decode(int, const Token* tokens, int n, int n_past) override {
    if (n_past == 0) prompts.emplace_back(tokens, tokens + n);
    std::fill(logits_.begin(), logits_.end(), -std::numeric_limits<float>::infinity());
    logits_[s_.Language(2)] = 5.0f;   // de
    logits_[s_.Language(7)] = 4.0f;   // ja
    logits_[s_.Language(0)] = 3.0f;   // en
    logits_[s_.eot] = 0.0f;
    if (n_past > 0 || n > 3) logits_[s_.eot] = 9.0f;
    logits_[s_.beg] = 1.0f;
    return absl::OkStatus();
  }
  const float* logits(int) const override { return logits_.data(); }
  void CopyKv(int, int, int) override {}
  int n_decoders() const override { return 1; }
  std::vector<std::vector<Token>> prompts;

 private:
  SpecialTokens s_;
  std::vector<float> logits_;
};

TEST(Transcribe, MultilingualPromptAndLanguageDetection) {
  const SpecialTokens s = SpecialTokensForVocab(51865);
  MultilingualModel model(s);
  absl::StatusOr<int> lang = DetectLanguage(model, s, nullptr, 3100, 300);
  ASSERT_TRUE(lang.ok()) << lang.status();
  EXPECT_EQ(*lang, 2);
  EXPECT_EQ(model.prompts.back(), (std::vector<Token>{s.sot}));
  // The per-language probabilities: a softmax over the language tokens' logits (de 5, ja 4, en 3,
  // the other 96 of the 99 languages -inf): de = 1 / (1 + e^-1 + e^-2), ja = de / e, en = de / e^2.
  float probs[kMaxLanguages];
  lang = DetectLanguage(model, s, nullptr, 3100, 300, 0, probs);
  ASSERT_TRUE(lang.ok()) << lang.status();
  const double de = 1.0 / (1.0 + std::exp(-1.0) + std::exp(-2.0));
  EXPECT_NEAR(probs[2], de, 1e-6);
  EXPECT_NEAR(probs[7], de * std::exp(-1.0), 1e-6);
  EXPECT_NEAR(probs[0], de * std::exp(-2.0), 1e-6);
  EXPECT_EQ(probs[1], 0.0f);
  EXPECT_EQ(probs[99], 0.0f);  // past the model's 99 languages
  auto text = [](Token) -> const std::string& { static const std::string e; return e; };
  TranscribeParams p;
  p.decoding.temperature_inc = 0.0f;
  p.language_id = 2;
  p.translate = true;
  std::vector<Segment> segs;
  TranscribeStats stats;
  ASSERT_TRUE(Transcribe(model, s, 448, text, nullptr, 3300, 300, p, &segs, &stats).ok());
  EXPECT_EQ(model.prompts.back(), (std::vector<Token>{s.sot, s.sot + 1 + 2, s.translate}));
  // English-only vocabularies cannot detect a language.
  EXPECT_EQ(DetectLanguage(model, SpecialTokensForVocab(51864), nullptr, 3100, 300).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(Transcribe, ShortAudioAndBadOffsets) {
  const SpecialTokens s = SpecialTokensForVocab(51864);
  ScriptedModel model(s);
  auto text = [](Token) -> const std::string& { static const std::string e; return e; };
  TranscribeParams p;
  std::vector<Segment> segs;
  TranscribeStats stats;
  // Under 1 s of audio: nothing to decode (whisper.cpp's rule), no error.
  ASSERT_TRUE(Transcribe(model, s, 448, text, nullptr, 3050, 50, p, &segs, &stats).ok());
  EXPECT_TRUE(segs.empty());
  p.offset_ms = 100000;
  EXPECT_FALSE(Transcribe(model, s, 448, text, nullptr, 3050, 50, p, &segs, &stats).ok());
}

}  // namespace
}  // namespace whisper
