// Scalar reference quantizers: exact bytes for hand-derived blocks, exact dequantized values,
// ggml's round-trip and dot-product thresholds, and the reference dot products checked against
// a double-precision dot of the dequantized rows.
#include "kernels/quant_ref.h"

#include <string.h>

#include <cfloat>
#include <cmath>
#include <functional>
#include <type_traits>
#include <vector>

#include "ggml/fp16.h"
#include "gtest/gtest.h"
#include "kernels/quant_test_util.h"
#include "kernels/quant_types.h"

namespace ggml_cpu {
namespace {

using quant_test::GgmlTestData;
using quant_test::RoundTripError;

// The fixed test vector: four blocks of 32 values, each from a per-block formula in j = 0..31.
// Every type uses a ramp (negative values, a zero, rounding ties), an all-zero block (d = 0, so
// the inverse scale must be 0), a constant block and a block of 1.0 with one outlier at j = 20.
// The ramps and outliers are chosen so that d is a power of two and every step is exact.
std::vector<float> Blocks(const std::vector<std::function<float(int)>>& f) {
  std::vector<float> x;
  for (const auto& block : f) {
    for (int j = 0; j < kQK; ++j) x.push_back(block(j));
  }
  return x;
}

float Zero(int) { return 0.0f; }

template <class Block>
std::vector<uint8_t> Bytes(const std::vector<Block>& blocks) {
  std::vector<uint8_t> out(blocks.size() * sizeof(Block));
  memcpy(out.data(), blocks.data(), out.size());
  return out;
}

template <class Block>
std::vector<uint8_t> Quantize(void (*quantize)(const float*, Block*, int64_t),
                              const std::vector<float>& x) {
  std::vector<Block> y(x.size() / kQK);
  quantize(x.data(), y.data(), static_cast<int64_t>(x.size()));
  return Bytes(y);
}

// The element at j = 20 is the high nibble of qs[4] (and bit 20 of qh: bit 4 of qh[2]).
TEST(QuantRefTest, Q4_0ExactBytes) {
  const std::vector<float> x = Blocks({
      [](int j) { return j - 16.0f; },  // amax -16 -> d = -16/-8 = 2; q = trunc(j/2 + 0.5)
      Zero,                             // d = 0/-8 = -0.0 (fp16 0x8000), q = trunc(8.5) = 8
      [](int) { return 3.0f; },         // d = -0.375; 3 * (1/d) = -8 -> q = trunc(0.5) = 0
      [](int j) { return j == 20 ? -64.0f : 1.0f; },  // d = 8: 1 -> trunc(8.625) = 8, -64 -> 0
  });
  // Ramp codes q_j = min(15, (j + 1) / 2); byte j = q_j | q_{j+16} << 4.
  const std::vector<uint8_t> expected = {
      0x00, 0x40, 0x80, 0x91, 0x91, 0xA2, 0xA2, 0xB3, 0xB3,  // d = 2.0
      0xC4, 0xC4, 0xD5, 0xD5, 0xE6, 0xE6, 0xF7, 0xF7, 0xF8,  //
      0x00, 0x80, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88,  // d = -0.0
      0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88,  //
      0x00, 0xB6, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // d = -0.375
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  //
      0x00, 0x48, 0x88, 0x88, 0x88, 0x88, 0x08, 0x88, 0x88,  // d = 8.0
      0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88,  //
  };
  EXPECT_EQ(Quantize(quantize_row_q4_0_ref, x), expected);
}

TEST(QuantRefTest, Q4_1ExactBytes) {
  const std::vector<float> x = Blocks({
      [](int j) { return std::min(j * 0.5f - 8.0f, 7.0f); },  // m = -8, d = 15/15 = 1
      Zero,                                                   // d = 0, m = 0, q = 0
      [](int) { return 3.0f; },                               // d = 0, m = 3, q = 0
      [](int j) { return j == 20 ? -29.0f : 1.0f; },          // m = -29, d = 2: 1 -> 15
  });
  // Ramp codes q_j = trunc(j/2 + 0.5) = (j + 1) / 2, capped at 15: the Q4_0 ramp codes again.
  const std::vector<uint8_t> expected = {
      0x00, 0x3C, 0x00, 0xC8, 0x80, 0x91, 0x91, 0xA2, 0xA2, 0xB3,  // d = 1, m = -8
      0xB3, 0xC4, 0xC4, 0xD5, 0xD5, 0xE6, 0xE6, 0xF7, 0xF7, 0xF8,  //
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // d = 0, m = 0
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  //
      0x00, 0x00, 0x00, 0x42, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // d = 0, m = 3
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  //
      0x00, 0x40, 0x40, 0xCF, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0xFF,  // d = 2, m = -29
      0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,  //
  };
  EXPECT_EQ(Quantize(quantize_row_q4_1_ref, x), expected);
}

TEST(QuantRefTest, Q5_0ExactBytes) {
  const std::vector<float> x = Blocks({
      [](int j) { return j - 16.0f; },  // d = -16/-16 = 1: q_j = trunc(j + 0.5) = j
      Zero,                             // d = -0.0, q = 16: nibble 0, every qh bit set
      [](int) { return 3.0f; },         // d = -0.1875: q = trunc(-16 + 16.5) = 0
      [](int j) { return j == 20 ? -64.0f : 1.0f; },  // d = 4: 1 -> 16, -64 -> 0
  });
  const std::vector<uint8_t> expected = {
      0x00, 0x3C, 0x00, 0x00, 0xFF, 0xFF,              // d = 1, qh = 0xFFFF0000
      0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,  // byte j = j | j << 4
      0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF,  //
      0x00, 0x80, 0xFF, 0xFF, 0xFF, 0xFF,              // d = -0.0, qh = 0xFFFFFFFF
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  //
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  //
      0x00, 0xB2, 0x00, 0x00, 0x00, 0x00,              // d = -0.1875, qh = 0
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  //
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  //
      0x00, 0x44, 0xFF, 0xFF, 0xEF, 0xFF,              // d = 4, qh = all but bit 20
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  //
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  //
  };
  EXPECT_EQ(Quantize(quantize_row_q5_0_ref, x), expected);
}

TEST(QuantRefTest, Q5_1ExactBytes) {
  const std::vector<float> x = Blocks({
      [](int j) { return j - 16.0f; },                // m = -16, d = 31/31 = 1: q_j = j
      Zero,                                           // d = 0, m = 0, q = 0
      [](int) { return 3.0f; },                       // d = 0, m = 3, q = 0
      [](int j) { return j == 20 ? -61.0f : 1.0f; },  // m = -61, d = 2: 1 -> trunc(31.5) = 31
  });
  const std::vector<uint8_t> expected = {
      0x00, 0x3C, 0x00, 0xCC, 0x00, 0x00, 0xFF, 0xFF,  // d = 1, m = -16, qh = 0xFFFF0000
      0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,  //
      0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF,  //
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // d = 0, m = 0
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  //
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  //
      0x00, 0x00, 0x00, 0x42, 0x00, 0x00, 0x00, 0x00,  // d = 0, m = 3
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  //
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  //
      0x00, 0x40, 0xA0, 0xD3, 0xFF, 0xFF, 0xEF, 0xFF,  // d = 2, m = -61, qh: all but bit 20
      0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0xFF, 0xFF, 0xFF,  //
      0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,  //
  };
  EXPECT_EQ(Quantize(quantize_row_q5_1_ref, x), expected);
}

// Q8 blocks: the ramp has d = 127/127 = 1 and the ties -15.5 .. 14.5, which roundf takes away
// from zero (-0.5 -> -1, 0.5 -> 1; round-to-even would give -14 for -14.5 and 0 for +-0.5).
std::vector<float> Q8Vector() {
  return Blocks({
      [](int j) { return j == 0 ? -127.0f : j - 16.5f; },  // q_j = j - 17 (j <= 16), j - 16
      Zero,                                                // d = 0, q = 0
      [](int) { return -63.5f; },                          // d = 0.5, q = -127
      [](int j) { return j == 20 ? 254.0f : 1.0f; },       // d = 2: 1 -> roundf(0.5) = 1
  });
}

// Codes in qs: 0x81 = -127, 0xF0 = -16, ..., 0xFF = -1, 0x01 = 1, ..., 0x0F = 15.
#define RAMP_Q8_CODES                                                                             \
  0x81, 0xF0, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5, 0xF6, 0xF7, 0xF8, 0xF9, 0xFA, 0xFB, 0xFC, 0xFD, 0xFE, \
      0xFF, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E,   \
      0x0F
#define FILL8(b) b, b, b, b, b, b, b, b

TEST(QuantRefTest, Q8_0ExactBytes) {
  // clang-format off
  const std::vector<uint8_t> expected = {
      0x00, 0x3C, RAMP_Q8_CODES,                                                // d = 1
      0x00, 0x00, FILL8(0x00), FILL8(0x00), FILL8(0x00), FILL8(0x00),          // d = 0
      0x00, 0x38, FILL8(0x81), FILL8(0x81), FILL8(0x81), FILL8(0x81),          // d = 0.5
      0x00, 0x40, FILL8(0x01), FILL8(0x01), 0x01, 0x01, 0x01, 0x01, 0x7F, 0x01,  // d = 2
      0x01, 0x01, FILL8(0x01),                                                  // q_20 = 127
  };
  // clang-format on
  EXPECT_EQ(Quantize(quantize_row_q8_0_ref, Q8Vector()), expected);
}

// s = d * sum(q): ramp -127 - (1 + ... + 16) + (1 + ... + 15) = -143; constant 0.5 * -4064 =
// -2032; outlier 2 * (31 + 127) = 316.
TEST(QuantRefTest, Q8_1ExactBytes) {
  // clang-format off
  const std::vector<uint8_t> expected = {
      0x00, 0x3C, 0x78, 0xD8, RAMP_Q8_CODES,                                       // s = -143
      0x00, 0x00, 0x00, 0x00, FILL8(0x00), FILL8(0x00), FILL8(0x00), FILL8(0x00),  // s = 0
      0x00, 0x38, 0xF0, 0xE7, FILL8(0x81), FILL8(0x81), FILL8(0x81), FILL8(0x81),  // s = -2032
      0x00, 0x40, 0xF0, 0x5C, FILL8(0x01), FILL8(0x01), 0x01, 0x01, 0x01, 0x01,    // s = 316
      0x7F, 0x01, 0x01, 0x01, FILL8(0x01),                                         // q_20 = 127
  };
  // clang-format on
  EXPECT_EQ(Quantize(quantize_row_q8_1_ref, Q8Vector()), expected);
}

#undef RAMP_Q8_CODES
#undef FILL8

// The fp16 constants above, checked against the converter so a typo cannot hide.
TEST(QuantRefTest, ExpectedHalfConstants) {
  EXPECT_EQ(ggml_fp32_to_fp16(-0.375f), 0xB600);
  EXPECT_EQ(ggml_fp32_to_fp16(-0.1875f), 0xB200);
  EXPECT_EQ(ggml_fp32_to_fp16(-29.0f), 0xCF40);
  EXPECT_EQ(ggml_fp32_to_fp16(-61.0f), 0xD3A0);
  EXPECT_EQ(ggml_fp32_to_fp16(-143.0f), 0xD878);
  EXPECT_EQ(ggml_fp32_to_fp16(-2032.0f), 0xE7F0);
  EXPECT_EQ(ggml_fp32_to_fp16(316.0f), 0x5CF0);
}

// Values that the formats represent exactly come back exactly: the Q5 ramps (d = 1), constant
// blocks (q * d + m or the extreme level times d), zeros, and each outlier.
TEST(QuantRefTest, DequantizeExactValues) {
  const std::vector<float> ramp = Blocks({[](int j) { return j - 16.0f; }});
  std::vector<float> out(kQK);
  {
    block_q5_0 b;
    quantize_row_q5_0_ref(ramp.data(), &b, kQK);
    dequantize_row_q5_0(&b, out.data(), kQK);
    EXPECT_EQ(out, ramp);
  }
  {
    block_q5_1 b;
    quantize_row_q5_1_ref(ramp.data(), &b, kQK);
    dequantize_row_q5_1(&b, out.data(), kQK);
    EXPECT_EQ(out, ramp);
  }
  const std::vector<float> constant(kQK, 3.0f), zero(kQK, 0.0f);
  for (const std::vector<float>* x : {&constant, &zero}) {
    block_q4_0 b40;
    block_q4_1 b41;
    block_q5_0 b50;
    block_q5_1 b51;
    quantize_row_q4_0_ref(x->data(), &b40, kQK);
    dequantize_row_q4_0(&b40, out.data(), kQK);
    EXPECT_EQ(out, *x);
    quantize_row_q4_1_ref(x->data(), &b41, kQK);
    dequantize_row_q4_1(&b41, out.data(), kQK);
    EXPECT_EQ(out, *x);
    quantize_row_q5_0_ref(x->data(), &b50, kQK);
    dequantize_row_q5_0(&b50, out.data(), kQK);
    EXPECT_EQ(out, *x);
    quantize_row_q5_1_ref(x->data(), &b51, kQK);
    dequantize_row_q5_1(&b51, out.data(), kQK);
    EXPECT_EQ(out, *x);
  }
  const std::vector<float> q8 = Q8Vector();
  std::vector<float> out8(q8.size());
  std::vector<block_q8_0> b80(q8.size() / kQK);
  std::vector<block_q8_1> b81(q8.size() / kQK);
  quantize_row_q8_0_ref(q8.data(), b80.data(), q8.size());
  dequantize_row_q8_0(b80.data(), out8.data(), q8.size());
  EXPECT_EQ(out8[0], -127.0f);            // ramp extreme
  EXPECT_EQ(out8[16], -1.0f);             // -0.5 rounded away from zero
  EXPECT_EQ(out8[2 * kQK + 5], -63.5f);   // constant block
  EXPECT_EQ(out8[3 * kQK + 20], 254.0f);  // outlier
  quantize_row_q8_1_ref(q8.data(), b81.data(), q8.size());
  std::vector<float> out81(q8.size());
  dequantize_row_q8_1(b81.data(), out81.data(), q8.size());
  EXPECT_EQ(out81, out8);
}

// Non-finite and tiny inputs give defined codes (ggml: undefined float -> int8 conversions).
TEST(QuantRefTest, NonFiniteInputIsDefined) {
  std::vector<float> x(kQK, 1.0f);
  x[3] = NAN;
  x[7] = INFINITY;
  block_q8_0 b;
  quantize_row_q8_0_ref(x.data(), &b, kQK);
  EXPECT_EQ(b.d, 0x7C00);  // inf / 127 = inf; the inverse scale is then 0
  for (int j = 0; j < kQK; ++j) EXPECT_EQ(b.qs[j], 0) << j;  // 1 * 0 = 0, inf * 0 = NaN -> 0

  // A block whose scale is subnormal in float: 1/d overflows to inf, codes clamp to +-127.
  std::vector<float> tiny(kQK, 0.0f);
  tiny[0] = 1e-38f;
  tiny[1] = -1e-38f;
  quantize_row_q8_0_ref(tiny.data(), &b, kQK);
  EXPECT_EQ(b.qs[0], 127);
  EXPECT_EQ(b.qs[1], -127);
  EXPECT_EQ(b.qs[2], 0);  // 0 * inf = NaN -> 0
}

// ggml's test-quantize-fns: x = 0.1 + 2 cos(i), n = 4096, sqrt(sum d^2) / n < 0.002. Also
// checks the error against uniform rounding noise, sqrt(sum over blocks of 32 d^2 / 12) / n,
// which it must roughly equal (the q4_0/q5_0 clamp of the top level adds a little).
template <class Block>
void CheckRoundTrip(void (*quantize)(const float*, Block*, int64_t),
                    void (*dequantize)(const Block*, float*, int64_t)) {
  constexpr int64_t n = 4096;
  const std::vector<float> x = GgmlTestData(n, 0.0f);
  std::vector<Block> q(n / kQK);
  std::vector<float> y(n);
  quantize(x.data(), q.data(), n);
  dequantize(q.data(), y.data(), n);
  const double err = RoundTripError(x, y);
  double noise = 0.0;
  for (const Block& b : q) {
    const double d = ggml_fp16_to_fp32(b.d);
    noise += kQK * d * d / 12.0;
  }
  noise = std::sqrt(noise) / n;
  EXPECT_LT(err, quant_test::kMaxRoundTripError);
  EXPECT_GT(err, 0.5 * noise);
  EXPECT_LT(err, 1.5 * noise);
}

TEST(QuantRefTest, RoundTripErrorQ4_0) {
  CheckRoundTrip(quantize_row_q4_0_ref, dequantize_row_q4_0);
}
TEST(QuantRefTest, RoundTripErrorQ4_1) {
  CheckRoundTrip(quantize_row_q4_1_ref, dequantize_row_q4_1);
}
TEST(QuantRefTest, RoundTripErrorQ5_0) {
  CheckRoundTrip(quantize_row_q5_0_ref, dequantize_row_q5_0);
}
TEST(QuantRefTest, RoundTripErrorQ5_1) {
  CheckRoundTrip(quantize_row_q5_1_ref, dequantize_row_q5_1);
}
TEST(QuantRefTest, RoundTripErrorQ8_0) {
  CheckRoundTrip(quantize_row_q8_0_ref, dequantize_row_q8_0);
}
TEST(QuantRefTest, RoundTripErrorQ8_1) {
  CheckRoundTrip(quantize_row_q8_1_ref, dequantize_row_q8_1);
}

// The reference dot: (1) against a double dot of the dequantized rows, which it equals up to
// float rounding (and, for the _1 types, the fp16 rounding of s); (2) ggml's threshold against
// the float dot of the original data, |dot - float dot| / n < 0.02.
template <class BlockX, class BlockY>
void CheckRefDot(void (*quantize_x)(const float*, BlockX*, int64_t),
                 void (*dequantize_x)(const BlockX*, float*, int64_t),
                 void (*quantize_y)(const float*, BlockY*, int64_t),
                 void (*dequantize_y)(const BlockY*, float*, int64_t),
                 float (*dot)(int64_t, const BlockX*, const BlockY*)) {
  constexpr int64_t n = 4096;
  const std::vector<float> x = GgmlTestData(n, 0.0f);
  const std::vector<float> y = GgmlTestData(n, 1.0f);
  std::vector<BlockX> qx(n / kQK);
  std::vector<BlockY> qy(n / kQK);
  quantize_x(x.data(), qx.data(), n);
  quantize_y(y.data(), qy.data(), n);
  std::vector<float> dx(n), dy(n);
  dequantize_x(qx.data(), dx.data(), n);
  dequantize_y(qy.data(), dy.data(), n);
  const float result = dot(n, qx.data(), qy.data());

  double sum_abs = 0.0;
  for (int64_t i = 0; i < n; ++i) sum_abs += std::fabs(static_cast<double>(dx[i]) * dy[i]);
  // The _1 types use s = fp16(d * sum q) where the dequantized row has fp16(d) * sum q: two
  // fp16 roundings (relative 2^-11 each) on the m * s term of each block.
  double s_err = 0.0;
  if constexpr (std::is_same_v<BlockY, block_q8_1>) {
    for (int64_t b = 0; b < n / kQK; ++b) {
      double sum_y = 0.0;
      for (int j = 0; j < kQK; ++j) sum_y += dy[b * kQK + j];
      s_err += std::fabs(ggml_fp16_to_fp32(qx[b].m) * sum_y) * 2.0 * 0x1p-11;
    }
  }
  const double tol = (n / kQK + 4) * FLT_EPSILON * sum_abs + s_err;
  EXPECT_NEAR(result, quant_test::DoubleDot(dx, dy), tol);
  EXPECT_LT(std::fabs(result - quant_test::DoubleDot(x, y)) / n, quant_test::kMaxDotProductError);
}

TEST(QuantRefTest, DotQ4_0Q8_0) {
  CheckRefDot(quantize_row_q4_0_ref, dequantize_row_q4_0, quantize_row_q8_0_ref,
              dequantize_row_q8_0, vec_dot_q4_0_q8_0_ref);
}
TEST(QuantRefTest, DotQ4_1Q8_1) {
  CheckRefDot(quantize_row_q4_1_ref, dequantize_row_q4_1, quantize_row_q8_1_ref,
              dequantize_row_q8_1, vec_dot_q4_1_q8_1_ref);
}
TEST(QuantRefTest, DotQ5_0Q8_0) {
  CheckRefDot(quantize_row_q5_0_ref, dequantize_row_q5_0, quantize_row_q8_0_ref,
              dequantize_row_q8_0, vec_dot_q5_0_q8_0_ref);
}
TEST(QuantRefTest, DotQ5_1Q8_1) {
  CheckRefDot(quantize_row_q5_1_ref, dequantize_row_q5_1, quantize_row_q8_1_ref,
              dequantize_row_q8_1, vec_dot_q5_1_q8_1_ref);
}
TEST(QuantRefTest, DotQ8_0Q8_0) {
  CheckRefDot(quantize_row_q8_0_ref, dequantize_row_q8_0, quantize_row_q8_0_ref,
              dequantize_row_q8_0, vec_dot_q8_0_q8_0_ref);
}

}  // namespace
}  // namespace ggml_cpu
