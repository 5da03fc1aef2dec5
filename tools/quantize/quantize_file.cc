#include "tools/quantize/quantize_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ggml_whisper::quantize {
namespace {

absl::Status ErrnoStatus(int err, const std::string& what) {
  const std::string msg = absl::StrCat(what, ": ", strerror(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR: return absl::NotFoundError(msg);
    case EACCES:
    case EPERM:
    case EROFS: return absl::PermissionDeniedError(msg);
    case ENOSPC:
    case EIO:
    case EDQUOT: return absl::DataLossError(msg);
    default: return absl::InternalError(msg);
  }
}

// The input file, mapped read-only for the duration of the run.
class MappedInput {
 public:
  ~MappedInput() {
    if (data_ != nullptr) munmap(data_, size_);
    if (fd_ >= 0) close(fd_);
  }
  absl::Status Open(const std::string& path) {
    fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return ErrnoStatus(errno, absl::StrCat("cannot open input '", path, "'"));
    struct stat st;
    if (fstat(fd_, &st) != 0) return ErrnoStatus(errno, absl::StrCat("cannot stat '", path, "'"));
    if (!S_ISREG(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat("input '", path, "' is not a regular file"));
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ == 0) return absl::OkStatus();  // parsed as empty: "truncated ... magic"
    void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
    if (p == MAP_FAILED) return ErrnoStatus(errno, absl::StrCat("cannot map '", path, "'"));
    data_ = p;
    return absl::OkStatus();
  }
  const uint8_t* data() const { return static_cast<const uint8_t*>(data_); }
  size_t size() const { return size_; }

 private:
  int fd_ = -1;
  void* data_ = nullptr;
  size_t size_ = 0;
};

// `<out>.tmp`, removed by the destructor unless Commit() renamed it to `out`.
class TempOutput {
 public:
  TempOutput(std::string out) : out_(std::move(out)), tmp_(out_ + ".tmp") {}
  ~TempOutput() {
    if (file_ != nullptr) fclose(file_);
    if (!committed_ && created_) unlink(tmp_.c_str());
  }
  absl::Status Open() {
    file_ = fopen(tmp_.c_str(), "wb");
    if (file_ == nullptr) {
      return ErrnoStatus(errno, absl::StrCat("cannot create output '", tmp_, "'"));
    }
    created_ = true;
    return absl::OkStatus();
  }
  absl::Status Write(const void* data, size_t n) {
    if (n == 0 || fwrite(data, 1, n, file_) == n) return absl::OkStatus();
    return ErrnoStatus(errno, absl::StrCat("cannot write output '", tmp_, "'"));
  }
  absl::Status Commit() {
    const bool flushed = fflush(file_) == 0 && fsync(fileno(file_)) == 0;
    const int flush_err = errno;
    const bool closed = fclose(file_) == 0;
    file_ = nullptr;
    if (!flushed || !closed) {
      return ErrnoStatus(flushed ? errno : flush_err,
                         absl::StrCat("cannot write output '", tmp_, "'"));
    }
    if (rename(tmp_.c_str(), out_.c_str()) != 0) {
      return ErrnoStatus(errno, absl::StrCat("cannot rename '", tmp_, "' to '", out_, "'"));
    }
    committed_ = true;
    return absl::OkStatus();
  }

 private:
  std::string out_;
  std::string tmp_;
  FILE* file_ = nullptr;
  bool created_ = false;
  bool committed_ = false;
};

// True when `a` and `b` name the same existing file.
bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

}  // namespace

absl::StatusOr<QuantizeSummary> QuantizeModelFile(const std::string& in, const std::string& out,
                                                  const QuantTarget& target,
                                                  const TensorCallback& on_tensor) {
  const std::string tmp = out + ".tmp";
  if (in == out || in == tmp || SameFile(in, out) || SameFile(in, tmp)) {
    return absl::InvalidArgumentError(absl::StrCat("input '", in, "' and output '", out,
                                                   "' are the same file: write to another path"));
  }
  MappedInput input;
  absl::Status st = input.Open(in);
  if (!st.ok()) return st;
  TempOutput output(out);
  st = output.Open();
  if (!st.ok()) return st;
  absl::StatusOr<QuantizeSummary> s = QuantizeModelImage(
      input.data(), input.size(), in, target,
      [&output](const void* data, size_t n) { return output.Write(data, n); }, on_tensor);
  if (!s.ok()) return s.status();
  st = output.Commit();
  if (!st.ok()) return st;
  return s;
}

}  // namespace ggml_whisper::quantize
