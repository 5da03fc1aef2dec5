// Per-target micro-kernels of QuantGemm (kernels/quant_gemm.h): packed weight panels (16 rows,
// unsigned codes value + 128) times quantized activation columns (QuantGemmBlockB). Included once
// per Highway target by quant_gemm.cc (and by tests).

// Per-target include guard (Highway's toggle pattern, hwy/examples/skeleton-inl.h).
#if defined(GGML_WHISPER_KERNELS_QUANT_GEMM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef GGML_WHISPER_KERNELS_QUANT_GEMM_INL_H_
#undef GGML_WHISPER_KERNELS_QUANT_GEMM_INL_H_
#else
#define GGML_WHISPER_KERNELS_QUANT_GEMM_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwy/highway.h"
#include "kernels/quant_gemm.h"

HWY_BEFORE_NAMESPACE();
namespace ggml_cpu {
namespace HWY_NAMESPACE {
namespace qgemm {
namespace hn = hwy::HWY_NAMESPACE;

constexpr size_t kPanel = kQuantGemmPanelRows;
constexpr size_t kPanelBlock = kQuantGemmPanelBlockBytes;
constexpr size_t kScaleOffset = 512;  // the 16 f32 scales follow the 8 x 64 code bytes

// One block's term of an output, the reference's expression lane by lane (IEEE operations, no
// contraction: built with -ffp-contract=off). kQ8: Q8_0's isum * (dx * dy); else Q4_0/Q5_0's
// isum * dx * dy.
template <bool kQ8, class V>
HWY_INLINE V BlockTerm(V isum_f, V dx, V dy) {
  return kQ8 ? hn::Mul(isum_f, hn::Mul(dx, dy)) : hn::Mul(hn::Mul(isum_f, dx), dy);
}

inline int32_t LoadI32(const void* p) {
  int32_t v;
  memcpy(&v, p, sizeof(v));
  return v;
}

#if HWY_ARCH_X86 && HWY_TARGET == HWY_AVX3_DL

// acc[i] += sum_{j<4} a[4i+j] * b[4i+j], a unsigned and b signed bytes, exactly (vpdpbusd).
// Highway 1.0.3 has no such op, and its AVX3_DL target string enables AVX-VNNI but not
// AVX512-VNNI, so the 512-bit intrinsic does not compile there: the instruction is written out.
// AVX3_DL guarantees AVX512-VNNI (CPUID 7.ECX[11]).
HWY_INLINE hn::Vec512<int32_t> Dpbusd(hn::Vec512<int32_t> acc, hn::Vec512<uint8_t> a,
                                      hn::Vec512<int32_t> b) {
  __m512i r = acc.raw;
  asm("vpdpbusd %[b], %[a], %[acc]" : [acc] "+v"(r) : [a] "v"(a.raw), [b] "v"(b.raw));
  return hn::Vec512<int32_t>{r};
}

// Columns per micro-kernel and panels (of 16 rows) per micro-kernel: kR x kC int32
// accumulators and as many f32 sums stay in the 32 zmm registers with the kR weight vectors.
constexpr bool kHasIntDot = true;
constexpr size_t kMaxCols = 6;
constexpr size_t kMaxPanels = 2;

// out[c * ldo + 16 r + lane] for kR panels x kC columns, over nb blocks. w: panel 0's first
// block (panels pstride bytes apart); y: column 0's first block (columns ystride bytes apart).
template <bool kQ8, size_t kR, size_t kC>
HWY_INLINE void Tile(size_t nb, const uint8_t* w, size_t pstride, const uint8_t* y,
                     size_t ystride, float* out, size_t ldo) {
  const hn::Full512<int32_t> di;
  const hn::Full512<uint8_t> du8;
  const hn::Full512<float> df;
  hn::Vec512<float> sum[kR][kC];
  HWY_UNROLL(8)
  for (size_t r = 0; r < kR; ++r) {
    HWY_UNROLL(8)
    for (size_t c = 0; c < kC; ++c) sum[r][c] = hn::Zero(df);
  }
  for (size_t i = 0; i < nb; ++i) {
    const uint8_t* wi = w + i * kPanelBlock;
    const uint8_t* yi = y + i * sizeof(QuantGemmBlockB);
    hn::Vec512<int32_t> acc[kR][kC];
    HWY_UNROLL(8)
    for (size_t c = 0; c < kC; ++c) {
      const auto corr = hn::Set(di, LoadI32(yi + c * ystride + offsetof(QuantGemmBlockB, corr)));
      HWY_UNROLL(8)
      for (size_t r = 0; r < kR; ++r) acc[r][c] = corr;
    }
    HWY_UNROLL(8)
    for (size_t q = 0; q < 8; ++q) {
      hn::Vec512<uint8_t> wq[kR];
      HWY_UNROLL(8)
      for (size_t r = 0; r < kR; ++r) wq[r] = hn::LoadU(du8, wi + r * pstride + 64 * q);
      HWY_UNROLL(8)
      for (size_t c = 0; c < kC; ++c) {
        const auto yq = hn::Set(di, LoadI32(yi + c * ystride + offsetof(QuantGemmBlockB, qs) + 4 * q));
        HWY_UNROLL(8)
        for (size_t r = 0; r < kR; ++r) acc[r][c] = Dpbusd(acc[r][c], wq[r], yq);
      }
    }
    HWY_UNROLL(8)
    for (size_t r = 0; r < kR; ++r) {
      const auto dx = hn::LoadU(df, reinterpret_cast<const float*>(wi + r * pstride + kScaleOffset));
      HWY_UNROLL(8)
      for (size_t c = 0; c < kC; ++c) {
        float dyf;
        memcpy(&dyf, yi + c * ystride, sizeof(dyf));
        const auto term = BlockTerm<kQ8>(hn::ConvertTo(df, acc[r][c]), dx, hn::Set(df, dyf));
        sum[r][c] = hn::Add(sum[r][c], term);
      }
    }
  }
  HWY_UNROLL(8)
  for (size_t c = 0; c < kC; ++c) {
    HWY_UNROLL(8)
    for (size_t r = 0; r < kR; ++r) hn::StoreU(sum[r][c], df, out + c * ldo + r * kPanel);
  }
}

#else  // portable: one panel x one column, int32 lane multiplies

constexpr bool kHasIntDot = false;
constexpr size_t kMaxCols = 1;
constexpr size_t kMaxPanels = 1;

#if HWY_HAVE_SCALABLE
using DI = hn::CappedTag<int32_t, 4>;
#else
using DI = hn::CappedTag<int32_t, kPanel>;
#endif

// As the VNNI Tile for one panel and one column: the same unsigned codes and correction, each
// code byte extracted to an int32 lane and multiplied by the activation code; on SVE targets
// sdot instead. (Not register-tiled: QuantGemmFast() is false here, so the graph executor keeps
// its other paths; SVE's sdot tile is checked under qemu only, not measured on hardware.)
template <bool kQ8, size_t kR, size_t kC>
HWY_INLINE void Tile(size_t nb, const uint8_t* w, size_t pstride, const uint8_t* y,
                     size_t ystride, float* out, size_t ldo) {
  static_assert(kR == 1 && kC == 1, "one panel, one column");
  (void)pstride;
  (void)ystride;
  (void)ldo;
  const DI di;
  const hn::RebindToUnsigned<DI> du;
  const hn::Rebind<float, DI> df;
  const size_t N = hn::Lanes(di);
  HWY_ALIGN float sum[kPanel] = {0};
  for (size_t i = 0; i < nb; ++i) {
    const uint8_t* wi = w + i * kPanelBlock;
    QuantGemmBlockB yb;
    memcpy(&yb, y + i * sizeof(QuantGemmBlockB), sizeof(yb));
    for (size_t v = 0; v < kPanel; v += N) {
#if HWY_ARCH_ARM_A64 && (HWY_TARGET & (HWY_SVE | HWY_SVE2 | HWY_SVE_256 | HWY_SVE2_128))
      // SVE's sdot (base SVE): the codes back to signed (byte ^ 0x80) times the activations'
      // 4 bytes broadcast to every int32 lane, 4 exact products per lane; no correction.
      const hn::Repartition<int8_t, DI> d8;
      const hn::Repartition<uint8_t, DI> du8;
      auto isum = hn::Zero(di);
      for (size_t q = 0; q < 8; ++q) {
        const auto ws = hn::BitCast(d8, hn::Xor(hn::LoadU(du8, wi + 64 * q + 4 * v), hn::Set(du8, 0x80)));
        isum = svdot_s32(isum, ws, hn::BitCast(d8, hn::Set(di, LoadI32(yb.qs + 4 * q))));
      }
#else
      auto isum = hn::Set(di, yb.corr);
      for (size_t q = 0; q < 8; ++q) {
        const auto wq = hn::LoadU(du, reinterpret_cast<const uint32_t*>(wi + 64 * q + 4 * v));
        const auto mask = hn::Set(du, 0xFFu);
        const auto w0 = hn::BitCast(di, hn::And(wq, mask));
        const auto w1 = hn::BitCast(di, hn::And(hn::ShiftRight<8>(wq), mask));
        const auto w2 = hn::BitCast(di, hn::And(hn::ShiftRight<16>(wq), mask));
        const auto w3 = hn::BitCast(di, hn::ShiftRight<24>(wq));
        isum = hn::Add(isum, hn::Mul(w0, hn::Set(di, yb.qs[4 * q + 0])));
        isum = hn::Add(isum, hn::Mul(w1, hn::Set(di, yb.qs[4 * q + 1])));
        isum = hn::Add(isum, hn::Mul(w2, hn::Set(di, yb.qs[4 * q + 2])));
        isum = hn::Add(isum, hn::Mul(w3, hn::Set(di, yb.qs[4 * q + 3])));
      }
#endif
      const auto dx = hn::LoadU(df, reinterpret_cast<const float*>(wi + kScaleOffset) + v);
      const auto term = BlockTerm<kQ8>(hn::ConvertTo(df, isum), dx, hn::Set(df, yb.d));
      hn::Store(hn::Add(hn::Load(df, sum + v), term), df, sum + v);
    }
  }
  memcpy(out, sum, sizeof(sum));
}

#endif  // HWY_ARCH_X86 && HWY_TARGET == HWY_AVX3_DL

// Tile for kR panels and kC <= kMaxCols columns, with kC = cols chosen at run time.
template <bool kQ8, size_t kR, size_t kC = kMaxCols>
HWY_INLINE void TileCols(size_t cols, size_t nb, const uint8_t* w, size_t pstride,
                         const uint8_t* y, size_t ystride, float* out, size_t ldo) {
  if constexpr (kC > 1) {
    if (cols < kC) return TileCols<kQ8, kR, kC - 1>(cols, nb, w, pstride, y, ystride, out, ldo);
  }
  Tile<kQ8, kR, kC>(nb, w, pstride, y, ystride, out, ldo);
}

// The same for kR <= kMaxPanels panels, kR = panels chosen at run time.
template <bool kQ8, size_t kR = kMaxPanels>
HWY_INLINE void TilePanels(size_t panels, size_t cols, size_t nb, const uint8_t* w, size_t pstride,
                           const uint8_t* y, size_t ystride, float* out, size_t ldo) {
  if constexpr (kR > 1) {
    if (panels < kR) return TilePanels<kQ8, kR - 1>(panels, cols, nb, w, pstride, y, ystride, out, ldo);
  }
  TileCols<kQ8, kR>(cols, nb, w, pstride, y, ystride, out, ldo);
}

// Columns per chunk: each panel group sweeps this many activation columns (48 x K / 32 x 40
// bytes: 23 KB at K = 384, which with the panels' 14 KB stays in a 48 KB L1). Measured on
// AVX3_DL, M = 1536, N = 1500, K = 384, 1 thread: 48 columns 5.8-6.0 ms, 96: 6.9-7.5 ms, 24: 6.0-6.2 ms.
// (Tiles, same shape: 2 panels x 6 columns 5.8-6.1 ms, 3 panels x 4 columns 5.9-6.1 ms; at 96
// columns, 4 x 3 8.9 ms and 1 x 12 19.7 ms. Two accumulator sets per output, halving the
// vpdpbusd dependency chains, gained nothing. Times are thread CPU times on a shared VM.)
constexpr size_t kColChunk = 48;

// The c block [m_begin, m_end) x [n_begin, n_end) (m_begin a multiple of 16): for each chunk of
// columns, each group of kMaxPanels panels against the chunk's columns, kMaxCols at a time. Full
// tiles are stored into c directly; tiles past m_end go through a stack tile first.
template <bool kQ8>
HWY_INLINE void GemmBlock(size_t k, const uint8_t* packed, const uint8_t* qb, float* c,
                          size_t ldc, size_t m_begin, size_t m_end, size_t n_begin,
                          size_t n_end) {
  const size_t nb = k / 32;
  const size_t pstride = nb * kPanelBlock;
  const size_t ystride = nb * sizeof(QuantGemmBlockB);
  HWY_ALIGN float tmp[kMaxCols * kMaxPanels * kPanel];
  for (size_t n0 = n_begin; n0 < n_end; n0 += kColChunk) {
    const size_t n1 = n_end - n0 < kColChunk ? n_end : n0 + kColChunk;
    for (size_t m0 = m_begin; m0 < m_end; m0 += kMaxPanels * kPanel) {
      const size_t rows = m_end - m0 < kMaxPanels * kPanel ? m_end - m0 : kMaxPanels * kPanel;
      const size_t panels = (rows + kPanel - 1) / kPanel;
      const uint8_t* w = packed + m0 / kPanel * pstride;
      for (size_t n = n0; n < n1; n += kMaxCols) {
        const size_t cols = n1 - n < kMaxCols ? n1 - n : kMaxCols;
        const uint8_t* y = qb + n * ystride;
        const bool direct = rows == panels * kPanel;
        float* out = direct ? c + n * ldc + m0 : tmp;
        const size_t ldo = direct ? ldc : panels * kPanel;
        TilePanels<kQ8>(panels, cols, nb, w, pstride, y, ystride, out, ldo);
        if (!direct) {
          for (size_t j = 0; j < cols; ++j) memcpy(c + (n + j) * ldc + m0, tmp + j * ldo, rows * sizeof(float));
        }
      }
    }
  }
}

}  // namespace qgemm
// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ggml_cpu
HWY_AFTER_NAMESPACE();

#endif  // GGML_WHISPER_KERNELS_QUANT_GEMM_INL_H_
