// Checks ggml/fp16.h against the compiler's own IEEE 754 binary16 type: _Float16 (g++ >= 12 on
// x86-64: conversions go through libgcc's __extendhfsf2 / __truncsfhf2, round to nearest even),
// or on AArch64 __fp16 (IEEE format unless -mfp16-format=alternative; the hardware's fcvt,
// round to nearest even), since g++ 12 has no _Float16 in C++ there.
#include "ggml/fp16.h"

#include <stdint.h>
#include <string.h>

#include <cfloat>
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace {

#if defined(__aarch64__)
using RefHalf = __fp16;
#elif !defined(__FLT16_MAX__) && defined(__clang__)
// clang before 15 has no _Float16 on x86-64 (the fuzz config, --config=fuzz, builds with
// clang-14): there is no reference to compare against, so the test reports itself skipped.
TEST(Fp16Test, NeedsCompilerFloat16) { GTEST_SKIP() << "this clang has no _Float16 on x86-64 (clang >= 15 or g++ >= 12 has)"; }
#define GGML_FP16_TEST_NO_FLOAT16 1
#elif !defined(__FLT16_MAX__)
#error "fp16_test needs the compiler's _Float16 (g++ >= 12 on x86-64) as the reference"
#else
using RefHalf = _Float16;
#endif

#if !defined(GGML_FP16_TEST_NO_FLOAT16)

uint32_t FloatBits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

float BitsFloat(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

// The reference conversions.
uint16_t RefToHalf(float f) {
  const RefHalf h = static_cast<RefHalf>(f);
  uint16_t bits;
  memcpy(&bits, &h, 2);
  return bits;
}

float RefToFloat(uint16_t bits) {
  RefHalf h;
  memcpy(&h, &bits, 2);
  return static_cast<float>(h);
}

bool HalfIsNan(uint16_t h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x03FFu) != 0; }

// Compares one fp32 -> fp16 conversion with the reference. NaN payloads may differ (the reference
// and ggml both quiet the NaN, but need not keep the same payload bits); NaN-ness and the sign
// must match.
void ExpectSameHalf(float f) {
  const uint16_t got = ggml_fp32_to_fp16(f);
  const uint16_t want = RefToHalf(f);
  if (std::isnan(f)) {
    EXPECT_TRUE(HalfIsNan(got)) << "input bits 0x" << std::hex << FloatBits(f) << " gave 0x" << got;
    EXPECT_EQ(got & 0x8000u, want & 0x8000u) << "sign of NaN 0x" << std::hex << FloatBits(f);
  } else {
    EXPECT_EQ(got, want) << "input " << f << " (bits 0x" << std::hex << FloatBits(f) << ")";
  }
}

TEST(Fp16Test, EveryHalfRoundTripsThroughFloat) {
  int n_nan = 0;
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t h = static_cast<uint16_t>(i);
    const float f = ggml_fp16_to_fp32(h);
    const uint16_t back = ggml_fp32_to_fp16(f);
    if (HalfIsNan(h)) {
      ++n_nan;
      ASSERT_TRUE(std::isnan(f)) << "half 0x" << std::hex << i;
      ASSERT_TRUE(HalfIsNan(back)) << "half 0x" << std::hex << i << " came back as 0x" << back;
      ASSERT_EQ(back & 0x8000u, h & 0x8000u) << "sign lost for NaN 0x" << std::hex << i;
      ASSERT_EQ(std::signbit(f), (h & 0x8000u) != 0);
    } else {
      ASSERT_EQ(back, h) << "half 0x" << std::hex << i << " -> " << f << " -> 0x" << back;
    }
  }
  // 2 signs x 1023 non-zero mantissas with the all-ones exponent.
  EXPECT_EQ(n_nan, 2 * 1023);
}

TEST(Fp16Test, EveryHalfWidensLikeTheCompiler) {
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t h = static_cast<uint16_t>(i);
    const float got = ggml_fp16_to_fp32(h);
    const float want = RefToFloat(h);
    if (HalfIsNan(h)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << i;
      ASSERT_EQ(std::signbit(got), std::signbit(want)) << std::hex << i;
    } else {
      ASSERT_EQ(FloatBits(got), FloatBits(want)) << "half 0x" << std::hex << i;
    }
  }
}

TEST(Fp16Test, KnownValues) {
  // Values from the binary16 definition: 1 sign, 5 exponent (bias 15), 10 mantissa bits.
  EXPECT_EQ(ggml_fp32_to_fp16(1.0f), 0x3C00);
  EXPECT_EQ(ggml_fp32_to_fp16(-2.0f), 0xC000);
  EXPECT_EQ(ggml_fp32_to_fp16(65504.0f), 0x7BFF);                   // largest finite half
  EXPECT_EQ(ggml_fp32_to_fp16(std::ldexp(1.0f, -14)), 0x0400);      // smallest normal
  EXPECT_EQ(ggml_fp32_to_fp16(std::ldexp(1.0f, -24)), 0x0001);      // smallest subnormal
  EXPECT_EQ(ggml_fp32_to_fp16(std::ldexp(1023.0f, -24)), 0x03FF);   // largest subnormal
  EXPECT_EQ(ggml_fp32_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(ggml_fp32_to_fp16(INFINITY), 0x7C00);
  EXPECT_EQ(ggml_fp32_to_fp16(-INFINITY), 0xFC00);
  EXPECT_EQ(ggml_fp16_to_fp32(0x3555), 0.333251953125f);  // 1365 / 4096
  EXPECT_EQ(ggml_fp16_to_fp32(0x0001), std::ldexp(1.0f, -24));
}

TEST(Fp16Test, OverflowToInfinityStartsAt65520) {
  // 65520 is halfway between 65504 (0x7BFF, odd mantissa) and 65536: ties to even go up to inf.
  const float just_below = std::nextafter(65520.0f, 0.0f);
  EXPECT_EQ(ggml_fp32_to_fp16(just_below), 0x7BFF);
  EXPECT_EQ(ggml_fp32_to_fp16(65520.0f), 0x7C00);
  EXPECT_EQ(ggml_fp32_to_fp16(-65520.0f), 0xFC00);
  EXPECT_EQ(ggml_fp32_to_fp16(1e10f), 0x7C00);
  EXPECT_EQ(ggml_fp32_to_fp16(FLT_MAX), 0x7C00);
  for (float f : {just_below, 65520.0f, -just_below, -65520.0f, 1e10f, FLT_MAX}) ExpectSameHalf(f);
}

TEST(Fp16Test, HalfwayCasesRoundToEven) {
  // Every pair of adjacent finite halves (positive and negative): the exact midpoint, and the
  // floats one ulp on either side of it. The midpoint of two halves is always a float.
  int n = 0;
  for (uint32_t i = 0; i < 0x7BFF; ++i) {
    for (uint32_t sign : {0u, 0x8000u}) {
      const float lo = ggml_fp16_to_fp32(static_cast<uint16_t>(sign | i));
      const float hi = ggml_fp16_to_fp32(static_cast<uint16_t>(sign | (i + 1)));
      const float mid = (lo + hi) / 2;  // exact: both have at most 11 significant bits
      ASSERT_NE(mid, lo);
      ASSERT_NE(mid, hi);
      const uint16_t even = (i & 1) ? static_cast<uint16_t>(sign | (i + 1)) : static_cast<uint16_t>(sign | i);
      ASSERT_EQ(ggml_fp32_to_fp16(mid), even) << "midpoint " << mid;
      ASSERT_EQ(ggml_fp32_to_fp16(std::nextafter(mid, lo)), sign | i) << mid;
      ASSERT_EQ(ggml_fp32_to_fp16(std::nextafter(mid, hi)), sign | (i + 1)) << mid;
      ExpectSameHalf(mid);
      ++n;
    }
  }
  EXPECT_EQ(n, 2 * 0x7BFF);
}

TEST(Fp16Test, Fp32SubnormalsAndTinyValuesMatchTheCompiler) {
  // fp32 subnormals all round to (signed) zero in fp16; values around 2^-25 (half the smallest
  // half subnormal) are the tie to zero or to 0x0001.
  std::vector<float> inputs = {BitsFloat(1), BitsFloat(0x007FFFFF), std::ldexp(1.0f, -25),
                               std::nextafter(std::ldexp(1.0f, -25), 1.0f),
                               std::nextafter(std::ldexp(1.0f, -25), 0.0f), std::ldexp(3.0f, -26),
                               std::ldexp(1.0f, -26)};
  EXPECT_EQ(ggml_fp32_to_fp16(std::ldexp(1.0f, -25)), 0x0000);  // tie: 0 is even
  EXPECT_EQ(ggml_fp32_to_fp16(std::ldexp(3.0f, -25)), 0x0002);  // tie between 1 and 2: 2
  EXPECT_EQ(ggml_fp32_to_fp16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  for (uint32_t m = 1; m < 0x800000u; m = m * 3 + 1) inputs.push_back(BitsFloat(m));
  for (float f : inputs) {
    ExpectSameHalf(f);
    ExpectSameHalf(-f);
  }
}

TEST(Fp16Test, NanKeepsSignAndStaysNan) {
  for (uint32_t payload : {1u, 0x1FFFu, 0x2000u, 0x400000u, 0x7FFFFFu}) {
    for (uint32_t sign : {0u, 0x80000000u}) {
      const float f = BitsFloat(sign | 0x7F800000u | payload);
      const uint16_t h = ggml_fp32_to_fp16(f);
      EXPECT_TRUE(HalfIsNan(h)) << std::hex << payload;  // also a payload only in the low 13 bits
      EXPECT_EQ((h & 0x8000u) != 0, sign != 0);
    }
  }
}

TEST(Fp16Test, RandomFloatsMatchTheCompiler) {
  std::mt19937 rng(12345);
  // Uniform bit patterns (all exponents), plus floats concentrated in the half range.
  std::uniform_int_distribution<uint32_t> bits;
  std::uniform_real_distribution<float> in_range(-70000.0f, 70000.0f);
  std::uniform_int_distribution<int> exponent(-30, 17);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  for (int i = 0; i < 300000; ++i) {
    ExpectSameHalf(BitsFloat(bits(rng)));
    ExpectSameHalf(in_range(rng));
    ExpectSameHalf(std::ldexp(mantissa(rng), exponent(rng)));
    if (HasFailure()) break;
  }
}

TEST(Fp16Test, StridedSweepOfAllFloatsMatchesTheCompiler) {
  // A prime stride visits every exponent and many mantissa patterns (about 1.05 M floats).
  for (uint64_t u = 0; u < (1ull << 32); u += 4093) {
    ExpectSameHalf(BitsFloat(static_cast<uint32_t>(u)));
    if (HasFailure()) break;
  }
}

#endif  // !GGML_FP16_TEST_NO_FLOAT16

}  // namespace
