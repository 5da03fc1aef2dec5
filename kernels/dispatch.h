// Run-time target selection shared by every kernel family in kernels/.
//
// Each kernel family (vec, activations, norm, softmax, matmul, conv, quant_ops) is compiled once
// per Highway target in HWY_TARGETS and picks one with HWY_DYNAMIC_DISPATCH on each call:
//   x86-64:  AVX3_DL, AVX3, AVX2, SSE4, SSSE3, SCALAR (see BUILD.bazel for why HWY_WANT_AVX3_DL
//            is defined);
//   aarch64: SVE2_128, SVE_256, SVE2, SVE, NEON, SCALAR (--config=aarch64). Highway picks
//            SVE2_128 on SVE2 CPUs with 128-bit vectors (e.g. Neoverse N2), SVE_256 on SVE CPUs
//            with 256-bit vectors (e.g. Neoverse V1), else SVE2 or SVE at any vector length,
//            else NEON (every A64 CPU).
// This file lets a caller see and cap that choice:
//
//   - ggml_cpu_target_name(): the target the kernels dispatch to now.
//   - ggml_cpu_set_target_limit("AVX2"): never dispatch above AVX2 (for A/B runs or to avoid
//     AVX-512 frequency drops; "NEON" keeps an SVE CPU on NEON). The environment variable
//     GGML_CPU_TARGET=AVX2 does the same, applied once, at the first kernel call (or the first
//     call to a function below). Targets are ordered as Highway orders their bits (lower is
//     better), within each architecture.
//
// The limit is process-wide (it calls hwy::DisableTargets); change it only while no kernel runs.
#ifndef GGML_WHISPER_KERNELS_DISPATCH_H_
#define GGML_WHISPER_KERNELS_DISPATCH_H_

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
#include <atomic>
#include <vector>
extern "C" {
#endif

// Returns the Highway name ("AVX3_DL", ..., "SSSE3", "SVE2_128", ..., "NEON", "SCALAR") of the target
// that kernel calls dispatch to now: the best target that is compiled in, supported by this CPU
// and not above the limit. Never NULL; the string is static.
const char* ggml_cpu_target_name(void);

// Caps dispatch at the target called `name` (case-insensitive, one of the names above that this
// build compiled). Targets the CPU lacks are skipped anyway, so a cap above the CPU's best target
// changes nothing. NULL or "" removes the cap. Returns false, logs the accepted names to stderr
// and leaves the current cap unchanged if `name` is unknown. Not thread-safe against running
// kernels.
bool ggml_cpu_set_target_limit(const char* name);

#ifdef __cplusplus
}  // extern "C"

namespace ggml_cpu {

// The targets (HWY_* bits) that are compiled into kernels/ and supported by this CPU under the
// current cap and any hwy::SetSupportedTargetsForTest mock, best first. Tests loop over these.
std::vector<int64_t> CompiledAndSupportedTargets();

namespace internal {
extern std::atomic<bool> g_dispatch_ready;
void InitDispatchSlow();
}  // namespace internal

// Applies GGML_CPU_TARGET on the first call; afterwards one relaxed atomic load. Every public
// kernel wrapper calls this before HWY_DYNAMIC_DISPATCH.
inline void InitDispatchOnce() {
  if (!internal::g_dispatch_ready.load(std::memory_order_acquire)) internal::InitDispatchSlow();
}

}  // namespace ggml_cpu
#endif  // __cplusplus

#endif  // GGML_WHISPER_KERNELS_DISPATCH_H_
