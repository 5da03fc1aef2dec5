// Per-target SIMD kernels for ggml's legacy quantized types: Q8 row quantization of activations
// and quantized dot products. Included once per Highway target by quant_ops.cc (and by tests);
// the public, dispatched entry points are declared in quant_ops.h.
//
// Integer core of every dot product, per block of 32 codes, in exact int32 lanes:
//   - every target: codes widened to int16 and multiplied pairwise with
//     ReorderWidenMulAccumulate (vpmaddwd on x86; one 512-bit op per block on AVX3);
//   - AVX3_DL: weight codes as unsigned bytes times int8 activations with one AVX512-VNNI
//     vpdpbusd per block; the weight offset (8, 16 or 128) is removed by starting the
//     accumulator at -offset * sum(y), computed once per activation block;
//   - SVE, SVE2, SVE_256, SVE2_128: signed int8 weight codes (offset already removed: every
//     type's codes fit int8) times int8 activations with SVE's sdot (4-way int8 dot into int32
//     lanes, part of base SVE), two per block on 128-bit halves, whatever the vector length;
//   - NEON (and the x86 targets below AVX3_DL): int16 widening as above, which Highway 1.0.3
//     maps to vmlal_s16/vmlal_high_s16 (widening multiply-accumulate) on A64. NEON's own sdot
//     needs the dotprod extension, which Highway's NEON target does not require.
// Each block's int32 lanes are then added to one integer (exact), and the block's float term is
// formed and added to the row's sum in block order with the reference's expressions
// (quant_ref.cc, ggml's vec_dot_*_ref): for 4 rows at once as one 4-lane vector (one row per
// lane, the 4 block sums by an exact integer transpose, the f16 scales widened together). So
// every target, SIMD or scalar, x86 or Arm, gives the reference's bits, and a quantized model
// transcribes identically on every CPU. (ggml's SIMD kernels keep float lanes per row instead,
// whose summation order differs per target: on jfk.wav q8_0 that changed a token between AVX3_DL
// and NEON.) Activation blocks are decoded once for 4 weight rows.

// Per-target include guard (Highway's toggle pattern, hwy/examples/skeleton-inl.h).
#if defined(GGML_WHISPER_KERNELS_QUANT_OPS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef GGML_WHISPER_KERNELS_QUANT_OPS_INL_H_
#undef GGML_WHISPER_KERNELS_QUANT_OPS_INL_H_
#else
#define GGML_WHISPER_KERNELS_QUANT_OPS_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include <type_traits>

#include "ggml/fp16.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/fp16-inl.h"
#include "kernels/prefetch.h"
#include "kernels/quant_types.h"

HWY_BEFORE_NAMESPACE();
namespace ggml_cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The kernels below unroll a block into kQK / MaxLanes(d) vectors, which needs
// Lanes(d) == MaxLanes(d). Fixed-width targets give that for any cap; on scalable targets
// (SVE, RVV) the cap is the 128-bit minimum vector so the equality still holds.
#if HWY_HAVE_SCALABLE
using DF32 = hn::CappedTag<float, 4>;    // float lanes of the Q8 quantizer
#else
using DF32 = hn::CappedTag<float, kQK>;
#endif

// ------------------------------ Code decoders: Lanes(d) signed codes starting at element e0

// Q8 codes (weights of Q8_0 or any activation block) as int16 lanes, or int8 lanes as stored.
template <class D>
HWY_INLINE hn::Vec<D> LoadQ8Chunk(D d, const int8_t* qs, size_t e0) {
  if constexpr (sizeof(hn::TFromD<D>) == 1) {
    return hn::LoadU(d, qs + e0);
  } else {
    const hn::Rebind<int8_t, D> d8;
    return hn::PromoteTo(d, hn::LoadU(d8, qs + e0));
  }
}

// Unsigned 4-bit codes (q in [0, 15]) of elements [e0, e0 + Lanes(d)) from qs[16] in ggml's
// nibble order: element j < 16 is the low nibble of qs[j], element j >= 16 the high nibble of
// qs[j - 16]. A chunk is either inside one half or (Lanes = 32) is the whole block. Lanes are
// int16, or (int8 lanes, one half block) the bytes themselves.
template <class D>
HWY_INLINE hn::Vec<D> LoadNibbleChunk(D d, const uint8_t* qs, size_t e0) {
  constexpr size_t kN = hn::MaxLanes(D());
  static_assert(kN <= kQK / 2 || kN == kQK, "a chunk is one half block or the whole block");
  if constexpr (sizeof(hn::TFromD<D>) == 1) {
    static_assert(kN <= kQK / 2, "int8 chunks are within one half block");
    const hn::RebindToUnsigned<D> du;
    const size_t half = e0 / (kQK / 2);
    const auto bytes = hn::LoadU(du, qs + (e0 - half * (kQK / 2)));
    return hn::BitCast(d, half == 0 ? hn::And(bytes, hn::Set(du, 0x0F)) : hn::ShiftRight<4>(bytes));
  } else
#if HWY_TARGET != HWY_SCALAR  // (Combine does not exist there; kN is 1)
  if constexpr (kN == kQK) {
    const hn::Half<D> dh;
    const hn::Rebind<uint8_t, decltype(dh)> d8;
    const auto bytes = hn::PromoteTo(dh, hn::LoadU(d8, qs));
    return hn::Combine(d, hn::ShiftRight<4>(bytes), hn::And(bytes, hn::Set(dh, 0x0F)));
  } else  // NOLINT(readability/braces)
#endif
  {
    const hn::Rebind<uint8_t, D> d8;
    const size_t half = e0 / (kQK / 2);
    const hn::Vec<D> bytes = hn::PromoteTo(d, hn::LoadU(d8, qs + (e0 - half * (kQK / 2))));
    return half == 0 ? hn::And(bytes, hn::Set(d, 0x0F)) : hn::ShiftRight<4>(bytes);
  }
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
                            static_cast<uint32_t>(qh[2]) << 16 | static_cast<uint32_t>(qh[3]) << 24;
    const auto bits = hn::Set(du, static_cast<uint16_t>((bits32 >> e0) & 0xFFFFu));
    return hn::RebindMask(d, hn::TestBit(bits, hn::LoadU(du, kLaneBit)));
  }
}

// Weight decoders: signed code values (offset removed for the symmetric types) of a chunk, the
// scale d and, for the asymmetric types, the offset m.
struct DecodeQ4_0 {
  using Block = block_q4_0;
  static constexpr bool kHasMin = false;
  static constexpr int kByteOffset = 8;  // byte code - value (VNNI path)
  template <class D>
  static HWY_INLINE hn::Vec<D> Codes(D d, const Block& b, size_t e0) {
    return hn::Sub(LoadNibbleChunk(d, b.qs, e0), hn::Set(d, 8));
  }
  // This block's term of the row sum: the reference's expression, evaluated in its order.
  static HWY_INLINE float Scale(int32_t isum, const Block& b, float dy, float sy) {
    (void)sy;
    return static_cast<float>(isum) * ggml_fp16_to_fp32(b.d) * dy;
  }
  // The same per lane (one weight row per lane): IEEE products and sums, no contraction
  // (-ffp-contract=off), so each lane has the scalar expression's bits.
  template <class V>
  static HWY_INLINE V ScaleLanes(V isum, V dx, V dy, V mx, V sy) {
    (void)mx;
    (void)sy;
    return hn::Mul(hn::Mul(isum, dx), dy);
  }
};

struct DecodeQ4_1 {
  using Block = block_q4_1;
  static constexpr bool kHasMin = true;
  static constexpr int kByteOffset = 0;  // byte code - value (VNNI path)
  template <class D>
  static HWY_INLINE hn::Vec<D> Codes(D d, const Block& b, size_t e0) {
    return LoadNibbleChunk(d, b.qs, e0);
  }
  // This block's term of the row sum: the reference's expression, evaluated in its order.
  static HWY_INLINE float Scale(int32_t isum, const Block& b, float dy, float sy) {
    (void)sy;
    return (ggml_fp16_to_fp32(b.d) * dy) * static_cast<float>(isum) + ggml_fp16_to_fp32(b.m) * sy;
  }
  // The same per lane (one weight row per lane): IEEE products and sums, no contraction
  // (-ffp-contract=off), so each lane has the scalar expression's bits.
  template <class V>
  static HWY_INLINE V ScaleLanes(V isum, V dx, V dy, V mx, V sy) {
    (void)mx;
    (void)sy;
    return hn::Add(hn::Mul(hn::Mul(dx, dy), isum), hn::Mul(mx, sy));
  }
};

struct DecodeQ5_0 {
  using Block = block_q5_0;
  static constexpr bool kHasMin = false;
  static constexpr int kByteOffset = 16;  // byte code - value (VNNI path)
  template <class D>
  static HWY_INLINE hn::Vec<D> Codes(D d, const Block& b, size_t e0) {
    // (nibble | bit4 << 4) - 16 == bit4 ? nibble : nibble - 16
    const hn::Vec<D> low = LoadNibbleChunk(d, b.qs, e0);
    return hn::Sub(low, hn::IfThenZeroElse(LoadHighBitMask(d, b.qh, e0), hn::Set(d, 16)));
  }
  // This block's term of the row sum: the reference's expression, evaluated in its order.
  static HWY_INLINE float Scale(int32_t isum, const Block& b, float dy, float sy) {
    (void)sy;
    return static_cast<float>(isum) * ggml_fp16_to_fp32(b.d) * dy;
  }
  // The same per lane (one weight row per lane): IEEE products and sums, no contraction
  // (-ffp-contract=off), so each lane has the scalar expression's bits.
  template <class V>
  static HWY_INLINE V ScaleLanes(V isum, V dx, V dy, V mx, V sy) {
    (void)mx;
    (void)sy;
    return hn::Mul(hn::Mul(isum, dx), dy);
  }
};

struct DecodeQ5_1 {
  using Block = block_q5_1;
  static constexpr bool kHasMin = true;
  static constexpr int kByteOffset = 0;  // byte code - value (VNNI path)
  template <class D>
  static HWY_INLINE hn::Vec<D> Codes(D d, const Block& b, size_t e0) {
    const hn::Vec<D> low = LoadNibbleChunk(d, b.qs, e0);
    return hn::Or(low, hn::IfThenElseZero(LoadHighBitMask(d, b.qh, e0), hn::Set(d, 16)));
  }
  // This block's term of the row sum: the reference's expression, evaluated in its order.
  static HWY_INLINE float Scale(int32_t isum, const Block& b, float dy, float sy) {
    (void)sy;
    return (ggml_fp16_to_fp32(b.d) * dy) * static_cast<float>(isum) + ggml_fp16_to_fp32(b.m) * sy;
  }
  // The same per lane (one weight row per lane): IEEE products and sums, no contraction
  // (-ffp-contract=off), so each lane has the scalar expression's bits.
  template <class V>
  static HWY_INLINE V ScaleLanes(V isum, V dx, V dy, V mx, V sy) {
    (void)mx;
    (void)sy;
    return hn::Add(hn::Mul(hn::Mul(dx, dy), isum), hn::Mul(mx, sy));
  }
};

struct DecodeQ8_0 {
  using Block = block_q8_0;
  static constexpr bool kHasMin = false;
  static constexpr int kByteOffset = 128;  // byte code - value (VNNI path)
  template <class D>
  static HWY_INLINE hn::Vec<D> Codes(D d, const Block& b, size_t e0) {
    return LoadQ8Chunk(d, b.qs, e0);
  }
  // This block's term of the row sum: the reference's expression, evaluated in its order.
  static HWY_INLINE float Scale(int32_t isum, const Block& b, float dy, float sy) {
    (void)sy;
    return static_cast<float>(isum) * (ggml_fp16_to_fp32(b.d) * dy);
  }
  // The same per lane (one weight row per lane): IEEE products and sums, no contraction
  // (-ffp-contract=off), so each lane has the scalar expression's bits.
  template <class V>
  static HWY_INLINE V ScaleLanes(V isum, V dx, V dy, V mx, V sy) {
    (void)mx;
    (void)sy;
    return hn::Mul(isum, hn::Mul(dx, dy));
  }
};

// ------------------------------ Block dot products: int16 widening (every target)

// sum_j x_j * y_j of one block as int32 lanes (only their total matters): codes widened to
// int16, multiplied pairwise into int32 with ReorderWidenMulAccumulate (vpmaddwd on x86).
// Fixed-width targets only (its activations are an array of vectors); SVE has SdotBlockDot.
#if !HWY_HAVE_SCALABLE
using DI16 = hn::CappedTag<int16_t, kQK>;  // code lanes of one dot-product chunk

template <class Decoder>
struct WidenBlockDot {
  using D32 = hn::Repartition<int32_t, DI16>;
  static constexpr size_t kN = hn::MaxLanes(DI16());
  static constexpr size_t kChunks = kQK / kN;
  static_assert(kQK % kN == 0, "a block must be a whole number of chunks");

  struct Activations {  // one activation block, widened once for all weight rows
    // User-provided, so that it is compiled for this target: GCC compiles an implicit default
    // constructor without the target's attributes, and NEON's Vec128() then fails to inline.
    template <class BlockY>
    HWY_INLINE explicit Activations(const BlockY& by) {
      const DI16 d16;
      for (size_t c = 0; c < kChunks; ++c) y[c] = LoadQ8Chunk(d16, by.qs, c * kN);
    }
    hn::Vec<DI16> y[kChunks];
  };

  template <class BlockY>
  static HWY_INLINE Activations Load(const BlockY& by) {
    return Activations(by);
  }

  static HWY_INLINE hn::Vec<D32> Dot(const typename Decoder::Block& bx, const Activations& a) {
    const DI16 d16;
    const D32 d32;
    auto sum0 = hn::Zero(d32);
    auto sum1 = hn::Zero(d32);
    for (size_t c = 0; c < kChunks; ++c) {
      sum0 =
          hn::ReorderWidenMulAccumulate(d32, Decoder::Codes(d16, bx, c * kN), a.y[c], sum0, sum1);
    }
    return hn::Add(sum0, sum1);
  }
};
#endif  // !HWY_HAVE_SCALABLE

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3_DL
#define GGML_WHISPER_QUANT_HAVE_VNNI 1

// ------------------------------ Block dot products: AVX512-VNNI (AVX3_DL)

// sum[i] += a[4i] * b[4i] + ... + a[4i+3] * b[4i+3] for u8 a and i8 b, exactly (vpdpbusd).
// Highway 1.0.3 has no such op (1.1 added SumOfMulQuadAccumulate), and its AVX3_DL target
// string enables AVX-VNNI, so GCC would emit the VEX form, which AVX3_DL CPUs such as Ice Lake
// lack; AVX3_DL does guarantee AVX512-VNNI (CPUID 7.ECX[11]), hence the explicit EVEX form.
HWY_INLINE hn::Vec256<int32_t> SumOfMulQuadAccumulate(hn::Vec256<uint8_t> a, hn::Vec256<int8_t> b,
                                                      hn::Vec256<int32_t> sum) {
  __m256i acc = sum.raw;
  asm("%{evex%} vpdpbusd %[b], %[a], %[acc]" : [acc] "+v"(acc) : [a] "v"(a.raw), [b] "v"(b.raw));
  return hn::Vec256<int32_t>{acc};
}

// Weight codes of a whole block as 32 unsigned bytes (element order) with
// value = byte - Decoder::kByteOffset.
using DU8 = hn::Full256<uint8_t>;

HWY_INLINE hn::Vec<DU8> NibbleBytes(const uint8_t* qs) {
  const DU8 d8;
  const hn::Full128<uint8_t> d8h;
  const hn::Full128<uint16_t> d16h;
  const auto v = hn::LoadU(d8h, qs);
  const auto high = hn::BitCast(d8h, hn::ShiftRight<4>(hn::BitCast(d16h, v)));
  return hn::And(hn::Combine(d8, high, v), hn::Set(d8, 0x0F));
}

HWY_INLINE hn::Vec<DU8> Q5Bytes(const uint8_t* qs, const uint8_t* qh) {
  const DU8 d8;
  const auto bit4 = hn::IfThenElseZero(hn::LoadMaskBits(d8, qh), hn::Set(d8, 0x10));
  return hn::Or(NibbleBytes(qs), bit4);
}

template <class Block>
HWY_INLINE hn::Vec<DU8> CodeBytes(const Block& b);
template <>
HWY_INLINE hn::Vec<DU8> CodeBytes(const block_q4_0& b) {
  return NibbleBytes(b.qs);
}
template <>
HWY_INLINE hn::Vec<DU8> CodeBytes(const block_q4_1& b) {
  return NibbleBytes(b.qs);
}
template <>
HWY_INLINE hn::Vec<DU8> CodeBytes(const block_q5_0& b) {
  return Q5Bytes(b.qs, b.qh);
}
template <>
HWY_INLINE hn::Vec<DU8> CodeBytes(const block_q5_1& b) {
  return Q5Bytes(b.qs, b.qh);
}
template <>
HWY_INLINE hn::Vec<DU8> CodeBytes(const block_q8_0& b) {  // int8 q -> q + 128
  const DU8 d8;
  return hn::Xor(hn::LoadU(d8, reinterpret_cast<const uint8_t*>(b.qs)), hn::Set(d8, 0x80));
}

// One vpdpbusd per weight block: sum_j (u_j - offset) * y_j = sum_j u_j y_j - offset * sum_j y_j,
// with the second term computed once per activation block and used as the accumulator's start.
template <class Decoder>
struct VnniBlockDot {
  using D32 = hn::Full256<int32_t>;

  struct Activations {
    hn::Vec256<int8_t> y;
    hn::Vec256<int32_t> start;  // -offset * y, summed in quads: lanes total -offset * sum(y)
  };

  template <class BlockY>
  static HWY_INLINE Activations Load(const BlockY& by) {
    const hn::Full256<int8_t> d8;
    const D32 d32;
    Activations a;
    a.y = hn::LoadU(d8, by.qs);
    a.start = hn::Zero(d32);
    if constexpr (Decoder::kByteOffset != 0) {
      const DU8 du8;
      a.start =
          hn::Neg(SumOfMulQuadAccumulate(hn::Set(du8, Decoder::kByteOffset), a.y, hn::Zero(d32)));
    }
    return a;
  }

  static HWY_INLINE hn::Vec<D32> Dot(const typename Decoder::Block& bx, const Activations& a) {
    return SumOfMulQuadAccumulate(CodeBytes(bx), a.y, a.start);
  }
};

template <class Decoder>
using BlockDot = VnniBlockDot<Decoder>;

#elif HWY_ARCH_ARM_A64 && (HWY_TARGET & (HWY_SVE | HWY_SVE2 | HWY_SVE_256 | HWY_SVE2_128))
#define GGML_WHISPER_QUANT_HAVE_SDOT 1

// ------------------------------ Block dot products: SVE sdot (every SVE target)

// sum_j x_j * y_j of one block as int32 lanes: the weight codes decoded to signed int8 (every
// type's values fit: [-8, 7], [0, 15], [-16, 15], [0, 31], [-128, 127]) and multiplied with the
// int8 activations by svdot_s32, four products per int32 lane, exactly. Each half block is one
// 16-lane int8 vector (128 bits, SVE's minimum length); on longer vectors the lanes past 16 are
// zero (predicated loads), so the result is the same for every vector length.
template <class Decoder>
struct SdotBlockDot {
  using D8 = hn::CappedTag<int8_t, kQK / 2>;
  using D32 = hn::Repartition<int32_t, D8>;

  // Sizeless SVE vectors cannot be struct members: the activations stay in memory (L1), and
  // Dot reloads them per weight row.
  struct Activations {
    const int8_t* qs;
  };

  template <class BlockY>
  static HWY_INLINE Activations Load(const BlockY& by) {
    return Activations{by.qs};
  }

  static HWY_INLINE hn::Vec<D32> Dot(const typename Decoder::Block& bx, const Activations& a) {
    const D8 d8;
    const D32 d32;
    auto sum = svdot_s32(hn::Zero(d32), Decoder::Codes(d8, bx, 0), hn::LoadU(d8, a.qs));
    return svdot_s32(sum, Decoder::Codes(d8, bx, kQK / 2), hn::LoadU(d8, a.qs + kQK / 2));
  }
};

template <class Decoder>
using BlockDot = SdotBlockDot<Decoder>;
#else
template <class Decoder>
using BlockDot = WidenBlockDot<Decoder>;
#endif  // HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3_DL

// ------------------------------ Row dot products

// Exact sum of a block dot's int32 lanes (|sum| <= 32 * 128 * 127, far from overflow).
template <class D32>
HWY_INLINE int32_t BlockSum(D32 d32, hn::Vec<D32> v) {
  return hn::GetLane(hn::SumOfLanes(d32, v));
}

#if HWY_TARGET != HWY_SCALAR  // (no 4-lane vectors there)
// Per 128-bit block of the result: [sum(a), sum(b), sum(c), sum(d)] over that block's 4 int32
// lanes of each input (a 4 x 4 transpose by interleaving within 128-bit blocks, integer adds:
// exact). Works for any vector width; wider results are folded by FoldTo4.
template <class D32, class V = hn::Vec<D32>>
HWY_INLINE V SumsOf4PerBlock(D32 d32, V a, V b, V c, V d) {
  const hn::Repartition<int64_t, D32> d64;
  const V ab = hn::Add(hn::InterleaveLower(d32, a, b), hn::InterleaveUpper(d32, a, b));
  const V cd = hn::Add(hn::InterleaveLower(d32, c, d), hn::InterleaveUpper(d32, c, d));
  // ab = [a0+a2, b0+b2, a1+a3, b1+b3] per block, cd likewise: pair their 64-bit halves.
  const auto ab64 = hn::BitCast(d64, ab), cd64 = hn::BitCast(d64, cd);
  return hn::Add(hn::BitCast(d32, hn::InterleaveLower(d64, ab64, cd64)),
                 hn::BitCast(d32, hn::InterleaveUpper(d64, ab64, cd64)));
}

// The int32 lanes of a vector folded (exact integer adds of its halves) to 4 lanes.
template <class D32>
HWY_INLINE auto FoldTo4(D32 d32, hn::Vec<D32> v) {
  if constexpr (hn::MaxLanes(D32()) <= 4) {
    (void)d32;
    return v;
  } else {
    const hn::Half<D32> dh;
    return FoldTo4(dh, hn::Add(hn::LowerHalf(dh, v), hn::UpperHalf(dh, v)));
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

// s[r] = dot(x row r, y) for one row of x over nb blocks: per block, the integer dot summed
// exactly and scaled as the reference does (Decoder::Scale), in block order.
template <class Decoder, class BlockY>
HWY_INLINE float QuantDotRow(int64_t nb, const typename Decoder::Block* x, const BlockY* y) {
  using Dot = BlockDot<Decoder>;
  const typename Dot::D32 d32;
  float sum = 0.0f;
  for (int64_t i = 0; i < nb; ++i) {
    const BlockY& by = y[i];
    float sy = 0.0f;
    if constexpr (Decoder::kHasMin) sy = ggml_fp16_to_fp32(by.s);
    sum += Decoder::Scale(BlockSum(d32, Dot::Dot(x[i], Dot::Load(by))), x[i],
                          ggml_fp16_to_fp32(by.d), sy);
  }
  return sum;
}

#if HWY_TARGET != HWY_SCALAR
// Four f16 values as f32 lanes [a, b, c, d]. Packed in a general register and moved over as
// one 64-bit lane: four 16-bit stores read back by one vector load would miss store forwarding.
template <class DF>
HWY_INLINE hn::Vec<DF> F16x4ToF32(DF df, uint16_t a, uint16_t b, uint16_t c, uint16_t d) {
  const hn::Rebind<uint16_t, DF> du16;
  const hn::Repartition<uint64_t, decltype(du16)> du64;
  const uint64_t packed = uint64_t{a} | uint64_t{b} << 16 | uint64_t{c} << 32 | uint64_t{d} << 48;
  return F16BitsToF32(df, hn::BitCast(du16, hn::Set(du64, packed)));
}

// The same for 4 rows at once (row stride x_nb1 bytes): each activation block is loaded once;
// the 4 rows' block sums are formed exactly as one 4-lane integer vector (transposed per
// 128-bit block, then folded), and the reference's
// float expression runs lane by lane (one row per lane, IEEE operations in the reference's
// order), so every lane has QuantDotRow's bits. `next` (or nullptr): 4 rows read later
// (kernels/prefetch.h's distance ahead), prefetched block by block (decoder steps stream the
// weights once, and without it the dependent sums cap the misses in flight).
template <class Decoder, class BlockY>
HWY_INLINE void DotRows4(int64_t nb, const uint8_t* x_row, size_t x_nb1, const BlockY* y,
                         float* s, const uint8_t* next) {
  using BlockX = typename Decoder::Block;
  using Dot = BlockDot<Decoder>;
  const typename Dot::D32 d32;
  // 4 int32 lanes: D32 itself where it has 4 (SVE's capped tag; DFromV of a sizeless vector
  // would be the full-length tag), else the 128-bit tag of the folded vector.
  using D32 = typename Dot::D32;
  using D4 = std::conditional_t<hn::MaxLanes(D32()) <= 4, D32,
                                hn::DFromV<decltype(FoldTo4(D32(), hn::Zero(D32())))>>;
  const hn::Rebind<float, D4> df;
  static_assert(hn::MaxLanes(D4()) == 4, "one lane per row");
  const BlockX* x0 = reinterpret_cast<const BlockX*>(x_row);
  const BlockX* x1 = reinterpret_cast<const BlockX*>(x_row + x_nb1);
  const BlockX* x2 = reinterpret_cast<const BlockX*>(x_row + 2 * x_nb1);
  const BlockX* x3 = reinterpret_cast<const BlockX*>(x_row + 3 * x_nb1);
  auto sum = hn::Zero(df);
  for (int64_t i = 0; i < nb; ++i) {
    if (next != nullptr) {
      for (size_t r = 0; r < 4; ++r) hwy::Prefetch(next + r * x_nb1 + static_cast<size_t>(i) * sizeof(BlockX));
    }
    const BlockY& by = y[i];
    const typename Dot::Activations act = Dot::Load(by);
    const auto isum = FoldTo4(d32, SumsOf4PerBlock(d32, Dot::Dot(x0[i], act), Dot::Dot(x1[i], act),
                                                   Dot::Dot(x2[i], act), Dot::Dot(x3[i], act)));
    const auto dx = F16x4ToF32(df, x0[i].d, x1[i].d, x2[i].d, x3[i].d);
    const hn::Rebind<uint16_t, decltype(df)> du16;
    const auto dy = F16BitsToF32(df, hn::Set(du16, by.d));
    auto mx = hn::Zero(df), sy = hn::Zero(df);
    if constexpr (Decoder::kHasMin) {
      mx = F16x4ToF32(df, x0[i].m, x1[i].m, x2[i].m, x3[i].m);
      sy = F16BitsToF32(df, hn::Set(du16, by.s));
    }
    sum = hn::Add(sum, Decoder::ScaleLanes(hn::ConvertTo(df, isum), dx, dy, mx, sy));
  }
  hn::StoreU(sum, df, s);
}

#if !HWY_HAVE_SCALABLE
// DotRows4 for kCols activation rows at once (y rows y_stride bytes apart; column c's 4 results
// at s + c * lds): each weight block is read and its scales converted once for all columns, so
// a batched decoder step (beam search: one activation row per beam) streams the weights once
// instead of once per beam. Every (row, column) lane runs DotRows4's operations in DotRows4's
// order, so the results are bit-identical to it (and to the reference). Not on SVE: sizeless
// vectors cannot be held in an array (VecDotRowsCols loops over columns there).
template <class Decoder, class BlockY, size_t kCols>
HWY_INLINE void DotRows4Cols(int64_t nb, const uint8_t* x_row, size_t x_nb1, const uint8_t* y,
                             size_t y_stride, float* s, size_t lds, const uint8_t* next) {
  using BlockX = typename Decoder::Block;
  using Dot = BlockDot<Decoder>;
  const typename Dot::D32 d32;
  using D32 = typename Dot::D32;
  using D4 = std::conditional_t<hn::MaxLanes(D32()) <= 4, D32,
                                hn::DFromV<decltype(FoldTo4(D32(), hn::Zero(D32())))>>;
  const hn::Rebind<float, D4> df;
  const hn::Rebind<uint16_t, decltype(df)> du16;
  static_assert(hn::MaxLanes(D4()) == 4, "one lane per row");
  const BlockX* x0 = reinterpret_cast<const BlockX*>(x_row);
  const BlockX* x1 = reinterpret_cast<const BlockX*>(x_row + x_nb1);
  const BlockX* x2 = reinterpret_cast<const BlockX*>(x_row + 2 * x_nb1);
  const BlockX* x3 = reinterpret_cast<const BlockX*>(x_row + 3 * x_nb1);
  const BlockY* yc[kCols];
  hn::Vec<decltype(df)> sum[kCols];
  for (size_t c = 0; c < kCols; ++c) {
    yc[c] = reinterpret_cast<const BlockY*>(y + c * y_stride);
    sum[c] = hn::Zero(df);
  }
  for (int64_t i = 0; i < nb; ++i) {
    if (next != nullptr) {
      for (size_t r = 0; r < 4; ++r) hwy::Prefetch(next + r * x_nb1 + static_cast<size_t>(i) * sizeof(BlockX));
    }
    const auto dx = F16x4ToF32(df, x0[i].d, x1[i].d, x2[i].d, x3[i].d);
    auto mx = hn::Zero(df);
    if constexpr (Decoder::kHasMin) mx = F16x4ToF32(df, x0[i].m, x1[i].m, x2[i].m, x3[i].m);
    for (size_t c = 0; c < kCols; ++c) {
      const BlockY& by = yc[c][i];
      const typename Dot::Activations act = Dot::Load(by);
      const auto isum = FoldTo4(d32, SumsOf4PerBlock(d32, Dot::Dot(x0[i], act), Dot::Dot(x1[i], act),
                                                     Dot::Dot(x2[i], act), Dot::Dot(x3[i], act)));
      const auto dy = F16BitsToF32(df, hn::Set(du16, by.d));
      auto sy = hn::Zero(df);
      if constexpr (Decoder::kHasMin) sy = F16BitsToF32(df, hn::Set(du16, by.s));
      sum[c] = hn::Add(sum[c], Decoder::ScaleLanes(hn::ConvertTo(df, isum), dx, dy, mx, sy));
    }
  }
  for (size_t c = 0; c < kCols; ++c) hn::StoreU(sum[c], df, s + c * lds);
}
#endif  // !HWY_HAVE_SCALABLE
#endif  // HWY_TARGET != HWY_SCALAR

// s[r] = dot(x row r, y) for r in [0, nrows); n elements per row, a multiple of kQK. Groups of
// 4 rows where the target has 4-lane vectors (not SCALAR), then single rows.
template <class Decoder, class BlockY>
HWY_INLINE void VecDotRows(int64_t n, int64_t nrows, const typename Decoder::Block* x, size_t x_nb1,
                           const BlockY* y, float* s) {
  const int64_t nb = n / kQK;
  const uint8_t* x_row = reinterpret_cast<const uint8_t*>(x);
  int64_t r = 0;
#if HWY_TARGET != HWY_SCALAR
  const size_t ahead = PrefetchRowsAhead(x_nb1);
  for (; r + 4 <= nrows; r += 4) {
    DotRows4<Decoder>(nb, x_row + r * x_nb1, x_nb1, y, s + r, static_cast<size_t>(r) + ahead + 4 <= static_cast<size_t>(nrows) ? x_row + (static_cast<size_t>(r) + ahead) * x_nb1 : nullptr);
  }
#endif
  for (; r < nrows; ++r) {
    s[r] = QuantDotRow<Decoder>(nb, reinterpret_cast<const typename Decoder::Block*>(x_row + r * x_nb1), y);
  }
}

// s[c * lds + r] = dot(x row r, y row c) for r in [0, nrows), c in [0, ncols): VecDotRows for
// ncols activation rows y_stride bytes apart, bit-identical to it column by column. Groups of
// 4 weight rows against up to 4 columns at a time (DotRows4Cols) where the target has 4-lane
// vectors of fixed size; elsewhere (SCALAR, SVE) one VecDotRows per column.
template <class Decoder, class BlockY>
HWY_INLINE void VecDotRowsCols(int64_t n, int64_t nrows, const typename Decoder::Block* x, size_t x_nb1,
                               const BlockY* y, size_t y_stride, int64_t ncols, float* s, size_t lds) {
  const uint8_t* yb = reinterpret_cast<const uint8_t*>(y);
#if HWY_TARGET == HWY_SCALAR || HWY_HAVE_SCALABLE
  for (int64_t c = 0; c < ncols; ++c) {
    VecDotRows<Decoder>(n, nrows, x, x_nb1, reinterpret_cast<const BlockY*>(yb + c * y_stride), s + c * lds);
  }
#else
  const int64_t nb = n / kQK;
  const uint8_t* x_row = reinterpret_cast<const uint8_t*>(x);
  const size_t ahead = PrefetchRowsAhead(x_nb1);
  int64_t r = 0;
  for (; r + 4 <= nrows; r += 4) {
    const uint8_t* next = static_cast<size_t>(r) + ahead + 4 <= static_cast<size_t>(nrows) ? x_row + (static_cast<size_t>(r) + ahead) * x_nb1 : nullptr;
    const uint8_t* xr = x_row + r * x_nb1;
    int64_t c = 0;
    for (; c + 4 <= ncols; c += 4) {
      DotRows4Cols<Decoder, BlockY, 4>(nb, xr, x_nb1, yb + c * y_stride, y_stride, s + c * lds + r, lds,
                                       c == 0 ? next : nullptr);
    }
    const uint8_t* yr = yb + c * y_stride;
    float* sr = s + c * lds + r;
    const uint8_t* nr = c == 0 ? next : nullptr;
    switch (ncols - c) {
      case 3: DotRows4Cols<Decoder, BlockY, 3>(nb, xr, x_nb1, yr, y_stride, sr, lds, nr); break;
      case 2: DotRows4Cols<Decoder, BlockY, 2>(nb, xr, x_nb1, yr, y_stride, sr, lds, nr); break;
      case 1: DotRows4Cols<Decoder, BlockY, 1>(nb, xr, x_nb1, yr, y_stride, sr, lds, nr); break;
      default: break;
    }
  }
  for (; r < nrows; ++r) {
    const auto* xr = reinterpret_cast<const typename Decoder::Block*>(x_row + r * x_nb1);
    for (int64_t c = 0; c < ncols; ++c) {
      s[c * lds + r] = QuantDotRow<Decoder>(nb, xr, reinterpret_cast<const BlockY*>(yb + c * y_stride));
    }
  }
#endif
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

  // Two passes over the block's 32 floats (the second from L1): sizeless SVE vectors cannot
  // be kept in an array between them.
  for (int64_t i = 0; i < k / kQK; ++i, x += kQK) {
    auto vmax = hn::Zero(df);
    for (size_t c = 0; c < kVecs; ++c) {
      const auto v = hn::LoadU(df, x + c * kN);
      // Eq(v, v) is false for NaN: those lanes contribute 0 (the reference skips them).
      vmax = hn::Max(vmax, hn::IfThenElseZero(hn::Eq(v, v), hn::Abs(v)));
    }
    const float amax = hn::GetLane(hn::MaxOfLanes(df, vmax));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[i].d = ggml_fp32_to_fp16(d);
    const auto vid = hn::Set(df, id);
    auto sum = hn::Zero(di);
    for (size_t c = 0; c < kVecs; ++c) {
      const auto q = RoundToQ8(df, hn::Mul(hn::LoadU(df, x + c * kN), vid));
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
