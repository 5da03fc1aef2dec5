// Command-line flags of //whisper:server, whisper.cpp's whisper-server (examples/server/server.cpp,
// server_params and whisper_params_parse in 1.8.5) on this runtime.
//
// The server's own flags (--host, --port, --request-path, --inference-path, ...) are parsed here;
// every other flag is a decoding flag with whisper-cli's spelling and meaning, parsed by
// ParseCliParams (apps/common/cli_params.h), so `-t`, `-p`, `-l`, `-bs`, `-tp`, `--prompt`, ... mean
// what they mean for //whisper:cli. Where whisper-server's defaults differ from whisper-cli's, the
// server keeps whisper-server's: greedy decoding (-bs 1) with best-of 2.
#ifndef GGML_WHISPER_APPS_SERVER_SERVER_PARAMS_H_
#define GGML_WHISPER_APPS_SERVER_SERVER_PARAMS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "apps/common/cli_params.h"

namespace whisper::server {

struct ServerParams {
  std::string host = "127.0.0.1";   // --host: address to listen on
  int port = 8080;                  // --port: TCP port; 0 = any free port (printed at start)
  std::string public_path;          // --public: folder of static files served under request_path (then its realpath)
  std::string request_path;         // --request-path: prefix of every route ("" or "/api" ...)
  std::string inference_path = "/inference";  // --inference-path: whisper-server's route
  int read_timeout_s = 600;         // --read-timeout: seconds a connection may stall while sending
  int write_timeout_s = 600;        // --write-timeout: seconds a client may stall while receiving
  // --parallel N: transcriptions that run at once, each on its own whisper_state over the one
  // loaded model (whisper-server runs one at a time). With N >= 2 their decoder steps run as one
  // batch of at most N sequences' windows (continuous batching, state_pool.h) unless --no-batching.
  int parallel = 1;
  bool batching = true;  // --no-batching: false (each request decodes on its own state)
  // --queue N: requests that may wait for a free state; one more is answered 503.
  int queue = 16;
  // --max-body-size BYTES: larger request bodies are answered 413 before they are read whole.
  size_t max_body_size = size_t{100} << 20;
  // --max-audio-seconds S: an upload whose audio is longer is answered 413, from its header's
  // frame count before it is decoded (and after the request holds a state). 0: no limit. An
  // hour is about what --max-body-size's 100 MiB hold as 16 kHz 16-bit mono WAV, and 230 MB of
  // decoded samples per request (a 630 KB FLAC of silence holds an hour too).
  int max_audio_seconds = 3600;
  // --models-dir DIR: the folder POST /load may load model files from, by plain file name
  // (models_dir.h). Empty: /load is disabled (403). main.cc replaces it with its realpath.
  std::string models_dir;
  bool convert = false;  // --convert: accepted; audio is decoded in process (see --help)
  std::string tmp_dir = ".";  // --tmp-dir: accepted for whisper-server scripts; unused
  bool help = false;          // -h/--help
  // The decoding defaults of every request (a request's form fields override them). n_threads
  // 0 means: min(4, hardware threads) / parallel, at least 1; with the batch (parallel >= 2 and
  // batching), min(4, hardware threads), the batch's threads.
  CliParams decode;
  // The decoding flags that produced `decode` (whisper-server's defaults first, then the user's),
  // to which each request's form values are appended (inference.h ParseRequest).
  std::vector<std::string> decode_args;
};

// Parses argv[1..argc). Errors (InvalidArgument, one line naming the flag): an unknown flag, a
// missing or malformed value, a value out of range (port [0, 65535], --parallel [1, 64],
// --queue [0, 4096], timeouts [1, 86400] s, --max-body-size [1 KiB, 4 GiB], --max-audio-seconds
// [0, 10^6], an empty
// --models-dir; whether the folder exists is checked by main.cc), and the CLI's input
// and output flags (-f, -of, -otxt, ...), which have no meaning for a server.
absl::StatusOr<ServerParams> ParseServerParams(int argc, const char* const* argv);

// Usage: the server's flags with their defaults, then where the decoding flags are documented.
std::string ServerUsage(const char* argv0);

}  // namespace whisper::server

#endif  // GGML_WHISPER_APPS_SERVER_SERVER_PARAMS_H_
