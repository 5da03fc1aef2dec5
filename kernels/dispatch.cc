// Target reporting and capping for kernels/ (see dispatch.h). This file is itself compiled per
// target so that HWY_DYNAMIC_DISPATCH of CurrentTarget() answers exactly what the kernel
// families (built with the same defines) dispatch to.
#include "kernels/dispatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include <mutex>

#include "ggml/ggml.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/dispatch.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ggml_cpu {
namespace HWY_NAMESPACE {

// The HWY_* bit of the target this copy was compiled for.
int64_t CurrentTarget() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace ggml_cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ggml_cpu {
HWY_EXPORT(CurrentTarget);

namespace internal {
std::atomic<bool> g_dispatch_ready{false};
}  // namespace internal

namespace {

// Looks `name` up among the compiled targets; returns its bit or 0.
int64_t TargetBitFromName(const char* name) {
  for (int64_t bits = HWY_TARGETS; bits != 0; bits &= bits - 1) {
    const int64_t bit = bits & -bits;
    if (strcasecmp(name, hwy::TargetName(bit)) == 0) return bit;
  }
  return 0;
}

// Logs (through ggml_log_set's callback) that `name` is no compiled target, listing them: an
// error that ggml_last_error() returns too, or a warning when the name is only ignored.
void LogAcceptedNames(const char* what, const char* name, bool is_error) {
  char names[256] = "";
  size_t used = 0;
  for (int64_t bits = HWY_TARGETS; bits != 0 && used < sizeof(names); bits &= bits - 1) {
    const int n = snprintf(names + used, sizeof(names) - used, " %s", hwy::TargetName(bits & -bits));
    if (n < 0) break;
    used += static_cast<size_t>(n);
  }
  const char* fmt = "ggml_cpu: %s: unknown target \"%s\"; expected one of:%s (or empty for no limit)";
  if (is_error) {
    ggml_set_error(fmt, what, name, names);
  } else {
    ggml_log_internal(GGML_LOG_LEVEL_WARN, fmt, what, name, names);
  }
}

// Lower bits are better targets, so capping at `bit` disables every bit below it.
// The limit in force (a target bit, 0 for none).
std::atomic<int64_t> g_limit{0};

void ApplyLimit(int64_t bit) {
  g_limit.store(bit, std::memory_order_relaxed);
  hwy::DisableTargets(bit == 0 ? 0 : bit - 1);
}

}  // namespace

namespace internal {
void InitDispatchSlow() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = getenv("GGML_CPU_TARGET");
    if (env != nullptr && env[0] != '\0') {
      const int64_t bit = TargetBitFromName(env);
      if (bit == 0) {
        LogAcceptedNames("GGML_CPU_TARGET (ignored)", env, /*is_error=*/false);
      } else {
        ApplyLimit(bit);
      }
    }
    g_dispatch_ready.store(true, std::memory_order_release);
  });
}
}  // namespace internal

std::vector<int64_t> CompiledAndSupportedTargets() {
  InitDispatchOnce();
  std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  // On aarch64, Highway 1.0.3's SupportedAndGeneratedTargets() leaves the chosen target at
  // SVE2 on a CPU whose best target is SVE2_128 or SVE_256 (seen under qemu-aarch64 -cpu
  // max,sve-max-vq=1 and =2): re-applying the limit makes the next dispatch choose again.
  ApplyLimit(g_limit.load(std::memory_order_relaxed));
  return targets;
}

// The target the kernels dispatch to now. In this namespace so that HWY_DYNAMIC_DISPATCH's
// unqualified name also resolves when Highway compiles one static target (the fuzz config).
static int64_t DispatchedTarget() { return HWY_DYNAMIC_DISPATCH(CurrentTarget)(); }

}  // namespace ggml_cpu

extern "C" const char* ggml_cpu_target_name(void) {
  ggml_cpu::InitDispatchOnce();
  return hwy::TargetName(ggml_cpu::DispatchedTarget());
}

extern "C" bool ggml_cpu_set_target_limit(const char* name) {
  ggml_cpu::InitDispatchOnce();  // so that a later first kernel call does not re-apply the env
  if (name == nullptr || name[0] == '\0') {
    ggml_cpu::ApplyLimit(0);
    return true;
  }
  const int64_t bit = ggml_cpu::TargetBitFromName(name);
  if (bit == 0) {
    ggml_cpu::LogAcceptedNames("ggml_cpu_set_target_limit", name, /*is_error=*/true);
    return false;
  }
  ggml_cpu::ApplyLimit(bit);
  return true;
}
#endif  // HWY_ONCE
