// DecodeSequences on the real tiny.en model (models/ggml-tiny.en.bin; fails naming
// tools/setup.sh when absent): greedy decoding of several 30 s windows of different audio
// (jfk.wav, and windows of long_speech.flac) in one SequenceBatch, the sequences joining at
// different steps (so at different n_past) and leaving at their <|endoftext|>, against the same
// greedy decoding of each window alone (one Decode per token), run in lockstep on a second state.
//
// Tolerance: zero. Each column of a batched step is computed by the same kernels in the same
// summation order as the single step: the products run on blocks of at most kDecoderColumnBlock
// (15) columns (whisper/decoder.h), below kernels/matmul.h kMulMatPackedMinN, where a product's
// outputs are dot products whose K terms are summed in one order whatever the number of columns;
// and the attention is per sequence. So the logits are compared byte for byte, and the tokens
// must be identical.
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "apps/common/audio.h"
#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "whisper/mel.h"
#include "whisper/model.h"
#include "whisper/sequence_batch.h"
#include "whisper/state.h"

namespace whisper {
namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// A window: which audio, and its first mel frame.
struct AudioWindow {
  int audio;  // 0: jfk.wav, 1: long_speech.flac
  int seek;
};
// jfk.wav, then long_speech.flac at 0, 30, 60, ... s.
constexpr AudioWindow kWindows[8] = {{0, 0},    {1, 0},     {1, 3000},  {1, 6000},
                                     {1, 9000}, {1, 12000}, {1, 15000}, {1, 18000}};

class DecodeSequencesTinyEnTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string path = testdata::ModelPath("ggml-tiny.en.bin");
    if (!Exists(path)) return;
    absl::StatusOr<std::unique_ptr<WhisperModel>> m = WhisperModel::Load(path);
    ASSERT_TRUE(m.ok()) << m.status();
    model_ = m->release();
    mels_ = new std::vector<std::vector<float>>();
    for (const char* name : {"jfk.wav", "long_speech.flac"}) {
      absl::StatusOr<std::vector<float>> audio = LoadAudio16kMono(testdata::SharedData(name));
      ASSERT_TRUE(audio.ok()) << audio.status();
      absl::StatusOr<std::unique_ptr<MelSpectrogram>> maker = MelSpectrogram::Create(
          model_->mel_filters().data(), model_->hparams().n_mels, model_->n_fft(), 2, audio->size());
      ASSERT_TRUE(maker.ok()) << maker.status();
      absl::StatusOr<MelView> mel = (*maker)->Compute(audio->data(), audio->size());
      ASSERT_TRUE(mel.ok()) << mel.status();
      mels_->emplace_back(mel->data, mel->data + static_cast<size_t>(mel->n_mels) * mel->n_len);
    }
  }
  static void TearDownTestSuite() {
    delete model_;
    delete mels_;
    model_ = nullptr;
    mels_ = nullptr;
  }
  void SetUp() override {
    if (model_ == nullptr) GTEST_FAIL() << testdata::MissingModelHint(testdata::ModelPath("ggml-tiny.en.bin"));
  }
  // A state of n decoders and n windows, window w holding kWindows[w].
  static std::unique_ptr<InferenceState> EncodedState(int n) {
    absl::StatusOr<std::unique_ptr<InferenceState>> st =
        InferenceState::Create(*model_, n, 2, nullptr, EncoderOptions(), n);
    EXPECT_TRUE(st.ok()) << st.status();
    if (!st.ok()) return nullptr;
    for (int w = 0; w < n; ++w) {
      const std::vector<float>& mel = (*mels_)[kWindows[w].audio];
      const int n_frames = static_cast<int>(mel.size() / model_->hparams().n_mels);
      absl::Status s = (*st)->EncodeWindow(w, mel.data(), n_frames, kWindows[w].seek);
      EXPECT_TRUE(s.ok()) << s;
      if (!s.ok()) return nullptr;
    }
    return std::move(*st);
  }
  // Argmax (lowest id on ties) with the non-timestamp special tokens after eot never chosen.
  static int32_t Argmax(const float* logits) {
    const SpecialTokens& sp = model_->special();
    int32_t best = 0;
    for (int32_t t = 1; t < model_->hparams().n_vocab; ++t) {
      if (t > sp.eot && t < sp.beg) continue;
      if (logits[t] > logits[best]) best = t;
    }
    return best;
  }
  // See the definition.
  void GreedyBatchedEqualsAlone(int n);

  static WhisperModel* model_;
  static std::vector<std::vector<float>>* mels_;
};
WhisperModel* DecodeSequencesTinyEnTest::model_ = nullptr;
std::vector<std::vector<float>>* DecodeSequencesTinyEnTest::mels_ = nullptr;

// Greedy decoding of n windows: sequence d (decoder d, window d) has the prompt [sot] (even d) or
// [sot, <|notimestamps|>] (odd d) and joins the batch at step 3 * d; it leaves at <|endoftext|>
// or after kMaxTokens tokens. The reference decodes each alone on `one`, in lockstep.
void DecodeSequencesTinyEnTest::GreedyBatchedEqualsAlone(int n) {
  constexpr int kMaxTokens = 96;
  WhisperModel& model = *model_;
  const SpecialTokens& sp = model.special();
  const int n_vocab = model.hparams().n_vocab;
  std::unique_ptr<InferenceState> st = EncodedState(n);
  std::unique_ptr<InferenceState> one = EncodedState(n);
  ASSERT_TRUE(st && one);
  SequenceBatch batch(st.get());
  std::vector<std::vector<int32_t>> got(n), want(n);
  std::vector<int> n_past(n, 0);
  int joined = 0, steps = 0, max_batch = 0;
  for (int step = 0; joined < n || batch.size() > 0; ++step) {
    for (; joined < n && 3 * joined <= step; ++joined) {
      const int d = joined;
      const std::vector<int32_t> prompt =
          d % 2 == 0 ? std::vector<int32_t>{sp.sot} : std::vector<int32_t>{sp.sot, sp.not_};
      const int np = static_cast<int>(prompt.size());
      // The prompt pass: all but the last token (none for [sot]); the last is the batch's first step.
      if (np > 1) {
        ASSERT_TRUE(st->Decode(d, prompt.data(), np - 1, 0, d).ok());
        ASSERT_TRUE(one->Decode(d, prompt.data(), np - 1, 0, d).ok());
      }
      ASSERT_TRUE(batch.Join(d, d, prompt.back(), np - 1).ok());
      n_past[d] = np - 1;
      want[d].push_back(prompt.back());  // the token to decode next, alone
    }
    if (batch.size() == 0) continue;
    max_batch = std::max(max_batch, batch.size());
    ASSERT_TRUE(batch.Step().ok()) << "step " << step;
    ++steps;
    for (int i = 0; i < batch.size(); ++i) {
      const int d = batch.member(i).decoder;
      ASSERT_TRUE(one->Decode(d, &want[d].back(), 1, n_past[d], d).ok());
      ++n_past[d];
      EXPECT_EQ(0, memcmp(st->logits(d), one->logits(d), n_vocab * sizeof(float))) << "sequence " << d;
      got[d].push_back(Argmax(st->logits(d)));
      want[d].push_back(Argmax(one->logits(d)));
    }
    for (int i = batch.size() - 1; i >= 0; --i) {
      const int d = batch.member(i).decoder;
      if (got[d].back() == sp.eot || static_cast<int>(got[d].size()) >= kMaxTokens) {
        ASSERT_TRUE(batch.Leave(d).ok());
      } else {
        ASSERT_TRUE(batch.SetToken(d, got[d].back()).ok());
      }
    }
  }
  printf("%d sequences, %d batched steps, at most %d at once\n", n, steps, max_batch);
  for (int d = 0; d < n; ++d) {
    want[d].erase(want[d].begin());  // the prompt's last token
    EXPECT_EQ(got[d], want[d]) << "sequence " << d;
    std::string text;
    for (int32_t t : got[d]) text += t < sp.eot ? model.vocab().token(t) : "[" + std::to_string(t) + "]";
    printf("window %d (%s, frame %d), %zu tokens: %s\n", d, kWindows[d].audio == 0 ? "jfk.wav" : "long_speech.flac",
           kWindows[d].seek, got[d].size(), text.c_str());
  }
}

TEST_F(DecodeSequencesTinyEnTest, GreedyOfThreeWindowsBatchedEqualsEachAlone) { GreedyBatchedEqualsAlone(3); }

TEST_F(DecodeSequencesTinyEnTest, GreedyOfEightWindowsBatchedEqualsEachAlone) { GreedyBatchedEqualsAlone(8); }

}  // namespace
}  // namespace whisper
