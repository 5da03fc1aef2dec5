// Fused attention entry points (kernels/flash_attn.h): argument checks, then one
// HWY_DYNAMIC_DISPATCH per call into the per-target code of flash_attn-inl.h.
#include "kernels/flash_attn.h"

#include <stddef.h>
#include <stdint.h>

#include <string>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/flash_attn.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/flash_attn-inl.h"
#include "kernels/flash_attn_int8-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ggml_cpu {
namespace HWY_NAMESPACE {

size_t FlashAttnWorkFloats(size_t d_k, size_t d_v, size_t n_kv) {
  const size_t f32 = FlashAttnLayoutFor(hn::ScalableTag<float>(), d_k, d_v, n_kv).total;
  const size_t int8 = (fa8::Layout8For(d_k, d_v, n_kv).total + sizeof(float) - 1) / sizeof(float);
  return HWY_MAX(f32, int8);
}

void FlashAttnRun(const FlashAttnKV& kv, const FlashAttnQueries& qs, float* work) {
  if (kv.int8) {
    fa8::FlashAttnHeadInt8(kv, qs, reinterpret_cast<uint8_t*>(work));
  } else {
    FlashAttnHead(hn::ScalableTag<float>(), kv, qs, work);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace ggml_cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "absl/strings/str_format.h"
#include "kernels/asan_ranges.h"
#include "kernels/dispatch.h"

namespace ggml_cpu {

HWY_EXPORT(FlashAttnWorkFloats);
HWY_EXPORT(FlashAttnRun);

namespace {

constexpr size_t kWorkAlign = 64;  // the K/V panels are read with aligned vector loads

absl::Status Invalid(const std::string& what) { return absl::InvalidArgumentError("FlashAttn: " + what); }

// Exactly one of the f16 / f32 pointers of an operand.
absl::Status CheckOperand(const char* name, const void* f16, const void* f32, size_t ld, size_t width) {
  if ((f16 == nullptr) == (f32 == nullptr)) {
    return Invalid(absl::StrFormat("%s: exactly one of %s_f16 / %s_f32 must be set", name, name, name));
  }
  if (ld < width) return Invalid(absl::StrFormat("ld%s=%zu < row width %zu", name, ld, width));
  return absl::OkStatus();
}

}  // namespace

size_t FlashAttnWorkSize(size_t d_k, size_t d_v, size_t n_kv) {
  InitDispatchOnce();
  return HWY_DYNAMIC_DISPATCH(FlashAttnWorkFloats)(d_k, d_v, n_kv) * sizeof(float) + kWorkAlign;
}

absl::Status FlashAttn(const FlashAttnKV& kv, const FlashAttnQueries& qs, void* work, size_t work_size) {
  if (qs.n_q == 0) return absl::OkStatus();
  if (kv.d_k == 0 || kv.d_v == 0 || kv.n_kv == 0) {
    return Invalid(absl::StrFormat("d_k=%zu, d_v=%zu and n_kv=%zu must all be >= 1", kv.d_k, kv.d_v, kv.n_kv));
  }
  absl::Status s = CheckOperand("k", kv.k_f16, kv.k_f32, kv.ldk, kv.d_k);
  if (s.ok()) s = CheckOperand("v", kv.v_f16, kv.v_f32, kv.ldv, kv.d_v);
  if (!s.ok()) return s;
  if (kv.int8 && kv.d_k % 32 != 0) {
    return Invalid(absl::StrFormat("int8 needs d_k a multiple of 32, got d_k=%zu", kv.d_k));
  }
  if (qs.q == nullptr || qs.out == nullptr) return Invalid(qs.q == nullptr ? "q is null" : "out is null");
  if (qs.ldq < kv.d_k) return Invalid(absl::StrFormat("ldq=%zu < d_k=%zu", qs.ldq, kv.d_k));
  if (qs.ld_out < kv.d_v) return Invalid(absl::StrFormat("ld_out=%zu < d_v=%zu", qs.ld_out, kv.d_v));
  if (qs.mask_f32 != nullptr && qs.mask_f16 != nullptr) return Invalid("both mask_f32 and mask_f16 are set");
  const bool masked = qs.mask_f32 != nullptr || qs.mask_f16 != nullptr;
  if (masked && qs.ld_mask < kv.n_kv) return Invalid(absl::StrFormat("ld_mask=%zu < n_kv=%zu", qs.ld_mask, kv.n_kv));
  const size_t need = FlashAttnWorkSize(kv.d_k, kv.d_v, kv.n_kv);
  if (work == nullptr || work_size < need) {
    return Invalid(absl::StrFormat("work_size=%zu (work %s) < FlashAttnWorkSize()=%zu", work_size,
                                   work == nullptr ? "null" : "given", need));
  }
  if (AsanRuntimePresent()) {  // this file may be built without ASan (kernels/asan_ranges.h)
    const size_t ek = kv.k_f16 != nullptr ? 2 : 4, ev = kv.v_f16 != nullptr ? 2 : 4;
    AsanCheckRows("FlashAttn", "k", kv.k_f16 != nullptr ? static_cast<const void*>(kv.k_f16) : kv.k_f32, kv.n_kv,
                  kv.d_k * ek, kv.ldk * ek);
    AsanCheckRows("FlashAttn", "v", kv.v_f16 != nullptr ? static_cast<const void*>(kv.v_f16) : kv.v_f32, kv.n_kv,
                  kv.d_v * ev, kv.ldv * ev);
    AsanCheckRows("FlashAttn", "q", qs.q, qs.n_q, kv.d_k * 4, qs.ldq * 4);
    AsanCheckRows("FlashAttn", "out", qs.out, qs.n_q, kv.d_v * 4, qs.ld_out * 4);
    if (masked) {
      const size_t em = qs.mask_f16 != nullptr ? 2 : 4;
      AsanCheckRows("FlashAttn", "mask", qs.mask_f16 != nullptr ? static_cast<const void*>(qs.mask_f16) : qs.mask_f32,
                    qs.n_q, kv.n_kv * em, qs.ld_mask * em);
    }
    AsanCheckRows("FlashAttn", "work", work, 1, need, 0);
  }
  const uintptr_t p = reinterpret_cast<uintptr_t>(work);
  float* aligned = reinterpret_cast<float*>((p + kWorkAlign - 1) & ~uintptr_t{kWorkAlign - 1});
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(FlashAttnRun)(kv, qs, aligned);
  return absl::OkStatus();
}

}  // namespace ggml_cpu
#endif  // HWY_ONCE
