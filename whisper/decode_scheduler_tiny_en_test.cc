// DecodeScheduler on the real tiny.en model (models/ggml-tiny.en.bin; fails naming
// tools/setup.sh when absent): B windows of different audio (jfk.wav, windows of
// long_speech.flac), each decoded by the unchanged WindowDecoder::Run on its own slot, their
// one-token steps batched into shared DecodeSequences calls, against each window decoded alone on
// a plain InferenceState (the sequential path). Greedy with temperature fallback (best_of 5
// decoders per window) and beam search (beam 3: 6 decoders per window).
//
// Tolerance: zero. DecodeSequences gives each column the bytes of its single step
// (decode_sequences_tiny_en_test), and the decoder's logit filters are per sequence, so the
// tokens, their log-probabilities and the window scores must be identical.
#include <sys/stat.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "apps/common/audio.h"
#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "testing/alloc_counter.h"
#include "whisper/decode_scheduler.h"
#include "whisper/decoding.h"
#include "whisper/mel.h"
#include "whisper/model.h"
#include "whisper/state.h"

namespace whisper {
namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

struct AudioWindow {
  int audio;  // 0: jfk.wav, 1: long_speech.flac
  int seek;
};
constexpr AudioWindow kWindows[4] = {{0, 0}, {1, 0}, {1, 3000}, {1, 6000}};

// The sequential path's backend: decoder d of a plain state, window 0.
class PlainBackend : public DecoderBackend {
 public:
  explicit PlainBackend(InferenceState* s) : s_(s) {}
  absl::Status Decode(int decoder, const Token* tokens, int n_tokens, int n_past) override {
    return s_->Decode(decoder, tokens, n_tokens, n_past);
  }
  absl::Status DecodeBatch(const int* decoders, const Token* tokens, int n, int n_past) override {
    return s_->DecodeBatch(decoders, tokens, n, n_past);
  }
  const float* logits(int decoder) const override { return s_->logits(decoder); }
  void CopyKv(int src, int dst, int begin, int end) override { s_->CopyKvRange(src, dst, begin, end); }
  int n_decoders() const override { return s_->n_decoders(); }

 private:
  InferenceState* s_;
};

class DecodeSchedulerTinyEnTest : public ::testing::Test {
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
  static int Frames(int w) {
    return static_cast<int>((*mels_)[kWindows[w].audio].size() / model_->hparams().n_mels);
  }
  // Window w decoded alone, the sequential way.
  static WindowResult Alone(int w, const DecodingParams& dp) {
    absl::StatusOr<std::unique_ptr<InferenceState>> st = InferenceState::Create(*model_, DecodersNeeded(dp), 2);
    EXPECT_TRUE(st.ok()) << st.status();
    const std::vector<float>& mel = (*mels_)[kWindows[w].audio];
    EXPECT_TRUE((*st)->Encode(mel.data(), Frames(w), kWindows[w].seek, 0, Frames(w)).ok());
    PlainBackend backend(st->get());
    WindowDecoder dec(model_->special(), model_->hparams().n_text_ctx, dp);
    WindowResult r;
    const std::vector<Token> prompt{model_->special().sot};
    absl::Status s = dec.Run(backend, prompt, kWindows[w].seek, Frames(w), &r);
    EXPECT_TRUE(s.ok()) << s;
    return r;
  }

  // The batched side: one WindowDecoder per slot, one result per job (window).
  struct Batch {
    std::vector<std::unique_ptr<WindowDecoder>> decoders;  // [n_slots]
    std::vector<WindowResult> results;                      // [n_windows]
    std::vector<Token> prompt;
    std::atomic<int> n_started{0};
  };
  static absl::Status DecodeJob(void* arg, int job, SlotBackend& backend) {
    Batch& b = *static_cast<Batch*>(arg);
    b.n_started++;
    const std::vector<float>& mel = (*mels_)[kWindows[job].audio];
    absl::Status s = backend.Encode(mel.data(), Frames(job), kWindows[job].seek, 0, Frames(job));
    if (!s.ok()) return s;
    return b.decoders[backend.slot()]->Run(backend, b.prompt, kWindows[job].seek, Frames(job), &b.results[job]);
  }
  static std::unique_ptr<Batch> MakeBatch(int n_slots, int n_windows, const DecodingParams& dp) {
    auto b = std::make_unique<Batch>();
    for (int s = 0; s < n_slots; ++s) {
      b->decoders.push_back(std::make_unique<WindowDecoder>(model_->special(), model_->hparams().n_text_ctx, dp));
    }
    b->results.resize(n_windows);
    b->prompt = {model_->special().sot};
    return b;
  }
  // n windows on n slots, batched, against each alone; then the same again without allocating.
  void BatchedEqualsAlone(int n, const DecodingParams& dp);

  static WhisperModel* model_;
  static std::vector<std::vector<float>>* mels_;
};
WhisperModel* DecodeSchedulerTinyEnTest::model_ = nullptr;
std::vector<std::vector<float>>* DecodeSchedulerTinyEnTest::mels_ = nullptr;

void DecodeSchedulerTinyEnTest::BatchedEqualsAlone(int n, const DecodingParams& dp) {
  const int per = DecodersNeeded(dp);
  absl::StatusOr<std::unique_ptr<InferenceState>> st =
      InferenceState::Create(*model_, n * per, 2, nullptr, EncoderOptions(), n);
  ASSERT_TRUE(st.ok()) << st.status();
  absl::StatusOr<std::unique_ptr<DecodeScheduler>> sched = DecodeScheduler::Create(st->get(), n);
  ASSERT_TRUE(sched.ok()) << sched.status();
  ASSERT_EQ((*sched)->decoders_per_slot(), per);
  std::unique_ptr<Batch> b = MakeBatch(n, n, dp);
  absl::Status s = (*sched)->Run(n, DecodeJob, b.get());
  ASSERT_TRUE(s.ok()) << s;

  int64_t alone_steps = 0;
  for (int w = 0; w < n; ++w) {
    SCOPED_TRACE(testing::Message() << "window " << w);
    const WindowResult ref = Alone(w, dp);
    const WindowResult& got = b->results[w];
    ASSERT_GT(ref.tokens.size(), 3u);
    EXPECT_EQ(got.tokens, ref.tokens);
    EXPECT_EQ(got.token_logprobs, ref.token_logprobs);
    EXPECT_EQ(got.sum_logprob, ref.sum_logprob);
    EXPECT_EQ(got.no_speech_prob, ref.no_speech_prob);
    EXPECT_EQ(got.temperature, ref.temperature);
    EXPECT_EQ(got.seek_delta, ref.seek_delta);
    alone_steps += static_cast<int64_t>(ref.tokens.size());
  }
  // The windows shared steps: fewer DecodeSequences than the windows' tokens, each with more than
  // one sequence on average.
  EXPECT_LT((*sched)->n_steps(), alone_steps);
  EXPECT_GT((*sched)->n_step_sequences(), (*sched)->n_steps());

  // Warm: the same jobs again, on the same slots' decoders and results, allocate nothing.
  if (!ggml_testing::AllocCounter::Supported()) return;
  const std::vector<WindowResult> first = b->results;
  int64_t allocations = 0;
  {
    ggml_testing::ScopedAllocCounter count;
    s = (*sched)->Run(n, DecodeJob, b.get());
    allocations = count.allocations();
  }
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(allocations, 0);
  for (int w = 0; w < n; ++w) EXPECT_EQ(b->results[w].tokens, first[w].tokens) << "window " << w;
}

TEST_F(DecodeSchedulerTinyEnTest, GreedyWithFallbackBatchedEqualsAlone) {
  DecodingParams dp;  // greedy at 0, fallback to best_of 5 sampled: 5 decoders per window
  dp.compression_ratio_thold = 0.0f;
  BatchedEqualsAlone(4, dp);
}

TEST_F(DecodeSchedulerTinyEnTest, BeamSearchBatchedEqualsAlone) {
  DecodingParams dp;
  dp.beam_size = 3;
  dp.beam_search = true;
  dp.temperature_inc = 0.0f;
  BatchedEqualsAlone(3, dp);
}

TEST_F(DecodeSchedulerTinyEnTest, Errors) {
  EXPECT_EQ(DecodeScheduler::Create(nullptr, 1).status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::unique_ptr<InferenceState>> st =
      InferenceState::Create(*model_, 4, 1, nullptr, EncoderOptions(), 2);
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(DecodeScheduler::Create(st->get(), 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DecodeScheduler::Create(st->get(), 3).status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::unique_ptr<DecodeScheduler>> sched = DecodeScheduler::Create(st->get(), 2);
  ASSERT_TRUE(sched.ok()) << sched.status();
  EXPECT_EQ((*sched)->Run(-1, DecodeJob, nullptr).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*sched)->Run(1, nullptr, nullptr).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE((*sched)->Run(0, DecodeJob, nullptr).ok());

  // A slot's decoders are [0, 2): others are refused, naming the range.
  auto bad = [](void*, int job, SlotBackend& b) -> absl::Status {
    const Token sot = model_->special().sot;
    const int d = 2;
    if (job == 0) return b.Decode(d, &sot, 1, 0);
    if (job == 1) return b.DecodeBatch(&d, &sot, 1, 0);
    return b.DecodeBatch(&d, &sot, 0, 0);
  };
  for (int job = 0; job < 3; ++job) {
    struct One {
      int job;
      absl::Status (*fn)(void*, int, SlotBackend&);
    } one{job, bad};
    absl::Status s = (*sched)->Run(
        1, [](void* a, int, SlotBackend& b) { return static_cast<One*>(a)->fn(nullptr, static_cast<One*>(a)->job, b); },
        &one);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << job << ": " << s;
    EXPECT_NE(s.message().find(job < 2 ? "[0, 2)" : "1..2"), std::string::npos) << s;
  }
  // A step on a window never encoded: the state's FailedPrecondition comes back to the job.
  absl::Status s = (*sched)->Run(2, [](void*, int, SlotBackend& b) {
    const Token sot = model_->special().sot;
    return b.Decode(0, &sot, 1, 0);
  }, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;

  // After a failure no new job starts: on one slot, job 1 of 6 fails, and jobs 2 .. 5 never run.
  absl::StatusOr<std::unique_ptr<DecodeScheduler>> one_slot = DecodeScheduler::Create(st->get(), 1);
  ASSERT_TRUE(one_slot.ok()) << one_slot.status();
  std::atomic<int> started{0};
  s = (*one_slot)->Run(6, [](void* a, int job, SlotBackend&) {
    static_cast<std::atomic<int>*>(a)->fetch_add(1);
    return job == 1 ? absl::DataLossError("job 1") : absl::OkStatus();
  }, &started);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_EQ(started.load(), 2);
  one_slot->reset();

  // The abort callback cancels the next graph.
  (*sched)->SetAbort([](void*) { return true; }, nullptr);
  s = (*sched)->Run(1, [](void*, int, SlotBackend& b) {
    const std::vector<float>& mel = (*mels_)[0];
    return b.Encode(mel.data(), Frames(0), 0, 0, Frames(0));
  }, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled) << s;
}

}  // namespace
}  // namespace whisper
