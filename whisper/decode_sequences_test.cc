// InferenceState::DecodeSequences and SequenceBatch on a small synthetic model (random weights):
// sequences of different windows (different mel, different n_audio_ctx) at different n_past,
// decoded in one graph, against the plain-loop forward pass of each sequence alone
// (naive_forward.h, double precision) and bit for bit against one Decode per sequence (up to
// 128 sequences; F16, Q8_0 and Q5_1 weights); joining and leaving between steps; errors; and
// zero heap allocation after warm-up.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cpu/ref_ops.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/alloc_counter.h"
#include "whisper/naive_forward.h"
#include "whisper/sequence_batch.h"
#include "whisper/state.h"
#include "whisper/decoder.h"
#include "whisper/synthetic_model.h"

namespace whisper {
namespace {

using ::testing::HasSubstr;

constexpr int kFrames = 45;
constexpr GraphComputeFn kOracle = &ggml_ref_graph_compute;
constexpr GraphComputeFn kSimd = nullptr;

// One window of the test: where it starts, its audio_ctx (0: the model's 16) and the mel it
// reads (two different mels, as two requests' audio).
struct TestWindow {
  int mel;
  int seek;
  int audio_ctx;
};
constexpr TestWindow kWindows[3] = {{0, 0, 0}, {1, 13, 8}, {0, 20, 0}};

std::vector<float> RandomMel(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.5f);
  std::vector<float> mel(80 * kFrames);
  for (float& v : mel) v = u(rng);
  return mel;
}

// The window the state should see: [n_mels][2 n_ctx], frames past kFrames are 0.
std::vector<float> Window(const std::vector<float>& mel, int seek, int n_ctx) {
  std::vector<float> w(80 * 2 * n_ctx, 0.0f);
  for (int m = 0; m < 80; ++m) {
    for (int t = 0; t < 2 * n_ctx && seek + t < kFrames; ++t) w[m * 2 * n_ctx + t] = mel[m * kFrames + seek + t];
  }
  return w;
}

double MaxAbsDiff(const float* a, const std::vector<double>& b) {
  double d = 0.0;
  for (size_t i = 0; i < b.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
  return d;
}

class DecodeSequencesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SyntheticModelOptions o;
    o.hparams.n_audio_layer = 2;
    o.hparams.n_text_layer = 2;
    path_ = WriteTempFile("decode_sequences_test.bin", MakeSyntheticModel(o).bytes);
    absl::StatusOr<std::unique_ptr<WhisperModel>> m = WhisperModel::Load(path_);
    ASSERT_TRUE(m.ok()) << m.status();
    model_ = std::move(*m);
    mels_ = {RandomMel(7), RandomMel(11)};
  }
  // A state of `model` (nullptr: model_) with the three test windows encoded.
  std::unique_ptr<InferenceState> NewState(int n_decoders, int n_threads, GraphComputeFn compute,
                                           const WhisperModel* model = nullptr) {
    absl::StatusOr<std::unique_ptr<InferenceState>> s = InferenceState::Create(
        model != nullptr ? *model : *model_, n_decoders, n_threads, compute, EncoderOptions(), 3);
    EXPECT_TRUE(s.ok()) << s.status();
    if (!s.ok()) return nullptr;
    for (int w = 0; w < 3; ++w) {
      const TestWindow& tw = kWindows[w];
      EXPECT_TRUE((*s)->EncodeWindow(w, mels_[tw.mel].data(), kFrames, tw.seek, tw.audio_ctx).ok());
    }
    return std::move(*s);
  }
  int NCtx(int w) const { return kWindows[w].audio_ctx == 0 ? 16 : kWindows[w].audio_ctx; }
  std::vector<double> NaiveEnc(int w) const {
    return NaiveEncode(*model_, Window(mels_[kWindows[w].mel], kWindows[w].seek, NCtx(w)), NCtx(w));
  }
  // See the definition. weight_type: the synthetic model's matrices converted at load.
  void ManySequencesAreTheSingleStepsBytes(int n, std::optional<ggml_type> weight_type);

  std::string path_;
  std::unique_ptr<WhisperModel> model_;
  std::vector<std::vector<float>> mels_;
};

// Four sequences: decoders 0 and 1 in window 0 (adjacent: one cross-attention run), decoder 2
// in window 1 (n_audio_ctx 8), decoder 3 in window 2; prompts of 5, 5, 3 and 2 tokens, so the
// batched steps run at n_past 5, 5, 3, 2 and onwards. Each column equals the plain-loop forward
// pass of its sequence alone within 5e-4 (the F16 weights and caches are exact inputs to both;
// the difference is f32 against double rounding, as in state_test), and, with the SIMD
// executor, the bytes of Decode(decoder, &token, 1, n_past, window) on a second state: every
// product of the step sums each output's K terms in the same order for 1 or 4 columns
// (matvec mode, ggml/ops.h ggml_mul_mat_set_matvec), and the attention is per sequence.
TEST_F(DecodeSequencesTest, EachColumnIsItsSequenceAlone) {
  const std::vector<std::vector<int32_t>> prompts = {
      {50257, 50363, 464, 2068, 318}, {50257, 50363, 11, 12, 13}, {50257, 7, 2068}, {50257, 50364}};
  const int windows[4] = {0, 0, 1, 2};
  const int n_vocab = model_->hparams().n_vocab;
  for (GraphComputeFn compute : {kOracle, kSimd}) {
    std::unique_ptr<InferenceState> st = NewState(4, 2, compute);
    std::unique_ptr<InferenceState> one = NewState(4, 2, compute);
    ASSERT_TRUE(st && one);
    std::vector<std::vector<double>> enc;
    for (int w = 0; w < 3; ++w) enc.push_back(NaiveEnc(w));
    std::vector<std::vector<int32_t>> seqs = prompts;
    for (int d = 0; d < 4; ++d) {
      const int n = static_cast<int>(prompts[d].size());
      ASSERT_TRUE(st->Decode(d, prompts[d].data(), n, 0, windows[d]).ok());
      ASSERT_TRUE(one->Decode(d, prompts[d].data(), n, 0, windows[d]).ok());
    }
    const int32_t tokens[3][4] = {{220, 51863, 50256, 30}, {1000, 2000, 464, 50364}, {7, 8, 9, 10}};
    for (int step = 0; step < 3; ++step) {
      SequenceStep steps[4];
      for (int d = 0; d < 4; ++d) {
        steps[d] = SequenceStep{d, windows[d], tokens[step][d], static_cast<int>(seqs[d].size())};
      }
      ASSERT_TRUE(st->DecodeSequences(steps, 4).ok());
      for (int d = 0; d < 4; ++d) {
        ASSERT_TRUE(one->Decode(d, &tokens[step][d], 1, steps[d].n_past, windows[d]).ok());
        seqs[d].push_back(tokens[step][d]);
        const std::vector<double> want = NaiveDecode(*model_, enc[windows[d]], NCtx(windows[d]), seqs[d]);
        EXPECT_LT(MaxAbsDiff(st->logits(d), want), 5e-4) << "step " << step << " decoder " << d;
        if (compute == kSimd) {
          EXPECT_EQ(0, memcmp(st->logits(d), one->logits(d), n_vocab * sizeof(float)))
              << "step " << step << " decoder " << d;
        }
      }
    }
  }
}

// n sequences in one step: n / 2 beams of window 0 (one cross-attention run of n / 2 queries),
// then the others alternating between windows 1 and 2, each at its own n_past. Every product is
// one matvec-mode product over all n columns (ggml_mul_mat_set_matvec), so each column is still
// the single step's bytes, for F16 weights (kernels/matmul.h's dot path; the packed path of 16 or
// more columns sums in another order and fails this), Q8_0 (vec_dot; the int8 GEMM of 32 or more
// columns has the same bits, cpu/graph_compute_matmul_test checks that it is not taken) and Q5_1
// (vec_dot; the dequantizing path of 16 or more columns rounds b differently and fails this).
// With F16 weights each column is also within 5e-4 of the plain loops.
void DecodeSequencesTest::ManySequencesAreTheSingleStepsBytes(int n, std::optional<ggml_type> weight_type) {
  std::unique_ptr<WhisperModel> converted;  // the synthetic model's matrices in weight_type
  if (weight_type.has_value()) {
    absl::StatusOr<std::unique_ptr<WhisperModel>> m = WhisperModel::Load(path_, *weight_type);
    ASSERT_TRUE(m.ok()) << m.status();
    converted = std::move(*m);
  }
  const WhisperModel* model = converted != nullptr ? converted.get() : model_.get();
  std::unique_ptr<InferenceState> st = NewState(n, 2, kSimd, model);
  std::unique_ptr<InferenceState> one = NewState(n, 2, kSimd, model);
  ASSERT_TRUE(st && one);
  const int n_vocab = model->hparams().n_vocab;
  std::vector<std::vector<double>> enc;
  for (int w = 0; w < 3 && !weight_type.has_value(); ++w) enc.push_back(NaiveEnc(w));
  std::vector<std::vector<int32_t>> seqs(n);
  std::vector<SequenceStep> steps(n);
  for (int d = 0; d < n; ++d) {
    const int w = d < n / 2 ? 0 : 1 + d % 2;
    seqs[d] = {50257};
    for (int i = 0; i < d % 5; ++i) seqs[d].push_back(300 + 17 * d + i);
    const int np = static_cast<int>(seqs[d].size());
    ASSERT_TRUE(st->Decode(d, seqs[d].data(), np, 0, w).ok());
    ASSERT_TRUE(one->Decode(d, seqs[d].data(), np, 0, w).ok());
    steps[d] = SequenceStep{d, w, 1000 + d, np};
    seqs[d].push_back(1000 + d);
  }
  ASSERT_TRUE(st->DecodeSequences(steps.data(), n).ok());
  for (int d = 0; d < n; ++d) {
    ASSERT_TRUE(one->Decode(d, &steps[d].token, 1, steps[d].n_past, steps[d].window).ok());
    EXPECT_EQ(0, memcmp(st->logits(d), one->logits(d), n_vocab * sizeof(float))) << "sequence " << d;
    if (weight_type.has_value()) continue;
    const std::vector<double> want = NaiveDecode(*model_, enc[steps[d].window], NCtx(steps[d].window), seqs[d]);
    EXPECT_LT(MaxAbsDiff(st->logits(d), want), 5e-4) << "sequence " << d;
  }
}

TEST_F(DecodeSequencesTest, FortySequencesAreStillTheSingleStepsBytes) {
  ManySequencesAreTheSingleStepsBytes(40, std::nullopt);
}

TEST_F(DecodeSequencesTest, AHundredAndTwentyEightSequencesAreStillTheSingleStepsBytes) {
  ManySequencesAreTheSingleStepsBytes(128, std::nullopt);
}

TEST_F(DecodeSequencesTest, Q8_0WeightsFortyAndAHundredAndTwentyEightSequences) {
  ManySequencesAreTheSingleStepsBytes(40, GGML_TYPE_Q8_0);
  ManySequencesAreTheSingleStepsBytes(128, GGML_TYPE_Q8_0);
}

TEST_F(DecodeSequencesTest, Q5_1WeightsFortySequences) { ManySequencesAreTheSingleStepsBytes(40, GGML_TYPE_Q5_1); }

// A SequenceBatch whose members change between steps: decoder 1 leaves after step 0, decoder 2
// (window 1) joins at step 1 after its prompt pass, decoder 0 runs throughout. Each step's logits
// are those of the plain-loop forward pass of the member's own sequence, and the bytes of the
// same prompt pass and single steps on a second state.
TEST_F(DecodeSequencesTest, SequencesJoinAndLeaveBetweenSteps) {
  std::unique_ptr<InferenceState> st = NewState(3, 2, kSimd);
  std::unique_ptr<InferenceState> one = NewState(3, 2, kSimd);
  ASSERT_TRUE(st && one);
  const int n_vocab = model_->hparams().n_vocab;
  SequenceBatch batch(st.get());
  std::vector<std::vector<int32_t>> seqs = {{50257, 50363}, {50257, 50363, 5, 6}, {50257, 50364, 100}};
  const int windows[3] = {2, 0, 1};
  auto prompt = [&](int d) {
    const int n = static_cast<int>(seqs[d].size()) - 1;  // the last token is decoded by Step
    ASSERT_TRUE(st->Decode(d, seqs[d].data(), n, 0, windows[d]).ok());
    ASSERT_TRUE(one->Decode(d, seqs[d].data(), n, 0, windows[d]).ok());
    ASSERT_TRUE(batch.Join(d, windows[d], seqs[d].back(), n).ok());
  };
  prompt(0);
  prompt(1);
  EXPECT_EQ(batch.size(), 2);
  const int32_t next[4] = {318, 257, 1332, 50256};
  for (int step = 0; step < 4; ++step) {
    if (step == 1) {
      ASSERT_TRUE(batch.Leave(1).ok());
      prompt(2);
    }
    ASSERT_TRUE(batch.Step().ok()) << "step " << step;
    for (int i = 0; i < batch.size(); ++i) {
      const int d = batch.member(i).decoder;
      EXPECT_EQ(batch.member(i).n_past, static_cast<int>(seqs[d].size()));  // advanced past the token
      const int n_past = static_cast<int>(seqs[d].size()) - 1;
      ASSERT_TRUE(one->Decode(d, &seqs[d][n_past], 1, n_past, windows[d]).ok());
      EXPECT_EQ(0, memcmp(st->logits(d), one->logits(d), n_vocab * sizeof(float))) << "step " << step;
      const std::vector<double> want = NaiveDecode(*model_, NaiveEnc(windows[d]), NCtx(windows[d]), seqs[d]);
      EXPECT_LT(MaxAbsDiff(st->logits(d), want), 5e-4) << "step " << step << " decoder " << d;
      seqs[d].push_back(next[step]);
      ASSERT_TRUE(batch.SetToken(d, next[step]).ok());
    }
  }
  EXPECT_EQ(batch.size(), 2);
  EXPECT_THAT(batch.Leave(1).message(), HasSubstr("not in the batch"));
  EXPECT_THAT(batch.Join(0, 2, 1, 3).message(), HasSubstr("already in the batch"));
  ASSERT_TRUE(batch.Step().ok());
  ASSERT_TRUE(batch.Leave(0).ok());
  ASSERT_TRUE(batch.Join(0, 1, 50256, 3).ok());  // window 1: placed after decoder 2
  EXPECT_EQ(batch.member(1).decoder, 0);
  EXPECT_THAT(batch.Step().message(), HasSubstr("decoder 2 has no token"));
}

// The alignment pass of window 1 in decoder 2's cache gives the bytes of the same pass on a
// state whose window 0 holds the same window (the default window and decoder).
TEST_F(DecodeSequencesTest, AlignChoosesTheWindowAndTheDecoder) {
  std::unique_ptr<InferenceState> st = NewState(3, 2, kSimd);
  absl::StatusOr<std::unique_ptr<InferenceState>> ref = InferenceState::Create(*model_, 1, 2);
  ASSERT_TRUE(st && ref.ok());
  const TestWindow& tw = kWindows[1];
  ASSERT_TRUE((*ref)->Encode(mels_[tw.mel].data(), kFrames, tw.seek, tw.audio_ctx).ok());
  const std::vector<AlignmentHead> heads = {{0, 1}, {1, 0}};
  ASSERT_TRUE(st->SetAlignmentHeads(heads).ok());
  ASSERT_TRUE((*ref)->SetAlignmentHeads(heads).ok());
  const int32_t tokens[5] = {50257, 50363, 464, 2068, 50256};
  absl::StatusOr<const float*> got = st->Align(tokens, 5, -1, 1, 2);
  absl::StatusOr<const float*> want = (*ref)->Align(tokens, 5);
  ASSERT_TRUE(got.ok() && want.ok());
  EXPECT_EQ(0, memcmp(*got, *want, sizeof(float) * NCtx(1) * 5 * heads.size()));
  EXPECT_THAT(st->Align(tokens, 5, -1, 3, 0).status().message(), HasSubstr("window 3, decoder 0"));
  EXPECT_THAT(st->Align(tokens, 5, -1, 0, 3).status().message(), HasSubstr("window 0, decoder 3"));
}

TEST_F(DecodeSequencesTest, Errors) {
  absl::StatusOr<std::unique_ptr<InferenceState>> bad =
      InferenceState::Create(*model_, 2, 1, nullptr, EncoderOptions(), 0);
  EXPECT_THAT(bad.status().message(), HasSubstr("n_windows 0 is not in [1, 64]"));
  absl::StatusOr<std::unique_ptr<InferenceState>> fresh =
      InferenceState::Create(*model_, 3, 1, nullptr, EncoderOptions(), 2);
  ASSERT_TRUE(fresh.ok());
  InferenceState& st = **fresh;
  SequenceStep s[3] = {{0, 0, 50257, 0}, {1, 1, 50257, 2}, {2, 0, 50257, 1}};
  EXPECT_THAT(st.DecodeSequences(s, 2).message(), HasSubstr("window 0 was never encoded"));
  EXPECT_THAT(st.EncodeWindow(2, mels_[0].data(), kFrames, 0).message(), HasSubstr("window 2 is not in [0"));
  ASSERT_TRUE(st.EncodeWindow(0, mels_[0].data(), kFrames, 0).ok());
  EXPECT_THAT(st.DecodeSequences(s, 2).message(), HasSubstr("window 1 was never encoded"));
  EXPECT_THAT(st.Decode(0, &s[0].token, 1, 0, 1).message(), HasSubstr("no window"));
  ASSERT_TRUE(st.EncodeWindow(1, mels_[1].data(), kFrames, 5, 8).ok());
  EXPECT_EQ(st.n_audio_ctx(0), 16);
  EXPECT_EQ(st.n_audio_ctx(1), 8);
  EXPECT_THAT(st.DecodeSequences(s, 0).message(), HasSubstr("0 sequences (need 1..3)"));
  EXPECT_THAT(st.DecodeSequences(nullptr, 1).message(), HasSubstr("step array"));
  s[2].decoder = 1;
  EXPECT_THAT(st.DecodeSequences(s, 3).message(), HasSubstr("decoder 1 appears twice"));
  s[2] = {2, 2, 50257, 1};
  EXPECT_THAT(st.DecodeSequences(s, 3).message(), HasSubstr("steps[2] has decoder 2, window 2"));
  s[2] = {2, 0, model_->hparams().n_vocab, 1};
  EXPECT_THAT(st.DecodeSequences(s, 3).message(), HasSubstr("steps[2] has token"));
  s[2] = {2, 0, 50257, model_->hparams().n_text_ctx};
  EXPECT_THAT(st.DecodeSequences(s, 3).message(), HasSubstr("at n_past"));
  s[2] = {2, 0, 50257, 1};
  EXPECT_TRUE(st.DecodeSequences(s, 3).ok());
}

// After one step of each kind, encoding windows again, prompt passes in any window, and steps of
// 1 to 4 sequences with members joining and leaving make no heap allocation.
TEST_F(DecodeSequencesTest, NoHeapAllocationAfterWarmUp) {
  if (!ggml_testing::AllocCounter::Supported()) GTEST_SKIP() << "allocation counting unsupported";
  for (int n_threads : {1, 2}) {
    std::unique_ptr<InferenceState> st = NewState(4, n_threads, kSimd);
    ASSERT_NE(st, nullptr);
    SequenceBatch batch(st.get());
    const int32_t prompt[5] = {50257, 50363, 464, 2068, 318};
    ASSERT_TRUE(st->Decode(0, prompt, 3, 0, 1).ok());
    const SequenceStep warm[2] = {{0, 1, 220, 3}, {1, 2, 220, 0}};
    ASSERT_TRUE(st->DecodeSequences(warm, 2).ok());
    absl::Status err;  // the first failure (copying an OK status allocates nothing)
    auto ok = [&err](const absl::Status& s) {
      if (err.ok()) err = s;
      return err.ok();
    };
    ggml_testing::AllocCounter::Start();
    ok(st->EncodeWindow(1, mels_[1].data(), kFrames, 9, 8)) && ok(st->EncodeWindow(0, mels_[0].data(), kFrames, 3));
    for (int d = 0; d < 4; ++d) ok(st->Decode(d, prompt, 2 + d % 3, 0, d % 3));
    for (int d = 0; d < 3; ++d) ok(batch.Join(d, d % 3, prompt[4], 2 + d % 3));
    for (int step = 0; step < 6; ++step) {
      if (step == 2) ok(batch.Leave(1)) && ok(batch.Join(3, 0, prompt[4], 2));
      if (step == 4) ok(batch.Leave(0));
      ok(batch.Step());
      for (int i = 0; i < batch.size(); ++i) ok(batch.SetToken(batch.member(i).decoder, prompt[step % 5]));
    }
    const int decoders[4] = {0, 1, 2, 3};
    const int32_t tokens[4] = {1, 2, 3, 4};
    ok(st->DecodeBatch(decoders, tokens, 4, 8));
    const int64_t allocations = ggml_testing::AllocCounter::Stop();
    EXPECT_TRUE(err.ok()) << err;
    EXPECT_EQ(allocations, 0) << n_threads << " threads";
  }
}

// Steps of 40 sequences (one matvec-mode product per projection over all 40 columns) allocate
// nothing after the first, with F16 and Q8_0 weights.
TEST_F(DecodeSequencesTest, NoHeapAllocationInStepsOfFortySequences) {
  if (!ggml_testing::AllocCounter::Supported()) GTEST_SKIP() << "allocation counting unsupported";
  absl::StatusOr<std::unique_ptr<WhisperModel>> q8 = WhisperModel::Load(path_, GGML_TYPE_Q8_0);
  ASSERT_TRUE(q8.ok()) << q8.status();
  for (const WhisperModel* model : {model_.get(), q8->get()}) {
    const int n = 40;
    std::unique_ptr<InferenceState> st = NewState(n, 2, kSimd, model);
    ASSERT_NE(st, nullptr);
    std::vector<SequenceStep> steps(n);
    for (int d = 0; d < n; ++d) steps[d] = SequenceStep{d, d % 3, 220 + d, d % 4};
    ASSERT_TRUE(st->DecodeSequences(steps.data(), n).ok());  // warm-up
    absl::Status err;
    ggml_testing::AllocCounter::Start();
    for (int step = 1; step <= 3 && err.ok(); ++step) {
      for (SequenceStep& s : steps) s.n_past += 1;
      err = st->DecodeSequences(steps.data(), n);
    }
    const int64_t allocations = ggml_testing::AllocCounter::Stop();
    EXPECT_TRUE(err.ok()) << err;
    EXPECT_EQ(allocations, 0) << (model == model_.get() ? "F16" : "Q8_0");
  }
}

}  // namespace
}  // namespace whisper
