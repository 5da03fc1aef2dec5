// ggml_cpu_target_name / ggml_cpu_set_target_limit: the cap really changes which code runs.
#include "kernels/dispatch.h"

#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

#include "ggml/ggml.h"
#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "kernels/vec.h"

namespace ggml_cpu {
namespace {

TEST(DispatchTest, NameIsBestSupportedTarget) {
  const std::vector<int64_t> targets = CompiledAndSupportedTargets();
  ASSERT_FALSE(targets.empty());
  EXPECT_STREQ(ggml_cpu_target_name(), hwy::TargetName(targets[0]));
}

TEST(DispatchTest, LimitEachTargetThenRestore) {
  const std::vector<int64_t> targets = CompiledAndSupportedTargets();
  const std::string best = ggml_cpu_target_name();
  const float a[5] = {1, 2, 3, 4, 5}, b[5] = {5, 4, 3, 2, 1};
  float y[5];
  for (int64_t t : targets) {
    ASSERT_TRUE(ggml_cpu_set_target_limit(hwy::TargetName(t)));
    EXPECT_STREQ(ggml_cpu_target_name(), hwy::TargetName(t));
    AddF32(5, a, b, y);  // kernels keep working under the cap
    for (float v : y) EXPECT_EQ(v, 6.0f);
  }
  ASSERT_TRUE(ggml_cpu_set_target_limit(""));
  EXPECT_EQ(ggml_cpu_target_name(), best);
  // Lower case is accepted; the lowest target (SCALAR) is always compiled and supported.
  ASSERT_TRUE(ggml_cpu_set_target_limit("scalar"));
  EXPECT_STREQ(ggml_cpu_target_name(), "SCALAR");
  ASSERT_TRUE(ggml_cpu_set_target_limit(nullptr));
  EXPECT_EQ(ggml_cpu_target_name(), best);
}

// The CPU model decides the target: tools/test_aarch64.sh runs this binary under qemu-aarch64
// with GGML_EXPECT_TARGET set per -cpu model (NEON on cortex-a53, SVE2_128 on a 128-bit SVE2
// CPU, SVE_256 at 256 bits, SVE2 at 512, SVE on a64fx). Skipped when unset.
TEST(DispatchTest, DispatchesToTheExpectedTarget) {
  const char* want = getenv("GGML_EXPECT_TARGET");
  if (want == nullptr || want[0] == '\0') GTEST_SKIP() << "GGML_EXPECT_TARGET is not set";
  EXPECT_STREQ(ggml_cpu_target_name(), want);
}

TEST(DispatchTest, UnknownNameIsAnErrorAndKeepsTheCap) {
  const std::string before = ggml_cpu_target_name();
  EXPECT_FALSE(ggml_cpu_set_target_limit("AVX9"));
  EXPECT_FALSE(ggml_cpu_set_target_limit("AVX2 "));
  EXPECT_EQ(ggml_cpu_target_name(), before);
}

struct Logged {
  ggml_log_level level;
  std::string text;
};

void Collect(ggml_log_level level, const char* text, void* user) {
  static_cast<std::vector<Logged>*>(user)->push_back({level, text});
}

// The message goes to the callback an embedding program set with ggml_log_set (not to stderr):
// one error naming the bad name and every compiled target.
TEST(DispatchTest, UnknownNameIsLoggedThroughGgmlsCallback) {
  std::vector<Logged> got;
  ggml_log_set(Collect, &got);
  EXPECT_FALSE(ggml_cpu_set_target_limit("AVX9"));
  ggml_log_set(nullptr, nullptr);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].level, GGML_LOG_LEVEL_ERROR);
  std::string want = "ggml_cpu_set_target_limit: unknown target \"AVX9\"; expected one of:";
  for (int64_t bits = HWY_TARGETS; bits != 0; bits &= bits - 1) want += std::string(" ") + hwy::TargetName(bits & -bits);
  want += " (or empty for no limit)";
  EXPECT_EQ(got[0].text, "ggml_cpu: " + want);
}

}  // namespace
}  // namespace ggml_cpu
