// Whole-file reading and atomic writing for the converter, with absl::Status errors that name
// the path and the OS reason.
#ifndef GGML_WHISPER_TOOLS_CONVERT_FILE_UTIL_H_
#define GGML_WHISPER_TOOLS_CONVERT_FILE_UTIL_H_

#include <stdint.h>
#include <stdio.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ggml_whisper::convert {

// The bytes of the file at `path`. Errors: NotFound / PermissionDenied / InvalidArgument (from
// errno, e.g. a directory) when it cannot be opened; DataLoss when a read fails.
absl::StatusOr<std::vector<uint8_t>> ReadFileBytes(const std::string& path);

// Writes a file through `<path>.partial`, renamed to `path` only by Commit(), so an interrupted
// or failed conversion never leaves a truncated file under the final name. The destructor
// removes an uncommitted partial file.
class AtomicFileWriter {
 public:
  // Opens `<path>.partial` for writing. Errors: as fopen's errno (e.g. NotFound for a missing
  // directory), naming the path.
  static absl::StatusOr<AtomicFileWriter> Open(const std::string& path);

  AtomicFileWriter(AtomicFileWriter&& other) noexcept;
  AtomicFileWriter& operator=(AtomicFileWriter&&) = delete;
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  ~AtomicFileWriter();

  // Appends `n` bytes. Errors: DataLoss naming the path (disk full, I/O error).
  absl::Status Write(const void* data, size_t n);
  // Bytes written so far.
  uint64_t offset() const { return offset_; }
  // Flushes, closes and renames to the final path. Errors: DataLoss on flush/close/rename.
  absl::Status Commit();

 private:
  AtomicFileWriter(std::string path, FILE* file) : path_(std::move(path)), file_(file) {}

  std::string path_;
  FILE* file_ = nullptr;
  uint64_t offset_ = 0;
};

}  // namespace ggml_whisper::convert

#endif  // GGML_WHISPER_TOOLS_CONVERT_FILE_UTIL_H_
