// GGML_CPU_TARGET is read once, at the first kernel call of the process. Each test binary is a
// fresh process, so this file holds exactly one test.
#include <stdlib.h>

#include <vector>

#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "kernels/dispatch.h"
#include "kernels/vec.h"

namespace ggml_cpu {
namespace {

TEST(DispatchEnvTest, EnvironmentCapsTheFirstUse) {
  // Expected: the best CPU-supported target not above SSE4 (SSE4 itself on any x86-64-v2 CPU).
  int64_t want = 0;
  for (int64_t bits = hwy::SupportedTargets() & HWY_TARGETS; bits != 0; bits &= bits - 1) {
    const int64_t bit = bits & -bits;
    if (bit >= HWY_SSE4) {
      want = bit;
      break;
    }
  }
  ASSERT_NE(want, 0);
  ASSERT_EQ(setenv("GGML_CPU_TARGET", "sse4", 1), 0);
  const float a[3] = {1, 2, 3};
  EXPECT_EQ(DotF32(3, a, a), 14.0f);  // first use: applies the environment
  EXPECT_STREQ(ggml_cpu_target_name(), hwy::TargetName(want));
  // Read only once: changing the variable later has no effect.
  ASSERT_EQ(setenv("GGML_CPU_TARGET", "scalar", 1), 0);
  EXPECT_STREQ(ggml_cpu_target_name(), hwy::TargetName(want));
}

}  // namespace
}  // namespace ggml_cpu
