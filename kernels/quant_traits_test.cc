// The traits table: sizes agree with ggml/types.h, vec_dot_type is ggml-cpu's pairing, and each
// function pointer runs the typed kernel it names (same bytes / same floats).
#include "kernels/quant_traits.h"

#include <string.h>

#include <cmath>
#include <type_traits>
#include <vector>

#include "ggml/types.h"
#include "gtest/gtest.h"
#include "kernels/quant_ops.h"
#include "kernels/quant_ref.h"
#include "kernels/quant_test_util.h"
#include "kernels/quant_types.h"

namespace ggml_cpu {
namespace {

TEST(QuantTraitsTest, SizesAndPairsMatchGgml) {
  struct Expected {
    ggml_type type;
    size_t type_size;
    ggml_type vec_dot_type;
    bool has_vec_dot;
  };
  const Expected expected[] = {
      {GGML_TYPE_Q4_0, 18, GGML_TYPE_Q8_0, true}, {GGML_TYPE_Q4_1, 20, GGML_TYPE_Q8_1, true},
      {GGML_TYPE_Q5_0, 22, GGML_TYPE_Q8_0, true}, {GGML_TYPE_Q5_1, 24, GGML_TYPE_Q8_1, true},
      {GGML_TYPE_Q8_0, 34, GGML_TYPE_Q8_0, true}, {GGML_TYPE_Q8_1, 36, GGML_TYPE_Q8_1, false},
  };
  for (const Expected& e : expected) {
    const QuantTypeTraits* t = GetQuantTypeTraits(e.type);
    ASSERT_NE(t, nullptr) << ggml_type_name(e.type);
    EXPECT_EQ(t->type, e.type);
    EXPECT_EQ(t->blck_size, 32);
    EXPECT_EQ(t->blck_size, ggml_blck_size(e.type));
    EXPECT_EQ(t->type_size, e.type_size);
    EXPECT_EQ(t->type_size, ggml_type_size(e.type));
    EXPECT_EQ(t->vec_dot_type, e.vec_dot_type);
    EXPECT_EQ(t->vec_dot != nullptr, e.has_vec_dot);
    EXPECT_NE(t->to_float, nullptr);
    EXPECT_NE(t->from_float, nullptr);
    EXPECT_NE(t->from_vec_dot, nullptr);
  }
}

TEST(QuantTraitsTest, NullForOtherTypes) {
  for (int id : {int{GGML_TYPE_F32}, int{GGML_TYPE_F16}, 4, 5, 10, int{GGML_TYPE_I8},
                 int{GGML_TYPE_I32}, int{GGML_TYPE_COUNT}, -1, 1000}) {
    EXPECT_EQ(GetQuantTypeTraits(static_cast<ggml_type>(id)), nullptr) << id;
  }
}

// The row of ggml's test data, quantized through the table and through the typed function.
template <class Block>
void CheckFromFloat(ggml_type type, void (*typed)(const float*, Block*, int64_t)) {
  constexpr int64_t n = 256;
  const std::vector<float> x = quant_test::GgmlTestData(n, 0.5f);
  std::vector<Block> a(n / kQK), b(n / kQK);
  GetQuantTypeTraits(type)->from_float(x.data(), a.data(), n);
  typed(x.data(), b.data(), n);
  EXPECT_EQ(memcmp(a.data(), b.data(), sizeof(Block) * a.size()), 0) << ggml_type_name(type);

  std::vector<float> ya(n), yb(n);
  const auto* blocks = reinterpret_cast<const Block*>(a.data());
  GetQuantTypeTraits(type)->to_float(blocks, ya.data(), n);
  if constexpr (std::is_same_v<Block, block_q4_0>) dequantize_row_q4_0(blocks, yb.data(), n);
  if constexpr (std::is_same_v<Block, block_q4_1>) dequantize_row_q4_1(blocks, yb.data(), n);
  if constexpr (std::is_same_v<Block, block_q5_0>) dequantize_row_q5_0(blocks, yb.data(), n);
  if constexpr (std::is_same_v<Block, block_q5_1>) dequantize_row_q5_1(blocks, yb.data(), n);
  if constexpr (std::is_same_v<Block, block_q8_0>) dequantize_row_q8_0(blocks, yb.data(), n);
  if constexpr (std::is_same_v<Block, block_q8_1>) dequantize_row_q8_1(blocks, yb.data(), n);
  EXPECT_EQ(ya, yb) << ggml_type_name(type);
}

TEST(QuantTraitsTest, ConvertersAreTheTypedOnes) {
  CheckFromFloat(GGML_TYPE_Q4_0, quantize_row_q4_0_ref);
  CheckFromFloat(GGML_TYPE_Q4_1, quantize_row_q4_1_ref);
  CheckFromFloat(GGML_TYPE_Q5_0, quantize_row_q5_0_ref);
  CheckFromFloat(GGML_TYPE_Q5_1, quantize_row_q5_1_ref);
  CheckFromFloat(GGML_TYPE_Q8_0, quantize_row_q8_0_ref);  // SIMD, bit-identical to the ref
  CheckFromFloat(GGML_TYPE_Q8_1, quantize_row_q8_1_ref);
}

// mul_mat's use: quantize an activation row with from_vec_dot, then vec_dot over 5 weight rows.
// Same floats as the typed calls, and within ggml's dot threshold of the float dot.
template <class BlockX, class BlockY>
void CheckVecDot(ggml_type type,
                 void (*typed)(int64_t, int64_t, const BlockX*, size_t, const BlockY*, float*)) {
  constexpr int64_t n = 1024, nrows = 5;
  const QuantTypeTraits* t = GetQuantTypeTraits(type);
  std::vector<float> w;
  for (int r = 0; r < nrows; ++r) {
    const std::vector<float> row = quant_test::GgmlTestData(n, 0.25f * r);
    w.insert(w.end(), row.begin(), row.end());
  }
  const std::vector<float> act = quant_test::GgmlTestData(n, 1.0f);
  std::vector<BlockX> qw(nrows * n / kQK);
  for (int r = 0; r < nrows; ++r) t->from_float(&w[r * n], &qw[r * n / kQK], n);
  std::vector<BlockY> qa(n / kQK);
  t->from_vec_dot(act.data(), qa.data(), n);
  const size_t nb1 = n / kQK * sizeof(BlockX);
  std::vector<float> s_table(nrows), s_typed(nrows);
  t->vec_dot(n, nrows, qw.data(), nb1, qa.data(), s_table.data());
  typed(n, nrows, qw.data(), nb1, qa.data(), s_typed.data());
  EXPECT_EQ(s_table, s_typed) << ggml_type_name(type);
  for (int r = 0; r < nrows; ++r) {
    const std::vector<float> row(w.begin() + r * n, w.begin() + (r + 1) * n);
    EXPECT_LT(std::fabs(s_table[r] - quant_test::DoubleDot(row, act)) / n,
              quant_test::kMaxDotProductError);
  }
}

TEST(QuantTraitsTest, VecDotIsTheTypedOne) {
  CheckVecDot(GGML_TYPE_Q4_0, vec_dot_q4_0_q8_0);
  CheckVecDot(GGML_TYPE_Q4_1, vec_dot_q4_1_q8_1);
  CheckVecDot(GGML_TYPE_Q5_0, vec_dot_q5_0_q8_0);
  CheckVecDot(GGML_TYPE_Q5_1, vec_dot_q5_1_q8_1);
  CheckVecDot(GGML_TYPE_Q8_0, vec_dot_q8_0_q8_0);
}

}  // namespace
}  // namespace ggml_cpu
