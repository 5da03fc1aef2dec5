// kernels/vec on every target this CPU supports, against scalar references (double precision
// where the kernel's summation order differs from the reference's).
#include "kernels/vec.h"

#include <math.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "ggml/fp16.h"
#include "gtest/gtest.h"
#include "hwy/tests/hwy_gtest.h"
#include "kernels/test_util.h"

namespace ggml_cpu {
namespace {

using test::IntegerRow;
using test::RandomRow;
using test::Sizes;

HWY_BEFORE_TEST(VecTest);

uint32_t F32Bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

float F32FromBits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

// Add, Mul, Scale: elementwise, so bit-identical to the scalar expression. Inputs start one
// float past an aligned boundary to exercise unaligned loads; also run in place.
TEST_P(VecTest, ElementwiseBitExact) {
  test::ExpectDispatchedTo(GetParam());
  for (size_t n : Sizes()) {
    const std::vector<float> a = RandomRow(n + 1, 1), b = RandomRow(n + 1, 2);
    std::vector<float> y(n + 1, 0.0f);
    AddF32(n, a.data() + 1, b.data() + 1, y.data() + 1);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(y[i + 1], a[i + 1] + b[i + 1]) << n << " " << i;
    MulF32(n, a.data() + 1, b.data() + 1, y.data() + 1);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(y[i + 1], a[i + 1] * b[i + 1]) << n << " " << i;
    ScaleF32(n, 0.37f, a.data() + 1, y.data() + 1);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(y[i + 1], 0.37f * a[i + 1]) << n << " " << i;
    EXPECT_EQ(y[0], 0.0f);  // nothing written before the row
    std::vector<float> inplace = a;
    AddF32(n, inplace.data(), b.data(), inplace.data());
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(inplace[i], a[i] + b[i]);
  }
}

// Broadcast over rows with an odd stride; the gap between rows must stay untouched.
TEST_P(VecTest, RowsBroadcastOddStride) {
  test::ExpectDispatchedTo(GetParam());
  for (size_t n : Sizes()) {
    const size_t nrows = 3, stride = n + 3;
    const std::vector<float> x = RandomRow(nrows * stride, 3), b = RandomRow(n, 4);
    std::vector<float> y(nrows * stride, -7.0f);
    AddRowsBroadcastF32(n, nrows, x.data(), stride, b.data(), y.data(), stride);
    for (size_t r = 0; r < nrows; ++r) {
      for (size_t i = 0; i < stride; ++i) {
        const float want = i < n ? x[r * stride + i] + b[i] : -7.0f;
        ASSERT_EQ(y[r * stride + i], want) << n << " " << r << " " << i;
      }
    }
    MulRowsBroadcastF32(n, nrows, x.data(), stride, b.data(), y.data(), stride);
    for (size_t r = 0; r < nrows; ++r) {
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(y[r * stride + i], x[r * stride + i] * b[i]);
    }
  }
}

// Integer-valued inputs: every partial sum is exact, so the dot must equal the exact value.
// Random inputs: |err| <= (n/4 + 16) * 2^-24 * sum|a b| (four accumulators, each a sequential
// sum of at most n/4 terms, then a log-depth reduction); dropping any term would exceed this.
TEST_P(VecTest, Argmax) {
  test::ExpectDispatchedTo(GetParam());
  EXPECT_EQ(ArgmaxF32(0, nullptr), 0u);
  for (size_t n : Sizes()) {
    const std::vector<float> x = RandomRow(n, 14);
    // The max placed at every interesting position, with a tie later in the row.
    for (size_t pos : {size_t{0}, n / 2, n - 1}) {
      std::vector<float> y = x;
      y[pos] = 5.0f;
      if (pos + 2 < n) y[n - 1] = 5.0f;  // tie: the lower index must win
      EXPECT_EQ(ArgmaxF32(n, y.data()), pos) << n << " " << pos;
    }
    // All equal: index 0.
    std::vector<float> same(n, -2.5f);
    EXPECT_EQ(ArgmaxF32(n, same.data()), 0u);
  }
}

// Against a scalar std::max loop; the max at the first, middle and last position (the vector
// body's first lane, its middle and the scalar tail), and rows of -inf.
TEST_P(VecTest, Max) {
  test::ExpectDispatchedTo(GetParam());
  EXPECT_EQ(MaxF32(0, nullptr), -INFINITY);
  for (size_t n : Sizes()) {
    const std::vector<float> x = RandomRow(n, 15);
    float ref = -INFINITY;
    for (float v : x) ref = std::max(ref, v);
    EXPECT_EQ(MaxF32(n, x.data()), ref) << n;
    for (size_t pos : {size_t{0}, n / 2, n - 1}) {
      std::vector<float> y = x;
      y[pos] = 7.25f;
      EXPECT_EQ(MaxF32(n, y.data()), 7.25f) << n << " " << pos;
    }
    const std::vector<float> neg_inf(n, -INFINITY);
    EXPECT_EQ(MaxF32(n, neg_inf.data()), -INFINITY) << n;
  }
}

// Against a scalar scan, for thresholds below, inside and above the row's range, a single
// element above the threshold at the first, middle and last position, and -inf rows.
TEST_P(VecTest, FindGreater) {
  test::ExpectDispatchedTo(GetParam());
  EXPECT_EQ(FindGreaterF32(0, nullptr, 0.0f), 0u);
  for (size_t n : Sizes()) {
    const std::vector<float> x = RandomRow(n, 16);
    for (float t : {-10.0f, -0.5f, 0.0f, 0.5f, 10.0f}) {
      size_t ref = n;
      for (size_t i = 0; i < n; ++i) {
        if (x[i] > t) {
          ref = i;
          break;
        }
      }
      EXPECT_EQ(FindGreaterF32(n, x.data(), t), ref) << n << " " << t;
    }
    for (size_t pos : {size_t{0}, n / 2, n - 1}) {
      std::vector<float> y(n, -INFINITY);
      y[pos] = -3.0f;
      EXPECT_EQ(FindGreaterF32(n, y.data(), -INFINITY), pos) << n << " " << pos;
      EXPECT_EQ(FindGreaterF32(n, y.data(), -3.0f), n) << n << " " << pos;  // strictly greater
    }
  }
}

// f16 -> f32 over all 65536 inputs, bit-exact with ggml_fp16_to_fp32 except that a signalling
// NaN comes out quiet (what F16C hardware does, and the emulation matches it).
TEST_P(VecTest, ConvertF16ToF32Exhaustive) {
  test::ExpectDispatchedTo(GetParam());
  std::vector<ggml_fp16_t> h(65536 + 1);
  for (uint32_t i = 0; i < 65536; ++i) h[i + 1] = static_cast<ggml_fp16_t>(i);
  std::vector<float> f(65536 + 1);
  ConvertF16ToF32(65536, h.data() + 1, f.data() + 1);
  for (uint32_t i = 0; i < 65536; ++i) {
    uint32_t want = F32Bits(ggml_fp16_to_fp32(static_cast<ggml_fp16_t>(i)));
    if ((i & 0x7C00u) == 0x7C00u && (i & 0x3FFu) != 0) want |= 0x00400000u;  // quieted NaN
    ASSERT_EQ(F32Bits(f[i + 1]), want) << std::hex << i;
  }
}

// f32 -> f16 bit-exact with ggml_fp32_to_fp16 on: every f16 value and the midpoints (ties)
// between neighbours, specials, and 2^20 random bit patterns. Odd lengths exercise the tail.
TEST_P(VecTest, ConvertF32ToF16BitExact) {
  test::ExpectDispatchedTo(GetParam());
  std::vector<float> x;
  for (uint32_t i = 0; i < 65536; ++i) {
    const float v = ggml_fp16_to_fp32(static_cast<ggml_fp16_t>(i));
    x.push_back(v);
    const uint32_t bits = F32Bits(v);
    x.push_back(F32FromBits(bits + 0x1000u));  // half an f16 ulp above (tie) for normals
    x.push_back(F32FromBits(bits + 0x0FFFu));
    x.push_back(F32FromBits(bits + 0x1001u));
  }
  for (float v : {INFINITY, -INFINITY, NAN, -NAN, 65504.0f, 65519.99f, 65520.0f, 1e-8f, 2.9802322e-8f,
                  5.9604645e-8f, 6.1035156e-5f, 6.0975552e-5f, 1e30f, -0.0f}) {
    x.push_back(v);
  }
  std::mt19937 rng(15);
  for (int i = 0; i < (1 << 20) + 3; ++i) x.push_back(F32FromBits(rng()));
  std::vector<ggml_fp16_t> h(x.size());
  ConvertF32ToF16(x.size(), x.data(), h.data());
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(h[i], ggml_fp32_to_fp16(x[i])) << std::hex << F32Bits(x[i]);
  }
  for (size_t n : Sizes()) {  // tails: nothing past n is written
    std::vector<ggml_fp16_t> out(n + 1, 0xABCD);
    ConvertF32ToF16(n, x.data(), out.data());
    EXPECT_EQ(out[n], 0xABCD);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], ggml_fp32_to_fp16(x[i]));
  }
}

}  // namespace
}  // namespace ggml_cpu
