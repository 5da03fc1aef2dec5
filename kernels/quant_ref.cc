#include "kernels/quant_ref.h"

#include <math.h>

#include "ggml/fp16.h"

namespace ggml_cpu {
namespace {

constexpr int kHalf = kQK / 2;

// C's (int)v truncation toward zero, limited to [lo, hi]: identical to ggml's
// min(hi, (int8_t)v) whenever v > lo - 1 is finite; NaN gives lo instead of undefined behavior.
inline int TruncToCode(float v, int lo, int hi) {
  if (!(v > static_cast<float>(lo))) return lo;
  if (v >= static_cast<float>(hi)) return hi;
  return static_cast<int>(v);
}

// roundf (ties away from zero) limited to [-127, 127]; NaN gives 0.
inline int RoundToQ8(float v) {
  if (!(v == v)) return 0;
  const float r = roundf(v);
  if (r >= 127.0f) return 127;
  if (r <= -127.0f) return -127;
  return static_cast<int>(r);
}

// The element of largest magnitude with its sign; the first one wins ties (ggml's `amax < |v|`).
inline float SignedAbsMax(const float* x) {
  float amax = 0.0f;
  float max = 0.0f;
  for (int j = 0; j < kQK; ++j) {
    if (amax < fabsf(x[j])) {
      amax = fabsf(x[j]);
      max = x[j];
    }
  }
  return max;
}

inline void MinMax(const float* x, float* min, float* max) {
  *min = 3.402823466e+38f;
  *max = -3.402823466e+38f;
  for (int j = 0; j < kQK; ++j) {
    if (x[j] < *min) *min = x[j];
    if (x[j] > *max) *max = x[j];
  }
}

// max |x|; equals ggml's MAX(amax, fabsf(v)) chain except that NaN elements are skipped (ggml
// lets a NaN reset the running maximum, which no SIMD max reproduces).
inline float AbsMax(const float* x) {
  float amax = 0.0f;
  for (int j = 0; j < kQK; ++j) {
    const float a = fabsf(x[j]);
    if (a > amax) amax = a;
  }
  return amax;
}

inline float Inverse(float d) { return d != 0.0f ? 1.0f / d : 0.0f; }

inline uint32_t LoadQh(const uint8_t qh[4]) {
  return static_cast<uint32_t>(qh[0]) | static_cast<uint32_t>(qh[1]) << 8 |
         static_cast<uint32_t>(qh[2]) << 16 | static_cast<uint32_t>(qh[3]) << 24;
}

inline void StoreQh(uint32_t qh, uint8_t out[4]) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(qh >> (8 * i));
}

// Packs 32 codes of 4 bits into qs (element j low nibble, j + 16 high nibble) and, for 5-bit
// codes, their bit 4 into qh.
inline void PackNibbles(const int* q, uint8_t* qs) {
  for (int j = 0; j < kHalf; ++j) {
    qs[j] = static_cast<uint8_t>((q[j] & 0x0F) | ((q[j + kHalf] & 0x0F) << 4));
  }
}

inline uint32_t HighBits(const int* q) {
  uint32_t qh = 0;
  for (int j = 0; j < kQK; ++j) qh |= static_cast<uint32_t>((q[j] >> 4) & 1) << j;
  return qh;
}

// Codes of the 4- and 5-bit blocks, element order, without the offset (q in [0, 2^bits)).
inline void UnpackNibbles(const uint8_t* qs, int* q) {
  for (int j = 0; j < kHalf; ++j) {
    q[j] = qs[j] & 0x0F;
    q[j + kHalf] = qs[j] >> 4;
  }
}

inline void UnpackQ5(const uint8_t* qs, const uint8_t* qh_bytes, int* q) {
  UnpackNibbles(qs, q);
  const uint32_t qh = LoadQh(qh_bytes);
  for (int j = 0; j < kQK; ++j) q[j] |= static_cast<int>((qh >> j) & 1) << 4;
}

}  // namespace

void quantize_row_q4_0_ref(const float* x, block_q4_0* y, int64_t k) {
  for (int64_t i = 0; i < k / kQK; ++i, x += kQK) {
    const float d = SignedAbsMax(x) / -8.0f;
    const float id = Inverse(d);
    y[i].d = ggml_fp32_to_fp16(d);
    int q[kQK];
    for (int j = 0; j < kQK; ++j) q[j] = TruncToCode(x[j] * id + 8.5f, 0, 15);
    PackNibbles(q, y[i].qs);
  }
}

void quantize_row_q4_1_ref(const float* x, block_q4_1* y, int64_t k) {
  for (int64_t i = 0; i < k / kQK; ++i, x += kQK) {
    float min, max;
    MinMax(x, &min, &max);
    const float d = (max - min) / 15.0f;
    const float id = Inverse(d);
    y[i].d = ggml_fp32_to_fp16(d);
    y[i].m = ggml_fp32_to_fp16(min);
    int q[kQK];
    for (int j = 0; j < kQK; ++j) q[j] = TruncToCode((x[j] - min) * id + 0.5f, 0, 15);
    PackNibbles(q, y[i].qs);
  }
}

void quantize_row_q5_0_ref(const float* x, block_q5_0* y, int64_t k) {
  for (int64_t i = 0; i < k / kQK; ++i, x += kQK) {
    const float d = SignedAbsMax(x) / -16.0f;
    const float id = Inverse(d);
    y[i].d = ggml_fp32_to_fp16(d);
    int q[kQK];
    for (int j = 0; j < kQK; ++j) q[j] = TruncToCode(x[j] * id + 16.5f, 0, 31);
    PackNibbles(q, y[i].qs);
    StoreQh(HighBits(q), y[i].qh);
  }
}

void quantize_row_q5_1_ref(const float* x, block_q5_1* y, int64_t k) {
  for (int64_t i = 0; i < k / kQK; ++i, x += kQK) {
    float min, max;
    MinMax(x, &min, &max);
    const float d = (max - min) / 31.0f;
    const float id = Inverse(d);
    y[i].d = ggml_fp32_to_fp16(d);
    y[i].m = ggml_fp32_to_fp16(min);
    int q[kQK];
    // ggml has no upper clamp here; for a normal scale the code cannot exceed 31.
    for (int j = 0; j < kQK; ++j) q[j] = TruncToCode((x[j] - min) * id + 0.5f, 0, 31);
    PackNibbles(q, y[i].qs);
    StoreQh(HighBits(q), y[i].qh);
  }
}

void quantize_row_q8_0_ref(const float* x, block_q8_0* y, int64_t k) {
  for (int64_t i = 0; i < k / kQK; ++i, x += kQK) {
    const float d = AbsMax(x) / 127.0f;
    const float id = Inverse(d);
    y[i].d = ggml_fp32_to_fp16(d);
    for (int j = 0; j < kQK; ++j) y[i].qs[j] = static_cast<int8_t>(RoundToQ8(x[j] * id));
  }
}

void quantize_row_q8_1_ref(const float* x, block_q8_1* y, int64_t k) {
  for (int64_t i = 0; i < k / kQK; ++i, x += kQK) {
    const float d = AbsMax(x) / 127.0f;
    const float id = Inverse(d);
    y[i].d = ggml_fp32_to_fp16(d);
    int sum = 0;
    for (int j = 0; j < kQK; ++j) {
      const int q = RoundToQ8(x[j] * id);
      y[i].qs[j] = static_cast<int8_t>(q);
      sum += q;
    }
    y[i].s = ggml_fp32_to_fp16(static_cast<float>(sum) * d);
  }
}

void dequantize_row_q4_0(const block_q4_0* x, float* y, int64_t k) {
  for (int64_t i = 0; i < k / kQK; ++i, y += kQK) {
    const float d = ggml_fp16_to_fp32(x[i].d);
    int q[kQK];
    UnpackNibbles(x[i].qs, q);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(q[j] - 8) * d;
  }
}

void dequantize_row_q4_1(const block_q4_1* x, float* y, int64_t k) {
  for (int64_t i = 0; i < k / kQK; ++i, y += kQK) {
    const float d = ggml_fp16_to_fp32(x[i].d);
    const float m = ggml_fp16_to_fp32(x[i].m);
    int q[kQK];
    UnpackNibbles(x[i].qs, q);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(q[j]) * d + m;
  }
}

void dequantize_row_q5_0(const block_q5_0* x, float* y, int64_t k) {
  for (int64_t i = 0; i < k / kQK; ++i, y += kQK) {
    const float d = ggml_fp16_to_fp32(x[i].d);
    int q[kQK];
    UnpackQ5(x[i].qs, x[i].qh, q);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(q[j] - 16) * d;
  }
}

void dequantize_row_q5_1(const block_q5_1* x, float* y, int64_t k) {
  for (int64_t i = 0; i < k / kQK; ++i, y += kQK) {
    const float d = ggml_fp16_to_fp32(x[i].d);
    const float m = ggml_fp16_to_fp32(x[i].m);
    int q[kQK];
    UnpackQ5(x[i].qs, x[i].qh, q);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(q[j]) * d + m;
  }
}

void dequantize_row_q8_0(const block_q8_0* x, float* y, int64_t k) {
  for (int64_t i = 0; i < k / kQK; ++i, y += kQK) {
    const float d = ggml_fp16_to_fp32(x[i].d);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(x[i].qs[j]) * d;
  }
}

void dequantize_row_q8_1(const block_q8_1* x, float* y, int64_t k) {
  for (int64_t i = 0; i < k / kQK; ++i, y += kQK) {
    const float d = ggml_fp16_to_fp32(x[i].d);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(x[i].qs[j]) * d;
  }
}

namespace {

// Exact integer sum of code products for one block; `qx` already has its offset removed.
inline int BlockDot(const int* qx, const int8_t* qy) {
  int sum = 0;
  for (int j = 0; j < kQK; ++j) sum += qx[j] * qy[j];
  return sum;
}

}  // namespace

float vec_dot_q4_0_q8_0_ref(int64_t n, const block_q4_0* x, const block_q8_0* y) {
  float sumf = 0.0f;
  for (int64_t i = 0; i < n / kQK; ++i) {
    int q[kQK];
    UnpackNibbles(x[i].qs, q);
    for (int j = 0; j < kQK; ++j) q[j] -= 8;
    const int sumi = BlockDot(q, y[i].qs);
    sumf += static_cast<float>(sumi) * ggml_fp16_to_fp32(x[i].d) * ggml_fp16_to_fp32(y[i].d);
  }
  return sumf;
}

float vec_dot_q4_1_q8_1_ref(int64_t n, const block_q4_1* x, const block_q8_1* y) {
  float sumf = 0.0f;
  for (int64_t i = 0; i < n / kQK; ++i) {
    int q[kQK];
    UnpackNibbles(x[i].qs, q);
    const int sumi = BlockDot(q, y[i].qs);
    sumf += (ggml_fp16_to_fp32(x[i].d) * ggml_fp16_to_fp32(y[i].d)) * static_cast<float>(sumi) +
            ggml_fp16_to_fp32(x[i].m) * ggml_fp16_to_fp32(y[i].s);
  }
  return sumf;
}

float vec_dot_q5_0_q8_0_ref(int64_t n, const block_q5_0* x, const block_q8_0* y) {
  float sumf = 0.0f;
  for (int64_t i = 0; i < n / kQK; ++i) {
    int q[kQK];
    UnpackQ5(x[i].qs, x[i].qh, q);
    for (int j = 0; j < kQK; ++j) q[j] -= 16;
    const int sumi = BlockDot(q, y[i].qs);
    sumf += static_cast<float>(sumi) * ggml_fp16_to_fp32(x[i].d) * ggml_fp16_to_fp32(y[i].d);
  }
  return sumf;
}

float vec_dot_q5_1_q8_1_ref(int64_t n, const block_q5_1* x, const block_q8_1* y) {
  float sumf = 0.0f;
  for (int64_t i = 0; i < n / kQK; ++i) {
    int q[kQK];
    UnpackQ5(x[i].qs, x[i].qh, q);
    const int sumi = BlockDot(q, y[i].qs);
    sumf += (ggml_fp16_to_fp32(x[i].d) * ggml_fp16_to_fp32(y[i].d)) * static_cast<float>(sumi) +
            ggml_fp16_to_fp32(x[i].m) * ggml_fp16_to_fp32(y[i].s);
  }
  return sumf;
}

float vec_dot_q8_0_q8_0_ref(int64_t n, const block_q8_0* x, const block_q8_0* y) {
  float sumf = 0.0f;
  for (int64_t i = 0; i < n / kQK; ++i) {
    int q[kQK];
    for (int j = 0; j < kQK; ++j) q[j] = x[i].qs[j];
    const int sumi = BlockDot(q, y[i].qs);
    sumf += static_cast<float>(sumi) * (ggml_fp16_to_fp32(x[i].d) * ggml_fp16_to_fp32(y[i].d));
  }
  return sumf;
}

}  // namespace ggml_cpu
