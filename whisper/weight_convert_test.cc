#include "whisper/weight_convert.h"

#include <cstring>
#include <vector>

#include "ggml/fp16.h"
#include "gtest/gtest.h"
#include "kernels/quant_types.h"

namespace whisper {
namespace {

// whisper.cpp quantize.cpp's to_skip list and its n_dims == 2 condition.
TEST(ShouldQuantizeTest, WhisperCppRule) {
  EXPECT_TRUE(ShouldQuantize("decoder.token_embedding.weight", 2));
  EXPECT_TRUE(ShouldQuantize("encoder.blocks.0.attn.query.weight", 2));
  EXPECT_FALSE(ShouldQuantize("encoder.blocks.0.attn.query.bias", 1));
  EXPECT_FALSE(ShouldQuantize("encoder.conv1.bias", 2));
  EXPECT_FALSE(ShouldQuantize("encoder.conv2.bias", 2));
  EXPECT_FALSE(ShouldQuantize("encoder.positional_embedding", 2));
  EXPECT_FALSE(ShouldQuantize("decoder.positional_embedding", 2));
  EXPECT_FALSE(ShouldQuantize("encoder.conv2.weight", 3));
}

TEST(IsWeightTypeTest, TheTypesTheMatrixKernelsMultiply) {
  for (ggml_type t : {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1,
                      GGML_TYPE_Q8_0}) {
    EXPECT_TRUE(IsWeightType(t)) << ggml_type_name(t);
  }
  for (ggml_type t : {GGML_TYPE_Q8_1, GGML_TYPE_I8, GGML_TYPE_I16, GGML_TYPE_I32, GGML_TYPE_COUNT}) {
    EXPECT_FALSE(IsWeightType(t)) << static_cast<int>(t);
  }
}

// F16 -> F32 widens exactly; F32 -> F16 rounds to nearest even: 1/3 is 0x3555 (0.33325195),
// 1 + 2^-11 (a tie) rounds down to 1.0 (0x3C00), 1 + 3 * 2^-11 up to 1 + 2^-9 (0x3C02).
TEST(ConvertRowTest, FloatTypes) {
  const float x[4] = {1.0f / 3.0f, 1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, -2.0f};
  uint16_t h[4];
  float scratch[4];
  ASSERT_TRUE(ConvertRow(GGML_TYPE_F32, x, GGML_TYPE_F16, h, 4, scratch).ok());
  EXPECT_EQ(h[0], 0x3555);
  EXPECT_EQ(h[1], 0x3C00);
  EXPECT_EQ(h[2], 0x3C02);
  EXPECT_EQ(h[3], 0xC000);
  float back[4];
  ASSERT_TRUE(ConvertRow(GGML_TYPE_F16, h, GGML_TYPE_F32, back, 4, scratch).ok());
  EXPECT_EQ(back[0], 0.33325195f);
  EXPECT_EQ(back[1], 1.0f);
  EXPECT_EQ(back[2], 1.0f + 0x1p-9f);
  EXPECT_EQ(back[3], -2.0f);
}

// One Q8_0 block of x_i = i - 16: max |x| = 16, d = 16 / 127, q = roundf(x * 127 / 16) with ties
// away from zero (x = 8: 63.5 -> 64; x = -8: -64); d is stored as fp16(16 / 127) = 0x3008.
TEST(ConvertRowTest, Q8_0HandDerivedBlock) {
  std::vector<float> x(32), scratch(32);
  for (int i = 0; i < 32; ++i) x[i] = static_cast<float>(i - 16);
  ggml_cpu::block_q8_0 b;
  ASSERT_EQ(sizeof(b), 34u);
  ASSERT_TRUE(ConvertRow(GGML_TYPE_F32, x.data(), GGML_TYPE_Q8_0, &b, 32, scratch.data()).ok());
  EXPECT_EQ(b.d, 0x3008);
  EXPECT_EQ(b.qs[0], -127);   // x = -16
  EXPECT_EQ(b.qs[8], -64);    // x = -8
  EXPECT_EQ(b.qs[16], 0);     // x = 0
  EXPECT_EQ(b.qs[17], 8);     // x = 1: 7.9375 -> 8
  EXPECT_EQ(b.qs[24], 64);    // x = 8
  EXPECT_EQ(b.qs[31], 119);   // x = 15: 119.0625 -> 119
  // The same row given as F16 (exact for these integers) quantizes to the same bytes, and a
  // Q8_0 row converted to Q8_0 is copied, not re-quantized.
  std::vector<uint16_t> h(32);
  for (int i = 0; i < 32; ++i) h[i] = ggml_fp32_to_fp16(x[i]);
  ggml_cpu::block_q8_0 from_h, copy;
  ASSERT_TRUE(ConvertRow(GGML_TYPE_F16, h.data(), GGML_TYPE_Q8_0, &from_h, 32, scratch.data()).ok());
  EXPECT_EQ(memcmp(&b, &from_h, sizeof(b)), 0);
  ASSERT_TRUE(ConvertRow(GGML_TYPE_Q8_0, &b, GGML_TYPE_Q8_0, &copy, 32, scratch.data()).ok());
  EXPECT_EQ(memcmp(&b, &copy, sizeof(b)), 0);
  // Dequantized: q * d, d = fp16 0x3008 = 0.1259765625.
  float y[32];
  ASSERT_TRUE(ConvertRow(GGML_TYPE_Q8_0, &b, GGML_TYPE_F32, y, 32, scratch.data()).ok());
  EXPECT_EQ(y[0], -127 * 0.1259765625f);
  EXPECT_EQ(y[24], 64 * 0.1259765625f);
}

TEST(ConvertRowTest, Errors) {
  std::vector<float> x(48), scratch(48);
  std::vector<uint8_t> out(256);
  // 48 is not whole 32-element blocks.
  EXPECT_EQ(ConvertRow(GGML_TYPE_F32, x.data(), GGML_TYPE_Q8_0, out.data(), 48, scratch.data()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ConvertRow(GGML_TYPE_F32, x.data(), GGML_TYPE_Q8_1, out.data(), 32, scratch.data()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ConvertRow(GGML_TYPE_I8, x.data(), GGML_TYPE_F32, out.data(), 32, scratch.data()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(QuantizeRowRef(GGML_TYPE_F16, x.data(), out.data(), 32).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace whisper
