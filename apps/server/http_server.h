// The server's connection handling on cpp-httplib 0.11.4 (Debian's libcpp-httplib, a compiled
// library: only its virtual hooks can be changed), so that idle or slow clients cannot keep other
// clients, /health included, from being answered.
//
// cpp-httplib serves every connection on a thread of a fixed pool and waits up to the read
// timeout (whisper-server's 600 s) for each read of a request's line and headers: a few
// connections that send nothing or half a request held every thread, and every route stopped
// answering. Here:
//   - each connection runs on a thread of its own (ConnectionThreads, up to max_threads at once;
//     connections beyond wait, in order). The transcriptions they run are still limited by the
//     model's --parallel states and --queue (state_pool.h), which answer 503 beyond;
//   - a request's line and headers must arrive within head_timeout_ms of its first byte
//     (answered 408 and closed otherwise); between requests a connection may stay idle for the
//     keep-alive timeout (cpp-httplib's set_keep_alive_timeout, 5 s by default), then it is closed;
//   - the body's reads keep the read timeout (--read-timeout), writes the write timeout.
#ifndef GGML_WHISPER_APPS_SERVER_HTTP_SERVER_H_
#define GGML_WHISPER_APPS_SERVER_HTTP_SERVER_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "httplib.h"

namespace whisper::server {

struct ConnectionLimits {
  // Milliseconds from the first byte of a request to the end of its headers (the blank line).
  // nginx's client_header_timeout is 60 s; a request head is at most a few KB.
  int head_timeout_ms = 30000;
  // Connections served at once, each on its own thread (its stack is reserved, not resident,
  // until used); more wait for one to close. Below the default limit of 1024 open files.
  size_t max_threads = 512;
};

// A cpp-httplib task queue that runs each task (one connection) on a new detached thread, at
// most max_threads at once; tasks beyond wait in order and run on the next thread that finishes
// its own. shutdown() returns when every task, running or waiting, has finished.
class ConnectionThreads : public httplib::TaskQueue {
 public:
  explicit ConnectionThreads(size_t max_threads) : max_threads_(max_threads < 1 ? 1 : max_threads) {}
  ConnectionThreads(const ConnectionThreads&) = delete;
  ConnectionThreads& operator=(const ConnectionThreads&) = delete;
  ~ConnectionThreads() override { shutdown(); }

  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

 private:
  void Run(std::function<void()> fn);

  const size_t max_threads_;
  std::mutex mu_;
  std::condition_variable finished_;
  size_t running_ = 0;  // threads started and not yet finished
  std::deque<std::function<void()>> waiting_;
};

// httplib::Server with the connection rules above: listen and route as usual (InstallRoutes).
class HttpServer : public httplib::Server {
 public:
  explicit HttpServer(ConnectionLimits limits = ConnectionLimits());

  // Binds to host:port (port 0: any free port) and listens with a backlog of SOMAXCONN
  // (cpp-httplib 0.11 listens with 5, so a burst of connections waited for SYN retransmits, 1 s
  // and more, before this server had even seen them). The port bound, or 0 when none could be.
  int Bind(const std::string& host, int port);

  // For a handler (pre-routing, route or error handler) running on a connection of an
  // HttpServer: the connection is closed once this request's response is written (the request's
  // body cannot be framed, so what follows it cannot be read as a next request). The response
  // carries "Connection: close" only if the handler sets it. No effect on other servers.
  static void CloseConnectionAfterResponse();
  // For the pre-routing handler, first (before cpp-httplib reads a body): the request's body is
  // framed by its headers as cpp-httplib reads it (Transfer-Encoding: chunked, else
  // Content-Length, else no body: cpp-httplib 0.11.4 read a request without either until the
  // connection closed). From here the connection's reads follow the body: a Content-Length over
  // the server's payload_max_length, or chunks whose data passes it (as soon as a chunk's size
  // line announces it; cpp-httplib 0.11.4 read chunked bodies whole, without a limit), fail the
  // read at once, so the request fails without the rest being read (RequestBodyTooLarge).
  static void StartRequestBody(const httplib::Request& req);
  // For the post-routing handler: whether this request's body was read exactly to its end, so
  // the bytes that follow are the next request's. False when the reply came before the body was
  // read (a route that reads none, cpp-httplib's 400 for a multipart type without a boundary, a
  // GET with a body, a body over the limit), when the framing was in doubt, or when
  // StartRequestBody was not called (cpp-httplib answered before routing): the connection must
  // then close after the response, or the body would be read as a next request (request
  // smuggling). True on servers that are not HttpServer.
  static bool RequestBodyWasRead();
  // For the error handler: whether the body passed payload_max_length (cpp-httplib answers 400
  // for a failed chunked read; the reply is 413).
  static bool RequestBodyTooLarge();
  // For the error handler: head_timeout_ms when the request being answered ran out of it before
  // its headers ended (cpp-httplib then answers 400 as for a malformed head), else nullopt.
  static std::optional<int> HeadTimeoutExceeded();

 private:
  // cpp-httplib's per-connection hook (a private virtual of httplib::Server, called on the task
  // queue's thread): keep-alive loop over process_request with the rules above.
  bool process_and_close_socket(socket_t sock) override;

  ConnectionLimits limits_;
};

}  // namespace whisper::server

#endif  // GGML_WHISPER_APPS_SERVER_HTTP_SERVER_H_
