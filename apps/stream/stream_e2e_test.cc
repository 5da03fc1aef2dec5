// //whisper:stream as a user runs it on a live source: audio piped to stdin at real-time pace, with
// -rt (real-time reading, as from a microphone; stream_pipe_test covers the lossless reading of a
// pipe fed faster than real time). The committed text
// (-f FILE) must be within 10% word error rate of the offline transcript of the same audio
// (whisper_full greedy over the whole clip, what `cli -bs 1` prints), with nothing dropped.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "apps/common/audio.h"
#include "apps/stream/stream_harness.h"
#include "apps/stream/wer.h"
#include "whisper/whisper.h"

namespace whisper::stream {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Offline(const std::vector<float>& x) {
  const std::string path = testdata::ModelPath("ggml-tiny.en.bin");
  whisper_context* ctx = whisper_init_from_file_with_params(path.c_str(), whisper_context_default_params());
  EXPECT_NE(ctx, nullptr) << testdata::MissingModelHint(path);
  if (ctx == nullptr) return "";
  whisper_full_params w = whisper_full_default_params(WHISPER_SAMPLING_GREEDY);
  w.n_threads = 2;
  w.print_progress = false;
  // The stream decodes each window without a text prompt (whisper-stream's default, no -kc), so
  // the offline reference does too: the comparison measures windowing, not prompting. (With
  // whisper.cpp's default prompting the 60 s clip's reference moves: WER 10.2% in this test.)
  w.n_max_text_ctx = 0;
  EXPECT_EQ(whisper_full(ctx, w, x.data(), static_cast<int>(x.size())), 0);
  std::string text;
  for (int i = 0; i < whisper_full_n_segments(ctx); ++i) text += whisper_full_get_segment_text(ctx, i);
  whisper_free(ctx);
  return text;
}

void CheckClip(const std::string& name, double seconds) {
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMono(testdata::SharedData(name));
  ASSERT_TRUE(audio.ok()) << audio.status();
  if (seconds > 0) audio->resize(std::min<size_t>(audio->size(), static_cast<size_t>(seconds * 16000)));
  const std::string offline = Offline(*audio);
  const std::string tmp = ::testing::TempDir();
  const std::string text_path = tmp + "/stream_" + name + ".txt", err_path = tmp + "/stream_" + name + ".err";
  absl::StatusOr<PacedRun> run =
      RunPaced("apps/stream/stream", {"-m", testdata::ModelPath("ggml-tiny.en.bin"), "-t", "2", "-f", text_path, "-rt"},
               *audio, 1.0, err_path);
  ASSERT_TRUE(run.ok()) << run.status();
  const std::string err = ReadFile(err_path);
  ASSERT_EQ(run->exit_code, 0) << err;
  EXPECT_THAT(err, ::testing::HasSubstr("input: <stdin> (a pipe): real time")) << err;
  EXPECT_THAT(err, ::testing::Not(::testing::HasSubstr("cannot process audio fast enough"))) << err;
  absl::StatusOr<AudioCounts> counts = ParseAudioCounts(err);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(counts->read, static_cast<long long>(audio->size()));
  EXPECT_EQ(counts->processed, static_cast<long long>(audio->size()));
  EXPECT_EQ(counts->dropped, 0);
  const std::string committed = ReadFile(text_path);
  const double wer = WordErrorRate(offline, committed);
  std::printf("%s (%.0f s of audio, %.1f s wall): WER %.3f\noffline:   %s\ncommitted: %s\n", name.c_str(),
              audio->size() / 16000.0, run->wall_s, wer, offline.c_str(), committed.c_str());
  EXPECT_LE(wer, 0.10);
  // What the terminal shows at the end is the committed text, line by line.
  const std::string screen = VisibleText(run->out, run->out.size());
  EXPECT_THAT(screen, ::testing::StartsWith("[Start speaking]\n"));
  EXPECT_EQ(screen.substr(17), committed);
}

TEST(StreamE2E, JfkAtRealTimePace) { CheckClip("jfk.wav", 0); }

TEST(StreamE2E, SixtySecondsAtRealTimePace) { CheckClip("long_speech.flac", 60); }

}  // namespace
}  // namespace whisper::stream
