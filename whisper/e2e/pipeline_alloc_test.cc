// Zero heap allocation in the transcription's compute path, with the pipeline built as
// apps/cli/cli.cc builds it (WhisperModel, InferenceState with DecodersNeeded(CLI decoding) decoders
// and 2 threads, MelSpectrogram sized for the first file, Transcribe with the CLI's default
// decoding: beam 5, best-of 5, fallback +0.2). After jfk.wav, a second file of the same length
// (jfk.mp3) costs 0 allocations in MelSpectrogram::Compute and in every Encode, Decode and CopyKv
// (counted by an adapter around the ModelBackend; Transcribe's own segment and prompt bookkeeping
// is outside the count). WindowDecoder::Run, the whole decoding of a window including its logit
// filters, beam bookkeeping and sampling, allocates nothing after its first use either.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "testing/alloc_counter.h"
#include "apps/common/audio.h"
#include "whisper/decoding.h"
#include "whisper/dtw.h"
#include "whisper/e2e/cli_runner.h"
#include "whisper/e2e/reference.h"
#include "whisper/mel.h"
#include "whisper/model.h"
#include "whisper/state.h"
#include "whisper/transcribe.h"
#include "whisper/word_timestamps.h"

namespace whisper {
namespace {

using ggml_testing::AllocCounter;

// The CLI's StateBackend; with `count`, it counts the heap allocations made inside each call
// (AllocCounter does not nest: a caller that counts around these calls passes count = false).
class CountingBackend : public ModelBackend {
 public:
  CountingBackend(InferenceState* state, bool count) : state_(state), count_(count) {}
  absl::Status Encode(const float* mel, int n_frames, int seek, int audio_ctx, int n_valid) override {
    Start();
    absl::Status st = state_->Encode(mel, n_frames, seek, audio_ctx, n_valid);
    Stop();
    ++n_encode_;
    return st;
  }
  absl::Status Decode(int d, const Token* tokens, int n, int n_past) override {
    Start();
    absl::Status st = state_->Decode(d, tokens, n, n_past);
    Stop();
    ++n_decode_;
    n_tokens_ += n;
    return st;
  }
  absl::Status DecodeBatch(const int* d, const Token* tokens, int n, int n_past) override {
    Start();
    absl::Status st = state_->DecodeBatch(d, tokens, n, n_past);
    Stop();
    ++n_decode_;
    n_tokens_ += n;
    return st;
  }
  void CopyKv(int src, int dst, int begin, int end) override {
    Start();
    state_->CopyKvRange(src, dst, begin, end);
    Stop();
  }
  const float* logits(int d) const override { return state_->logits(d); }
  int n_decoders() const override { return state_->n_decoders(); }
  void ParallelFor(int n, void (*fn)(void* arg, int i), void* arg) override {
    Start();
    state_->ParallelFor(n, fn, arg);
    Stop();
  }
  absl::StatusOr<AlignmentLogits> Align(const Token* tokens, int n, int logits_from) override {
    Start();
    absl::StatusOr<const float*> qk = state_->Align(tokens, n, logits_from);
    Stop();
    if (!qk.ok()) return qk.status();
    AlignmentLogits out;
    out.qk = *qk;
    out.n_heads = state_->n_alignment_heads();
    out.n_audio_ctx = state_->n_audio_ctx();
    out.logits = state_->align_logits();
    out.n_vocab = state_->model().hparams().n_vocab;
    return out;
  }

  void Reset() { allocations_ = n_encode_ = n_decode_ = n_tokens_ = 0; }
  int64_t allocations() const { return allocations_; }
  int n_encode() const { return n_encode_; }
  int n_decode() const { return n_decode_; }
  int n_tokens() const { return n_tokens_; }  // decoded over all Decode and DecodeBatch calls

 private:
  void Start() {
    if (count_) AllocCounter::Start();
  }
  void Stop() {
    if (count_) allocations_ += AllocCounter::Stop();
  }

  InferenceState* state_;
  const bool count_;
  int64_t allocations_ = 0;
  int n_encode_ = 0, n_decode_ = 0, n_tokens_ = 0;
};

class PipelineAllocTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(whisper_e2e::ModelAvailable());
    if (!AllocCounter::Supported()) GTEST_SKIP() << "allocation counting is not supported in this build";
    {  // The counter is linked in and sees this binary's allocations.
      AllocCounter::Start();
      auto probe = std::make_unique<std::vector<int>>(1000);
      ASSERT_GE(AllocCounter::Stop(), 2) << "the allocation counter does not count";
    }
    auto model = WhisperModel::Load(testdata::ModelPath("ggml-tiny.en.bin"));
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = std::move(*model);
    const WhisperHparams& hp = model_->hparams();
    // apps/cli/cli.cc's defaults (CliParams -> TranscribeParams).
    DecodingParams& dp = params_.decoding;
    dp.beam_size = 5;
    dp.best_of = 5;
    dp.temperature = 0.0f;
    dp.temperature_inc = 0.2f;
    dp.entropy_thold = 2.4f;
    dp.logprob_thold = -1.0f;
    dp.no_speech_thold = 0.6f;
    dp.max_tokens_per_window = hp.n_text_ctx / 2 - 4;
    dp.filter.blank_token = model_->vocab().id(" ");
    auto state = InferenceState::Create(*model_, DecodersNeeded(dp), 2);
    ASSERT_TRUE(state.ok()) << state.status();
    state_ = std::move(*state);
    for (const char* name : {"jfk.wav", "jfk.mp3"}) {
      auto audio = LoadAudio16kMono(testdata::SharedData(name));
      ASSERT_TRUE(audio.ok()) << audio.status();
      audio_.push_back(std::move(*audio));
    }
    ASSERT_EQ(audio_[0].size(), audio_[1].size());
    auto mel = MelSpectrogram::Create(model_->mel_filters().data(), hp.n_mels, model_->n_fft(), 2,
                                      static_cast<int64_t>(audio_[0].size()));
    ASSERT_TRUE(mel.ok()) << mel.status();
    mel_ = std::move(*mel);
  }

  // Mel of audio_[i], with the allocations Compute made in *allocations.
  MelView ComputeMel(int i, int64_t* allocations) {
    AllocCounter::Start();
    absl::StatusOr<MelView> mv = mel_->Compute(audio_[i].data(), static_cast<int64_t>(audio_[i].size()));
    *allocations = AllocCounter::Stop();
    EXPECT_TRUE(mv.ok()) << mv.status();
    return mv.ok() ? *mv : MelView();
  }

  int n_valid(int i) const { return static_cast<int>(audio_[i].size() / 160); }

  std::unique_ptr<WhisperModel> model_;
  std::unique_ptr<InferenceState> state_;
  std::unique_ptr<MelSpectrogram> mel_;
  std::vector<std::vector<float>> audio_;
  TranscribeParams params_;
};

TEST_F(PipelineAllocTest, SecondFileComputesWithoutAllocation) {
  CountingBackend backend(state_.get(), /*count=*/true);
  auto token_text = [&](Token t) -> const std::string& { return model_->vocab().token(t); };
  const std::vector<whisper_e2e::ReferenceSegment> ref =
      whisper_e2e::LoadReference("testdata/jfk_mp3_faster_whisper_beam5.json");
  ASSERT_EQ(ref.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE(i == 0 ? "jfk.wav (first use)" : "jfk.mp3 (second file)");
    int64_t mel_allocations = -1;
    const MelView mv = ComputeMel(i, &mel_allocations);
    ASSERT_NE(mv.data, nullptr);
    backend.Reset();
    std::vector<Segment> segments;
    TranscribeStats stats;
    const absl::Status st = Transcribe(backend, model_->special(), model_->hparams().n_text_ctx, token_text, mv.data,
                                       static_cast<int>(mv.n_len), n_valid(i), params_, &segments, &stats);
    ASSERT_TRUE(st.ok()) << st;
    // The work was real: one window, the decoder run for every beam at each step (the 5 beams
    // of a step in one DecodeBatch call), and faster-whisper's text.
    EXPECT_EQ(backend.n_encode(), 1);
    EXPECT_GT(backend.n_tokens(), 100);
    EXPECT_LT(backend.n_decode(), 40);
    ASSERT_EQ(segments.size(), ref.size());
    for (size_t s = 0; s < ref.size(); ++s) EXPECT_EQ(segments[s].text, ref[s].text);
    // Create sized everything (mel output for the first file's length, state buffers, graphs,
    // thread pools), so even the first file computes without allocating. Under AddressSanitizer
    // the mel workers' first wake-up allocates their thread-local storage through the sanitizer
    // (3 allocations, first use only), so there only the second file's mel is checked.
#if !defined(__SANITIZE_ADDRESS__)
    EXPECT_EQ(mel_allocations, 0);
#else
    if (i == 1) EXPECT_EQ(mel_allocations, 0);
#endif
    EXPECT_EQ(backend.allocations(), 0) << "over " << backend.n_encode() << " Encode and " << backend.n_decode()
                                        << " Decode calls";
  }
}

// WindowDecoder::Run as a whole (backend calls, logit filters, beam search, sampling, scoring):
// warmed on jfk.wav's window, then 0 allocations on jfk.mp3's, (a) with the CLI's decoding, whose
// tokens must equal faster-whisper's beam-5 window, and (b) with every temperature forced (beam 5
// at 0, then best-of 5 sampling at 0.2 ... 1.0) so that every decoding path runs.
TEST_F(PipelineAllocTest, WindowDecoderRunsWithoutAllocationAfterFirstUse) {
  const SpecialTokens& special = model_->special();
  const std::vector<std::vector<int>> ref = whisper_e2e::LoadReferenceWindows("testdata/jfk_mp3_faster_whisper_beam5.json");
  ASSERT_EQ(ref.size(), 1u);
  DecodingParams all_paths = params_.decoding;
  all_paths.logprob_thold = 0.0f;    // every average log-probability is below: always retry
  all_paths.no_speech_thold = 1.0f;  // and never call it silence
  ASSERT_EQ(DecodersNeeded(all_paths), state_->n_decoders());
  for (const DecodingParams& dp : {params_.decoding, all_paths}) {
    const bool forced = dp.logprob_thold == 0.0f;
    SCOPED_TRACE(forced ? "all temperatures" : "CLI decoding");
    CountingBackend backend(state_.get(), /*count=*/false);  // Run is counted as a whole
    WindowDecoder decoder(special, model_->hparams().n_text_ctx, dp);
    WindowResult result;
    const std::vector<Token> prompt = {special.sot};
    int64_t mel_allocations = 0;
    for (int i = 0; i < 2; ++i) {
      const MelView mv = ComputeMel(i, &mel_allocations);
      ASSERT_NE(mv.data, nullptr);
      ASSERT_TRUE(backend.Encode(mv.data, static_cast<int>(mv.n_len), 0, 0, n_valid(i)).ok());
      AllocCounter::Start();
      const absl::Status st = decoder.Run(backend, prompt, 0, n_valid(i), &result);
      const int64_t allocations = AllocCounter::Stop();
      ASSERT_TRUE(st.ok()) << st;
      if (i == 1) {
        EXPECT_EQ(allocations, 0) << "WindowDecoder::Run on the second window";
      } else {
        std::printf("%s: WindowDecoder::Run, first use: %lld allocations\n", forced ? "all temperatures" : "CLI",
                    static_cast<long long>(allocations));
      }
    }
    if (forced) {
      EXPECT_EQ(result.n_fallbacks, 5);  // 0.2, 0.4, 0.6, 0.8, 1.0
      EXPECT_FLOAT_EQ(result.temperature, 1.0f);
    } else {
      EXPECT_EQ(result.n_fallbacks, 0);
      EXPECT_EQ(std::vector<int>(result.tokens.begin(), result.tokens.end()), ref[0]);
    }
  }
}

// DTW word timestamps (the CLI's -dtw tiny.en): one Transcriber warmed on jfk.wav, then the
// whole of its Run on jfk.mp3 (encoder, beam search, the alignment pass, DTW, word rules, the
// segment list) makes no heap allocation, and the words were really timed.
TEST_F(PipelineAllocTest, WordTimestampsRunWithoutAllocationAfterFirstUse) {
  const WhisperHparams& hp = model_->hparams();
  auto heads = AlignmentHeadsFor(AheadsPreset::kTinyEn, 0, nullptr, 0, hp.n_text_layer, hp.n_text_head);
  ASSERT_TRUE(heads.ok()) << heads.status();
  ASSERT_TRUE(state_->SetAlignmentHeads(*heads).ok());
  WordTimestamps words(InferenceState::MaxAlignTokens(hp), hp.n_audio_ctx);
  TranscribeParams params = params_;
  params.word_timestamps = &words;
  CountingBackend backend(state_.get(), /*count=*/false);  // Run is counted as a whole
  auto token_text = [&](Token t) -> const std::string& { return model_->vocab().token(t); };
  Transcriber transcriber(model_->special(), hp.n_text_ctx, token_text);
  SegmentList segments;
  TranscribeStats stats;
  for (int i = 0; i < 2; ++i) {
    int64_t mel_allocations = 0;
    const MelView mv = ComputeMel(i, &mel_allocations);
    ASSERT_NE(mv.data, nullptr);
    words.Begin();
    AllocCounter::Start();
    const absl::Status st = transcriber.Run(backend, mv.data, static_cast<int>(mv.n_len), n_valid(i), params,
                                            &segments, &stats);
    const int64_t allocations = AllocCounter::Stop();
    ASSERT_TRUE(st.ok()) << st;
    ASSERT_EQ(segments.size(), 2u);
    int n_words = 0;
    for (size_t k = 0; k < segments.size(); ++k) {
      ASSERT_EQ(segments[k].word_begin.size(), segments[k].tokens.size());
      for (uint8_t b : segments[k].word_begin) n_words += b;
    }
    EXPECT_EQ(n_words, 22);  // faster-whisper's 22 words (testdata/word_timestamps_faster_whisper.json)
    if (i == 1) {
      EXPECT_EQ(allocations, 0) << "Transcriber::Run with word timestamps on the second file";
    } else {
      std::printf("word timestamps: Transcriber::Run, first use: %lld allocations\n",
                  static_cast<long long>(allocations));
    }
  }
  ASSERT_TRUE(state_->SetAlignmentHeads({}).ok());
}

}  // namespace
}  // namespace whisper
