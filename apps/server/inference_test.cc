// The server's request handling on the real tiny.en model, without HTTP. References: faster-whisper
// 1.2.1's greedy segments for jfk.wav (testdata/jfk_faster_whisper_tokens.json: times, tokens and
// text), whisper-server's and OpenAI's documented reply shapes, and hand-made WAV bytes.
#include "apps/server/inference.h"

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testdata/paths.h"
#include "apps/server/log_capture.h"
#include "apps/server/state_pool.h"

namespace whisper::server {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using json = nlohmann::json;

const std::vector<std::string> kDefaults = {"-bs", "1", "-bo", "2", "-t", "2"};  // the server's

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A canonical 44-byte-header RIFF/WAVE file of 16 kHz mono 16-bit PCM holding `n` zero samples.
std::string SilentWav(uint32_t n) {
  std::string w;
  auto u32 = [&w](uint32_t v) { for (int i = 0; i < 4; ++i) w.push_back(static_cast<char>(v >> (8 * i))); };
  auto u16 = [&w](uint16_t v) { for (int i = 0; i < 2; ++i) w.push_back(static_cast<char>(v >> (8 * i))); };
  w += "RIFF";
  u32(36 + 2 * n);
  w += "WAVEfmt ";
  u32(16);
  u16(1);          // PCM
  u16(1);          // mono
  u32(16000);      // rate
  u32(32000);      // bytes per second
  u16(2);          // block align
  u16(16);         // bits
  w += "data";
  u32(2 * n);
  w.append(2 * n, '\0');
  return w;
}

// jfk.wav's 16-bit samples (its "data" chunk; the file also has a LIST chunk).
std::vector<int16_t> WavSamples(const std::string& wav) {
  size_t at = 12;
  while (at + 8 <= wav.size()) {
    uint32_t n = 0;
    for (int i = 0; i < 4; ++i) n |= static_cast<uint32_t>(static_cast<uint8_t>(wav[at + 4 + i])) << (8 * i);
    if (wav.compare(at, 4, "data") == 0) {
      std::vector<int16_t> out(std::min<size_t>(n, wav.size() - at - 8) / 2);
      for (size_t i = 0; i < out.size(); ++i) {
        out[i] = static_cast<int16_t>(static_cast<uint8_t>(wav[at + 8 + 2 * i]) |
                                      (static_cast<uint8_t>(wav[at + 9 + 2 * i]) << 8));
      }
      return out;
    }
    at += 8 + n + (n & 1);
  }
  return {};
}

// A 16 kHz stereo 16-bit WAV: channel 0 = trunc(x * gain0), channel 1 = trunc(x * gain1) for
// each sample x of `mono` (as tools/whisper_cpp/test_compat.sh's stereo clip, Python int()).
std::string StereoWav(const std::vector<int16_t>& mono, double gain0, double gain1) {
  std::string w;
  auto u32 = [&w](uint32_t v) { for (int i = 0; i < 4; ++i) w.push_back(static_cast<char>(v >> (8 * i))); };
  auto u16 = [&w](uint16_t v) { for (int i = 0; i < 2; ++i) w.push_back(static_cast<char>(v >> (8 * i))); };
  const uint32_t bytes = static_cast<uint32_t>(4 * mono.size());
  w += "RIFF";
  u32(36 + bytes);
  w += "WAVEfmt ";
  u32(16);
  u16(1);      // PCM
  u16(2);      // stereo
  u32(16000);  // rate
  u32(64000);  // bytes per second
  u16(4);      // block align
  u16(16);     // bits
  w += "data";
  u32(bytes);
  for (int16_t x : mono) {
    u16(static_cast<uint16_t>(static_cast<int16_t>(x * gain0)));
    u16(static_cast<uint16_t>(static_cast<int16_t>(x * gain1)));
  }
  return w;
}

class InferenceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    InstallLogCapture(/*quiet=*/true);
    const std::string path = testdata::ModelPath("ggml-tiny.en.bin");
    absl::StatusOr<std::unique_ptr<LoadedModel>> m = LoadedModel::Load(path, 1, 0, WHISPER_GGML_DECODING_OPENAI);
    ASSERT_TRUE(m.ok()) << m.status() << "\n" << testdata::MissingModelHint(path);
    model_ = m->release();
    jfk_ = new std::string(ReadFile(testdata::SharedData("jfk.wav")));
    ASSERT_GT(jfk_->size(), 300000u);
  }
  static void TearDownTestSuite() {
    delete model_;
    delete jfk_;
  }

  static Form JfkForm(std::vector<std::pair<std::string, std::string>> fields) {
    Form f;
    f.emplace("file", FormValue{*jfk_, "jfk.wav", true});
    for (auto& [k, v] : fields) f.emplace(k, FormValue{v, "", false});
    return f;
  }
  static Reply Run(Api api, const Form& form) { return HandleTranscription(api, form, kDefaults, *model_); }

  static LoadedModel* model_;
  static std::string* jfk_;
};
LoadedModel* InferenceTest::model_ = nullptr;
std::string* InferenceTest::jfk_ = nullptr;

// faster-whisper's greedy segments of jfk.wav.
constexpr char kSeg0[] = " And so my fellow Americans ask not what your country can do for you";
constexpr char kSeg1[] = " ask what you can do for your country";

TEST_F(InferenceTest, WhisperServerFormats) {
  Reply r = Run(Api::kWhisperServer, JfkForm({}));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(json::parse(r.body), json({{"text", std::string(kSeg0) + "\n" + kSeg1 + "\n"}}));

  r = Run(Api::kWhisperServer, JfkForm({{"response_format", "text"}}));
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body, std::string(kSeg0) + "\n" + kSeg1 + "\n");

  r = Run(Api::kWhisperServer, JfkForm({{"response_format", "srt"}}));
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body, std::string("1\n00:00:00,000 --> 00:00:07,740\n") + kSeg0 + "\n\n2\n00:00:07,740 --> 00:00:10,740\n" +
                        kSeg1 + "\n\n");

  r = Run(Api::kWhisperServer, JfkForm({{"response_format", "vtt"}}));
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/vtt");
  EXPECT_EQ(r.body, std::string("WEBVTT\n\n00:00:00.000 --> 00:00:07.740\n") + kSeg0 +
                        "\n\n00:00:07.740 --> 00:00:10.740\n" + kSeg1 + "\n\n");
}

TEST_F(InferenceTest, WhisperServerVerboseJson) {
  const Reply r = Run(Api::kWhisperServer, JfkForm({{"response_format", "verbose_json"}}));
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = json::parse(r.body);
  EXPECT_EQ(j["task"], "transcribe");
  EXPECT_EQ(j["language"], "english");
  EXPECT_DOUBLE_EQ(j["duration"].get<double>(), 11.0);  // 176000 samples
  ASSERT_EQ(j["segments"].size(), 2u);
  const json& s0 = j["segments"][0];
  EXPECT_EQ(s0["id"], 0);
  EXPECT_EQ(s0["text"], kSeg0);
  EXPECT_DOUBLE_EQ(s0["start"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(s0["end"].get<double>(), 7.74);
  // whisper-server lists text tokens only (id < eot): faster-whisper's without the timestamps.
  EXPECT_THAT(s0["tokens"].get<std::vector<int>>(),
              ElementsAreArray({843, 523, 616, 5891, 3399, 1265, 407, 644, 534, 1499, 460, 466, 329, 345}));
  ASSERT_EQ(s0["words"].size(), 14u);
  EXPECT_EQ(s0["words"][0]["word"], " And");
  for (const json& w : s0["words"]) {
    EXPECT_GT(w["probability"].get<double>(), 0.0);
    EXPECT_LE(w["probability"].get<double>(), 1.0);
    EXPECT_LE(w["start"].get<double>(), w["end"].get<double>());
  }
  EXPECT_LT(s0["avg_logprob"].get<double>(), 0.0);
  EXPECT_GT(s0["compression_ratio"].get<double>(), 0.5);
  EXPECT_GE(s0["no_speech_prob"].get<double>(), 0.0);
  EXPECT_LE(s0["no_speech_prob"].get<double>(), 1.0);
  EXPECT_EQ(j["segments"][1]["text"], kSeg1);
  EXPECT_FALSE(j.contains("detected_language"));  // English-only model: no language detection
}

TEST_F(InferenceTest, OpenAiFormats) {
  const std::string text = std::string(kSeg0).substr(1) + kSeg1;
  Reply r = Run(Api::kOpenAiTranscription, JfkForm({{"model", "whisper-1"}}));
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = json::parse(r.body);
  EXPECT_EQ(j["text"], text);
  EXPECT_EQ(j["usage"], json({{"type", "duration"}, {"seconds", 11}}));

  r = Run(Api::kOpenAiTranscription, JfkForm({{"model", "whisper-1"}, {"response_format", "text"}}));
  EXPECT_EQ(r.body, text + "\n");
  r = Run(Api::kOpenAiTranscription, JfkForm({{"response_format", "srt"}}));
  EXPECT_EQ(r.body, std::string("1\n00:00:00,000 --> 00:00:07,740\n") + (kSeg0 + 1) +
                        "\n\n2\n00:00:07,740 --> 00:00:10,740\n" + (kSeg1 + 1) + "\n\n");
  r = Run(Api::kOpenAiTranscription, JfkForm({{"response_format", "vtt"}}));
  EXPECT_EQ(r.body, std::string("WEBVTT\n\n00:00:00.000 --> 00:00:07.740\n") + (kSeg0 + 1) +
                        "\n\n00:00:07.740 --> 00:00:10.740\n" + (kSeg1 + 1) + "\n\n");

  r = Run(Api::kOpenAiTranscription,
          JfkForm({{"response_format", "verbose_json"}, {"timestamp_granularities[]", "segment"}}));
  ASSERT_EQ(r.status, 200) << r.body;
  const json v = json::parse(r.body);
  EXPECT_EQ(v["task"], "transcribe");
  EXPECT_EQ(v["language"], "english");
  EXPECT_EQ(v["text"], text);
  ASSERT_EQ(v["segments"].size(), 2u);
  // The text and timestamp tokens of faster-whisper's segment, less the opening timestamp that
  // repeats the previous segment's closing one (whisper.cpp keeps it with the earlier segment).
  EXPECT_THAT(v["segments"][0]["tokens"].get<std::vector<int>>(),
              ElementsAreArray({50363, 843, 523, 616, 5891, 3399, 1265, 407, 644, 534, 1499, 460, 466, 329, 345, 50750}));
  EXPECT_THAT(v["segments"][1]["tokens"].get<std::vector<int>>(),
              ElementsAreArray({1265, 644, 345, 460, 466, 329, 534, 1499, 50900}));
  EXPECT_DOUBLE_EQ(v["segments"][1]["start"].get<double>(), 7.74);
  EXPECT_DOUBLE_EQ(v["segments"][1]["end"].get<double>(), 10.74);
  for (const char* key : {"id", "seek", "start", "end", "text", "tokens", "temperature", "avg_logprob",
                          "compression_ratio", "no_speech_prob"}) {
    EXPECT_TRUE(v["segments"][0].contains(key)) << key;
  }

  // An English-only model transcribes on the translations route, and says so
  // (EnglishOnlyModelFollowsFasterWhispersRule).
  r = Run(Api::kOpenAiTranslation, JfkForm({{"response_format", "verbose_json"}}));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["task"], "transcribe");
  EXPECT_EQ(json::parse(r.body)["text"], text);
  EXPECT_EQ(r.warnings.size(), 1u);
}

// faster-whisper 1.2.1 (transcribe.py, WhisperModel.transcribe) on an English-only model: another
// language is replaced by 'en' with this warning; a translation is transcribed (its Tokenizer
// drops the task; here with a warning in the same words). The reply is the English one, with the
// warnings in Reply::warnings and in JSON bodies.
TEST_F(InferenceTest, EnglishOnlyModelFollowsFasterWhispersRule) {
  const std::string de =
      "The current model is English-only but the language parameter is set to 'de'; using 'en' instead.";
  const std::string zh =
      "The current model is English-only but the language parameter is set to 'zh'; using 'en' instead.";
  const std::string tr =
      "The current model is English-only but the task parameter is set to 'translate'; using 'transcribe' instead.";
  const Reply en = Run(Api::kWhisperServer, JfkForm({{"response_format", "text"}}));
  ASSERT_EQ(en.status, 200) << en.body;
  EXPECT_TRUE(en.warnings.empty());
  EXPECT_TRUE(Run(Api::kWhisperServer, JfkForm({{"response_format", "text"}, {"language", "en"}})).warnings.empty());
  struct Case {
    std::vector<std::pair<std::string, std::string>> fields;
    std::vector<std::string> warnings;
  };
  const Case cases[] = {
      {{{"language", "de"}}, {de}},
      {{{"language", "zh"}}, {zh}},
      {{{"translate", "true"}}, {tr}},
      {{{"language", "de"}, {"translate", "true"}}, {de, tr}},
      {{{"detect_language", "true"}}, {}},  // "auto": informational only, not a warning
  };
  for (const Case& c : cases) {
    std::vector<std::pair<std::string, std::string>> fields = c.fields;
    fields.push_back({"response_format", "text"});
    const Reply r = Run(Api::kWhisperServer, JfkForm(fields));
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.body, en.body) << c.fields[0].first;
    EXPECT_EQ(r.warnings, c.warnings) << c.fields[0].first;
    fields.back().second = "json";
    const Reply j = Run(Api::kWhisperServer, JfkForm(fields));
    ASSERT_EQ(j.status, 200) << j.body;
    const json v = json::parse(j.body);
    EXPECT_EQ(v["text"], en.body);
    if (c.warnings.empty()) {
      EXPECT_FALSE(v.contains("warnings")) << j.body;
    } else {
      EXPECT_EQ(v["warnings"].get<std::vector<std::string>>(), c.warnings);
    }
  }
  // OpenAI's route: the same warning in verbose_json, beside the transcript.
  const Reply o = Run(Api::kOpenAiTranscription, JfkForm({{"language", "de"}, {"response_format", "verbose_json"}}));
  ASSERT_EQ(o.status, 200) << o.body;
  const json v = json::parse(o.body);
  EXPECT_EQ(v["language"], "english");
  EXPECT_EQ(v["warnings"].get<std::vector<std::string>>(), std::vector<std::string>{de});
}

// timestamp_granularities[]=word: faster-whisper 1.2.1's word_timestamps=True words for jfk.wav,
// greedy (testdata/word_timestamps_faster_whisper.json, tools/reference/word_timestamps.py), in
// OpenAI's TranscriptionWord shape. DTW runs for that request only: the next request on the same
// state gives the segment reply it gave before.
TEST_F(InferenceTest, OpenAiWordGranularityIsFasterWhispersWords) {
  ASSERT_TRUE(model_->words_available());
  ASSERT_FALSE(model_->dtw_every_request());
  const Form segments_form = JfkForm({{"response_format", "verbose_json"}});
  const Reply before = Run(Api::kOpenAiTranscription, segments_form);
  ASSERT_EQ(before.status, 200) << before.body;
  EXPECT_FALSE(json::parse(before.body).contains("words"));

  const json ref = json::parse(ReadFile(testdata::RepoRoot() + "/testdata/word_timestamps_faster_whisper.json"));
  json want;
  for (const json& run : ref["runs"]) {
    if (run["audio"] == "jfk.wav" && run["beam_size"] == 1) {
      for (const json& seg : run["segments"]) {
        for (const json& w : seg["words"]) want.push_back(w);
      }
    }
  }
  ASSERT_EQ(want.size(), 22u);
  Reply r = Run(Api::kOpenAiTranscription,
                JfkForm({{"response_format", "verbose_json"}, {"timestamp_granularities[]", "word"}}));
  ASSERT_EQ(r.status, 200) << r.body;
  json v = json::parse(r.body);
  EXPECT_FALSE(v.contains("segments"));  // only the granularity asked for
  ASSERT_EQ(v["words"].size(), want.size()) << v["words"].dump();
  for (size_t i = 0; i < want.size(); ++i) {
    const json& w = v["words"][i];
    EXPECT_EQ(w.size(), 3u);  // word, start, end
    EXPECT_EQ(w["word"], want[i]["word"].get<std::string>().substr(1)) << i;  // no leading space
    EXPECT_NEAR(w["start"].get<double>(), want[i]["start"].get<double>(), 0.021) << i;
    EXPECT_NEAR(w["end"].get<double>(), want[i]["end"].get<double>(), 0.021) << i;
  }
  r = Run(Api::kOpenAiTranscription, JfkForm({{"response_format", "verbose_json"},
                                              {"timestamp_granularities[]", "word"},
                                              {"timestamp_granularities[]", "segment"}}));
  ASSERT_EQ(r.status, 200) << r.body;
  v = json::parse(r.body);
  EXPECT_EQ(v["words"].size(), want.size());
  ASSERT_EQ(v["segments"].size(), 2u);
  EXPECT_DOUBLE_EQ(v["segments"][0]["end"].get<double>(), 8.06);  // moved to its last word's end

  const Reply after = Run(Api::kOpenAiTranscription, segments_form);
  EXPECT_EQ(after.body, before.body);
}

// faster-whisper's prepend_punctuations / append_punctuations as form fields: "" for both keeps
// "," and "." words of their own, as faster-whisper 1.2.1 on the same weights (beam 5;
// testdata/fw_punctuations.json, tools/reference/fw_punctuations.py, run "jfk_none"; OpenAI's words
// have no leading space).
TEST_F(InferenceTest, PunctuationFieldsAreFasterWhispers) {
  const json ref = json::parse(ReadFile(testdata::RepoRoot() + "/testdata/fw_punctuations.json"));
  json want;
  for (const json& run : ref["runs"]) {
    if (run["name"] == "jfk_none") want = run["words"];
  }
  ASSERT_EQ(want.size(), 24u);
  const Reply r = Run(Api::kOpenAiTranscription,
                      JfkForm({{"response_format", "verbose_json"}, {"timestamp_granularities[]", "word"},
                               {"beam_size", "5"}, {"prepend_punctuations", ""}, {"append_punctuations", ""}}));
  ASSERT_EQ(r.status, 200) << r.body;
  const json v = json::parse(r.body);
  ASSERT_EQ(v["words"].size(), want.size()) << v["words"].dump();
  for (size_t i = 0; i < want.size(); ++i) {
    const std::string text = want[i]["word"];
    EXPECT_EQ(v["words"][i]["word"], text[0] == ' ' ? text.substr(1) : text) << i;
    EXPECT_NEAR(v["words"][i]["start"].get<double>(), want[i]["start"].get<double>(), 0.021) << i;
    EXPECT_NEAR(v["words"][i]["end"].get<double>(), want[i]["end"].get<double>(), 0.021) << i;
  }
}

// Lower-case words of `text`, punctuation dropped.
std::string Words(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::isalpha(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(c));
    if (c == ' ' || c == '\n') out += ' ';
  }
  return out;
}

// vad=true: the server's -vm model (Silero v6) keeps jfk.wav's speech, so the words are
// faster-whisper's (the trimmed audio decodes as one segment with punctuation).
// OpenAI's audio API detects the language when a request has no `language` field; the server's
// -l and the request's field win; whisper-server's /inference keeps the server's language (en).
TEST(ParseRequest, OpenAiRequestsWithoutLanguageDetect) {
  const std::vector<std::string> defaults = {"-bs", "1"};
  const Form none = {{"model", FormValue{"whisper-1", "", false}}};
  const Form de = {{"language", FormValue{"de", "", false}}};
  auto language = [](Api api, const Form& form, const std::vector<std::string>& args) {
    absl::StatusOr<RequestOptions> o = ParseRequest(api, form, args);
    EXPECT_TRUE(o.ok()) << o.status();
    return o.ok() ? o->decode.language : std::string("(error)");
  };
  EXPECT_EQ(language(Api::kOpenAiTranscription, none, defaults), "auto");
  EXPECT_EQ(language(Api::kOpenAiTranslation, none, defaults), "auto");
  EXPECT_EQ(language(Api::kOpenAiTranscription, de, defaults), "de");
  EXPECT_EQ(language(Api::kOpenAiTranscription, none, {"-l", "fr"}), "fr");
  EXPECT_EQ(language(Api::kOpenAiTranscription, none, {"--language", "ja"}), "ja");
  EXPECT_EQ(language(Api::kWhisperServer, none, defaults), "en");
  EXPECT_EQ(language(Api::kWhisperServer, de, defaults), "de");
}

TEST_F(InferenceTest, VadField) {
  const std::vector<std::string> defaults = {"-bs", "1", "-bo", "2", "-t", "2", "-vm",
                                             testdata::ModelPath("ggml-silero-v6.bin")};
  Reply r = HandleTranscription(Api::kWhisperServer, JfkForm({{"vad", "true"}, {"response_format", "text"}}),
                                defaults, *model_);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Words(r.body), Words(std::string(kSeg0) + kSeg1 + "\n"));
  std::vector<std::string> missing = kDefaults;
  missing.insert(missing.end(), {"-vm", "/nonexistent/vad.bin"});
  r = HandleTranscription(Api::kWhisperServer, JfkForm({{"vad", "true"}}), missing, *model_);
  EXPECT_EQ(r.status, 500) << r.body;
  EXPECT_THAT(json::parse(r.body)["error"].get<std::string>(), HasSubstr("/nonexistent/vad.bin"));
}

TEST_F(InferenceTest, FieldsChangeTheDecode) {
  // no_timestamps: one segment without times; beam_size 5: faster-whisper's beam-5 text has a
  // comma and a full stop (testdata/jfk_faster_whisper_beam5.json).
  Reply r = Run(Api::kWhisperServer, JfkForm({{"beam_size", "5"}, {"response_format", "text"}}));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, " And so, my fellow Americans ask not what your country can do for you\n"
                    " ask what you can do for your country.\n");
  r = Run(Api::kWhisperServer, JfkForm({{"beam_size", "-1"}, {"offset_t", "7740"}, {"response_format", "text"}}));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(r.body, HasSubstr("ask what you can do for your country"));
  EXPECT_THAT(r.body, ::testing::Not(HasSubstr("Americans")));
}

// offset_t at or past the end of jfk.wav (176000 samples = 11.000 s), or leaving under 100 ms:
// whisper-server 1.8.5's 200 with empty text (whisper_full's "input is too short"), plus a warning
// naming the field, the value and the audio's duration (it was a silent empty 200). An offset
// inside the audio warns of nothing.
TEST_F(InferenceTest, OffsetPastTheEndIsAnEmpty200WithAWarning) {
  Reply r = Run(Api::kWhisperServer, JfkForm({{"offset_t", "60000"}}));
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string past = "field 'offset_t' 60000 ms is at or past the end of the audio (11.000 s): nothing was transcribed";
  EXPECT_EQ(json::parse(r.body), json({{"text", ""}, {"warnings", {past}}}));
  EXPECT_THAT(r.warnings, ElementsAreArray({past}));
  r = Run(Api::kWhisperServer, JfkForm({{"offset_t", "11000"}, {"response_format", "text"}}));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, "");
  EXPECT_THAT(r.warnings, ElementsAreArray({"field 'offset_t' 11000 ms is at or past the end of the audio (11.000 s): "
                                            "nothing was transcribed"}));
  r = Run(Api::kOpenAiTranscription, JfkForm({{"offset_t", "10950"}, {"response_format", "verbose_json"}}));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["segments"], json::array());
  EXPECT_THAT(r.warnings, ElementsAreArray({"field 'offset_t' 10950 ms with duration 0 ms selects 50 ms of the "
                                            "11.000 s audio, less than the 100 ms whisper.cpp transcribes: nothing "
                                            "was transcribed"}));
  r = Run(Api::kWhisperServer, JfkForm({{"offset_t", "7740"}, {"duration", "3000"}}));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(r.warnings, ::testing::IsEmpty());
  EXPECT_THAT(r.body, HasSubstr("ask what you can do for your country"));
}

// An upload whose WAV header announces 32000 frames over 16000 present is transcribed as far as it
// goes with the CLI's warning (it was silent).
TEST_F(InferenceTest, TruncatedUploadWarns) {
  Form f;
  f.emplace("file", FormValue{SilentWav(32000).substr(0, 44 + 2 * 16000), "cut.wav", true});
  const Reply r = Run(Api::kWhisperServer, f);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(r.warnings, ElementsAreArray({"cut.wav: decoding stopped after 16000 of the 32000 frames the header "
                                            "announces (corrupt or truncated data): transcribing the 1.00 s decoded"}));
}

// diarize and tinydiarize against whisper-server 1.8.5's reply bodies for the same requests
// (testdata/whisper_server_diarize.json, tools/whisper_cpp/whisper_server_diarize.py): stereo
// jfk.wav with channel 1 at a quarter ("left"), swapped ("right"), equal, and mono jfk.wav. text,
// json, srt and vtt must be whisper-server's byte for byte; verbose_json its text and each
// segment's text, start, end and speaker (the rest differs by design: see the README). The labels
// are also checked by hand from the energy rule (sum |ch0| > 1.1 sum |ch1| -> "0", the converse
// -> "1", else "?"): a quarter-gain copy makes the ratio 4 in every segment, equal channels 1.
TEST_F(InferenceTest, DiarizeAndTinydiarizeAreWhisperServers) {
  const json ref = json::parse(ReadFile(testdata::RepoRoot() + "/testdata/whisper_server_diarize.json"));
  // whisper.cpp's decoding rules (the server's --decoding whisper.cpp), as whisper-server decodes.
  absl::StatusOr<std::unique_ptr<LoadedModel>> model =
      LoadedModel::Load(testdata::ModelPath("ggml-tiny.en.bin"), 1, 0, WHISPER_GGML_DECODING_WHISPER_CPP);
  ASSERT_TRUE(model.ok()) << model.status();
  std::vector<std::string> args = kDefaults;
  args.insert(args.end(), {"--decoding", "whisper.cpp"});
  const std::vector<int16_t> x = WavSamples(*jfk_);
  ASSERT_EQ(x.size(), 176000u);
  const std::map<std::string, std::string> clips = {
      {"left", StereoWav(x, 1.0, 0.25)}, {"right", StereoWav(x, 0.25, 1.0)}, {"equal", StereoWav(x, 1.0, 1.0)},
      {"mono", *jfk_}};
  const std::map<std::string, std::string> label = {{"left", "0"}, {"right", "1"}, {"equal", "?"}, {"mono", "?"}};
  ASSERT_GE(ref["cases"].size(), 25u);
  for (const json& c : ref["cases"]) {
    const std::string clip = c["clip"];
    Form f;
    f.emplace("file", FormValue{clips.at(clip), clip + ".wav", true});
    std::string format, fields;
    for (const json& kv : c["fields"]) {
      f.emplace(kv[0].get<std::string>(), FormValue{kv[1].get<std::string>(), "", false});
      if (kv[0] == "response_format") format = kv[1];
      fields += kv[0].get<std::string>() + "=" + kv[1].get<std::string>() + " ";
    }
    const bool diarize = f.count("diarize") > 0;
    SCOPED_TRACE(clip + ": " + fields);
    const Reply r = HandleTranscription(Api::kWhisperServer, f, args, **model);
    ASSERT_EQ(r.status, 200) << r.body;
    const std::string want = c["body"];
    if (format != "verbose_json") {
      EXPECT_EQ(r.body, want);
    } else {
      const json a = json::parse(r.body), b = json::parse(want);
      EXPECT_EQ(a["text"], b["text"]);
      ASSERT_EQ(a["segments"].size(), b["segments"].size());
      for (size_t i = 0; i < a["segments"].size(); ++i) {
        const json &sa = a["segments"][i], &sb = b["segments"][i];
        EXPECT_EQ(sa["text"], sb["text"]);
        EXPECT_NEAR(sa["start"].get<double>(), sb["start"].get<double>(), 1e-6);
        EXPECT_NEAR(sa["end"].get<double>(), sb["end"].get<double>(), 1e-6);
        EXPECT_EQ(sa.contains("speaker"), sb.contains("speaker"));
        EXPECT_FALSE(sa.contains("speaker_turn_next"));  // whisper-server writes none
        if (diarize) {
          EXPECT_EQ(sa.value("speaker", ""), label.at(clip)) << i;
        }
      }
    }
    // Every label is the hand-derived one.
    if (diarize && format != "verbose_json") {
      const std::string mark = format == "vtt" ? "<v Speaker" + label.at(clip) + ">" : "(speaker " + label.at(clip) + ")";
      size_t n = 0;
      for (size_t at = r.body.find(mark); at != std::string::npos; at = r.body.find(mark, at + 1)) ++n;
      EXPECT_GE(n, 2u);
      EXPECT_EQ(n, std::count(r.body.begin(), r.body.end(), format == "vtt" ? '<' : '('));
    }
  }
}

// The server's -di is every request's default, and the field overrides it; a request may ask for
// both (whisper-server 1.8.5 checks the pair only in its flags). tinydiarize sets tdrz_enable.
TEST(ParseRequest, DiarizeFieldsAndFlags) {
  auto parse = [](const std::vector<std::pair<std::string, std::string>>& fields, const std::vector<std::string>& args) {
    Form f;
    for (const auto& [k, v] : fields) f.emplace(k, FormValue{v, "", false});
    absl::StatusOr<RequestOptions> o = ParseRequest(Api::kWhisperServer, f, args);
    EXPECT_TRUE(o.ok()) << o.status();
    return o.ok() ? o->decode : CliParams();
  };
  EXPECT_FALSE(parse({}, kDefaults).diarize);
  EXPECT_TRUE(parse({{"diarize", "true"}}, kDefaults).diarize);
  EXPECT_TRUE(parse({{"diarize", "yes"}}, kDefaults).diarize);
  std::vector<std::string> di = kDefaults;
  di.push_back("-di");
  EXPECT_TRUE(parse({}, di).diarize);
  EXPECT_FALSE(parse({{"diarize", "false"}}, di).diarize);
  const CliParams t = parse({{"tinydiarize", "1"}}, kDefaults);
  EXPECT_TRUE(t.tinydiarize);
  EXPECT_TRUE(ToWhisperFullParams(t).tdrz_enable);
  EXPECT_FALSE(ToWhisperFullParams(parse({}, kDefaults)).tdrz_enable);
  const CliParams both = parse({{"diarize", "true"}, {"tinydiarize", "true"}}, kDefaults);
  EXPECT_TRUE(both.diarize && both.tinydiarize);
}

// diarize on OpenAI's routes: the same labels in srt and verbose_json's segments.
TEST_F(InferenceTest, DiarizeOnOpenAiRoutes) {
  const std::string wav = StereoWav(WavSamples(*jfk_), 0.25, 1.0);
  Form f;
  f.emplace("file", FormValue{wav, "right.wav", true});
  f.emplace("diarize", FormValue{"true", "", false});
  f.emplace("response_format", FormValue{"verbose_json", "", false});
  Reply r = Run(Api::kOpenAiTranscription, f);
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = json::parse(r.body);
  ASSERT_GE(j["segments"].size(), 2u);
  for (const json& s : j["segments"]) EXPECT_EQ(s["speaker"], "1");
  // Every label stands between spaces, as in /inference's text: "(speaker 1) And ... you (speaker 1) ask".
  const std::string text = j["text"];
  EXPECT_EQ(text.rfind("(speaker 1) And so", 0), 0u) << text;
  size_t labels = 0;
  for (size_t at = text.find("(speaker 1)"); at != std::string::npos; at = text.find("(speaker 1)", at + 1)) {
    ++labels;
    EXPECT_EQ(text.substr(at + 11, 1), " ") << text;
    if (at > 0) {
      EXPECT_EQ(text.substr(at - 1, 1), " ") << text;
    }
  }
  EXPECT_EQ(labels, j["segments"].size()) << text;
  f.erase("response_format");
  f.emplace("response_format", FormValue{"srt", "", false});
  r = Run(Api::kOpenAiTranscription, f);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(r.body, HasSubstr("\n(speaker 1) And so my fellow Americans"));
  f.erase("response_format");
  f.emplace("response_format", FormValue{"vtt", "", false});
  r = Run(Api::kOpenAiTranscription, f);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(r.body, HasSubstr("\n<v Speaker1> And so my fellow Americans"));
}

TEST_F(InferenceTest, BadFieldsAre400sNamingTheField) {
  struct Case {
    std::vector<std::pair<std::string, std::string>> fields;
    const char* expected;
  };
  const Case cases[] = {
      {{{"temperature", "hot"}}, "field 'temperature' needs a finite number, got 'hot'"},
      {{{"temperature", "nan"}}, "field 'temperature' needs a finite number, got 'nan'"},
      {{{"temperature", "2"}}, "field 'temperature' 2 is out of range"},
      {{{"beam_size", "33"}}, "field 'beam_size' 33 is out of range"},
      {{{"best_of", "1e9"}}, "field 'best_of' needs an integer, got '1e9'"},
      {{{"offset_t", "-5"}}, "field 'offset_t'"},
      {{{"offset_t", "2147483648"}}, "field 'offset_t' 2147483648 is out of range [0, 2147483647]"},  // not ">= 0"
      {{{"temperature", "1e308"}}, "field 'temperature' 1e308 is out of range [0, 1]"},  // not "needs a finite number"
      {{{"language", "xx"}}, "field 'language' names no language Whisper knows: 'xx'"},
      {{{"response_format", "xml"}}, "field 'response_format' must be one of json, text, srt, vtt, verbose_json; got 'xml'"},
      {{{"translate", "maybe"}}, "field 'translate' expects a boolean"},
      {{{"diarize", "maybe"}}, "field 'diarize' expects a boolean"},
      {{{"tinydiarize", "x"}}, "field 'tinydiarize' expects a boolean"},
      {{{"vad", "perhaps"}}, "field 'vad' expects a boolean"},
      {{{"temperature", "0"}, {"temperature", "0.2"}}, "field 'temperature' is given 2 times; expected once"},
      {{{"audio_ctx", "5000"}}, "field 'audio_ctx' 5000 is larger than the model's n_audio_ctx 1500"},
      {{{"append_punctuations", "(\xE3"}}, "field 'append_punctuations' '(\\xe3' is not valid UTF-8 text"},
  };
  for (const Case& c : cases) {
    const Reply r = Run(Api::kWhisperServer, JfkForm(c.fields));
    EXPECT_EQ(r.status, 400) << c.expected;
    EXPECT_THAT(json::parse(r.body)["error"].get<std::string>(), HasSubstr(c.expected));
  }
  // Granularities are OpenAI's (whisper-server ignores the field), with verbose_json only.
  for (const Case& c : {Case{{{"timestamp_granularities[]", "char"}, {"response_format", "verbose_json"}},
                             "field 'timestamp_granularities[]' must be 'segment' or 'word'; got 'char'"},
                        Case{{{"timestamp_granularities[]", "word"}},
                             "field 'timestamp_granularities[]' needs response_format 'verbose_json'; got 'json'"}}) {
    const Reply r = Run(Api::kOpenAiTranscription, JfkForm(c.fields));
    EXPECT_EQ(r.status, 400) << c.expected;
    EXPECT_THAT(json::parse(r.body)["error"]["message"].get<std::string>(), HasSubstr(c.expected));
  }
  EXPECT_EQ(Run(Api::kWhisperServer, JfkForm({{"timestamp_granularities[]", "char"}})).status, 200);
  // The OpenAI shape: {"error": {"message", "type", "param", "code"}}.
  const Reply r = Run(Api::kOpenAiTranscription, JfkForm({{"temperature", "hot"}}));
  EXPECT_EQ(r.status, 400);
  const json e = json::parse(r.body)["error"];
  EXPECT_THAT(e["message"].get<std::string>(), HasSubstr("field 'temperature'"));
  EXPECT_EQ(e["type"], "invalid_request_error");
  EXPECT_TRUE(e.contains("param") && e.contains("code"));
}

TEST_F(InferenceTest, BadAudioIs400) {
  Form none;
  none.emplace("response_format", FormValue{"json", "", false});
  Reply r = Run(Api::kWhisperServer, none);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body)["error"], "no 'file' field in the request");

  struct Case {
    std::string bytes;
    const char* name;
    const char* expected;
  };
  const Case cases[] = {
      {"", "empty.wav", "empty.wav"},
      {"this is not audio at all, just some text bytes", "notes.wav", "notes.wav"},
      {SilentWav(100), "short.wav", "'short.wav': 100 samples is shorter than 100 ms"},
      {jfk_->substr(0, 30), "cut.wav", "cut.wav"},
  };
  for (const Case& c : cases) {
    Form f;
    f.emplace("file", FormValue{c.bytes, c.name, true});
    r = Run(Api::kOpenAiTranscription, f);
    EXPECT_EQ(r.status, 400) << c.name << ": " << r.body;
    EXPECT_THAT(json::parse(r.body)["error"]["message"].get<std::string>(), HasSubstr(c.expected));
    EXPECT_EQ(json::parse(r.body)["error"]["param"], "file");
  }
  // 1600 samples of silence is long enough: a 200 with no speech.
  Form f;
  f.emplace("file", FormValue{SilentWav(1600), "silence.wav", true});
  r = Run(Api::kWhisperServer, f);
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(InferenceTest, FullPoolIs503) {
  // One state, no queue: while a lease is held, a request is refused at once.
  absl::StatusOr<LoadedModel::Lease> held = model_->Acquire();
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(model_->busy(), 1);
  const Reply r = Run(Api::kOpenAiTranscription, JfkForm({}));
  EXPECT_EQ(r.status, 503);
  const json e = json::parse(r.body)["error"];
  EXPECT_THAT(e["message"].get<std::string>(), HasSubstr("server busy: all 1 transcription slots are in use"));
  EXPECT_EQ(e["type"], "server_error");
  // Admission comes before decoding: an upload that is not audio is not even decoded (was a 400).
  Form garbage;
  garbage.emplace("file", FormValue{"this is not audio at all", "notes.wav", true});
  EXPECT_EQ(Run(Api::kWhisperServer, garbage).status, 503);
}

// --max-audio-seconds: jfk.wav's header announces 176000 frames at 16 kHz (11 s): over a 10 s
// limit it is a 413 naming both, at 11 s it is transcribed.
TEST_F(InferenceTest, AudioOverTheLimitIs413) {
  Reply r = HandleTranscription(Api::kOpenAiTranscription, JfkForm({}), kDefaults, *model_, 10);
  EXPECT_EQ(r.status, 413) << r.body;
  EXPECT_EQ(json::parse(r.body)["error"]["message"],
            "jfk.wav: the audio is 11.000 s long (176000 frames at 16000 Hz, from its header): expected at most "
            "10 s (the server's --max-audio-seconds)");
  r = HandleTranscription(Api::kWhisperServer, JfkForm({{"response_format", "text"}}), kDefaults, *model_, 11);
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST(InferenceConcurrency, FourRequestsOnTwoStatesGiveTheSameReply) {
  // --parallel 2 --queue 2: four requests at once all run (two wait), and each reply equals the
  // one-at-a-time reply.
  InstallLogCapture(/*quiet=*/true);
  absl::StatusOr<std::unique_ptr<LoadedModel>> m =
      LoadedModel::Load(testdata::ModelPath("ggml-tiny.en.bin"), 2, 2, WHISPER_GGML_DECODING_OPENAI, 1);
  ASSERT_TRUE(m.ok()) << m.status();
  Form form;
  form.emplace("file", FormValue{ReadFile(testdata::SharedData("jfk.wav")), "jfk.wav", true});
  form.emplace("response_format", FormValue{"text", "", false});
  const std::vector<std::string> args = {"-bs", "1", "-bo", "2", "-t", "1"};
  const Reply alone = HandleTranscription(Api::kWhisperServer, form, args, **m);
  ASSERT_EQ(alone.status, 200) << alone.body;
  std::vector<Reply> replies(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] { replies[i] = HandleTranscription(Api::kWhisperServer, form, args, **m); });
  }
  for (std::thread& t : threads) t.join();
  for (const Reply& r : replies) {
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.body, alone.body);
  }
  EXPECT_EQ((*m)->busy(), 0);
  EXPECT_EQ((*m)->waiting(), 0);
}

// The file offset of tensor `name`'s data in the whisper.cpp ggml model image `f` (F32/F16 only),
// laid out by hand from the format: magic, 11 int32 hparams, n_mel, n_fft and the filters, the
// vocabulary (count, then length + bytes each), the records (n_dims, name length, type, ne, name,
// data). 0 when it is not there.
size_t TensorDataOffset(const std::string& f, const std::string& name) {
  size_t at = 4 + 11 * 4;
  auto i32 = [&f, &at]() {
    int32_t v = 0;
    std::memcpy(&v, f.data() + at, 4);
    at += 4;
    return v;
  };
  const int32_t n_mel = i32(), n_fft = i32();
  at += 4 * static_cast<size_t>(n_mel) * n_fft;
  for (int32_t n = i32(); n > 0; --n) at += i32();
  while (at + 12 <= f.size()) {
    const int32_t n_dims = i32(), name_len = i32(), type = i32();
    int64_t n = 1;
    for (int d = 0; d < n_dims; ++d) n *= i32();
    const std::string tensor = f.substr(at, name_len);
    at += name_len;
    if (tensor == name) return at;
    at += n * (type == 0 ? 4 : 2);
  }
  return 0;
}

// A copy of tiny.en with one F32 element of tensor `name` set to NaN, written to $TEST_TMPDIR.
std::string NanModel(const std::string& file, const std::string& name, int64_t element) {
  std::string bytes = ReadFile(testdata::ModelPath("ggml-tiny.en.bin"));
  const size_t at = TensorDataOffset(bytes, name);
  EXPECT_GT(at, 0u) << name;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (at > 0) std::memcpy(&bytes[at + 4 * element], &nan, 4);
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + file;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// A NaN weight that first shows at decoder position 10 (past the warm-up's 8 tokens): the model
// loads (with the server's warm-up too), a request is a 500 naming the file, the tensor and the
// element; a NaN the warm-up reaches (decoder.ln.weight) makes loading fail with that message.
TEST_F(InferenceTest, NanWeightIs500NamingTheTensor) {
  const std::string pos10 = NanModel("pos10.bin", "decoder.positional_embedding", 384 * 10 + 3);
  absl::StatusOr<std::unique_ptr<LoadedModel>> m = LoadedModel::Load(pos10, 1, 0, WHISPER_GGML_DECODING_OPENAI, 2);
  ASSERT_TRUE(m.ok()) << m.status();
  const Reply r = HandleTranscription(Api::kOpenAiTranscription, JfkForm({}), kDefaults, **m);
  EXPECT_EQ(r.status, 500) << r.body;
  EXPECT_EQ(json::parse(r.body)["error"]["message"],
            "whisper_full_with_state: failed: model '" + pos10 +
                "': tensor 'decoder.positional_embedding' holds NaN at element 3843 (expected finite weights): the "
                "file is corrupt");
  const std::string ln = NanModel("ln.bin", "decoder.ln.weight", 17);
  m = LoadedModel::Load(ln, 1, 0, WHISPER_GGML_DECODING_OPENAI, /*warmup_threads=*/2);  // the server's warm-up
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(std::string(m.status().message()),
              HasSubstr("warm-up transcription failed: whisper_full_with_state: failed: model '" + ln +
                        "': tensor 'decoder.ln.weight' holds NaN at element 17 (expected finite weights): the file "
                        "is corrupt"));
}

}  // namespace
}  // namespace whisper::server
