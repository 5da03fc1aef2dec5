// Bounds-checked little-endian reads from an in-memory file image, for the converter's parsers
// (CTranslate2 model.bin, zip/npy, ggml). Every read that would run past the end returns
// DataLoss naming the source, the field and the offset, instead of reading out of bounds.
#ifndef GGML_WHISPER_TOOLS_CONVERT_BYTE_CURSOR_H_
#define GGML_WHISPER_TOOLS_CONVERT_BYTE_CURSOR_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ggml_whisper::convert {

class ByteCursor {
 public:
  // `source` names the image in errors (a path). The image must outlive the cursor.
  ByteCursor(const uint8_t* data, size_t size, absl::string_view source)
      : data_(data), size_(size), source_(source) {}

  size_t offset() const { return offset_; }
  size_t remaining() const { return size_ - offset_; }
  const std::string& source() const { return source_; }

  // Moves to absolute offset `pos` (<= size). OutOfRange naming `field` otherwise.
  absl::Status Seek(size_t pos, absl::string_view field) {
    if (pos > size_) {
      return absl::OutOfRangeError(absl::StrCat(source_, ": ", field, " at offset ", pos,
                                                " is past the end (", size_, " bytes)"));
    }
    offset_ = pos;
    return absl::OkStatus();
  }

  // The next `n` bytes, advancing past them.
  absl::StatusOr<const uint8_t*> Bytes(size_t n, absl::string_view field) {
    if (n > remaining()) {
      return absl::DataLossError(absl::StrCat(source_, ": truncated: ", field, " needs ", n,
                                              " bytes at offset ", offset_, ", ", remaining(),
                                              " left"));
    }
    const uint8_t* p = data_ + offset_;
    offset_ += n;
    return p;
  }

  // One little-endian integer of type T (uint8_t ... int64_t), advancing past it.
  template <typename T>
  absl::StatusOr<T> Read(absl::string_view field) {
    static_assert(std::is_integral<T>::value, "integers only");
    absl::StatusOr<const uint8_t*> p = Bytes(sizeof(T), field);
    if (!p.ok()) return p.status();
    T v;
    memcpy(&v, *p, sizeof(T));  // the build targets little-endian x86-64 / AArch64
    return v;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t offset_ = 0;
  std::string source_;
};

}  // namespace ggml_whisper::convert

#endif  // GGML_WHISPER_TOOLS_CONVERT_BYTE_CURSOR_H_
