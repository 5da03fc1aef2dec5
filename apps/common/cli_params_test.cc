#include "apps/common/cli_params.h"

#include <cfloat>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace whisper {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
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

// The usage line of a flag (the line whose option column names it), or "".
std::string UsageLine(const std::string& usage, const std::string& flag) {
  std::istringstream in(usage);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    for (std::string w; words >> w && w[0] != '[';) {  // the names, up to "[default]"
      if (w == flag || w == flag + ",") return line;
    }
  }
  return "";
}

// Every flag of whisper-cli 1.8.5 (examples/cli/cli.cpp whisper_params_parse), both spellings,
// with a valid value where it takes one.
struct CliFlag {
  const char* short_name;  // nullptr: long form only
  const char* long_name;
  const char* value;  // nullptr: a switch
};
const std::vector<CliFlag>& WhisperCli185Flags() {
  static const std::vector<CliFlag> flags = {
      {"-t", "--threads", "2"}, {"-p", "--processors", "1"}, {"-ot", "--offset-t", "10"},
      {"-on", "--offset-n", "1"}, {"-d", "--duration", "100"}, {"-mc", "--max-context", "0"},
      {"-ml", "--max-len", "10"}, {"-bo", "--best-of", "3"}, {"-bs", "--beam-size", "3"},
      {"-ac", "--audio-ctx", "750"}, {"-wt", "--word-thold", "0.5"}, {"-et", "--entropy-thold", "2"},
      {"-lpt", "--logprob-thold", "-2"}, {"-nth", "--no-speech-thold", "0.5"}, {"-tp", "--temperature", "0.5"},
      {"-tpi", "--temperature-inc", "0.4"}, {"-debug", "--debug-mode", nullptr}, {"-tr", "--translate", nullptr},
      {"-di", "--diarize", nullptr}, {"-tdrz", "--tinydiarize", nullptr}, {"-sow", "--split-on-word", nullptr},
      {"-nf", "--no-fallback", nullptr}, {"-otxt", "--output-txt", nullptr}, {"-ovtt", "--output-vtt", nullptr},
      {"-osrt", "--output-srt", nullptr}, {"-owts", "--output-words", nullptr}, {"-olrc", "--output-lrc", nullptr},
      {"-fp", "--font-path", "font.ttf"}, {"-ocsv", "--output-csv", nullptr}, {"-oj", "--output-json", nullptr},
      {"-ojf", "--output-json-full", nullptr}, {"-of", "--output-file", "out"}, {"-np", "--no-prints", nullptr},
      {"-ps", "--print-special", nullptr}, {"-pc", "--print-colors", nullptr}, {nullptr, "--print-confidence", nullptr},
      {"-pp", "--print-progress", nullptr}, {"-nt", "--no-timestamps", nullptr}, {"-l", "--language", "de"},
      {"-dl", "--detect-language", nullptr}, {nullptr, "--prompt", "hi"}, {nullptr, "--carry-initial-prompt", nullptr},
      {"-m", "--model", "m.bin"}, {"-f", "--file", "a.wav"}, {"-oved", "--ov-e-device", "GPU"},
      {"-dtw", "--dtw", "tiny.en"}, {"-ls", "--log-score", nullptr}, {"-ng", "--no-gpu", nullptr},
      {"-dev", "--device", "1"}, {"-fa", "--flash-attn", nullptr}, {"-nfa", "--no-flash-attn", nullptr},
      {"-sns", "--suppress-nst", nullptr}, {nullptr, "--suppress-regex", "^x"}, {nullptr, "--grammar", "root ::= x"},
      {nullptr, "--grammar-rule", "root"}, {nullptr, "--grammar-penalty", "50"}, {nullptr, "--vad", nullptr},
      {"-vm", "--vad-model", "vad.bin"}, {"-vt", "--vad-threshold", "0.4"},
      {"-vspd", "--vad-min-speech-duration-ms", "200"}, {"-vsd", "--vad-min-silence-duration-ms", "50"},
      {"-vmsd", "--vad-max-speech-duration-s", "10"}, {"-vp", "--vad-speech-pad-ms", "20"},
      {"-vo", "--vad-samples-overlap", "0.2"}, {"-h", "--help", nullptr},
  };
  return flags;
}

TEST(CliParams, EveryWhisperCliFlagParsesInBothSpellings) {
  for (const CliFlag& f : WhisperCli185Flags()) {
    for (const char* name : {f.short_name, f.long_name}) {
      if (name == nullptr) continue;
      std::vector<const char*> args = {"-f", "a.wav", name};
      if (f.value != nullptr) args.push_back(f.value);
      absl::StatusOr<CliParams> p = Parse(args);
      EXPECT_TRUE(p.ok()) << name << ": " << p.status();
    }
  }
}

TEST(CliParams, DefaultsMatchWhisperCli) {
  absl::StatusOr<CliParams> p = Parse({});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->n_threads, 0);
  EXPECT_EQ(p->n_processors, 1);
  EXPECT_EQ(p->offset_t_ms, 0);
  EXPECT_EQ(p->offset_n, 0);
  EXPECT_EQ(p->duration_ms, 0);
  EXPECT_EQ(p->max_context, -1);
  EXPECT_EQ(p->max_len, 0);
  EXPECT_FALSE(p->split_on_word);
  EXPECT_EQ(p->best_of, 5);
  EXPECT_EQ(p->beam_size, 5);
  EXPECT_EQ(p->audio_ctx, 0);
  EXPECT_FLOAT_EQ(p->word_thold, 0.01f);
  EXPECT_FLOAT_EQ(p->entropy_thold, 2.4f);
  EXPECT_FLOAT_EQ(p->logprob_thold, -1.0f);
  EXPECT_FLOAT_EQ(p->no_speech_thold, 0.6f);
  EXPECT_FLOAT_EQ(p->temperature, 0.0f);
  EXPECT_FLOAT_EQ(p->temperature_inc, 0.2f);
  EXPECT_FALSE(p->no_fallback);
  EXPECT_FALSE(p->debug_mode);
  EXPECT_FALSE(p->translate);
  EXPECT_FALSE(p->detect_language);
  EXPECT_FALSE(p->diarize);
  EXPECT_FALSE(p->tinydiarize);
  EXPECT_EQ(p->language, "en");
  EXPECT_EQ(p->prompt, "");
  EXPECT_FALSE(p->carry_initial_prompt);
  EXPECT_EQ(p->model, "models/ggml-tiny.en.bin");  // whisper-cli: models/ggml-base.en.bin
  EXPECT_THAT(p->files, IsEmpty());
  EXPECT_FALSE(p->output_txt || p->output_vtt || p->output_srt || p->output_lrc || p->output_words ||
               p->output_csv || p->output_json || p->output_json_full || p->log_score);
  EXPECT_EQ(p->font_path, "/System/Library/Fonts/Supplemental/Courier New Bold.ttf");
  EXPECT_THAT(p->output_files, IsEmpty());
  EXPECT_FALSE(p->no_prints || p->print_special || p->print_colors || p->print_confidence || p->print_progress ||
               p->no_timestamps);
  EXPECT_FALSE(p->suppress_nst);
  EXPECT_EQ(p->suppress_regex, "");
  EXPECT_EQ(p->grammar, "");
  EXPECT_EQ(p->grammar_rule, "");
  EXPECT_FLOAT_EQ(p->grammar_penalty, 100.0f);
  EXPECT_EQ(p->dtw, "");
  EXPECT_FALSE(p->vad);
  EXPECT_EQ(p->vad_model, "");
  EXPECT_FLOAT_EQ(p->vad_threshold, 0.5f);
  EXPECT_EQ(p->vad_min_speech_duration_ms, 250);
  EXPECT_EQ(p->vad_min_silence_duration_ms, 100);
  EXPECT_EQ(p->vad_max_speech_duration_s, FLT_MAX);
  EXPECT_EQ(p->vad_speech_pad_ms, 30);
  EXPECT_FLOAT_EQ(p->vad_samples_overlap, 0.1f);
  EXPECT_TRUE(p->use_gpu);
  EXPECT_TRUE(p->flash_attn);
  EXPECT_EQ(p->gpu_device, 0);
  EXPECT_EQ(p->openvino_encode_device, "CPU");
  EXPECT_FALSE(p->help);
  EXPECT_FALSE(p->version);
  EXPECT_FALSE(p->list_languages);
  EXPECT_THAT(p->ignored_flags, IsEmpty());
  EXPECT_THAT(p->unimplemented_flags, IsEmpty());
  EXPECT_EQ(p->unimplemented, "");
}

TEST(CliParams, ShortAndLongFormsAndBareFiles) {
  auto p = Parse({"-m", "m.bin", "-f", "a.wav", "b.wav", "--beam-size", "3", "-bo", "2", "-otxt", "--output-srt",
                  "-ot", "500", "--duration", "1000", "-nf", "-l", "auto", "--prompt", "hello", "-t", "2"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->model, "m.bin");
  EXPECT_EQ(p->files, (std::vector<std::string>{"a.wav", "b.wav"}));
  EXPECT_EQ(p->beam_size, 3);
  EXPECT_EQ(p->best_of, 2);
  EXPECT_TRUE(p->output_txt);
  EXPECT_TRUE(p->output_srt);
  EXPECT_FALSE(p->output_vtt);
  EXPECT_EQ(p->offset_t_ms, 500);
  EXPECT_EQ(p->duration_ms, 1000);
  EXPECT_TRUE(p->no_fallback);
  EXPECT_EQ(p->language, "auto");
  EXPECT_EQ(p->prompt, "hello");
  EXPECT_EQ(p->n_threads, 2);
}

struct SwitchCase {
  const char* short_name;
  const char* long_name;
  bool CliParams::*field;
  bool set_to;
};

TEST(CliParams, Switches) {
  const std::vector<SwitchCase> cases = {
      {"-sow", "--split-on-word", &CliParams::split_on_word, true},
      {"-nf", "--no-fallback", &CliParams::no_fallback, true},
      {"-debug", "--debug-mode", &CliParams::debug_mode, true},
      {"-tr", "--translate", &CliParams::translate, true},
      {"-di", "--diarize", &CliParams::diarize, true},
      {"-tdrz", "--tinydiarize", &CliParams::tinydiarize, true},
      {"-otxt", "--output-txt", &CliParams::output_txt, true},
      {"-ovtt", "--output-vtt", &CliParams::output_vtt, true},
      {"-osrt", "--output-srt", &CliParams::output_srt, true},
      {"-olrc", "--output-lrc", &CliParams::output_lrc, true},
      {"-owts", "--output-words", &CliParams::output_words, true},
      {"-ocsv", "--output-csv", &CliParams::output_csv, true},
      {"-oj", "--output-json", &CliParams::output_json, true},
      {"-ojf", "--output-json-full", &CliParams::output_json_full, true},
      {"-ls", "--log-score", &CliParams::log_score, true},
      {"-np", "--no-prints", &CliParams::no_prints, true},
      {"-ps", "--print-special", &CliParams::print_special, true},
      {"-pc", "--print-colors", &CliParams::print_colors, true},
      {nullptr, "--print-confidence", &CliParams::print_confidence, true},
      {"-pp", "--print-progress", &CliParams::print_progress, true},
      {"-nt", "--no-timestamps", &CliParams::no_timestamps, true},
      {"-dl", "--detect-language", &CliParams::detect_language, true},
      {nullptr, "--carry-initial-prompt", &CliParams::carry_initial_prompt, true},
      {"-sns", "--suppress-nst", &CliParams::suppress_nst, true},
      {nullptr, "--vad", &CliParams::vad, true},
      {"-ng", "--no-gpu", &CliParams::use_gpu, false},
      {"-fa", "--flash-attn", &CliParams::flash_attn, true},
      {"-nfa", "--no-flash-attn", &CliParams::flash_attn, false},
      {nullptr, "--version", &CliParams::version, true},
      {nullptr, "--list-languages", &CliParams::list_languages, true},
  };
  const CliParams defaults;
  for (const SwitchCase& c : cases) {
    for (const char* name : {c.short_name, c.long_name}) {
      if (name == nullptr) continue;
      absl::StatusOr<CliParams> p = Parse({name});
      ASSERT_TRUE(p.ok()) << name << ": " << p.status();
      EXPECT_EQ((*p).*c.field, c.set_to) << name;
      if (c.field == &CliParams::flash_attn && c.set_to) continue;  // -fa: already on by default in 1.8.5
      EXPECT_NE(defaults.*c.field, c.set_to) << name << " must change its default";
    }
  }
}

// faster-whisper 1.2.1's prompt and window options (no whisper-cli names): their fields, what
// ToWhisperFullParams passes, and the errors naming a bad value.
TEST(CliParams, FasterWhisperPromptOptions) {
  absl::StatusOr<CliParams> p = Parse({"--prefix", "And so", "--hotwords", "Kennedy", "--suppress-tokens", "-1,11",
                                       "--max-initial-timestamp", "0", "--chunk-length", "10"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->prefix, "And so");
  EXPECT_EQ(p->hotwords, "Kennedy");
  EXPECT_TRUE(p->has_suppress_tokens);
  EXPECT_EQ(p->suppress_tokens, (std::vector<int>{-1, 11}));
  const whisper_full_params w = ToWhisperFullParams(*p);
  EXPECT_STREQ(w.ggml_prefix, "And so");
  EXPECT_STREQ(w.ggml_hotwords, "Kennedy");
  ASSERT_EQ(w.ggml_n_suppress_tokens, 2);
  EXPECT_EQ(w.ggml_suppress_tokens[0], -1);
  EXPECT_EQ(w.max_initial_ts, 0.0f);
  EXPECT_EQ(w.ggml_chunk_length, 10);
  // "" is faster-whisper's suppress_tokens=[]: a list of no ids, not the default (NULL).
  p = Parse({"--suppress-tokens", ""});
  ASSERT_TRUE(p.ok()) << p.status();
  const whisper_full_params e = ToWhisperFullParams(*p);
  EXPECT_NE(e.ggml_suppress_tokens, nullptr);
  EXPECT_EQ(e.ggml_n_suppress_tokens, 0);
  const whisper_full_params d = ToWhisperFullParams(CliParams());
  EXPECT_EQ(d.ggml_suppress_tokens, nullptr);
  EXPECT_EQ(d.ggml_prefix, nullptr);
  EXPECT_EQ(d.max_initial_ts, 1.0f);
  EXPECT_NE(ParseError({"--suppress-tokens", "11,x"}).find("'x' in '11,x' is not a token id"), std::string::npos);
  EXPECT_NE(ParseError({"--suppress-tokens", "-2"}).find("'-2'"), std::string::npos);
  EXPECT_FALSE(Parse({"--chunk-length", "31"}).ok());
  EXPECT_FALSE(Parse({"--max-initial-timestamp", "-1"}).ok());
}

TEST(CliParams, IntegerValuesAndTheirRanges) {
  struct Case {
    const char* short_name;
    const char* long_name;
    int CliParams::*field;
    const char* value;
    int want;
  };
  const std::vector<Case> cases = {
      {"-t", "--threads", &CliParams::n_threads, "3", 3},
      {"-p", "--processors", &CliParams::n_processors, "2", 2},
      {"-ot", "--offset-t", &CliParams::offset_t_ms, "1500", 1500},
      {"-on", "--offset-n", &CliParams::offset_n, "7", 7},
      {"-d", "--duration", &CliParams::duration_ms, "2500", 2500},
      {"-mc", "--max-context", &CliParams::max_context, "64", 64},
      {"-ml", "--max-len", &CliParams::max_len, "42", 42},
      {"-bo", "--best-of", &CliParams::best_of, "8", 8},
      {"-bs", "--beam-size", &CliParams::beam_size, "1", 1},
      {"-ac", "--audio-ctx", &CliParams::audio_ctx, "768", 768},
      {"-vspd", "--vad-min-speech-duration-ms", &CliParams::vad_min_speech_duration_ms, "300", 300},
      {"-vsd", "--vad-min-silence-duration-ms", &CliParams::vad_min_silence_duration_ms, "200", 200},
      {"-vp", "--vad-speech-pad-ms", &CliParams::vad_speech_pad_ms, "60", 60},
      {"-dev", "--device", &CliParams::gpu_device, "2", 2},
  };
  for (const Case& c : cases) {
    for (const char* name : {c.short_name, c.long_name}) {
      absl::StatusOr<CliParams> p = Parse({name, c.value});
      ASSERT_TRUE(p.ok()) << name << ": " << p.status();
      EXPECT_EQ((*p).*c.field, c.want) << name;
      EXPECT_THAT(ParseError({name}), StartsWith(std::string(name) + " needs a value"));
      EXPECT_EQ(ParseError({name, "1.5"}), std::string(name) + " needs an integer, got '1.5'");
      EXPECT_THAT(ParseError({name, "x"}), StartsWith(std::string(name) + " needs an integer"));
    }
  }
  // WHISPER_GGML_MAX_DECODERS (whisper-cli: 8).
  EXPECT_EQ(ParseError({"-bs", "0"}), "-bs 0 is out of range [1, 32]");
  EXPECT_EQ(ParseError({"--beam-size", "33"}), "--beam-size 33 is out of range [1, 32]");
  EXPECT_EQ(ParseError({"-bo", "0"}), "-bo 0 is out of range [1, 32]");
  const whisper_full_params wide = ToWhisperFullParams(*Parse({"-bs", "16", "-bo", "32"}));
  EXPECT_EQ(wide.beam_search.beam_size, 16);
  EXPECT_EQ(wide.greedy.best_of, 32);
  EXPECT_EQ(ParseError({"-t", "-1"}), "-t -1 is out of range [0, 512]");
  EXPECT_EQ(ParseError({"-t", "1000"}), "-t 1000 is out of range [0, 512]");
  EXPECT_EQ(ParseError({"-ot", "-5"}), "-ot -5 is out of range (must be >= 0)");
  EXPECT_EQ(ParseError({"-d", "-5"}), "-d -5 is out of range (must be >= 0)");
  EXPECT_EQ(ParseError({"-ac", "-1"}), "-ac -1 is out of range (must be >= 0)");
  // An integer too wide for int is out of range (not "not an integer"); 1e3 is not an integer.
  EXPECT_EQ(ParseError({"-t", "99999999999"}), "-t 99999999999 is out of range [0, 512]");
  EXPECT_EQ(ParseError({"-t", "-99999999999999999999999"}), "-t -99999999999999999999999 is out of range [0, 512]");
  // Past INT_MAX both bounds are named (it said "(must be >= 0)", as for a negative value).
  EXPECT_EQ(ParseError({"-ot", "2147483648"}), "-ot 2147483648 is out of range [0, 2147483647]");
  EXPECT_EQ(ParseError({"-d", "99999999999999999999"}), "-d 99999999999999999999 is out of range [0, 2147483647]");
  EXPECT_EQ(ParseError({"-t", "1e3"}), "-t needs an integer, got '1e3'");
  EXPECT_EQ(ParseError({"-t", "+-"}), "-t needs an integer, got '+-'");
  // A positive-only float says so, not "must be >= 1.17549e-38" (FLT_MIN).
  EXPECT_EQ(ParseError({"--patience", "0"}), "--patience 0 is out of range (must be > 0)");
  EXPECT_EQ(ParseError({"-ml", "-1"}), "-ml -1 is out of range (must be >= 0)");
  EXPECT_EQ(ParseError({"-vp", "-1"}), "-vp -1 is out of range (must be >= 0)");
  EXPECT_EQ(ParseError({"-dev", "-1"}), "-dev -1 is out of range (must be >= 0)");
  // -mc: any value; negative means all (whisper-cli keeps n_max_text_ctx then).
  absl::StatusOr<CliParams> mc = Parse({"-mc", "-5"});
  ASSERT_TRUE(mc.ok()) << mc.status();
  EXPECT_EQ(mc->max_context, -5);
}

TEST(CliParams, ProcessorsAtLeastOne) {
  absl::StatusOr<CliParams> four = Parse({"-p", "4"});
  ASSERT_TRUE(four.ok()) << four.status();
  EXPECT_EQ(four->n_processors, 4);
  EXPECT_EQ(ParseError({"-p", "0"}), "-p 0 is out of range (must be >= 1)");
  EXPECT_EQ(ParseError({"--processors", "-2"}), "--processors -2 is out of range (must be >= 1)");
}

TEST(CliParams, FloatValuesAndTheirRanges) {
  struct Case {
    const char* short_name;  // nullptr: long form only
    const char* long_name;
    float CliParams::*field;
    const char* value;
    float want;
  };
  const std::vector<Case> cases = {
      {"-wt", "--word-thold", &CliParams::word_thold, "0.25", 0.25f},
      {"-et", "--entropy-thold", &CliParams::entropy_thold, "2.8", 2.8f},
      {"-lpt", "--logprob-thold", &CliParams::logprob_thold, "-0.5", -0.5f},
      {"-nth", "--no-speech-thold", &CliParams::no_speech_thold, "0.3", 0.3f},
      {"-tp", "--temperature", &CliParams::temperature, "0.4", 0.4f},
      {"-tpi", "--temperature-inc", &CliParams::temperature_inc, "0.1", 0.1f},
      {nullptr, "--grammar-penalty", &CliParams::grammar_penalty, "12.5", 12.5f},
      {"-vt", "--vad-threshold", &CliParams::vad_threshold, "0.7", 0.7f},
      {"-vmsd", "--vad-max-speech-duration-s", &CliParams::vad_max_speech_duration_s, "15", 15.0f},
      {"-vo", "--vad-samples-overlap", &CliParams::vad_samples_overlap, "0.05", 0.05f},
  };
  for (const Case& c : cases) {
    for (const char* name : {c.short_name, c.long_name}) {
      if (name == nullptr) continue;
      absl::StatusOr<CliParams> p = Parse({name, c.value});
      ASSERT_TRUE(p.ok()) << name << ": " << p.status();
      EXPECT_FLOAT_EQ((*p).*c.field, c.want) << name;
      EXPECT_THAT(ParseError({name}), StartsWith(std::string(name) + " needs a value"));
      EXPECT_EQ(ParseError({name, "abc"}), std::string(name) + " needs a finite number, got 'abc'");
      EXPECT_EQ(ParseError({name, "nan"}), std::string(name) + " needs a finite number, got 'nan'");
      EXPECT_EQ(ParseError({name, "inf"}), std::string(name) + " needs a finite number, got 'inf'");
    }
  }
  EXPECT_EQ(ParseError({"-tp", "1.5"}), "-tp 1.5 is out of range [0, 1]");
  // Finite but past a float's range: out of range (it said "needs a finite number").
  EXPECT_EQ(ParseError({"-tp", "1e308"}), "-tp 1e308 is out of range [0, 1]");
  EXPECT_EQ(ParseError({"-tpi", "1e39"}), "-tpi 1e39 is out of range (must be >= 0)");
  EXPECT_EQ(ParseError({"-tp", "1e400"}), "-tp needs a finite number, got '1e400'");  // a double's inf
  EXPECT_EQ(ParseError({"-tp", "-0.1"}), "-tp -0.1 is out of range [0, 1]");
  EXPECT_EQ(ParseError({"-tpi", "-0.2"}), "-tpi -0.2 is out of range (must be >= 0)");
  EXPECT_EQ(ParseError({"-wt", "2"}), "-wt 2 is out of range [0, 1]");
  EXPECT_EQ(ParseError({"-vt", "1.1"}), "-vt 1.1 is out of range [0, 1]");
  EXPECT_EQ(ParseError({"-vo", "-1"}), "-vo -1 is out of range (must be >= 0)");
  absl::StatusOr<CliParams> exp = Parse({"-et", "1e1"});
  ASSERT_TRUE(exp.ok()) << exp.status();
  EXPECT_FLOAT_EQ(exp->entropy_thold, 10.0f);
}

TEST(CliParams, StringValues) {
  struct Case {
    const char* short_name;  // nullptr: long form only
    const char* long_name;
    std::string CliParams::*field;
  };
  const std::vector<Case> cases = {
      {"-m", "--model", &CliParams::model},
      {nullptr, "--prompt", &CliParams::prompt},
      {"-fp", "--font-path", &CliParams::font_path},
      {nullptr, "--suppress-regex", &CliParams::suppress_regex},
      {nullptr, "--grammar", &CliParams::grammar},
      {nullptr, "--grammar-rule", &CliParams::grammar_rule},
      {"-vm", "--vad-model", &CliParams::vad_model},
      {"-oved", "--ov-e-device", &CliParams::openvino_encode_device},
  };
  for (const Case& c : cases) {
    for (const char* name : {c.short_name, c.long_name}) {
      if (name == nullptr) continue;
      // Values are taken as they are, even when they start with '-'.
      absl::StatusOr<CliParams> p = Parse({name, "-Some Value"});
      ASSERT_TRUE(p.ok()) << name << ": " << p.status();
      EXPECT_EQ((*p).*c.field, "-Some Value") << name;
      EXPECT_THAT(ParseError({name}), StartsWith(std::string(name) + " needs a value"));
    }
  }
}

TEST(CliParams, LanguageIsLowercased) {
  absl::StatusOr<CliParams> p = Parse({"-l", "DE"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->language, "de");
  p = Parse({"--language", "Auto"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->language, "auto");
  EXPECT_EQ(ParseError({"-l"}), "-l needs a value (LANG)");
}

// As in whisper-cli, -nf and -tpi are separate fields (whisper-cli passes 0 when -nf is set).
TEST(CliParams, NoFallbackKeepsTemperatureInc) {
  for (const auto& args : {std::vector<const char*>{"-nf", "-tpi", "0.5"}, std::vector<const char*>{"-tpi", "0.5", "--no-fallback"}}) {
    absl::StatusOr<CliParams> p = Parse(args);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_TRUE(p->no_fallback);
    EXPECT_FLOAT_EQ(p->temperature_inc, 0.5f);
  }
}

// --temperatures: faster-whisper's temperature list into whisper_full_params.ggml_temperatures, in
// the order given; anything but finite numbers is an error naming the element.
TEST(CliParams, TemperatureList) {
  absl::StatusOr<CliParams> p = Parse({"--temperatures", "0.4,0,-0.5,0.9"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->temperatures, (std::vector<float>{0.4f, 0.0f, -0.5f, 0.9f}));
  const whisper_full_params w = ToWhisperFullParams(*p);
  ASSERT_EQ(w.ggml_n_temperatures, 4);
  EXPECT_EQ(w.ggml_temperatures, p->temperatures.data());
  EXPECT_EQ(ToWhisperFullParams(*Parse({})).ggml_temperatures, nullptr);  // none: -tp, -tpi
  EXPECT_THAT(ParseError({"--temperatures", "0,x"}), HasSubstr("'x' in '0,x' is not a finite number (expected T0,T1,...)"));
  EXPECT_THAT(ParseError({"--temperatures", "0,inf"}), HasSubstr("'inf' in '0,inf' is not a finite number"));
  EXPECT_THAT(ParseError({"--temperatures", ""}), HasSubstr("'' in '' is not a finite number"));
}

TEST(CliParams, SeveralInputsAndOutputNames) {
  absl::StatusOr<CliParams> p =
      Parse({"-f", "a.wav", "-of", "out_a", "--file", "-", "b.wav", "--output-file", "out_b", "-of", "-"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(p->files, ElementsAre("a.wav", "-", "b.wav"));
  EXPECT_THAT(p->output_files, ElementsAre("out_a", "out_b", "-"));

  // -of may name fewer outputs than inputs: the rest use their input path.
  p = Parse({"a.wav", "b.wav", "-of", "x"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(p->output_files, ElementsAre("x"));

  EXPECT_EQ(ParseError({"-f", "a.wav", "-of", "x", "-of", "y", "-of", "z", "b.wav"}),
            "-of/--output-file given 3 times but there are 2 input files: each -of names the output of the input "
            "at the same position");
  EXPECT_THAT(ParseError({"-of", "x"}), HasSubstr("given 1 times but there are 0 input files"));
  EXPECT_EQ(ParseError({"-f", "a.wav", "-of"}), "-of needs a value (FNAME)");
  EXPECT_EQ(ParseError({"-f"}), "-f needs a value (FNAME)");
}

TEST(CliParams, DashIsStdin) {
  absl::StatusOr<CliParams> p = Parse({"-f", "-"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(p->files, ElementsAre("-"));
  p = Parse({"-"});  // bare, as whisper-cli
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(p->files, ElementsAre("-"));
}

TEST(CliParams, GpuFlagsAreIgnoredAndRecordedAsSpelled) {
  absl::StatusOr<CliParams> p =
      Parse({"-ng", "--flash-attn", "-f", "a.wav", "-dev", "1", "-nfa", "--no-gpu", "-oved", "GPU", "-ng"});
  ASSERT_TRUE(p.ok()) << p.status();
  // -fa / -nfa are real (the encoder's attention), not ignored.
  EXPECT_THAT(p->ignored_flags, ElementsAre("-ng", "-dev", "--no-gpu", "-oved"));
  EXPECT_THAT(p->unimplemented_flags, IsEmpty());
  EXPECT_FALSE(p->use_gpu);
  EXPECT_FALSE(p->flash_attn);  // the last of -fa/-nfa wins, as in whisper-cli
  EXPECT_EQ(p->gpu_device, 1);
  EXPECT_EQ(p->openvino_encode_device, "GPU");
  EXPECT_THAT(p->files, ElementsAre("a.wav"));
  EXPECT_FALSE(ToWhisperContextParams(*p).flash_attn);
  p = Parse({"-nfa", "-fa"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->flash_attn);
  EXPECT_TRUE(ToWhisperContextParams(*p).flash_attn);
  EXPECT_THAT(p->ignored_flags, IsEmpty());
  // -dev still needs its number.
  EXPECT_EQ(ParseError({"-dev"}), "-dev needs a value (N)");
  EXPECT_EQ(ParseError({"--device", "cuda0"}), "--device needs an integer, got 'cuda0'");
  EXPECT_EQ(ParseError({"-oved"}), "-oved needs a value (DNAME)");
}

TEST(CliParams, EveryFeatureFlagIsImplemented) {
  absl::StatusOr<CliParams> p = Parse({"--vad", "-vm", "v.bin", "-vt", "0.4", "-dtw", "tiny.en", "--grammar", "g.gbnf",
                                       "--grammar-rule", "root", "-owts", "-fp", "f.ttf", "-tdrz", "-pc",
                                       "--print-confidence", "--log-score", "--suppress-regex", "^x", "--vad"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(p->unimplemented_flags, IsEmpty());  // --grammar was the last one (#37 part 4)
  EXPECT_TRUE(ToWhisperFullParams(*p).tdrz_enable);
  EXPECT_EQ(p->unimplemented, "");
  // Implemented, so not in the list: --vad, -dtw, -pc, --print-confidence, --log-score, --suppress-regex.
  EXPECT_TRUE(p->print_colors);
  EXPECT_TRUE(p->print_confidence);
  EXPECT_TRUE(p->log_score);
  EXPECT_EQ(p->suppress_regex, "^x");
  EXPECT_THAT(p->ignored_flags, IsEmpty());
  EXPECT_TRUE(p->vad);
  EXPECT_EQ(p->vad_model, "v.bin");
  EXPECT_FLOAT_EQ(p->vad_threshold, 0.4f);
  EXPECT_EQ(p->dtw, "tiny.en");
  EXPECT_EQ(p->grammar, "g.gbnf");
  EXPECT_EQ(p->grammar_rule, "root");
  EXPECT_TRUE(p->output_words);
  EXPECT_EQ(p->font_path, "f.ttf");
  // -di is implemented: set, not recorded.
  p = Parse({"--diarize"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->diarize);
  EXPECT_THAT(p->unimplemented_flags, IsEmpty());
  // An empty string leaves the feature off in whisper-cli, so it is not recorded.
  p = Parse({"-dtw", "", "--grammar", "", "--suppress-regex", ""});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(p->unimplemented_flags, IsEmpty());
  // -debug is a no-op in whisper.cpp 1.8.5: accepted, not reported.
  p = Parse({"-debug"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->debug_mode);
  EXPECT_THAT(p->unimplemented_flags, IsEmpty());
}

// whisper-cli: -owts turns on token timestamps and, unless -ml is given, segments of at most 60
// characters.
TEST(CliParams, OutputWordsTimesTokensAndCapsSegments) {
  absl::StatusOr<CliParams> p = Parse({"-owts"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(ToWhisperFullParams(*p).token_timestamps);
  EXPECT_EQ(ToWhisperFullParams(*p).max_len, 60);
  p = Parse({"-owts", "-ml", "25"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(ToWhisperFullParams(*p).max_len, 25);
  p = Parse({});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(ToWhisperFullParams(*p).token_timestamps);
  EXPECT_EQ(ToWhisperFullParams(*p).max_len, 0);
}

// whisper_full refuses a batch with a selection (whisper/whisper_batched.cc); the parser says so
// before any model is loaded (it was an error after the load and the "processing" line).
TEST(CliParams, BatchSizeExcludesASelection) {
  EXPECT_EQ(ParseError({"--batch-size", "8", "-ot", "1000"}),
            "--batch-size 8 cannot be combined with -ot/--offset-t (1000 ms) or -d/--duration (0 ms): batched "
            "transcription cuts the whole audio at VAD pauses or at --clip-timestamps; use --batch-size 0 or 1 with "
            "them");
  EXPECT_THAT(ParseError({"-d", "500", "--batch-size", "2"}), StartsWith("--batch-size 2 cannot be combined"));
  // The clips are the batched chunks (whisper/whisper_batched.cc).
  EXPECT_TRUE(Parse({"--batch-size", "2", "--clip-timestamps", "0,5"}).ok());
  EXPECT_TRUE(Parse({"--batch-size", "1", "-ot", "1000"}).ok());
}

// --clip-timestamps values read as Python's float() reads faster-whisper's string: decimal only
// (strtof would take "0x10" as 16), and within [0, 1e9] s, with a message that says which.
TEST(CliParams, ClipTimestampsValues) {
  ASSERT_TRUE(Parse({"--clip-timestamps", "1.5,2e1, 30"}).ok());
  EXPECT_EQ(ParseError({"--clip-timestamps", "0x10"}),
            "--clip-timestamps '0x10' in '0x10' is not a number of seconds (expected START,END,...)");
  EXPECT_EQ(ParseError({"--clip-timestamps", "1,abc"}),
            "--clip-timestamps 'abc' in '1,abc' is not a number of seconds (expected START,END,...)");
  EXPECT_EQ(ParseError({"--clip-timestamps", "1,1e300"}),
            "--clip-timestamps '1e300' in '1,1e300' is out of range: clip times are seconds in [0, 1e9]");
  EXPECT_EQ(ParseError({"--clip-timestamps", "-1"}),
            "--clip-timestamps '-1' in '-1' is out of range: clip times are seconds in [0, 1e9]");
  EXPECT_THAT(ParseError({"--clip-timestamps", "nan"}), HasSubstr("is not a number of seconds"));
}

TEST(CliParams, DiarizeAndTinydiarizeExcludeEachOther) {
  EXPECT_EQ(ParseError({"-di", "-tdrz"}), "cannot use both -di/--diarize and -tdrz/--tinydiarize");
}

TEST(CliParams, ErrorsNameTheFlag) {
  EXPECT_EQ(ParseError({"-xyz"}), "unknown argument '-xyz' (see --help)");
  EXPECT_EQ(ParseError({"--print-colours"}), "unknown argument '--print-colours' (see --help)");
  EXPECT_EQ(ParseError({"--threads=4"}), "unknown argument '--threads=4' (see --help)");
  EXPECT_EQ(ParseError({"-m"}), "-m needs a value (FNAME)");
  EXPECT_EQ(ParseError({"-t", "two"}), "-t needs an integer, got 'two'");
}

TEST(CliParams, HelpStopsParsing) {
  absl::StatusOr<CliParams> p = Parse({"-f", "a.wav", "--help", "-xyz", "-bs"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->help);
  // Flags before -h are still checked.
  EXPECT_EQ(ParseError({"-bs", "0", "-h"}), "-bs 0 is out of range [1, 32]");
}

TEST(CliParams, VersionAndListLanguages) {
  absl::StatusOr<CliParams> p = Parse({"--version"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->version);
  EXPECT_THAT(p->unimplemented_flags, IsEmpty());
  p = Parse({"--list-languages"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->list_languages);
  // -ls is whisper-cli's --log-score, not a language list.
  p = Parse({"-ls"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->log_score);
  EXPECT_FALSE(p->list_languages);
}

TEST(CliParams, OutputJsonFullImpliesOutputJson) {
  auto p = Parse({"-ojf"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->output_json);
  EXPECT_TRUE(p->output_json_full);
  auto q = Parse({"--output-json"});
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_TRUE(q->output_json);
  EXPECT_FALSE(q->output_json_full);
  auto r = Parse({"--output-json-full"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->output_json_full);
}

TEST(CliParams, ResponseFile) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/args.txt";
  std::ofstream(path) << "-f\r\na b.wav\n\n-l\nDE\n--prompt\nhello world\n-ng\n";
  const std::string arg = "@" + path;
  const char* argv[] = {"whisper-cli", arg.c_str()};
  absl::StatusOr<CliParams> p = ParseCliParams(2, argv);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(p->files, ElementsAre("a b.wav"));
  EXPECT_EQ(p->language, "de");
  EXPECT_EQ(p->prompt, "hello world");
  EXPECT_THAT(p->ignored_flags, ElementsAre("-ng"));

  const char* missing[] = {"whisper-cli", "@/nonexistent/args.txt"};
  absl::StatusOr<CliParams> bad = ParseCliParams(2, missing);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "response file '/nonexistent/args.txt' not found");
  // Not the only argument: an ordinary file name.
  const char* two[] = {"whisper-cli", "@x.wav", "-nt"};
  p = ParseCliParams(3, two);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(p->files, ElementsAre("@x.wav"));
}

TEST(CliUsage, ListsEveryFlagWithItsDefault) {
  const std::string u = CliUsage("whisper-cli");
  for (const CliFlag& f : WhisperCli185Flags()) {
    for (const char* name : {f.short_name, f.long_name}) {
      if (name == nullptr) continue;
      EXPECT_NE(UsageLine(u, name), "") << name;
    }
  }
  EXPECT_NE(UsageLine(u, "--version"), "");
  EXPECT_NE(UsageLine(u, "--list-languages"), "");
  EXPECT_THAT(UsageLine(u, "-bs"), HasSubstr("[5      ] beam size"));
  EXPECT_THAT(UsageLine(u, "-t"), HasSubstr("[0      ]"));
  EXPECT_THAT(UsageLine(u, "-et"), HasSubstr("[2.40   ]"));
  EXPECT_THAT(UsageLine(u, "-lpt"), HasSubstr("[-1.00  ]"));
  EXPECT_THAT(UsageLine(u, "-wt"), HasSubstr("[0.01   ]"));
  EXPECT_THAT(UsageLine(u, "-mc"), HasSubstr("[-1     ]"));
  EXPECT_THAT(UsageLine(u, "-l"), HasSubstr("[en     ]"));
  EXPECT_THAT(UsageLine(u, "-m"), HasSubstr("[models/ggml-tiny.en.bin]"));
  EXPECT_THAT(UsageLine(u, "-vmsd"), HasSubstr("[FLT_MAX]"));
  EXPECT_THAT(UsageLine(u, "-vspd"), HasSubstr("[250    ]"));
  EXPECT_THAT(UsageLine(u, "-fa"), HasSubstr("[true   ]"));
  EXPECT_THAT(UsageLine(u, "-nfa"), HasSubstr("[false  ]"));
  EXPECT_THAT(UsageLine(u, "-ng"), HasSubstr("[false  ]"));
  EXPECT_THAT(UsageLine(u, "-oved"), HasSubstr("[CPU    ]"));
  EXPECT_THAT(UsageLine(u, "--grammar-penalty"), HasSubstr("[100.00 ]"));
}

// -dtw takes whisper-cli's preset names (cli.cpp: tiny .. large.v3.turbo) and nothing else; it
// turns DTW token timestamps on in the context parameters.
TEST(CliParams, DtwPresets) {
  for (const char* name : {"tiny.en", "tiny", "base.en", "base", "small.en", "small", "medium.en", "medium",
                           "large.v1", "large.v2", "large.v3", "large.v3.turbo"}) {
    absl::StatusOr<CliParams> p = Parse({"--dtw", name});
    ASSERT_TRUE(p.ok()) << name << ": " << p.status();
    const whisper_context_params c = ToWhisperContextParams(*p);
    EXPECT_TRUE(c.dtw_token_timestamps) << name;
    EXPECT_NE(c.dtw_aheads_preset, WHISPER_AHEADS_NONE) << name;
  }
  absl::StatusOr<CliParams> p = Parse({"-dtw", "tiny.en"});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(ToWhisperContextParams(*p).dtw_aheads_preset, WHISPER_AHEADS_TINY_EN);
  EXPECT_EQ(ToWhisperContextParams(*p).use_gpu, false);
  p = Parse({});
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(ToWhisperContextParams(*p).dtw_token_timestamps);
  EXPECT_THAT(ParseError({"-dtw", "tiny-en"}), StartsWith("-dtw: unknown DTW preset 'tiny-en' (expected tiny.en,"));
  EXPECT_THAT(ParseError({"-dtw"}), StartsWith("-dtw needs a value"));
}

// --vad and its options reach whisper_full_params as whisper-cli passes them; without -vm the
// model is models/ggml-silero-v6.bin.
TEST(CliParams, VadOptionsReachTheFullParams) {
  absl::StatusOr<CliParams> p = Parse({"--vad", "-vt", "0.4", "-vspd", "200", "-vsd", "50", "-vmsd", "10", "-vp",
                                       "20", "-vo", "0.2"});
  ASSERT_TRUE(p.ok()) << p.status();
  whisper_full_params w = ToWhisperFullParams(*p);
  EXPECT_TRUE(w.vad);
  EXPECT_STREQ(w.vad_model_path, "models/ggml-silero-v6.bin");
  EXPECT_FLOAT_EQ(w.vad_params.threshold, 0.4f);
  EXPECT_EQ(w.vad_params.min_speech_duration_ms, 200);
  EXPECT_EQ(w.vad_params.min_silence_duration_ms, 50);
  EXPECT_FLOAT_EQ(w.vad_params.max_speech_duration_s, 10.0f);
  EXPECT_EQ(w.vad_params.speech_pad_ms, 20);
  EXPECT_FLOAT_EQ(w.vad_params.samples_overlap, 0.2f);
  p = Parse({"--vad", "-vm", "my-vad.bin"});
  ASSERT_TRUE(p.ok());
  EXPECT_STREQ(ToWhisperFullParams(*p).vad_model_path, "my-vad.bin");
  p = Parse({});
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(ToWhisperFullParams(*p).vad);
}

TEST(CliUsage, MarksIgnoredAndUnimplementedFlags) {
  const std::string u = CliUsage("whisper-cli");
  for (const char* f : {"-ng", "-dev", "-oved"}) {
    EXPECT_THAT(UsageLine(u, f), HasSubstr("(ignored: CPU runtime)")) << f;
  }
  for (const char* f : {"--grammar", "--grammar-penalty", "-di", "-owts", "-tdrz", "-bs", "-p", "-ojf", "-of", "-ps", "-pc", "-sns", "-debug", "--carry-initial-prompt",
                        "-vt", "-fp", "--grammar-rule", "--version", "--list-languages", "--print-confidence", "-ls",
                        "--suppress-regex", "-dtw", "--vad", "-fa", "-nfa"}) {
    EXPECT_THAT(UsageLine(u, f), Not(HasSubstr("(ignored"))) << f;
    EXPECT_THAT(UsageLine(u, f), Not(HasSubstr("(not implemented"))) << f;
  }
  EXPECT_THAT(UsageLine(u, "-vt"), HasSubstr("(only used with --vad)"));
  EXPECT_THAT(UsageLine(u, "-fp"), HasSubstr("(only used by -owts)"));
  // A default below the flag's range is shown as "off", not as a value the flag refuses.
  EXPECT_THAT(UsageLine(u, "--hallucination-silence-threshold"), HasSubstr("[off"));
}

}  // namespace
}  // namespace whisper
