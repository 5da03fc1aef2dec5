#include "apps/common/cli_params.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <cmath>
#include <fstream>
#include <functional>
#include <regex>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/match.h"
#include "absl/strings/ascii.h"
#include "apps/common/request_rules.h"
#include "apps/common/utf8.h"

namespace whisper {
namespace {

// What this runtime does with a flag it accepts.
enum class Support {
  kYes,             // implemented
  kIgnored,         // GPU/OpenVINO only: recorded in ignored_flags, no effect
  kNotImplemented,  // recorded in unimplemented_flags; the CLI exits 2
};

struct Flag {
  const char* short_name = nullptr;  // "-bs"; nullptr when whisper-cli has only the long form
  const char* long_name = nullptr;   // "--beam-size"
  const char* value_name = nullptr;  // "N", "FNAME", ...; nullptr for a switch
  const char* help = "";
  Support support = Support::kYes;
  const char* section = nullptr;  // usage heading printed before this flag
  // Stores the value (already known to be present); an error message without the flag's name.
  std::function<absl::Status(CliParams&, const std::string&)> set;
  // The field's value as the usage shows it (called on a default CliParams).
  std::function<std::string(const CliParams&)> show;
};

// --- flag builders: one per field type ---

Flag Switch(const char* s, const char* l, bool CliParams::*field, const char* help, bool value = true) {
  Flag f;
  f.short_name = s;
  f.long_name = l;
  f.help = help;
  f.set = [field, value](CliParams& p, const std::string&) {
    p.*field = value;
    return absl::OkStatus();
  };
  f.show = [field, value](const CliParams& p) { return std::string(p.*field == value ? "true" : "false"); };
  return f;
}

std::string RangeText(double lo, double hi, double min, double max) {
  if (lo == hi) return absl::StrCat("(only ", lo, " is supported)");
  // FLT_MIN as a lower bound means "positive" (printing 1.17549e-38 helps nobody).
  if (lo == FLT_MIN && hi == max) return "(must be > 0)";
  if (lo == FLT_MIN) return absl::StrCat("(must be > 0 and <= ", hi, ")");
  if (hi == max) return absl::StrCat("(must be >= ", lo, ")");
  if (lo == min) return absl::StrCat("(must be <= ", hi, ")");
  return absl::StrCat("[", lo, ", ", hi, "]");
}

Flag Int(const char* s, const char* l, const char* value_name, int CliParams::*field, int lo, int hi,
         const char* help) {
  Flag f;
  f.short_name = s;
  f.long_name = l;
  f.value_name = value_name;
  f.help = help;
  f.set = [field, lo, hi](CliParams& p, const std::string& v) {
    int x;
    int64_t wide;
    if (!absl::SimpleAtoi(v, &x)) {
      // An integer that int cannot hold is out of range, not "not an integer".
      bool digits = !v.empty() && v.find_first_not_of("+-0123456789") == std::string::npos &&
                    v.find_first_of("0123456789") != std::string::npos;
      if (digits && (!absl::SimpleAtoi(v, &wide) || wide < INT_MIN || wide > INT_MAX)) {
        // Both bounds: "(must be >= 0)" read wrong for 2147483648, which int cannot hold.
        return absl::InvalidArgumentError(absl::StrCat(v, " is out of range [", lo, ", ", hi, "]"));
      }
      return absl::InvalidArgumentError(absl::StrCat("needs an integer, got '", v, "'"));
    }
    if (x < lo || x > hi) {
      return absl::InvalidArgumentError(absl::StrCat(x, " is out of range ", RangeText(lo, hi, INT_MIN, INT_MAX)));
    }
    p.*field = x;
    return absl::OkStatus();
  };
  f.show = [field](const CliParams& p) { return absl::StrCat(p.*field); };
  return f;
}

Flag Float(const char* s, const char* l, const char* value_name, float CliParams::*field, float lo, float hi,
           const char* help) {
  Flag f;
  f.short_name = s;
  f.long_name = l;
  f.value_name = value_name;
  f.help = help;
  f.set = [field, lo, hi](CliParams& p, const std::string& v) {
    float x;
    if (!absl::SimpleAtof(v, &x) || !std::isfinite(x)) {
      // A finite number a float cannot hold (1e308) is out of range, not "not finite".
      double wide;
      if (absl::SimpleAtod(v, &wide) && std::isfinite(wide)) {
        return absl::InvalidArgumentError(absl::StrCat(v, " is out of range ", RangeText(lo, hi, -FLT_MAX, FLT_MAX)));
      }
      return absl::InvalidArgumentError(absl::StrCat("needs a finite number, got '", v, "'"));
    }
    if (x < lo || x > hi) {
      return absl::InvalidArgumentError(absl::StrCat(v, " is out of range ", RangeText(lo, hi, -FLT_MAX, FLT_MAX)));
    }
    p.*field = x;
    return absl::OkStatus();
  };
  // A default below the accepted range is the "unset" value (e.g. -1 for a threshold that is off).
  f.show = [field, lo](const CliParams& p) {
    if (p.*field < lo) return std::string("off");
    return p.*field == FLT_MAX ? std::string("FLT_MAX") : absl::StrFormat("%.2f", p.*field);
  };
  return f;
}

Flag String(const char* s, const char* l, const char* value_name, std::string CliParams::*field, const char* help) {
  Flag f;
  f.short_name = s;
  f.long_name = l;
  f.value_name = value_name;
  f.help = help;
  f.set = [field](CliParams& p, const std::string& v) {
    p.*field = v;
    return absl::OkStatus();
  };
  f.show = [field](const CliParams& p) { return p.*field; };
  return f;
}

// A String flag whose value must be valid UTF-8 (RepairUtf8 leaves it as it is).
// A string flag whose value must be one of `choices` ("'V' is not one of: A, B" otherwise).
Flag Choice(const char* l, const char* value_name, std::string CliParams::*field, std::vector<std::string> choices,
            const char* help) {
  Flag f = String(nullptr, l, value_name, field, help);
  f.set = [field, choices](CliParams& p, const std::string& v) {
    if (std::find(choices.begin(), choices.end(), v) == choices.end()) {
      return absl::InvalidArgumentError(absl::StrCat("'", v, "' is not one of: ", absl::StrJoin(choices, ", ")));
    }
    p.*field = v;
    return absl::OkStatus();
  };
  return f;
}

Flag Utf8String(const char* l, const char* value_name, std::string CliParams::*field, const char* help) {
  Flag f = String(nullptr, l, value_name, field, help);
  f.set = [field](CliParams& p, const std::string& v) {
    if (RepairUtf8(v) != v) {
      return absl::InvalidArgumentError(absl::StrCat("'", absl::CHexEscape(v), "' is not valid UTF-8 text"));
    }
    p.*field = v;
    return absl::OkStatus();
  };
  return f;
}

// A String flag passed to whisper_full as prompt text (--prompt, --prefix, --hotwords): refused,
// as the Python package refuses it, when it has a NUL byte (possible only through an @FILE
// response file) or is not UTF-8 (PromptTextProblem).
Flag PromptString(const char* l, const char* value_name, std::string CliParams::*field, const char* help) {
  Flag f = String(nullptr, l, value_name, field, help);
  f.set = [field](CliParams& p, const std::string& v) {
    const std::string problem = PromptTextProblem(v);
    if (!problem.empty()) return absl::InvalidArgumentError(problem);
    p.*field = v;
    return absl::OkStatus();
  };
  return f;
}

// Repeatable: each occurrence appends.
Flag List(const char* s, const char* l, const char* value_name, std::vector<std::string> CliParams::*field,
          const char* help) {
  Flag f;
  f.short_name = s;
  f.long_name = l;
  f.value_name = value_name;
  f.help = help;
  f.set = [field](CliParams& p, const std::string& v) {
    (p.*field).push_back(v);
    return absl::OkStatus();
  };
  f.show = [](const CliParams&) { return std::string(); };
  return f;
}

Flag Ignored(Flag f) {
  f.support = Support::kIgnored;
  return f;
}

// No flag uses it today (--grammar was the last); kept for features whisper-cli may add.
[[maybe_unused]] Flag NotImplemented(Flag f) {
  f.support = Support::kNotImplemented;
  return f;
}

Flag Section(const char* heading, Flag f) {
  f.section = heading;
  return f;
}

// Help, threads and processors, and the part of the audio to transcribe.
std::vector<Flag> RunFlags() {
  return {
      Switch("-h", "--help", &CliParams::help, "show this help message and exit"),
      Int("-t", "--threads", "N", &CliParams::n_threads, 0, kMaxThreads,
          "number of threads to use during computation (0 = min(4, hardware threads))"),
      Int("-p", "--processors", "N", &CliParams::n_processors, 1, INT_MAX,
          "number of processors to use during computation"),
      Int("-ot", "--offset-t", "N", &CliParams::offset_t_ms, 0, INT_MAX, "time offset in milliseconds"),
      Int("-on", "--offset-n", "N", &CliParams::offset_n, 0, INT_MAX, "segment index offset"),
      Int("-d", "--duration", "N", &CliParams::duration_ms, 0, INT_MAX,
          "duration of audio to process in milliseconds (0 = all)"),
  };
}

// Decoding: context, segment length, beam search, thresholds, temperature, task, diarization.
std::vector<Flag> DecodingFlags() {
  return {
      Int("-mc", "--max-context", "N", &CliParams::max_context, INT_MIN, INT_MAX,
          "maximum number of text context tokens to store (-1 = all)"),
      Int("-ml", "--max-len", "N", &CliParams::max_len, 0, INT_MAX, "maximum segment length in characters"),
      Switch("-sow", "--split-on-word", &CliParams::split_on_word, "split on word rather than on token"),
      Int("-bo", "--best-of", "N", &CliParams::best_of, 1, WHISPER_GGML_MAX_DECODERS, "number of best candidates to keep"),
      Int("-bs", "--beam-size", "N", &CliParams::beam_size, 1, WHISPER_GGML_MAX_DECODERS, "beam size for beam search"),
      Int("-ac", "--audio-ctx", "N", &CliParams::audio_ctx, 0, INT_MAX, "audio context size (0 - all)"),
      Float("-wt", "--word-thold", "N", &CliParams::word_thold, 0.0f, 1.0f, "word timestamp probability threshold"),
      Float("-et", "--entropy-thold", "N", &CliParams::entropy_thold, -FLT_MAX, FLT_MAX,
            "entropy threshold for decoder fail"),
      Float("-lpt", "--logprob-thold", "N", &CliParams::logprob_thold, -FLT_MAX, FLT_MAX,
            "log probability threshold for decoder fail"),
      Float("-nth", "--no-speech-thold", "N", &CliParams::no_speech_thold, -FLT_MAX, FLT_MAX, "no speech threshold"),
      Float("-tp", "--temperature", "N", &CliParams::temperature, 0.0f, 1.0f,
            "The sampling temperature, between 0 and 1"),
      Float("-tpi", "--temperature-inc", "N", &CliParams::temperature_inc, 0.0f, FLT_MAX,
            "The increment of temperature, between 0 and 1"),
      Switch("-debug", "--debug-mode", &CliParams::debug_mode,
             "enable debug mode (no effect, as in whisper.cpp 1.8.5)"),
      Switch("-tr", "--translate", &CliParams::translate, "translate from source language to english"),
      Switch("-di", "--diarize", &CliParams::diarize, "stereo audio diarization"),
      Switch("-tdrz", "--tinydiarize", &CliParams::tinydiarize, "enable tinydiarize (requires a tdrz model)"),
      Switch("-nf", "--no-fallback", &CliParams::no_fallback, "do not use temperature fallback while decoding"),
  };
}

// Output files and what is printed.
std::vector<Flag> OutputFlags() {
  return {
      Switch("-otxt", "--output-txt", &CliParams::output_txt, "output result in a text file"),
      Switch("-ovtt", "--output-vtt", &CliParams::output_vtt, "output result in a vtt file"),
      Switch("-osrt", "--output-srt", &CliParams::output_srt, "output result in a srt file"),
      Switch("-olrc", "--output-lrc", &CliParams::output_lrc, "output result in a lrc file"),
      Switch("-owts", "--output-words", &CliParams::output_words, "output script for generating karaoke video"),
      String("-fp", "--font-path", "FONT", &CliParams::font_path,
             "path to a monospace font for karaoke video (only used by -owts)"),
      Switch("-ocsv", "--output-csv", &CliParams::output_csv, "output result in a CSV file"),
      Switch("-oj", "--output-json", &CliParams::output_json, "output result in a JSON file"),
      [] {
        Flag f = Switch("-ojf", "--output-json-full", &CliParams::output_json_full,
                        "include more information in the JSON file (implies -oj)");
        f.set = [](CliParams& p, const std::string&) {
          p.output_json = p.output_json_full = true;
          return absl::OkStatus();
        };
        return f;
      }(),
      List("-of", "--output-file", "FNAME", &CliParams::output_files,
           "output file path (without file extension), one per input file in order; - = stdout"),
      Switch("-np", "--no-prints", &CliParams::no_prints, "do not print anything other than the results"),
      Switch("-ps", "--print-special", &CliParams::print_special, "print special tokens"),
      Switch("-pc", "--print-colors", &CliParams::print_colors, "print colors"),
      Switch(nullptr, "--print-confidence", &CliParams::print_confidence, "print confidence"),
      Switch("-pp", "--print-progress", &CliParams::print_progress, "print progress"),
      Switch("-nt", "--no-timestamps", &CliParams::no_timestamps, "do not print timestamps"),
  };
}

// --suppress-regex REGEX: compiled here (std::regex, ECMAScript, as whisper_full compiles it) so
// that a bad one is an error before the model loads, naming std::regex's reason.
Flag SuppressRegexFlag() {
  Flag f = String(nullptr, "--suppress-regex", "REGEX", &CliParams::suppress_regex,
                  "regular expression matching tokens to suppress");
  f.set = [](CliParams& p, const std::string& v) {
    if (!v.empty()) {
      try {
        const std::regex re(v);
      } catch (const std::regex_error& e) {
        return absl::InvalidArgumentError(
            absl::StrCat("'", absl::CHexEscape(v), "' is not a valid regular expression (ECMAScript): ", e.what()));
      }
    }
    p.suppress_regex = v;
    return absl::OkStatus();
  };
  return f;
}

// Language and prompt, model and input files, DTW, devices, suppressed tokens, grammar.
std::vector<Flag> ModelFlags() {
  return {
      [] {
        Flag f = String("-l", "--language", "LANG", &CliParams::language, "spoken language ('auto' for auto-detect)");
        f.set = [](CliParams& p, const std::string& v) {  // lowercased, as whisper-cli does
          p.language = v;
          for (char& c : p.language) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          return absl::OkStatus();
        };
        return f;
      }(),
      Switch("-dl", "--detect-language", &CliParams::detect_language, "exit after automatically detecting language"),
      PromptString("--prompt", "PROMPT", &CliParams::prompt, "initial prompt (max n_text_ctx/2 tokens)"),
      Switch(nullptr, "--carry-initial-prompt", &CliParams::carry_initial_prompt, "always prepend initial prompt"),
      String("-m", "--model", "FNAME", &CliParams::model, "model path"),
      List("-f", "--file", "FNAME", &CliParams::files, "input audio file path (repeatable; - = stdin)"),
      Ignored(String("-oved", "--ov-e-device", "DNAME", &CliParams::openvino_encode_device,
                     "the OpenVINO device used for encode inference")),
      String("-dtw", "--dtw", "MODEL", &CliParams::dtw, "compute token-level timestamps"),
      Switch("-ls", "--log-score", &CliParams::log_score, "log best decoder scores of tokens"),
      Ignored(Switch("-ng", "--no-gpu", &CliParams::use_gpu, "disable GPU", /*value=*/false)),
      Ignored(Int("-dev", "--device", "N", &CliParams::gpu_device, 0, INT_MAX, "GPU device ID")),
      Switch("-fa", "--flash-attn", &CliParams::flash_attn, "enable flash attention (encoder; the default)"),
      Switch("-nfa", "--no-flash-attn", &CliParams::flash_attn, "disable flash attention (encoder: blocked softmax)",
             /*value=*/false),
      Switch("-sns", "--suppress-nst", &CliParams::suppress_nst, "suppress non-speech tokens"),
      SuppressRegexFlag(),
      String(nullptr, "--grammar", "GRAMMAR", &CliParams::grammar, "GBNF grammar to guide decoding (a file, or GBNF text)"),
      String(nullptr, "--grammar-rule", "RULE", &CliParams::grammar_rule,
             "top-level GBNF grammar rule name (only used with --grammar)"),
      Float(nullptr, "--grammar-penalty", "N", &CliParams::grammar_penalty, -FLT_MAX, FLT_MAX,
            "scales down logits of nongrammar tokens (only used with --grammar)"),
  };
}

// Voice Activity Detection (whisper-cli's own usage section).
std::vector<Flag> VadFlags() {
  return {
      Section("Voice Activity Detection (VAD) options",
              Switch(nullptr, "--vad", &CliParams::vad, "enable Voice Activity Detection (VAD)")),
      String("-vm", "--vad-model", "FNAME", &CliParams::vad_model,
             "VAD model path (only used with --vad; default models/ggml-silero-v6.bin)"),
      Float("-vt", "--vad-threshold", "N", &CliParams::vad_threshold, 0.0f, 1.0f,
            "VAD threshold for speech recognition (only used with --vad)"),
      Int("-vspd", "--vad-min-speech-duration-ms", "N", &CliParams::vad_min_speech_duration_ms, 0, INT_MAX,
          "VAD min speech duration (only used with --vad)"),
      Int("-vsd", "--vad-min-silence-duration-ms", "N", &CliParams::vad_min_silence_duration_ms, 0, INT_MAX,
          "VAD min silence duration (to split segments) (only used with --vad)"),
      Float("-vmsd", "--vad-max-speech-duration-s", "N", &CliParams::vad_max_speech_duration_s, 0.0f, FLT_MAX,
            "VAD max speech duration (auto-split longer) (only used with --vad)"),
      Int("-vp", "--vad-speech-pad-ms", "N", &CliParams::vad_speech_pad_ms, 0, INT_MAX,
          "VAD speech padding (extend segments) (only used with --vad)"),
      Float("-vo", "--vad-samples-overlap", "N", &CliParams::vad_samples_overlap, 0.0f, FLT_MAX,
            "VAD samples overlap (seconds between segments) (only used with --vad)"),
  };
}

// --clip-timestamps "START,END,...": faster-whisper 1.2.1's clip_timestamps string (transcribe.py
// generate_segments: the values split at commas, each a number of seconds); "0" (faster-whisper's
// default) and "" mean the whole audio. Each value must be a decimal number in [0, 1e9] s.
// One --clip-timestamps value: a decimal number of seconds as Python's float() reads it (no hex,
// which strtof would take), finite, >= 0 and within float's range (the C API's field is float).
absl::Status ParseClipSeconds(absl::string_view item, absl::string_view list, float* x) {
  const absl::string_view t = absl::StripAsciiWhitespace(item);
  const absl::string_view digits = absl::StartsWith(t, "-") || absl::StartsWith(t, "+") ? t.substr(1) : t;
  double d;
  if (absl::StartsWithIgnoreCase(digits, "0x") || !absl::SimpleAtod(t, &d) || std::isnan(d)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", item, "' in '", list, "' is not a number of seconds (expected START,END,...)"));
  }
  if (d < 0.0 || d > 1e9) {
    return absl::InvalidArgumentError(absl::StrCat("'", item, "' in '", list,
                                                   "' is out of range: clip times are seconds in [0, 1e9]"));
  }
  *x = static_cast<float>(d);
  return absl::OkStatus();
}

Flag ClipTimestampsFlag() {
  Flag f;
  f.long_name = "--clip-timestamps";
  f.value_name = "LIST";
  f.help = "faster-whisper's clip_timestamps: transcribe only these clips, seconds start,end,... (odd: to the end)";
  f.set = [](CliParams& p, const std::string& v) {
    p.clip_timestamps.clear();
    if (v.empty() || v == "0") return absl::OkStatus();
    for (absl::string_view item : absl::StrSplit(v, ',')) {
      float x = 0.0f;
      if (absl::Status st = ParseClipSeconds(item, v, &x); !st.ok()) {
        p.clip_timestamps.clear();
        return st;
      }
      p.clip_timestamps.push_back(x);
    }
    return absl::OkStatus();
  };
  f.show = [](const CliParams& p) {
    return p.clip_timestamps.empty() ? std::string("0") : absl::StrJoin(p.clip_timestamps, ",");
  };
  return f;
}

// --temperatures LIST: faster-whisper's temperature as a list, "0,0.3,0.9" (any finite numbers, in
// any order; one value: no fallback). An element that is not a finite number is an error naming it.
Flag TemperaturesFlag() {
  Flag f;
  f.long_name = "--temperatures";
  f.value_name = "LIST";
  f.help = "faster-whisper's temperature as a list: fall back through these, e.g. 0,0.3,0.9 (replaces -tp, -tpi)";
  f.set = [](CliParams& p, const std::string& v) {
    p.temperatures.clear();
    for (absl::string_view item : absl::StrSplit(v, ',')) {
      float x;
      if (!absl::SimpleAtof(item, &x) || !std::isfinite(x)) {
        p.temperatures.clear();
        return absl::InvalidArgumentError(
            absl::StrCat("'", item, "' in '", v, "' is not a finite number (expected T0,T1,...)"));
      }
      p.temperatures.push_back(x);
    }
    return absl::OkStatus();
  };
  f.show = [](const CliParams& p) { return absl::StrJoin(p.temperatures, ","); };
  return f;
}

// --suppress-tokens LIST: faster-whisper's suppress_tokens as comma-separated ids ("-1,11"; -1 is
// the non-speech set; "" is the empty list). An element that is not an integer >= -1 is an error
// naming it.
Flag SuppressTokensFlag() {
  Flag f = String(nullptr, "--suppress-tokens", "LIST", nullptr,
                  "faster-whisper's suppress_tokens: comma-separated token ids, -1 = non-speech tokens "
                  "(replaces -sns)");
  f.show = [](const CliParams& p) {
    if (!p.has_suppress_tokens) return std::string("-");
    std::string out;
    for (size_t i = 0; i < p.suppress_tokens.size(); ++i) absl::StrAppend(&out, i > 0 ? "," : "", p.suppress_tokens[i]);
    return out;
  };
  f.set = [](CliParams& p, const std::string& v) {
    p.suppress_tokens.clear();
    p.has_suppress_tokens = true;
    if (v.empty()) return absl::OkStatus();
    for (absl::string_view part : absl::StrSplit(v, ',')) {
      int id = 0;
      if (!absl::SimpleAtoi(part, &id) || id < -1) {
        return absl::InvalidArgumentError(
            absl::StrCat("'", part, "' in '", v, "' is not a token id (an integer >= 0, or -1 for the non-speech tokens)"));
      }
      p.suppress_tokens.push_back(id);
    }
    return absl::OkStatus();
  };
  return f;
}

// This runtime's own options (a usage section of their own).
std::vector<Flag> OwnFlags() {
  return {
      Section("This runtime's own options",
              Switch(nullptr, "--version", &CliParams::version, "print the version and exit")),
      Switch(nullptr, "--list-languages", &CliParams::list_languages, "print the language codes and exit"),
      Switch(nullptr, "--multilingual", &CliParams::multilingual,
             "faster-whisper's multilingual=True: detect the language of every 30 s window"),
      Float(nullptr, "--compression-ratio-threshold", "N", &CliParams::compression_ratio_threshold, 0.0f, FLT_MAX,
            "faster-whisper's compression_ratio_threshold (openai rules): fall back above it; 0: off"),
      ClipTimestampsFlag(),
      Float(nullptr, "--hallucination-silence-threshold", "N", &CliParams::hallucination_silence_threshold, 0.0f,
            FLT_MAX, "faster-whisper's hallucination_silence_threshold (s; with -dtw, openai rules); default off"),
      Float(nullptr, "--patience", "N", &CliParams::patience, FLT_MIN, FLT_MAX,
            "faster-whisper's patience (openai rules): beam search collects round(bs * N) sequences"),
      Float(nullptr, "--length-penalty", "N", &CliParams::length_penalty, -FLT_MAX, FLT_MAX,
            "faster-whisper's length_penalty (openai rules): score = sum logprob / length^N"),
      Float(nullptr, "--repetition-penalty", "N", &CliParams::repetition_penalty, FLT_MIN, FLT_MAX,
            "faster-whisper's repetition_penalty: logits of tokens already sampled / N (x N if < 0)"),
      Int(nullptr, "--no-repeat-ngram-size", "N", &CliParams::no_repeat_ngram_size, 0, INT_MAX,
          "faster-whisper's no_repeat_ngram_size: no N-gram repeats in a window; 0: off"),
      Int(nullptr, "--max-new-tokens", "N", &CliParams::max_new_tokens, 0, INT_MAX,
          "faster-whisper's max_new_tokens (openai rules): tokens per window; 0: no limit"),
      TemperaturesFlag(),
      Float(nullptr, "--prompt-reset-on-temperature", "N", &CliParams::prompt_reset_on_temperature, -FLT_MAX,
            FLT_MAX, "faster-whisper's prompt_reset_on_temperature (openai rules): drop the prompt above it"),
      PromptString("--prefix", "TEXT", &CliParams::prefix,
             "faster-whisper's prefix: text the first window's transcript starts with"),
      PromptString("--hotwords", "TEXT", &CliParams::hotwords,
             "faster-whisper's hotwords: hint phrases in every window's prompt (not with --prefix's window)"),
      Utf8String("--prepend-punctuations", "STR", &CliParams::prepend_punctuations,
             "faster-whisper's prepend_punctuations (-dtw, openai rules): marks joined to the next word"),
      Utf8String("--append-punctuations", "STR", &CliParams::append_punctuations,
             "faster-whisper's append_punctuations (-dtw, openai rules): marks joined to the previous word"),
      SuppressTokensFlag(),
      Float(nullptr, "--max-initial-timestamp", "N", &CliParams::max_initial_timestamp, 0.0f, FLT_MAX,
            "faster-whisper's max_initial_timestamp: the first timestamp is at most N s (openai rules: 0 = 0.00 only)"),
      Int(nullptr, "--chunk-length", "N", &CliParams::chunk_length, 0, 30,
          "faster-whisper's chunk_length: seconds of audio per window, 1..30 (0 = 30)"),
      Int(nullptr, "--batch-size", "N", &CliParams::batch_size, 0, WHISPER_GGML_MAX_BATCH_SIZE,
          "batched long audio: N chunks at a time, cut at VAD pauses (-vm) or the --clip-timestamps clips; 0/1: sequential"),
      Choice("--decoding", "RULES", &CliParams::decoding, {"openai", "whisper.cpp"},
             "decoding rules: openai (OpenAI/faster-whisper's results) or whisper.cpp (its results)"),
      [] {
        Flag f = String(nullptr, "--compute-type", "NAME", &CliParams::compute_type,
                        "faster-whisper's compute_type: convert the weights at load (int8, int8_float32, "
                        "int8_float16, int8_bfloat16 -> q8_0; float16; float32; bfloat16 -> float16; default, "
                        "auto: as stored)");
        f.set = [](CliParams& p, const std::string& v) {
          whisper_context_params c = whisper_context_default_params();
          char msg[256] = "";
          if (whisper_ggml_set_compute_type(&c, v.c_str(), msg, sizeof(msg)) < 0) {
            return absl::InvalidArgumentError(msg);
          }
          p.compute_type = v;
          return absl::OkStatus();
        };
        return f;
      }(),
      Choice("--int8-attention", "MODE", &CliParams::int8_attention, {"auto", "on", "off"},
             "encoder self-attention in int8: auto (quantized weights, AVX512-VNNI), on, off "
             "(float, as faster-whisper's int8)"),
  };
}

// whisper-cli 1.8.5's flags in its usage order, then this runtime's own.
const std::vector<Flag>& Flags() {
  static const std::vector<Flag>* const flags = [] {
    auto* all = new std::vector<Flag>;
    for (std::vector<Flag> (*group)() : {RunFlags, DecodingFlags, OutputFlags, ModelFlags, VadFlags, OwnFlags}) {
      std::vector<Flag> g = group();
      all->insert(all->end(), g.begin(), g.end());
    }
    return all;
  }();
  return *flags;
}

const Flag* FindFlag(const std::string& arg) {
  for (const Flag& f : Flags()) {
    if ((f.short_name != nullptr && arg == f.short_name) || arg == f.long_name) return &f;
  }
  return nullptr;
}

void AddOnce(std::vector<std::string>* list, const std::string& flag) {
  if (std::find(list->begin(), list->end(), flag) == list->end()) list->push_back(flag);
}

// `args` excludes argv[0].
absl::StatusOr<CliParams> ParseArgs(const std::vector<std::string>& args) {
  CliParams p;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.empty() || arg[0] != '-' || arg == "-") {
      p.files.push_back(arg);  // bare arguments are input files ("-" = stdin), as in whisper-cli
      continue;
    }
    const Flag* flag = FindFlag(arg);
    if (flag == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown argument '", arg, "' (see --help)"));
    }
    std::string value;
    if (flag->value_name != nullptr) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat(arg, " needs a value (", flag->value_name, ")"));
      }
      value = args[++i];  // taken as is, even when it starts with '-' (-lpt -0.5, -of -)
    }
    absl::Status s = flag->set(p, value);
    if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat(arg, " ", s.message()));
    if (flag->support == Support::kIgnored) AddOnce(&p.ignored_flags, arg);
    // An empty string turns a string feature off in whisper-cli (--grammar "", -dtw "").
    if (flag->support == Support::kNotImplemented && (flag->value_name == nullptr || !value.empty())) {
      AddOnce(&p.unimplemented_flags, arg);
    }
    if (p.help) return p;  // whisper-cli prints usage and exits at -h, ignoring what follows
  }
  if (p.output_files.size() > p.files.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "-of/--output-file given %d times but there are %d input files: each -of names the output of "
        "the input at the same position",
        p.output_files.size(), p.files.size()));
  }
  if (!p.dtw.empty() && whisper_ggml_alignment_heads_preset_from_name(p.dtw.c_str()) == WHISPER_AHEADS_NONE) {
    return absl::InvalidArgumentError(absl::StrCat(
        "-dtw: unknown DTW preset '", p.dtw,
        "' (expected tiny.en, tiny, base.en, base, small.en, small, medium.en, medium, large.v1, large.v2, "
        "large.v3 or large.v3.turbo)"));
  }
  if (!p.clip_timestamps.empty() && (p.offset_t_ms != 0 || p.duration_ms != 0)) {
    return absl::InvalidArgumentError("--clip-timestamps cannot be combined with -ot/--offset-t or -d/--duration");
  }
  // whisper_full's rule (whisper/whisper_batched.cc), checked before a model is loaded.
  if (p.batch_size > 1 && (p.offset_t_ms != 0 || p.duration_ms != 0)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--batch-size %d cannot be combined with -ot/--offset-t (%d ms) or -d/--duration (%d ms): batched "
        "transcription cuts the whole audio at VAD pauses or at --clip-timestamps; use --batch-size 0 or 1 with them",
        p.batch_size, p.offset_t_ms, p.duration_ms));
  }
  if (p.diarize && p.tinydiarize) {
    return absl::InvalidArgumentError("cannot use both -di/--diarize and -tdrz/--tinydiarize");
  }
  if (!p.unimplemented_flags.empty()) p.unimplemented = p.unimplemented_flags[0];
  return p;
}

}  // namespace

absl::StatusOr<CliParams> ParseCliParams(int argc, const char* const* argv) {
  std::vector<std::string> args;
  if (argc == 2 && argv[1] != nullptr && argv[1][0] == '@') {
    // whisper-cli's response file: the only argument "@FILE" holds the arguments, one per line.
    const std::string path = argv[1] + 1;
    std::ifstream in(path);
    if (!in.is_open()) return absl::InvalidArgumentError(absl::StrCat("response file '", path, "' not found"));
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (!line.empty()) args.push_back(line);
    }
    if (in.bad()) return absl::InvalidArgumentError(absl::StrCat("response file '", path, "': read error"));
  } else {
    for (int i = 1; i < argc; ++i) args.emplace_back(argv[i] != nullptr ? argv[i] : "");
  }
  return ParseArgs(args);
}

int Int8AttentionMode(const CliParams& p) {
  return p.int8_attention == "on" ? 1 : p.int8_attention == "off" ? 0 : -1;
}

whisper_context_params ToWhisperContextParams(const CliParams& p, std::string* note) {
  whisper_context_params c = whisper_context_default_params();
  c.use_gpu = false;
  c.flash_attn = p.flash_attn;
  char msg[256] = "";
  if (whisper_ggml_set_compute_type(&c, p.compute_type.c_str(), msg, sizeof(msg)) != 0 && note != nullptr) {
    *note = msg;  // 1: a substitute (bfloat16); -1 cannot happen after the parser's check
  }
  if (!p.dtw.empty()) {
    c.dtw_token_timestamps = true;
    c.dtw_aheads_preset = whisper_ggml_alignment_heads_preset_from_name(p.dtw.c_str());
  }
  return c;
}

whisper_full_params ToWhisperFullParams(const CliParams& p) {
  whisper_full_params w =
      whisper_full_default_params(p.beam_size > 1 ? WHISPER_SAMPLING_BEAM_SEARCH : WHISPER_SAMPLING_GREEDY);
  w.print_realtime = false;
  w.print_progress = p.print_progress;
  w.print_timestamps = !p.no_timestamps;
  w.print_special = p.print_special;
  w.translate = p.translate;
  w.language = p.language.c_str();
  w.detect_language = p.detect_language;
  w.n_threads = p.n_threads;
  w.n_max_text_ctx = p.max_context >= 0 ? p.max_context : w.n_max_text_ctx;
  // The previous window's text prompts the next unless -mc 0, under either rule set (whisper.cpp
  // conditions within a call whatever no_context says; OpenAI's rules read no_context as
  // !condition_on_previous_text). Under whisper.cpp's, no_context stays whisper-cli's true, so no
  // text carries from one input file to the next.
  w.no_context = p.decoding == "whisper.cpp" || p.max_context == 0;
  w.offset_ms = p.offset_t_ms;
  w.duration_ms = p.duration_ms;
  // -dtw: whisper-cli reports t_dtw in -ojf only; word times (OpenAI's rules) also need the
  // token times -ml and -ojf read.
  w.token_timestamps = p.output_words || p.output_json_full || p.max_len > 0;
  w.thold_pt = p.word_thold;
  w.tdrz_enable = p.tinydiarize;
  w.max_len = p.output_words && p.max_len == 0 ? 60 : p.max_len;  // whisper-cli: -owts caps segments at 60
  w.split_on_word = p.split_on_word;
  w.audio_ctx = p.audio_ctx;
  w.no_timestamps = p.no_timestamps;
  w.suppress_nst = p.suppress_nst;
  w.suppress_regex = p.suppress_regex.empty() ? nullptr : p.suppress_regex.c_str();
  w.initial_prompt = p.prompt.empty() ? nullptr : p.prompt.c_str();
  w.carry_initial_prompt = p.carry_initial_prompt;
  w.ggml_multilingual = p.multilingual;
  w.ggml_compression_ratio_thold = p.compression_ratio_threshold;
  w.ggml_clip_timestamps = p.clip_timestamps.empty() ? nullptr : p.clip_timestamps.data();
  w.ggml_n_clip_timestamps = static_cast<int>(p.clip_timestamps.size());
  w.ggml_hallucination_silence_thold = p.hallucination_silence_threshold;
  w.ggml_length_penalty = p.length_penalty;
  w.ggml_repetition_penalty = p.repetition_penalty;
  w.ggml_no_repeat_ngram_size = p.no_repeat_ngram_size;
  w.ggml_max_new_tokens = p.max_new_tokens;
  w.ggml_prompt_reset_on_temperature = p.prompt_reset_on_temperature;
  w.ggml_prefix = p.prefix.empty() ? nullptr : p.prefix.c_str();
  w.ggml_hotwords = p.hotwords.empty() ? nullptr : p.hotwords.c_str();
  w.ggml_prepend_punctuations = p.prepend_punctuations.c_str();  // "" is a set: no marks
  w.ggml_append_punctuations = p.append_punctuations.c_str();
  if (p.has_suppress_tokens) {
    static const whisper_token kNone = 0;  // a non-NULL list of 0 ids: faster-whisper's []
    w.ggml_suppress_tokens = p.suppress_tokens.empty() ? &kNone : p.suppress_tokens.data();
    w.ggml_n_suppress_tokens = static_cast<int>(p.suppress_tokens.size());
  }
  w.max_initial_ts = p.max_initial_timestamp;
  w.ggml_chunk_length = p.chunk_length;
  w.ggml_batch_size = p.batch_size;
  w.vad = p.vad;
  w.vad_model_path = p.vad_model.empty() ? kDefaultVadModel : p.vad_model.c_str();
  w.vad_params.threshold = p.vad_threshold;
  w.vad_params.min_speech_duration_ms = p.vad_min_speech_duration_ms;
  w.vad_params.min_silence_duration_ms = p.vad_min_silence_duration_ms;
  w.vad_params.max_speech_duration_s = p.vad_max_speech_duration_s;
  w.vad_params.speech_pad_ms = p.vad_speech_pad_ms;
  w.vad_params.samples_overlap = p.vad_samples_overlap;
  w.greedy.best_of = p.best_of;
  w.beam_search.beam_size = p.beam_size;
  w.beam_search.patience = p.patience;  // faster-whisper's patience (whisper.cpp ignores the field)
  w.temperature = p.temperature;
  w.temperature_inc = p.no_fallback ? 0.0f : p.temperature_inc;
  w.ggml_temperatures = p.temperatures.empty() ? nullptr : p.temperatures.data();
  w.ggml_n_temperatures = static_cast<int>(p.temperatures.size());
  w.entropy_thold = p.entropy_thold;
  w.logprob_thold = p.logprob_thold;
  w.no_speech_thold = p.no_speech_thold;
  return w;
}

std::string CliUsage(const char* argv0) {
  const CliParams defaults;
  std::string out = absl::StrCat("\nusage: ", argv0, " [options] file0 file1 ...\n",
                                 "supported audio formats: whatever libsndfile reads (wav, flac, mp3, ogg/vorbis, "
                                 "ogg/opus, aiff, ...); - reads stdin\n\noptions:\n");
  for (const Flag& f : Flags()) {
    if (f.section != nullptr) absl::StrAppend(&out, "\n", f.section, ":\n");
    const std::string arg = f.value_name != nullptr ? absl::StrCat(" ", f.value_name) : "";
    const std::string short_part = f.short_name != nullptr ? absl::StrCat(f.short_name, arg, ",") : "";
    const char* mark = f.support == Support::kIgnored          ? " (ignored: CPU runtime)"
                       : f.support == Support::kNotImplemented ? " (not implemented: the CLI exits 2 when set)"
                                                               : "";
    absl::StrAppend(&out, absl::StrFormat("  %-12s %-32s [%-7s] %s%s\n", short_part, absl::StrCat(f.long_name, arg),
                                          f.show(defaults), f.help, mark));
  }
  absl::StrAppend(&out,
                  "\nDifferences from whisper-cli 1.8.5:\n"
                  "  - decoding follows OpenAI's transcribe.py (faster-whisper's transcripts) unless\n"
                  "    --decoding whisper.cpp (whisper.cpp's transcripts);\n"
                  "  - the model defaults to models/ggml-tiny.en.bin; an unknown flag exits 2;\n"
                  "  - -bs and -bo take up to 32 (whisper-cli: 8);\n"
                  "  - flags marked 'ignored' print a notice;\n"
                  "  - a bad --grammar exits 2 naming its line and column, an unknown --grammar-rule\n"
                  "    exits 2 naming it (whisper-cli: exit 4; a warning and no grammar);\n"
                  "  - --vad without -vm reads models/ggml-silero-v6.bin (tools/setup.sh makes it);\n"
                  "  - -dtw MODEL under OpenAI's rules also times words (-ojf lists them; -ml 1 -sow\n"
                  "    prints one per line), as faster-whisper's word_timestamps=True;\n"
                  "  - -di transcribes the mean of the channels, as without it (whisper-cli: L + R);\n"
                  "  - --multilingual (faster-whisper's multilingual=True) detects each window's language\n"
                  "    and prints it before each segment's text, as -di its speaker: \"(de)\" (-oj: \"language\");\n"
                  "  - -m and --vad's -vm are checked before anything loads, and the wrong kind of file\n"
                  "    (VAD model, Whisper model, GGUF, CTranslate2, empty) is named (whisper-cli aborts or\n"
                  "    exits 3); -ot past the end of the audio is an error, exit 1 (whisper-cli: exit 0).\n\n");
  return out;
}

}  // namespace whisper
