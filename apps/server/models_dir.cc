#include "apps/server/models_dir.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace whisper::server {
namespace {

constexpr size_t kMaxName = NAME_MAX;  // 255 on Linux: the longest file name a folder holds
constexpr size_t kShownBytes = 64;

absl::Status Refuse(const std::string& name, const std::string& rule) {
  return absl::InvalidArgumentError(absl::StrCat("field 'model' '", QuotedName(name), "' ", rule));
}

// realpath(3) into a std::string; errno is set on failure.
bool RealPath(const std::string& path, std::string* out) {
  std::unique_ptr<char, decltype(&free)> p(realpath(path.c_str(), nullptr), &free);
  if (p == nullptr) return false;
  *out = p.get();
  return true;
}

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// The files Ct2FolderToGgmlImage (tools/convert/ct2_folder.h) reads from a CTranslate2 folder.
constexpr const char* kCt2Files[] = {"model.bin", "vocabulary.json", "vocabulary.txt", "config.json",
                                     "preprocessor_config.json"};

// A folder of --models-dir named by `name` (realpath `real`, inside it) as a CTranslate2 model
// folder: not the models folder itself, and each file the converter reads that exists resolves
// inside the models folder (`prefix`: its real path and '/') and is a regular file. Whether it
// holds a model is the loader's to say. `real`, or the refusal.
absl::StatusOr<std::string> CheckCt2Folder(const std::string& models_dir_real, const std::string& prefix,
                                           const std::string& name, const std::string& real) {
  if (real == models_dir_real) {
    return Refuse(name, "names the server's --models-dir itself: expected a model file or a CTranslate2 model "
                        "folder in it");
  }
  for (const char* file : kCt2Files) {
    std::string target;
    if (!RealPath(real + "/" + file, &target)) {
      if (errno == ENOENT) continue;
      return Refuse(name, absl::StrCat("is a folder whose ", file, " cannot be resolved: ", std::strerror(errno)));
    }
    if (target.compare(0, prefix.size(), prefix) != 0) {
      return Refuse(name, absl::StrCat("is a folder whose ", file,
                                       " is a symbolic link that leads outside the server's --models-dir"));
    }
    struct stat st {};
    if (stat(target.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return Refuse(name, absl::StrCat("is a folder whose ", file, " is not a regular file"));
    }
  }
  return real;
}

}  // namespace

std::string QuotedName(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size() && i < kShownBytes; ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c == 0x7f || c == '\\') {
      absl::StrAppendFormat(&out, "\\x%02x", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  if (name.size() > kShownBytes) out += "...";
  return out;
}

absl::StatusOr<std::string> ModelsDirRealPath(const std::string& dir) {
  if (dir.empty()) return absl::InvalidArgumentError("--models-dir: expected a folder, got ''");
  std::string real;
  if (!RealPath(dir, &real)) {
    return absl::InvalidArgumentError(absl::StrCat("--models-dir '", dir, "': ", std::strerror(errno)));
  }
  struct stat st {};
  if (stat(real.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat("--models-dir '", dir, "' is not a folder"));
  }
  return real;
}

absl::StatusOr<std::string> ResolveModelName(const std::string& models_dir_real, const std::string& name) {
  if (name.empty()) {
    return absl::InvalidArgumentError("field 'model' is empty: expected the name of a model file in the server's "
                                      "--models-dir");
  }
  if (name.size() > kMaxName) {
    return Refuse(name, absl::StrCat("is ", name.size(), " bytes long: expected a file name of at most ", kMaxName,
                                     " bytes in the server's --models-dir"));
  }
  for (size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c == 0x7f) {
      return Refuse(name, absl::StrFormat("has the control byte 0x%02x at offset %d: expected a plain file name "
                                          "in the server's --models-dir",
                                          c, i));
    }
  }
  if (name.find('/') != std::string::npos) {
    return Refuse(name, "contains '/': expected a plain file name in the server's --models-dir (no folder, no "
                        "absolute path)");
  }
  if (name == "." || name == "..") {
    return Refuse(name, "names a folder: expected a plain file name in the server's --models-dir");
  }
  std::string real;
  if (!RealPath(models_dir_real + "/" + name, &real)) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return Refuse(name, "is not a file in the server's --models-dir");
    }
    return Refuse(name, absl::StrCat("cannot be resolved in the server's --models-dir: ", std::strerror(errno)));
  }
  // The root folder's realpath is "/", whose children start with "/" alone.
  const std::string prefix = models_dir_real == "/" ? "/" : models_dir_real + "/";
  if (real != models_dir_real && real.compare(0, prefix.size(), prefix) != 0) {
    return Refuse(name, "is a symbolic link that leads outside the server's --models-dir");
  }
  struct stat st {};
  if (stat(real.c_str(), &st) != 0) {
    return Refuse(name, absl::StrCat("cannot be read: ", std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode)) return CheckCt2Folder(models_dir_real, prefix, name, real);
  if (!S_ISREG(st.st_mode)) {
    return Refuse(name, absl::StrCat("is ", KindOf(st.st_mode),
                                     ": expected a regular model file or a CTranslate2 model folder"));
  }
  // Readable by this process? (O_NONBLOCK: a FIFO swapped in since stat does not block the open.)
  const int fd = open(real.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Refuse(name, absl::StrCat("cannot be opened: ", std::strerror(errno)));
  close(fd);
  return real;
}

}  // namespace whisper::server
