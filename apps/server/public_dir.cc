#include "apps/server/public_dir.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace whisper::server {
namespace {

// cpp-httplib 0.11.4's find_content_type table (the common entries).
std::string ContentTypeOf(const std::string& path) {
  const size_t dot = path.find_last_of("./");
  if (dot == std::string::npos || path[dot] != '.') return "application/octet-stream";
  const std::string ext = absl::AsciiStrToLower(path.substr(dot + 1));
  static const std::pair<const char*, const char*> kTypes[] = {
      {"css", "text/css"},          {"csv", "text/csv"},          {"htm", "text/html"},
      {"html", "text/html"},        {"js", "text/javascript"},    {"mjs", "text/javascript"},
      {"txt", "text/plain"},        {"vtt", "text/vtt"},          {"srt", "text/plain"},
      {"gif", "image/gif"},         {"png", "image/png"},         {"svg", "image/svg+xml"},
      {"webp", "image/webp"},       {"ico", "image/x-icon"},      {"jpg", "image/jpeg"},
      {"jpeg", "image/jpeg"},       {"mp3", "audio/mp3"},         {"wav", "audio/wave"},
      {"weba", "audio/webm"},       {"webm", "video/webm"},       {"mp4", "video/mp4"},
      {"json", "application/json"}, {"pdf", "application/pdf"},   {"xml", "application/xml"},
      {"wasm", "application/wasm"}, {"woff", "font/woff"},        {"woff2", "font/woff2"},
  };
  for (const auto& [e, type] : kTypes) {
    if (ext == e) return type;
  }
  return "application/octet-stream";
}

bool HasDotDotSegment(const std::string& path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (path.compare(start, end - start, "..") == 0) return true;
    start = end + 1;
  }
  return false;
}

// Closes a file descriptor when it goes out of scope.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

absl::StatusOr<std::string> PublicDirRealPath(const std::string& dir) {
  if (dir.empty()) return absl::InvalidArgumentError("--public '' is not a folder: expected a folder of static files");
  std::unique_ptr<char, decltype(&free)> p(realpath(dir.c_str(), nullptr), &free);
  if (p == nullptr) return absl::InvalidArgumentError(absl::StrCat("--public '", dir, "': ", std::strerror(errno)));
  struct stat st {};
  if (stat(p.get(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat("--public '", dir, "' is not a folder"));
  }
  return std::string(p.get());
}

std::optional<PublicFile> ReadPublicFile(const std::string& root_real, const std::string& mount,
                                         const std::string& request_path) {
  if (request_path.compare(0, mount.size(), mount) != 0) return std::nullopt;
  // The mount point ends at a segment's end: "/static" covers "/static" and "/static/...", never
  // "/staticindex.html" (cpp-httplib's prefix test served that as "/index.html").
  const bool at_boundary = mount.empty() || mount.back() == '/' || request_path.size() == mount.size() ||
                           request_path[mount.size()] == '/';
  if (!at_boundary) return std::nullopt;
  std::string sub = "/" + request_path.substr(mount.size());
  if (sub.find('\0') != std::string::npos || HasDotDotSegment(sub)) return std::nullopt;
  std::string path = root_real + sub;
  if (path.back() == '/') path += "index.html";
  const Fd f{open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  struct stat st {};
  if (f.fd < 0 || fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  // The file opened, wherever the links on the way led.
  char real[PATH_MAX + 1];
  const std::string proc = "/proc/self/fd/" + std::to_string(f.fd);
  const ssize_t n = readlink(proc.c_str(), real, PATH_MAX);
  const std::string prefix = root_real == "/" ? "/" : root_real + "/";
  PublicFile out;
  if (n <= 0 || std::string(real, static_cast<size_t>(n)).compare(0, prefix.size(), prefix) != 0) {
    out.status = 403;
    out.body = "GET " + request_path + ": the path leads outside the server's --public folder";
    return out;
  }
  out.body.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < out.body.size()) {
    const ssize_t r = read(f.fd, out.body.data() + got, out.body.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  out.body.resize(got);
  out.content_type = ContentTypeOf(path);
  return out;
}

}  // namespace whisper::server
