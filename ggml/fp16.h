// IEEE 754 binary16 <-> binary32 conversion, bit-exact with ggml's scalar path
// (round to nearest, ties to even; NaN stays NaN; overflow goes to +-inf; subnormals kept).
#ifndef GGML_WHISPER_GGML_FP16_H_
#define GGML_WHISPER_GGML_FP16_H_

#include <stdint.h>
#include <string.h>

// One half-precision value, stored as its 16 raw bits (ggml's ggml_fp16_t).
typedef uint16_t ggml_fp16_t;

// Exact: every binary16 value is representable in binary32.
static inline float ggml_fp16_to_fp32(ggml_fp16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  const uint32_t man = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0x1F) {  // inf or NaN: keep the payload, quiet bit included
    bits = sign | 0x7F800000u | (man << 13);
  } else if (exp != 0) {  // normal
    bits = sign | ((exp + 112u) << 23) | (man << 13);
  } else if (man == 0) {  // signed zero
    bits = sign;
  } else {  // subnormal: value = man * 2^-24
    float f = (float)man * 5.9604644775390625e-8f;
    memcpy(&bits, &f, 4);
    bits |= sign;
  }
  float out;
  memcpy(&out, &bits, 4);
  return out;
}

// Round to nearest even. NaN -> quiet NaN with the sign kept; |x| >= 65520 -> inf.
static inline ggml_fp16_t ggml_fp32_to_fp16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return (ggml_fp16_t)(sign | 0x7E00u | ((abs >> 13) & 0x3FFu));  // NaN
  if (abs >= 0x477FF000u) return (ggml_fp16_t)(sign | 0x7C00u);  // rounds to inf (>= 65520)
  if (abs < 0x38800000u) {  // result is subnormal or zero: scale to units of 2^-24
    if (abs < 0x33000000u) return (ggml_fp16_t)sign;  // < 2^-25: rounds to zero
    const uint32_t e = abs >> 23;
    const uint32_t m = (abs & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126u - e;  // 14..24+: m * 2^(e-150) in units of 2^-24
    const uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1u);
    const uint32_t r = q + ((rem > half || (rem == half && (q & 1u))) ? 1u : 0u);
    return (ggml_fp16_t)(sign | r);
  }
  // Normal: rebias exponent, round the 13 dropped mantissa bits to nearest even.
  const uint32_t rebased = abs - 0x38000000u;  // exponent - 112
  const uint32_t q = rebased >> 13;
  const uint32_t rem = rebased & 0x1FFFu;
  const uint32_t r = q + ((rem > 0x1000u || (rem == 0x1000u && (q & 1u))) ? 1u : 0u);
  return (ggml_fp16_t)(sign | r);  // a carry into the exponent is the correct rounding
}

#endif  // GGML_WHISPER_GGML_FP16_H_
