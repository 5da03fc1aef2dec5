// `bazel run //whisper:cli -- -m models/ggml-tiny.en.bin -f speech.wav`: whisper.cpp's whisper-cli
// on this runtime, written against the C API only (whisper/whisper.h), plus audio decoding
// (apps/common/audio.h), the flag parser and the output writers. Prints system info, the timestamped
// transcript, timings and memory; writes the requested output files. Exit codes: 0 success, 1 a
// model or audio error or a failed write (standard output included), 2 a usage error.
//
// Deliberate differences from whisper-cli, also listed in --help and the README: decoding follows
// OpenAI's rules (faster-whisper's results) unless --decoding whisper.cpp; an unknown flag is
// exit 2 (whisper-cli prints usage and exits 0); a bad --grammar or unknown --grammar-rule is
// exit 2 naming the line and column or the rule (whisper-cli: exit 4, or a warning and no
// grammar); -owts checks its font (-fp) before transcribing
// (whisper-cli, after, leaving an empty script) and single-quotes an input path the shell would
// split; -dtw under OpenAI's rules also times words
// (-ojf "words", -ml 1 -sow); --vad reads models/ggml-silero-v6.bin unless -vm names a model;
// -di keeps the transcript of the plain mono mix (whisper-cli's -di transcribes L + R, twice the
// level) and prints "(speaker N)" once per segment with -pc/--print-confidence (whisper-cli
// repeats it before every token); -m and -vm are checked before anything loads, naming a file of
// the wrong kind (whisper_ggml_check_model_file; whisper-cli aborts or exits 3); -ot past the end of the audio is
// exit 1 (whisper-cli: a warning, exit 0); a failed write to standard output is exit 1 (whisper-cli:
// exit 0).
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "absl/strings/match.h"
#include "apps/common/bazel_run.h"
#include "apps/common/audio.h"
#include "apps/common/cli_params.h"
#include "apps/common/gbnf_parser.h"
#include "apps/common/output.h"
#include "apps/common/request_rules.h"
#include "apps/common/utf8.h"
#include "tools/convert/ct2_folder.h"
#include "whisper/whisper.h"

namespace whisper {
namespace {

// Log callback state: one error since Reset() is kept for the one "error:" line, the first from
// the whisper layer (it names the call and the input) or else the first from ggml (told apart by
// the callback it came through: GgmlToSink is ggml_log_set's); INFO and WARN messages go to
// stderr unless -np.
struct LogSink {
  bool quiet = false;
  std::string first_error;
  bool from_ggml = false;
  void Reset() { first_error.clear(); }
};

void Record(LogSink* sink, ggml_log_level level, const std::string& text, bool ggml) {
  if (level == GGML_LOG_LEVEL_ERROR) {
    if (sink->first_error.empty() || (sink->from_ggml && !ggml)) {
      sink->first_error = text;
      sink->from_ggml = ggml;
      while (!sink->first_error.empty() && sink->first_error.back() == '\n') sink->first_error.pop_back();
    }
    return;
  }
  if (level == GGML_LOG_LEVEL_DEBUG || sink->quiet) return;
  std::fputs(text.c_str(), stderr);
}

void LogToSink(ggml_log_level level, const char* text, void* user) {
  Record(static_cast<LogSink*>(user), level, text, /*ggml=*/false);
}

// ggml's messages carry no newline (ggml/ggml.h); printed as whisper_log_set prints them.
void GgmlToSink(ggml_log_level level, const char* text, void* user) {
  Record(static_cast<LogSink*>(user), level, std::string("ggml: ") + text + "\n", /*ggml=*/true);
}

int Fail(const std::string& message, int code = 1) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return code;
}

int FailFromLog(const LogSink& sink, const std::string& fallback) {
  return Fail(sink.first_error.empty() ? fallback : sink.first_error);
}

// Paul Tol's colour-blind-safe ramp (whisper-cli k_colors), low to high confidence, as xterm-256
// foreground codes of the nearest 6x6x6 cube colour.
std::string Colour(int i) {
  static const int kRgb[7][3] = {{220, 5, 12},   {232, 96, 28},   {241, 147, 45}, {246, 193, 65},
                                 {247, 240, 86}, {144, 201, 135}, {78, 178, 101}};
  auto q = [](int v) { return v < 48 ? 0 : v < 115 ? 1 : (v - 35) / 40; };
  const int x = 16 + 36 * q(kRgb[i][0]) + 6 * q(kRgb[i][1]) + q(kRgb[i][2]);
  return "\033[38;5;" + std::to_string(x) + "m";
}

struct PrintState {
  const CliParams* params;
  // -di: channels 0 and 1 at 16 kHz (AudioOptions::stereo); empty otherwise.
  const std::vector<std::vector<float>>* stereo = nullptr;
  int progress_prev = 0;
  // Printed text is valid UTF-8: a character split across tokens or segments is printed whole
  // with the later piece (as the output files hold it).
  Utf8Carry utf8;
};

// The errno of the first failed flush of standard output (0: none yet), for CheckStdout: glibc
// drops the buffer of a failed write, so a later flush no longer reports it.
int g_stdout_errno = 0;

void FlushStdout() {
  errno = 0;
  if (std::fflush(stdout) != 0 && g_stdout_errno == 0) g_stdout_errno = errno != 0 ? errno : EIO;
}

void PrintSegments(whisper_context* ctx, whisper_state*, int n_new, void* user) {
  PrintState& ps = *static_cast<PrintState*>(user);
  const CliParams& p = *ps.params;
  const int n = whisper_full_n_segments(ctx);
  if (n - n_new == 0) std::printf("\n");  // whisper-cli: a blank line before the first segment
  for (int i = n - n_new; i < n; ++i) {
    const int64_t t0 = whisper_full_get_segment_t0(ctx, i), t1 = whisper_full_get_segment_t1(ctx, i);
    if (!p.no_timestamps) std::printf("[%s --> %s]  ", FormatTimestamp(t0).c_str(), FormatTimestamp(t1).c_str());
    if (p.diarize && ps.stereo != nullptr && ps.stereo->size() == 2) {
      std::printf("(speaker %s)", EstimateSpeaker((*ps.stereo)[0], (*ps.stereo)[1], t0, t1).c_str());
    }
    if (p.multilingual) std::printf("(%s)", whisper_lang_str(whisper_ggml_full_get_segment_lang_id(ctx, i)));
    if (p.print_colors) {
      for (int j = 0; j < whisper_full_n_tokens(ctx, i); ++j) {
        if (!p.print_special && whisper_full_get_token_id(ctx, i, j) >= whisper_token_eot(ctx)) continue;
        const float prob = whisper_full_get_token_p(ctx, i, j);
        const int col = std::max(0, std::min(6, static_cast<int>(std::pow(prob, 3) * 7.0f)));
        std::printf("%s%s\033[0m", Colour(col).c_str(), ps.utf8.Push(whisper_full_get_token_text(ctx, i, j)).c_str());
      }
    } else if (p.print_confidence) {
      // whisper-cli's k_styles: inverse below 0.33, underlined below 0.66, dim above.
      static const char* const kStyles[3] = {"\033[7m", "\033[4m", "\033[2m"};
      for (int j = 0; j < whisper_full_n_tokens(ctx, i); ++j) {
        if (!p.print_special && whisper_full_get_token_id(ctx, i, j) >= whisper_token_eot(ctx)) continue;
        const float prob = whisper_full_get_token_p(ctx, i, j);
        const int style = prob < 0.33f ? 0 : (prob < 0.66f ? 1 : 2);
        std::printf("%s%s\033[0m", kStyles[style], ps.utf8.Push(whisper_full_get_token_text(ctx, i, j)).c_str());
      }
    } else {
      std::printf("%s", ps.utf8.Push(whisper_full_get_segment_text(ctx, i)).c_str());
    }
    if (p.tinydiarize && whisper_full_get_segment_speaker_turn_next(ctx, i)) std::printf(" [SPEAKER_TURN]");
    if (!p.no_timestamps || p.diarize) std::printf("\n");  // whisper-cli: one line per segment then
    FlushStdout();
  }
}

void PrintProgress(whisper_context*, whisper_state*, int progress, void* user) {
  auto* ps = static_cast<PrintState*>(user);
  constexpr int kStep = 5;  // whisper-cli's progress_step
  while (progress >= ps->progress_prev + kStep) {
    ps->progress_prev += kStep;
    std::fprintf(stderr, "whisper_print_progress_callback: progress = %3d%%\n", ps->progress_prev);
  }
}

// Checks -m, and with --vad -vm, before anything is loaded: the wrong kind of file (a VAD model as
// -m, a Whisper model as -vm, GGUF, CTranslate2, empty; another magic with its first bytes) and,
// by loading it once, the whole VAD model (whisper-cli 1.8.5 reads -vm inside whisper_full, after
// the model and the audio). The error message, or "" when both are fine.
std::string CheckModelFiles(const CliParams& p, const LogSink& sink) {
  const std::string vad_model = p.vad_model.empty() ? kDefaultVadModel : p.vad_model;
  char msg[4096];
  // A directory is a CTranslate2 folder, checked as LoadModel converts it.
  if (!ggml_whisper::convert::IsDirectory(p.model) &&
      whisper_ggml_check_model_file(p.model.c_str(), WHISPER_GGML_MODEL_FILE_WHISPER, msg, sizeof(msg)) != 0) {
    return msg;
  }
  // --batch-size cuts at VAD's pauses, or takes the --clip-timestamps clips as its chunks.
  const bool use_vad = p.vad || (p.batch_size > 1 && p.clip_timestamps.empty());
  if (use_vad && whisper_ggml_check_model_file(vad_model.c_str(), WHISPER_GGML_MODEL_FILE_SILERO_VAD, msg, sizeof(msg)) != 0) {
    return msg;
  }
  if (!use_vad) return "";
  whisper_vad_context* vad = whisper_vad_init_from_file_with_params(vad_model.c_str(), whisper_vad_default_context_params());
  if (vad == nullptr) return sink.first_error.empty() ? "cannot load VAD model '" + vad_model + "'" : sink.first_error;
  whisper_vad_free(vad);
  return "";
}

// -ot/-d against the audio (n_samples at 16 kHz): an offset at or past its end, or a selection
// under 100 ms, is an error naming the offset and the audio's duration (whisper-cli 1.8.5 warns
// "input is too short", transcribes nothing and exits 0). The message, or "" when fine.
std::string CheckOffset(const CliParams& p, const std::string& name, size_t n_samples) {
  if (p.offset_t_ms == 0 && p.duration_ms == 0) return "";
  absl::StatusOr<SampleRange> r = SampleRangeFromMs(static_cast<int64_t>(n_samples), p.offset_t_ms, p.duration_ms);
  if (!r.ok()) return "'" + name + "': -ot: " + std::string(r.status().message());
  if (r->size() >= 1600) return "";
  const std::string what = "-ot " + std::to_string(p.offset_t_ms) + " ms" +
                           (p.duration_ms > 0 ? " -d " + std::to_string(p.duration_ms) + " ms select " : " leaves ");
  return "'" + name + "': " + what + std::to_string(r->size() / 16) + " ms of the " + std::to_string(n_samples / 16) +
         " ms audio, less than 100 ms";
}

// Warns about --clip-timestamps clips that start at or after the audio's end: faster-whisper
// 1.2.1 skips them without a word (transcribe.py generate_segments: seek >= seek_clip_end), and so
// does the library; a user who cut clips for another file should hear of it.
void WarnClipsPastEnd(const CliParams& p, const std::string& name, size_t n_samples) {
  const double duration = static_cast<double>(n_samples) / WHISPER_SAMPLE_RATE;
  for (size_t i = 0; i < p.clip_timestamps.size(); i += 2) {
    if (i + 1 < p.clip_timestamps.size() && p.clip_timestamps[i + 1] <= p.clip_timestamps[i]) {
      std::fprintf(stderr, "warning: '%s': --clip-timestamps clip %zu ends (%.2f s) where or before it starts (%.2f s): "
                   "nothing of it is transcribed\n", name.c_str(), i / 2 + 1, p.clip_timestamps[i + 1],
                   p.clip_timestamps[i]);
      continue;
    }
    if (p.clip_timestamps[i] < duration) continue;
    std::fprintf(stderr, "warning: '%s': --clip-timestamps clip %zu starts at %.2f s, at or after the audio's end (%.2f s): "
                 "nothing of it is transcribed\n", name.c_str(), i / 2 + 1, p.clip_timestamps[i], duration);
  }
}

JsonInfo MakeJsonInfo(const CliParams& p, whisper_context* ctx) {
  JsonInfo info;
  info.system_info = whisper_print_system_info();
  info.model_path = p.model;
  info.model_type = whisper_model_type_readable(ctx);
  info.multilingual = whisper_is_multilingual(ctx) != 0;
  info.n_vocab = whisper_model_n_vocab(ctx);
  info.eot = whisper_token_eot(ctx);
  info.n_audio_ctx = whisper_model_n_audio_ctx(ctx);
  info.n_audio_state = whisper_model_n_audio_state(ctx);
  info.n_audio_head = whisper_model_n_audio_head(ctx);
  info.n_audio_layer = whisper_model_n_audio_layer(ctx);
  info.n_text_ctx = whisper_model_n_text_ctx(ctx);
  info.n_text_state = whisper_model_n_text_state(ctx);
  info.n_text_head = whisper_model_n_text_head(ctx);
  info.n_text_layer = whisper_model_n_text_layer(ctx);
  info.n_mels = whisper_model_n_mels(ctx);
  info.ftype = whisper_model_ftype(ctx);
  const int lang = whisper_full_lang_id(ctx);
  info.language = info.multilingual && lang >= 0 ? whisper_lang_str(lang) : "en";
  info.params_language = p.language;  // after DecideLanguage: "en" on English-only models
  info.translate = p.translate;
  info.tinydiarize = p.tinydiarize;
  info.segment_languages = p.multilingual;
  return info;
}

// -h, --version and --list-languages: prints what was asked for. True when one was given (Run
// then exits 0).
bool PrintInfoRequest(const CliParams& p, const char* argv0) {
  if (p.help) {
    std::fprintf(stderr, "%s", CliUsage(argv0).c_str());
    return true;
  }
  if (p.version) {
    std::printf("whisper-cli (ggml_whisper) %s\n", whisper_version());
    return true;
  }
  if (p.list_languages) {
    for (int i = 0; i <= whisper_lang_max_id(); ++i) {
      std::printf("%-3s %s\n", whisper_lang_str(i), whisper_lang_str_full(i));
    }
    return true;
  }
  return false;
}

// Whether whisper_lang_id knows `language` (a code or a name, as whisper-cli takes it), without
// its error log for unknown ones.
bool KnownLanguage(const std::string& language) {
  for (int id = 0; id <= whisper_lang_max_id(); ++id) {
    if (language == whisper_lang_str(id) || language == whisper_lang_str_full(id)) return true;
  }
  return false;
}

// The checks that need no model: an input file, no unimplemented flag, -owts's font; then the
// notes on ignored flags. The exit code after printing the error, or nullopt when fine.
std::optional<int> CheckUsage(const CliParams& p) {
  if (p.files.empty()) return Fail("no input files specified (use -f FILE)", 2);
  if (!p.unimplemented.empty()) {
    return Fail(p.unimplemented + " is not implemented by this runtime yet", 2);
  }
  if (p.output_words) {  // whisper-cli's output_wts needs a readable font
    FILE* font = std::fopen(p.font_path.c_str(), "rb");
    if (font == nullptr) {
      return Fail("-owts: font not found at '" + p.font_path + "', please specify a monospace font with -fp", 2);
    }
    std::fclose(font);
  }
  if (p.language != "auto" && !KnownLanguage(p.language)) {  // whisper-cli checks it before loading too
    return Fail("-l: unknown language '" + p.language + "'", 2);
  }
  for (const std::string& flag : p.ignored_flags) {
    std::fprintf(stderr, "note: %s ignored: this is a CPU runtime\n", flag.c_str());
  }
  return std::nullopt;
}

// Checks the model files (CheckModelFiles), loads -m and sets --decoding's rules. nullptr after
// printing the error. -m may be a CTranslate2 folder (faster-whisper's models/faster-whisper-NAME):
// converted in memory (tools/convert/ct2_folder.h) and loaded from that buffer, so --compute-type
// applies as to a file; an error names the folder's file and field (exit 1, as any model that cannot load).
whisper_context* LoadModel(const CliParams& p, const LogSink& sink) {
  if (const std::string bad = CheckModelFiles(p, sink); !bad.empty()) {
    Fail(bad);
    return nullptr;
  }
  std::string note;
  const whisper_context_params cparams = ToWhisperContextParams(p, &note);
  if (!note.empty()) std::fprintf(stderr, "note: --compute-type %s\n", note.c_str());
  whisper_context* ctx = nullptr;
  if (ggml_whisper::convert::IsDirectory(p.model)) {
    absl::StatusOr<std::vector<uint8_t>> image = ggml_whisper::convert::Ct2FolderToGgmlImage(p.model);
    if (!image.ok()) {
      Fail("cannot load the CTranslate2 model folder '" + p.model + "': " + std::string(image.status().message()));
      return nullptr;
    }
    ctx = whisper_ggml_init(nullptr, image->data(), image->size(), p.model.c_str(), cparams, 0);  // named the folder
  } else {
    ctx = whisper_init_from_file_with_params(p.model.c_str(), cparams);
  }
  if (ctx == nullptr) {
    FailFromLog(sink, "cannot load model '" + p.model + "'");
    return nullptr;
  }
  whisper_ggml_set_decoding(ctx, p.decoding == "whisper.cpp" ? WHISPER_GGML_DECODING_WHISPER_CPP
                                                              : WHISPER_GGML_DECODING_OPENAI);
  whisper_ggml_set_int8_attention(ctx, Int8AttentionMode(p));  // checked by the parser: cannot fail
  return ctx;
}

// -ac against the loaded model: exit code 2 after printing the error, or nullopt when fine.
std::optional<int> CheckAgainstModel(const CliParams& p, whisper_context* ctx) {
  if (p.audio_ctx > whisper_n_audio_ctx(ctx)) {
    return Fail("-ac " + std::to_string(p.audio_ctx) + " is larger than the model's n_audio_ctx " +
                    std::to_string(whisper_n_audio_ctx(ctx)),
                2);
  }
  return std::nullopt;
}

// faster-whisper's rule for language and task, as the server and the Python package apply it
// (request_rules.h): prints its notes (info ones unless -np) and applies it to `p`.
void ApplyLanguageRule(bool multilingual, CliParams* p) {
  const LanguageDecision language = DecideLanguage(multilingual, p->language, p->translate);
  for (const LanguageDecision::Note& note : language.notes) {
    if (note.level == LanguageDecision::Level::kInfo && p->no_prints) continue;
    std::fprintf(stderr, "%s: %s\n", note.level == LanguageDecision::Level::kInfo ? "note" : "warning",
                 note.message.c_str());
  }
  p->language = language.language;
  p->translate = language.translate;
  if (p->multilingual && !multilingual) {
    // faster-whisper 1.2.1's warning (its text lacks the space before "True"), as Python's.
    std::fprintf(stderr, "warning: The current model is English-only but the multilingual parameter is set to "
                         "True; setting to False instead.\n");
    p->multilingual = false;
  }
}

// How one input file went: done, failed (Run goes on to the next file and exits 1), or failed so
// that Run stops at once with exit code 1.
enum class FileOutcome { kDone, kFailed, kAbort };

// The display name of input `file` ("-" is standard input).
std::string InputName(const std::string& file) { return file == "-" ? kStdinName : file; }

// Decodes `file` to 16 kHz mono (and with -di its two channels into `stereo`), warns about a
// decoder that stopped early, and checks the length against 100 ms and -ot/-d. nullopt after
// printing the error.
std::optional<std::vector<float>> LoadInput(const CliParams& p, const std::string& file,
                                            std::vector<std::vector<float>>* stereo) {
  AudioReport report;
  AudioOptions audio_options;
  audio_options.report = &report;
  if (p.diarize) audio_options.stereo = stereo;
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMono(file, audio_options);
  if (!audio.ok()) {
    Fail(std::string(audio.status().message()));
    return std::nullopt;
  }
  // A decoder that stopped early without an error (a corrupt FLAC frame) is not silent.
  if (const std::string w = TruncationWarning(report, file == "-" ? kStdinName : file); !w.empty()) {
    std::fprintf(stderr, "warning: %s\n", w.c_str());
  }
  if (audio->size() < 1600) {  // whisper.cpp rejects input under 100 ms (10 frames)
    Fail("'" + InputName(file) + "': " + std::to_string(audio->size()) + " samples is shorter than 100 ms");
    return std::nullopt;
  }
  if (const std::string bad = CheckOffset(p, InputName(file), audio->size()); !bad.empty()) {
    Fail(bad);
    return std::nullopt;
  }
  WarnClipsPastEnd(p, InputName(file), audio->size());
  return *std::move(audio);
}

// --grammar, --grammar-rule, --grammar-penalty (whisper-cli 1.8.5): the parsed grammar and, when
// both --grammar and --grammar-rule are given, the rules decoding follows.
struct CliGrammar {
  GbnfGrammar parsed;
  std::vector<const whisper_grammar_element*> rules;
  size_t start = 0;
  bool use = false;
};

// " ('name')" after the first "rule N" of a library message, naming rule N.
std::string NameRules(const std::string& msg, const GbnfGrammar& g) {
  const size_t at = msg.find("rule ");
  size_t end = at == std::string::npos ? at : at + 5;
  while (end != std::string::npos && end < msg.size() && std::isdigit(static_cast<unsigned char>(msg[end]))) ++end;
  if (at == std::string::npos || end == at + 5) return msg;
  const uint32_t id = static_cast<uint32_t>(std::stoul(msg.substr(at + 5, end - at - 5)));
  for (const auto& [name, i] : g.symbol_ids) {
    if (i == id) return msg.substr(0, end) + " ('" + name + "')" + msg.substr(end);
  }
  return msg;
}

// Reads --grammar (a file when one exists at that path, else GBNF text, as whisper-cli), parses
// and checks it and prints it (whisper-cli's "main: grammar:", unless -np). The exit code after
// printing the error (2: a bad grammar, an unknown --grammar-rule), or nullopt when fine. Unlike
// whisper-cli (exit 4 "failed to parse grammar"; a warning and no grammar for an unknown rule),
// errors name the file, line and column, or the rule.
std::optional<int> LoadGrammar(const CliParams& p, CliGrammar* g) {
  if (p.grammar.empty()) return std::nullopt;
  std::string text = p.grammar, what = "(GBNF text)";
  std::error_code ec;
  if (std::filesystem::is_directory(p.grammar, ec)) return Fail("--grammar '" + p.grammar + "': is a directory", 2);
  std::ifstream in(p.grammar, std::ios::binary);
  if (in.good()) {
    std::ostringstream ss;
    ss << in.rdbuf();
    text = ss.str();
    what = "'" + p.grammar + "'";
  }
  absl::StatusOr<GbnfGrammar> parsed = ParseGbnf(text);
  if (!parsed.ok()) {
    // Text that is no grammar but looks like a path: say that no such file was read.
    const bool path_like = p.grammar.find("::=") == std::string::npos &&
                           (p.grammar.find('/') != std::string::npos || absl::EndsWith(p.grammar, ".gbnf"));
    if (what == "(GBNF text)" && path_like) {
      return Fail("--grammar '" + p.grammar + "': no such file (and not GBNF text: " +
                      std::string(parsed.status().message()) + ")",
                  2);
    }
    return Fail("--grammar " + what + ": " + std::string(parsed.status().message()), 2);
  }
  g->parsed = std::move(*parsed);
  g->rules = g->parsed.CRules();
  if (!p.no_prints) std::fprintf(stderr, "main: grammar:\n%s\n", FormatGbnf(g->parsed).c_str());
  if (p.grammar_rule.empty()) {
    if (!p.no_prints) std::fprintf(stderr, "note: --grammar without --grammar-rule: not used (as whisper-cli)\n");
    return std::nullopt;
  }
  const int64_t id = g->parsed.RuleId(p.grammar_rule);
  if (id < 0) {
    std::string names;
    for (const auto& [name, i] : g->parsed.symbol_ids) names += (names.empty() ? "" : ", ") + name;
    return Fail("--grammar-rule '" + p.grammar_rule + "': no such rule in --grammar " + what + " (its rules: " +
                    names + ")",
                2);
  }
  char msg[256] = "";
  if (whisper_ggml_check_grammar(g->rules.data(), g->rules.size(), static_cast<size_t>(id), msg, sizeof(msg)) != 0) {
    return Fail("--grammar " + what + ": " + NameRules(msg, g->parsed), 2);
  }
  g->start = static_cast<size_t>(id);
  g->use = true;
  return std::nullopt;
}

// whisper_full's parameters for one file: segments printed as they come (PrintSegments) and -pp's
// progress, unless the output file goes to stdout; the grammar, with which whisper-cli always
// runs its beam search (-bs 1: one beam).
whisper_full_params FullParams(const CliParams& p, bool to_stdout, PrintState* print, const CliGrammar& grammar) {
  whisper_full_params w = ToWhisperFullParams(p);
  if (grammar.use) {
    w.strategy = WHISPER_SAMPLING_BEAM_SEARCH;
    w.grammar_rules = const_cast<const whisper_grammar_element**>(grammar.rules.data());  // only read
    w.n_grammar_rules = grammar.rules.size();
    w.i_start_rule = grammar.start;
    w.grammar_penalty = p.grammar_penalty;
  }
  if (!to_stdout) {
    w.new_segment_callback = PrintSegments;
    w.new_segment_callback_user_data = print;
  }
  if (p.print_progress && !to_stdout) {
    w.progress_callback = PrintProgress;
    w.progress_callback_user_data = print;
  }
  return w;
}

// whisper-cli's "processing ..." header (and -pc/--print-confidence's legend) on stderr, unless -np.
void PrintProcessing(const CliParams& p, const std::string& file, size_t n_samples) {
  if (p.no_prints) return;
  std::fprintf(stderr,
               "\nprocessing '%s' (%zu samples, %.1f sec), %d threads, %d processors, lang = %s, task = %s, "
               "timestamps = %d ...\n\n",
               file.c_str(), n_samples, n_samples / 16000.0, p.n_threads, p.n_processors, p.language.c_str(),
               p.translate ? "translate" : "transcribe", p.no_timestamps ? 0 : 1);
  if (p.print_colors) {
    std::fprintf(stderr, "main: color scheme: red (low confidence), yellow (medium), green (high confidence)\n\n");
  } else if (p.print_confidence) {
    std::fprintf(stderr, "main: confidence: highlighted (low confidence), underlined (medium), dim (high confidence)\n\n");
  }
}

// One requested output file: its extension and its content.
struct OutputFile {
  const char* extension;
  std::string text;
};

// The requested output files of the finished transcription of `file` (n_samples long; -di's
// channels in `stereo`), in whisper-cli's order: txt, vtt, srt, wts, csv, json, lrc, score.
std::vector<OutputFile> FormatOutputs(const CliParams& p, whisper_context* ctx, const std::string& file,
                                      size_t n_samples, const std::vector<std::vector<float>>& stereo) {
  std::vector<TranscriptSegment> segments = CollectSegments(ctx, nullptr);
  if (p.diarize) LabelSpeakers(stereo, &segments);
  const JsonInfo info = MakeJsonInfo(p, ctx);
  std::function<const std::string&(whisper_token)> json_tokens;  // -ojf: segments list their tokens
  std::vector<std::string> token_texts;
  if (p.output_json_full || p.log_score || p.output_words) {
    const int n_vocab = whisper_n_vocab(ctx);
    token_texts.resize(static_cast<size_t>(n_vocab));
    for (int t = 0; t < n_vocab; ++t) token_texts[t] = whisper_token_to_str(ctx, t);
  }
  auto token_text = [&token_texts](whisper_token t) -> const std::string& { return token_texts[static_cast<size_t>(t)]; };
  if (p.output_json_full) json_tokens = token_text;
  WtsOptions wts;
  wts.font = p.font_path;
  wts.input = file;
  wts.duration_s = static_cast<float>(n_samples + 1000) / 16000;  // whisper-cli's t_sec
  wts.eot = whisper_token_eot(ctx);
  std::vector<OutputFile> outputs;
  if (p.output_txt) outputs.push_back({".txt", FormatTxt(segments)});
  if (p.output_vtt) outputs.push_back({".vtt", FormatVtt(segments)});
  if (p.output_srt) outputs.push_back({".srt", FormatSrt(segments, p.offset_n)});
  if (p.output_words) outputs.push_back({".wts", FormatWts(segments, token_text, wts)});
  if (p.output_csv) outputs.push_back({".csv", FormatCsv(segments, p.diarize)});
  if (p.output_json || p.output_json_full) outputs.push_back({".json", FormatJson(segments, info, json_tokens)});
  if (p.output_lrc) outputs.push_back({".lrc", FormatLrc(segments)});
  if (p.log_score) outputs.push_back({".score.txt", FormatScore(segments, token_text)});
  return outputs;
}

// Writes `outputs` to base + extension, or with to_stdout the first of them to stdout (whisper-cli
// warns about the others, or when there is none). False after printing a write error.
bool WriteOutputs(const CliParams& p, const std::string& base, bool to_stdout, const std::vector<OutputFile>& outputs) {
  if (to_stdout && outputs.empty()) {
    // whisper-cli's warning, and what it means (its text alone names a flag `-f -` users never gave).
    std::fprintf(stderr,
                 "warning: '--output-file -' used without any other '--output-*' (the output goes to stdout for "
                 "'-f -' or '-of -'; add -otxt, -osrt, -ovtt, -ojf, ... to print a transcript)\n");
  }
  bool used_stdout = false;
  for (const OutputFile& out : outputs) {
    if (to_stdout) {
      if (used_stdout) {
        std::fprintf(stderr, "warning: Not appending multiple file formats to stdout\n");
        continue;
      }
      std::fwrite(out.text.data(), 1, out.text.size(), stdout);
      FlushStdout();  // a failed write is reported at exit (CheckStdout)
      used_stdout = true;
      continue;
    }
    const std::string path = base + out.extension;
    absl::Status st = WriteFileAtomically(path, out.text);
    if (!st.ok()) {
      Fail(std::string(st.message()));
      return false;
    }
    if (!p.no_prints) std::fprintf(stderr, "output: saved to '%s'\n", path.c_str());
    if (std::strcmp(out.extension, ".wts") == 0) {  // whisper-cli prints this even with -np
      std::fprintf(stderr, "# output_wts: run 'source %s' to generate karaoke video\n", path.c_str());
    }
  }
  return true;
}

// Transcribes input f of p.files with `ctx`: prints its segments as they come, then writes the
// requested output files (or -dl's language).
FileOutcome TranscribeFile(const CliParams& p, size_t f, whisper_context* ctx, LogSink* sink,
                           const CliGrammar& grammar) {
  const std::string& file = p.files[f];
  std::vector<std::vector<float>> stereo;  // -di
  const std::optional<std::vector<float>> audio = LoadInput(p, file, &stereo);
  if (!audio) return FileOutcome::kFailed;
  PrintState print{&p, &stereo};
  // -of - (or -f - without -of): the output file goes to stdout, so segments are not printed
  // there (whisper-cli's fout_factory).
  const std::string base = f < p.output_files.size() && !p.output_files[f].empty() ? p.output_files[f] : file;
  const bool to_stdout = base == "-";
  const whisper_full_params w = FullParams(p, to_stdout, &print, grammar);
  PrintProcessing(p, file, audio->size());
  sink->Reset();
  const int ret = whisper_full_parallel(ctx, w, audio->data(), static_cast<int>(audio->size()), p.n_processors);
  if (ret != 0) {
    FailFromLog(*sink, "'" + InputName(file) + "': transcription failed (" + std::to_string(ret) + ")");
    return FileOutcome::kAbort;
  }
  if (!print.utf8.empty()) std::printf("%s\n", print.utf8.Finish().c_str());  // a character cut off at the end
  if (p.detect_language) {
    std::fprintf(stderr, "auto-detected language: %s\n", whisper_lang_str(whisper_full_lang_id(ctx)));
    return FileOutcome::kDone;
  }
  if (p.no_timestamps && !p.diarize && !to_stdout) std::printf("\n");
  const std::vector<OutputFile> outputs = FormatOutputs(p, ctx, file, audio->size(), stereo);
  return WriteOutputs(p, base, to_stdout, outputs) ? FileOutcome::kDone : FileOutcome::kAbort;
}

int Run(int argc, char** argv) {
  absl::StatusOr<CliParams> parsed = ParseCliParams(argc, argv);
  if (!parsed.ok()) return Fail(std::string(parsed.status().message()), 2);
  CliParams p = *parsed;
  if (PrintInfoRequest(p, argv[0])) return 0;
  if (const std::optional<int> code = CheckUsage(p)) return *code;
  CliGrammar grammar;
  if (const std::optional<int> code = LoadGrammar(p, &grammar)) return *code;
  if (p.n_threads == 0) p.n_threads = std::min(4, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));

  LogSink sink;
  sink.quiet = p.no_prints;
  whisper_log_set(LogToSink, &sink);
  ggml_log_set(GgmlToSink, &sink);  // after whisper_log_set, which points ggml's at its own

  whisper_context* ctx = LoadModel(p, sink);
  if (ctx == nullptr) return 1;
  struct Free {
    whisper_context* c;
    ~Free() { whisper_free(c); }
  } free_ctx{ctx};
  if (const std::optional<int> code = CheckAgainstModel(p, ctx)) return *code;
  sink.Reset();
  const bool multilingual = whisper_is_multilingual(ctx) != 0;
  if (!multilingual && p.detect_language) {
    std::fprintf(stderr, "auto-detected language: en (English-only model)\n");
    return 0;
  }
  ApplyLanguageRule(multilingual, &p);
  if (!p.no_prints) {
    std::fprintf(stderr, "system_info: n_threads = %d / %u | %s\n", p.n_threads, std::thread::hardware_concurrency(),
                 whisper_print_system_info());
  }

  int exit_code = 0;
  for (size_t f = 0; f < p.files.size(); ++f) {
    const FileOutcome outcome = TranscribeFile(p, f, ctx, &sink, grammar);
    if (outcome == FileOutcome::kAbort) return 1;
    if (outcome == FileOutcome::kFailed) exit_code = 1;
  }
  if (!p.no_prints) whisper_print_timings(ctx);
  return exit_code;
}

// `code` after standard output's buffered text is flushed; 1 (when `code` was 0) after printing
// an error when that or an earlier write to it failed (`> /dev/full`, a full disk): the transcript
// printed there is incomplete. whisper-cli 1.8.5 exits 0 then.
int CheckStdout(int code) {
  FlushStdout();
  if (g_stdout_errno == 0 && std::ferror(stdout) == 0) return code;
  std::fprintf(stderr, "error: writing to standard output failed (the transcript there is incomplete): %s\n",
               std::strerror(g_stdout_errno != 0 ? g_stdout_errno : EIO));
  return code == 0 ? 1 : code;
}

}  // namespace
}  // namespace whisper

int main(int argc, char** argv) {
  // `bazel run` starts binaries in their runfiles tree; relative paths on the command line mean
  // the directory the user ran bazel from.
  if (const absl::Status st = whisper::ChdirToBuildWorkingDirectory(); !st.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  return whisper::CheckStdout(whisper::Run(argc, argv));
}
