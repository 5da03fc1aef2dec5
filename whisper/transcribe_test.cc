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
  void CopyKv(int, int, int, int) override {}
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
  ASSERT_EQ(segs.size(), 6u);
  // The last window (40 s, 5 s of audio left) decodes its whole script to <|endoftext|>: under
  // OpenAI's rules nothing ends a sequence at the audio's end (CTranslate2's search, which
  // faster-whisper 1.2.1 runs, has no such stop), so " a" ends at 50.00 s and " b" at 60.00 s,
  // past the 45 s of audio: neither whisper.cpp nor faster-whisper clamps a segment's end.
  const int64_t expect[6][2] = {{0, 1000}, {1000, 2000}, {2000, 3000}, {3000, 4000}, {4000, 5000}, {5000, 6000}};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(segs[i].t0, expect[i][0]) << i;
    EXPECT_EQ(segs[i].t1, expect[i][1]) << i;
  }
  EXPECT_EQ(segs[4].text, " a");
  EXPECT_EQ(segs[5].text, " b");
  // Window 2's prompt: prev, window 1's segments' tokens, sot. The second <|10.00|> of the pair
  // that ends window 1 opens a segment that never ends: faster-whisper 1.2.1
  // (_split_segments_by_timestamps) leaves it out of the segments and so of the previous text.
  ASSERT_EQ(model.prompts.size(), 3u);
  EXPECT_EQ(model.prompts[0], (std::vector<Token>{s.sot}));
  const std::vector<Token> w1 = {s.beg, 10, s.beg + 500, s.beg + 500, 11, s.beg + 1000};
  std::vector<Token> p2 = {s.prev};
  p2.insert(p2.end(), w1.begin(), w1.end());
  p2.push_back(s.sot);
  EXPECT_EQ(model.prompts[1], p2);
  EXPECT_EQ(stats.n_windows, 3);
}

// A clip of 15 s (frames [0, 1500)) whose window names " b" 10-20 s. The sequential clip loop
// keeps the end past the clip, as faster-whisper 1.2.1's generate_segments does (it cuts no
// segment at seek_clip_end: its clip_long reference, testdata/fw_clip_hallucination.json, ends a
// segment of clip 100-150 s at 151.04 s). The batched pipeline's chunk (one_window_per_clip)
// ends it at the clip's end (15 s): the next chunk starts there, and issue 38 wants no overlap.
TEST(Transcribe, BatchedChunkSegmentsEndAtTheChunksEnd) {
  const SpecialTokens s = SpecialTokensForVocab(51864);
  std::map<Token, std::string> words = {{10, " a"}, {11, " b"}};
  auto text = [&](Token t) -> const std::string& { return words.at(t); };
  const int clip[2] = {0, 1500};
  for (const bool batched : {false, true}) {
    SCOPED_TRACE(batched ? "batched chunk" : "sequential clip");
    ScriptedModel model(s);
    TranscribeParams p;
    p.decoding.temperature_inc = 0.0f;
    p.clip_frames = clip;
    p.n_clips = 1;
    p.hear_only_clip = batched;
    p.one_window_per_clip = batched;
    std::vector<Segment> segs;
    TranscribeStats stats;
    ASSERT_TRUE(Transcribe(model, s, 448, text, nullptr, 7500, 4500, p, &segs, &stats).ok());
    EXPECT_EQ(model.seeks, (std::vector<int>{0}));
    ASSERT_EQ(segs.size(), 2u);
    EXPECT_EQ(segs[0].t0, 0);
    EXPECT_EQ(segs[0].t1, 1000);
    EXPECT_EQ(segs[1].text, " b");
    EXPECT_EQ(segs[1].t0, 1000);
    EXPECT_EQ(segs[1].t1, batched ? 1500 : 2000);
  }
}

// A multilingual vocabulary: the prompt carries the language and task tokens, and language
// detection picks the language token with the largest logit after [sot].
class MultilingualModel : public ModelBackend {
 public:
  explicit MultilingualModel(const SpecialTokens& s) : s_(s), logits_(s.n_vocab, 0.0f) {}
  absl::Status Encode(const float*, int, int, int, int) override { return absl::OkStatus(); }
  absl::Status Decode(int, const Token* tokens, int n, int n_past) override {
    // A prompt pass may come in two calls (OpenAI's no-speech position at sot): join them.
    if (n_past == 0) {
      prompts.emplace_back(tokens, tokens + n);
    } else if (n > 1 && static_cast<size_t>(n_past) == prompts.back().size()) {
      prompts.back().insert(prompts.back().end(), tokens, tokens + n);
    }
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
  void CopyKv(int, int, int, int) override {}
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
  // faster-whisper's multilingual=True: the window's detected language (de, the largest language
  // logit after [sot]) replaces the one asked for (ja) in its prompt.
  p.language_id = 7;
  p.multilingual = true;
  model.prompts.clear();
  ASSERT_TRUE(Transcribe(model, s, 448, text, nullptr, 3300, 300, p, &segs, &stats).ok());
  ASSERT_EQ(model.prompts.size(), 2u);  // detection [sot], then the window's prompt
  EXPECT_EQ(model.prompts[0], (std::vector<Token>{s.sot}));
  EXPECT_EQ(model.prompts[1], (std::vector<Token>{s.sot, s.sot + 1 + 2, s.translate}));
  p.multilingual = false;
  model.prompts.clear();
  ASSERT_TRUE(Transcribe(model, s, 448, text, nullptr, 3300, 300, p, &segs, &stats).ok());
  EXPECT_EQ(model.prompts.back(), (std::vector<Token>{s.sot, s.sot + 1 + 7, s.translate}));
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
  p.decoding.temperature_inc = 0.0f;  // one decoder
  // OpenAI's rules decode any audio left (faster-whisper 1.2.1 generate_segments: while seek <
  // the clip's end), 0.5 s here as its final 0.4 s window of long_speech.flac.
  ASSERT_TRUE(Transcribe(model, s, 448, text, nullptr, 3050, 50, p, &segs, &stats).ok());
  EXPECT_EQ(model.seeks, (std::vector<int>{0}));
  // whisper.cpp's: at most 100 ms (its delta_min, 10 frames) is too short, no error.
  p.decoding.whisper_cpp = true;
  model.seeks.clear();
  ASSERT_TRUE(Transcribe(model, s, 448, text, nullptr, 3010, 10, p, &segs, &stats).ok());
  EXPECT_TRUE(segs.empty());
  EXPECT_TRUE(model.seeks.empty());
  p.offset_ms = 100000;
  EXPECT_FALSE(Transcribe(model, s, 448, text, nullptr, 3050, 50, p, &segs, &stats).ok());
}

// The prompt history under each rule set (whisper.cpp 1.8.5 whisper_full_with_state, OpenAI
// transcribe.py). Windows of the scripted model are 20 s apart; every one decodes
// w = [beg, a, beg+500, beg+500, b, beg+1000, beg+1000] unless the audio ends first.
struct HistoryRun {
  std::vector<std::vector<Token>> prompts;  // every prompt pass, in order
  std::vector<int> seeks;
};

class TranscribeHistory : public ::testing::Test {
 protected:
  TranscribeHistory() : model_(s_), t_(s_, 448, [this](Token tok) -> const std::string& { return words_.at(tok); }) {
    p_.decoding.whisper_cpp = true;
    p_.decoding.temperature_inc = 0.0f;
  }

  // One Run on n_frames_audio frames (the mel has 3000 more, as whisper.cpp's padding).
  HistoryRun Run(int n_frames_audio) {
    model_.prompts.clear();
    model_.seeks.clear();
    SegmentList segs;
    TranscribeStats stats;
    const absl::Status st = t_.Run(model_, nullptr, n_frames_audio + 3000, n_frames_audio, p_, &segs, &stats);
    EXPECT_TRUE(st.ok()) << st;
    return {model_.prompts, model_.seeks};
  }

  // [prev, past..., sot]
  std::vector<Token> Prompt(const std::vector<std::vector<Token>>& past) const {
    std::vector<Token> p = {s_.prev};
    for (const auto& w : past) p.insert(p.end(), w.begin(), w.end());
    p.push_back(s_.sot);
    return p;
  }

  const SpecialTokens s_ = SpecialTokensForVocab(51864);
  // The scripted window: [beg, a, beg+500, beg+500, b, beg+1000, beg+1000].
  const std::vector<Token> w_ = {s_.beg, 10, s_.beg + 500, s_.beg + 500, 11, s_.beg + 1000, s_.beg + 1000};
  const std::vector<Token> sot_ = {s_.sot};
  std::map<Token, std::string> words_ = {{10, " a"}, {11, " b"}};
  ScriptedModel model_;
  Transcriber t_;
  TranscribeParams p_;
};

TEST_F(TranscribeHistory, WhisperCppConditionsWithinACallWhateverConditionOnPreviousText) {
  p_.condition_on_previous_text = false;  // OpenAI's switch: not whisper.cpp's
  const HistoryRun r = Run(6500);
  ASSERT_EQ(r.seeks, (std::vector<int>{0, 2000, 4000, 6000}));
  ASSERT_EQ(r.prompts.size(), 4u);
  EXPECT_EQ(r.prompts[0], sot_);
  EXPECT_EQ(r.prompts[1], Prompt({w_}));
  EXPECT_EQ(r.prompts[2], Prompt({w_, w_}));
  // 500 frames left (5 s): whisper.cpp drops the past (seek + 500 >= seek_end).
  EXPECT_EQ(r.prompts[3], sot_);

  // OpenAI's rules honour condition_on_previous_text = false: no past at all.
  p_.decoding.whisper_cpp = false;
  for (const auto& prompt : Run(6500).prompts) EXPECT_EQ(prompt, sot_);
}

TEST_F(TranscribeHistory, AttemptsAtHalfTemperatureOrAboveGetNoPastUnderWhisperCppRules) {
  p_.decoding.temperature_inc = 0.2f;  // attempts at 0, 0.2, 0.4, 0.6, 0.8, 1.0
  p_.decoding.logprob_thold = 1.0f;    // every attempt's avg logprob (0) is below: all fall back
  p_.decoding.best_of = 1;             // the scripted model has one decoder
  const HistoryRun r = Run(6500);
  ASSERT_EQ(r.seeks, (std::vector<int>{0, 2000, 4000, 6000}));
  // Window 1: one prompt pass (no past to drop). Window 2: [prev, w, sot] for 0 .. 0.4, then
  // [sot] again from 0.6 on. The accepted attempt (1.0) had no past, so window 3's past is
  // window 2's text alone (whisper.cpp's prompt_past1 = the prompt's past + the new tokens).
  const std::vector<std::vector<Token>> expect = {sot_, Prompt({w_}), sot_, Prompt({w_}), sot_, sot_};
  EXPECT_EQ(r.prompts, expect);  // the last: 5 s left, no past

  // OpenAI's rules: one prompt pass per window, and a window accepted at 1.0 leaves no past.
  p_.decoding.whisper_cpp = false;
  const HistoryRun o = Run(6500);
  ASSERT_EQ(o.prompts.size(), o.seeks.size());
  for (const auto& prompt : o.prompts) EXPECT_EQ(prompt, sot_);
}

TEST_F(TranscribeHistory, KeepPastStartsFromThePreviousRunsText) {
  // Windows at 0 and 2000; the second has 500 frames left, so whisper.cpp drops the past before
  // it, and it ends at beg + 500 (5 s, the audio's end): the run ends with that window's text.
  Run(2500);
  const std::vector<Token> last = {s_.beg, 10, s_.beg + 500};
  p_.keep_past = true;
  const Token initial[2] = {20, 21};
  p_.initial_prompt = initial;
  p_.n_initial_prompt = 2;
  const HistoryRun r = Run(2500);
  // whisper.cpp puts the new initial prompt in front of the kept past (its std::rotate).
  ASSERT_FALSE(r.prompts.empty());
  EXPECT_EQ(r.prompts[0], Prompt({{20, 21}, last}));
  p_.keep_past = false;
  const HistoryRun f = Run(2500);
  ASSERT_FALSE(f.prompts.empty());
  EXPECT_EQ(f.prompts[0], Prompt({{20, 21}}));
}

}  // namespace
}  // namespace whisper
