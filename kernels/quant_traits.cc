#include "kernels/quant_traits.h"

#include "kernels/quant_ops.h"
#include "kernels/quant_ref.h"
#include "kernels/quant_types.h"

namespace ggml_cpu {
namespace {

static_assert(GGML_QK == kQK, "ggml/types.h and kernels/quant_types.h disagree on block size");

// Adapters from the typed kernels to the type-erased signatures.
template <class Block, void (*kFn)(const Block*, float*, int64_t)>
void ToFloat(const void* x, float* y, int64_t k) {
  kFn(static_cast<const Block*>(x), y, k);
}

template <class Block, void (*kFn)(const float*, Block*, int64_t)>
void FromFloat(const float* x, void* y, int64_t k) {
  kFn(x, static_cast<Block*>(y), k);
}

template <class BlockX, class BlockY,
          void (*kFn)(int64_t, int64_t, const BlockX*, size_t, const BlockY*, float*)>
void VecDot(int64_t n, int64_t nrows, const void* x, size_t x_nb1, const void* y, float* s) {
  kFn(n, nrows, static_cast<const BlockX*>(x), x_nb1, static_cast<const BlockY*>(y), s);
}

template <class BlockX, class BlockY,
          void (*kFn)(int64_t, int64_t, const BlockX*, size_t, const BlockY*, size_t, int64_t, float*, size_t)>
void VecDotCols(int64_t n, int64_t nrows, const void* x, size_t x_nb1, const void* y, size_t y_stride,
                int64_t ncols, float* s, size_t lds) {
  kFn(n, nrows, static_cast<const BlockX*>(x), x_nb1, static_cast<const BlockY*>(y), y_stride, ncols, s, lds);
}

constexpr QuantFromFloatFn kQ8_0 = FromFloat<block_q8_0, quantize_row_q8_0>;
constexpr QuantFromFloatFn kQ8_1 = FromFloat<block_q8_1, quantize_row_q8_1>;

constexpr QuantTypeTraits kTraits[] = {
    {GGML_TYPE_Q4_0, kQK, sizeof(block_q4_0), GGML_TYPE_Q8_0,
     ToFloat<block_q4_0, dequantize_row_q4_0>, FromFloat<block_q4_0, quantize_row_q4_0_ref>, kQ8_0,
     VecDot<block_q4_0, block_q8_0, vec_dot_q4_0_q8_0>,
     VecDotCols<block_q4_0, block_q8_0, vec_dot_cols_q4_0_q8_0>},
    {GGML_TYPE_Q4_1, kQK, sizeof(block_q4_1), GGML_TYPE_Q8_1,
     ToFloat<block_q4_1, dequantize_row_q4_1>, FromFloat<block_q4_1, quantize_row_q4_1_ref>, kQ8_1,
     VecDot<block_q4_1, block_q8_1, vec_dot_q4_1_q8_1>,
     VecDotCols<block_q4_1, block_q8_1, vec_dot_cols_q4_1_q8_1>},
    {GGML_TYPE_Q5_0, kQK, sizeof(block_q5_0), GGML_TYPE_Q8_0,
     ToFloat<block_q5_0, dequantize_row_q5_0>, FromFloat<block_q5_0, quantize_row_q5_0_ref>, kQ8_0,
     VecDot<block_q5_0, block_q8_0, vec_dot_q5_0_q8_0>,
     VecDotCols<block_q5_0, block_q8_0, vec_dot_cols_q5_0_q8_0>},
    {GGML_TYPE_Q5_1, kQK, sizeof(block_q5_1), GGML_TYPE_Q8_1,
     ToFloat<block_q5_1, dequantize_row_q5_1>, FromFloat<block_q5_1, quantize_row_q5_1_ref>, kQ8_1,
     VecDot<block_q5_1, block_q8_1, vec_dot_q5_1_q8_1>,
     VecDotCols<block_q5_1, block_q8_1, vec_dot_cols_q5_1_q8_1>},
    {GGML_TYPE_Q8_0, kQK, sizeof(block_q8_0), GGML_TYPE_Q8_0,
     ToFloat<block_q8_0, dequantize_row_q8_0>, kQ8_0, kQ8_0,
     VecDot<block_q8_0, block_q8_0, vec_dot_q8_0_q8_0>,
     VecDotCols<block_q8_0, block_q8_0, vec_dot_cols_q8_0_q8_0>},
    {GGML_TYPE_Q8_1, kQK, sizeof(block_q8_1), GGML_TYPE_Q8_1,
     ToFloat<block_q8_1, dequantize_row_q8_1>, kQ8_1, kQ8_1, nullptr, nullptr},
};

}  // namespace

const QuantTypeTraits* GetQuantTypeTraits(ggml_type type) {
  for (const QuantTypeTraits& t : kTraits) {
    if (t.type == type) return &t;
  }
  return nullptr;
}

}  // namespace ggml_cpu
