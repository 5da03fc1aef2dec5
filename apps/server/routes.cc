#include "apps/server/routes.h"

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include "apps/server/http_server.h"
#include "apps/server/inference.h"
#include "apps/server/models_dir.h"
#include "apps/server/public_dir.h"

namespace whisper::server {
namespace {

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
  // RFC 7234 section 5.5: warn-code 299 (persistent), the agent, the text as a quoted-string. The
  // texts are the server's own sentences around a known language code; anything outside printable
  // ASCII, '"' and '\' would still be replaced, so a header cannot be split.
  for (const std::string& w : r.warnings) {
    std::string text;
    for (char c : w) text += (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') ? c : '?';
    res.set_header("Warning", "299 ggml_whisper \"" + text + "\"");
  }
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

// POST /load: the `model` field names a file in --models-dir (models_dir.h). The reply never
// carries what the loader read from the file (its messages quote magic numbers and header
// fields): the client gets the rule that failed, the server's log gets the loader's message.
void Load(ServerRuntime& rt, const Form& form, httplib::Response& res) {
  const Api api = Api::kWhisperServer;
  if (rt.params.models_dir.empty()) {
    return Send(ErrorReply(api, 403,
                           "POST /load is disabled: the server was started without --models-dir; start it with "
                           "--models-dir DIR to let clients load the model files in DIR by name"),
                res);
  }
  const auto it = form.find("model");
  if (it == form.end()) return Send(ErrorReply(api, 400, "no 'model' field in the request"), res);
  if (form.count("model") > 1) return Send(ErrorReply(api, 400, "field 'model' is given more than once"), res);
  const std::string& name = it->second.content;
  absl::StatusOr<std::string> path = ResolveModelName(rt.params.models_dir, name);
  if (!path.ok()) {
    return Send(ErrorReply(api, 400, std::string(path.status().message()) + " (the previous model is still loaded)"),
                res);
  }
  std::lock_guard<std::mutex> lock(rt.load_mu);
  absl::StatusOr<std::unique_ptr<LoadedModel>> m =
      LoadedModel::Load(*path, rt.params.parallel, rt.params.queue, rt.decoding, rt.params.decode.n_threads,
                        rt.params.decode.dtw, rt.params.decode.flash_attn,
                        rt.params.decode.compute_type, rt.batch, Int8AttentionMode(rt.params.decode));
  if (!m.ok()) {
    std::fprintf(stderr, "POST /load '%s' failed: %s\n", path->c_str(), std::string(m.status().message()).c_str());
    return Send(ErrorReply(api, 400,
                           "field 'model' '" + QuotedName(name) +
                               "': the file in --models-dir cannot be loaded as a Whisper ggml model or CTranslate2 "
                               "model folder (the server's log has the loader's message; the previous model is "
                               "still loaded)"),
                res);
  }
  rt.model.Set(std::shared_ptr<LoadedModel>(std::move(*m)));
  std::fprintf(stderr, "loaded model '%s'\n", path->c_str());
  res.set_content("Load was successful!", "application/text");  // whisper-server's reply
}

// The request's Content-Length headers checked before its body is read: each must be a decimal
// byte count (RFC 9112 section 6.3: otherwise the body's framing is unknown; the server must answer
// 400 and close the connection), and repeated ones must agree. cpp-httplib 0.11 reads the value
// with strtoull, so "-5" meant 2^64 - 5 bytes and the request waited for them. The message, or
// nullopt when fine (no header, or a count; a count over --max-body-size is cpp-httplib's 413).
std::optional<std::string> BadContentLength(const httplib::Request& req) {
  const size_t n = req.get_header_value_count("Content-Length");
  std::string first;
  for (size_t i = 0; i < n; ++i) {
    const std::string v = req.get_header_value("Content-Length", i);
    bool digits = !v.empty() && v.size() <= 19;  // < 10^19 fits in uint64_t
    for (char c : v) digits = digits && c >= '0' && c <= '9';
    if (!digits) {
      std::string shown;
      for (char c : v.substr(0, 40)) shown += (c >= 0x20 && c < 0x7f) ? c : '?';
      return "header Content-Length '" + shown + (v.size() > 40 ? "...'" : "'") +
             " is not a byte count: expected 1 to 19 decimal digits";
    }
    if (i > 0 && v != first) {
      return "header Content-Length is given twice with different values ('" + first + "' and '" + v + "')";
    }
    first = v;
  }
  return std::nullopt;
}

// For a 400 cpp-httplib wrote before reading the body: the message when the request's Content-Type is
// multipart/form-data without a boundary (cpp-httplib 0.11.4's parse_multipart_boundary: the text
// after "boundary=", quotes removed, must not be empty), else nullopt.
std::optional<std::string> MissingBoundary(const httplib::Request& req) {
  if (!req.is_multipart_form_data()) return std::nullopt;
  const std::string type = req.get_header_value("Content-Type");
  const size_t at = type.find("boundary=");
  std::string boundary = at == std::string::npos ? "" : type.substr(at + 9);
  if (boundary.size() >= 2 && boundary.front() == '"' && boundary.back() == '"') {
    boundary = boundary.substr(1, boundary.size() - 2);
  }
  if (!boundary.empty()) return std::nullopt;
  std::string shown;
  for (char c : type.substr(0, 80)) shown += (c >= 0x20 && c < 0x7f) ? c : '?';
  return "header Content-Type '" + shown + "' has no boundary: expected multipart/form-data; boundary=TEXT";
}

// The handlers around the routes: Content-Length checked before a body is read, --public's files, "Keep-Alive"
// dropped from a response that closes, JSON errors for what no route answered, exceptions as 500.
void InstallHttpHandlers(httplib::Server& svr, const ServerRuntime& rt) {
  svr.set_pre_routing_handler([&rt](const httplib::Request& req, httplib::Response& res) {
    HttpServer::StartRequestBody(req);  // reads follow the body's framing and --max-body-size
    if (const std::optional<std::string> bad = BadContentLength(req)) {
      Send(ErrorReply(ApiOfPath(req.path), 400, *bad), res);
      res.set_header("Connection", "close");
      HttpServer::CloseConnectionAfterResponse();
      return httplib::Server::HandlerResponse::Handled;
    }
    // --public's files before the routes, as cpp-httplib's mount point (public_dir.h).
    const std::string& root = rt.params.public_path;
    if (root.empty() || (req.method != "GET" && req.method != "HEAD")) return httplib::Server::HandlerResponse::Unhandled;
    const std::string& rp = rt.params.request_path;
    std::optional<PublicFile> file = ReadPublicFile(root, rp.empty() ? "/" : rp, req.path);
    if (!file) return httplib::Server::HandlerResponse::Unhandled;
    if (file->status != 200) {
      std::fprintf(stderr, "refused: %s\n", file->body.c_str());
      Send(ErrorReply(ApiOfPath(req.path), file->status, file->body), res);
    } else {
      res.set_content(std::move(file->body), file->content_type.c_str());
    }
    return httplib::Server::HandlerResponse::Handled;
  });

  // A reply sent before the request's body was read to its end (an error before the body, a
  // route that reads none, a body over --max-body-size) closes the connection: what is left of
  // the body must not be read as a next request. cpp-httplib adds "Keep-Alive" to every response
  // not closing on its own account; one that closes says only "Connection: close".
  svr.set_post_routing_handler([](const httplib::Request&, httplib::Response& res) {
    if (!HttpServer::RequestBodyWasRead()) {
      if (res.get_header_value("Connection") != "close") res.set_header("Connection", "close");
      HttpServer::CloseConnectionAfterResponse();
    }
    if (res.get_header_value("Connection") == "close") res.headers.erase("Keep-Alive");
  });

  // Replies the handlers did not write: unknown routes (404), bodies over --max-body-size (413),
  // requests cpp-httplib could not parse (400). JSON in the route's API shape.
  svr.set_error_handler(httplib::Server::HandlerWithResponse(
      [&rt](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        std::string message;
        if (const std::optional<int> ms = HttpServer::HeadTimeoutExceeded(); ms && res.status == 400) {
          res.status = 408;
          message = "the request's headers did not end within " + std::to_string(*ms) + " ms of its first byte";
        } else if (res.status == 413 || HttpServer::RequestBodyTooLarge()) {
          res.status = 413;
          message = "request body is larger than --max-body-size " + std::to_string(rt.params.max_body_size) + " bytes";
        } else if (const std::optional<std::string> no_boundary = MissingBoundary(req);
                   res.status == 400 && no_boundary) {
          message = *no_boundary;
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
}

}  // namespace

void InstallRoutes(httplib::Server& svr, ServerRuntime& rt) {
  const ServerParams& sp = rt.params;
  // Connection threads and the request head's deadline: HttpServer (http_server.h).
  svr.set_payload_max_length(sp.max_body_size);
  svr.set_read_timeout(sp.read_timeout_s, 0);
  svr.set_write_timeout(sp.write_timeout_s, 0);
  svr.set_default_headers({{"Server", "ggml_whisper"},
                           {"Access-Control-Allow-Origin", "*"},
                           {"Access-Control-Allow-Headers", "content-type, authorization"},
                           {"Access-Control-Expose-Headers", "Warning"}});

  auto transcribe = [&rt](Api api) {
    return [&rt, api](const httplib::Request& req, httplib::Response& res) {
      const auto t0 = std::chrono::steady_clock::now();
      const std::shared_ptr<LoadedModel> model = rt.model.Get();
      const Reply reply =
          HandleTranscription(api, ToForm(req), rt.params.decode_args, *model, rt.params.max_audio_seconds);
      Send(reply, res);
      if (rt.log_requests) {
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        std::fprintf(stderr, "%s %s %d %.0f ms%s%s\n", req.method.c_str(), req.path.c_str(), reply.status, ms,
                     reply.status >= 400 ? " " : "", reply.status >= 400 ? reply.body.c_str() : "");
        for (const std::string& w : reply.warnings) std::fprintf(stderr, "  warning: %s\n", w.c_str());
      }
    };
  };
  const std::string& rp = sp.request_path;
  svr.Post(rp + sp.inference_path, transcribe(Api::kWhisperServer));
  svr.Post(rp + "/v1/audio/transcriptions", transcribe(Api::kOpenAiTranscription));
  svr.Post(rp + "/v1/audio/translations", transcribe(Api::kOpenAiTranslation));
  svr.Options(rp + sp.inference_path, [](const httplib::Request&, httplib::Response&) {});

  svr.Post(rp + "/load", [&rt](const httplib::Request& req, httplib::Response& res) { Load(rt, ToForm(req), res); });

  svr.Get(rp + "/health", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{\"status\":\"ok\"}", "application/json");  // the model is loaded before listening
  });

  svr.Get(rp + "/", [&rt](const httplib::Request&, httplib::Response& res) {
    res.set_content(HomePage(rt.params), "text/html");
  });

  InstallHttpHandlers(svr, rt);
}

}  // namespace whisper::server
