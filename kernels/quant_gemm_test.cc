// QuantGemm (kernels/quant_gemm.h) on every Highway target this CPU supports, against the scalar
// reference of quant_ref.h: every output bit-identical to vec_dot_*_q8_0_ref of the weight row
// with the activation row quantized by quantize_row_q8_0_ref, for M and N around and off the
// micro-kernel tiles (16-row panels, 2 panels x 6 columns on AVX3_DL) and several K.
#include "kernels/quant_gemm.h"

#include <string.h>

#include <cmath>
#include <random>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/quant_gemm_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "ggml/fp16.h"
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "kernels/quant_ref.h"
#include "kernels/quant_test_util.h"
#include "kernels/quant_types.h"
#include "kernels/test_util.h"

HWY_BEFORE_NAMESPACE();
namespace ggml_cpu {
namespace HWY_NAMESPACE {
namespace {

// Bit equality, NaN matching NaN.
bool SameFloat(float a, float b) {
  uint32_t x, y;
  memcpy(&x, &a, 4);
  memcpy(&y, &b, 4);
  return x == y || (std::isnan(a) && std::isnan(b));
}

template <class Block>
void CheckGemm(ggml_type type, float (*ref)(int64_t, const Block*, const block_q8_0*)) {
  uint32_t seed = 7;
  struct Shape {
    size_t m, n, k;
  };
  const Shape shapes[] = {{1, 1, 32},   {16, 6, 64},   {17, 7, 32},  {31, 13, 96},
                          {32, 12, 384}, {50, 19, 160}, {3, 100, 64}, {97, 101, 128}};
  for (const Shape& sh : shapes) {
    const size_t nb = sh.k / kQK;
    const size_t stride = nb + 1;  // a padding block between weight rows
    const std::vector<Block> a = quant_test::RandomBlocks<Block>(sh.m * stride, seed++);
    std::vector<float> b(sh.n * (sh.k + 3));
    std::mt19937 rng(seed++);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    for (float& v : b) v = u(rng);
    const size_t ldb = sh.k + 3;

    std::vector<uint8_t> packed(QuantGemmPackedBytesA(sh.k, sh.m));
    const size_t panels = (sh.m + 15) / 16;
    // Two calls, as two threads would split the panels.
    ASSERT_TRUE(QuantGemmPackA(type, sh.k, a.data(), stride * sizeof(Block), sh.m, 0, panels / 2,
                               packed.data(), packed.size()).ok());
    ASSERT_TRUE(QuantGemmPackA(type, sh.k, a.data(), stride * sizeof(Block), sh.m, panels / 2, panels,
                               packed.data(), packed.size()).ok());
    std::vector<uint8_t> qb(sh.n * QuantGemmRowBytesB(sh.k));
    ASSERT_TRUE(QuantGemmQuantizeB(sh.k, b.data(), ldb, 0, sh.n, qb.data(), qb.size()).ok());

    // The activations as the reference quantizes them.
    std::vector<block_q8_0> yq(sh.n * nb);
    for (size_t n = 0; n < sh.n; ++n) quantize_row_q8_0_ref(b.data() + n * ldb, yq.data() + n * nb, sh.k);

    const size_t ldc = sh.m + 5;
    std::vector<float> c(sh.n * ldc, -7.0f);
    // Four blocks of c: m split at a multiple of 16, n anywhere.
    const size_t ms = sh.m / 32 * 16, ns = sh.n / 3;
    for (const auto& blk : {std::vector<size_t>{0, ms, 0, ns}, {0, ms, ns, sh.n}, {ms, sh.m, 0, ns},
                            {ms, sh.m, ns, sh.n}}) {
      ASSERT_TRUE(QuantGemm(type, sh.k, packed.data(), packed.size(), sh.m, qb.data(), qb.size(), c.data(),
                            ldc, blk[0], blk[1], blk[2], blk[3]).ok());
    }
    for (size_t n = 0; n < sh.n; ++n) {
      for (size_t m = 0; m < sh.m; ++m) {
        const float want = ref(static_cast<int64_t>(sh.k), a.data() + m * stride, yq.data() + n * nb);
        ASSERT_TRUE(SameFloat(c[n * ldc + m], want))
            << ggml_type_name(type) << " M=" << sh.m << " N=" << sh.n << " K=" << sh.k << " m=" << m
            << " n=" << n << ": " << c[n * ldc + m] << " vs reference " << want;
      }
      for (size_t m = sh.m; m < ldc; ++m) ASSERT_EQ(c[n * ldc + m], -7.0f) << "wrote past m_end";
    }
  }
  test::ExpectDispatchedTo(HWY_TARGET);
}

void TestGemmQ8_0() { CheckGemm<block_q8_0>(GGML_TYPE_Q8_0, vec_dot_q8_0_q8_0_ref); }
void TestGemmQ4_0() { CheckGemm<block_q4_0>(GGML_TYPE_Q4_0, vec_dot_q4_0_q8_0_ref); }
void TestGemmQ5_0() { CheckGemm<block_q5_0>(GGML_TYPE_Q5_0, vec_dot_q5_0_q8_0_ref); }

// QuantGemmQuantizeB's codes and scales are quantize_row_q8_0_ref's, and corr is -128 * sum.
void TestQuantizeB() {
  const size_t k = 4096;
  const std::vector<float> x = quant_test::GgmlTestData(k, 0.5f);
  std::vector<uint8_t> qb(QuantGemmRowBytesB(k));
  ASSERT_TRUE(QuantGemmQuantizeB(k, x.data(), k, 0, 1, qb.data(), qb.size()).ok());
  std::vector<block_q8_0> want(k / kQK);
  quantize_row_q8_0_ref(x.data(), want.data(), k);
  for (size_t i = 0; i < k / kQK; ++i) {
    QuantGemmBlockB got;
    memcpy(&got, qb.data() + i * sizeof(got), sizeof(got));
    ASSERT_EQ(memcmp(got.qs, want[i].qs, kQK), 0) << "block " << i;
    ASSERT_TRUE(SameFloat(got.d, ggml_fp16_to_fp32(want[i].d)));
    int sum = 0;
    for (int j = 0; j < kQK; ++j) sum += want[i].qs[j];
    ASSERT_EQ(got.corr, -128 * sum);
  }
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
HWY_BEFORE_TEST(QuantGemmTest);
HWY_EXPORT_AND_TEST_P(QuantGemmTest, TestGemmQ8_0);
HWY_EXPORT_AND_TEST_P(QuantGemmTest, TestGemmQ4_0);
HWY_EXPORT_AND_TEST_P(QuantGemmTest, TestGemmQ5_0);
HWY_EXPORT_AND_TEST_P(QuantGemmTest, TestQuantizeB);

// Argument errors are returned, not aborted on.
TEST(QuantGemmArgsTest, Errors) {
  std::vector<uint8_t> buf(4096);
  float c[64];
  EXPECT_FALSE(QuantGemm(GGML_TYPE_Q4_1, 32, buf.data(), buf.size(), 16, buf.data(), buf.size(), c, 16, 0, 16, 0, 1).ok());
  EXPECT_FALSE(QuantGemm(GGML_TYPE_Q8_0, 33, buf.data(), buf.size(), 16, buf.data(), buf.size(), c, 16, 0, 16, 0, 1).ok());
  EXPECT_FALSE(QuantGemm(GGML_TYPE_Q8_0, 32, buf.data(), buf.size(), 32, buf.data(), buf.size(), c, 32, 8, 16, 0, 1).ok());
  EXPECT_FALSE(QuantGemm(GGML_TYPE_Q8_0, 32, buf.data(), 10, 16, buf.data(), buf.size(), c, 16, 0, 16, 0, 1).ok());
  EXPECT_FALSE(QuantGemm(GGML_TYPE_Q8_0, 32, buf.data(), buf.size(), 16, buf.data(), buf.size(), c, 8, 0, 16, 0, 1).ok());
  EXPECT_FALSE(QuantGemmPackA(GGML_TYPE_Q8_0, 32, buf.data(), 34, 16, 0, 2, buf.data(), buf.size()).ok());
  EXPECT_FALSE(QuantGemmQuantizeB(32, nullptr, 32, 0, 1, buf.data(), buf.size()).ok());
}
}  // namespace
}  // namespace ggml_cpu
#endif  // HWY_ONCE
