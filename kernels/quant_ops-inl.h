// Per-target SIMD kernels for ggml's legacy quantized types: Q8 row quantization of activations
// and quantized dot products. Included once per Highway target by quant_ops.cc (and by tests);
// the public, dispatched entry points are declared in quant_ops.h.
//
// Integer core of every dot product: codes are widened to int16 and multiplied pairwise into
// int32 lanes with ReorderWidenMulAccumulate (vpmaddwd on x86). A block's lane sums are exact
// (|code product| <= 128 * 128), converted to float once per block and scaled by d_x * d_y
// with one MulAdd per block, as ggml's AVX2 kernels do; lanes are added once per row.

// Per-target include guard (Highway's toggle pattern, hwy/examples/skeleton-inl.h).
#if defined(GGML_WHISPER_KERNELS_QUANT_OPS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef GGML_WHISPER_KERNELS_QUANT_OPS_INL_H_
#undef GGML_WHISPER_KERNELS_QUANT_OPS_INL_H_
#else
#define GGML_WHISPER_KERNELS_QUANT_OPS_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "ggml/fp16.h"
#include "hwy/highway.h"
#include "kernels/quant_types.h"

HWY_BEFORE_NAMESPACE();
namespace ggml_cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The kernels below unroll a block into kQK / MaxLanes(d) vectors, which needs
// Lanes(d) == MaxLanes(d). Fixed-width targets give that for any cap; on scalable targets
// (SVE, RVV) the cap is the 128-bit minimum vector so the equality still holds.
#if HWY_HAVE_SCALABLE
using DI16 = hn::CappedTag<int16_t, 8>;  // code lanes of one dot-product chunk
using DF32 = hn::CappedTag<float, 4>;    // float lanes of the Q8 quantizer
#else
using DI16 = hn::CappedTag<int16_t, kQK>;
using DF32 = hn::CappedTag<float, kQK>;
#endif

// Broadcast of one fp16 scale as float, exact on every target. AVX2 and up have F16C
// (vcvtph2ps); Highway 1.0.3's emulation elsewhere maps inf/NaN to finite values (see
// fp16-inl.h), so other targets convert the scalar with ggml/fp16.h.
template <class DF>
HWY_INLINE hn::Vec<DF> BroadcastF16(DF df, ggml_fp16_t h) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  const hn::Rebind<hwy::float16_t, DF> dh;
  const hn::RebindToUnsigned<decltype(dh)> du;
  return hn::PromoteTo(df, hn::BitCast(dh, hn::Set(du, h)));
#else
  return hn::Set(df, ggml_fp16_to_fp32(h));
#endif
}

// ------------------------------ Code decoders: Lanes(d) signed codes starting at element e0

// Q8 codes (weights of Q8_0 or any activation block), int8 -> int16.
template <class D>
HWY_INLINE hn::Vec<D> LoadQ8Chunk(D d, const int8_t* qs, size_t e0) {
  const hn::Rebind<int8_t, D> d8;
  return hn::PromoteTo(d, hn::LoadU(d8, qs + e0));
}

// Unsigned 4-bit codes (q in [0, 15]) of elements [e0, e0 + Lanes(d)) from qs[16] in ggml's
// nibble order: element j < 16 is the low nibble of qs[j], element j >= 16 the high nibble of
// qs[j - 16]. A chunk is either inside one half or (Lanes = 32) is the whole block.
template <class D>
HWY_INLINE hn::Vec<D> LoadNibbleChunk(D d, const uint8_t* qs, size_t e0) {
  constexpr size_t kN = hn::MaxLanes(D());
#if HWY_TARGET != HWY_SCALAR  // (no Combine there; kN is 1)
  if constexpr (kN >= kQK) {
    const hn::Half<D> dh;
    const hn::Rebind<uint8_t, decltype(dh)> d8;
    const auto bytes = hn::PromoteTo(dh, hn::LoadU(d8, qs));
    return hn::Combine(d, hn::ShiftRight<4>(bytes), hn::And(bytes, hn::Set(dh, 0x0F)));
  }
#endif
  static_assert(kN <= kQK / 2 || kN == kQK, "a chunk is one half block or the whole block");
  const hn::Rebind<uint8_t, D> d8;
  const size_t half = e0 / (kQK / 2);
  const hn::Vec<D> bytes = hn::PromoteTo(d, hn::LoadU(d8, qs + (e0 - half * (kQK / 2))));
  return half == 0 ? hn::And(bytes, hn::Set(d, 0x0F)) : hn::ShiftRight<4>(bytes);
}

// Mask of the lanes whose code has bit 4 set: bit e0 + lane of qh (little-endian uint32).
template <class D>
HWY_INLINE hn::Mask<D> LoadHighBitMask(D d, const uint8_t* qh, size_t e0) {
  constexpr size_t kN = hn::MaxLanes(D());
  if constexpr (kN >= 8) {
    return hn::LoadMaskBits(d, qh + e0 / 8);  // e0 is a multiple of kN, hence of 8
  } else {
    // Fewer than 8 lanes: test each lane's bit against a table of single-bit masks.
    static_assert(kN <= 16, "chunk must fit the 16-bit lane masks");
    alignas(64) static constexpr uint16_t kLaneBit[16] = {
        1u << 0, 1u << 1, 1u << 2,  1u << 3,  1u << 4,  1u << 5,  1u << 6,  1u << 7,
        1u << 8, 1u << 9, 1u << 10, 1u << 11, 1u << 12, 1u << 13, 1u << 14, 1u << 15};
    const hn::RebindToUnsigned<D> du;
    const uint32_t bits32 = static_cast<uint32_t>(qh[0]) | static_cast<uint32_t>(qh[1]) << 8 |
                            static_cast<uint32_t>(qh[2]) << 16 |
                            static_cast<uint32_t>(qh[3]) << 24;
    const auto bits = hn::Set(du, static_cast<uint16_t>((bits32 >> e0) & 0xFFFFu));
    return hn::RebindMask(d, hn::TestBit(bits, hn::LoadU(du, kLaneBit)));
  }
}

// Weight decoders: signed code values (offset removed for the symmetric types) of a chunk, the
// scale d and, for the asymmetric types, the offset m.
struct DecodeQ4_0 {
  using Block = block_q4_0;
  static constexpr bool kHasMin = false;
  template <class D>
  static HWY_INLINE hn::Vec<D> Codes(D d, const Block& b, size_t e0) {
    return hn::Sub(LoadNibbleChunk(d, b.qs, e0), hn::Set(d, 8));
  }
};

struct DecodeQ4_1 {
  using Block = block_q4_1;
  static constexpr bool kHasMin = true;
  template <class D>
  static HWY_INLINE hn::Vec<D> Codes(D d, const Block& b, size_t e0) {
    return LoadNibbleChunk(d, b.qs, e0);
  }
};

struct DecodeQ5_0 {
  using Block = block_q5_0;
  static constexpr bool kHasMin = false;
  template <class D>
  static HWY_INLINE hn::Vec<D> Codes(D d, const Block& b, size_t e0) {
    // (nibble | bit4 << 4) - 16 == bit4 ? nibble : nibble - 16
    const hn::Vec<D> low = LoadNibbleChunk(d, b.qs, e0);
    return hn::Sub(low, hn::IfThenZeroElse(LoadHighBitMask(d, b.qh, e0), hn::Set(d, 16)));
  }
};

struct DecodeQ5_1 {
  using Block = block_q5_1;
  static constexpr bool kHasMin = true;
  template <class D>
  static HWY_INLINE hn::Vec<D> Codes(D d, const Block& b, size_t e0) {
    const hn::Vec<D> low = LoadNibbleChunk(d, b.qs, e0);
    return hn::Or(low, hn::IfThenElseZero(LoadHighBitMask(d, b.qh, e0), hn::Set(d, 16)));
  }
};

struct DecodeQ8_0 {
  using Block = block_q8_0;
  static constexpr bool kHasMin = false;
  template <class D>
  static HWY_INLINE hn::Vec<D> Codes(D d, const Block& b, size_t e0) {
    return LoadQ8Chunk(d, b.qs, e0);
  }
};

// ------------------------------ Dot products

// s[r] = dot(x row r, y) for kRows rows of x starting at x_row (row stride x_nb1 bytes), over
// nb blocks. The activation block y[i] is widened once and reused for all kRows rows.
template <size_t kRows, class Decoder, class BlockY>
HWY_INLINE void DotRowsT(int64_t nb, const uint8_t* x_row, size_t x_nb1, const BlockY* y,
                         float* s) {
  using BlockX = typename Decoder::Block;
  const DI16 d16;
  const hn::Repartition<int32_t, DI16> d32;
  const hn::Rebind<float, decltype(d32)> df;
  constexpr size_t kN = hn::MaxLanes(DI16());
  constexpr size_t kChunks = kQK / kN;
  static_assert(kQK % kN == 0, "a block must be a whole number of chunks");

  const BlockX* x[kRows];
  hn::Vec<decltype(df)> acc[kRows];
  hn::Vec<decltype(df)> acc_min[kRows];  // m_x * s_y, all lanes equal (asymmetric types)
  for (size_t r = 0; r < kRows; ++r) {
    x[r] = reinterpret_cast<const BlockX*>(x_row + r * x_nb1);
    acc[r] = hn::Zero(df);
    acc_min[r] = hn::Zero(df);
  }

  for (int64_t i = 0; i < nb; ++i) {
    const BlockY& by = y[i];
    hn::Vec<DI16> vy[kChunks];
    for (size_t c = 0; c < kChunks; ++c) vy[c] = LoadQ8Chunk(d16, by.qs, c * kN);
    const auto dy = BroadcastF16(df, by.d);
    for (size_t r = 0; r < kRows; ++r) {
      const BlockX& bx = x[r][i];
      auto sum0 = hn::Zero(d32);
      auto sum1 = hn::Zero(d32);
      for (size_t c = 0; c < kChunks; ++c) {
        sum0 = hn::ReorderWidenMulAccumulate(d32, Decoder::Codes(d16, bx, c * kN), vy[c], sum0,
                                             sum1);
      }
      // Lane order is irrelevant: only the total of the block's lanes is used.
      const auto block_sum = hn::ConvertTo(df, hn::Add(sum0, sum1));
      acc[r] = hn::MulAdd(hn::Mul(BroadcastF16(df, bx.d), dy), block_sum, acc[r]);
      if constexpr (Decoder::kHasMin) {
        acc_min[r] = hn::MulAdd(BroadcastF16(df, bx.m), BroadcastF16(df, by.s), acc_min[r]);
      }
    }
  }
  for (size_t r = 0; r < kRows; ++r) {
    float total = hn::GetLane(hn::SumOfLanes(df, acc[r]));
    if constexpr (Decoder::kHasMin) total += hn::GetLane(acc_min[r]);
    s[r] = total;
  }
}

// s[r] = dot(x row r, y) for r in [0, nrows); n elements per row, a multiple of kQK.
template <class Decoder, class BlockY>
HWY_INLINE void VecDotRows(int64_t n, int64_t nrows, const typename Decoder::Block* x,
                           size_t x_nb1, const BlockY* y, float* s) {
  const int64_t nb = n / kQK;
  const uint8_t* x_row = reinterpret_cast<const uint8_t*>(x);
  int64_t r = 0;
  for (; r + 4 <= nrows; r += 4) {
    DotRowsT<4, Decoder>(nb, x_row + r * x_nb1, x_nb1, y, s + r);
  }
  for (; r < nrows; ++r) DotRowsT<1, Decoder>(nb, x_row + r * x_nb1, x_nb1, y, s + r);
}

// ------------------------------ Q8 quantization of activations

// roundf(v) (ties away from zero) clamped to [-127, 127], NaN -> 0, as int32 lanes. Bit-exact
// with quant_ref.cc's RoundToQ8: v - Trunc(v) is exact in float, so the tie test is exact.
template <class DF>
HWY_INLINE hn::Vec<hn::RebindToSigned<DF>> RoundToQ8(DF df, hn::Vec<DF> v) {
  const hn::RebindToSigned<DF> di;
  const auto t = hn::Trunc(v);
  const auto away = hn::Ge(hn::Abs(hn::Sub(v, t)), hn::Set(df, 0.5f));
  auto r = hn::IfThenElse(away, hn::Add(t, hn::CopySignToAbs(hn::Set(df, 1.0f), v)), t);
  r = hn::IfThenElseZero(hn::Eq(v, v), r);  // NaN -> 0 before Min/Max (NaN order varies)
  r = hn::Min(hn::Max(r, hn::Set(df, -127.0f)), hn::Set(df, 127.0f));
  return hn::ConvertTo(di, r);
}

// Quantizes k floats (k % kQK == 0) to Q8_0 or, with kWithSum, Q8_1 blocks, bit-identical to
// quantize_row_q8_{0,1}_ref. NaN inputs are ignored for the block maximum, as in the reference.
template <bool kWithSum, class BlockY>
HWY_INLINE void QuantizeRowQ8(const float* HWY_RESTRICT x, BlockY* HWY_RESTRICT y, int64_t k) {
  const DF32 df;
  const hn::RebindToSigned<DF32> di;
  const hn::Rebind<int8_t, DF32> d8;
  constexpr size_t kN = hn::MaxLanes(DF32());
  constexpr size_t kVecs = kQK / kN;
  static_assert(kQK % kN == 0, "a block must be a whole number of vectors");

  for (int64_t i = 0; i < k / kQK; ++i, x += kQK) {
    hn::Vec<DF32> v[kVecs];
    auto vmax = hn::Zero(df);
    for (size_t c = 0; c < kVecs; ++c) {
      v[c] = hn::LoadU(df, x + c * kN);
      // Eq(v, v) is false for NaN: those lanes contribute 0 (the reference skips them).
      vmax = hn::Max(vmax, hn::IfThenElseZero(hn::Eq(v[c], v[c]), hn::Abs(v[c])));
    }
    const float amax = hn::GetLane(hn::MaxOfLanes(df, vmax));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[i].d = ggml_fp32_to_fp16(d);
    const auto vid = hn::Set(df, id);
    auto sum = hn::Zero(di);
    for (size_t c = 0; c < kVecs; ++c) {
      const auto q = RoundToQ8(df, hn::Mul(v[c], vid));
      hn::StoreU(hn::DemoteTo(d8, q), d8, y[i].qs + c * kN);
      if constexpr (kWithSum) sum = hn::Add(sum, q);
    }
    if constexpr (kWithSum) {
      const int32_t qsum = hn::GetLane(hn::SumOfLanes(di, sum));
      y[i].s = ggml_fp32_to_fp16(static_cast<float>(qsum) * d);
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ggml_cpu
HWY_AFTER_NAMESPACE();

#endif  // GGML_WHISPER_KERNELS_QUANT_OPS_INL_H_
