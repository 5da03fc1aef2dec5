// Per-target conversion between f16 (ggml_fp16_t: IEEE binary16 as uint16_t bits) and f32
// vectors, bit-exact with ggml/fp16.h on every target: round to nearest even, NaN stays a quiet
// NaN, overflow goes to +-inf, subnormals are kept.
//
// Why not just hn::PromoteTo/DemoteTo everywhere: where the hardware converts, Highway 1.0.3 uses
// it, and the hardware is exact and rounds to nearest even: x86 with F16C (AVX2, AVX3, AVX3_DL:
// vcvtph2ps / vcvtps2ph) and every A64 target (NEON's fcvtl / fcvtn, SVE's fcvt; __ARM_FP has
// the half-precision bit on all of A64). On SSE4, SSSE3, EMU128 and SCALAR it emulates both
// directions in software that truncates instead of rounding and maps inf/NaN to finite values,
// so those targets use the integer code below. GGML_WHISPER_HW_F16 says which applies to the
// target being compiled (Highway's HWY_HAVE_FLOAT16 does not: it is 1 on SSSE3 too).
//
// Include after hwy/highway.h, inside the foreach_target dance (textual header).
#if defined(GGML_WHISPER_KERNELS_FP16_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef GGML_WHISPER_KERNELS_FP16_INL_H_
#undef GGML_WHISPER_KERNELS_FP16_INL_H_
#else
#define GGML_WHISPER_KERNELS_FP16_INL_H_
#endif

#include <stdint.h>

#include "hwy/highway.h"

#undef GGML_WHISPER_HW_F16
#if (HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2) || \
    (HWY_ARCH_ARM_A64 && (HWY_TARGET & (HWY_NEON | HWY_SVE | HWY_SVE2 | HWY_SVE_256 | HWY_SVE2_128)))
#define GGML_WHISPER_HW_F16 1
#else
#define GGML_WHISPER_HW_F16 0
#endif

HWY_BEFORE_NAMESPACE();
namespace ggml_cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Widens hn::Lanes(df) f16 values (the bits, as uint16 lanes) to f32 exactly.
template <class DF>
HWY_INLINE hn::Vec<DF> F16BitsToF32(DF df, hn::Vec<hn::Rebind<uint16_t, DF>> h16) {
#if GGML_WHISPER_HW_F16
  const hn::Rebind<hwy::float16_t, DF> dh;
  return hn::PromoteTo(df, hn::BitCast(dh, h16));
#else
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const auto h = hn::PromoteTo(du, h16);
  const auto sign = hn::ShiftLeft<16>(hn::And(h, hn::Set(du, 0x8000u)));
  const auto em = hn::And(h, hn::Set(du, 0x7FFFu));      // exponent and mantissa
  const auto exp = hn::And(em, hn::Set(du, 0x7C00u));
  const auto rebias = hn::Set(du, 112u << 23);           // 127 - 15
  auto bits = hn::Add(hn::ShiftLeft<13>(em), rebias);    // normal numbers
  const auto inf_nan = hn::Eq(exp, hn::Set(du, 0x7C00u));
  bits = hn::IfThenElse(inf_nan, hn::Add(bits, rebias), bits);
  // Quiet a signalling NaN, as vcvtph2ps does, so that every target gives the same bits.
  const auto is_nan = hn::And(inf_nan, hn::Ne(hn::And(em, hn::Set(du, 0x3FFu)), hn::Zero(du)));
  bits = hn::IfThenElse(is_nan, hn::Or(bits, hn::Set(du, 0x00400000u)), bits);
  // Zero and subnormals: em * 2^-24 is exact in f32.
  const auto sub = hn::BitCast(du, hn::Mul(hn::ConvertTo(df, hn::BitCast(di, em)),
                                           hn::Set(df, 5.9604644775390625e-8f)));
  bits = hn::IfThenElse(hn::Eq(exp, hn::Zero(du)), sub, bits);
  return hn::BitCast(df, hn::Or(bits, sign));
#endif
}

// Loads hn::Lanes(df) f16 values from `p` (any alignment) and widens them to f32 exactly.
template <class DF>
HWY_INLINE hn::Vec<DF> LoadF16AsF32(DF df, const uint16_t* HWY_RESTRICT p) {
  const hn::Rebind<uint16_t, DF> du16;
  return F16BitsToF32(df, hn::LoadU(du16, p));
}

// Narrows `v` to f16 (round to nearest even) and stores hn::Lanes(df) values to `p` (any alignment).
template <class DF>
HWY_INLINE void StoreF32AsF16(DF df, hn::Vec<DF> v, uint16_t* HWY_RESTRICT p) {
#if GGML_WHISPER_HW_F16
  const hn::Rebind<hwy::float16_t, DF> dh;
  hn::StoreU(hn::DemoteTo(dh, v), dh, reinterpret_cast<hwy::float16_t*>(p));
#else
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<uint16_t, DF> du16;
  const auto x = hn::BitCast(di, v);
  const auto sign = hn::And(hn::ShiftRight<16>(x), hn::Set(di, 0x8000));
  const auto abs = hn::And(x, hn::Set(di, 0x7FFFFFFF));
  // Normal result: rebias the exponent, round the 13 dropped bits to nearest even (a carry into
  // the exponent is the correct rounding).
  const auto rebased = hn::Sub(abs, hn::Set(di, 0x38000000));
  const auto odd = hn::And(hn::ShiftRight<13>(rebased), hn::Set(di, 1));
  const auto normal =
      hn::ShiftRight<13>(hn::Add(hn::Add(rebased, hn::Set(di, 0xFFF)), odd));
  // Subnormal or zero result (|x| < 2^-14): adding 0.5f rounds |x| to a multiple of 2^-24 (the
  // f16 subnormal step) with the FPU's round-to-nearest-even; the low bits are then the result.
  const auto sub = hn::Sub(hn::BitCast(di, hn::Add(hn::BitCast(df, abs), hn::Set(df, 0.5f))),
                           hn::Set(di, 0x3F000000));
  const auto nan = hn::Or(hn::Set(di, 0x7E00), hn::And(hn::ShiftRight<13>(abs), hn::Set(di, 0x3FF)));
  auto r = hn::IfThenElse(hn::Gt(hn::Set(di, 0x38800000), abs), sub, normal);
  r = hn::IfThenElse(hn::Gt(abs, hn::Set(di, 0x477FEFFF)), hn::Set(di, 0x7C00), r);  // >= 65520: inf
  r = hn::IfThenElse(hn::Gt(abs, hn::Set(di, 0x7F800000)), nan, r);
  hn::StoreU(hn::DemoteTo(du16, hn::Or(r, sign)), du16, p);
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace ggml_cpu
HWY_AFTER_NAMESPACE();

#endif  // GGML_WHISPER_KERNELS_FP16_INL_H_
