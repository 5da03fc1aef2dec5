// The dispatched quantization kernels on every Highway target this CPU supports, against the
// scalar references of quant_ref.h: Q8 quantizers byte for byte, dot products within the float
// rounding bound of quant_ops.h, and ggml's accuracy thresholds end to end.
#include "kernels/quant_ops.h"

#include <string.h>

#include <cfloat>
#include <cmath>
#include <random>
#include <type_traits>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/quant_ops_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "ggml/fp16.h"
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "kernels/quant_ref.h"
#include "kernels/quant_test_util.h"
#include "kernels/quant_types.h"
#include "kernels/test_util.h"

#ifndef GGML_WHISPER_KERNELS_QUANT_OPS_TEST_ONCE_
#define GGML_WHISPER_KERNELS_QUANT_OPS_TEST_ONCE_
namespace ggml_cpu {
namespace quant_test {

// Rows that stress the Q8 quantizers: ggml's data, several magnitudes, exact ties of x / d,
// zeros and signed zeros, constant blocks, single outliers, subnormal-scale blocks (1/d
// overflows), values near FLT_MAX, and inf/NaN.
inline std::vector<std::vector<float>> Q8Rows() {
  std::vector<std::vector<float>> rows;
  rows.push_back(GgmlTestData(4096, 0.0f));
  rows.push_back(GgmlTestData(96, 1.0f));
  std::mt19937 rng(123);
  for (float scale : {1e-30f, 1e-3f, 1.0f, 7.0f, 1e3f, 1e30f}) {
    std::uniform_real_distribution<float> u(-scale, scale);
    std::vector<float> x(1024);
    for (float& v : x) v = u(rng);
    rows.push_back(x);
  }
  // Ties: amax 127 makes d = 1, so k + 0.5 is an exact tie (away from zero, not to even).
  std::vector<float> ties(256);
  for (size_t i = 0; i < ties.size(); ++i) {
    ties[i] = (i % kQK == 0) ? 127.0f : static_cast<float>(static_cast<int>(i % 200) - 100) + 0.5f;
  }
  rows.push_back(ties);
  std::vector<float> special(8 * kQK, 0.0f);
  special[1] = -0.0f;                                               // block 0: zeros
  for (int j = 0; j < kQK; ++j) special[kQK + j] = -2.5f;           // block 1: constant
  for (int j = 0; j < kQK; ++j) special[2 * kQK + j] = 0.001f * j;  // block 2: outlier
  special[2 * kQK + 17] = -1000.0f;
  special[3 * kQK] = 1e-38f;  // block 3: subnormal d
  special[3 * kQK + 5] = -3e-39f;
  special[4 * kQK + 2] = 3.4e38f;  // block 4: near FLT_MAX
  special[4 * kQK + 3] = -1.7e38f;
  special[5 * kQK + 4] = INFINITY;  // block 5: inf
  special[5 * kQK + 5] = 2.0f;
  special[6 * kQK + 6] = NAN;  // block 6: NaN
  special[6 * kQK + 7] = -3.0f;
  for (int j = 0; j < kQK; ++j) special[7 * kQK + j] = -NAN;  // block 7: all NaN
  rows.push_back(special);
  return rows;
}

}  // namespace quant_test
}  // namespace ggml_cpu
#endif  // GGML_WHISPER_KERNELS_QUANT_OPS_TEST_ONCE_

HWY_BEFORE_NAMESPACE();
namespace ggml_cpu {
namespace HWY_NAMESPACE {
namespace {

using quant_test::GgmlTestData;

template <class Block>
void CheckQ8Quantizer(void (*simd)(const float*, Block*, int64_t),
                      void (*ref)(const float*, Block*, int64_t)) {
  for (const std::vector<float>& row : quant_test::Q8Rows()) {
    // Also from an input that is not vector-aligned (offset by one float).
    std::vector<float> shifted(row.size() + 1);
    memcpy(shifted.data() + 1, row.data(), row.size() * sizeof(float));
    const int64_t k = static_cast<int64_t>(row.size());
    std::vector<Block> expected(k / kQK), actual(k / kQK), actual_shifted(k / kQK);
    ref(row.data(), expected.data(), k);
    simd(row.data(), actual.data(), k);
    simd(shifted.data() + 1, actual_shifted.data(), k);
    ASSERT_EQ(memcmp(expected.data(), actual.data(), k / kQK * sizeof(Block)), 0)
        << "k=" << k << " target " << hwy::TargetName(HWY_TARGET);
    ASSERT_EQ(memcmp(expected.data(), actual_shifted.data(), k / kQK * sizeof(Block)), 0);
  }
  test::ExpectDispatchedTo(HWY_TARGET);
}

void TestQuantizeQ8_0() { CheckQ8Quantizer(quantize_row_q8_0, quantize_row_q8_0_ref); }
void TestQuantizeQ8_1() { CheckQ8Quantizer(quantize_row_q8_1, quantize_row_q8_1_ref); }

// A vec_dot against its reference on raw random blocks (every code and qh pattern) for several
// n, row counts around the 4-row grouping, and a row stride with padding between rows.
template <class BlockX, class BlockY>
void CheckVecDot(void (*simd)(int64_t, int64_t, const BlockX*, size_t, const BlockY*, float*),
                 float (*ref)(int64_t, const BlockX*, const BlockY*)) {
  uint32_t seed = 1;
  for (int64_t n : {32, 64, 96, 384, 1536}) {
    const int64_t nb = n / kQK;
    for (int64_t nrows : {1, 2, 3, 4, 5, 7, 8, 9}) {
      const int64_t stride_blocks = nb + 1;  // one block of padding per row
      const std::vector<BlockX> x = quant_test::RandomBlocks<BlockX>(nrows * stride_blocks, seed++);
      const std::vector<BlockY> y = quant_test::RandomBlocks<BlockY>(nb, seed++);
      std::vector<float> s(nrows + 1, -1.0f);
      simd(n, nrows, x.data(), stride_blocks * sizeof(BlockX), y.data(), s.data());
      for (int64_t r = 0; r < nrows; ++r) {
        const BlockX* row = x.data() + r * stride_blocks;
        // Bit-identical to the reference on every target (quant_ops-inl.h sums each block's
        // integer dot exactly and scales it as the reference does); NaN matches NaN.
        const float expected = ref(n, row, y.data());
        uint32_t got_bits, want_bits;
        memcpy(&got_bits, &s[r], 4);
        memcpy(&want_bits, &expected, 4);
        ASSERT_TRUE(got_bits == want_bits || (std::isnan(s[r]) && std::isnan(expected)))
            << "n=" << n << " nrows=" << nrows << " r=" << r << ": " << s[r] << " vs reference "
            << expected;
      }
      EXPECT_EQ(s[nrows], -1.0f) << "wrote past nrows";
    }
  }
  test::ExpectDispatchedTo(HWY_TARGET);
}

void TestVecDotQ4_0Q8_0() {
  CheckVecDot(vec_dot_q4_0_q8_0, vec_dot_q4_0_q8_0_ref);
}
void TestVecDotQ4_1Q8_1() {
  CheckVecDot(vec_dot_q4_1_q8_1, vec_dot_q4_1_q8_1_ref);
}
void TestVecDotQ5_0Q8_0() {
  CheckVecDot(vec_dot_q5_0_q8_0, vec_dot_q5_0_q8_0_ref);
}
void TestVecDotQ5_1Q8_1() {
  CheckVecDot(vec_dot_q5_1_q8_1, vec_dot_q5_1_q8_1_ref);
}
void TestVecDotQ8_0Q8_0() {
  CheckVecDot(vec_dot_q8_0_q8_0, vec_dot_q8_0_q8_0_ref);
}

// vec_dot_cols against the reference, column by column: ncols around the 4-column grouping and
// its 3/2/1 remainders, row counts around the 4-row grouping, padded rows (x and y) and a column
// stride lds > nrows whose gaps must stay untouched.
template <class BlockX, class BlockY>
void CheckVecDotCols(void (*simd)(int64_t, int64_t, const BlockX*, size_t, const BlockY*, size_t, int64_t,
                                  float*, size_t),
                     float (*ref)(int64_t, const BlockX*, const BlockY*)) {
  uint32_t seed = 1000;
  for (int64_t n : {32, 384, 1536}) {
    const int64_t nb = n / kQK;
    for (int64_t nrows : {1, 3, 4, 5, 8, 9}) {
      for (int64_t ncols : {1, 2, 3, 4, 5, 6, 7, 9}) {
        const int64_t x_stride = nb + 1, y_stride = nb + 2;  // padding blocks per row
        const std::vector<BlockX> x = quant_test::RandomBlocks<BlockX>(nrows * x_stride, seed++);
        const std::vector<BlockY> y = quant_test::RandomBlocks<BlockY>(ncols * y_stride, seed++);
        const size_t lds = static_cast<size_t>(nrows) + 2;
        std::vector<float> s(ncols * lds, -1.0f);
        simd(n, nrows, x.data(), x_stride * sizeof(BlockX), y.data(), y_stride * sizeof(BlockY), ncols,
             s.data(), lds);
        for (int64_t c = 0; c < ncols; ++c) {
          for (int64_t r = 0; r < nrows; ++r) {
            const float got = s[c * lds + r];
            const float want = ref(n, x.data() + r * x_stride, y.data() + c * y_stride);
            uint32_t got_bits, want_bits;
            memcpy(&got_bits, &got, 4);
            memcpy(&want_bits, &want, 4);
            ASSERT_TRUE(got_bits == want_bits || (std::isnan(got) && std::isnan(want)))
                << "n=" << n << " nrows=" << nrows << " ncols=" << ncols << " r=" << r << " c=" << c << ": "
                << got << " vs reference " << want;
          }
          EXPECT_EQ(s[c * lds + nrows], -1.0f) << "wrote past nrows in column " << c;
          EXPECT_EQ(s[c * lds + nrows + 1], -1.0f) << "wrote past nrows in column " << c;
        }
      }
    }
  }
  test::ExpectDispatchedTo(HWY_TARGET);
}

void TestVecDotColsQ4_0Q8_0() { CheckVecDotCols(vec_dot_cols_q4_0_q8_0, vec_dot_q4_0_q8_0_ref); }
void TestVecDotColsQ4_1Q8_1() { CheckVecDotCols(vec_dot_cols_q4_1_q8_1, vec_dot_q4_1_q8_1_ref); }
void TestVecDotColsQ5_0Q8_0() { CheckVecDotCols(vec_dot_cols_q5_0_q8_0, vec_dot_q5_0_q8_0_ref); }
void TestVecDotColsQ5_1Q8_1() { CheckVecDotCols(vec_dot_cols_q5_1_q8_1, vec_dot_q5_1_q8_1_ref); }
void TestVecDotColsQ8_0Q8_0() { CheckVecDotCols(vec_dot_cols_q8_0_q8_0, vec_dot_q8_0_q8_0_ref); }

// Weights with all-equal codes make the integer sums easy to state: a Q8_0 row of code c and
// scale 1 against activations of code a and scale 1 gives n * c * a exactly.
void TestVecDotExactIntegers() {
  constexpr int64_t n = 256;
  std::vector<block_q8_0> x(n / kQK), y(n / kQK);
  for (auto& b : x) {
    b.d = ggml_fp32_to_fp16(1.0f);
    memset(b.qs, static_cast<uint8_t>(int8_t{-128}), kQK);
  }
  for (auto& b : y) {
    b.d = ggml_fp32_to_fp16(0.5f);
    memset(b.qs, static_cast<uint8_t>(int8_t{127}), kQK);
  }
  float s = 0.0f;
  vec_dot_q8_0_q8_0(n, 1, x.data(), n / kQK * sizeof(block_q8_0), y.data(), &s);
  EXPECT_EQ(s, n * -128.0f * 127.0f * 0.5f);

  // Q4_0 code 15 (level 7) and Q5_0 code 0 (level -16) with scale 2.
  std::vector<block_q4_0> x4(n / kQK);
  for (auto& b : x4) {
    b.d = ggml_fp32_to_fp16(2.0f);
    memset(b.qs, 0xFF, sizeof(b.qs));
  }
  vec_dot_q4_0_q8_0(n, 1, x4.data(), 0, y.data(), &s);
  EXPECT_EQ(s, n * 7.0f * 2.0f * 127.0f * 0.5f);
  std::vector<block_q5_0> x5(n / kQK);
  for (auto& b : x5) {
    b.d = ggml_fp32_to_fp16(2.0f);
    memset(b.qh, 0, sizeof(b.qh));
    memset(b.qs, 0, sizeof(b.qs));
  }
  vec_dot_q5_0_q8_0(n, 1, x5.data(), 0, y.data(), &s);
  EXPECT_EQ(s, n * -16.0f * 2.0f * 127.0f * 0.5f);
  test::ExpectDispatchedTo(HWY_TARGET);
}

// ggml's test-quantize-fns thresholds through the SIMD path: weights x = 0.1 + 2 cos(i),
// activations y = 0.1 + 2 cos(i + 1), n = 4096, |vec_dot - float dot| / n < 0.02.
template <class BlockX, class BlockY>
void CheckGgmlDotThreshold(void (*quantize_x)(const float*, BlockX*, int64_t),
                           void (*quantize_y)(const float*, BlockY*, int64_t),
                           void (*simd)(int64_t, int64_t, const BlockX*, size_t, const BlockY*,
                                        float*)) {
  constexpr int64_t n = 4096;
  const std::vector<float> x = GgmlTestData(n, 0.0f);
  const std::vector<float> y = GgmlTestData(n, 1.0f);
  std::vector<BlockX> qx(n / kQK);
  std::vector<BlockY> qy(n / kQK);
  quantize_x(x.data(), qx.data(), n);
  quantize_y(y.data(), qy.data(), n);
  float s = 0.0f;
  simd(n, 1, qx.data(), 0, qy.data(), &s);
  EXPECT_LT(std::fabs(s - quant_test::DoubleDot(x, y)) / n, quant_test::kMaxDotProductError);
}

void TestGgmlDotThresholds() {
  CheckGgmlDotThreshold(quantize_row_q4_0_ref, quantize_row_q8_0, vec_dot_q4_0_q8_0);
  CheckGgmlDotThreshold(quantize_row_q4_1_ref, quantize_row_q8_1, vec_dot_q4_1_q8_1);
  CheckGgmlDotThreshold(quantize_row_q5_0_ref, quantize_row_q8_0, vec_dot_q5_0_q8_0);
  CheckGgmlDotThreshold(quantize_row_q5_1_ref, quantize_row_q8_1, vec_dot_q5_1_q8_1);
  CheckGgmlDotThreshold(quantize_row_q8_0, quantize_row_q8_0, vec_dot_q8_0_q8_0);
  test::ExpectDispatchedTo(HWY_TARGET);
}

}  // namespace
// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ggml_cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ggml_cpu {
namespace {
HWY_BEFORE_TEST(QuantOpsTest);
HWY_EXPORT_AND_TEST_P(QuantOpsTest, TestQuantizeQ8_0);
HWY_EXPORT_AND_TEST_P(QuantOpsTest, TestQuantizeQ8_1);
HWY_EXPORT_AND_TEST_P(QuantOpsTest, TestVecDotQ4_0Q8_0);
HWY_EXPORT_AND_TEST_P(QuantOpsTest, TestVecDotQ4_1Q8_1);
HWY_EXPORT_AND_TEST_P(QuantOpsTest, TestVecDotQ5_0Q8_0);
HWY_EXPORT_AND_TEST_P(QuantOpsTest, TestVecDotQ5_1Q8_1);
HWY_EXPORT_AND_TEST_P(QuantOpsTest, TestVecDotQ8_0Q8_0);
HWY_EXPORT_AND_TEST_P(QuantOpsTest, TestVecDotColsQ4_0Q8_0);
HWY_EXPORT_AND_TEST_P(QuantOpsTest, TestVecDotColsQ4_1Q8_1);
HWY_EXPORT_AND_TEST_P(QuantOpsTest, TestVecDotColsQ5_0Q8_0);
HWY_EXPORT_AND_TEST_P(QuantOpsTest, TestVecDotColsQ5_1Q8_1);
HWY_EXPORT_AND_TEST_P(QuantOpsTest, TestVecDotColsQ8_0Q8_0);
HWY_EXPORT_AND_TEST_P(QuantOpsTest, TestVecDotExactIntegers);
HWY_EXPORT_AND_TEST_P(QuantOpsTest, TestGgmlDotThresholds);
}  // namespace
}  // namespace ggml_cpu
#endif  // HWY_ONCE
