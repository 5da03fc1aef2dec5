// Fuzz target: raw bytes as one HTTP request to the server's real routes (routes.h) through
// cpp-httplib's request parser (Server::process_request on an in-memory stream): request line,
// headers, chunked and multipart bodies, form fields, audio decoding and, for an input that
// carries decodable audio, a transcription on a small synthetic model (whisper/synthetic_model.h).
// --models-dir is a temporary folder holding that model as m.bin: /load of "m.bin" loads it again,
// any other name is refused by the folder rules (models_dir.h) or fails to load.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "httplib.h"
#include "whisper/fuzz_model_image.h"
#include "apps/server/log_capture.h"
#include "apps/server/models_dir.h"
#include "apps/server/routes.h"
#include "apps/server/state_pool.h"

namespace {

class MemoryStream : public httplib::Stream {
 public:
  MemoryStream(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool is_readable() const override { return true; }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, size_ - pos_);
    std::memcpy(ptr, data_ + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char*, size_t size) override { return static_cast<ssize_t>(size); }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 50000;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 8080;
  }
  socket_t socket() const override { return INVALID_SOCKET; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

class FuzzServer : public httplib::Server {
 public:
  void Serve(httplib::Stream& s) {
    bool connection_closed = false;
    process_request(s, /*close_connection=*/true, connection_closed, nullptr);
  }
};

FuzzServer* g_server = nullptr;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  using namespace whisper::server;
  InstallLogCapture(/*quiet=*/true);
  const std::vector<uint8_t>& model = whisper::FuzzBaseModel(64, 1);
  static char dir[] = "/tmp/server_fuzzer_models_XXXXXX";
  if (mkdtemp(dir) == nullptr) return 1;
  static const std::string path = std::string(dir) + "/m.bin";
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || write(fd, model.data(), model.size()) != static_cast<ssize_t>(model.size())) return 1;
  close(fd);
  std::atexit([] {
    unlink(path.c_str());
    rmdir(dir);
  });
  static ServerRuntime rt;
  absl::StatusOr<std::string> real_dir = ModelsDirRealPath(dir);
  if (!real_dir.ok()) return 1;
  rt.params.models_dir = *real_dir;
  rt.params.max_body_size = 1 << 20;
  rt.params.parallel = 1;
  rt.params.queue = 0;
  rt.params.decode_args = {"-bs", "1", "-bo", "2", "-t", "1", "-nf", "-m", path};
  rt.params.decode.n_threads = 1;
  rt.log_requests = false;
  absl::StatusOr<std::unique_ptr<LoadedModel>> m = LoadedModel::Load(path, 1, 0, WHISPER_GGML_DECODING_OPENAI, 0);
  if (!m.ok()) {
    std::fprintf(stderr, "server_fuzzer: %s\n", std::string(m.status().message()).c_str());
    return 1;
  }
  rt.model.Set(std::shared_ptr<LoadedModel>(std::move(*m)));
  g_server = new FuzzServer();
  InstallRoutes(*g_server, rt);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  MemoryStream s(data, size);
  g_server->Serve(s);
  return 0;
}
