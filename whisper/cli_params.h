// Command-line flags of `whisper:cli`, spelled and defaulted as whisper.cpp's whisper-cli
// (examples/cli/cli.cpp L35-325). whisper-cli's flags have short multi-letter forms with one dash
// (-otxt, -bs) and long forms with inner dashes (--offset-t), which Abseil flags cannot name, so a
// small table-driven parser reads them; an unknown flag is an error (whisper-cli prints usage and
// exits 0 instead: a typo should not look like success).
#ifndef GGML_WHISPER_WHISPER_CLI_PARAMS_H_
#define GGML_WHISPER_WHISPER_CLI_PARAMS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace whisper {

struct CliParams {
  int n_threads = 0;  // 0: min(4, hardware threads), as whisper-cli
  int n_processors = 1;
  int offset_t_ms = 0;
  int offset_n = 0;
  int duration_ms = 0;
  int max_context = -1;
  int max_len = 0;
  bool split_on_word = false;
  int best_of = 5;
  int beam_size = 5;
  int audio_ctx = 0;
  float word_thold = 0.01f;
  float entropy_thold = 2.40f;
  float logprob_thold = -1.00f;
  float no_speech_thold = 0.60f;
  float temperature = 0.0f;
  float temperature_inc = 0.2f;
  bool translate = false;
  bool detect_language = false;
  std::string language = "en";
  std::string prompt;
  bool output_txt = false, output_vtt = false, output_srt = false, output_lrc = false;
  bool output_csv = false, output_json = false;
  bool output_json_full = false;  // -ojf: -oj plus each segment's token ids and texts
  std::string output_file;  // without extension; "" = input path
  bool no_prints = false;
  bool print_special = false;
  bool print_progress = false;
  bool no_timestamps = false;
  bool suppress_nst = false;
  bool help = false;
  std::string model = "models/ggml-tiny.en.bin";
  std::vector<std::string> files;
};

// Parses argv[1..argc). Errors (InvalidArgument, one line): an unknown flag, a missing or
// malformed value (naming the flag and the expected kind), an out-of-range value.
absl::StatusOr<CliParams> ParseCliParams(int argc, const char* const* argv);

// The usage text, with every flag and its default.
std::string CliUsage(const char* argv0);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_CLI_PARAMS_H_
