#include "tools/convert/file_util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace ggml_whisper::convert {

absl::StatusOr<std::vector<uint8_t>> ReadFileBytes(const std::string& path) {
  FILE* f = fopen(path.c_str(), "rb");
  if (f == nullptr) {
    const int err = errno;
    return absl::ErrnoToStatus(err, absl::StrCat("cannot open ", path));
  }
  std::vector<uint8_t> bytes;
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) bytes.insert(bytes.end(), buf, buf + n);
  const bool failed = ferror(f) != 0;
  fclose(f);
  if (failed) {
    // fread on a directory fails with EISDIR on Linux.
    return absl::DataLossError(absl::StrCat("read error in ", path, " after ", bytes.size(),
                                            " bytes (is it a regular file?)"));
  }
  return bytes;
}

absl::StatusOr<AtomicFileWriter> AtomicFileWriter::Open(const std::string& path) {
  const std::string partial = path + ".partial";
  FILE* f = fopen(partial.c_str(), "wb");
  if (f == nullptr) {
    const int err = errno;
    return absl::ErrnoToStatus(err, absl::StrCat("cannot create ", partial));
  }
  return AtomicFileWriter(path, f);
}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter&& other) noexcept
    : path_(std::move(other.path_)), file_(other.file_), offset_(other.offset_) {
  other.file_ = nullptr;
}

AtomicFileWriter::~AtomicFileWriter() {
  if (file_ != nullptr) {
    fclose(file_);
    remove((path_ + ".partial").c_str());
  }
}

absl::Status AtomicFileWriter::Write(const void* data, size_t n) {
  if (file_ == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(path_, ": write after Commit"));
  }
  if (n > 0 && fwrite(data, 1, n, file_) != n) {
    const int err = errno;
    return absl::DataLossError(absl::StrCat("write of ", n, " bytes at offset ", offset_, " to ",
                                            path_, ".partial failed: ", strerror(err)));
  }
  offset_ += n;
  return absl::OkStatus();
}

absl::Status AtomicFileWriter::Commit() {
  if (file_ == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(path_, ": Commit called twice"));
  }
  const std::string partial = path_ + ".partial";
  const bool flush_failed = fflush(file_) != 0 || ferror(file_) != 0;
  const bool close_failed = fclose(file_) != 0;
  file_ = nullptr;
  if (flush_failed || close_failed) {
    const int err = errno;
    remove(partial.c_str());
    return absl::DataLossError(absl::StrCat("closing ", partial, " failed: ", strerror(err)));
  }
  if (rename(partial.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    remove(partial.c_str());
    return absl::DataLossError(
        absl::StrCat("renaming ", partial, " to ", path_, " failed: ", strerror(err)));
  }
  return absl::OkStatus();
}

}  // namespace ggml_whisper::convert
