#include "whisper/vad_segments.h"

#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace whisper {
namespace {

std::vector<std::vector<int64_t>> Spans(const std::vector<SpeechSpan>& v) {
  std::vector<std::vector<int64_t>> out;
  for (const SpeechSpan& s : v) out.push_back({s.start, s.end});
  return out;
}

// faster-whisper 1.2.1's get_speech_timestamps on onnxruntime's probabilities of the same audio
// (testdata/vad_onnxruntime.json, tools/reference/vad_onnxruntime.py), for jfk.wav and the clip
// with silences, under three option sets: VadOptions(), whisper.cpp's defaults, and those with a 2 s maximum.
TEST(VadSegmentsTest, EqualFasterWhisper) {
  std::ifstream f("testdata/vad_onnxruntime.json");
  const nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  VadParams whisper_cpp;
  whisper_cpp.min_speech_duration_ms = 250;
  whisper_cpp.min_silence_duration_ms = 100;
  whisper_cpp.speech_pad_ms = 30;
  VadParams max2s = whisper_cpp;
  max2s.max_speech_duration_s = 2.0f;
  const std::pair<const char*, VadParams> kOptions[] = {{"default", VadParams()}, {"whisper_cpp", whisper_cpp},
                                                        {"max2s", max2s}};
  int checked = 0;
  std::vector<SpeechSpan> got;
  for (const auto& clip : j["clips"]) {
    const std::vector<float> probs = clip["probs"].get<std::vector<float>>();
    for (const auto& [key, params] : kOptions) {
      SpeechTimestamps(probs.data(), static_cast<int>(probs.size()), clip["samples"].get<int64_t>(), params,
                       VadRules::kFasterWhisper, &got);
      EXPECT_EQ(Spans(got), clip["speech"][key].get<std::vector<std::vector<int64_t>>>())
          << clip["name"] << " " << key;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 6);
}

// whisper.cpp's rules, hand-derived. Windows of 512 samples; probabilities: speech in windows
// 2-11 and 14-15 (a 2-window gap: 1024 samples = 64 ms < 200 ms), silence after.
// Scan (min silence 100 ms = 1600 samples, so 4 windows of silence end a stretch; min speech
// 250 ms = 4000 samples): speech starts at 1024; the gap's silence (windows 12-13) is too short
// to end it; speech resumes; silence from window 16 (8192) ends it at window 20 (8192 + 4 x 512 >
// 1600): stretch [1024, 8192] (7168 samples > 4000: kept). Padding 30 ms = 480: [544, 8672].
// The audio ends at n_probs x 512 = 12288 under whisper.cpp's rules.
TEST(VadSegmentsTest, WhisperCppRulesHandDerived) {
  std::vector<float> probs(24, 0.05f);
  for (int i = 2; i <= 11; ++i) probs[i] = 0.9f;
  probs[14] = probs[15] = 0.9f;
  std::vector<SpeechSpan> got;
  SpeechTimestamps(probs.data(), 24, 12000, WhisperCppVadParams(), VadRules::kWhisperCpp, &got);
  EXPECT_EQ(Spans(got), (std::vector<std::vector<int64_t>>{{544, 8672}}));

  // Two stretches 160 ms apart after the scan merge into one (whisper.cpp only): speech in
  // windows 0-9 and 20-29 with min silence 50 ms (800 samples: 2 windows end a stretch).
  std::vector<float> two(40, 0.0f);
  for (int i = 0; i <= 9; ++i) two[i] = 1.0f;
  for (int i = 15; i <= 29; ++i) two[i] = 1.0f;
  VadParams p = WhisperCppVadParams();
  p.min_silence_duration_ms = 50;
  p.speech_pad_ms = 0;
  p.min_speech_duration_ms = 0;
  // Scan: [0, 5120] (silence from window 10, ended at window 12), [7680, 15360] (from window 30,
  // ended at window 32). Gap 2560 samples = 160 ms < 200 ms: merged into [0, 15360].
  SpeechTimestamps(two.data(), 40, 40 * 512, p, VadRules::kWhisperCpp, &got);
  EXPECT_EQ(Spans(got), (std::vector<std::vector<int64_t>>{{0, 15360}}));
  SpeechTimestamps(two.data(), 40, 40 * 512, p, VadRules::kFasterWhisper, &got);
  EXPECT_EQ(Spans(got), (std::vector<std::vector<int64_t>>{{0, 5120}, {7680, 15360}}));
}

TEST(VadSegmentsTest, SilenceAndEdgeCases) {
  std::vector<SpeechSpan> got = {{1, 2}};
  SpeechTimestamps(nullptr, 0, 0, VadParams(), VadRules::kFasterWhisper, &got);
  EXPECT_TRUE(got.empty());
  std::vector<float> silence(100, 0.1f);
  SpeechTimestamps(silence.data(), 100, 51200, VadParams(), VadRules::kFasterWhisper, &got);
  EXPECT_TRUE(got.empty());
  // Speech to the very end: the stretch ends at the audio's length (faster-whisper: the real
  // length, not the padded one), padding clamped to it.
  std::vector<float> speech(10, 0.99f);
  SpeechTimestamps(speech.data(), 10, 5000, VadParams(), VadRules::kFasterWhisper, &got);
  EXPECT_EQ(Spans(got), (std::vector<std::vector<int64_t>>{{0, 5000}}));
  SpeechTimestamps(speech.data(), 10, 5000, WhisperCppVadParams(), VadRules::kWhisperCpp, &got);
  EXPECT_EQ(Spans(got), (std::vector<std::vector<int64_t>>{{0, 5120}}));
}

}  // namespace
}  // namespace whisper
