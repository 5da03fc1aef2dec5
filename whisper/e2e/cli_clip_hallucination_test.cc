// End-to-end: faster-whisper 1.2.1's clip_timestamps and hallucination_silence_threshold through
// `whisper:cli` (--clip-timestamps, --hallucination-silence-threshold, greedy `-bs 1 -sns` as
// faster-whisper's beam_size=1 with suppress_tokens [-1]) against faster-whisper's segments on the
// same tiny.en weights (testdata/fw_clip_hallucination.json, tools/reference/fw_clip_hallucination.py):
//   - clip_timestamps "1.5,5,7" on jfk.wav and "5,40,100,150" on long_speech.flac: every segment's
//     text tokens and times; "98.8,123.0" with -mc 0, whose last segment ends 24.8 s past the clip
//     in faster-whisper's output and ours;
//   - hallucination_silence_threshold 2 with -dtw tiny.en on jfk.wav (nothing to skip: the same
//     2 segments) and on 80 s built from long_speech.flac (85-100 s, 25 s of zeros, 100-140 s),
//     where faster-whisper drops the window after the zeros ("This will be a new maid...", an
//     anomalous segment 4.9 s into it) and decodes again from its start: text tokens equal, times
//     within 40 ms (our DTW puts that segment's first word 20 ms earlier, 18.44 s against 18.46 s,
//     so the window restarts at 18.44 s; see README "Word timestamps" for DTW's differences).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testdata/paths.h"
#include "whisper/e2e/cli_runner.h"
#include "whisper/e2e/reference.h"
#include "whisper/e2e/wav_files.h"

namespace whisper_e2e {
namespace {

constexpr char kReference[] = "testdata/fw_clip_hallucination.json";
constexpr int kRate = 16000;

struct OurSegment {
  int64_t t0_ms = 0;
  int64_t t1_ms = 0;
  std::string text;
  std::vector<int> text_tokens;
};

class CliClipHallucinationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(ModelAvailable());
    dir_ = MakeModelWorkDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }

  // The CLI's -ojf segments of `wav` (greedy, -sns) with `flags`.
  std::vector<OurSegment> Run(const std::string& wav, const std::vector<std::string>& flags) {
    std::vector<std::string> args = {"-m", "models/ggml-tiny.en.bin", "-f", wav, "-bs", "1", "-sns", "-t", "2",
                                     "-np", "-ojf", "-of", dir_ + "/out"};
    args.insert(args.end(), flags.begin(), flags.end());
    const CliRun run = RunCli(args, dir_);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    const nlohmann::json j = nlohmann::json::parse(ReadFileOrFail(dir_ + "/out.json"), nullptr, false);
    std::vector<OurSegment> out;
    if (j.is_discarded()) {
      ADD_FAILURE() << "bad -ojf output";
      return out;
    }
    for (const auto& s : j["transcription"]) {
      OurSegment o;
      o.t0_ms = s["offsets"]["from"].get<int64_t>();
      o.t1_ms = s["offsets"]["to"].get<int64_t>();
      o.text = s["text"].get<std::string>();
      for (const auto& t : s["tokens"]) {
        if (t["id"].get<int>() < 50256) o.text_tokens.push_back(t["id"].get<int>());
      }
      out.push_back(std::move(o));
    }
    return out;
  }

  std::string dir_;
};

void ExpectSegments(const std::vector<OurSegment>& ours, const std::vector<ReferenceSegment>& ref,
                    int64_t time_tolerance_ms) {
  ASSERT_EQ(ours.size(), ref.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    EXPECT_EQ(ours[i].text_tokens, ref[i].text_tokens) << "segment " << i << ": " << ours[i].text;
    EXPECT_EQ(ours[i].text, ref[i].text) << "segment " << i;
    EXPECT_NEAR(ours[i].t0_ms, ref[i].t0_ms, time_tolerance_ms) << "segment " << i;
    EXPECT_NEAR(ours[i].t1_ms, ref[i].t1_ms, time_tolerance_ms) << "segment " << i;
  }
}

std::vector<std::string> Texts(const std::vector<ReferenceSegment>& segs) {
  std::vector<std::string> out;
  for (const ReferenceSegment& s : segs) out.push_back(s.text);
  return out;
}

TEST_F(CliClipHallucinationTest, ClipTimestampsOnJfkAreFasterWhispers) {
  const std::vector<ReferenceSegment> ref = LoadReferenceRun(kReference, "clip_jfk");
  ASSERT_EQ(ref.size(), 2u);
  ExpectSegments(Run(testdata::SharedData("jfk.wav"), {"--clip-timestamps", "1.5,5,7"}), ref, 0);
}

TEST_F(CliClipHallucinationTest, ClipTimestampsOnLongSpeechAreFasterWhispers) {
  const std::vector<ReferenceSegment> ref = LoadReferenceRun(kReference, "clip_long");
  ASSERT_EQ(ref.size(), 11u);
  // 5-40 s in two windows (5 s, 30.2 s), then 100-150 s in three (100 s, 126.36 s, 144.16 s).
  ExpectSegments(Run(testdata::SharedData("long_speech.flac"), {"--clip-timestamps", "5,40,100,150"}), ref, 0);
}

// A clip's last window may end its segment past the clip: on long_speech.flac's clip 98.8-123.0 s
// without the previous text (-mc 0), the window at 119.68 s hears 3.32 s and names <|28.14|>, so
// faster-whisper 1.2.1 ends " the world, unble" at 147.82 s (generate_segments cuts no segment at
// seek_clip_end); ours is the same, end included.
TEST_F(CliClipHallucinationTest, ClipsLastSegmentEndsWhereFasterWhispersDoes) {
  const std::vector<ReferenceSegment> ref = LoadReferenceRun(kReference, "clip_past_end");
  ASSERT_EQ(ref.size(), 6u);
  ASSERT_EQ(ref.back().t1_ms, 147820);
  ExpectSegments(Run(testdata::SharedData("long_speech.flac"), {"--clip-timestamps", "98.8,123.0", "-mc", "0"}), ref,
                 0);
}

TEST_F(CliClipHallucinationTest, HallucinationThresholdOnJfkIsFasterWhispers) {
  const std::vector<ReferenceSegment> ref = LoadReferenceRun(kReference, "hal_jfk");
  ASSERT_EQ(ref.size(), 2u);
  ExpectSegments(Run(testdata::SharedData("jfk.wav"), {"-dtw", "tiny.en", "--hallucination-silence-threshold", "2"}),
                 ref, 0);
}

TEST_F(CliClipHallucinationTest, HallucinationThresholdSkipsTheSilenceAsFasterWhisper) {
  const std::vector<ReferenceSegment> ref = LoadReferenceRun(kReference, "hal_silence");
  const std::vector<ReferenceSegment> baseline = LoadReferenceRun(kReference, "hal_silence", "baseline");
  ASSERT_EQ(ref.size(), 11u);
  ASSERT_NE(Texts(ref), Texts(baseline)) << "the option must change faster-whisper's output on this clip";
  std::vector<int16_t> pcm = ReadPcm16Mono16k(testdata::SharedData("long_speech.flac"));
  ASSERT_GE(pcm.size(), 140u * kRate);
  std::vector<int16_t> clip(pcm.begin() + 85 * kRate, pcm.begin() + 100 * kRate);
  clip.resize(clip.size() + 25 * kRate, 0);
  clip.insert(clip.end(), pcm.begin() + 100 * kRate, pcm.begin() + 140 * kRate);
  const std::string wav = dir_ + "/silence80.wav";
  WritePcm16Wav(wav, clip);
  const std::vector<OurSegment> with = Run(wav, {"-dtw", "tiny.en", "--hallucination-silence-threshold", "2"});
  ExpectSegments(with, ref, 40);
  // Without the option ours is faster-whisper's baseline (texts): the window after the zeros
  // starts with the hallucinated " This will be a new maid...".
  const std::vector<OurSegment> without = Run(wav, {"-dtw", "tiny.en"});
  ASSERT_EQ(without.size(), baseline.size());
  for (size_t i = 0; i < baseline.size(); ++i) EXPECT_EQ(without[i].text, baseline[i].text) << "segment " << i;
}

// A clip starting at or after the audio's end is skipped, as faster-whisper 1.2.1 skips it (no
// segment: its generate_segments moves to the next clip when seek >= the clip's end), and the CLI
// warns about it; the clip inside the audio is transcribed as when given alone.
TEST_F(CliClipHallucinationTest, ClipsPastTheEndAreWarnedAbout) {
  const std::string wav = testdata::SharedData("jfk.wav");
  const std::vector<OurSegment> alone = Run(wav, {"--clip-timestamps", "1,2"});
  std::vector<std::string> args = {"-m", "models/ggml-tiny.en.bin", "-f", wav, "-bs", "1", "-sns", "-t", "2",
                                   "-np", "-ojf", "-of", dir_ + "/out", "--clip-timestamps", "12,13,1,2,11"};
  const CliRun run = RunCli(args, dir_);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("clip 1 starts at 12.00 s, at or after the audio's end (11.00 s)"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("clip 3 starts at 11.00 s"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("clip 2 starts"), std::string::npos) << run.err;
  const nlohmann::json j = nlohmann::json::parse(ReadFileOrFail(dir_ + "/out.json"), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  ASSERT_EQ(j["transcription"].size(), alone.size());
  for (size_t i = 0; i < alone.size(); ++i) EXPECT_EQ(j["transcription"][i]["text"].get<std::string>(), alone[i].text);
}

TEST_F(CliClipHallucinationTest, BadValuesExit2) {
  const std::string wav = testdata::SharedData("jfk.wav");
  for (const std::vector<std::string>& flags : std::vector<std::vector<std::string>>{
           {"--clip-timestamps", "1,x"},
           {"--clip-timestamps", "-1,5"},
           {"--clip-timestamps", "1,5", "-ot", "1000"},
           {"--hallucination-silence-threshold", "-2"}}) {
    std::vector<std::string> args = {"-m", "models/ggml-tiny.en.bin", "-f", wav};
    args.insert(args.end(), flags.begin(), flags.end());
    const CliRun run = RunCli(args, dir_);
    EXPECT_EQ(run.exit_code, 2) << flags[0] << " " << flags[1] << ": " << run.err;
    EXPECT_NE(run.err.find(flags.size() > 2 ? "--clip-timestamps cannot" : flags[0]), std::string::npos) << run.err;
  }
}

}  // namespace
}  // namespace whisper_e2e
