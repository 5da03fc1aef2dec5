// The C API's program helpers (whisper.h "Program helpers"): -dtw names against whisper-cli
// 1.8.5's table (examples/cli/cli.cpp), model-file checks on real files of each kind, and
// timestamps against hand-computed strings.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "whisper/whisper.h"

namespace {

TEST(AlignmentHeadsPresetFromName, WhisperCliNames) {
  const struct {
    const char* name;
    whisper_alignment_heads_preset preset;
  } kCli[] = {{"tiny.en", WHISPER_AHEADS_TINY_EN},       {"tiny", WHISPER_AHEADS_TINY},
              {"base.en", WHISPER_AHEADS_BASE_EN},       {"base", WHISPER_AHEADS_BASE},
              {"small.en", WHISPER_AHEADS_SMALL_EN},     {"small", WHISPER_AHEADS_SMALL},
              {"medium.en", WHISPER_AHEADS_MEDIUM_EN},   {"medium", WHISPER_AHEADS_MEDIUM},
              {"large.v1", WHISPER_AHEADS_LARGE_V1},     {"large.v2", WHISPER_AHEADS_LARGE_V2},
              {"large.v3", WHISPER_AHEADS_LARGE_V3},     {"large.v3.turbo", WHISPER_AHEADS_LARGE_V3_TURBO}};
  for (const auto& c : kCli) EXPECT_EQ(whisper_ggml_alignment_heads_preset_from_name(c.name), c.preset) << c.name;
  for (const char* bad : {"", "tiny-en", "large-v3", "TINY.EN", "base.en ", "large"}) {
    EXPECT_EQ(whisper_ggml_alignment_heads_preset_from_name(bad), WHISPER_AHEADS_NONE) << bad;
  }
  EXPECT_EQ(whisper_ggml_alignment_heads_preset_from_name(nullptr), WHISPER_AHEADS_NONE);
}

TEST(AlignmentHeadsPresetForModel, TinyEnByShape) {
  whisper_context* ctx = whisper_init_from_file_with_params(testdata::ModelPath("ggml-tiny.en.bin").c_str(),
                                                            whisper_context_default_params());
  ASSERT_NE(ctx, nullptr);
  EXPECT_EQ(whisper_ggml_alignment_heads_preset_for_model(ctx), WHISPER_AHEADS_TINY_EN);
  whisper_free(ctx);
  EXPECT_EQ(whisper_ggml_alignment_heads_preset_for_model(nullptr), WHISPER_AHEADS_NONE);
}

// whisper_ggml_init: a buffer named by the caller (a CTranslate2 folder's name) in the load line
// instead of whisper.cpp's "<buffer>"; WHISPER_GGML_INIT_HEADS_FOR_SHAPE turning DTW on with the
// shape's heads within the one load (tokens get t_dtw, as with dtw_aheads_preset = TINY_EN; the
// server loaded twice for this); bad arguments refused with a message.
std::string g_logged;

std::vector<float> FirstSecondsOfJfk(size_t n) {
  const std::vector<unsigned char> wav = testdata::ReadBytes(testdata::SharedData("jfk.wav"));
  for (size_t at = 12; at + 8 <= wav.size();) {
    const uint32_t size = wav[at + 4] | (wav[at + 5] << 8) | (wav[at + 6] << 16) | (uint32_t{wav[at + 7]} << 24);
    if (std::memcmp(&wav[at], "data", 4) == 0) {
      std::vector<float> out(std::min<size_t>(n, std::min<size_t>(size, wav.size() - at - 8) / 2));
      for (size_t i = 0; i < out.size(); ++i) {
        out[i] = static_cast<int16_t>(wav[at + 8 + 2 * i] | (wav[at + 9 + 2 * i] << 8)) / 32768.0f;
      }
      return out;
    }
    at += 8 + size + (size & 1);
  }
  return {};
}

// t_dtw of the first text token of a greedy pass over `audio` (-2 when there is none).
int64_t FirstTokenDtw(whisper_context* ctx, const std::vector<float>& audio) {
  whisper_full_params w = whisper_full_default_params(WHISPER_SAMPLING_GREEDY);
  w.n_threads = 2;
  w.print_progress = false;
  if (whisper_full(ctx, w, audio.data(), static_cast<int>(audio.size())) != 0) return -2;
  for (int s = 0; s < whisper_full_n_segments(ctx); ++s) {
    for (int t = 0; t < whisper_full_n_tokens(ctx, s); ++t) {
      if (whisper_full_get_token_id(ctx, s, t) < whisper_token_eot(ctx)) return whisper_full_get_token_data(ctx, s, t).t_dtw;
    }
  }
  return -2;
}

TEST(GgmlInit, NamesTheBufferAndPicksTheHeadsInOneLoad) {
  whisper_log_set([](enum ggml_log_level, const char* text, void*) { g_logged += text; }, nullptr);
  const std::string path = testdata::ModelPath("ggml-tiny.en.bin");
  std::vector<unsigned char> image = testdata::ReadBytes(path);
  ASSERT_FALSE(image.empty()) << path;
  const whisper_context_params cp = whisper_context_default_params();
  g_logged.clear();
  whisper_context* named = whisper_ggml_init(nullptr, image.data(), image.size(), "models/faster-whisper-tiny.en", cp,
                                             WHISPER_GGML_INIT_NO_STATE);
  ASSERT_NE(named, nullptr) << g_logged;
  EXPECT_NE(g_logged.find("loaded 'models/faster-whisper-tiny.en': type tiny"), std::string::npos) << g_logged;
  EXPECT_EQ(g_logged.find("<buffer>"), std::string::npos) << g_logged;
  EXPECT_EQ(g_logged.find("whisper_init_state"), std::string::npos) << g_logged;  // no state made
  whisper_free(named);
  g_logged.clear();
  whisper_context* unnamed = whisper_ggml_init(nullptr, image.data(), image.size(), nullptr, cp, 0);
  ASSERT_NE(unnamed, nullptr) << g_logged;
  EXPECT_NE(g_logged.find("loaded '<buffer>'"), std::string::npos) << g_logged;
  const std::vector<float> audio = FirstSecondsOfJfk(3 * 16000);
  ASSERT_EQ(audio.size(), 3u * 16000);
  EXPECT_EQ(FirstTokenDtw(unnamed, audio), -1);  // no heads asked for: no DTW
  whisper_free(unnamed);

  g_logged.clear();
  whisper_context* heads = whisper_ggml_init(path.c_str(), nullptr, 0, nullptr, cp, WHISPER_GGML_INIT_HEADS_FOR_SHAPE);
  ASSERT_NE(heads, nullptr) << g_logged;
  size_t loads = 0;
  for (size_t at = 0; (at = g_logged.find("loaded '", at)) != std::string::npos; ++at) ++loads;
  EXPECT_EQ(loads, 1u) << g_logged;
  EXPECT_EQ(whisper_ggml_alignment_heads_preset_for_model(heads), WHISPER_AHEADS_TINY_EN);
  const int64_t shape_dtw = FirstTokenDtw(heads, audio);
  whisper_free(heads);
  whisper_context_params preset = cp;  // the same heads named explicitly: the same time
  preset.dtw_token_timestamps = true;
  preset.dtw_aheads_preset = WHISPER_AHEADS_TINY_EN;
  whisper_context* named_heads = whisper_init_from_file_with_params(path.c_str(), preset);
  ASSERT_NE(named_heads, nullptr);
  const int64_t preset_dtw = FirstTokenDtw(named_heads, audio);
  whisper_free(named_heads);
  EXPECT_GE(shape_dtw, 0);
  EXPECT_EQ(shape_dtw, preset_dtw);

  g_logged.clear();
  EXPECT_EQ(whisper_ggml_init(nullptr, nullptr, 0, "x", cp, 0), nullptr);
  EXPECT_NE(g_logged.find("expected a path or a buffer"), std::string::npos) << g_logged;
  g_logged.clear();
  EXPECT_EQ(whisper_ggml_init(path.c_str(), nullptr, 0, nullptr, cp, 4), nullptr);
  EXPECT_NE(g_logged.find("flags 4"), std::string::npos) << g_logged;
  whisper_log_set(nullptr, nullptr);
}

TEST(CheckModelFile, KindsOfRealFiles) {
  const std::string whisper_model = testdata::ModelPath("ggml-tiny.en.bin");
  const std::string vad_model = testdata::ModelPath("ggml-silero-v6.bin");
  char msg[512];
  EXPECT_EQ(whisper_ggml_check_model_file(whisper_model.c_str(), WHISPER_GGML_MODEL_FILE_WHISPER, msg, sizeof(msg)), 0);
  EXPECT_EQ(whisper_ggml_check_model_file(vad_model.c_str(), WHISPER_GGML_MODEL_FILE_SILERO_VAD, msg, sizeof(msg)), 0);

  ASSERT_EQ(whisper_ggml_check_model_file(vad_model.c_str(), WHISPER_GGML_MODEL_FILE_WHISPER, msg, sizeof(msg)), 1);
  const std::string m = msg;
  EXPECT_NE(m.find(vad_model), std::string::npos) << m;  // names the file
  EXPECT_NE(m.find("Silero VAD"), std::string::npos) << m;  // what it is
  EXPECT_NE(m.find("Whisper model"), std::string::npos) << m;  // what was expected
  EXPECT_EQ(whisper_ggml_check_model_file(whisper_model.c_str(), WHISPER_GGML_MODEL_FILE_SILERO_VAD, msg, sizeof(msg)), 1);

  // Truncated to msg_size - 1 bytes and NUL-terminated; nothing written for size 0 or NULL.
  char small[8];
  std::memset(small, 'x', sizeof(small));
  ASSERT_EQ(whisper_ggml_check_model_file(vad_model.c_str(), WHISPER_GGML_MODEL_FILE_WHISPER, small, sizeof(small)), 1);
  EXPECT_EQ(std::strlen(small), 7u);
  EXPECT_EQ(std::string(small), m.substr(0, 7));
  char untouched = 'x';
  EXPECT_EQ(whisper_ggml_check_model_file(vad_model.c_str(), WHISPER_GGML_MODEL_FILE_WHISPER, &untouched, 0), 1);
  EXPECT_EQ(untouched, 'x');
  EXPECT_EQ(whisper_ggml_check_model_file(vad_model.c_str(), WHISPER_GGML_MODEL_FILE_WHISPER, nullptr, 100), 1);

  // A file that cannot be opened is the loader's to report; bad arguments are -1.
  EXPECT_EQ(whisper_ggml_check_model_file("/nonexistent/ggml.bin", WHISPER_GGML_MODEL_FILE_WHISPER, msg, sizeof(msg)), 0);
  EXPECT_EQ(whisper_ggml_check_model_file(nullptr, WHISPER_GGML_MODEL_FILE_WHISPER, msg, sizeof(msg)), -1);
  EXPECT_EQ(whisper_ggml_check_model_file(whisper_model.c_str(), static_cast<whisper_ggml_model_file_kind>(7), msg,
                                          sizeof(msg)),
            -1);
}

TEST(CheckModelFile, EmptyFile) {
  const std::string path = testing::TempDir() + "/empty.bin";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  char msg[512];
  ASSERT_EQ(whisper_ggml_check_model_file(path.c_str(), WHISPER_GGML_MODEL_FILE_WHISPER, msg, sizeof(msg)), 1);
  EXPECT_NE(std::string(msg).find("empty"), std::string::npos) << msg;
}

std::string Ts(int64_t t, int comma) {
  char buf[32];
  return whisper_ggml_format_timestamp(t, comma, buf, sizeof(buf));
}

TEST(FormatTimestamp, WhisperCppForm) {
  EXPECT_EQ(Ts(0, 0), "00:00:00.000");
  EXPECT_EQ(Ts(1100, 0), "00:00:11.000");                  // 11 s
  EXPECT_EQ(Ts(366012, 1), "01:01:00,120");                // 1 h 1 min 0.12 s, SRT's comma
  EXPECT_EQ(Ts(-1, 0), "00:00:00.000");                    // negative: 0
  EXPECT_EQ(Ts(std::numeric_limits<int64_t>::min(), 0), "00:00:00.000");
  // Clamped at INT64_MAX / 10 cs = 9223372036854775800 ms = 2562047788015 h 12 min 55.8 s.
  EXPECT_EQ(Ts(std::numeric_limits<int64_t>::max(), 0), "2562047788015:12:55.800");
  char tiny[6];
  EXPECT_EQ(std::string(whisper_ggml_format_timestamp(1100, 0, tiny, sizeof(tiny))), "00:00");  // snprintf's cut
}

// faster-whisper 1.2.1's compute_type names (its documentation: default, auto, int8,
// int8_float32, int8_float16, int8_bfloat16, int16, float16, bfloat16, float32): int16 has no
// ggml weight type; an error leaves params as they were.
TEST(SetComputeTypeTest, NamesNotesAndErrors) {
  whisper_context_params p = whisper_context_default_params();
  EXPECT_FALSE(p.ggml_convert_weights);
  char msg[300] = "";
  ASSERT_EQ(whisper_ggml_set_compute_type(&p, "int8_float16", msg, sizeof(msg)), 0);
  EXPECT_TRUE(p.ggml_convert_weights);
  EXPECT_EQ(p.ggml_weight_type, GGML_TYPE_Q8_0);
  EXPECT_EQ(whisper_ggml_set_compute_type(&p, "int16", msg, sizeof(msg)), -1);
  EXPECT_STREQ(msg,
               "compute_type 'int16' is not supported (16-bit integer weights have no ggml type this runtime "
               "multiplies): expected one of default, auto, int8, int8_float32, int8_float16, int8_bfloat16, "
               "float16, bfloat16, float32");
  EXPECT_TRUE(p.ggml_convert_weights);  // unchanged
  EXPECT_EQ(p.ggml_weight_type, GGML_TYPE_Q8_0);
  ASSERT_EQ(whisper_ggml_set_compute_type(&p, "bfloat16", msg, sizeof(msg)), 1);
  EXPECT_EQ(p.ggml_weight_type, GGML_TYPE_F16);
  EXPECT_NE(std::string(msg).find("no bfloat16 kernels"), std::string::npos) << msg;
  ASSERT_EQ(whisper_ggml_set_compute_type(&p, "auto", nullptr, 0), 0);
  EXPECT_FALSE(p.ggml_convert_weights);
  char small[8];
  EXPECT_EQ(whisper_ggml_set_compute_type(&p, "Float16", small, sizeof(small)), -1);
  EXPECT_STREQ(small, "compute");  // 7 bytes and the NUL
  EXPECT_EQ(whisper_ggml_set_compute_type(nullptr, "int8", msg, sizeof(msg)), -1);
  EXPECT_EQ(whisper_ggml_set_compute_type(&p, nullptr, msg, sizeof(msg)), -1);
}

}  // namespace

namespace {

// root ::= "ab" | [a-c] rest; rest ::= "x" (two rules, as whisper.h's binary form).
const whisper_grammar_element kRoot[] = {{WHISPER_GRETYPE_CHAR, 'a'},      {WHISPER_GRETYPE_CHAR, 'b'},
                                         {WHISPER_GRETYPE_ALT, 0},         {WHISPER_GRETYPE_CHAR, 'a'},
                                         {WHISPER_GRETYPE_CHAR_RNG_UPPER, 'c'}, {WHISPER_GRETYPE_RULE_REF, 1},
                                         {WHISPER_GRETYPE_END, 0}};
const whisper_grammar_element kRest[] = {{WHISPER_GRETYPE_CHAR, 'x'}, {WHISPER_GRETYPE_END, 0}};

}  // namespace

TEST(CheckGrammar, AcceptsGoodRulesAndNamesBadOnes) {
  const whisper_grammar_element* rules[] = {kRoot, kRest};
  char msg[200] = "untouched";
  EXPECT_EQ(whisper_ggml_check_grammar(rules, 2, 0, msg, sizeof(msg)), 0);
  EXPECT_STREQ(msg, "untouched");
  EXPECT_EQ(whisper_ggml_check_grammar(rules, 1, 0, msg, sizeof(msg)), -1);  // rule 1 missing
  EXPECT_NE(std::strstr(msg, "rule 0 element 5: WHISPER_GRETYPE_RULE_REF to rule 1, but there are 1 rules"), nullptr)
      << msg;
  EXPECT_EQ(whisper_ggml_check_grammar(rules, 2, 2, msg, sizeof(msg)), -1);
  EXPECT_NE(std::strstr(msg, "start rule 2"), nullptr) << msg;
  const whisper_grammar_element left[] = {{WHISPER_GRETYPE_RULE_REF, 0}, {WHISPER_GRETYPE_END, 0}};
  const whisper_grammar_element* left_rules[] = {left};
  EXPECT_EQ(whisper_ggml_check_grammar(left_rules, 1, 0, msg, 12), -1);
  EXPECT_STREQ(msg, "rule 0 is l");  // truncated to msg_size - 1
  EXPECT_EQ(whisper_ggml_check_grammar(nullptr, 3, 0, nullptr, 0), -1);
}

// whisper_full's grammar fields: errors named, and a grammar run on silence completes.
TEST(FullGrammar, ErrorsAndARun) {
  whisper_context* ctx = whisper_init_from_file_with_params(testdata::ModelPath("ggml-tiny.en.bin").c_str(),
                                                            whisper_context_default_params());
  ASSERT_NE(ctx, nullptr);
  const std::vector<float> silence(16000, 0.0f);
  const whisper_grammar_element* rules[] = {kRoot, kRest};
  whisper_full_params p = whisper_full_default_params(WHISPER_SAMPLING_BEAM_SEARCH);
  p.n_threads = 1;
  p.print_progress = false;
  p.grammar_rules = rules;
  p.n_grammar_rules = 0;
  EXPECT_EQ(whisper_full(ctx, p, silence.data(), static_cast<int>(silence.size())), -1);
  p.n_grammar_rules = 2;
  p.grammar_penalty = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(whisper_full(ctx, p, silence.data(), static_cast<int>(silence.size())), -1);
  p.grammar_penalty = 100.0f;
  p.i_start_rule = 7;
  EXPECT_EQ(whisper_full(ctx, p, silence.data(), static_cast<int>(silence.size())), -1);
  p.i_start_rule = 0;
  p.beam_search.beam_size = 1;
  EXPECT_EQ(whisper_full(ctx, p, silence.data(), static_cast<int>(silence.size())), 0);
  p.grammar_rules = nullptr;  // NULL: no grammar, whatever n_grammar_rules says (as whisper.cpp)
  EXPECT_EQ(whisper_full(ctx, p, silence.data(), static_cast<int>(silence.size())), 0);
  whisper_free(ctx);
}
