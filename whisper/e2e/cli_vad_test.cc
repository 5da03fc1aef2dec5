// End-to-end: `whisper:cli --vad` (Silero v6, models/ggml-silero-v6.bin) on a 60 s clip built at
// test time: jfk.wav (11 s), 40 s of zeros, then jfk.wav's first 9 s. With --vad the encoder runs
// once instead of 3 times, greedy or at beam 5, as faster-whisper's windows (the silence is not
// transcribed: stderr's "encode time = ... / N runs"),
// and every segment lies in the speech (none overlaps [11.5, 50.5] s); greedy and beam 5. Without
// -vm the model is models/ggml-silero-v6.bin; a missing -vm file is exit 1 naming it.
#include <regex>
#include <utility>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "whisper/e2e/cli_runner.h"
#include "whisper/e2e/wav_files.h"

namespace whisper_e2e {
namespace {

int EncodeRuns(const std::string& err) {
  static const std::regex re(R"(encode time = +[0-9.]+ ms / +(\d+) runs)");
  std::smatch m;
  return std::regex_search(err, m, re) ? std::stoi(m[1]) : -1;
}

class CliVadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(ModelAvailable());
    dir_ = MakeModelWorkDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    // The VAD model beside the Whisper one in the work dir's models/.
    const std::string vad = testdata::ModelPath("ggml-silero-v6.bin");
    ASSERT_EQ(symlink(vad.c_str(), (dir_ + "/models/ggml-silero-v6.bin").c_str()), 0) << vad;
    std::vector<int16_t> jfk = ReadPcm16Mono16k(testdata::SharedData("jfk.wav"));
    ASSERT_EQ(jfk.size(), 176000u);
    std::vector<int16_t> clip(jfk);
    clip.resize(clip.size() + 40 * 16000, 0);
    clip.insert(clip.end(), jfk.begin(), jfk.begin() + 9 * 16000);
    ASSERT_EQ(clip.size(), 60u * 16000);
    wav_ = dir_ + "/speech_silence_speech.wav";
    WritePcm16Wav(wav_, clip);
  }
  std::string dir_, wav_;
};

TEST_F(CliVadTest, SkipsTheSilence) {
  // Windows without VAD: faster-whisper 1.2.1 on the same clip and weights (suppress_tokens=[], as
  // the CLI without -sns) starts 3 windows greedy (0, 30 and 59 s) and at beam 5: 0, 30 and 59 s
  // conditioned on the previous text, 0, 30 and 59.98 s without it (its window from 30 s ends at
  // <|29.98|> and goes on to <|endoftext|>: CTranslate2 has no end-of-audio stop).
  for (const auto& [beam, plain_windows] : {std::pair<const char*, int>{"1", 3}, {"5", 3}}) {
    SCOPED_TRACE(std::string("-bs ") + beam);
    const CliRun plain = RunCli({"-m", "models/ggml-tiny.en.bin", "-f", wav_, "-t", "2", "-bs", beam}, dir_);
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    const CliRun vad = RunCli({"-m", "models/ggml-tiny.en.bin", "-f", wav_, "-t", "2", "-bs", beam, "--vad"}, dir_);
    ASSERT_EQ(vad.exit_code, 0) << vad.err;
    EXPECT_EQ(EncodeRuns(plain.err), plain_windows);
    EXPECT_EQ(EncodeRuns(vad.err), 1);
    const std::vector<CliSegment> segs = ParseSegments(vad.out);
    ASSERT_GE(segs.size(), 2u) << vad.out;
    bool early = false, late = false;
    for (const CliSegment& s : segs) {
      EXPECT_TRUE(s.t1_ms <= 11500 || s.t0_ms >= 50500) << "[" << s.t0_ms << ", " << s.t1_ms << "]" << s.text;
      EXPECT_LE(s.t0_ms, s.t1_ms);
      EXPECT_LE(s.t1_ms, 60000);
      early |= s.t1_ms <= 11500 && s.text.find("Americans") != std::string::npos;
      late |= s.t0_ms >= 50500 && s.text.find("Americans") != std::string::npos;
    }
    EXPECT_TRUE(early && late) << vad.out;
  }
}

TEST_F(CliVadTest, MissingVadModelIsAnError) {
  const CliRun run = RunCli({"-m", "models/ggml-tiny.en.bin", "-f", wav_, "--vad", "-vm", "no-such-vad.bin"}, dir_);
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find("no-such-vad.bin"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace whisper_e2e
