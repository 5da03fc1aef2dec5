// InferenceState on small synthetic models (random weights): the graphs against a plain-loop
// forward pass (naive_forward.h), the SIMD executor against the scalar oracle on the same
// graphs, KV-cache bookkeeping, errors, and zero heap allocation after the first window.
#include "whisper/state.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cpu/ref_ops.h"
#include "ggml/fp16.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/alloc_counter.h"
#include "whisper/naive_forward.h"
#include "whisper/synthetic_model.h"

namespace whisper {
namespace {

using ::testing::HasSubstr;

// 2 layers each, so that per-layer cache offsets are exercised.
SyntheticModelOptions SmallOptions(ggml_type matrix_type = GGML_TYPE_F16) {
  SyntheticModelOptions o;
  o.hparams.n_audio_layer = 2;
  o.hparams.n_text_layer = 2;
  o.matrix_type = matrix_type;
  if (matrix_type == GGML_TYPE_F32) o.hparams.ftype = 0;
  return o;
}

std::unique_ptr<WhisperModel> LoadSynthetic(const SyntheticModelOptions& o, const std::string& name) {
  const std::string path = WriteTempFile(name, MakeSyntheticModel(o).bytes);
  absl::StatusOr<std::unique_ptr<WhisperModel>> m = WhisperModel::Load(path);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

std::vector<float> RandomMel(int n_mels, int n_frames, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.5f);
  std::vector<float> mel(static_cast<size_t>(n_mels) * n_frames);
  for (float& v : mel) v = u(rng);
  return mel;
}

// The window the state should see: [n_mels][2 n_ctx], frames past n_frames are 0.
std::vector<float> Window(const std::vector<float>& mel, int n_mels, int n_frames, int seek, int n_ctx) {
  std::vector<float> w(static_cast<size_t>(n_mels) * 2 * n_ctx, 0.0f);
  for (int m = 0; m < n_mels; ++m) {
    for (int t = 0; t < 2 * n_ctx && seek + t < n_frames; ++t) {
      w[m * 2 * n_ctx + t] = mel[static_cast<size_t>(m) * n_frames + seek + t];
    }
  }
  return w;
}

// The scalar oracle as the state's executor; nullptr is the SIMD executor.
constexpr GraphComputeFn kOracle = &ggml_ref_graph_compute;
constexpr GraphComputeFn kSimd = nullptr;

std::unique_ptr<InferenceState> NewState(const WhisperModel& m, int n_decoders, int n_threads,
                                       GraphComputeFn compute) {
  absl::StatusOr<std::unique_ptr<InferenceState>> s =
      InferenceState::Create(m, n_decoders, n_threads, compute);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

double MaxAbsDiff(const float* a, const std::vector<double>& b) {
  double d = 0.0;
  for (size_t i = 0; i < b.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
  return d;
}

double MaxAbs(const std::vector<double>& b) {
  double d = 0.0;
  for (double v : b) d = std::max(d, std::fabs(v));
  return d;
}

class StateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = LoadSynthetic(SmallOptions(), "state_test_f16.bin");
    ASSERT_NE(model_, nullptr);
    mel_ = RandomMel(80, kFrames, 7);
  }
  static constexpr int kFrames = 45;  // the 32-frame window at seek 20 runs 7 frames past the end
  std::unique_ptr<WhisperModel> model_;
  std::vector<float> mel_;
};

TEST_F(StateTest, EncoderMatchesNaiveForward) {
  std::unique_ptr<InferenceState> st = NewState(*model_, 1, 1, kOracle);
  ASSERT_NE(st, nullptr);
  for (int audio_ctx : {0, 8}) {
    for (int seek : {0, 20}) {
      const int n_ctx = audio_ctx == 0 ? 16 : audio_ctx;
      ASSERT_TRUE(st->Encode(mel_.data(), kFrames, seek, audio_ctx).ok());
      EXPECT_EQ(st->n_audio_ctx(), n_ctx);
      const std::vector<double> want =
          NaiveEncode(*model_, Window(mel_, 80, kFrames, seek, n_ctx), n_ctx);
      const float* got = static_cast<const float*>(st->encoder_output()->data);
      EXPECT_GT(MaxAbs(want), 0.5);
      EXPECT_LT(MaxAbsDiff(got, want), 2e-4) << "audio_ctx " << audio_ctx << " seek " << seek;
    }
  }
}

// whisper.cpp's rules run the tanh GELU (set_gelu): the encoder graph is rebuilt for it and the
// decoder steps follow; the model's erf form again after set_gelu(kErf).
TEST_F(StateTest, SetGeluSwitchesTheForm) {
  std::unique_ptr<InferenceState> st = NewState(*model_, 1, 1, kOracle);
  ASSERT_NE(st, nullptr);
  const int n_ctx = 16;
  const std::vector<float> window = Window(mel_, 80, kFrames, 0, n_ctx);
  const std::vector<int32_t> seq = {50257, 464, 2068};
  for (Gelu form : {Gelu::kTanh, Gelu::kErf}) {
    SCOPED_TRACE(form == Gelu::kTanh ? "tanh" : "erf");
    st->set_gelu(form);
    ASSERT_TRUE(st->Encode(mel_.data(), kFrames, 0).ok());
    const std::vector<double> enc = NaiveEncode(*model_, window, n_ctx, form);
    const std::vector<double> other = NaiveEncode(*model_, window, n_ctx, form == Gelu::kTanh ? Gelu::kErf : Gelu::kTanh);
    const float* got = static_cast<const float*>(st->encoder_output()->data);
    EXPECT_LT(MaxAbsDiff(got, enc), 2e-4);
    EXPECT_GT(MaxAbsDiff(got, other), 5e-4);  // the forms are told apart at this tolerance
    ASSERT_TRUE(st->Decode(0, seq.data(), 3, 0).ok());
    EXPECT_LT(MaxAbsDiff(st->logits(0), NaiveDecode(*model_, enc, n_ctx, seq, form)), 5e-4);
  }
}

TEST_F(StateTest, DecoderMatchesNaiveForwardStepByStep) {
  std::unique_ptr<InferenceState> st = NewState(*model_, 2, 1, kOracle);
  ASSERT_NE(st, nullptr);
  for (int audio_ctx : {0, 8}) {
    const int n_ctx = audio_ctx == 0 ? 16 : audio_ctx;
    ASSERT_TRUE(st->Encode(mel_.data(), kFrames, 5, audio_ctx).ok());
    const std::vector<double> enc = NaiveEncode(*model_, Window(mel_, 80, kFrames, 5, n_ctx), n_ctx);
    // sot, two text tokens, a timestamp, eot, ... in steps of 3, 1, 2, 1 tokens.
    const std::vector<int32_t> seq = {50257, 464, 2068, 50364, 50256, 11, 51863};
    int n_past = 0;
    for (int n : {3, 1, 2, 1}) {
      ASSERT_TRUE(st->Decode(1, seq.data() + n_past, n, n_past).ok());
      n_past += n;
      const std::vector<double> want =
          NaiveDecode(*model_, enc, n_ctx, std::vector<int32_t>(seq.begin(), seq.begin() + n_past));
      EXPECT_GT(MaxAbs(want), 0.5);
      EXPECT_LT(MaxAbsDiff(st->logits(1), want), 5e-4) << "n_past " << n_past;
    }
  }
}

// The SIMD executor computes the same graphs as the scalar oracle (to float rounding), and its
// results do not depend on the thread count (bit for bit).
TEST_F(StateTest, CpuExecutorMatchesOracleOnTheSameGraphs) {
  for (ggml_type t : {GGML_TYPE_F16, GGML_TYPE_F32, GGML_TYPE_Q8_0, GGML_TYPE_Q4_0}) {
    std::unique_ptr<WhisperModel> m =
        t == GGML_TYPE_F16 ? nullptr : LoadSynthetic(SmallOptions(t), "state_test_q.bin");
    const WhisperModel& model = m != nullptr ? *m : *model_;
    std::unique_ptr<InferenceState> ref = NewState(model, 1, 1, kOracle);
    std::unique_ptr<InferenceState> cpu1 = NewState(model, 1, 1, kSimd);
    std::unique_ptr<InferenceState> cpu2 = NewState(model, 1, 2, kSimd);
    ASSERT_TRUE(ref && cpu1 && cpu2);
    const std::vector<int32_t> seq = {50257, 50363, 318, 257, 1332};
    for (InferenceState* s : {ref.get(), cpu1.get(), cpu2.get()}) {
      ASSERT_TRUE(s->Encode(mel_.data(), kFrames, 3).ok());
      ASSERT_TRUE(s->Decode(0, seq.data(), 4, 0).ok());
      ASSERT_TRUE(s->Decode(0, seq.data() + 4, 1, 4).ok());
    }
    // Quantized weights: the executor quantizes the activations to Q8_0/Q8_1 blocks (ggml's
    // vec_dot_type) where the oracle multiplies exact floats, an 8-bit rounding of every
    // activation that propagates through the layers (~1% here); float weights: f32 sums in
    // another order only.
    const bool quantized = ggml_is_quantized(t);
    const double rel = quantized ? 3e-2 : 1e-4;
    const ggml_tensor* e_ref = ref->encoder_output();
    const size_t n_embd = ggml_nelements(e_ref);
    std::vector<double> want(static_cast<const float*>(e_ref->data),
                             static_cast<const float*>(e_ref->data) + n_embd);
    const double embd_diff = MaxAbsDiff(static_cast<const float*>(cpu1->encoder_output()->data), want);
    EXPECT_LT(embd_diff, rel * MaxAbs(want)) << ggml_type_name(t);
    const int n_vocab = model.hparams().n_vocab;
    std::vector<double> want_logits(ref->logits(0), ref->logits(0) + n_vocab);
    const double logits_diff = MaxAbsDiff(cpu1->logits(0), want_logits);
    EXPECT_LT(logits_diff, rel * MaxAbs(want_logits)) << ggml_type_name(t);
    // Cross K/V: F16 caches, equal to within one F16 rounding step of the values.
    const DecoderKv a = ref->cross_kv(), b = cpu1->cross_kv();
    const ggml_fp16_t* ka = static_cast<const ggml_fp16_t*>(a.k->data);
    const ggml_fp16_t* kb = static_cast<const ggml_fp16_t*>(b.k->data);
    double kd = 0.0;
    for (int64_t i = 0; i < ggml_nelements(a.k); ++i) {
      kd = std::max<double>(kd, std::fabs(ggml_fp16_to_fp32(ka[i]) - ggml_fp16_to_fp32(kb[i])));
    }
    EXPECT_LT(kd, quantized ? 3e-2 : 2e-3) << ggml_type_name(t);
    printf("%s: max |cpu - oracle|: embd %.3g (max %.3g), logits %.3g (max %.3g), cross K %.3g\n",
           ggml_type_name(t), embd_diff, MaxAbs(want), logits_diff, MaxAbs(want_logits), kd);
    // 1 vs 2 threads: identical bytes.
    EXPECT_EQ(0, memcmp(cpu1->encoder_output()->data, cpu2->encoder_output()->data,
                        n_embd * sizeof(float)));
    EXPECT_EQ(0, memcmp(cpu1->logits(0), cpu2->logits(0), n_vocab * sizeof(float)));
  }
}

TEST_F(StateTest, CopyKvForksASequence) {
  std::unique_ptr<InferenceState> st = NewState(*model_, 3, 2, kSimd);
  ASSERT_NE(st, nullptr);
  ASSERT_TRUE(st->Encode(mel_.data(), kFrames, 0).ok());
  const int n_vocab = model_->hparams().n_vocab;
  const std::vector<int32_t> a = {50257, 50363, 1000, 2000};
  const std::vector<int32_t> other = {50257, 7, 8, 9, 10, 11};
  ASSERT_TRUE(st->Decode(0, a.data(), 4, 0).ok());
  ASSERT_TRUE(st->Decode(2, other.data(), 6, 0).ok());  // dirty decoder 2 beyond position 4
  st->CopyKv(0, 2, 4);
  EXPECT_EQ(0, memcmp(st->logits(0), st->logits(2), n_vocab * sizeof(float)));
  // Continuing both with the same token gives the same logits; a third decoder fed the whole
  // sequence from scratch agrees too.
  const int32_t next = 3000;
  ASSERT_TRUE(st->Decode(0, &next, 1, 4).ok());
  ASSERT_TRUE(st->Decode(2, &next, 1, 4).ok());
  EXPECT_EQ(0, memcmp(st->logits(0), st->logits(2), n_vocab * sizeof(float)));
  std::vector<int32_t> full = a;
  full.push_back(next);
  ASSERT_TRUE(st->Decode(1, full.data(), 5, 0).ok());
  std::vector<double> want(st->logits(0), st->logits(0) + n_vocab);
  EXPECT_LT(MaxAbsDiff(st->logits(1), want), 1e-3 * MaxAbs(want));
}

// CopyKvRange copies only positions [begin, end): a decoder that shares the first two positions
// with the source and differs after them continues exactly as the source does once [2, 4) is
// copied, and the copy leaves its logits alone.
TEST_F(StateTest, CopyKvRangeCopiesOnlyTheDivergentPositions) {
  std::unique_ptr<InferenceState> st = NewState(*model_, 3, 2, kSimd);
  ASSERT_NE(st, nullptr);
  ASSERT_TRUE(st->Encode(mel_.data(), kFrames, 0).ok());
  const int n_vocab = model_->hparams().n_vocab;
  const std::vector<int32_t> a = {50257, 50363, 1000, 2000};
  const std::vector<int32_t> shared_prefix = {50257, 50363, 7, 8, 9};
  ASSERT_TRUE(st->Decode(0, a.data(), 4, 0).ok());
  ASSERT_TRUE(st->Decode(2, shared_prefix.data(), 5, 0).ok());
  const std::vector<float> logits2(st->logits(2), st->logits(2) + n_vocab);
  st->CopyKvRange(0, 2, 2, 4);
  EXPECT_EQ(0, memcmp(st->logits(2), logits2.data(), n_vocab * sizeof(float)));
  const int32_t next = 3000;
  ASSERT_TRUE(st->Decode(0, &next, 1, 4).ok());
  ASSERT_TRUE(st->Decode(2, &next, 1, 4).ok());
  EXPECT_EQ(0, memcmp(st->logits(0), st->logits(2), n_vocab * sizeof(float)));
  // Copying too little ([3, 4) only) leaves position 2 different: the logits differ.
  ASSERT_TRUE(st->Decode(2, shared_prefix.data(), 5, 0).ok());
  st->CopyKvRange(0, 2, 3, 4);
  ASSERT_TRUE(st->Decode(2, &next, 1, 4).ok());
  EXPECT_NE(0, memcmp(st->logits(0), st->logits(2), n_vocab * sizeof(float)));
}

// A batched step of several decoders (out of order, one left out) gives each decoder the logits
// of the plain-loop forward pass over its own sequence, and writes each one's K/V where its next
// step (batched again) reads it. The SIMD executor's batched logits are also bit for bit those of
// one Decode per decoder (same products per column), so batching does not move a beam search.
TEST_F(StateTest, DecodeBatchGivesEachDecoderItsOwnStep) {
  const std::vector<std::vector<int32_t>> prompts = {
      {50257, 464, 2068, 50364}, {50257, 11, 12, 13}, {50257, 7, 2068, 50370}, {50257, 50363, 1000, 2000}};
  const int n_prompt = 4;
  for (GraphComputeFn compute : {kOracle, kSimd}) {
    std::unique_ptr<InferenceState> st = NewState(*model_, 4, 2, compute);
    std::unique_ptr<InferenceState> one = NewState(*model_, 4, 2, compute);
    ASSERT_NE(st, nullptr);
    ASSERT_NE(one, nullptr);
    const int n_ctx = 16;
    ASSERT_TRUE(st->Encode(mel_.data(), kFrames, 0).ok());
    ASSERT_TRUE(one->Encode(mel_.data(), kFrames, 0).ok());
    const std::vector<double> enc = NaiveEncode(*model_, Window(mel_, 80, kFrames, 0, n_ctx), n_ctx);
    for (int d = 0; d < 4; ++d) {
      ASSERT_TRUE(st->Decode(d, prompts[d].data(), n_prompt, 0).ok());
      ASSERT_TRUE(one->Decode(d, prompts[d].data(), n_prompt, 0).ok());
    }
    const int n_vocab = model_->hparams().n_vocab;
    const std::vector<float> untouched(st->logits(1), st->logits(1) + n_vocab);
    std::vector<std::vector<int32_t>> seqs = prompts;
    const int decoders[3] = {2, 0, 3};
    const int32_t steps[2][3] = {{51863, 50256, 220}, {30, 50364, 464}};
    for (int step = 0; step < 2; ++step) {
      ASSERT_TRUE(st->DecodeBatch(decoders, steps[step], 3, n_prompt + step).ok());
      for (int b = 0; b < 3; ++b) {
        const int d = decoders[b];
        seqs[d].push_back(steps[step][b]);
        ASSERT_TRUE(one->Decode(d, &steps[step][b], 1, n_prompt + step).ok());
        const std::vector<double> want = NaiveDecode(*model_, enc, n_ctx, seqs[d]);
        EXPECT_GT(MaxAbs(want), 0.5);
        EXPECT_LT(MaxAbsDiff(st->logits(d), want), 5e-4) << "step " << step << " decoder " << d;
        if (compute == kSimd) {
          EXPECT_EQ(0, memcmp(st->logits(d), one->logits(d), n_vocab * sizeof(float)))
              << "step " << step << " decoder " << d;
        }
      }
    }
    EXPECT_EQ(0, memcmp(st->logits(1), untouched.data(), n_vocab * sizeof(float)));
  }
}

TEST_F(StateTest, DecodeBatchRejectsBadBatches) {
  std::unique_ptr<InferenceState> st = NewState(*model_, 3, 1, kSimd);
  ASSERT_NE(st, nullptr);
  const int32_t tokens[3] = {50257, 50257, 50257};
  const int twice[2] = {1, 1};
  EXPECT_THAT(st->DecodeBatch(twice, tokens, 2, 0).message(), HasSubstr("no window encoded"));
  ASSERT_TRUE(st->Encode(mel_.data(), kFrames, 0).ok());
  EXPECT_THAT(st->DecodeBatch(twice, tokens, 2, 0).message(), HasSubstr("decoder 1 appears twice"));
  const int ok[3] = {0, 1, 2};
  const int outside[2] = {0, 3};
  EXPECT_THAT(st->DecodeBatch(outside, tokens, 2, 0).message(), HasSubstr("decoders[1] = 3 is not in [0"));
  EXPECT_THAT(st->DecodeBatch(ok, tokens, 0, 0).message(), HasSubstr("0 decoders (need 1..3)"));
  EXPECT_THAT(st->DecodeBatch(ok, tokens, 4, 0).message(), HasSubstr("4 decoders (need 1..3)"));
  EXPECT_THAT(st->DecodeBatch(ok, tokens, 3, model_->hparams().n_text_ctx).message(), HasSubstr("n_past"));
  const int32_t bad[2] = {50257, model_->hparams().n_vocab};
  EXPECT_FALSE(st->DecodeBatch(ok, bad, 2, 0).ok());
  EXPECT_TRUE(st->DecodeBatch(ok, tokens, 3, 0).ok());
}

TEST_F(StateTest, NoHeapAllocationAfterTheFirstWindow) {
  if (!ggml_testing::AllocCounter::Supported()) GTEST_SKIP() << "allocation counting unsupported";
  for (int n_threads : {1, 2}) {
    std::unique_ptr<InferenceState> st = NewState(*model_, 2, n_threads, kSimd);
    ASSERT_NE(st, nullptr);
    const std::vector<int32_t> prompt = {50257, 50363, 464, 2068, 318};
    ASSERT_TRUE(st->Encode(mel_.data(), kFrames, 0).ok());
    ASSERT_TRUE(st->Decode(0, prompt.data(), 3, 0).ok());
    ggml_testing::AllocCounter::Start();
    bool ok = st->Encode(mel_.data(), kFrames, 13).ok();
    ok = ok && st->Decode(0, prompt.data(), 5, 0).ok();  // a longer prompt than before
    for (int p = 5; p < 12 && ok; ++p) ok = st->Decode(0, &prompt[2], 1, p).ok();
    st->CopyKv(0, 1, 12);
    ok = ok && st->Decode(1, &prompt[1], 1, 11).ok();
    const int64_t allocations = ggml_testing::AllocCounter::Stop();
    EXPECT_TRUE(ok);
    EXPECT_EQ(allocations, 0) << n_threads << " threads";
  }
}

TEST_F(StateTest, BufferSizes) {
  std::unique_ptr<InferenceState> st = NewState(*model_, 3, 1, kSimd);
  ASSERT_NE(st, nullptr);
  const WhisperHparams& h = model_->hparams();
  const size_t S = h.n_text_state;
  auto pad = [](size_t n) { return (n + 63) / 64 * 64; };
  const size_t embd = pad(4 * S * h.n_audio_ctx);
  const size_t cross = pad(2 * h.n_text_layer * h.n_audio_ctx * S);
  const size_t self = pad(2 * h.n_text_layer * h.n_text_ctx * S);
  EXPECT_EQ(st->kv_buffer_size(), embd + 2 * cross + 3 * 2 * self);
  // The encoder buffer holds at least the input window and the F32 attention scores of a head
  // batch; the decoder one at least the logits.
  EXPECT_GE(st->compute_buffer_size(Graph::kEncoder), 4u * 80 * 32 + 4u * 16 * 16 * 2);
  EXPECT_GT(st->compute_buffer_size(Graph::kCross), 0u);
  EXPECT_GE(st->compute_buffer_size(Graph::kDecoder), 4u * h.n_vocab);
}

TEST_F(StateTest, Errors) {
  EXPECT_EQ(InferenceState::Create(*model_, 0, 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(InferenceState::Create(*model_, InferenceState::kMaxStateDecoders + 1, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(InferenceState::Create(*model_, 1, 0).status().code(), absl::StatusCode::kInvalidArgument);
  std::unique_ptr<InferenceState> st = NewState(*model_, 2, 1, kSimd);
  ASSERT_NE(st, nullptr);
  const int32_t tok[2] = {50257, 50363};
  absl::Status s = st->Decode(0, tok, 1, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(st->Encode(nullptr, 10, 0).message(), HasSubstr("mel null"));
  EXPECT_THAT(st->Encode(mel_.data(), kFrames, -1).message(), HasSubstr("seek -1"));
  EXPECT_THAT(st->Encode(mel_.data(), kFrames, 0, 17).message(),
              HasSubstr("audio_ctx 17 is not in [0, n_audio_ctx = 16]"));
  ASSERT_TRUE(st->Encode(mel_.data(), kFrames, 0).ok());
  EXPECT_THAT(st->Decode(2, tok, 1, 0).message(), HasSubstr("decoder 2 is not in [0, n_decoders = 2]"));
  const int32_t bad[1] = {51864};
  EXPECT_THAT(st->Decode(0, bad, 1, 0).message(), HasSubstr("tokens[0] = 51864 is not in [0, n_vocab = 51864]"));
  EXPECT_THAT(st->Decode(0, tok, 2, 11).message(), HasSubstr("2 tokens at n_past 11 do not fit n_text_ctx 12"));
  EXPECT_THAT(st->Decode(0, tok, 0, 0).message(), HasSubstr("need n_tokens >= 1"));
  EXPECT_EQ(st->logits(2), nullptr);
  EXPECT_TRUE(st->Decode(0, tok, 2, 10).ok());  // the last two positions
}

}  // namespace
}  // namespace whisper
