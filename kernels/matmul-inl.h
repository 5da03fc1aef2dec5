// Per-target mul_mat building blocks (see kernels/matmul.h for the algorithm): packing of a and
// b blocks, the register micro-kernel, and small dot-product tiles. Textual header.
#if defined(GGML_WHISPER_KERNELS_MATMUL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef GGML_WHISPER_KERNELS_MATMUL_INL_H_
#undef GGML_WHISPER_KERNELS_MATMUL_INL_H_
#else
#define GGML_WHISPER_KERNELS_MATMUL_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwy/highway.h"
#include "kernels/fp16-inl.h"
#include "kernels/vec-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ggml_cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Blocking constants, shared by all targets so that the scratch size is target-independent.
// kKC x kMC floats (256 KiB) of packed a stay in L2 (1 MiB here); kNRMax x kKC floats (24 KiB)
// of packed b stay in L1 (48 KiB).
constexpr size_t kKC = 512;   // K block
constexpr size_t kMC = 128;   // rows of a per packed block: a multiple of every target's MR
constexpr size_t kNRMax = 12;

// Columns (b rows) per micro-kernel: 2 x kNR accumulators plus 3 live registers must fit the
// register file (32 vectors on AVX-512, 16 elsewhere).
#if HWY_TARGET <= HWY_AVX3
constexpr size_t kNR = 12;
#else
constexpr size_t kNR = 6;
#endif
static_assert(kNR <= kNRMax, "scratch is sized for kNRMax");

// Scratch layout in floats: packed a block, packed b panel, one widened f16 row.
constexpr size_t kWorkFloats = kMC * kKC + kNRMax * kKC + kKC;

// Packs `rows` (<= MR) rows of a, k in [k0, k0 + kc), into a panel ap[k * MR + i]; rows beyond
// `rows` are zero so the micro-kernel needs no row mask. f16 rows are widened through `tmp`.
template <class D, typename TA>
HWY_INLINE void PackAPanel(D d, const TA* HWY_RESTRICT a, size_t lda, size_t rows, size_t k0,
                           size_t kc, float* HWY_RESTRICT ap, float* HWY_RESTRICT tmp) {
  const size_t MR = 2 * hn::Lanes(d);
  for (size_t i = 0; i < rows; ++i) {
    const float* src;
    if constexpr (sizeof(TA) == 2) {
      F16ToF32Row(d, kc, reinterpret_cast<const uint16_t*>(a + i * lda + k0), tmp);
      src = tmp;
    } else {
      src = a + i * lda + k0;
    }
    float* HWY_RESTRICT dst = ap + i;
    for (size_t k = 0; k < kc; ++k) dst[k * MR] = src[k];
  }
  for (size_t i = rows; i < MR; ++i) {
    for (size_t k = 0; k < kc; ++k) ap[k * MR + i] = 0.0f;
  }
}

// Packs `cols` (<= kNR) rows of b, k in [0, kc), into bp[k * kNR + j]; missing rows are zero.
HWY_INLINE void PackBPanel(const float* HWY_RESTRICT b, size_t ldb, size_t cols, size_t kc,
                           float* HWY_RESTRICT bp) {
  for (size_t j = 0; j < cols; ++j) {
    const float* HWY_RESTRICT src = b + j * ldb;
    for (size_t k = 0; k < kc; ++k) bp[k * kNR + j] = src[k];
  }
  for (size_t j = cols; j < kNR; ++j) {
    for (size_t k = 0; k < kc; ++k) bp[k * kNR + j] = 0.0f;
  }
}

// c tile (kNR rows of c, 2 vectors of m) = [c +] sum_k ap[k][:] * bp[k][j]. Only the first
// `mr` lanes of each row and the first `nr` rows are written.
template <class D>
HWY_INLINE void MicroKernel(D d, size_t kc, const float* HWY_RESTRICT ap,
                            const float* HWY_RESTRICT bp, float* HWY_RESTRICT c, size_t ldc,
                            size_t mr, size_t nr, bool accumulate) {
  using V = hn::Vec<D>;
  const size_t N = hn::Lanes(d);
  V acc0[kNR], acc1[kNR];
  HWY_UNROLL(16)
  for (size_t j = 0; j < kNR; ++j) {
    acc0[j] = hn::Zero(d);
    acc1[j] = hn::Zero(d);
  }
  for (size_t k = 0; k < kc; ++k) {
    const V a0 = hn::Load(d, ap + k * 2 * N);
    const V a1 = hn::Load(d, ap + k * 2 * N + N);
    const float* HWY_RESTRICT bk = bp + k * kNR;
    HWY_UNROLL(16)
    for (size_t j = 0; j < kNR; ++j) {
      const V bj = hn::Set(d, bk[j]);
      acc0[j] = hn::MulAdd(a0, bj, acc0[j]);
      acc1[j] = hn::MulAdd(a1, bj, acc1[j]);
    }
  }
  if (mr == 2 * N) {
    for (size_t j = 0; j < nr; ++j) {
      float* HWY_RESTRICT row = c + j * ldc;
      V r0 = acc0[j], r1 = acc1[j];
      if (accumulate) {
        r0 = hn::Add(r0, hn::LoadU(d, row));
        r1 = hn::Add(r1, hn::LoadU(d, row + N));
      }
      hn::StoreU(r0, d, row);
      hn::StoreU(r1, d, row + N);
    }
  } else {
    HWY_ALIGN float buf[2 * hn::MaxLanes(d)];
    for (size_t j = 0; j < nr; ++j) {
      float* HWY_RESTRICT row = c + j * ldc;
      hn::Store(acc0[j], d, buf);
      hn::Store(acc1[j], d, buf + N);
      for (size_t i = 0; i < mr; ++i) row[i] = accumulate ? row[i] + buf[i] : buf[i];
    }
  }
}

// The packed path over one block of c (see matmul.h). `work` holds kWorkFloats floats, aligned
// to the vector size.
template <class D, typename TA>
HWY_INLINE void MulMatPacked(D d, size_t K, const TA* HWY_RESTRICT a, size_t lda,
                             const float* HWY_RESTRICT b, size_t ldb, float* HWY_RESTRICT c,
                             size_t ldc, size_t m_begin, size_t m_end, size_t n_begin,
                             size_t n_end, float* HWY_RESTRICT work) {
  const size_t MR = 2 * hn::Lanes(d);
  float* HWY_RESTRICT ap = work;
  float* HWY_RESTRICT bp = ap + kMC * kKC;
  float* HWY_RESTRICT tmp = bp + kNRMax * kKC;
  // Equal K blocks (e.g. 384 -> one block, 1536 -> 3 x 512), so no block is a short remainder.
  const size_t num_kb = (K + kKC - 1) / kKC;
  const size_t kb = (K + num_kb - 1) / num_kb;
  for (size_t k0 = 0; k0 < K; k0 += kb) {
    const size_t kc = HWY_MIN(kb, K - k0);
    for (size_t m0 = m_begin; m0 < m_end; m0 += kMC) {
      const size_t mc = HWY_MIN(kMC, m_end - m0);
      const size_t num_panels = (mc + MR - 1) / MR;
      for (size_t p = 0; p < num_panels; ++p) {
        PackAPanel(d, a + (m0 + p * MR) * lda, lda, HWY_MIN(MR, mc - p * MR), k0, kc,
                   ap + p * MR * kc, tmp);
      }
      for (size_t n0 = n_begin; n0 < n_end; n0 += kNR) {
        const size_t nr = HWY_MIN(kNR, n_end - n0);
        PackBPanel(b + n0 * ldb + k0, ldb, nr, kc, bp);
        for (size_t p = 0; p < num_panels; ++p) {
          MicroKernel(d, kc, ap + p * MR * kc, bp, c + n0 * ldc + m0 + p * MR, ldc,
                      HWY_MIN(MR, mc - p * MR), nr, k0 != 0);
        }
      }
    }
  }
}

// c[j * ldc + i] = dot(a row i, b row j) for i < kRA, j < kRB: kRA x kRB vector accumulators
// over K, then one horizontal sum each. Each loaded vector feeds kRA or kRB FMAs.
template <size_t kRA, size_t kRB, class D, typename TA>
HWY_INLINE void DotTile(D d, size_t K, const TA* HWY_RESTRICT a, size_t lda,
                        const float* HWY_RESTRICT b, size_t ldb, float* HWY_RESTRICT c,
                        size_t ldc) {
  using V = hn::Vec<D>;
  const size_t N = hn::Lanes(d);
  V acc[kRA][kRB];
  for (size_t i = 0; i < kRA; ++i) {
    for (size_t j = 0; j < kRB; ++j) acc[i][j] = hn::Zero(d);
  }
  size_t k = 0;
  for (; k + N <= K; k += N) {
    V vb[kRB];
    for (size_t j = 0; j < kRB; ++j) vb[j] = hn::LoadU(d, b + j * ldb + k);
    for (size_t i = 0; i < kRA; ++i) {
      const V va = LoadAsF32(d, a + i * lda + k);
      for (size_t j = 0; j < kRB; ++j) acc[i][j] = hn::MulAdd(va, vb[j], acc[i][j]);
    }
  }
  for (size_t i = 0; i < kRA; ++i) {
    for (size_t j = 0; j < kRB; ++j) {
      float sum = hn::GetLane(hn::SumOfLanes(d, acc[i][j]));
      for (size_t kk = k; kk < K; ++kk) sum += ScalarAsF32(a[i * lda + kk]) * b[j * ldb + kk];
      c[j * ldc + i] = sum;
    }
  }
}

// DotTile with a run-time number of b rows (1..4).
template <size_t kRA, class D, typename TA>
HWY_INLINE void DotTileRows(D d, size_t K, const TA* a, size_t lda, const float* b, size_t ldb,
                            size_t nb, float* c, size_t ldc) {
  switch (nb) {
    case 4:
      return DotTile<kRA, 4>(d, K, a, lda, b, ldb, c, ldc);
    case 3:
      return DotTile<kRA, 3>(d, K, a, lda, b, ldb, c, ldc);
    case 2:
      return DotTile<kRA, 2>(d, K, a, lda, b, ldb, c, ldc);
    default:
      return DotTile<kRA, 1>(d, K, a, lda, b, ldb, c, ldc);
  }
}

// The dot-product path over one block of c: groups of up to 4 b rows; within a group, a is
// streamed 4 rows at a time (the group's b rows stay in L1).
template <class D, typename TA>
HWY_INLINE void MulMatDots(D d, size_t K, const TA* a, size_t lda, const float* b, size_t ldb,
                           float* c, size_t ldc, size_t m_begin, size_t m_end, size_t n_begin,
                           size_t n_end) {
  for (size_t n0 = n_begin; n0 < n_end; n0 += 4) {
    const size_t nb = HWY_MIN(size_t{4}, n_end - n0);
    const float* bn = b + n0 * ldb;
    float* cn = c + n0 * ldc;
    size_t m = m_begin;
    for (; m + 4 <= m_end; m += 4) {
      DotTileRows<4>(d, K, a + m * lda, lda, bn, ldb, nb, cn + m, ldc);
    }
    for (; m < m_end; ++m) DotTileRows<1>(d, K, a + m * lda, lda, bn, ldb, nb, cn + m, ldc);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace ggml_cpu
HWY_AFTER_NAMESPACE();

#endif  // GGML_WHISPER_KERNELS_MATMUL_INL_H_
