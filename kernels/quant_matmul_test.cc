// mul_mat through the row-ops hook with quantized weights: every output equals the vec_dot of
// its rows (the hook adds no arithmetic of its own) and is within ggml's dot-product threshold
// of the float mul_mat of the unquantized data. The dequantizing path (MulMatDequant) is the
// f32 product of the dequantized weights.
#include "kernels/quant_matmul.h"

#include <cmath>
#include <vector>

#include "ggml/types.h"
#include "gtest/gtest.h"
#include "kernels/matmul.h"
#include "kernels/quant_test_util.h"
#include "kernels/quant_traits.h"

namespace ggml_cpu {
namespace {

void CheckMulMat(ggml_type type) {
  const MulMatRowOps* ops = QuantMulMatRowOps(type);
  const QuantTypeTraits* t = GetQuantTypeTraits(type);
  ASSERT_NE(ops, nullptr) << ggml_type_name(type);
  EXPECT_STREQ(ops->name, ggml_type_name(type));
  EXPECT_EQ(ops->vec_dot_block_bytes, ggml_type_size(t->vec_dot_type));

  // a: [K, M] weights, b: [K, N] activations, c: [M, N].
  constexpr size_t K = 512, M = 37, N = 6;
  std::vector<float> a(M * K), b(N * K);
  for (size_t m = 0; m < M; ++m) {
    const std::vector<float> row = quant_test::GgmlTestData(K, 0.1f * m);
    std::copy(row.begin(), row.end(), a.begin() + m * K);
  }
  for (size_t n = 0; n < N; ++n) {
    const std::vector<float> row = quant_test::GgmlTestData(K, 1.0f + 0.3f * n);
    std::copy(row.begin(), row.end(), b.begin() + n * K);
  }
  const size_t a_nb1 = ggml_row_size(type, K);
  std::vector<uint8_t> qa(M * a_nb1);
  for (size_t m = 0; m < M; ++m) t->from_float(&a[m * K], &qa[m * a_nb1], K);

  const size_t wsize = MulMatConvertedWorkSize(*ops, K, N);
  std::vector<uint8_t> wdata(wsize);
  std::vector<float> c(M * N, NAN);
  ASSERT_TRUE(MulMatConvertB(*ops, K, b.data(), K, 0, N, wdata.data(), wsize).ok());
  ASSERT_TRUE(
      MulMatConverted(*ops, K, qa.data(), a_nb1, wdata.data(), wsize, c.data(), M, 0, M, 0, N)
          .ok());

  const size_t rb = MulMatConvertedRowBytes(*ops, K);
  for (size_t n = 0; n < N; ++n) {
    std::vector<float> bn(b.begin() + n * K, b.begin() + (n + 1) * K);
    for (size_t m = 0; m < M; ++m) {
      float s = 0.0f;
      t->vec_dot(K, 1, &qa[m * a_nb1], a_nb1, &wdata[n * rb], &s);
      EXPECT_EQ(c[n * M + m], s) << "m=" << m << " n=" << n;
      std::vector<float> am(a.begin() + m * K, a.begin() + (m + 1) * K);
      EXPECT_LT(std::fabs(c[n * M + m] - quant_test::DoubleDot(am, bn)) / K,
                quant_test::kMaxDotProductError);
    }
  }
}

// The dequantizing path: every output is the f32 product of the exactly dequantized weights
// (to_float) with the unquantized activations, within the f32 accumulation bound.
void CheckDequant(ggml_type type) {
  const MulMatDequantOps* ops = QuantMulMatDequantOps(type);
  const QuantTypeTraits* t = GetQuantTypeTraits(type);
  ASSERT_NE(ops, nullptr) << ggml_type_name(type);
  EXPECT_STREQ(ops->name, ggml_type_name(type));
  EXPECT_EQ(ops->block_bytes, ggml_type_size(type));
  constexpr size_t K = 1024, M = 37, N = 20;
  const size_t a_nb1 = ggml_row_size(type, K);
  std::vector<uint8_t> qa(M * a_nb1);
  std::vector<float> ad(M * K), b(N * K);
  for (size_t m = 0; m < M; ++m) {
    t->from_float(quant_test::GgmlTestData(K, 0.1f * m).data(), &qa[m * a_nb1], K);
    t->to_float(&qa[m * a_nb1], &ad[m * K], K);
  }
  for (size_t n = 0; n < N; ++n) {
    const std::vector<float> row = quant_test::GgmlTestData(K, 1.0f + 0.3f * n);
    std::copy(row.begin(), row.end(), b.begin() + n * K);
  }
  std::vector<char> work(MulMatWorkSize());
  std::vector<float> c(M * N, NAN);
  const absl::Status st = MulMatDequant(*ops, K, qa.data(), a_nb1, b.data(), K, c.data(), M, 0, M, 0, N,
                                        work.data(), work.size());
  ASSERT_TRUE(st.ok()) << st;
  for (size_t n = 0; n < N; ++n) {
    for (size_t m = 0; m < M; ++m) {
      double want = 0, mag = 0;
      for (size_t k = 0; k < K; ++k) {
        want += double(ad[m * K + k]) * b[n * K + k];
        mag += std::fabs(double(ad[m * K + k]) * b[n * K + k]);
      }
      EXPECT_NEAR(c[n * M + m], want, (K + 16) * 0x1p-24 * mag) << ggml_type_name(type) << " m=" << m << " n=" << n;
    }
  }
}

TEST(QuantMatMulTest, DequantizedQ4_0) { CheckDequant(GGML_TYPE_Q4_0); }
TEST(QuantMatMulTest, DequantizedQ4_1) { CheckDequant(GGML_TYPE_Q4_1); }
TEST(QuantMatMulTest, DequantizedQ5_0) { CheckDequant(GGML_TYPE_Q5_0); }
TEST(QuantMatMulTest, DequantizedQ5_1) { CheckDequant(GGML_TYPE_Q5_1); }
TEST(QuantMatMulTest, DequantizedQ8_0) { CheckDequant(GGML_TYPE_Q8_0); }

TEST(QuantMatMulTest, Q4_0) { CheckMulMat(GGML_TYPE_Q4_0); }
TEST(QuantMatMulTest, Q4_1) { CheckMulMat(GGML_TYPE_Q4_1); }
TEST(QuantMatMulTest, Q5_0) { CheckMulMat(GGML_TYPE_Q5_0); }
TEST(QuantMatMulTest, Q5_1) { CheckMulMat(GGML_TYPE_Q5_1); }
TEST(QuantMatMulTest, Q8_0) { CheckMulMat(GGML_TYPE_Q8_0); }

TEST(QuantMatMulTest, NullForTypesWithoutWeightKernel) {
  EXPECT_EQ(QuantMulMatRowOps(GGML_TYPE_Q8_1), nullptr);
  EXPECT_EQ(QuantMulMatRowOps(GGML_TYPE_F32), nullptr);
  EXPECT_EQ(QuantMulMatRowOps(GGML_TYPE_F16), nullptr);
  EXPECT_EQ(QuantMulMatRowOps(static_cast<ggml_type>(99)), nullptr);
  EXPECT_EQ(QuantMulMatDequantOps(GGML_TYPE_Q8_1), nullptr);
  EXPECT_EQ(QuantMulMatDequantOps(GGML_TYPE_F16), nullptr);
}

// The hook's own validation applies: K must be a multiple of the block size.
TEST(QuantMatMulTest, RejectsPartialBlocks) {
  const MulMatRowOps* ops = QuantMulMatRowOps(GGML_TYPE_Q4_0);
  std::vector<float> b(48, 1.0f);
  std::vector<uint8_t> wdata(1024);
  const absl::Status s = MulMatConvertB(*ops, 48, b.data(), 48, 0, 1, wdata.data(), wdata.size());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("q4_0"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace ggml_cpu
