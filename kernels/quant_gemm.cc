// QuantGemm entry points (kernels/quant_gemm.h): argument checks, the scalar packing of weight
// panels and of quantized activations, and one HWY_DYNAMIC_DISPATCH per product block into the
// per-target micro-kernels of quant_gemm-inl.h.
#include "kernels/quant_gemm.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/quant_gemm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/quant_gemm-inl.h"
#include "kernels/quant_ops-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ggml_cpu {
namespace HWY_NAMESPACE {

void QuantGemmBlock(bool q8_order, size_t k, const uint8_t* packed, const uint8_t* qb, float* c,
                    size_t ldc, size_t m_begin, size_t m_end, size_t n_begin, size_t n_end) {
  if (q8_order) {
    qgemm::GemmBlock<true>(k, packed, qb, c, ldc, m_begin, m_end, n_begin, n_end);
  } else {
    qgemm::GemmBlock<false>(k, packed, qb, c, ldc, m_begin, m_end, n_begin, n_end);
  }
}

// One b row of k floats to k / 32 QuantGemmBlockB: quant_ops-inl.h's Q8_0 quantizer (bit-identical
// to quantize_row_q8_0_ref), then each block's scale widened and its code sum taken as unsigned
// bytes (code + 128) with SumsOf8.
void QuantizeRowB(const float* x, uint8_t* out, size_t k) {
  constexpr size_t kChunk = 16;  // blocks per quantizer call
  const hn::CappedTag<uint8_t, 32> d8;
  const hn::Repartition<uint64_t, decltype(d8)> d64;
  block_q8_0 tmp[kChunk];
  for (size_t i0 = 0; i0 < k / 32; i0 += kChunk) {
    const size_t cnt = k / 32 - i0 < kChunk ? k / 32 - i0 : kChunk;
    QuantizeRowQ8</*kWithSum=*/false>(x + i0 * 32, tmp, static_cast<int64_t>(cnt * 32));
    for (size_t j = 0; j < cnt; ++j) {
      QuantGemmBlockB y;
      y.d = ggml_fp16_to_fp32(tmp[j].d);
      auto sums = hn::Zero(d64);
      for (size_t e = 0; e < 32; e += hn::Lanes(d8)) {
        const auto u = hn::Xor(hn::LoadU(d8, reinterpret_cast<const uint8_t*>(tmp[j].qs) + e), hn::Set(d8, 0x80));
        sums = hn::Add(sums, hn::SumsOf8(u));
      }
      const int32_t sum = static_cast<int32_t>(hn::GetLane(hn::SumOfLanes(d64, sums))) - 32 * 128;
      y.corr = -128 * sum;
      memcpy(y.qs, tmp[j].qs, sizeof(y.qs));
      memcpy(out + (i0 + j) * sizeof(y), &y, sizeof(y));
    }
  }
}

bool QuantGemmHasIntDot() {
  return qgemm::kHasIntDot;
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ggml_cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "absl/strings/str_format.h"
#include "ggml/fp16.h"
#include "kernels/dispatch.h"
#include "kernels/quant_types.h"

namespace ggml_cpu {

HWY_EXPORT(QuantGemmBlock);
HWY_EXPORT(QuantGemmHasIntDot);
HWY_EXPORT(QuantizeRowB);

namespace {

constexpr size_t kBlock = 32;

absl::Status Invalid(const char* fn, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s", fn, what));
}

absl::Status CheckTypeAndK(const char* fn, ggml_type type, size_t k) {
  if (!QuantGemmSupports(type)) {
    return Invalid(fn, absl::StrFormat("type %s is not one of q8_0, q4_0, q5_0", ggml_type_name(type)));
  }
  if (k % kBlock != 0) return Invalid(fn, absl::StrFormat("k=%zu is not a multiple of 32", k));
  return absl::OkStatus();
}

// The 32 codes of block i of a row as unsigned bytes value + 128, and the block's scale.
void DecodeBlock(ggml_type type, const uint8_t* row, size_t i, uint8_t u[kBlock], ggml_fp16_t* d) {
  if (type == GGML_TYPE_Q8_0) {
    block_q8_0 b;
    memcpy(&b, row + i * sizeof(b), sizeof(b));
    for (size_t j = 0; j < kBlock; ++j) u[j] = static_cast<uint8_t>(static_cast<uint8_t>(b.qs[j]) ^ 0x80u);
    *d = b.d;
  } else if (type == GGML_TYPE_Q4_0) {
    block_q4_0 b;
    memcpy(&b, row + i * sizeof(b), sizeof(b));
    for (size_t j = 0; j < kBlock / 2; ++j) {  // value = nibble - 8: byte = nibble + 120
      u[j] = static_cast<uint8_t>((b.qs[j] & 0x0F) + 120);
      u[j + kBlock / 2] = static_cast<uint8_t>((b.qs[j] >> 4) + 120);
    }
    *d = b.d;
  } else {  // Q5_0: value = (nibble | bit4 << 4) - 16: byte = code + 112
    block_q5_0 b;
    memcpy(&b, row + i * sizeof(b), sizeof(b));
    uint32_t qh;
    memcpy(&qh, b.qh, sizeof(qh));
    for (size_t j = 0; j < kBlock / 2; ++j) {
      const uint32_t lo = (b.qs[j] & 0x0Fu) | ((qh >> j) & 1u) << 4;
      const uint32_t hi = (b.qs[j] >> 4) | ((qh >> (j + 16)) & 1u) << 4;
      u[j] = static_cast<uint8_t>(lo + 112);
      u[j + kBlock / 2] = static_cast<uint8_t>(hi + 112);
    }
    *d = b.d;
  }
}

}  // namespace

bool QuantGemmSupports(ggml_type type) {
  return type == GGML_TYPE_Q8_0 || type == GGML_TYPE_Q4_0 || type == GGML_TYPE_Q5_0;
}

bool QuantGemmFast() {
  InitDispatchOnce();
  return HWY_DYNAMIC_DISPATCH(QuantGemmHasIntDot)();
}

size_t QuantGemmRowBytesB(size_t k) { return k / kBlock * sizeof(QuantGemmBlockB); }

size_t QuantGemmPackedBytesA(size_t k, size_t m) {
  return (m + kQuantGemmPanelRows - 1) / kQuantGemmPanelRows * (k / kBlock) * kQuantGemmPanelBlockBytes;
}

absl::Status QuantGemmPackA(ggml_type type, size_t k, const void* a, size_t a_nb1, size_t m,
                            size_t p_begin, size_t p_end, void* packed, size_t packed_size) {
  const char* fn = "QuantGemmPackA";
  absl::Status s = CheckTypeAndK(fn, type, k);
  if (!s.ok()) return s;
  const size_t panels = (m + kQuantGemmPanelRows - 1) / kQuantGemmPanelRows;
  if (p_begin > p_end || p_end > panels) {
    return Invalid(fn, absl::StrFormat("panels [%zu, %zu) outside [0, %zu)", p_begin, p_end, panels));
  }
  if (p_begin == p_end || k == 0) return s;
  const size_t row_bytes = k / kBlock * ggml_type_size(type);
  if (a == nullptr || packed == nullptr) return Invalid(fn, "a or packed is null");
  if (m > 1 && a_nb1 < row_bytes) return Invalid(fn, absl::StrFormat("a_nb1=%zu < one row (%zu bytes)", a_nb1, row_bytes));
  if (packed_size < QuantGemmPackedBytesA(k, m)) {
    return Invalid(fn, absl::StrFormat("packed_size=%zu < %zu", packed_size, QuantGemmPackedBytesA(k, m)));
  }
  const size_t nb = k / kBlock;
  uint8_t* out = static_cast<uint8_t*>(packed);
  for (size_t p = p_begin; p < p_end; ++p) {
    for (size_t i = 0; i < nb; ++i) {
      uint8_t* blk = out + (p * nb + i) * kQuantGemmPanelBlockBytes;
      float scales[kQuantGemmPanelRows];
      for (size_t r = 0; r < kQuantGemmPanelRows; ++r) {
        const size_t row = p * kQuantGemmPanelRows + r;
        uint8_t u[kBlock];
        ggml_fp16_t d = 0;
        if (row < m) {
          DecodeBlock(type, static_cast<const uint8_t*>(a) + row * a_nb1, i, u, &d);
        } else {
          memset(u, 128, sizeof(u));  // value 0
        }
        scales[r] = row < m ? ggml_fp16_to_fp32(d) : 0.0f;
        for (size_t q = 0; q < kBlock / 4; ++q) memcpy(blk + 64 * q + 4 * r, u + 4 * q, 4);
      }
      memcpy(blk + 512, scales, sizeof(scales));
    }
  }
  return s;
}

absl::Status QuantGemmQuantizeB(size_t k, const float* b, size_t ldb, size_t n_begin,
                                size_t n_end, void* qb, size_t qb_size) {
  const char* fn = "QuantGemmQuantizeB";
  if (k % kBlock != 0) return Invalid(fn, absl::StrFormat("k=%zu is not a multiple of 32", k));
  if (n_begin > n_end) return Invalid(fn, absl::StrFormat("n_begin=%zu > n_end=%zu", n_begin, n_end));
  if (n_begin == n_end || k == 0) return absl::OkStatus();
  if (b == nullptr || qb == nullptr) return Invalid(fn, "b or qb is null");
  if (ldb < k) return Invalid(fn, absl::StrFormat("ldb=%zu < k=%zu", ldb, k));
  const size_t rb = QuantGemmRowBytesB(k);
  if (qb_size < n_end * rb) return Invalid(fn, absl::StrFormat("qb_size=%zu < n_end * row bytes = %zu", qb_size, n_end * rb));
  InitDispatchOnce();
  for (size_t n = n_begin; n < n_end; ++n) {
    HWY_DYNAMIC_DISPATCH(QuantizeRowB)(b + n * ldb, static_cast<uint8_t*>(qb) + n * rb, k);
  }
  return absl::OkStatus();
}

absl::Status QuantGemm(ggml_type type, size_t k, const void* packed, size_t packed_size,
                       size_t m, const void* qb, size_t qb_size, float* c, size_t ldc,
                       size_t m_begin, size_t m_end, size_t n_begin, size_t n_end) {
  const char* fn = "QuantGemm";
  absl::Status s = CheckTypeAndK(fn, type, k);
  if (!s.ok()) return s;
  if (m_begin > m_end || n_begin > n_end) return Invalid(fn, "a range has begin > end");
  if (m_end > m) return Invalid(fn, absl::StrFormat("m_end=%zu > m=%zu", m_end, m));
  if (m_begin % kQuantGemmPanelRows != 0) return Invalid(fn, absl::StrFormat("m_begin=%zu is not a multiple of 16", m_begin));
  if (m_begin == m_end || n_begin == n_end) return s;
  if (c == nullptr) return Invalid(fn, "c is null");
  if (ldc < m_end) return Invalid(fn, absl::StrFormat("ldc=%zu < m_end=%zu", ldc, m_end));
  if (k == 0) {
    for (size_t n = n_begin; n < n_end; ++n) memset(c + n * ldc + m_begin, 0, (m_end - m_begin) * sizeof(float));
    return s;
  }
  if (packed == nullptr || qb == nullptr) return Invalid(fn, "packed or qb is null");
  if (packed_size < QuantGemmPackedBytesA(k, m)) {
    return Invalid(fn, absl::StrFormat("packed_size=%zu < %zu", packed_size, QuantGemmPackedBytesA(k, m)));
  }
  if (qb_size < n_end * QuantGemmRowBytesB(k)) {
    return Invalid(fn, absl::StrFormat("qb_size=%zu < n_end * row bytes = %zu", qb_size, n_end * QuantGemmRowBytesB(k)));
  }
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(QuantGemmBlock)(type == GGML_TYPE_Q8_0, k, static_cast<const uint8_t*>(packed),
                                       static_cast<const uint8_t*>(qb), c, ldc, m_begin, m_end, n_begin, n_end);
  return s;
}

}  // namespace ggml_cpu
#endif  // HWY_ONCE
