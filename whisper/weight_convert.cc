#include "whisper/weight_convert.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "ggml/fp16.h"
#include "kernels/quant_ops.h"
#include "kernels/quant_ref.h"
#include "kernels/quant_types.h"
#include "kernels/vec.h"

namespace whisper {
namespace {

using ggml_cpu::ConvertF16ToF32;
using ggml_cpu::ConvertF32ToF16;

// whisper.cpp quantize.cpp's to_skip list (the regexes there match these whole names).
constexpr const char* kSkipped[] = {
    "encoder.conv1.bias",
    "encoder.conv2.bias",
    "encoder.positional_embedding",
    "decoder.positional_embedding",
};

}  // namespace

bool ShouldQuantize(absl::string_view name, int n_dims) {
  if (n_dims != 2) return false;
  for (const char* skip : kSkipped) {
    if (name == skip) return false;
  }
  return true;
}

bool IsWeightType(ggml_type type) {
  switch (type) {
    case GGML_TYPE_F32:
    case GGML_TYPE_F16:
    case GGML_TYPE_Q4_0:
    case GGML_TYPE_Q4_1:
    case GGML_TYPE_Q5_0:
    case GGML_TYPE_Q5_1:
    case GGML_TYPE_Q8_0:
      return true;
    default:
      return false;
  }
}

bool CanConvertRow(ggml_type from, ggml_type to) { return IsWeightType(from) && IsWeightType(to); }

absl::Status QuantizeRowRef(ggml_type type, const float* x, void* y, int64_t k) {
  using namespace ggml_cpu;  // NOLINT: the five block types and their quantizers
  switch (type) {
    case GGML_TYPE_Q4_0: quantize_row_q4_0_ref(x, static_cast<block_q4_0*>(y), k); break;
    case GGML_TYPE_Q4_1: quantize_row_q4_1_ref(x, static_cast<block_q4_1*>(y), k); break;
    case GGML_TYPE_Q5_0: quantize_row_q5_0_ref(x, static_cast<block_q5_0*>(y), k); break;
    case GGML_TYPE_Q5_1: quantize_row_q5_1_ref(x, static_cast<block_q5_1*>(y), k); break;
    case GGML_TYPE_Q8_0: quantize_row_q8_0_ref(x, static_cast<block_q8_0*>(y), k); break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("QuantizeRowRef: ", ggml_type_name(type), " is not a weight quantization type"));
  }
  return absl::OkStatus();
}

absl::Status RowToF32(ggml_type type, const void* src, int64_t k, float* dst) {
  using namespace ggml_cpu;  // NOLINT: the block types and their dequantizers
  const auto* b = static_cast<const uint8_t*>(src);
  if (ggml_is_quantized(type) && !ggml_row_size_ok(type, k)) {
    return absl::InvalidArgumentError(
        absl::StrCat("RowToF32: a ", ggml_type_name(type), " row of ", k, " elements is not whole blocks"));
  }
  switch (type) {
    case GGML_TYPE_F32:
      memcpy(dst, b, static_cast<size_t>(k) * sizeof(float));
      break;
    case GGML_TYPE_F16:
      if (reinterpret_cast<uintptr_t>(b) % alignof(ggml_fp16_t) == 0) {
        ConvertF16ToF32(static_cast<size_t>(k), reinterpret_cast<const ggml_fp16_t*>(b), dst);  // SIMD, exact
        break;
      }
      for (int64_t i = 0; i < k; ++i) {
        ggml_fp16_t h;
        memcpy(&h, b + 2 * i, 2);
        dst[i] = ggml_fp16_to_fp32(h);
      }
      break;
    // The block structs hold only uint8_t and fp16 bits (alignment 1 or 2): the quantized rows of
    // a model buffer or file are at least 2-byte aligned (record sizes are even).
    case GGML_TYPE_Q4_0: dequantize_row_q4_0(reinterpret_cast<const block_q4_0*>(b), dst, k); break;
    case GGML_TYPE_Q4_1: dequantize_row_q4_1(reinterpret_cast<const block_q4_1*>(b), dst, k); break;
    case GGML_TYPE_Q5_0: dequantize_row_q5_0(reinterpret_cast<const block_q5_0*>(b), dst, k); break;
    case GGML_TYPE_Q5_1: dequantize_row_q5_1(reinterpret_cast<const block_q5_1*>(b), dst, k); break;
    case GGML_TYPE_Q8_0: dequantize_row_q8_0(reinterpret_cast<const block_q8_0*>(b), dst, k); break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("RowToF32: ", ggml_type_name(type), " is not a weight type"));
  }
  return absl::OkStatus();
}

absl::Status ConvertRow(ggml_type from, const void* src, ggml_type to, void* dst, int64_t k, float* scratch) {
  if (!CanConvertRow(from, to)) {
    return absl::InvalidArgumentError(absl::StrCat("ConvertRow: cannot convert ", ggml_type_name(from), " to ",
                                                   ggml_type_name(to), " (weight types: f32, f16, q4_0, q4_1, "
                                                   "q5_0, q5_1, q8_0)"));
  }
  if (ggml_is_quantized(to) && !ggml_row_size_ok(to, k)) {
    return absl::InvalidArgumentError(
        absl::StrCat("ConvertRow: a row of ", k, " elements is not whole ", ggml_type_name(to), " blocks"));
  }
  if (from == to) {
    memcpy(dst, src, ggml_row_size(to, k));
    return absl::OkStatus();
  }
  absl::Status st = RowToF32(from, src, k, scratch);
  if (!st.ok()) return st;
  if (to == GGML_TYPE_F32) {
    memcpy(dst, scratch, static_cast<size_t>(k) * sizeof(float));
  } else if (to == GGML_TYPE_F16 && reinterpret_cast<uintptr_t>(dst) % alignof(ggml_fp16_t) == 0) {
    ConvertF32ToF16(static_cast<size_t>(k), scratch, static_cast<ggml_fp16_t*>(dst));  // SIMD, bit-exact
  } else if (to == GGML_TYPE_F16) {
    auto* out = static_cast<uint8_t*>(dst);
    for (int64_t i = 0; i < k; ++i) {
      const ggml_fp16_t h = ggml_fp32_to_fp16(scratch[i]);
      memcpy(out + 2 * i, &h, 2);
    }
  } else if (to == GGML_TYPE_Q8_0) {
    // The SIMD quantizer, bit-identical to quantize_row_q8_0_ref on every target (quant_ops.h;
    // tiny_en_quantize_test checks the quantizer's files against QuantizeRowRef).
    ggml_cpu::quantize_row_q8_0(scratch, static_cast<ggml_cpu::block_q8_0*>(dst), k);
  } else {
    return QuantizeRowRef(to, scratch, dst, k);
  }
  return absl::OkStatus();
}

}  // namespace whisper
