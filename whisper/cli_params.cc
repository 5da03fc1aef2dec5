#include "whisper/cli_params.h"

#include <functional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace whisper {
namespace {

enum class Kind { kFlag, kInt, kFloat, kString };

struct Flag {
  const char* short_name;  // "-bs"
  const char* long_name;   // "--beam-size"
  Kind kind;
  const char* help;
  std::function<void(CliParams&, const std::string&)> set;
};

const std::vector<Flag>& Flags() {
  static const std::vector<Flag> flags = {
      {"-h", "--help", Kind::kFlag, "show this help and exit", [](CliParams& p, const std::string&) { p.help = true; }},
      {"-t", "--threads", Kind::kInt, "threads for computation [min(4, cores)]",
       [](CliParams& p, const std::string& v) { absl::SimpleAtoi(v, &p.n_threads); }},
      {"-p", "--processors", Kind::kInt, "processors (only 1 is supported) [1]",
       [](CliParams& p, const std::string& v) { absl::SimpleAtoi(v, &p.n_processors); }},
      {"-ot", "--offset-t", Kind::kInt, "time offset in milliseconds [0]",
       [](CliParams& p, const std::string& v) { absl::SimpleAtoi(v, &p.offset_t_ms); }},
      {"-on", "--offset-n", Kind::kInt, "segment index offset (SRT numbering) [0]",
       [](CliParams& p, const std::string& v) { absl::SimpleAtoi(v, &p.offset_n); }},
      {"-d", "--duration", Kind::kInt, "duration of audio to process in milliseconds [0 = all]",
       [](CliParams& p, const std::string& v) { absl::SimpleAtoi(v, &p.duration_ms); }},
      {"-mc", "--max-context", Kind::kInt, "maximum number of text context tokens to store [-1 = all]",
       [](CliParams& p, const std::string& v) { absl::SimpleAtoi(v, &p.max_context); }},
      {"-ml", "--max-len", Kind::kInt, "maximum segment length in characters [0 = no limit]",
       [](CliParams& p, const std::string& v) { absl::SimpleAtoi(v, &p.max_len); }},
      {"-sow", "--split-on-word", Kind::kFlag, "split on word rather than on character",
       [](CliParams& p, const std::string&) { p.split_on_word = true; }},
      {"-bo", "--best-of", Kind::kInt, "number of best candidates to keep [5]",
       [](CliParams& p, const std::string& v) { absl::SimpleAtoi(v, &p.best_of); }},
      {"-bs", "--beam-size", Kind::kInt, "beam size for beam search [5]",
       [](CliParams& p, const std::string& v) { absl::SimpleAtoi(v, &p.beam_size); }},
      {"-ac", "--audio-ctx", Kind::kInt, "audio context size [0 = all]",
       [](CliParams& p, const std::string& v) { absl::SimpleAtoi(v, &p.audio_ctx); }},
      {"-wt", "--word-thold", Kind::kFloat, "word timestamp probability threshold [0.01]",
       [](CliParams& p, const std::string& v) { absl::SimpleAtof(v, &p.word_thold); }},
      {"-et", "--entropy-thold", Kind::kFloat, "entropy threshold for decoder fail [2.40]",
       [](CliParams& p, const std::string& v) { absl::SimpleAtof(v, &p.entropy_thold); }},
      {"-lpt", "--logprob-thold", Kind::kFloat, "log probability threshold for decoder fail [-1.00]",
       [](CliParams& p, const std::string& v) { absl::SimpleAtof(v, &p.logprob_thold); }},
      {"-nth", "--no-speech-thold", Kind::kFloat, "no speech threshold [0.60]",
       [](CliParams& p, const std::string& v) { absl::SimpleAtof(v, &p.no_speech_thold); }},
      {"-tp", "--temperature", Kind::kFloat, "the sampling temperature, between 0 and 1 [0.00]",
       [](CliParams& p, const std::string& v) { absl::SimpleAtof(v, &p.temperature); }},
      {"-tpi", "--temperature-inc", Kind::kFloat, "the increment of temperature, between 0 and 1 [0.20]",
       [](CliParams& p, const std::string& v) { absl::SimpleAtof(v, &p.temperature_inc); }},
      {"-nf", "--no-fallback", Kind::kFlag, "do not use temperature fallback while decoding",
       [](CliParams& p, const std::string&) { p.temperature_inc = 0.0f; }},
      {"-tr", "--translate", Kind::kFlag, "translate from source language to english",
       [](CliParams& p, const std::string&) { p.translate = true; }},
      {"-l", "--language", Kind::kString, "spoken language ('auto' for auto-detect) [en]",
       [](CliParams& p, const std::string& v) { p.language = v; }},
      {"-dl", "--detect-language", Kind::kFlag, "exit after automatically detecting language",
       [](CliParams& p, const std::string&) { p.detect_language = true; }},
      {nullptr, "--prompt", Kind::kString, "initial prompt (max n_text_ctx/2 tokens)",
       [](CliParams& p, const std::string& v) { p.prompt = v; }},
      {"-otxt", "--output-txt", Kind::kFlag, "output result in a text file",
       [](CliParams& p, const std::string&) { p.output_txt = true; }},
      {"-ovtt", "--output-vtt", Kind::kFlag, "output result in a vtt file",
       [](CliParams& p, const std::string&) { p.output_vtt = true; }},
      {"-osrt", "--output-srt", Kind::kFlag, "output result in a srt file",
       [](CliParams& p, const std::string&) { p.output_srt = true; }},
      {"-olrc", "--output-lrc", Kind::kFlag, "output result in a lrc file",
       [](CliParams& p, const std::string&) { p.output_lrc = true; }},
      {"-ocsv", "--output-csv", Kind::kFlag, "output result in a CSV file",
       [](CliParams& p, const std::string&) { p.output_csv = true; }},
      {"-oj", "--output-json", Kind::kFlag, "output result in a JSON file",
       [](CliParams& p, const std::string&) { p.output_json = true; }},
      {"-ojf", "--output-json-full", Kind::kFlag, "output a JSON file with each segment's tokens (ids, text)",
       [](CliParams& p, const std::string&) { p.output_json = p.output_json_full = true; }},
      {"-of", "--output-file", Kind::kString, "output file path (without file extension)",
       [](CliParams& p, const std::string& v) { p.output_file = v; }},
      {"-np", "--no-prints", Kind::kFlag, "do not print anything other than the results",
       [](CliParams& p, const std::string&) { p.no_prints = true; }},
      {"-ps", "--print-special", Kind::kFlag, "print special tokens",
       [](CliParams& p, const std::string&) { p.print_special = true; }},
      {"-pp", "--print-progress", Kind::kFlag, "print progress",
       [](CliParams& p, const std::string&) { p.print_progress = true; }},
      {"-nt", "--no-timestamps", Kind::kFlag, "do not print timestamps",
       [](CliParams& p, const std::string&) { p.no_timestamps = true; }},
      {"-sns", "--suppress-nst", Kind::kFlag, "suppress non-speech tokens",
       [](CliParams& p, const std::string&) { p.suppress_nst = true; }},
      {"-m", "--model", Kind::kString, "model path [models/ggml-tiny.en.bin]",
       [](CliParams& p, const std::string& v) { p.model = v; }},
      {"-f", "--file", Kind::kString, "input audio file path (may be repeated)",
       [](CliParams& p, const std::string& v) { p.files.push_back(v); }},
  };
  return flags;
}

bool ValueOk(Kind kind, const std::string& v) {
  int i;
  float f;
  switch (kind) {
    case Kind::kInt:
      return absl::SimpleAtoi(v, &i);
    case Kind::kFloat:
      return absl::SimpleAtof(v, &f);
    default:
      return true;
  }
}

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kInt:
      return "an integer";
    case Kind::kFloat:
      return "a number";
    default:
      return "a value";
  }
}

}  // namespace

absl::StatusOr<CliParams> ParseCliParams(int argc, const char* const* argv) {
  CliParams p;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.empty() || arg[0] != '-' || arg == "-") {
      p.files.push_back(arg);  // bare arguments are input files, as in whisper-cli
      continue;
    }
    const Flag* flag = nullptr;
    for (const Flag& f : Flags()) {
      if ((f.short_name != nullptr && arg == f.short_name) || arg == f.long_name) flag = &f;
    }
    if (flag == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown argument '", arg, "' (see --help)"));
    }
    std::string value;
    if (flag->kind != Kind::kFlag) {
      if (i + 1 >= argc) {
        return absl::InvalidArgumentError(absl::StrCat(arg, " needs ", KindName(flag->kind)));
      }
      value = argv[++i];
      if (!ValueOk(flag->kind, value)) {
        return absl::InvalidArgumentError(absl::StrCat(arg, " needs ", KindName(flag->kind), ", got '", value, "'"));
      }
    }
    flag->set(p, value);
  }
  if (p.n_threads < 0) return absl::InvalidArgumentError("-t must be at least 1");
  if (p.n_processors != 1) return absl::InvalidArgumentError("-p: only 1 processor is supported");
  if (p.offset_t_ms < 0 || p.duration_ms < 0) return absl::InvalidArgumentError("-ot and -d must not be negative");
  if (p.beam_size < 1 || p.beam_size > 8) return absl::InvalidArgumentError("-bs must be between 1 and 8");
  if (p.best_of < 1 || p.best_of > 8) return absl::InvalidArgumentError("-bo must be between 1 and 8");
  if (p.temperature < 0.0f || p.temperature > 1.0f || p.temperature_inc < 0.0f) {
    return absl::InvalidArgumentError("-tp must be in [0, 1] and -tpi must not be negative");
  }
  if (p.audio_ctx < 0 || p.max_len < 0) return absl::InvalidArgumentError("-ac and -ml must not be negative");
  return p;
}

std::string CliUsage(const char* argv0) {
  std::string out = absl::StrCat("\nusage: ", argv0, " [options] file0 file1 ...\n\noptions:\n");
  for (const Flag& f : Flags()) {
    const std::string names =
        f.short_name != nullptr ? absl::StrCat(f.short_name, ", ", f.long_name) : std::string("      ") + f.long_name;
    const char* arg = f.kind == Kind::kInt ? " N" : f.kind == Kind::kFloat ? " N" : f.kind == Kind::kString ? " X" : "";
    absl::StrAppend(&out, absl::StrFormat("  %-28s %s\n", names + arg, f.help));
  }
  return out;
}

}  // namespace whisper
