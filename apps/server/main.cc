// `bazel run //whisper:server -- -m models/ggml-tiny.en.bin --port 8080`: whisper.cpp's
// whisper-server on this runtime, plus OpenAI's audio API.
//
// Routes (each under --request-path):
//   POST <inference-path> (default /inference)  whisper-server's form fields (inference.h)
//   POST /v1/audio/transcriptions, /v1/audio/translations  OpenAI's API (inference.h)
//   POST /load   form field `model`: load another model file, by name, from --models-dir (403 without
//                it); the old model serves until the new one is ready
//   GET  /health {"status":"ok"} (the model is loaded before the server listens)
//   GET  /       a page with a form (or the --public folder's files)
// Prints "whisper server listening at http://HOST:PORT" on stdout once it accepts connections;
// SIGINT or SIGTERM stops it (requests in flight finish first). Exit codes: 0 after a stop, 1 when
// the port cannot be bound, 2 for a usage error, 3 when the model cannot be loaded
// (whisper-server's codes).
//
// Differences from whisper-server, also in --help and the README: requests run in parallel
// (--parallel states, a bounded --queue, then 503), their decoder steps batched together
// (continuous batching; --no-batching turns it off); /load is off unless --models-dir is given and
// then loads only a file name inside that folder (whisper-server opens any path a client sends);
// a failed /load keeps the old model (whisper-server exits); errors are JSON naming the field;
// language or translation requests on an English-only model are transcribed in English with a
// warning (request_rules.h); segments are not cut at 60 characters unless
// max_len is sent (whisper-server forces max_len 60); --convert is accepted but audio is always
// decoded in process (libsndfile: WAV, FLAC, OGG, MP3, AIFF); a client that disconnects does not
// abort its transcription (cpp-httplib 0.11 cannot tell); each connection has a thread of its own
// and a request's head must arrive within 30 s (http_server.h), so idle clients block no one.
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "apps/common/bazel_run.h"
#include "httplib.h"
#include "apps/server/http_server.h"
#include "apps/server/routes.h"
#include "apps/server/log_capture.h"
#include "apps/server/models_dir.h"
#include "apps/server/public_dir.h"
#include "apps/server/server_params.h"
#include "apps/server/state_pool.h"

namespace whisper::server {
namespace {

// The checks and defaults that need no model: unimplemented flags (exit 2), notes on ignored
// flags and --convert, --models-dir and --public made real paths (exit 2 when not a folder), -t 0
// resolved per state. The exit code after printing the error, or nullopt when fine.
std::optional<int> ResolveParams(ServerParams* sp) {
  if (!sp->decode.unimplemented.empty()) {
    std::fprintf(stderr, "error: %s is not implemented by this runtime yet\n", sp->decode.unimplemented.c_str());
    return 2;
  }
  for (const std::string& flag : sp->decode.ignored_flags) {
    std::fprintf(stderr, "note: %s ignored: this is a CPU runtime\n", flag.c_str());
  }
  if (!sp->models_dir.empty()) {
    absl::StatusOr<std::string> dir = ModelsDirRealPath(sp->models_dir);
    if (!dir.ok()) {
      std::fprintf(stderr, "error: %s\n", std::string(dir.status().message()).c_str());
      return 2;
    }
    sp->models_dir = *dir;
  }
  if (!sp->public_path.empty()) {  // served by routes.cc, never outside this real path (public_dir.h)
    absl::StatusOr<std::string> dir = PublicDirRealPath(sp->public_path);
    if (!dir.ok()) {
      std::fprintf(stderr, "error: %s\n", std::string(dir.status().message()).c_str());
      return 2;
    }
    sp->public_path = *dir;
  }
  if (sp->convert) {
    std::fprintf(stderr, "note: --convert ignored: audio is decoded in process (WAV, FLAC, OGG, MP3, AIFF)\n");
  }
  if (sp->decode.n_threads == 0) {
    const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    // With the shared batch its state runs every model graph: all threads go to it.
    const int share = sp->batching && sp->parallel >= 2 ? 1 : sp->parallel;
    sp->decode.n_threads = std::max(1, std::min(4, hw) / share);
    sp->decode_args.push_back("-t");
    sp->decode_args.push_back(std::to_string(sp->decode.n_threads));
  }
  return std::nullopt;
}

// Blocks SIGINT/SIGTERM (into `stop_signals`) in this thread and every thread made after it, for
// the thread that sigwaits on them; ignores SIGPIPE.
void BlockStopSignals(sigset_t* stop_signals) {
  sigemptyset(stop_signals);
  sigaddset(stop_signals, SIGINT);
  sigaddset(stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client that hangs up mid-response is an error, not a kill
}

// Fills `rt` from `sp` and loads the model with its --parallel states. False after printing the
// loader's error.
bool LoadRuntime(const ServerParams& sp, ServerRuntime* rt) {
  const whisper_ggml_decoding decoding =
      sp.decode.decoding == "whisper.cpp" ? WHISPER_GGML_DECODING_WHISPER_CPP : WHISPER_GGML_DECODING_OPENAI;
  rt->params = sp;
  rt->decoding = decoding;
  rt->log_requests = !sp.decode.no_prints;
  if (sp.batching && sp.parallel >= 2) {
    // Slots sized for the server's default request; a request asking for more decoders (a larger
    // beam or best_of) runs on its own state.
    rt->batch.decoders_per_slot = DecodersForRequest(sp.decode.beam_size, sp.decode.best_of);
    rt->batch.n_threads = sp.decode.n_threads;
  }
  ErrorCapture errors;
  absl::StatusOr<std::unique_ptr<LoadedModel>> m =
      LoadedModel::Load(sp.decode.model, sp.parallel, sp.queue, decoding, sp.decode.n_threads,
                        sp.decode.dtw, sp.decode.flash_attn, sp.decode.compute_type, rt->batch,
                        Int8AttentionMode(sp.decode));
  if (!m.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(m.status().message()).c_str());
    return false;
  }
  rt->model.Set(std::shared_ptr<LoadedModel>(std::move(*m)));
  return true;
}

// Binds `svr` to --host and --port (0: any free port). The port bound, or 0 when none could be.
int BindPort(HttpServer& svr, const ServerParams& sp) {
  // cpp-httplib 0.11's default options add SO_REUSEPORT, so a second server bound to a port in
  // use and both answered requests in turn (with their different models). SO_REUSEADDR only, as
  // whisper-server's builds of newer cpp-httplib do: a port in use is an error.
  svr.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<const void*>(&yes), sizeof(yes));
  });
  return svr.Bind(sp.host, sp.port);
}

// Serves on the bound `svr` until SIGINT/SIGTERM (taken by a thread of its own, which stops the
// server), after printing the "listening" line on stdout.
void Serve(httplib::Server& svr, sigset_t& stop_signals, const std::string& host, int port) {
  std::thread signals([&svr, &stop_signals] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    std::fprintf(stderr, "\ncaught signal %d, shutting down\n", sig);
    svr.stop();
  });
  std::printf("\nwhisper server listening at http://%s:%d\n\n", host.c_str(), port);
  std::fflush(stdout);
  const bool ok = svr.listen_after_bind();
  if (!ok) {  // stopped before it started, or the listening socket failed
    std::fprintf(stderr, "error: server stopped listening\n");
  }
  // The signal thread may still wait: wake it so it can be joined.
  pthread_kill(signals.native_handle(), SIGTERM);
  signals.join();
}

int Run(int argc, char** argv) {
  absl::StatusOr<ServerParams> parsed = ParseServerParams(argc, argv);
  if (!parsed.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(parsed.status().message()).c_str());
    return 2;
  }
  ServerParams sp = *std::move(parsed);
  if (sp.help) {
    std::fprintf(stderr, "%s", ServerUsage(argv[0]).c_str());
    return 0;
  }
  if (const std::optional<int> code = ResolveParams(&sp)) return *code;
  InstallLogCapture(sp.decode.no_prints);
  // Request bodies and decoded audio (hundreds of KB to MB each, on whichever connection thread
  // serves the request) are mmapped and unmapped when freed. glibc's default threshold adapts
  // upwards after the first such free, after which these buffers stay in per-thread arenas and
  // the server's RSS creeps up with the number of threads that ever served a large request.
  mallopt(M_MMAP_THRESHOLD, 256 << 10);
  sigset_t stop_signals;
  BlockStopSignals(&stop_signals);
  ServerRuntime rt;
  if (!LoadRuntime(sp, &rt)) return 3;

  HttpServer svr;  // a thread per connection, a deadline for each request's headers
  InstallRoutes(svr, rt);
  const int port = BindPort(svr, sp);
  if (port == 0) {
    std::fprintf(stderr, "error: cannot listen on %s:%d\n", sp.host.c_str(), sp.port);
    return 1;
  }
  sp.port = port;
  rt.params.port = port;  // for the home page
  Serve(svr, stop_signals, sp.host, port);
  return 0;
}

}  // namespace
}  // namespace whisper::server

int main(int argc, char** argv) {
  // `bazel run` starts binaries in their runfiles tree; relative paths on the command line mean
  // the directory the user ran bazel from.
  if (const absl::Status st = whisper::ChdirToBuildWorkingDirectory(); !st.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  return whisper::server::Run(argc, argv);
}
