#include "apps/server/server_params.h"

#include <cstdint>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace whisper::server {
namespace {

absl::Status Bad(const std::string& flag, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(flag, ": ", what));
}

template <typename T>
absl::Status ParseRange(const std::string& flag, const std::string& value, T lo, T hi, T* out) {
  int64_t v = 0;
  if (!absl::SimpleAtoi(value, &v)) {
    return Bad(flag, absl::StrCat("expected an integer in [", lo, ", ", hi, "], got '", value, "'"));
  }
  if (v < static_cast<int64_t>(lo) || v > static_cast<int64_t>(hi)) {
    return Bad(flag, absl::StrCat("expected an integer in [", lo, ", ", hi, "], got ", v));
  }
  *out = static_cast<T>(v);
  return absl::OkStatus();
}

// A route prefix or path: "" or starting with '/', without a trailing '/' (whisper-server joins
// request_path + inference_path by concatenation).
absl::Status ParsePath(const std::string& flag, const std::string& value, bool allow_empty, std::string* out) {
  if (value.empty() ? !allow_empty : (value[0] != '/' || (value.size() > 1 && value.back() == '/'))) {
    return Bad(flag, absl::StrCat("expected a path starting with '/' and not ending with '/', got '", value, "'"));
  }
  *out = value;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ServerParams> ParseServerParams(int argc, const char* const* argv) {
  ServerParams p;
  // whisper-server's defaults where they differ from whisper-cli's: greedy, best-of 2. The user's
  // flags come after these, so they override them.
  std::vector<std::string> decode_args = {"-bs", "1", "-bo", "2"};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i] != nullptr ? argv[i] : "";
    auto value = [&](std::string* out) -> absl::Status {
      if (i + 1 >= argc || argv[i + 1] == nullptr) return Bad(arg, "missing value");
      *out = argv[++i];
      return absl::OkStatus();
    };
    std::string v;
    absl::Status st;
    if (arg == "-h" || arg == "--help") {
      p.help = true;
      return p;
    } else if (arg == "--host") {
      st = value(&p.host);
      if (st.ok() && p.host.empty()) st = Bad(arg, "expected a host name or address, got ''");
    } else if (arg == "--port") {
      if (st = value(&v); st.ok()) st = ParseRange(arg, v, 0, 65535, &p.port);
    } else if (arg == "--public") {
      st = value(&p.public_path);
    } else if (arg == "--request-path") {
      if (st = value(&v); st.ok()) st = ParsePath(arg, v, /*allow_empty=*/true, &p.request_path);
    } else if (arg == "--inference-path") {
      if (st = value(&v); st.ok()) st = ParsePath(arg, v, /*allow_empty=*/false, &p.inference_path);
    } else if (arg == "--read-timeout") {
      if (st = value(&v); st.ok()) st = ParseRange(arg, v, 1, 86400, &p.read_timeout_s);
    } else if (arg == "--write-timeout") {
      if (st = value(&v); st.ok()) st = ParseRange(arg, v, 1, 86400, &p.write_timeout_s);
    } else if (arg == "--parallel") {
      if (st = value(&v); st.ok()) st = ParseRange(arg, v, 1, 64, &p.parallel);
    } else if (arg == "--no-batching") {
      p.batching = false;
    } else if (arg == "--queue") {
      if (st = value(&v); st.ok()) st = ParseRange(arg, v, 0, 4096, &p.queue);
    } else if (arg == "--max-body-size") {
      if (st = value(&v); st.ok()) st = ParseRange<size_t>(arg, v, size_t{1} << 10, size_t{4} << 30, &p.max_body_size);
    } else if (arg == "--max-audio-seconds") {
      if (st = value(&v); st.ok()) st = ParseRange(arg, v, 0, 1000000, &p.max_audio_seconds);
    } else if (arg == "--models-dir") {
      st = value(&p.models_dir);
      if (st.ok() && p.models_dir.empty()) st = Bad(arg, "expected a folder, got ''");
    } else if (arg == "--convert") {
      p.convert = true;
    } else if (arg == "--tmp-dir") {
      st = value(&p.tmp_dir);
    } else {
      decode_args.push_back(arg);
    }
    if (!st.ok()) return st;
  }
  std::vector<const char*> cargv = {argc > 0 && argv[0] != nullptr ? argv[0] : "whisper-server"};
  for (const std::string& a : decode_args) cargv.push_back(a.c_str());
  absl::StatusOr<CliParams> decode = ParseCliParams(static_cast<int>(cargv.size()), cargv.data());
  if (!decode.ok()) return decode.status();
  p.decode = *std::move(decode);
  p.decode_args = std::move(decode_args);
  const CliParams& d = p.decode;
  if (!d.files.empty()) return Bad("-f/--file", "not a server flag: audio comes in each request's 'file' field");
  if (!d.output_files.empty()) return Bad("-of/--output-file", "not a server flag: results are the HTTP response");
  const std::pair<bool, const char*> outputs[] = {
      {d.output_txt, "-otxt"}, {d.output_vtt, "-ovtt"}, {d.output_srt, "-osrt"}, {d.output_lrc, "-olrc"},
      {d.output_csv, "-ocsv"}, {d.output_json, "-oj"},  {d.output_words, "-owts"}};
  for (const auto& [set, flag] : outputs) {
    if (set) return Bad(flag, "not a server flag: choose the format per request with 'response_format'");
  }
  if (d.detect_language) return Bad("-dl", "not a server flag: send 'detect_language' per request");
  if (d.n_processors > 1) {
    return Bad("-p", "the server transcribes each request on one state; run requests in parallel with --parallel");
  }
  return p;
}

std::string ServerUsage(const char* argv0) {
  const ServerParams d;
  std::string out = absl::StrCat("\nusage: ", argv0, " [options]\n\nserver options:\n");
  const std::pair<const char*, std::string> rows[] = {
      {"--host HOST", absl::StrCat("[", d.host, "] address to listen on")},
      {"--port PORT", absl::StrCat("[", d.port, "] port to listen on (0 = any free port)")},
      {"--public PATH", "[] folder of static files served under --request-path (none outside its real path)"},
      {"--request-path PATH", "[] prefix of every route, e.g. /api"},
      {"--inference-path PATH", absl::StrCat("[", d.inference_path, "] whisper-server's inference route")},
      {"--parallel N", absl::StrCat("[", d.parallel, "] transcriptions at once (one whisper_state each); from 2 on,\n"
                                    "                           their decoder steps run as one batch")},
      {"--no-batching", "[false] each transcription decodes on its own state (no shared batch)"},
      {"--queue N", absl::StrCat("[", d.queue, "] requests that may wait for a state; more get 503")},
      {"--max-body-size BYTES", absl::StrCat("[", d.max_body_size, "] larger request bodies get 413")},
      {"--max-audio-seconds S", absl::StrCat("[", d.max_audio_seconds, "] longer uploads get 413, from the header ",
                                             "before decoding (0 = no limit)")},
      {"--read-timeout S", absl::StrCat("[", d.read_timeout_s, "] seconds a client may stall sending")},
      {"--write-timeout S", absl::StrCat("[", d.write_timeout_s, "] seconds a client may stall receiving")},
      {"--models-dir DIR", "[] folder POST /load may load model files (or CTranslate2 folders) from, by\n"
                           "                           name (no paths);\n"
                           "                           without it /load is disabled (403)"},
      {"--convert", "[false] accepted for whisper-server scripts: audio is always decoded in process"},
      {"--tmp-dir PATH", "[.] accepted for whisper-server scripts; unused"},
  };
  for (const auto& [flag, help] : rows) absl::StrAppend(&out, absl::StrFormat("  %-24s %s\n", flag, help));
  absl::StrAppend(&out,
                  "\ndecoding options: every whisper-cli decoding flag (-m, -t, -p, -l, -bs, -bo, -tp, -tpi,\n"
                  "  --prompt, -nf, -mc, -ml, -sow, -et, -lpt, -nth, -sns, --decoding, ...; see\n"
                  "  `bazel run //whisper:cli -- --help`), as defaults for every request; -m is a ggml file or\n"
                  "  a CTranslate2 folder (faster-whisper's), as for whisper-cli. Server defaults\n"
                  "  that differ from whisper-cli's are whisper-server's: -bs 1 (greedy), -bo 2; -t defaults to\n"
                  "  min(4, hardware threads), divided by --parallel with --no-batching.\n"
                  "  -di labels every reply's segments with the louder of the file's first two channels\n"
                  "  ('(speaker 0)', '<v Speaker1>', \"speaker\": \"?\"), as the\n"
                  "  'diarize' field does per request; -tdrz ('tinydiarize') sets tdrz_enable (a tdrz model's\n"
                  "  speaker turns, which whisper-server 1.8.5 writes in no reply).\n"
                  "\nroutes: POST <request-path><inference-path> (whisper-server's form fields), POST /load\n"
                  "  (field 'model': a file or CTranslate2 folder name in --models-dir), GET /health,\n"
                  "  POST /v1/audio/transcriptions and /v1/audio/translations (OpenAI's API).\n"
                  "\ndifferences from whisper-server 1.8.5: requests run in parallel (--parallel, --queue, then\n"
                  "  503), their decoder steps batched together; /load is off unless --models-dir is given and\n"
                  "  only loads a file name inside that folder\n"
                  "  (whisper-server opens any path a client names, and exits when it is not a model); a failed\n"
                  "  /load keeps the old model; errors are JSON naming the field; on an English-only model a\n"
                  "  request for another language or translation is transcribed in English with a warning\n"
                  "  (a 'Warning' header, and 'warnings' in JSON replies); each connection has a thread of\n"
                  "  its own and a request's line and headers must arrive within 30 s (else 408).\n\n");
  return out;
}

}  // namespace whisper::server
