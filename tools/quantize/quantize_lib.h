// Quantization of a whisper.cpp legacy ggml model file (whisper.cpp examples/quantize/quantize.cpp
// and examples/common-ggml.cpp `ggml_common_quantize_0`), on an in-memory file image.
//
// What is written, in the input's order:
//   - magic, hparams, mel filters and vocabulary byte for byte, except the ftype hparam, which
//     becomes GGML_QNT_VERSION (2) * 1000 + the target ggml_ftype (e.g. 2008 for q5_0);
//   - every tensor record with its n_dims, name and ne unchanged and:
//       * 2-D tensors (n_dims == 2) other than encoder.conv1.bias, encoder.conv2.bias and the two
//         positional embeddings (whisper.cpp's skip list) -> the target type, row by row with the
//         scalar reference quantizers (kernels/quant_ref.h, bit-exact with ggml's
//         quantize_row_*_ref). F32 rows are quantized as they are; F16 rows are widened to f32
//         first (exact). These are the attention/MLP matrices and decoder.token_embedding.weight.
//       * conv-stem kernels (3-D) stay F16. From an F32 (ftype 0) source they are rounded to F16
//         (nearest even), because whisper.cpp's loader expects F16 conv kernels in every
//         quantized file; whisper.cpp's quantize copies them as F32 and its output then fails to
//         load.
//       * everything else (biases, LayerNorm, positional embeddings) is copied byte for byte.
//
// The input must be an F32 or F16 model (ftype 0 or 1) with every tensor present
// (whisper/model_file.h checks); quantizing an already quantized file is refused.
#ifndef GGML_WHISPER_TOOLS_QUANTIZE_QUANTIZE_LIB_H_
#define GGML_WHISPER_TOOLS_QUANTIZE_QUANTIZE_LIB_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ggml/types.h"
#include "whisper/weight_convert.h"

namespace ggml_whisper::quantize {

inline constexpr int32_t kQntVersion = 2;  // GGML_QNT_VERSION (ggml.h)
// Byte offset of the ftype hparam: after the uint32 magic and the 10 int32 hparams before it.
inline constexpr size_t kFtypeOffset = 4 + 10 * 4;

// A quantization target: the ggml_ftype stored in the header (modulo 1000) and the ggml_type the
// quantized tensors get.
struct QuantTarget {
  int32_t ftype = 0;  // ggml_ftype: 2 q4_0, 3 q4_1, 7 q8_0, 8 q5_0, 9 q5_1
  ggml_type type = GGML_TYPE_F32;
  const char* name = "";  // "q4_0", ...
};

// Parses the TYPE argument of whisper.cpp's quantize: a name ("q4_0", "q4_1", "q5_0", "q5_1",
// "q8_0"; case-insensitive) or the ggml_ftype number ("2", "3", "8", "9", "7"). Errors:
// InvalidArgument naming `arg` and listing the valid names and numbers (the k-quants 10..14 and
// the float ftypes 0, 1 are not quantization targets here).
absl::StatusOr<QuantTarget> ParseQuantTarget(absl::string_view arg);

// whisper.cpp's selection rule and the reference row quantizer live in the library
// (whisper/weight_convert.h), shared with the loader's compute_type conversion: one rule.
using whisper::QuantizeRowRef;
using whisper::ShouldQuantize;

// One tensor as processed. Sizes in bytes of tensor data (record headers excluded).
struct TensorReport {
  std::string name;
  int n_dims = 0;
  int64_t ne[4] = {1, 1, 1, 1};  // ggml order, ne0 = row length
  ggml_type type_in = GGML_TYPE_F32;
  ggml_type type_out = GGML_TYPE_F32;
  size_t bytes_in = 0;
  size_t bytes_out = 0;
  bool quantized = false;  // selected by ShouldQuantize
};

struct QuantizeSummary {
  int32_t ftype_in = 0;         // stored value of the input (0 or 1; qntvr 0)
  int32_t ftype_out = 0;        // stored value written: kQntVersion * 1000 + target ftype
  size_t header_bytes = 0;      // magic through vocabulary (tiny.en: 586,235)
  size_t tensor_bytes_in = 0;   // sum of TensorReport::bytes_in (tiny.en F16: 77,110,272)
  size_t tensor_bytes_out = 0;  // sum of TensorReport::bytes_out
  size_t file_bytes_in = 0;
  size_t file_bytes_out = 0;
  int n_quantized = 0;
  std::vector<TensorReport> tensors;  // in file order
};

// Receives the output file's bytes in order. An error stops the quantization and is returned.
using ByteSink = std::function<absl::Status(const void* data, size_t n)>;
// Called after each tensor is written (e.g. to print it); may be empty.
using TensorCallback = std::function<void(const TensorReport&)>;

// Quantizes the model file image `data` (`size` bytes, named `file` in errors) to `target`,
// streaming the output to `sink` (one tensor row at a time; memory: two rows). Errors:
//   - those of ParseModelFileHeader / ParseTensorRecords (whisper/model_file.h): DataLoss
//     "truncated" naming the field and offset, InvalidArgument for a bad magic/hparam/record, and
//     "no tensors: ..." for a header-only file;
//   - InvalidArgument when the input ftype is not f32 or f16, when a selected tensor is not F32
//     or F16, or when its ne0 is not a multiple of 32 (the block size);
//   - the sink's error.
absl::StatusOr<QuantizeSummary> QuantizeModelImage(const uint8_t* data, size_t size,
                                                   absl::string_view file,
                                                   const QuantTarget& target, const ByteSink& sink,
                                                   const TensorCallback& on_tensor = nullptr);

// One line per tensor in the manner of whisper.cpp's quantize, sizes in MiB:
//   "  decoder.token_embedding.weight - [  384, 51864,     1], type =    f16 ->   q5_0, size =
//    39.837 MB ->  13.694 MB"
std::string FormatTensorReport(const TensorReport& t);
// The totals: tensor data before and after (MiB and bytes), the file sizes, the ftype written.
std::string FormatSummary(const QuantizeSummary& s, const QuantTarget& target);

}  // namespace ggml_whisper::quantize

#endif  // GGML_WHISPER_TOOLS_QUANTIZE_QUANTIZE_LIB_H_
