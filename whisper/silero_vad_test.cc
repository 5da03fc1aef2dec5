// Silero VAD v6 on this runtime's graph against onnxruntime running the same ONNX file as
// faster-whisper does (testdata/vad_onnxruntime.json, tools/reference/vad_onnxruntime.py): every
// window's speech probability within 1e-4, on jfk.wav and on a clip with silences built from it;
// Run (the front end kBlock windows per graph) against Next window by window on long speech;
// then bad files.
#include "whisper/silero_vad.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testdata/paths.h"
#include "apps/common/audio.h"
#include "testing/alloc_counter.h"

namespace whisper {
namespace {

std::string ModelFile() { return testdata::ModelPath("ggml-silero-v6.bin"); }

std::vector<float> Reference(const std::string& clip) {
  std::ifstream f("testdata/vad_onnxruntime.json");
  const nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
  for (const auto& c : j["clips"]) {
    if (c["name"] == clip) return c["probs"].get<std::vector<float>>();
  }
  ADD_FAILURE() << "no clip " << clip;
  return {};
}

void ExpectProbabilities(SileroVad& vad, std::vector<float> audio, const std::string& clip) {
  audio.resize((audio.size() + SileroVad::kWindow - 1) / SileroVad::kWindow * SileroVad::kWindow, 0.0f);
  // Every window from a fresh state, as faster-whisper runs it (the audio zero-padded to windows).
  vad.Reset();
  std::vector<float> probs;
  for (size_t w = 0; w < audio.size(); w += SileroVad::kWindow) {
    const absl::StatusOr<float> p = vad.Next(audio.data() + w);
    ASSERT_TRUE(p.ok()) << p.status();
    probs.push_back(*p);
  }
  // The same through Run (blocks of 64 windows and a partial last one).
  vad.Reset();
  std::vector<float> run(probs.size());
  ASSERT_TRUE(vad.Run(audio.data(), static_cast<int>(run.size()), run.data()).ok());
  for (size_t i = 0; i < run.size(); ++i) EXPECT_NEAR(run[i], probs[i], 1e-6) << clip << " window " << i;
  const std::vector<float> ref = Reference(clip);
  ASSERT_EQ(probs.size(), ref.size()) << clip;
  double worst = 0.0;
  int speech = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    worst = std::max(worst, std::fabs(double(probs[i]) - ref[i]));
    speech += ref[i] > 0.5f;
  }
  std::printf("%s: %zu windows (%d above 0.5), largest difference from onnxruntime %.2e\n", clip.c_str(),
              ref.size(), speech, worst);
  EXPECT_LE(worst, 1e-4) << clip;
  EXPECT_GT(speech, 10) << clip;  // the clips do hold speech
}

class SileroVadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto vad = SileroVad::Load(ModelFile());
    ASSERT_TRUE(vad.ok()) << vad.status() << " (tools/setup.sh converts the model)";
    vad_ = std::move(*vad);
    auto jfk = LoadAudio16kMono(testdata::SharedData("jfk.wav"));
    ASSERT_TRUE(jfk.ok()) << jfk.status();
    jfk_ = std::move(*jfk);
  }
  std::unique_ptr<SileroVad> vad_;
  std::vector<float> jfk_;
};

TEST_F(SileroVadTest, JfkEqualsOnnxRuntime) { ExpectProbabilities(*vad_, jfk_, "jfk"); }

// 1 s of zeros, jfk.wav's first 3 s, 2 s of zeros, its next 3 s
// (tools/reference/vad_onnxruntime.py's "gap"); the state carries through the silences. Twice, to
// check that Reset starts afresh.
TEST_F(SileroVadTest, ClipWithSilencesEqualsOnnxRuntime) {
  const size_t sr = 16000;
  std::vector<float> gap(sr, 0.0f);
  gap.insert(gap.end(), jfk_.begin(), jfk_.begin() + 3 * sr);
  gap.insert(gap.end(), 2 * sr, 0.0f);
  gap.insert(gap.end(), jfk_.begin() + 3 * sr, jfk_.begin() + 6 * sr);
  ExpectProbabilities(*vad_, gap, "gap");
  ExpectProbabilities(*vad_, gap, "gap");
}

// 90 s of long_speech.flac (LibriVox sonnets; 2812 windows: 43 blocks of 64 and a partial one of
// 60): Run's probabilities equal Next's, window by window, within 1e-5, whether the audio comes
// in one call or in pieces that split blocks, leave partial blocks and windows run one at a time
// (the context and the LSTM state carry over).
// After the first call Run allocates nothing.
TEST_F(SileroVadTest, BlockedFrontEndEqualsPerWindowOnLongSpeech) {
  auto audio = LoadAudio16kMono(testdata::SharedData("long_speech.flac"));
  ASSERT_TRUE(audio.ok()) << audio.status();
  const int n = 90 * 16000 / SileroVad::kWindow;
  ASSERT_GE(audio->size(), static_cast<size_t>(n) * SileroVad::kWindow);
  std::vector<float> per_window(n);
  vad_->Reset();
  for (int w = 0; w < n; ++w) {
    const absl::StatusOr<float> p = vad_->Next(audio->data() + static_cast<size_t>(w) * SileroVad::kWindow);
    ASSERT_TRUE(p.ok()) << p.status();
    per_window[w] = *p;
  }
  auto expect_equal = [&](const std::vector<float>& got, const char* how) {
    double worst = 0.0;
    int speech = 0;
    for (int w = 0; w < n; ++w) {
      worst = std::max(worst, std::fabs(double(got[w]) - per_window[w]));
      speech += per_window[w] > 0.5f;
    }
    std::printf("%s: %d windows (%d above 0.5), largest difference from Next %.2e\n", how, n, speech, worst);
    EXPECT_LE(worst, 1e-5) << how;
    EXPECT_GT(speech, n / 4) << how;  // it is speech
  };
  std::vector<float> blocked(n);
  vad_->Reset();
  ASSERT_TRUE(vad_->Run(audio->data(), n, blocked.data()).ok());
  expect_equal(blocked, "one call");
  // Pieces of 100, 1, 64, 63, 5 windows and the rest, counted for allocations after warm-up.
  std::fill(blocked.begin(), blocked.end(), -1.0f);
  vad_->Reset();
  const bool count = ggml_testing::AllocCounter::Supported();
  int done = 0;
  for (int piece : {100, 1, 64, 63, 5, n - 233}) {
    if (count && done > 0) ggml_testing::AllocCounter::Start();
    const float* from = audio->data() + static_cast<size_t>(done) * SileroVad::kWindow;
    ASSERT_TRUE(vad_->Run(from, piece, blocked.data() + done).ok());
    if (count && done > 0) {
      EXPECT_EQ(ggml_testing::AllocCounter::Stop(), 0) << "piece at window " << done;
    }
    done += piece;
  }
  expect_equal(blocked, "pieces");
  EXPECT_TRUE(absl::IsInvalidArgument(vad_->Run(nullptr, 1, blocked.data())));
  EXPECT_TRUE(absl::IsInvalidArgument(vad_->Run(audio->data(), -1, blocked.data())));
  EXPECT_TRUE(vad_->Run(nullptr, 0, nullptr).ok());
}

// Run's front end on 2 and 3 threads (SetThreads) gives the 1-thread probabilities bit for bit, on
// 60 s of long_speech.flac (1875 windows: 29 blocks of 64 and a partial one of 19), and allocates
// nothing after the first call; n_threads outside [1, 64] is an error that keeps the setting.
TEST_F(SileroVadTest, ThreadedFrontEndIsBitIdentical) {
  auto audio = LoadAudio16kMono(testdata::SharedData("long_speech.flac"));
  ASSERT_TRUE(audio.ok()) << audio.status();
  const int n = 60 * 16000 / SileroVad::kWindow;
  ASSERT_GE(audio->size(), static_cast<size_t>(n) * SileroVad::kWindow);
  std::vector<float> one(n), many(n);
  ASSERT_EQ(vad_->n_threads(), 1);
  vad_->Reset();
  ASSERT_TRUE(vad_->Run(audio->data(), n, one.data()).ok());
  int speech = 0;
  for (float p : one) speech += p > 0.5f;
  EXPECT_GT(speech, n / 4);  // it is speech
  for (int threads : {2, 3}) {
    ASSERT_TRUE(vad_->SetThreads(threads).ok());
    EXPECT_EQ(vad_->n_threads(), threads);
    for (int round = 0; round < 2; ++round) {
      std::fill(many.begin(), many.end(), -1.0f);
      vad_->Reset();
      const bool count = round == 1 && ggml_testing::AllocCounter::Supported();
      if (count) ggml_testing::AllocCounter::Start();
      ASSERT_TRUE(vad_->Run(audio->data(), n, many.data()).ok());
      if (count) {
        EXPECT_EQ(ggml_testing::AllocCounter::Stop(), 0) << threads << " threads";
      }
      EXPECT_EQ(std::memcmp(one.data(), many.data(), sizeof(float) * n), 0) << threads << " threads, round " << round;
    }
  }
  EXPECT_TRUE(absl::IsInvalidArgument(vad_->SetThreads(0)));
  EXPECT_TRUE(absl::IsInvalidArgument(vad_->SetThreads(65)));
  EXPECT_EQ(vad_->n_threads(), 3);
  ASSERT_TRUE(vad_->SetThreads(1).ok());
  vad_->Reset();
  ASSERT_TRUE(vad_->Run(audio->data(), n, many.data()).ok());
  EXPECT_EQ(std::memcmp(one.data(), many.data(), sizeof(float) * n), 0) << "back to 1 thread";
}

// Truncated and altered files: an error naming the file and the field, never a crash.
TEST(SileroVadFileTest, BadFilesAreErrors) {
  std::ifstream in(ModelFile(), std::ios::binary);
  ASSERT_TRUE(in.good()) << ModelFile();
  const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string path = std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp") + "/bad.bin";
  auto load = [&](const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
    return SileroVad::Load(path).status();
  };
  EXPECT_TRUE(absl::IsNotFound(SileroVad::Load(path + ".missing").status()));
  for (size_t cut : {size_t{0}, size_t{3}, size_t{20}, size_t{100}, size_t{5000}, good.size() - 1}) {
    const absl::Status st = load(good.substr(0, cut));
    EXPECT_FALSE(st.ok()) << cut;
    EXPECT_NE(st.message().find(path), absl::string_view::npos) << st;
  }
  std::string bad = good;
  bad[0] ^= 1;
  EXPECT_NE(load(bad).message().find("magic"), absl::string_view::npos);
  EXPECT_NE(load("").message().find(path + ": empty file (0 bytes), expected a Silero VAD model"),
            absl::string_view::npos);
  // A Whisper model (its first 64 bytes are all Load reads of it) is named as one.
  std::ifstream whisper_in(testdata::ModelPath("ggml-tiny.en.bin"), std::ios::binary);
  std::string whisper_head(4096, '\0');
  whisper_in.read(&whisper_head[0], 4096);
  ASSERT_EQ(whisper_in.gcount(), 4096) << testdata::MissingModelHint(testdata::ModelPath("ggml-tiny.en.bin"));
  EXPECT_NE(load(whisper_head).message().find(path + ": a whisper.cpp ggml Whisper model, not a Silero VAD model"),
            absl::string_view::npos);
  bad = good;
  bad[4 + 4 + 10] = 5;  // version major
  EXPECT_NE(load(bad).message().find("only Silero VAD v6"), absl::string_view::npos);
  bad = good;
  bad[4 + 4 + 10 + 12] = 1;  // window size 512 -> 513
  EXPECT_NE(load(bad).message().find("window size: 513, expected 512"), absl::string_view::npos) << load(bad);
  EXPECT_NE(load(good + "x").message().find("truncated"), absl::string_view::npos);
}

}  // namespace
}  // namespace whisper
