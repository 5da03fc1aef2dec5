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
  // Expected: the best CPU-supported target not above the cap: SSE4 itself on any x86-64-v2 CPU,
  // NEON on any A64 CPU (NEON is the lowest SIMD target there, so the cap leaves only it and
  // SCALAR).
#if HWY_ARCH_X86
  const int64_t cap = HWY_SSE4;
#elif HWY_ARCH_ARM_A64
  const int64_t cap = HWY_NEON;
#else
#error "dispatch_env_test: pick a cap target for this architecture"
#endif
  int64_t want = 0;
  for (int64_t bits = hwy::SupportedTargets() & HWY_TARGETS; bits != 0; bits &= bits - 1) {
    const int64_t bit = bits & -bits;
    if (bit >= cap) {
      want = bit;
      break;
    }
  }
  ASSERT_NE(want, 0);
  ASSERT_EQ(setenv("GGML_CPU_TARGET", hwy::TargetName(cap), 1), 0);
  const float a[3] = {1, 2, 3};
  float y[3];
  AddF32(3, a, a, y);  // first use: applies the environment
  EXPECT_EQ(y[2], 6.0f);
  EXPECT_STREQ(ggml_cpu_target_name(), hwy::TargetName(want));
  // Read only once: changing the variable later has no effect.
  ASSERT_EQ(setenv("GGML_CPU_TARGET", "scalar", 1), 0);
  EXPECT_STREQ(ggml_cpu_target_name(), hwy::TargetName(want));
}

}  // namespace
}  // namespace ggml_cpu
