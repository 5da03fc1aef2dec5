// The real tiny.en model (models/ggml-tiny.en.bin, made by tools/get_model.sh): loading, and
// plain greedy decoding of jfk.wav compared with faster-whisper's tokens for the same weights
// (testdata/jfk_faster_whisper_tokens.json, written by tools/reference/faster_whisper_tiny_en.py).
// Fails, naming tools/setup.sh, when the model file is absent.
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testdata/paths.h"
#include "apps/common/audio.h"
#include "whisper/logit_filter.h"
#include "whisper/mel.h"
#include "whisper/model.h"
#include "whisper/state.h"
#include "whisper/tokenizer.h"

namespace whisper {
namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

class TinyEnTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string path = testdata::ModelPath("ggml-tiny.en.bin");
    if (!Exists(path)) return;
    absl::StatusOr<std::unique_ptr<WhisperModel>> m = WhisperModel::Load(path);
    ASSERT_TRUE(m.ok()) << m.status();
    model_ = m->release();
  }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
  }
  void SetUp() override {
    if (model_ == nullptr) {
      GTEST_FAIL() << testdata::MissingModelHint(testdata::ModelPath("ggml-tiny.en.bin"));
    }
  }
  static WhisperModel* model_;
};
WhisperModel* TinyEnTest::model_ = nullptr;

TEST_F(TinyEnTest, Loads) {
  const WhisperHparams& h = model_->hparams();
  EXPECT_EQ(h.n_vocab, 51864);
  EXPECT_EQ(h.n_audio_ctx, 1500);
  EXPECT_EQ(h.n_audio_state, 384);
  EXPECT_EQ(h.n_text_layer, 4);
  EXPECT_EQ(h.ftype, 1);
  EXPECT_EQ(model_->n_tensors(), 167);
  EXPECT_EQ(model_->weights_file_bytes(), 77110272u);  // whisper.cpp: "model size = 77.11 MB"
  EXPECT_GE(model_->weights_buffer_size(), model_->weights_file_bytes());
  EXPECT_STREQ(model_->type_name(), "tiny");
  EXPECT_EQ(model_->vocab().token(50256), "<|endoftext|>");
  EXPECT_EQ(model_->mel_filters().size(), 80u * 201u);
}

// The reference run's token ids of window 0 (faster-whisper strips eot).
std::vector<int32_t> ReferenceTokens() {
  const std::string path = testdata::RepoRoot() + "/testdata/jfk_faster_whisper_tokens.json";
  std::ifstream f(path);
  const std::string text((std::istreambuf_iterator<char>(f)), {});
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  std::vector<int32_t> tokens;
  if (j.is_discarded() || !j.contains("windows")) {
    ADD_FAILURE() << "cannot parse " << path;
    return tokens;
  }
  EXPECT_EQ(j["windows"][0]["prompt"], nlohmann::json::array({50257}));
  for (const auto& t : j["windows"][0]["tokens"]) tokens.push_back(t.get<int32_t>());
  return tokens;
}

// A state with jfk.wav's first window encoded. n_frames_kept > 0 keeps only that many mel frames
// (the window's later frames become 0.0, see FilteredGreedyJfkMatchesFasterWhisper).
std::unique_ptr<InferenceState> EncodeJfk(const WhisperModel& model, int n_threads,
                                        int n_frames_kept = 0) {
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMono(testdata::SharedData("jfk.wav"));
  EXPECT_TRUE(audio.ok()) << audio.status();
  if (!audio.ok()) return nullptr;
  absl::StatusOr<std::unique_ptr<MelSpectrogram>> mel_maker = MelSpectrogram::Create(
      model.mel_filters().data(), model.hparams().n_mels, model.n_fft(), 2, audio->size());
  EXPECT_TRUE(mel_maker.ok()) << mel_maker.status();
  if (!mel_maker.ok()) return nullptr;
  absl::StatusOr<MelView> mel = (*mel_maker)->Compute(audio->data(), audio->size());
  EXPECT_TRUE(mel.ok()) << mel.status();
  if (!mel.ok()) return nullptr;
  EXPECT_EQ(mel->n_len, 4100);
  absl::StatusOr<std::unique_ptr<InferenceState>> st = InferenceState::Create(model, 1, n_threads);
  EXPECT_TRUE(st.ok()) << st.status();
  if (!st.ok()) return nullptr;
  absl::Status s;
  if (n_frames_kept > 0) {
    std::vector<float> kept(static_cast<size_t>(mel->n_mels) * n_frames_kept);
    for (int m = 0; m < mel->n_mels; ++m) {
      std::copy(mel->data + m * mel->n_len, mel->data + m * mel->n_len + n_frames_kept,
                kept.begin() + static_cast<size_t>(m) * n_frames_kept);
    }
    s = (*st)->Encode(kept.data(), n_frames_kept, 0);
  } else {
    s = (*st)->Encode(mel->data, static_cast<int>(mel->n_len), 0);
  }
  EXPECT_TRUE(s.ok()) << s;
  return s.ok() ? std::move(*st) : nullptr;
}

std::string Text(const WhisperModel& model, const std::vector<int32_t>& tokens) {
  std::string text;
  for (int32_t t : tokens) {
    text += t < model.special().eot ? model.vocab().token(t) : "[" + std::to_string(t) + "]";
  }
  return text;
}

// Decodes from the prompt [sot] by argmax (lowest id on ties) until eot or 224 tokens. Without
// `filter`, the only rule is that the non-timestamp special tokens after eot (sot ... not) are
// never chosen. With it, the logits go through whisper/logit_filter.h first (OpenAI's
// SuppressBlank, SuppressTokens and ApplyTimestampRules, as faster-whisper applies them).
std::vector<int32_t> Greedy(const WhisperModel& model, InferenceState& state,
                            const LogitFilterParams* filter) {
  const SpecialTokens& sp = model.special();
  const int n_vocab = model.hparams().n_vocab;
  std::vector<int32_t> out;
  std::vector<float> logits(n_vocab), logprobs(n_vocab);
  int32_t token = sp.sot;
  bool has_ts = false;
  int seek_delta = 0;
  for (int n_past = 0; n_past < 224; ++n_past) {
    absl::Status s = state.Decode(0, &token, 1, n_past);
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) break;
    std::copy(state.logits(0), state.logits(0) + n_vocab, logits.begin());
    if (filter != nullptr) {
      ApplyLogitFilters(sp, *filter, out.data(), static_cast<int>(out.size()), has_ts, seek_delta,
                        logits.data(), logprobs.data());
    } else {
      std::fill(logits.begin() + sp.eot + 1, logits.begin() + sp.beg, -INFINITY);
    }
    token = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    if (token == sp.eot) break;
    if (token > sp.beg) {
      has_ts = true;
      seek_delta = 2 * (token - sp.beg);
    }
    out.push_back(token);
  }
  printf("greedy (%s): %s\n", filter != nullptr ? "logit filters" : "no filters",
         Text(model, out).c_str());
  printf("timings: encode %.1f ms, %d decode steps %.1f ms\n", state.timings().encode_ms,
         state.timings().n_decode, state.timings().decode_ms);
  return out;
}

size_t Agreement(const std::vector<int32_t>& got, const std::vector<int32_t>& want) {
  size_t n = 0;
  while (n < got.size() && n < want.size() && got[n] == want[n]) ++n;
  printf("agreement: first %zu of %zu reference tokens (we produced %zu)\n", n, want.size(),
         got.size());
  return n;
}

// Plain argmax agrees with faster-whisper up to the first place where its timestamp rule
// ("take a timestamp when their total probability beats every text token") decides: after
// "... for you" the plain argmax is "," (11), the rule picks <|7.74|>.
TEST_F(TinyEnTest, PlainGreedyJfkAgreesUntilTheTimestampRule) {
  const std::vector<int32_t> want = ReferenceTokens();
  ASSERT_EQ(want.size(), 26u);
  std::unique_ptr<InferenceState> state = EncodeJfk(*model_, 2);
  ASSERT_NE(state, nullptr);
  const std::vector<int32_t> got = Greedy(*model_, *state, nullptr);
  EXPECT_EQ(Agreement(got, want), 15u);
  ASSERT_GE(got.size(), 16u);
  EXPECT_EQ(got[15], 11);  // ","
}

// OpenAI's non-speech list on tiny.en's vocabulary is the text part of config.json's
// suppress_ids (CTranslate2's conversion of OpenAI's list; ids >= 50257 are special tokens),
// including 17992 and 20724 (E2 99 and " " E2 99, the music signs' first token), which a
// vocabulary with U+FFFD-replaced partial characters could not hold. whisper.cpp's list lacks them.
TEST_F(TinyEnTest, OpenAiNonSpeechTokensAreConfigSuppressIds) {
  const std::vector<Token> config_text_ids = {
      1,     2,     7,     8,     9,     10,    14,    25,    26,    27,    28,    29,    31,    58,
      59,    60,    61,    62,    63,    90,    91,    92,    93,    357,   366,   438,   532,   685,
      705,   796,   930,   1058,  1220,  1267,  1279,  1303,  1343,  1377,  1391,  1635,  1782,  1875,
      2162,  2361,  2488,  3467,  4008,  4211,  4600,  4808,  5299,  5855,  6329,  7203,  9609,  9959,
      10563, 10786, 11420, 11709, 11907, 13163, 13697, 13700, 14808, 15306, 16410, 16791, 17992, 19203,
      19510, 20724, 22305, 22935, 27007, 30109, 30420, 33409, 34949, 40283, 40493, 40549, 47282, 49146};
  const Tokenizer tokenizer(model_->vocab());
  std::vector<Token> openai = tokenizer.OpenAiNonSpeechTokens();
  std::sort(openai.begin(), openai.end());
  EXPECT_EQ(openai, config_text_ids);
  std::vector<Token> whisper_cpp = tokenizer.NonSpeechTokens();
  std::sort(whisper_cpp.begin(), whisper_cpp.end());
  std::vector<Token> missing;
  std::set_difference(config_text_ids.begin(), config_text_ids.end(), whisper_cpp.begin(), whisper_cpp.end(),
                      std::back_inserter(missing));
  EXPECT_EQ(missing, (std::vector<Token>{17992, 20724}));
}

LogitFilterParams FasterWhisperFilters(const WhisperModel& model, std::vector<Token>* non_speech) {
  std::vector<std::string> vocab;
  for (int i = 0; i < model.vocab().n_stored(); ++i) vocab.push_back(model.vocab().token(i));
  *non_speech = Tokenizer(vocab).OpenAiNonSpeechTokens();
  LogitFilterParams filter;
  filter.suppress = non_speech;  // faster-whisper's suppress_tokens=[-1]
  return filter;
}

// With faster-whisper's logit rules and its front end, every token agrees. faster-whisper
// (1.2.1, transcribe.py generate_segments) pads the audio with only 160 samples before its STFT
// (1101 frames for jfk.wav), decodes content_frames = 1101 - 1 = 1100 of them, and pad_or_trim
// fills the rest of the 3000-frame window with 0.0. whisper.cpp and OpenAI's reference pad 30 s
// of zero samples first, so the window's tail holds the log-mel of silence (clamped at max - 8,
// then normalized), not 0.0.
TEST_F(TinyEnTest, FilteredGreedyJfkMatchesFasterWhisper) {
  const std::vector<int32_t> want = ReferenceTokens();
  ASSERT_FALSE(want.empty());
  std::unique_ptr<InferenceState> state = EncodeJfk(*model_, 2, /*n_frames_kept=*/1100);
  ASSERT_NE(state, nullptr);
  std::vector<Token> non_speech;
  const LogitFilterParams filter = FasterWhisperFilters(*model_, &non_speech);
  const std::vector<int32_t> got = Greedy(*model_, *state, &filter);
  EXPECT_EQ(Agreement(got, want), want.size());
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace whisper
