// The real tiny.en model (models/ggml-tiny.en.bin, made by tools/get_model.sh): loading, and
// plain greedy decoding of jfk.wav compared with faster-whisper's tokens for the same weights
// (testdata/jfk_faster_whisper_tokens.json, written by tools/check_faster_whisper.py).
// Skipped when the model file is absent.
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
#include "whisper/audio.h"
#include "whisper/mel.h"
#include "whisper/model.h"
#include "whisper/state.h"

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
      GTEST_SKIP() << testdata::MissingModelHint(testdata::ModelPath("ggml-tiny.en.bin"));
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

// Greedy decoding with no logit filters except that the non-timestamp special tokens after eot
// (sot ... not) are never chosen: prompt [sot], argmax (lowest id on ties) until eot or 224
// tokens.
std::vector<int32_t> GreedyJfk(const WhisperModel& model, int n_threads) {
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMono(testdata::SharedData("jfk.wav"));
  EXPECT_TRUE(audio.ok()) << audio.status();
  if (!audio.ok()) return {};
  absl::StatusOr<std::unique_ptr<MelSpectrogram>> mel_maker = MelSpectrogram::Create(
      model.mel_filters().data(), model.hparams().n_mels, model.n_fft(), 2, audio->size());
  EXPECT_TRUE(mel_maker.ok()) << mel_maker.status();
  absl::StatusOr<MelView> mel = (*mel_maker)->Compute(audio->data(), audio->size());
  EXPECT_TRUE(mel.ok()) << mel.status();
  EXPECT_EQ(mel->n_len, 4100);

  absl::StatusOr<std::unique_ptr<WhisperState>> st = WhisperState::Create(model, 1, n_threads);
  EXPECT_TRUE(st.ok()) << st.status();
  if (!st.ok()) return {};
  WhisperState& state = **st;
  EXPECT_TRUE(state.Encode(mel->data, static_cast<int>(mel->n_len), 0).ok());

  const SpecialTokens& sp = model.special();
  const int n_vocab = model.hparams().n_vocab;
  std::vector<int32_t> out;
  int32_t token = sp.sot;
  std::vector<float> logits(n_vocab);
  for (int n_past = 0; n_past < 224; ++n_past) {
    absl::Status s = state.Decode(0, &token, 1, n_past);
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) break;
    std::copy(state.logits(0), state.logits(0) + n_vocab, logits.begin());
    std::fill(logits.begin() + sp.eot + 1, logits.begin() + sp.beg, -INFINITY);
    token = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    if (token == sp.eot) break;
    out.push_back(token);
  }
  std::string text;
  for (int32_t t : out) text += t < sp.eot ? model.vocab().token(t) : "[" + std::to_string(t) + "]";
  printf("greedy (%d threads): %s\n", n_threads, text.c_str());
  printf("timings: encode %.1f ms, %d decode steps %.1f ms\n", state.timings().encode_ms,
         state.timings().n_decode, state.timings().decode_ms);
  return out;
}

TEST_F(TinyEnTest, GreedyJfkMatchesFasterWhisper) {
  const std::vector<int32_t> want = ReferenceTokens();
  ASSERT_FALSE(want.empty());
  const std::vector<int32_t> got = GreedyJfk(*model_, 2);
  size_t agree = 0;
  while (agree < got.size() && agree < want.size() && got[agree] == want[agree]) ++agree;
  printf("agreement: first %zu of %zu reference tokens (we produced %zu)\n", agree, want.size(),
         got.size());
  EXPECT_GE(agree, 8u);  // the first several tokens, the brief's first check
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace whisper
