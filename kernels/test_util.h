// Helpers shared by the kernels/ tests: the size sweep, seeded random rows, the dispatch check.
#ifndef GGML_WHISPER_KERNELS_TEST_UTIL_H_
#define GGML_WHISPER_KERNELS_TEST_UTIL_H_

#include <stddef.h>
#include <stdint.h>

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "kernels/dispatch.h"

namespace ggml_cpu {
namespace test {

// Row lengths every kernel is tested at: tails of every vector width (1, 3, 7), around one and
// two AVX-512 vectors of 16 (31, 33), just under a multiple of 64 (255) and a long odd row (4097).
inline const std::vector<size_t>& Sizes() {
  static const std::vector<size_t> kSizes = {1, 3, 7, 31, 33, 255, 4097};
  return kSizes;
}

// n floats uniform in [lo, hi), deterministic in `seed`.
inline std::vector<float> RandomRow(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// n small integers in [-k, k] as floats: sums and products of these are exact in f32 as long as
// the magnitudes stay below 2^24, so any summation order must give the exact result.
inline std::vector<float> IntegerRow(size_t n, uint32_t seed, int k = 8) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-k, k);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(dist(rng));
  return v;
}

// The parameterized suites set hwy's target mock; this checks the kernels really dispatch there.
inline void ExpectDispatchedTo(int64_t target) {
  EXPECT_STREQ(hwy::TargetName(target), ggml_cpu_target_name());
}

}  // namespace test
}  // namespace ggml_cpu

#endif  // GGML_WHISPER_KERNELS_TEST_UTIL_H_
