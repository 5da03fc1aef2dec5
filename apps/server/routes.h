// The server's HTTP routes on a cpp-httplib Server (see main.cc for the list), separate from the
// process around them (flags, signals, the listening socket) so the fuzz target serves raw request
// bytes through exactly these handlers.
#ifndef GGML_WHISPER_APPS_SERVER_ROUTES_H_
#define GGML_WHISPER_APPS_SERVER_ROUTES_H_

#include <memory>
#include <mutex>
#include <string>

#include "httplib.h"
#include "apps/server/server_params.h"
#include "apps/server/state_pool.h"

namespace whisper::server {

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

// What the handlers share; must outlive the Server.
struct ServerRuntime {
  ServerParams params;  // decode.n_threads resolved (>= 1); models_dir a realpath or "" (/load off)
  whisper_ggml_decoding decoding = WHISPER_GGML_DECODING_OPENAI;
  ModelSlot model;      // set before the first request
  BatchOptions batch;   // the decoder batch of every model loaded (LoadRuntime; /load)
  std::mutex load_mu;   // one /load at a time
  bool log_requests = true;  // one stderr line per transcription request
};

// Configures `svr` (body limit, timeouts, default headers) and installs every route, the check of
// Content-Length before a body is read (400 and the connection closed when it is not a byte count)
// and the JSON error and exception handlers. Connection threads and the request head's deadline
// are HttpServer's (http_server.h); on a plain httplib::Server the routes work the same.
void InstallRoutes(httplib::Server& svr, ServerRuntime& rt);

}  // namespace whisper::server

#endif  // GGML_WHISPER_APPS_SERVER_ROUTES_H_
