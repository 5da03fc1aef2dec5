// The server's connections (http_server.h) on its real routes (routes.h), over loopback sockets:
// idle and half-sent requests cannot keep /health from answering, a request's head has a
// deadline, a Content-Length that is not a byte count is answered 400 at once and the connection
// closed. No model is loaded: these requests never reach a transcription.
#include "apps/server/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "apps/server/routes.h"
#include "gtest/gtest.h"

namespace whisper::server {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The routes of a server started with default flags (--parallel 1, --queue 16, --read-timeout 600;
// --max-body-size as given when not 0), served by an HttpServer on a free loopback port until
// destroyed.
class RunningServer {
 public:
  explicit RunningServer(ConnectionLimits limits = ConnectionLimits(), int keep_alive_s = 5,
                         size_t max_body_size = 0)
      : svr_(limits) {
    if (max_body_size > 0) rt_.params.max_body_size = max_body_size;
    InstallRoutes(svr_, rt_);
    svr_.set_keep_alive_timeout(keep_alive_s);
    port_ = svr_.Bind("127.0.0.1", 0);
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
  }
  ~RunningServer() {
    svr_.stop();
    thread_.join();
  }
  int port() const { return port_; }

 private:
  ServerRuntime rt_;
  HttpServer svr_;
  int port_ = -1;
  std::thread thread_;
};

// A connected loopback socket (closed by the destructor).
class Socket {
 public:
  explicit Socket(int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  }
  ~Socket() { close(fd_); }
  bool connected() const { return connected_; }
  bool Send(const std::string& s) { return send(fd_, s.data(), s.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(s.size()); }
  // Reads until the server closes the connection or timeout_s passes; true when it closed.
  bool ReadUntilClosed(double timeout_s, std::string* out) {
    const Clock::time_point t0 = Clock::now();
    char buf[4096];
    for (;;) {
      const double left = timeout_s - SecondsSince(t0);
      if (left <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left * 1000) + 1) <= 0) continue;
      const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) return true;
      out->append(buf, static_cast<size_t>(n));
    }
  }

 private:
  int fd_;
  bool connected_ = false;
};

const char kHealth[] = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";

// Before: cpp-httplib's pool of --parallel + --queue + 4 = 21 threads, each held up to the 600 s
// read timeout by a connection that sent half a request (or 5 s by one that sent nothing), so
// /health waited behind them. Now it is answered at once (milliseconds; 2 s is far above that
// under ASan on a busy machine, far below the 5 s and 600 s it waited).
TEST(HttpServerTest, IdleAndHalfSentConnectionsDoNotDelayHealth) {
  RunningServer server;
  std::vector<std::unique_ptr<Socket>> idle;
  for (int i = 0; i < 64; ++i) {
    idle.push_back(std::make_unique<Socket>(server.port()));
    ASSERT_TRUE(idle.back()->connected());
    if (i % 3 != 0) ASSERT_TRUE(idle.back()->Send("POST /inference HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // all accepted and waiting
  const Clock::time_point t0 = Clock::now();
  Socket health(server.port());
  ASSERT_TRUE(health.Send(kHealth));
  std::string reply;
  EXPECT_TRUE(health.ReadUntilClosed(2.0, &reply)) << SecondsSince(t0) << " s";
  EXPECT_EQ(reply.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << reply;
  EXPECT_NE(reply.find("{\"status\":\"ok\"}"), std::string::npos) << reply;
}

// A request whose line or headers stop arriving is answered 408 at the head deadline (here
// 0.5 s) and closed; before, the connection stayed for --read-timeout (600 s) per read.
TEST(HttpServerTest, HalfSentHeadIsAnswered408AtItsDeadline) {
  ConnectionLimits limits;
  limits.head_timeout_ms = 500;
  RunningServer server(limits);
  for (const std::string& partial : {std::string("GET /hea"), std::string("GET /health HTTP/1.1\r\nHost: x\r\n")}) {
    Socket s(server.port());
    ASSERT_TRUE(s.Send(partial));
    const Clock::time_point t0 = Clock::now();
    std::string reply;
    EXPECT_TRUE(s.ReadUntilClosed(10.0, &reply)) << partial;
    EXPECT_GE(SecondsSince(t0), 0.4) << partial;
    EXPECT_EQ(reply.rfind("HTTP/1.1 408 ", 0), 0u) << reply;
    EXPECT_NE(reply.find("within 500 ms of its first byte"), std::string::npos) << reply;
  }
}

// A connection that sends nothing is closed after the keep-alive timeout (here 1 s).
TEST(HttpServerTest, SilentConnectionIsClosedAfterTheKeepAliveTimeout) {
  RunningServer server(ConnectionLimits(), /*keep_alive_s=*/1);
  Socket s(server.port());
  const Clock::time_point t0 = Clock::now();
  std::string reply;
  EXPECT_TRUE(s.ReadUntilClosed(10.0, &reply));
  EXPECT_GE(SecondsSince(t0), 0.9);
  EXPECT_EQ(reply, "");
}

// Beyond max_threads connections wait for a thread, in order, and are then served.
TEST(HttpServerTest, ConnectionsBeyondTheThreadsWaitAndAreServed) {
  ConnectionLimits limits;
  limits.max_threads = 2;
  RunningServer server(limits, /*keep_alive_s=*/1);
  Socket silent1(server.port()), silent2(server.port());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const Clock::time_point t0 = Clock::now();
  Socket health(server.port());
  ASSERT_TRUE(health.Send(kHealth));
  std::string reply;
  EXPECT_TRUE(health.ReadUntilClosed(10.0, &reply));
  EXPECT_GE(SecondsSince(t0), 0.5);  // after a silent connection's 1 s keep-alive timeout
  EXPECT_EQ(reply.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << reply;
}

// RFC 9112 section 6.3: a Content-Length that is not a byte count is answered 400 and the
// connection closed. Before, "-5" read as 2^64 - 5 and the request waited for that many bytes.
TEST(HttpServerTest, ContentLengthThatIsNotAByteCountIs400AndCloses) {
  RunningServer server;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"Content-Length: -5\r\n", "header Content-Length '-5' is not a byte count"},
      {"Content-Length: +5\r\n", "'+5' is not a byte count"},
      {"Content-Length: 0x10\r\n", "'0x10' is not a byte count"},
      {"Content-Length: 18446744073709551621\r\n", "'18446744073709551621' is not a byte count"},
      {"Content-Length: 5\r\nContent-Length: 6\r\n", "given twice with different values ('5' and '6')"},
  };
  for (const auto& [header, message] : cases) {
    Socket s(server.port());
    ASSERT_TRUE(s.Send("POST /inference HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n" +
                       header + "\r\n"));
    std::string reply;
    EXPECT_TRUE(s.ReadUntilClosed(5.0, &reply)) << header;
    EXPECT_EQ(reply.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << reply;
    EXPECT_NE(reply.find("Connection: close\r\n"), std::string::npos) << reply;
    EXPECT_EQ(reply.find("Keep-Alive"), std::string::npos) << reply;
    EXPECT_NE(reply.find(message), std::string::npos) << reply;
  }
}

// The number of times `needle` occurs in `text`.
size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// A chunk of the chunked coding: hex size, CRLF, data, CRLF.
std::string Chunk(const std::string& data) {
  char size[32];
  std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
  return size + data + "\r\n";
}

// --max-body-size holds for a chunked body: the reply is 413 as soon as a chunk's size line takes
// the body past the limit (here 10000 bytes; the third 4096-byte chunk), and the connection
// closes. Before, cpp-httplib 0.11.4 read chunked bodies whole without a limit (a 400 MB upload
// grew the server by 0.8 GB), then waited for more: this connection got no reply at all.
TEST(HttpServerTest, ChunkedBodyOverTheLimitIs413AndCloses) {
  RunningServer server(ConnectionLimits(), 5, /*max_body_size=*/10000);
  Socket s(server.port());
  const std::string chunk = Chunk(std::string(4096, 'a'));
  ASSERT_TRUE(s.Send("POST /inference HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                     "Content-Type: multipart/form-data; boundary=b\r\n\r\n" +
                     chunk + chunk + chunk));  // no last chunk: the client is still sending
  std::string reply;
  EXPECT_TRUE(s.ReadUntilClosed(5.0, &reply));
  EXPECT_EQ(reply.rfind("HTTP/1.1 413 Payload Too Large\r\n", 0), 0u) << reply;
  EXPECT_NE(reply.find("Connection: close\r\n"), std::string::npos) << reply;
  EXPECT_NE(reply.find("larger than --max-body-size 10000 bytes"), std::string::npos) << reply;
}

// A chunked body within the limit is read to its end and the connection serves the next
// request: POST /load (403 without --models-dir, after reading the body), then GET /health.
TEST(HttpServerTest, ChunkedBodyWithinTheLimitKeepsTheConnection) {
  RunningServer server(ConnectionLimits(), 5, /*max_body_size=*/10000);
  Socket s(server.port());
  const std::string body = "--b\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nx.bin\r\n--b--\r\n";
  ASSERT_TRUE(s.Send("POST /load HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                     "Content-Type: multipart/form-data; boundary=b\r\n\r\n" +
                     std::string("A;name=value\r\n") + body.substr(0, 10) + "\r\n" +  // a chunk extension, upper-case hex
                     Chunk(body.substr(10)) + "0\r\n\r\n" + kHealth));
  std::string reply;
  EXPECT_TRUE(s.ReadUntilClosed(5.0, &reply));
  EXPECT_EQ(reply.rfind("HTTP/1.1 403 Forbidden\r\n", 0), 0u) << reply;
  EXPECT_NE(reply.find("HTTP/1.1 200 OK\r\n"), std::string::npos) << reply;
  EXPECT_NE(reply.find("{\"status\":\"ok\"}"), std::string::npos) << reply;
}

// A reply sent before the request's body was read closes the connection, so the body is never
// read as a next request. Before, each body below (a GET /health request) was answered 200 after
// the first reply: a request smuggled past whatever checked the first.
TEST(HttpServerTest, UnreadBodyIsNotReadAsANextRequest) {
  RunningServer server;
  const std::string inner = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string length = "Content-Length: " + std::to_string(inner.size()) + "\r\n\r\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      // cpp-httplib answers 400 for a multipart type without a boundary, before reading the body.
      {"POST /inference HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data\r\n", "HTTP/1.1 400 "},
      {"POST /load HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=\r\n", "HTTP/1.1 400 "},
      {"POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data\r\n",
       "HTTP/1.1 400 "},
      // A GET's body is never read.
      {"GET /health HTTP/1.1\r\nHost: x\r\n", "HTTP/1.1 200 OK\r\n"},
      {"GET /nowhere HTTP/1.1\r\nHost: x\r\n", "HTTP/1.1 404 "},
  };
  for (const auto& [head, status] : cases) {
    Socket s(server.port());
    ASSERT_TRUE(s.Send(head + length + inner));
    std::string reply;
    EXPECT_TRUE(s.ReadUntilClosed(5.0, &reply)) << head;
    EXPECT_EQ(reply.rfind(status, 0), 0u) << reply;
    EXPECT_EQ(Count(reply, "HTTP/1.1 "), 1u) << reply;
    EXPECT_NE(reply.find("Connection: close\r\n"), std::string::npos) << reply;
    EXPECT_EQ(reply.find("Keep-Alive"), std::string::npos) << reply;
    if (head.rfind("POST", 0) == 0) {
      EXPECT_NE(reply.find("has no boundary"), std::string::npos) << reply;
    }
  }
}

// A body read to its end keeps the connection: POST /load with its Content-Length body (403
// without --models-dir), then the next request. A POST with neither Content-Length nor
// Transfer-Encoding has no body (RFC 9112 section 6.3); before, cpp-httplib read one until the
// connection closed, with no limit, and never answered the request that followed.
TEST(HttpServerTest, BodyReadToItsEndKeepsTheConnection) {
  RunningServer server;
  const std::string body = "--b\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nx.bin\r\n--b--\r\n";
  for (const std::string& post :
       {"POST /load HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: " +
            std::to_string(body.size()) + "\r\n\r\n" + body,
        std::string("POST /load HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n\r\n")}) {
    Socket s(server.port());
    ASSERT_TRUE(s.Send(post + kHealth));
    std::string reply;
    EXPECT_TRUE(s.ReadUntilClosed(5.0, &reply)) << post;
    EXPECT_EQ(reply.rfind("HTTP/1.1 403 Forbidden\r\n", 0), 0u) << reply;
    EXPECT_NE(reply.find("HTTP/1.1 200 OK\r\n"), std::string::npos) << reply;
  }
}

}  // namespace
}  // namespace whisper::server
