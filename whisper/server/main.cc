// `bazel run //whisper:server -- -m models/ggml-tiny.en.bin --port 8080`: whisper.cpp's
// whisper-server on this runtime, plus OpenAI's audio API.
//
// Routes (each under --request-path):
//   POST <inference-path> (default /inference)  whisper-server's form fields (inference.h)
//   POST /v1/audio/transcriptions, /v1/audio/translations  OpenAI's API (inference.h)
//   POST /load   form field `model`: load another model file; the old one serves until it is ready
//   GET  /health {"status":"ok"}, or 503 {"status":"loading model"} while the first model loads
//   GET  /       a page with a form (or the --public folder's files)
// Prints "whisper server listening at http://HOST:PORT" on stdout once it accepts connections;
// SIGINT or SIGTERM stops it (requests in flight finish first). Exit codes: 0 after a stop, 1 when
// the port cannot be bound, 2 for a usage error, 3 when the model cannot be loaded
// (whisper-server's codes).
//
// Differences from whisper-server, also in --help and the README: requests run in parallel
// (--parallel states, a bounded --queue, then 503); a failed /load keeps the old model (whisper-
// server exits); errors are JSON naming the field; segments are not cut at 60 characters unless
// max_len is sent (whisper-server forces max_len 60); --convert is accepted but audio is always
// decoded in process (libsndfile: WAV, FLAC, OGG, MP3, AIFF); a client that disconnects does not
// abort its transcription (cpp-httplib 0.11 cannot tell).
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
#include <string>
#include <thread>

#include "httplib.h"
#include "whisper/server/inference.h"
#include "whisper/server/log_capture.h"
#include "whisper/server/server_params.h"
#include "whisper/server/state_pool.h"

namespace whisper::server {
namespace {

// The model requests use; /load replaces it while requests in flight keep the old one alive.
class ModelSlot {
 public:
  std::shared_ptr<LoadedModel> Get() const {
    std::lock_guard<std::mutex> lock(mu_);
    return model_;
  }
  void Set(std::shared_ptr<LoadedModel> m) {
    std::lock_guard<std::mutex> lock(mu_);
    model_ = std::move(m);
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<LoadedModel> model_;
};

Form ToForm(const httplib::Request& req) {
  Form form;
  for (const auto& [name, part] : req.files) {
    FormValue v;
    v.content = part.content;
    v.filename = part.filename;
    v.is_file = !part.filename.empty();
    form.emplace(name, std::move(v));
  }
  for (const auto& [name, value] : req.params) {
    if (req.files.count(name) != 0) continue;  // a multipart field also seen in the query string
    FormValue v;
    v.content = value;
    form.emplace(name, std::move(v));
  }
  return form;
}

void Send(const Reply& r, httplib::Response& res) {
  res.status = r.status;
  res.set_content(r.body, r.content_type.c_str());
}

Api ApiOfPath(const std::string& path) {
  return path.find("/v1/") != std::string::npos ? Api::kOpenAiTranscription : Api::kWhisperServer;
}

std::string HomePage(const ServerParams& sp) {
  const std::string route = sp.request_path + sp.inference_path;
  return "<html><head><title>ggml_whisper server</title><meta charset=\"utf-8\"></head><body>\n"
         "<h1>ggml_whisper server</h1>\n<pre>curl 127.0.0.1:" +
         std::to_string(sp.port) + route +
         " -F file=@audio.wav -F response_format=json\n"
         "curl 127.0.0.1:" +
         std::to_string(sp.port) + sp.request_path +
         "/v1/audio/transcriptions -F file=@audio.wav -F model=whisper-1</pre>\n"
         "<form action=\"" +
         route +
         "\" method=\"POST\" enctype=\"multipart/form-data\">\n"
         "<input type=\"file\" name=\"file\" accept=\"audio/*\" required>\n"
         "<select name=\"response_format\"><option>json</option><option>verbose_json</option>"
         "<option>text</option><option>srt</option><option>vtt</option></select>\n"
         "<button type=\"submit\">Transcribe</button></form></body></html>\n";
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
  if (!sp.decode.unimplemented.empty()) {
    std::fprintf(stderr, "error: %s is not implemented by this runtime yet\n", sp.decode.unimplemented.c_str());
    return 2;
  }
  for (const std::string& flag : sp.decode.ignored_flags) {
    std::fprintf(stderr, "note: %s ignored: this is a CPU runtime\n", flag.c_str());
  }
  if (sp.convert) {
    std::fprintf(stderr, "note: --convert ignored: audio is decoded in process (WAV, FLAC, OGG, MP3, AIFF)\n");
  }
  if (sp.decode.n_threads == 0) {
    const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    sp.decode.n_threads = std::max(1, std::min(4, hw) / sp.parallel);
    sp.decode_args.push_back("-t");
    sp.decode_args.push_back(std::to_string(sp.decode.n_threads));
  }
  InstallLogCapture(sp.decode.no_prints);
  // Request bodies and decoded audio (hundreds of KB to MB each, on whichever connection thread
  // serves the request) are mmapped and unmapped when freed. glibc's default threshold adapts
  // upwards after the first such free, after which these buffers stay in per-thread arenas and
  // the server's RSS creeps up with the number of threads that ever served a large request.
  mallopt(M_MMAP_THRESHOLD, 256 << 10);

  // SIGINT/SIGTERM are taken by a thread of their own (sigwait), so they are blocked in every
  // thread made after this point.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client that hangs up mid-response is an error, not a kill

  const whisper_ggml_decoding decoding =
      sp.decode.decoding == "whisper.cpp" ? WHISPER_GGML_DECODING_WHISPER_CPP : WHISPER_GGML_DECODING_OPENAI;
  ModelSlot slot;
  std::atomic<bool> loading{true};
  {
    ErrorCapture errors;
    absl::StatusOr<std::unique_ptr<LoadedModel>> m = LoadedModel::Load(sp.decode.model, sp.parallel, sp.queue, decoding, sp.decode.n_threads);
    if (!m.ok()) {
      std::fprintf(stderr, "error: %s\n", std::string(m.status().message()).c_str());
      return 3;
    }
    slot.Set(std::shared_ptr<LoadedModel>(std::move(*m)));
  }
  loading = false;
  std::mutex load_mu;  // one /load at a time

  httplib::Server svr;
  // Enough connection threads for every state, every queued request and a few quick requests
  // (health checks, rejections) at the same time; connections beyond that wait to be accepted.
  const size_t n_http_threads = static_cast<size_t>(sp.parallel + sp.queue + 4);
  svr.new_task_queue = [n_http_threads] { return new httplib::ThreadPool(n_http_threads); };
  svr.set_payload_max_length(sp.max_body_size);
  svr.set_read_timeout(sp.read_timeout_s, 0);
  svr.set_write_timeout(sp.write_timeout_s, 0);
  svr.set_default_headers({{"Server", "ggml_whisper"},
                           {"Access-Control-Allow-Origin", "*"},
                           {"Access-Control-Allow-Headers", "content-type, authorization"}});

  auto transcribe = [&](Api api) {
    return [&, api](const httplib::Request& req, httplib::Response& res) {
      const auto t0 = std::chrono::steady_clock::now();
      const std::shared_ptr<LoadedModel> model = slot.Get();
      const Reply reply = HandleTranscription(api, ToForm(req), sp.decode_args, *model);
      Send(reply, res);
      if (!sp.decode.no_prints) {
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        std::fprintf(stderr, "%s %s %d %.0f ms%s%s\n", req.method.c_str(), req.path.c_str(), reply.status, ms,
                     reply.status >= 400 ? " " : "", reply.status >= 400 ? reply.body.c_str() : "");
      }
    };
  };
  const std::string& rp = sp.request_path;
  svr.Post(rp + sp.inference_path, transcribe(Api::kWhisperServer));
  svr.Post(rp + "/v1/audio/transcriptions", transcribe(Api::kOpenAiTranscription));
  svr.Post(rp + "/v1/audio/translations", transcribe(Api::kOpenAiTranslation));
  svr.Options(rp + sp.inference_path, [](const httplib::Request&, httplib::Response&) {});

  svr.Post(rp + "/load", [&](const httplib::Request& req, httplib::Response& res) {
    const Form form = ToForm(req);
    const auto it = form.find("model");
    if (it == form.end()) return Send(ErrorReply(Api::kWhisperServer, 400, "no 'model' field in the request"), res);
    std::lock_guard<std::mutex> lock(load_mu);
    absl::StatusOr<std::unique_ptr<LoadedModel>> m =
        LoadedModel::Load(it->second.content, sp.parallel, sp.queue, decoding, sp.decode.n_threads);
    if (!m.ok()) {
      return Send(ErrorReply(Api::kWhisperServer, 400,
                             std::string(m.status().message()) + " (the previous model is still loaded)"),
                  res);
    }
    slot.Set(std::shared_ptr<LoadedModel>(std::move(*m)));
    std::fprintf(stderr, "loaded model '%s'\n", it->second.content.c_str());
    res.set_content("Load was successful!", "application/text");  // whisper-server's reply
  });

  svr.Get(rp + "/health", [&](const httplib::Request&, httplib::Response& res) {
    if (loading) {
      res.status = 503;
      res.set_content("{\"status\":\"loading model\"}", "application/json");
    } else {
      res.set_content("{\"status\":\"ok\"}", "application/json");
    }
  });

  if (!sp.public_path.empty()) {
    if (!svr.set_mount_point(rp.empty() ? "/" : rp, sp.public_path)) {
      std::fprintf(stderr, "error: --public '%s' is not a folder\n", sp.public_path.c_str());
      return 2;
    }
  }
  const std::string home = HomePage(sp);
  svr.Get(rp + "/", [&home](const httplib::Request&, httplib::Response& res) { res.set_content(home, "text/html"); });

  // Replies the handlers did not write: unknown routes (404), bodies over --max-body-size (413),
  // requests cpp-httplib could not parse (400). JSON in the route's API shape.
  svr.set_error_handler(httplib::Server::HandlerWithResponse(
      [&sp](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    std::string message;
    if (res.status == 413) {
      message = "request body is larger than --max-body-size " + std::to_string(sp.max_body_size) + " bytes";
    } else if (res.status == 404) {
      message = "no route " + req.method + " " + req.path;
    } else {
      message = "malformed HTTP request (status " + std::to_string(res.status) + ")";
    }
    Send(ErrorReply(ApiOfPath(req.path), res.status, message), res);
    return httplib::Server::HandlerResponse::Handled;
  }));
  svr.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    Send(ErrorReply(ApiOfPath(req.path), 500, "internal error: " + what), res);
  });

  int port = sp.port;
  if (port == 0) {
    port = svr.bind_to_any_port(sp.host);
    if (port < 0) port = 0;
  } else if (!svr.bind_to_port(sp.host, port)) {
    port = 0;
  }
  if (port == 0) {
    std::fprintf(stderr, "error: cannot listen on %s:%d\n", sp.host.c_str(), sp.port);
    return 1;
  }
  sp.port = port;

  std::thread signals([&svr, &stop_signals] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    std::fprintf(stderr, "\ncaught signal %d, shutting down\n", sig);
    svr.stop();
  });
  std::printf("\nwhisper server listening at http://%s:%d\n\n", sp.host.c_str(), port);
  std::fflush(stdout);
  const bool ok = svr.listen_after_bind();
  if (!ok) {  // stopped before it started, or the listening socket failed
    std::fprintf(stderr, "error: server stopped listening\n");
  }
  // The signal thread may still wait: wake it so it can be joined.
  pthread_kill(signals.native_handle(), SIGTERM);
  signals.join();
  return 0;
}

}  // namespace
}  // namespace whisper::server

int main(int argc, char** argv) {
  // `bazel run` starts binaries in their runfiles tree; relative paths on the command line mean
  // the directory the user ran bazel from.
  if (const char* dir = std::getenv("BUILD_WORKING_DIRECTORY"); dir != nullptr && chdir(dir) != 0) {
    std::fprintf(stderr, "error: cannot change to BUILD_WORKING_DIRECTORY '%s'\n", dir);
    return 1;
  }
  return whisper::server::Run(argc, argv);
}
