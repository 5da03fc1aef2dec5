// Reading one float32 array from a NumPy .npz archive, e.g. OpenAI Whisper's
// whisper/assets/mel_filters.npz (key "mel_80": float32 [80 x 201], stored deflated).
//
// An .npz is a zip archive (PKWARE APPNOTE.TXT: end-of-central-directory record, central
// directory, local file headers) with one `<key>.npy` member per array. A .npy member is the
// NumPy format 1.0/2.0/3.0 (numpy/lib/format.py): magic "\x93NUMPY", major, minor, a header
// length (uint16 for 1.0, uint32 for 2.0/3.0), a Python-dict header giving 'descr',
// 'fortran_order' and 'shape', then the raw array data.
#ifndef GGML_WHISPER_TOOLS_CONVERT_NPZ_H_
#define GGML_WHISPER_TOOLS_CONVERT_NPZ_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ggml_whisper::convert {

// A C-ordered (row-major) float32 array.
struct NpyArrayF32 {
  std::vector<int64_t> shape;  // NumPy order, outermost first: mel_80 is {80, 201}
  std::vector<float> data;     // product(shape) values, last dimension contiguous
};

// The uncompressed bytes of member `name` of the zip archive image `zip` (`source` names it in
// errors). Members stored (method 0) or deflated (method 8) are supported, and the CRC-32 is
// verified. Errors: NotFound (listing the members) when there is no such member;
// DataLoss for a truncated or corrupt archive or a CRC mismatch; Unimplemented for other
// compression methods, encryption and ZIP64 sizes.
absl::StatusOr<std::vector<uint8_t>> ReadZipMember(const std::vector<uint8_t>& zip,
                                                   absl::string_view name,
                                                   absl::string_view source);

// Parses a .npy image holding little-endian float32 ('<f4') in C order. Errors: InvalidArgument
// (naming `source` and the field) for a bad magic or version, an unparsable header, another
// dtype, fortran_order True, or a data size that disagrees with the shape.
absl::StatusOr<NpyArrayF32> ParseNpyF32(const std::vector<uint8_t>& npy, absl::string_view source);

// Reads `<key>.npy` from the .npz file at `path` (ReadZipMember, then ParseNpyF32), with
// errors naming `path:key`.
absl::StatusOr<NpyArrayF32> ReadNpzF32(const std::string& path, absl::string_view key);

}  // namespace ggml_whisper::convert

#endif  // GGML_WHISPER_TOOLS_CONVERT_NPZ_H_
