// Weight conversion shared by the quantizer (//tools/quantize, offline) and the loader
// (WhisperModel::Load with a weight type: faster-whisper's compute_type at load): which tensors
// are converted, and the row conversion itself. One rule and one set of kernels for both, so a
// model converted at load holds exactly the bytes the quantizer writes.
//
// The rule is whisper.cpp's (examples/quantize/quantize.cpp, examples/common-ggml.cpp
// ggml_common_quantize_0): every 2-D tensor record except encoder.conv1.bias,
// encoder.conv2.bias and the two positional embeddings (its to_skip list), i.e. the attention
// and MLP matrices and decoder.token_embedding.weight.
#ifndef GGML_WHISPER_WHISPER_WEIGHT_CONVERT_H_
#define GGML_WHISPER_WHISPER_WEIGHT_CONVERT_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ggml/types.h"

namespace whisper {

// whisper.cpp's selection rule above: true when a tensor record with this name and n_dims is
// quantized (n_dims == 2 and the name is not in the skip list).
bool ShouldQuantize(absl::string_view name, int n_dims);

// Whether `type` is a weight type the matrix kernels multiply (kernels/matmul.h,
// quant_matmul.h): F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0. This runtime has no BF16 type.
bool IsWeightType(ggml_type type);

// Whether a row of `from` can be converted to `to`: both weight types (IsWeightType), any pair.
bool CanConvertRow(ggml_type from, ggml_type to);

// Quantizes one row of `k` floats (k % 32 == 0) to `type` (Q4_0, Q4_1, Q5_0, Q5_1 or Q8_0) with
// the scalar reference quantizer (kernels/quant_ref.h, bit-exact with ggml's
// quantize_row_*_ref); `y` receives ggml_row_size(type, k) bytes. InvalidArgument for another
// type.
absl::Status QuantizeRowRef(ggml_type type, const float* x, void* y, int64_t k);

// Widens one row of `k` elements of weight type `type` at `src` (any alignment) to floats:
// F32 copied, F16 exact, quantized types dequantized (kernels/quant_ref.h dequantize_row_*;
// k % 32 == 0). InvalidArgument for a type that is not a weight type.
absl::Status RowToF32(ggml_type type, const void* src, int64_t k, float* dst);

// Converts one row of `k` elements (ne0) from `from` at `src` to `to` at `dst`
// (ggml_row_size(to, k) bytes), through floats in `scratch` (k floats): widened by RowToF32,
// then stored as F32, rounded to F16 (nearest even, ggml_fp32_to_fp16) or quantized
// (QuantizeRowRef's result; Q8_0 and the F16 conversions use the SIMD kernels of
// kernels/quant_ops.h and vec.h, bit-identical to the scalar references on every target). A quantized `from` equal to `to` is copied (never re-quantized).
// InvalidArgument when !CanConvertRow(from, to) or a quantized side's k is not a multiple of 32.
absl::Status ConvertRow(ggml_type from, const void* src, ggml_type to, void* dst, int64_t k, float* scratch);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_WEIGHT_CONVERT_H_
