// AudioOptions::max_seconds (audio.h): audio longer than the limit is refused from its header's
// frame count before a sample is decoded. The proof: a FLAC file whose STREAMINFO announces 3 s
// (48000 frames at 16 kHz, written here with libsndfile) cut to its first half still holds only
// about 1.5 s of frames, under a 2 s limit; it is refused naming the header's 3 s, so the refusal
// came from the header, not from the frames decoded.
#include <sndfile.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "apps/common/audio.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace whisper {
namespace {

using ::testing::HasSubstr;

// 48000 frames of a 16 kHz mono sine as FLAC bytes (libsndfile through a temporary file).
std::vector<unsigned char> ThreeSecondFlac() {
  const char* env = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(env != nullptr ? env : "/tmp") + "/audio_limit_test.flac";
  SF_INFO info{};
  info.samplerate = kSampleRate;
  info.channels = 1;
  info.format = SF_FORMAT_FLAC | SF_FORMAT_PCM_16;
  SNDFILE* f = sf_open(path.c_str(), SFM_WRITE, &info);
  if (f == nullptr) {
    ADD_FAILURE() << "sf_open(" << path << "): " << sf_strerror(nullptr);
    return {};
  }
  std::vector<float> frames(48000);
  for (size_t i = 0; i < frames.size(); ++i) frames[i] = 0.5f * std::sin(0.01f * static_cast<float>(i));
  EXPECT_EQ(sf_writef_float(f, frames.data(), 48000), 48000);
  sf_close(f);
  std::ifstream in(path, std::ios::binary);
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), {});
}

TEST(AudioLimitTest, HeaderLongerThanTheLimitIsRefusedBeforeDecoding) {
  std::vector<unsigned char> flac = ThreeSecondFlac();
  ASSERT_GT(flac.size(), 1000u);
  AudioOptions options;
  options.max_seconds = 3;  // at the limit: decoded
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMonoFromMemory(flac.data(), flac.size(), "a.flac", options);
  ASSERT_TRUE(audio.ok()) << audio.status();
  EXPECT_EQ(audio->size(), 48000u);
  options.max_seconds = 2.5;
  audio = LoadAudio16kMonoFromMemory(flac.data(), flac.size(), "a.flac", options);
  ASSERT_EQ(audio.status().code(), absl::StatusCode::kResourceExhausted) << audio.status();
  EXPECT_EQ(audio.status().message(),
            "a.flac: the audio is 3.000 s long (48000 frames at 16000 Hz, from its header): expected at most 2.5 s");
  // Cut in half: fewer frames than the 2 s limit are present, the header still says 3 s.
  flac.resize(flac.size() / 2);
  options.max_seconds = 0;
  AudioReport report;
  options.report = &report;
  audio = LoadAudio16kMonoFromMemory(flac.data(), flac.size(), "cut.flac", options);
  ASSERT_TRUE(audio.ok()) << audio.status();
  ASSERT_LT(report.frames_decoded, 32000);  // under 2 s decoded without a limit
  options.max_seconds = 2;
  audio = LoadAudio16kMonoFromMemory(flac.data(), flac.size(), "cut.flac", options);
  ASSERT_EQ(audio.status().code(), absl::StatusCode::kResourceExhausted) << audio.status();
  EXPECT_THAT(audio.status().message(), HasSubstr("cut.flac: the audio is 3.000 s long (48000 frames at 16000 Hz, "
                                                  "from its header): expected at most 2 s"));
}

}  // namespace
}  // namespace whisper
