// Helpers shared by the quant* tests: ggml's test data, float references, raw random blocks.
#ifndef GGML_WHISPER_KERNELS_QUANT_TEST_UTIL_H_
#define GGML_WHISPER_KERNELS_QUANT_TEST_UTIL_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmath>
#include <random>
#include <type_traits>
#include <vector>

#include "ggml/fp16.h"
#include "kernels/quant_types.h"

namespace ggml_cpu {
namespace quant_test {

// ggml's test-quantize-fns data: x[i] = 0.1 + 2 cos(i + offset).
inline std::vector<float> GgmlTestData(size_t n, float offset) {
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = 0.1f + 2.0f * std::cos(static_cast<float>(i) + offset);
  return x;
}

// ggml's thresholds (test-quantize-fns.cpp): MAX_QUANTIZATION_TOTAL_ERROR, MAX_DOT_PRODUCT_ERROR.
inline constexpr double kMaxRoundTripError = 0.002;
inline constexpr double kMaxDotProductError = 0.02;

// ggml's round-trip metric: sqrt(sum (a - b)^2) / n.
inline double RoundTripError(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double diff = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    sum += diff * diff;
  }
  return std::sqrt(sum) / static_cast<double>(a.size());
}

inline double DoubleDot(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0.0;
  for (size_t i = 0; i < a.size(); ++i) sum += static_cast<double>(a[i]) * b[i];
  return sum;
}

// A finite fp16 value of magnitude in [2^lo_exp, 2^(hi_exp+1)) with random sign.
inline ggml_fp16_t RandomScale(std::mt19937& rng, int lo_exp = -10, int hi_exp = 2) {
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  std::uniform_int_distribution<int> ex(lo_exp, hi_exp);
  std::bernoulli_distribution neg(0.5);
  const float v = std::ldexp(mant(rng), ex(rng)) * (neg(rng) ? -1.0f : 1.0f);
  return ggml_fp32_to_fp16(v);
}

// Leading fp16 fields of a block: d, plus m (Q4_1, Q5_1) or s (Q8_1).
template <class Block>
constexpr size_t NumF16Fields() {
  return std::is_same_v<Block, block_q4_1> || std::is_same_v<Block, block_q5_1> ||
                 std::is_same_v<Block, block_q8_1>
             ? 2
             : 1;
}

// `count` blocks whose code bytes (qs, qh) are uniformly random, so every code value and bit
// pattern occurs, and whose fp16 fields are random finite scales. Codes of Q8 blocks include
// -128, which the quantizers never produce but vec_dot must handle.
template <class Block>
std::vector<Block> RandomBlocks(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<Block> blocks(count);
  for (Block& b : blocks) {
    uint8_t* raw = reinterpret_cast<uint8_t*>(&b);
    for (size_t i = 0; i < sizeof(Block); ++i) raw[i] = static_cast<uint8_t>(byte(rng));
    // Overwrite the leading fp16 fields (d, and m or s when present) with finite scales.
    for (size_t f = 0; f < NumF16Fields<Block>(); ++f) {
      const ggml_fp16_t h = RandomScale(rng);
      memcpy(raw + 2 * f, &h, 2);
    }
  }
  return blocks;
}

}  // namespace quant_test
}  // namespace ggml_cpu

#endif  // GGML_WHISPER_KERNELS_QUANT_TEST_UTIL_H_
