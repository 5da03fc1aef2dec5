// File-level quantization: maps the input model read-only, quantizes it with QuantizeModelImage
// (quantize_lib.h) into `<out>.tmp`, and renames that to `out` only when everything was written,
// so a failed run never leaves a partial model under either name.
#ifndef GGML_WHISPER_TOOLS_QUANTIZE_QUANTIZE_FILE_H_
#define GGML_WHISPER_TOOLS_QUANTIZE_QUANTIZE_FILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "tools/quantize/quantize_lib.h"

namespace ggml_whisper::quantize {

// Quantizes the whisper.cpp model file `in` to `target`, writing `out`. `on_tensor` (may be
// empty) is called after each tensor is written. Errors, each naming the path:
//   - InvalidArgument when `in` and `out` (or `out`.tmp) are the same file (same path, or the
//     same device and inode), or `in` is not a regular file;
//   - NotFound / PermissionDenied / Internal when `in` cannot be opened or mapped (errno text);
//   - the parse and validation errors of QuantizeModelImage (truncated field, "no tensors", ...);
//   - NotFound / PermissionDenied / DataLoss when `out`.tmp cannot be created or written, or the
//     rename to `out` fails (errno text).
// On error neither `out` (if it did not exist) nor `out`.tmp is left behind; an existing `out`
// is replaced only on success.
absl::StatusOr<QuantizeSummary> QuantizeModelFile(const std::string& in, const std::string& out,
                                                  const QuantTarget& target,
                                                  const TensorCallback& on_tensor = nullptr);

}  // namespace ggml_whisper::quantize

#endif  // GGML_WHISPER_TOOLS_QUANTIZE_QUANTIZE_FILE_H_
