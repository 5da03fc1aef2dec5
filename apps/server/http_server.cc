#include "apps/server/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

namespace whisper::server {

void ConnectionThreads::enqueue(std::function<void()> fn) {
  std::unique_lock<std::mutex> lock(mu_);
  if (running_ >= max_threads_) {
    waiting_.push_back(std::move(fn));
    return;
  }
  ++running_;
  lock.unlock();
  try {
    std::thread([this, fn]() mutable { Run(std::move(fn)); }).detach();
  } catch (const std::system_error&) {
    // No thread could be made (a process or memory limit): the task waits for a running thread,
    // or, with none running, runs here on the accepting thread rather than never.
    lock.lock();
    --running_;
    if (running_ > 0) {
      waiting_.push_back(std::move(fn));
      return;
    }
    lock.unlock();
    fn();
  }
}

void ConnectionThreads::Run(std::function<void()> fn) {
  for (;;) {
    fn();
    fn = nullptr;
    std::lock_guard<std::mutex> lock(mu_);
    if (!waiting_.empty()) {
      fn = std::move(waiting_.front());
      waiting_.pop_front();
      continue;
    }
    // The last use of `this`: shutdown() cannot return before this lock is released.
    if (--running_ == 0) finished_.notify_all();
    return;
  }
}

void ConnectionThreads::shutdown() {
  std::unique_lock<std::mutex> lock(mu_);
  finished_.wait(lock, [this] { return running_ == 0 && waiting_.empty(); });
}

namespace {

using Clock = std::chrono::steady_clock;

// A request's body as cpp-httplib 0.11.4 reads it, byte by byte as they are handed to it: a
// Content-Length body is counted; a chunked one (RFC 9112 section 7.1) is walked as cpp-httplib
// reads it (hex size, optional ";ext", CRLF, data, CRLF; "0" CRLF CRLF ends it, no trailers),
// counting its data bytes. Without either header the request has no body (RFC 9112 section 6.3;
// cpp-httplib read until the connection closed, without a limit). The connection may serve a
// next request only when cpp-httplib stopped reading exactly at the body's end (complete()).
class BodyTracker {
 public:
  enum class Framing { kUnknown, kNone, kLength, kChunked };

  // A new request: framing unknown until Start (the pre-routing handler).
  void Reset() { *this = BodyTracker(); }
  // `length`: Content-Length (kLength); `limit`: --max-body-size in bytes of body (data bytes
  // for chunked); `keep_alive`: false when the headers leave the framing doubtful (then the
  // connection closes after the response).
  void Start(Framing framing, uint64_t length, uint64_t limit, bool keep_alive) {
    if (framing_ != Framing::kUnknown || bytes_ != 0) keep_alive = false;  // read before its framing
    framing_ = framing;
    length_ = length;
    limit_ = limit;
    keep_alive_ = keep_alive;
    too_large_ = framing == Framing::kLength && length > limit;
  }
  Framing framing() const { return framing_; }
  // Whether the body passed `limit` (reads are then refused: cpp-httplib fails, the reply is 413).
  bool too_large() const { return too_large_; }
  bool complete() const {
    if (!keep_alive_ || error_) return false;
    switch (framing_) {
      case Framing::kNone: return bytes_ == 0;
      case Framing::kLength: return bytes_ == length_;
      case Framing::kChunked: return state_ == State::kDone;
      default: return false;
    }
  }
  // The next n bytes cpp-httplib reads; false when they take the body past the limit.
  bool Feed(const char* p, size_t n) {
    bytes_ += n;
    if (framing_ == Framing::kLength) {
      error_ = error_ || bytes_ > length_;
    } else if (framing_ == Framing::kChunked) {
      for (size_t i = 0; i < n && !error_ && !too_large_;) i += Step(p + i, n - i);
    } else {
      error_ = true;  // bytes of a body without framing (or before it was known)
    }
    return !too_large_;
  }

 private:
  enum class State { kSize, kExt, kSizeLf, kData, kDataCr, kDataLf, kLastCr, kLastLf, kDone };

  static int HexValue(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // Consumes bytes from p[0, n) (at least one) in the chunked coding's state machine.
  size_t Step(const char* p, size_t n) {
    if (state_ == State::kData) {
      const size_t take = static_cast<size_t>(std::min<uint64_t>(chunk_left_, n));
      chunk_left_ -= take;
      if (chunk_left_ == 0) state_ = State::kDataCr;
      return take;
    }
    const char c = p[0];
    switch (state_) {
      case State::kSize:
        if (HexValue(c) >= 0 && digits_ < 15) {
          chunk_left_ = chunk_left_ * 16 + static_cast<uint64_t>(HexValue(c));
          ++digits_;
        } else if (digits_ > 0 && (c == ';' || c == '\r')) {
          state_ = c == ';' ? State::kExt : State::kSizeLf;
        } else {
          error_ = true;
        }
        break;
      case State::kExt:
        if (c == '\r') state_ = State::kSizeLf;
        error_ = c == '\n';
        break;
      case State::kSizeLf:
        error_ = c != '\n';
        digits_ = 0;
        if (chunk_left_ == 0) {
          state_ = State::kLastCr;
        } else if (data_ + chunk_left_ > limit_) {
          too_large_ = true;  // announced before its bytes are read
        } else {
          data_ += chunk_left_;
          state_ = State::kData;
        }
        break;
      case State::kDataCr: error_ = c != '\r'; state_ = State::kDataLf; break;
      case State::kDataLf: error_ = c != '\n'; state_ = State::kSize; break;
      case State::kLastCr: error_ = c != '\r'; state_ = State::kLastLf; break;
      case State::kLastLf: error_ = c != '\n'; state_ = State::kDone; break;
      default: error_ = true;  // read past the end
    }
    return 1;
  }

  Framing framing_ = Framing::kUnknown;
  uint64_t length_ = 0, limit_ = 0;
  bool keep_alive_ = true;
  bool too_large_ = false;
  bool error_ = false;
  uint64_t bytes_ = 0;  // bytes read after the head
  uint64_t data_ = 0;   // chunked: data bytes announced so far
  State state_ = State::kSize;
  uint64_t chunk_left_ = 0;
  int digits_ = 0;
};

class ConnectionStream;

// The connection being served on this thread (HttpServer::process_and_close_socket).
struct ConnectionFlags {
  bool close_after_response = false;
  ConnectionStream* stream = nullptr;
  int head_timeout_ms = 0;
  uint64_t max_body_size = 0;
};
thread_local ConnectionFlags* t_connection = nullptr;

// poll() for `events` on `sock` for up to timeout_ms (retried on EINTR with the time left):
// > 0 ready, 0 timed out, < 0 error.
int PollFor(socket_t sock, short events, int64_t timeout_ms) {
  const Clock::time_point end = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    pollfd p{sock, events, 0};
    const int64_t left = std::max<int64_t>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count());
    const int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, INT32_MAX)));
    if (r < 0 && errno == EINTR) continue;
    return r;
  }
}

int64_t ToMs(time_t sec, time_t usec) { return static_cast<int64_t>(sec) * 1000 + usec / 1000; }

// A connection's socket as cpp-httplib's Stream, buffered as its SocketStream is (its line reader
// reads one byte at a time). While a request's head is being read (StartRequest until the blank
// line that ends its headers has been consumed), reads give up at the head's deadline.
class ConnectionStream : public httplib::Stream {
 public:
  // `stopping`: whether the server is stopping (then no new request is waited for).
  ConnectionStream(socket_t sock, int64_t read_timeout_ms, int64_t write_timeout_ms, std::function<bool()> stopping)
      : sock_(sock), read_timeout_ms_(read_timeout_ms), write_timeout_ms_(write_timeout_ms),
        stopping_(std::move(stopping)) {}

  // Waits up to timeout_ms for the first byte of a request, in slices of 100 ms.
  bool WaitForRequest(int64_t timeout_ms) {
    if (off_ < len_) return true;
    for (int64_t waited = 0; waited < timeout_ms && !stopping_(); waited += 100) {
      const int r = PollFor(sock_, POLLIN, std::min<int64_t>(100, timeout_ms - waited));
      if (r != 0) return r > 0;
    }
    return false;
  }

  void StartRequest(int64_t head_timeout_ms) {
    in_head_ = true;
    head_timed_out_ = false;
    tail_ = 0;
    head_deadline_ = Clock::now() + std::chrono::milliseconds(head_timeout_ms);
    wrote_ = false;
    body_.Reset();
  }
  // The request's head has been parsed: its body follows, framed as given.
  BodyTracker& StartBody() {
    in_head_ = false;
    return body_;
  }
  const BodyTracker& body() const { return body_; }
  bool head_timed_out() const { return head_timed_out_; }
  bool wrote() const { return wrote_; }

  // Waits up to the read timeout for data; while in a request's head, only until its deadline,
  // in slices of 100 ms, and not past a stop of the server.
  bool is_readable() const override {
    if (off_ < len_) return true;
    if (!in_head_) return PollFor(sock_, POLLIN, read_timeout_ms_) > 0;
    const Clock::time_point end = std::min(head_deadline_, Clock::now() + std::chrono::milliseconds(read_timeout_ms_));
    for (;;) {
      const int64_t left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
      if (left <= 0 || stopping_()) break;
      const int r = PollFor(sock_, POLLIN, std::min<int64_t>(left, 100));
      if (r != 0) return r > 0;
    }
    if (end == head_deadline_) head_timed_out_ = true;
    return false;
  }
  bool is_writable() const override { return PollFor(sock_, POLLOUT, write_timeout_ms_) > 0; }

  ssize_t read(char* ptr, size_t size) override {
    if (!in_head_ && body_.too_large()) return -1;
    if (!in_head_ && body_.framing() == BodyTracker::Framing::kNone) return 0;  // no body
    if (off_ >= len_) {
      if (!is_readable()) return -1;
      const ssize_t n = Recv(buf_.data(), buf_.size());
      if (n <= 0) return n;
      off_ = 0;
      len_ = static_cast<size_t>(n);
    }
    const size_t n = std::min(size, len_ - off_);
    std::memcpy(ptr, buf_.data() + off_, n);
    off_ += n;
    const size_t head = in_head_ ? Consumed(ptr, n) : 0;
    if (head < n && !body_.Feed(ptr + head, n - head)) return -1;  // past --max-body-size
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    size_t done = 0;
    while (done < size) {
      if (!is_writable()) return -1;
      const ssize_t n = send(sock_, ptr + done, size - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return -1;
      done += static_cast<size_t>(n);
      wrote_ = true;
    }
    return static_cast<ssize_t>(size);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { Address(true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { Address(false, ip, port); }
  socket_t socket() const override { return sock_; }

 private:
  ssize_t Recv(char* p, size_t n) const {
    for (;;) {
      const ssize_t r = recv(sock_, p, n, 0);
      if (r < 0 && errno == EINTR) continue;
      return r;
    }
  }

  // Follows the bytes handed to cpp-httplib until "\r\n\r\n", the end of the headers; the
  // number of p[0, n) that belong to the head.
  size_t Consumed(const char* p, size_t n) {
    size_t i = 0;
    while (i < n && in_head_) {
      tail_ = (tail_ << 8) | static_cast<uint8_t>(p[i++]);
      if (tail_ == 0x0d0a0d0au) in_head_ = false;
    }
    return i;
  }

  void Address(bool peer, std::string& ip, int& port) const {
    sockaddr_storage a{};
    socklen_t len = sizeof(a);
    const int r = peer ? getpeername(sock_, reinterpret_cast<sockaddr*>(&a), &len)
                       : getsockname(sock_, reinterpret_cast<sockaddr*>(&a), &len);
    char text[INET6_ADDRSTRLEN] = "";
    port = 0;
    if (r == 0 && a.ss_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(&a);
      inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
      port = ntohs(in->sin_port);
    } else if (r == 0 && a.ss_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&a);
      inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
      port = ntohs(in6->sin6_port);
    }
    ip = text;
  }

  const socket_t sock_;
  const int64_t read_timeout_ms_;
  const int64_t write_timeout_ms_;
  const std::function<bool()> stopping_;
  std::array<char, 4096> buf_;
  size_t off_ = 0;
  size_t len_ = 0;
  bool in_head_ = false;
  mutable bool head_timed_out_ = false;
  uint32_t tail_ = 0;
  Clock::time_point head_deadline_;
  bool wrote_ = false;
  BodyTracker body_;
};

// The reply to a request whose line did not arrive within the head timeout (cpp-httplib wrote
// nothing: it had no request to answer).
void WriteHeadTimeout(ConnectionStream& strm, int head_timeout_ms) {
  const std::string body = "{\"error\":\"the request line did not arrive within " +
                           std::to_string(head_timeout_ms) + " ms of its first byte\"}";
  const std::string head = "HTTP/1.1 408 Request Timeout\r\nServer: ggml_whisper\r\nConnection: close\r\n"
                           "Content-Type: application/json\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\n\r\n";
  strm.write((head + body).data(), head.size() + body.size());
}

// Closes after a response the client may still be sending a body to: stop writing, then read and
// drop what arrives for up to a second, so the client reads the response rather than a reset.
void LingeringClose(socket_t sock) {
  ::shutdown(sock, SHUT_WR);
  char buf[4096];
  const Clock::time_point end = Clock::now() + std::chrono::seconds(1);
  while (Clock::now() < end) {
    const int64_t left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
    if (PollFor(sock, POLLIN, left) <= 0) break;
    const ssize_t n = recv(sock, buf, sizeof(buf), 0);
    if (n <= 0 && !(n < 0 && errno == EINTR)) break;
  }
}

}  // namespace

HttpServer::HttpServer(ConnectionLimits limits) : limits_(limits) {
  const size_t n = limits_.max_threads;
  new_task_queue = [n] { return new ConnectionThreads(n); };
}

int HttpServer::Bind(const std::string& host, int port) {
  if (port == 0) {
    port = bind_to_any_port(host);
    if (port < 0) return 0;
  } else if (!bind_to_port(host, port)) {
    return 0;
  }
  ::listen(svr_sock_, SOMAXCONN);  // on a listening socket: only the backlog changes
  return port;
}

void HttpServer::CloseConnectionAfterResponse() {
  if (t_connection != nullptr) t_connection->close_after_response = true;
}

void HttpServer::StartRequestBody(const httplib::Request& req) {
  if (t_connection == nullptr || t_connection->stream == nullptr) return;
  // cpp-httplib 0.11.4's framing (detail::read_content): the first Transfer-Encoding header equal
  // to "chunked" (any case), else the first Content-Length (strtoull), else read to the end of
  // the connection (here: no body). Another Transfer-Encoding, or chunked beside a Content-Length
  // (RFC 9112 section 6.1), leaves the framing in doubt: the connection closes after the reply.
  using Framing = BodyTracker::Framing;
  const size_t n_te = req.get_header_value_count("Transfer-Encoding");
  const bool chunked = n_te > 0 && strcasecmp(req.get_header_value("Transfer-Encoding").c_str(), "chunked") == 0;
  const bool has_length = req.has_header("Content-Length");
  const uint64_t length = has_length ? std::strtoull(req.get_header_value("Content-Length").c_str(), nullptr, 10) : 0;
  const Framing framing = chunked ? Framing::kChunked : has_length ? Framing::kLength : Framing::kNone;
  const bool keep_alive = n_te == 0 || (chunked && n_te == 1 && !has_length);
  t_connection->stream->StartBody().Start(framing, length, t_connection->max_body_size, keep_alive);
}

bool HttpServer::RequestBodyWasRead() {
  if (t_connection == nullptr || t_connection->stream == nullptr) return true;
  return t_connection->stream->body().complete();
}

bool HttpServer::RequestBodyTooLarge() {
  return t_connection != nullptr && t_connection->stream != nullptr && t_connection->stream->body().too_large();
}

std::optional<int> HttpServer::HeadTimeoutExceeded() {
  if (t_connection == nullptr || t_connection->stream == nullptr || !t_connection->stream->head_timed_out()) {
    return std::nullopt;
  }
  return t_connection->head_timeout_ms;
}

bool HttpServer::process_and_close_socket(socket_t sock) {
  const auto stopping = [this] { return svr_sock_ == INVALID_SOCKET; };
  ConnectionStream strm(sock, ToMs(read_timeout_sec_, read_timeout_usec_), ToMs(write_timeout_sec_, write_timeout_usec_),
                        stopping);
  ConnectionFlags flags;
  flags.head_timeout_ms = limits_.head_timeout_ms;
  flags.max_body_size = payload_max_length_;
  t_connection = &flags;
  bool ret = false;
  for (size_t left = keep_alive_max_count_; left > 0 && !stopping(); --left) {
    if (!strm.WaitForRequest(static_cast<int64_t>(keep_alive_timeout_sec_) * 1000)) break;
    strm.StartRequest(limits_.head_timeout_ms);
    flags.close_after_response = false;
    flags.stream = &strm;
    bool connection_closed = false;
    ret = process_request(strm, /*close_connection=*/left == 1, connection_closed, nullptr);
    if (!ret && strm.head_timed_out() && !strm.wrote()) WriteHeadTimeout(strm, limits_.head_timeout_ms);
    if (flags.close_after_response) LingeringClose(sock);
    if (!ret || connection_closed || flags.close_after_response || strm.head_timed_out()) break;
  }
  t_connection = nullptr;
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ret;
}

}  // namespace whisper::server
