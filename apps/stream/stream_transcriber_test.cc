// The streaming loop without a process or a clock: audio is pushed step by step into the
// AudioBuffer and Step() is called in between, so every run is the same. References: the offline
// transcript of the same audio by whisper_full (greedy, as the CLI with -bs 1), compared by word
// error rate; hand-made signals for the energy VAD. (The ring buffer: audio_buffer_test.)
#include "apps/stream/stream_transcriber.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "testing/alloc_counter.h"
#include "apps/common/audio.h"
#include "apps/stream/audio_buffer.h"
#include "apps/stream/wer.h"

namespace whisper::stream {
namespace {

TEST(VadSimple, QuietLastSecondIsTheEndOfSpeech) {
  const int rate = 16000;
  std::vector<float> x(2 * rate);
  // 1 s of a 440 Hz tone, then 1 s at 1/100 of its amplitude: speech ended.
  for (int i = 0; i < 2 * rate; ++i) x[i] = std::sin(2 * M_PI * 440 * i / rate) * (i < rate ? 0.5f : 0.005f);
  std::vector<float> y = x;
  EXPECT_TRUE(VadSimple(y.data(), static_cast<int>(y.size()), rate, 1000, 0.6f, 100.0f));
  // The same tone throughout: the last second is as loud as the whole.
  for (int i = 0; i < 2 * rate; ++i) x[i] = 0.5f * std::sin(2 * M_PI * 440 * i / rate);
  y = x;
  EXPECT_FALSE(VadSimple(y.data(), static_cast<int>(y.size()), rate, 1000, 0.6f, 100.0f));
  // Loud 20 Hz hum in the last second only: the 100 Hz high-pass removes most of it (gain
  // 20/sqrt(20^2+100^2) = 0.2), so the tone part still dominates and speech has ended.
  for (int i = 0; i < 2 * rate; ++i) {
    x[i] = i < rate ? 0.5f * std::sin(2 * M_PI * 440 * i / rate) : 0.5f * std::sin(2 * M_PI * 20 * i / rate);
  }
  y = x;
  EXPECT_TRUE(VadSimple(y.data(), static_cast<int>(y.size()), rate, 1000, 0.6f, 100.0f));
  y = x;
  EXPECT_FALSE(VadSimple(y.data(), static_cast<int>(y.size()), rate, 1000, 0.6f, 0.0f));  // no filter
  EXPECT_FALSE(VadSimple(y.data(), rate, rate, 1000, 0.6f, 100.0f));  // not longer than last_ms
}

class TranscriberTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string path = testdata::ModelPath("ggml-tiny.en.bin");
    whisper_context_params cp = whisper_context_default_params();
    ctx_ = whisper_init_from_file_with_params_no_state(path.c_str(), cp);
    ASSERT_NE(ctx_, nullptr) << testdata::MissingModelHint(path);
    state_ = whisper_init_state(ctx_);
    ASSERT_NE(state_, nullptr);
  }
  static void TearDownTestSuite() {
    whisper_free_state(state_);
    whisper_free(ctx_);
  }

  static std::string Offline(const std::vector<float>& x) {
    whisper_full_params w = whisper_full_default_params(WHISPER_SAMPLING_GREEDY);
    w.n_threads = 2;
    w.print_progress = false;
    // The stream decodes each window without a text prompt (whisper-stream's default, no -kc), so
    // the offline reference does too: the comparison measures windowing, not prompting. (With
    // whisper.cpp's default prompting the 60 s clip's reference moves: WER 10.2% in this test.)
    w.n_max_text_ctx = 0;
    EXPECT_EQ(whisper_full_with_state(ctx_, state_, w, x.data(), static_cast<int>(x.size())), 0);
    std::string text;
    for (int i = 0; i < whisper_full_n_segments_from_state(state_); ++i) {
      text += whisper_full_get_segment_text_from_state(state_, i);
    }
    return text;
  }

  // The first 60 s of ../shared/data/long_speech.flac, 16 kHz mono.
  static absl::StatusOr<std::vector<float>> LongSpeechFirst60s() {
    absl::StatusOr<std::vector<float>> audio = LoadAudio16kMono(testdata::SharedData("long_speech.flac"));
    if (audio.ok()) audio->resize(std::min<size_t>(audio->size(), 60 * 16000));
    return audio;
  }

  // The printed stream and the -f file of one StreamTranscriber: temporary files, closed at the end.
  struct Files {
    FILE* out = std::tmpfile();
    FILE* text = std::tmpfile();
    bool ok() const { return out != nullptr && text != nullptr; }
    ~Files() {
      if (out != nullptr) std::fclose(out);
      if (text != nullptr) std::fclose(text);
    }
  };

  // Steps until the transcriber has transcribed and committed its closed input.
  static void StepToTheEnd(StreamTranscriber& t) {
    while (true) {
      absl::StatusOr<bool> more = t.Step();
      ASSERT_TRUE(more.ok()) << more.status();
      if (!*more) break;
    }
  }

  static std::string ReadAll(FILE* f) {
    std::string s;
    std::rewind(f);
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof(buf), f)) > 0;) s.append(buf, n);
    return s;
  }

  static whisper_context* ctx_;
  static whisper_state* state_;
};
whisper_context* TranscriberTest::ctx_ = nullptr;
whisper_state* TranscriberTest::state_ = nullptr;

TEST_F(TranscriberTest, SlidingWindowsCommitTheOfflineTextWithoutAllocating) {
  absl::StatusOr<std::vector<float>> audio = LongSpeechFirst60s();
  ASSERT_TRUE(audio.ok()) << audio.status();
  const std::string offline = Offline(*audio);
  ASSERT_GT(NormalizedWords(offline).size(), 100u);

  StreamParams p;  // whisper-stream's defaults: --step 3000 --length 10000 --keep 200
  p.n_threads = 2;
  AudioBuffer in(CaptureCapacity(p));
  Files f;
  ASSERT_TRUE(f.ok());
  StreamTranscriber t(ctx_, state_, p, &in, f.out, f.text);
  const int n_step = p.step_ms * 16;
  int64_t steady_allocations = 0;
  int steps = 0;
  for (size_t pos = 0; pos < audio->size(); pos += n_step) {
    in.Push(audio->data() + pos, static_cast<int>(std::min<size_t>(n_step, audio->size() - pos)));
    if (pos + n_step >= audio->size()) in.Close();
    // Steps 1-4 warm up (two windows of each length); every later step is counted.
    const bool count = steps >= 4 && ggml_testing::AllocCounter::Supported();
    if (count) ggml_testing::AllocCounter::Start();
    absl::StatusOr<bool> more = t.Step();
    if (count) steady_allocations += ggml_testing::AllocCounter::Stop();
    ASSERT_TRUE(more.ok()) << more.status();
    ++steps;
  }
  StepToTheEnd(t);
  EXPECT_EQ(steps, 20);
  // A window closes every 2 steps (10000 / 3000 - 1) or when full; it commits the segments before
  // its last one (the audio after them opens the next window), so some closes commit nothing.
  EXPECT_GE(t.commits(), 5);
  EXPECT_LE(t.commits(), 10);
  EXPECT_EQ(t.dropped_samples(), 0);
  EXPECT_EQ(steady_allocations, 0) << "heap allocations in steps 5..20";
  const std::string committed = ReadAll(f.text);
  const double wer = WordErrorRate(offline, committed);
  std::printf("offline: %s\ncommitted: %s\nWER %.3f\n", offline.c_str(), committed.c_str(), wer);
  EXPECT_LE(wer, 0.10);
  // The printed stream: whisper-stream's running line, one newline per commit.
  const std::string printed = ReadAll(f.out);
  EXPECT_THAT(printed, ::testing::HasSubstr("\33[2K\r"));
  EXPECT_EQ(std::count(printed.begin(), printed.end(), '\n'), t.commits());
}

// A busy machine: steps come late, so a Take returns more than --step ms (here 3, 9, 3, 9 s in
// turn). The window then grows past --keep + --length ms rather than push carried audio out
// untranscribed: every word is committed, and nothing is dropped. (Before, the oldest carried
// audio left the window untranscribed: stream_e2e_test's 60 s clip lost words, WER 0.147, with a
// parallel build on the other core.)
TEST_F(TranscriberTest, LateStepsCommitTheWindowBeforeItsAudioLeaves) {
  absl::StatusOr<std::vector<float>> audio = LongSpeechFirst60s();
  ASSERT_TRUE(audio.ok()) << audio.status();
  const std::string offline = Offline(*audio);
  StreamParams p;
  p.n_threads = 2;
  AudioBuffer in(CaptureCapacity(p));
  Files f;
  ASSERT_TRUE(f.ok());
  StreamTranscriber t(ctx_, state_, p, &in, f.out, f.text);
  const int kSeconds[] = {3, 9, 3, 9};
  size_t pos = 0;
  for (int i = 0; pos < audio->size(); ++i) {
    const size_t n = std::min<size_t>(kSeconds[i % 4] * 16000, audio->size() - pos);
    in.Push(audio->data() + pos, static_cast<int>(n));
    pos += n;
    if (pos >= audio->size()) in.Close();
    absl::StatusOr<bool> more = t.Step();
    ASSERT_TRUE(more.ok()) << more.status();
  }
  StepToTheEnd(t);
  EXPECT_EQ(t.dropped_samples(), 0);
  const std::string committed = ReadAll(f.text);
  const double wer = WordErrorRate(offline, committed);
  const size_t n_offline = NormalizedWords(offline).size(), n_committed = NormalizedWords(committed).size();
  std::printf("late steps: %d commits (%d forced by overflow), %zu words (offline %zu), WER %.3f\ncommitted: %s\n",
              t.commits(), t.overflow_commits(), n_committed, n_offline, wer, committed.c_str());
  // Every word of the audio is committed (none silently left the window): as many words as the
  // offline transcript, within 5%; the last words of the clip are there.
  EXPECT_GE(n_committed, n_offline * 95 / 100);
  EXPECT_LE(n_committed, n_offline * 105 / 100);
  EXPECT_THAT(committed, ::testing::HasSubstr("besiege thy brow, and dig"));
  // Measured: 0.078, 119 words of 116 (before the window could grow: 84 words, WER 0.388).
  EXPECT_LE(wer, 0.10);
}

TEST_F(TranscriberTest, VadModeTranscribesSpeechOnceItEnds) {
  absl::StatusOr<std::vector<float>> jfk = LoadAudio16kMono(testdata::SharedData("jfk.wav"));
  ASSERT_TRUE(jfk.ok());
  // jfk.wav, then 4 s of silence: the VAD transcribes once the last second is quiet.
  std::vector<float> x = *jfk;
  x.resize(x.size() + 4 * 16000, 0.0f);
  StreamParams p;
  p.step_ms = 0;
  p.length_ms = 30000;
  p.n_threads = 2;
  AudioBuffer in(CaptureCapacity(p));
  Files f;
  ASSERT_TRUE(f.ok());
  StreamTranscriber t(ctx_, state_, p, &in, f.out, f.text);
  const int chunk = 2 * 16000;
  for (size_t pos = 0; pos + chunk <= x.size(); pos += chunk) {  // 7 steps of 2 s: 14 s
    in.Push(x.data() + pos, chunk);
    ASSERT_TRUE(t.Step().ok());
  }
  const std::string printed = ReadAll(f.out);
  EXPECT_EQ(t.commits(), 1);
  EXPECT_THAT(printed, ::testing::HasSubstr("### Transcription 0 START | t0 = 0 ms | t1 = 12000 ms"));
  EXPECT_THAT(printed, ::testing::HasSubstr("### Transcription 0 END"));
  EXPECT_LE(WordErrorRate(Offline(*jfk), ReadAll(f.text)), 0.10);
  in.Close();
  StepToTheEnd(t);
}

}  // namespace
}  // namespace whisper::stream
