// The decoding, compute-type and faster-whisper option flags of ParseCliParams and how they reach
// whisper_full_params (ToWhisperFullParams); the flag grammar itself is in cli_params_test.cc.
#include <cfloat>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "apps/common/cli_params.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace whisper {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

absl::StatusOr<CliParams> Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "whisper-cli");
  return ParseCliParams(static_cast<int>(args.size()), args.data());
}

// The error message of a parse that must fail ("" and a test failure if it succeeds).
std::string ParseError(std::vector<const char*> args) {
  absl::StatusOr<CliParams> p = Parse(args);
  if (p.ok()) {
    ADD_FAILURE() << "parse succeeded: " << ::testing::PrintToString(args);
    return "";
  }
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(p.status().message());
}

// --int8-attention: auto (the default), on, off -> whisper_ggml_set_int8_attention's -1, 1, 0.
TEST(CliParamsInt8Attention, AutoByDefaultOnOffOthersRejected) {
  absl::StatusOr<CliParams> p = Parse({"-f", "a.wav"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->int8_attention, "auto");
  EXPECT_EQ(Int8AttentionMode(*p), -1);
  for (const auto& [name, mode] : std::vector<std::pair<const char*, int>>{{"on", 1}, {"off", 0}, {"auto", -1}}) {
    p = Parse({"--int8-attention", name, "-f", "a.wav"});
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(Int8AttentionMode(*p), mode) << name;
  }
  const std::string err = ParseError({"--int8-attention", "1", "-f", "a.wav"});
  EXPECT_THAT(err, HasSubstr("--int8-attention"));
  EXPECT_THAT(err, HasSubstr("'1' is not one of: auto, on, off"));
}

TEST(CliParamsDecoding, OpenAiByDefaultWhisperCppOnRequestOthersRejected) {
  const char* none[] = {"cli", "-f", "a.wav"};
  auto p = ParseCliParams(3, none);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->decoding, "openai");
  const char* wcpp[] = {"cli", "--decoding", "whisper.cpp", "-f", "a.wav"};
  p = ParseCliParams(5, wcpp);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->decoding, "whisper.cpp");
  const char* bad[] = {"cli", "--decoding", "fast", "-f", "a.wav"};
  p = ParseCliParams(5, bad);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("--decoding"), std::string::npos) << p.status();
  EXPECT_NE(p.status().message().find("fast"), std::string::npos) << p.status();
}

// --compute-type takes faster-whisper's names (whisper_ggml_set_compute_type's table) and sets
// the context's weight conversion: int8* -> Q8_0, float16 -> F16, float32 -> F32, bfloat16 -> F16
// with a note, default/auto -> none. int16 and other names are refused with the accepted list.
TEST(CliParamsComputeType, FasterWhisperNamesToWeightTypes) {
  const char* none[] = {"cli", "-f", "a.wav"};
  auto p = ParseCliParams(3, none);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->compute_type, "default");
  EXPECT_FALSE(ToWhisperContextParams(*p).ggml_convert_weights);
  struct Case {
    const char* name;
    bool convert;
    ggml_type type;
  };
  for (const Case& c : {Case{"int8", true, GGML_TYPE_Q8_0}, Case{"int8_float32", true, GGML_TYPE_Q8_0},
                        Case{"int8_float16", true, GGML_TYPE_Q8_0}, Case{"int8_bfloat16", true, GGML_TYPE_Q8_0},
                        Case{"float16", true, GGML_TYPE_F16}, Case{"float32", true, GGML_TYPE_F32},
                        Case{"bfloat16", true, GGML_TYPE_F16}, Case{"auto", false, GGML_TYPE_F16},
                        Case{"default", false, GGML_TYPE_F16}}) {
    SCOPED_TRACE(c.name);
    const char* argv[] = {"cli", "--compute-type", c.name, "-f", "a.wav"};
    p = ParseCliParams(5, argv);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->compute_type, c.name);
    std::string note;
    const whisper_context_params cp = ToWhisperContextParams(*p, &note);
    EXPECT_EQ(cp.ggml_convert_weights, c.convert);
    if (c.convert) {  // braces: EXPECT_EQ is an if/else (-Wdangling-else)
      EXPECT_EQ(cp.ggml_weight_type, c.type);
    }
    EXPECT_EQ(note.empty(), std::string(c.name) != "bfloat16") << note;
  }
  for (const char* bad : {"int16", "q8_0", "INT8", ""}) {
    SCOPED_TRACE(bad);
    const char* argv[] = {"cli", "--compute-type", bad, "-f", "a.wav"};
    p = ParseCliParams(5, argv);
    ASSERT_FALSE(p.ok());
    EXPECT_THAT(std::string(p.status().message()),
                HasSubstr(std::string("--compute-type compute_type '") + bad + "' is not supported"));
    EXPECT_THAT(std::string(p.status().message()),
                HasSubstr("default, auto, int8, int8_float32, int8_float16, int8_bfloat16, float16, bfloat16, float32"));
  }
}

// faster-whisper's transcribe options under their own names reach whisper_full_params (defaults:
// faster-whisper's; patience's 1 as OpenAI's `patience or 1.0`).
TEST(CliParamsFasterWhisper, BeamAndRepetitionOptionsReachTheFullParams) {
  absl::StatusOr<CliParams> p = Parse({});
  ASSERT_TRUE(p.ok());
  whisper_full_params w = ToWhisperFullParams(*p);
  EXPECT_FLOAT_EQ(w.beam_search.patience, 1.0f);
  EXPECT_FLOAT_EQ(w.ggml_length_penalty, 1.0f);
  EXPECT_FLOAT_EQ(w.ggml_repetition_penalty, 1.0f);
  EXPECT_EQ(w.ggml_no_repeat_ngram_size, 0);
  EXPECT_EQ(w.ggml_max_new_tokens, 0);
  EXPECT_FLOAT_EQ(w.ggml_prompt_reset_on_temperature, 0.5f);
  p = Parse({"--patience", "2", "--length-penalty", "-0.5", "--repetition-penalty", "1.5", "--no-repeat-ngram-size",
             "3", "--max-new-tokens", "20", "--prompt-reset-on-temperature", "1"});
  ASSERT_TRUE(p.ok()) << p.status();
  w = ToWhisperFullParams(*p);
  EXPECT_FLOAT_EQ(w.beam_search.patience, 2.0f);
  EXPECT_FLOAT_EQ(w.ggml_length_penalty, -0.5f);
  EXPECT_FLOAT_EQ(w.ggml_repetition_penalty, 1.5f);
  EXPECT_EQ(w.ggml_no_repeat_ngram_size, 3);
  EXPECT_EQ(w.ggml_max_new_tokens, 20);
  EXPECT_FLOAT_EQ(w.ggml_prompt_reset_on_temperature, 1.0f);
  EXPECT_THAT(ParseError({"--patience", "0"}), StartsWith("--patience 0 is out of range"));
  EXPECT_THAT(ParseError({"--repetition-penalty", "0"}), StartsWith("--repetition-penalty 0 is out of range"));
  EXPECT_THAT(ParseError({"--no-repeat-ngram-size", "-1"}), StartsWith("--no-repeat-ngram-size -1 is out of range"));
  EXPECT_THAT(ParseError({"--max-new-tokens", "-2"}), StartsWith("--max-new-tokens -2 is out of range"));
  EXPECT_THAT(ParseError({"--length-penalty", "nan"}), StartsWith("--length-penalty needs a finite number"));
}

// --prepend-punctuations / --append-punctuations: faster-whisper's defaults (the strings of its
// transcribe() signature, typed here from it), any UTF-8 text, and "" (no marks) passed as "", not
// as NULL (which would mean the defaults).
TEST(CliParamsFasterWhisper, PunctuationSets) {
  absl::StatusOr<CliParams> p = Parse({});
  ASSERT_TRUE(p.ok()) << p.status();
  whisper_full_params w = ToWhisperFullParams(*p);
  EXPECT_STREQ(w.ggml_prepend_punctuations, "\"'\u201c\u00bf([{-");
  EXPECT_STREQ(w.ggml_append_punctuations, "\"'.\u3002,\uff0c!\uff01?\uff1f:\uff1a\u201d)]}\u3001");
  p = Parse({"--prepend-punctuations", "", "--append-punctuations", ".\u3002"});
  ASSERT_TRUE(p.ok()) << p.status();
  w = ToWhisperFullParams(*p);
  ASSERT_NE(w.ggml_prepend_punctuations, nullptr);
  EXPECT_STREQ(w.ggml_prepend_punctuations, "");
  EXPECT_STREQ(w.ggml_append_punctuations, ".\u3002");
  EXPECT_THAT(ParseError({"--append-punctuations"}), HasSubstr("--append-punctuations"));
  EXPECT_EQ(ParseError({"--prepend-punctuations", "(\xE3"}),
            "--prepend-punctuations '(\\xe3' is not valid UTF-8 text");
}

}  // namespace
}  // namespace whisper

namespace whisper {
namespace {

// --prompt, --prefix and --hotwords refuse what the Python package's _check_text refuses
// (ValueError): a NUL (through a response file; argv cannot hold one) and bytes that are not
// UTF-8, among them a UTF-16 surrogate in CESU-8 form (ED A0 80). Control bytes that are UTF-8
// (\x01) pass, as they do in Python. The message names the flag, the bytes and their offset.
TEST(CliParamsPromptText, NulAndInvalidUtf8AreRefusedNamingTheFlag) {
  for (const char* flag : {"--prompt", "--prefix", "--hotwords"}) {
    EXPECT_EQ(ParseError({flag, "ok \xED\xA0\x80", "a.wav"}),
              absl::StrCat(flag, " has '\\xED\\xA0\\x80' at offset 3, a UTF-16 surrogate (CESU-8), not UTF-8: "
                                 "expected UTF-8 text"));
    EXPECT_THAT(ParseError({flag, "caf\xE9", "a.wav"}), StartsWith(absl::StrCat(flag, " has '\\xE9' at offset 3,")));
    absl::StatusOr<CliParams> fine = Parse({flag, "Kennedy \xC3\xA9\x01", "a.wav"});
    EXPECT_TRUE(fine.ok()) << fine.status();
  }
  const char* tmp = std::getenv("TEST_TMPDIR");
  ASSERT_NE(tmp, nullptr);
  const std::string path = std::string(tmp) + "/nul_prompt_args.txt";
  {
    std::ofstream out(path, std::ios::binary);
    out << "-f\na.wav\n--hotwords\n" << std::string("Ken\0nedy", 8) << "\n";
  }
  const std::string at = "@" + path;
  const char* argv[] = {"whisper-cli", at.c_str()};
  absl::StatusOr<CliParams> p = ParseCliParams(2, argv);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()), StartsWith("--hotwords has a NUL byte at offset 3:"));
}

// --suppress-regex is compiled while the flags are parsed, so a bad one exits 2 before the model
// loads; the message names the flag, the regex and std::regex's reason.
TEST(CliParamsSuppressRegex, InvalidRegexIsAParseError) {
  const std::string m = ParseError({"--suppress-regex", "[", "a.wav"});
  EXPECT_THAT(m, StartsWith("--suppress-regex '[' is not a valid regular expression (ECMAScript): "));
  EXPECT_GT(m.size(), std::string("--suppress-regex '[' is not a valid regular expression (ECMAScript): ").size());
  EXPECT_THAT(ParseError({"--suppress-regex", "(ab", "a.wav"}), HasSubstr("'(ab'"));
  absl::StatusOr<CliParams> p = Parse({"--suppress-regex", "[0-9]+", "a.wav"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->suppress_regex, "[0-9]+");
  p = Parse({"--suppress-regex", "", "a.wav"});  // "" turns it off, as in whisper-cli
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->suppress_regex, "");
}

}  // namespace
}  // namespace whisper
