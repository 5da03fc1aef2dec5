#include "apps/stream/stream_params.h"

#include <sys/stat.h>

#include <cmath>
#include <cstdint>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "whisper/whisper.h"

namespace whisper::stream {
namespace {

absl::Status Bad(const std::string& flag, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(flag, ": ", what));
}

absl::Status Int(const std::string& flag, const std::string& v, int lo, int hi, int* out) {
  int x = 0;
  if (!absl::SimpleAtoi(v, &x)) return Bad(flag, absl::StrCat("expected an integer, got '", v, "'"));
  if (x < lo || x > hi) return Bad(flag, absl::StrCat(x, " is out of range [", lo, ", ", hi, "]"));
  *out = x;
  return absl::OkStatus();
}

absl::Status Float(const std::string& flag, const std::string& v, float lo, float hi, float* out) {
  float x = 0;
  if (!absl::SimpleAtof(v, &x) || !std::isfinite(x)) {
    return Bad(flag, absl::StrCat("expected a finite number, got '", v, "'"));
  }
  if (x < lo || x > hi) return Bad(flag, absl::StrCat(v, " is out of range [", lo, ", ", hi, "]"));
  *out = x;
  return absl::OkStatus();
}

// The arguments of one command line, read left to right.
struct ArgReader {
  int argc;
  const char* const* argv;
  int i;  // the argument being parsed

  // The next argument as the value of flag `arg` (advancing i), or "missing value".
  absl::Status Value(const std::string& arg, std::string* v) {
    if (i + 1 >= argc || argv[i + 1] == nullptr) return Bad(arg, "missing value");
    *v = argv[++i];
    return absl::OkStatus();
  }
};

// The flags with a number (reads its value from `r`): sets the field `arg` names. nullopt when
// `arg` names none of them.
std::optional<absl::Status> ParseNumberFlag(const std::string& arg, ArgReader* r, StreamParams* p) {
  auto with = [&](auto set) {
    std::string v;
    absl::Status st = r->Value(arg, &v);
    return st.ok() ? set(v) : st;
  };
  if (arg == "-t" || arg == "--threads") {
    return with([&](const std::string& v) { return Int(arg, v, 1, 512, &p->n_threads); });
  }
  if (arg == "--step") {
    return with([&](const std::string& v) { return Int(arg, v, INT32_MIN / 2, 30000, &p->step_ms); });
  }
  if (arg == "--length") {
    return with([&](const std::string& v) { return Int(arg, v, 1, 30000, &p->length_ms); });
  }
  if (arg == "--keep") {
    return with([&](const std::string& v) { return Int(arg, v, 0, 30000, &p->keep_ms); });
  }
  if (arg == "-c" || arg == "--capture") {
    absl::Status st = with([&](const std::string& v) { return Int(arg, v, -1, 1024, &p->capture_id); });
    if (st.ok()) p->input = "sdl";
    return st;
  }
  if (arg == "-mt" || arg == "--max-tokens") {
    return with([&](const std::string& v) { return Int(arg, v, 0, 1 << 20, &p->max_tokens); });
  }
  if (arg == "-ac" || arg == "--audio-ctx") {
    return with([&](const std::string& v) { return Int(arg, v, 0, 1 << 20, &p->audio_ctx); });
  }
  if (arg == "-bs" || arg == "--beam-size") {
    return with([&](const std::string& v) { return Int(arg, v, -1, 8, &p->beam_size); });
  }
  if (arg == "-vth" || arg == "--vad-thold") {
    return with([&](const std::string& v) { return Float(arg, v, 0.0f, 1.0f, &p->vad_thold); });
  }
  if (arg == "-fth" || arg == "--freq-thold") {
    return with([&](const std::string& v) { return Float(arg, v, 0.0f, 8000.0f, &p->freq_thold); });
  }
  return std::nullopt;
}

// The switches and the flags with a text value (read from `r`): sets the field `arg` names.
// nullopt when `arg` names none of them.
std::optional<absl::Status> ParseOtherFlag(const std::string& arg, ArgReader* r, StreamParams* p) {
  std::string v;
  if (arg == "-l" || arg == "--language") {
    absl::Status st = r->Value(arg, &v);
    p->language = v;
    return st;
  } else if (arg == "-m" || arg == "--model") {
    absl::Status st = r->Value(arg, &v);
    p->model = v;
    return st;
  } else if (arg == "-f" || arg == "--file") {
    absl::Status st = r->Value(arg, &v);
    p->fname_out = v;
    return st;
  } else if (arg == "--input") {
    absl::Status st = r->Value(arg, &v);
    if (st.ok() && v != "-" && v != "sdl") st = Bad(arg, absl::StrCat("expected '-' (stdin) or 'sdl', got '", v, "'"));
    p->input = v;
    return st;
  } else if (arg == "--compute-type") {
    absl::Status st = r->Value(arg, &v);
    if (!st.ok()) return st;
    whisper_context_params c = whisper_context_default_params();
    char msg[256] = "";
    if (whisper_ggml_set_compute_type(&c, v.c_str(), msg, sizeof(msg)) < 0) return Bad(arg, msg);
    p->compute_type = v;
    return st;
  } else if (arg == "-tdrz" || arg == "--tinydiarize") {
    return Bad(arg, "tinydiarize is not implemented by this runtime yet");
  } else if (arg == "-tr" || arg == "--translate") {
    p->translate = true;
  } else if (arg == "-nf" || arg == "--no-fallback") {
    p->no_fallback = true;
  } else if (arg == "-ps" || arg == "--print-special") {
    p->print_special = true;
  } else if (arg == "-kc" || arg == "--keep-context") {
    p->keep_context = true;
  } else if (arg == "-sa" || arg == "--save-audio") {
    p->save_audio = true;
  } else if (arg == "-fa" || arg == "--flash-attn") {
    p->flash_attn = true;
  } else if (arg == "-nfa" || arg == "--no-flash-attn") {
    p->flash_attn = false;
  } else if (arg == "-rt" || arg == "--real-time") {
    p->real_time = true;
  } else if (arg == "-ng" || arg == "--no-gpu") {
    p->ignored_flags.push_back(arg);
  } else {
    return std::nullopt;
  }
  return absl::OkStatus();
}

// --step, --length and --keep together: whisper-stream clamps (keep = min(keep, step), length =
// max(length, step)); contradictory values are errors here. Not checked in VAD mode (--step <= 0).
absl::Status CheckWindow(const StreamParams& p) {
  if (p.step_ms <= 0) return absl::OkStatus();
  if (p.length_ms < p.step_ms) {
    return Bad("--length", absl::StrCat(p.length_ms, " ms is shorter than --step ", p.step_ms, " ms"));
  }
  if (p.keep_ms > p.step_ms) {
    return Bad("--keep", absl::StrCat(p.keep_ms, " ms is longer than --step ", p.step_ms, " ms"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<StreamParams> ParseStreamParams(int argc, const char* const* argv) {
  StreamParams p;
  for (ArgReader r{argc, argv, 1}; r.i < argc; ++r.i) {
    const std::string arg = argv[r.i] != nullptr ? argv[r.i] : "";
    if (arg == "-h" || arg == "--help") {
      p.help = true;
      return p;
    }
    std::optional<absl::Status> st = ParseNumberFlag(arg, &r, &p);
    if (!st) st = ParseOtherFlag(arg, &r, &p);
    if (!st) st = Bad(arg, "unknown argument (see --help)");
    if (!st->ok()) return *st;
  }
  if (absl::Status st = CheckWindow(p); !st.ok()) return st;
  return p;
}

bool ReadsLossless(const StreamParams& p, unsigned stdin_mode) {
  if (p.input != "-" || p.real_time) return false;
  const mode_t m = static_cast<mode_t>(stdin_mode);
  return S_ISFIFO(m) || S_ISREG(m);
}

std::string StreamUsage(const char* argv0) {
  const StreamParams d;
  std::string out = absl::StrCat(
      "\nusage: ", argv0, " [options] < audio.s16le\n",
      "  input: raw 16 kHz mono signed 16-bit little-endian PCM on stdin, e.g.\n",
      "    sox talk.flac -t raw -r 16000 -c 1 -b 16 -e signed - | ", argv0, " -m MODEL\n",
      "    arecord -q -f S16_LE -c 1 -r 16000 -t raw | ", argv0, " -m MODEL -rt\n",
      "  or the microphone (--input sdl / -c N) in builds with SDL2 (--define=stream_sdl2=1).\n",
      "  A pipe or a file on stdin is read losslessly: when transcription is behind, reading waits\n",
      "  (any feeding speed gives the same text). A live source on a pipe wants -rt: the oldest\n",
      "  audio is dropped instead, as from the microphone, so the text keeps up with the speaker.\n\noptions:\n");
  const std::pair<const char*, std::string> rows[] = {
      {"-t N, --threads N", "[min(4, cores)] threads per transcription"},
      {"--step N", absl::StrCat("[", d.step_ms, "] audio step size, ms (<= 0: energy-VAD mode)")},
      {"--length N", absl::StrCat("[", d.length_ms, "] window length, ms")},
      {"--keep N", absl::StrCat("[", d.keep_ms, "] audio kept from the previous window, ms")},
      {"-c ID, --capture ID", "[-1] SDL2 capture device (SDL2 builds)"},
      {"-mt N, --max-tokens N", "[0] maximum tokens per window (0 = no limit)"},
      {"-ac N, --audio-ctx N", "[0] audio context size (0 = all)"},
      {"-bs N, --beam-size N", "[-1] beam size (<= 1: greedy)"},
      {"-vth N, --vad-thold N", absl::StrFormat("[%.2f] VAD mode: silence threshold", d.vad_thold)},
      {"-fth N, --freq-thold N", absl::StrFormat("[%.2f] VAD mode: high-pass frequency cut-off, Hz", d.freq_thold)},
      {"-tr, --translate", "[false] translate to English"},
      {"-nf, --no-fallback", "[false] no temperature fallback"},
      {"-ps, --print-special", "[false] print special tokens"},
      {"-kc, --keep-context", "[false] keep the text context across windows"},
      {"-l LANG, --language LANG", absl::StrCat("[", d.language, "] spoken language")},
      {"-m FNAME, --model FNAME", absl::StrCat("[", d.model, "] model path")},
      {"-f FNAME, --file FNAME", "[] append committed lines to this text file"},
      {"-sa, --save-audio", "[false] save the audio to YYYYmmddHHMMSS.wav"},
      {"--input SRC", "[-] - (stdin) or sdl"},
      {"-rt, --real-time", "[false] live input on stdin: drop the oldest audio when behind (always on with sdl)"},
      {"--compute-type NAME", "[default] faster-whisper's compute_type: convert the weights at load (int8* -> q8_0, "
                              "float16, float32; default, auto: as stored)"},
      {"-tdrz, --tinydiarize", "[false] (not implemented: exits 2)"},
      {"-fa, --flash-attn", "[true] fused attention in the encoder"},
      {"-nfa, --no-flash-attn", "[false] blocked softmax attention in the encoder"},
      {"-ng, --no-gpu", "GPU flag: accepted, ignored on this CPU runtime"},
  };
  for (const auto& [flag, help] : rows) absl::StrAppend(&out, absl::StrFormat("  %-28s %s\n", flag, help));
  absl::StrAppend(&out, "\n");
  return out;
}

}  // namespace whisper::stream
