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

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/fp16-inl.h"
#include "kernels/prefetch.h"
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
// register file: 32 vectors on AVX-512 and on every A64 target (NEON's v0-v31, SVE's z0-z31),
// 16 on AVX2/SSE4/SSSE3. Highway 1.0.3 has no capability macro for the register count, so it is
// decided by architecture and, within x86 (whose targets are ordered), by target.
#if (HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3) || \
    (HWY_ARCH_ARM_A64 && (HWY_TARGET & (HWY_NEON | HWY_SVE | HWY_SVE2 | HWY_SVE_256 | HWY_SVE2_128)))
constexpr size_t kNR = 12;
#else
constexpr size_t kNR = 6;
#endif
static_assert(kNR <= kNRMax, "scratch is sized for kNRMax");

// Scratch layout in floats: packed a block, packed b panel, one widened f16 row.
constexpr size_t kWorkFloats = kMC * kKC + kNRMax * kKC + kKC;

// Rows of a as the packed path reads them: Row(i, k0, kc, tmp) returns elements [k0, k0 + kc) of
// row i as floats (in place for F32, widened or dequantized into `tmp`, kKC floats); k_align is
// the granularity of k0 and kc (a quantized row is dequantized in whole blocks).
template <typename TA>
struct DenseRows {
  const TA* HWY_RESTRICT a;
  size_t lda;
  static constexpr size_t k_align = 1;
  HWY_INLINE const float* Row(size_t i, size_t k0, size_t kc, float* HWY_RESTRICT tmp) const {
    if constexpr (sizeof(TA) == 2) {
      const hn::ScalableTag<float> d;
      F16ToF32Row(d, kc, reinterpret_cast<const uint16_t*>(a + i * lda + k0), tmp);
      return tmp;
    } else {
      (void)tmp;
      return a + i * lda + k0;
    }
  }
};

struct QuantRows {
  const uint8_t* HWY_RESTRICT a;
  size_t nb1;          // bytes between rows
  size_t k_align;      // elements per block
  size_t block_bytes;  // bytes per block
  void (*to_float)(const void* x, float* y, int64_t k);  // whole blocks
  HWY_INLINE const float* Row(size_t i, size_t k0, size_t kc, float* HWY_RESTRICT tmp) const {
    to_float(a + i * nb1 + k0 / k_align * block_bytes, tmp, static_cast<int64_t>(kc));
    return tmp;
  }
};

// Packs `rows` (<= MR) rows of a starting at row r0, k in [k0, k0 + kc), into a panel
// ap[k * MR + i]; rows beyond `rows` are zero so the micro-kernel needs no row mask.
template <class D, class Rows>
HWY_INLINE void PackAPanel(D d, const Rows& a, size_t r0, size_t rows, size_t k0, size_t kc,
                           float* HWY_RESTRICT ap, float* HWY_RESTRICT tmp) {
  const size_t MR = 2 * hn::Lanes(d);
  for (size_t i = 0; i < rows; ++i) {
    const float* HWY_RESTRICT src = a.Row(r0 + i, k0, kc, tmp);
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

// Writes one row of a c tile: the first `mr` (<= 2 * Lanes(d)) lanes of v0:v1, added to the row
// when `accumulate`.
template <class D, class V = hn::Vec<D>>
HWY_INLINE void StoreTileRow(D d, V v0, V v1, float* HWY_RESTRICT row, size_t mr,
                             bool accumulate) {
  const size_t N = hn::Lanes(d);
  if (mr == 2 * N) {
    if (accumulate) {
      v0 = hn::Add(v0, hn::LoadU(d, row));
      v1 = hn::Add(v1, hn::LoadU(d, row + N));
    }
    hn::StoreU(v0, d, row);
    hn::StoreU(v1, d, row + N);
    return;
  }
  HWY_ALIGN float buf[2 * hn::MaxLanes(d)];
  hn::Store(v0, d, buf);
  hn::Store(v1, d, buf + N);
  for (size_t i = 0; i < mr; ++i) row[i] = accumulate ? row[i] + buf[i] : buf[i];
}

// c tile (kNR rows of c, 2 vectors of m) = [c +] sum_k ap[k][:] * bp[k][j]. Only the first
// `mr` lanes of each row and the first `nr` rows are written. The accumulators are named
// variables, not an array: SVE vectors are sizeless types, which cannot be array elements; the
// pairs at j >= kNR are never touched and compile away.
// kDirect: bp is b itself (row j of the tile at bp + j * ldb, k contiguous; all kNR rows
// exist), not a packed panel: full tiles skip the packing of b, which the packed path redid for
// every block of kMC rows of a.
template <bool kDirect, class D>
HWY_INLINE void MicroKernel(D d, size_t kc, const float* HWY_RESTRICT ap,
                            const float* HWY_RESTRICT bp, size_t ldb, float* HWY_RESTRICT c,
                            size_t ldc, size_t mr, size_t nr, bool accumulate) {
  using V = hn::Vec<D>;
  static_assert(kNR == 6 || kNR == 12, "the accumulators below are written out for 12 columns");
  const size_t N = hn::Lanes(d);
#define GGML_MK_DECLARE(j) HWY_MAYBE_UNUSED V c0_##j = hn::Zero(d), c1_##j = hn::Zero(d);
  GGML_MK_DECLARE(0) GGML_MK_DECLARE(1) GGML_MK_DECLARE(2) GGML_MK_DECLARE(3)
  GGML_MK_DECLARE(4) GGML_MK_DECLARE(5) GGML_MK_DECLARE(6) GGML_MK_DECLARE(7)
  GGML_MK_DECLARE(8) GGML_MK_DECLARE(9) GGML_MK_DECLARE(10) GGML_MK_DECLARE(11)
#undef GGML_MK_DECLARE
  for (size_t k = 0; k < kc; ++k) {
    const V a0 = hn::Load(d, ap + k * 2 * N);
    const V a1 = hn::Load(d, ap + k * 2 * N + N);
    const float* HWY_RESTRICT bk = kDirect ? bp + k : bp + k * kNR;
    const size_t sj = kDirect ? ldb : 1;
#define GGML_MK_STEP(j)                        \
  if constexpr (j < kNR) {                     \
    const V bj = hn::Set(d, bk[j * sj]);       \
    c0_##j = hn::MulAdd(a0, bj, c0_##j);       \
    c1_##j = hn::MulAdd(a1, bj, c1_##j);       \
  }
    GGML_MK_STEP(0) GGML_MK_STEP(1) GGML_MK_STEP(2) GGML_MK_STEP(3)
    GGML_MK_STEP(4) GGML_MK_STEP(5) GGML_MK_STEP(6) GGML_MK_STEP(7)
    GGML_MK_STEP(8) GGML_MK_STEP(9) GGML_MK_STEP(10) GGML_MK_STEP(11)
#undef GGML_MK_STEP
  }
#define GGML_MK_STORE(j) \
  if constexpr (j < kNR) \
    if (j < nr) StoreTileRow(d, c0_##j, c1_##j, c + j * ldc, mr, accumulate);
  GGML_MK_STORE(0) GGML_MK_STORE(1) GGML_MK_STORE(2) GGML_MK_STORE(3)
  GGML_MK_STORE(4) GGML_MK_STORE(5) GGML_MK_STORE(6) GGML_MK_STORE(7)
  GGML_MK_STORE(8) GGML_MK_STORE(9) GGML_MK_STORE(10) GGML_MK_STORE(11)
#undef GGML_MK_STORE
}

// The packed path over one block of c (see matmul.h). `work` holds kWorkFloats floats, aligned
// to the vector size. `a` is a DenseRows or QuantRows.
template <class D, class Rows>
HWY_INLINE void MulMatPacked(D d, size_t K, const Rows& a, const float* HWY_RESTRICT b,
                             size_t ldb, float* HWY_RESTRICT c, size_t ldc, size_t m_begin,
                             size_t m_end, size_t n_begin, size_t n_end,
                             float* HWY_RESTRICT work) {
  const size_t MR = 2 * hn::Lanes(d);
  float* HWY_RESTRICT ap = work;
  float* HWY_RESTRICT bp = ap + kMC * kKC;
  float* HWY_RESTRICT tmp = bp + kNRMax * kKC;
  // Equal K blocks (e.g. 384 -> one block, 1536 -> 3 x 512), so no block is a short remainder;
  // rounded up to k_align (kKC is a multiple of every block size, so kb stays <= kKC).
  const size_t num_kb = (K + kKC - 1) / kKC;
  const size_t kb = ((K + num_kb - 1) / num_kb + a.k_align - 1) / a.k_align * a.k_align;
  for (size_t k0 = 0; k0 < K; k0 += kb) {
    const size_t kc = HWY_MIN(kb, K - k0);
    for (size_t m0 = m_begin; m0 < m_end; m0 += kMC) {
      const size_t mc = HWY_MIN(kMC, m_end - m0);
      const size_t num_panels = (mc + MR - 1) / MR;
      for (size_t p = 0; p < num_panels; ++p) {
        PackAPanel(d, a, m0 + p * MR, HWY_MIN(MR, mc - p * MR), k0, kc, ap + p * MR * kc, tmp);
      }
      for (size_t n0 = n_begin; n0 < n_end; n0 += kNR) {
        const size_t nr = HWY_MIN(kNR, n_end - n0);
        if (nr == kNR) {
          for (size_t p = 0; p < num_panels; ++p) {
            MicroKernel<true>(d, kc, ap + p * MR * kc, b + n0 * ldb + k0, ldb, c + n0 * ldc + m0 + p * MR, ldc,
                              HWY_MIN(MR, mc - p * MR), nr, k0 != 0);
          }
          continue;
        }
        PackBPanel(b + n0 * ldb + k0, ldb, nr, kc, bp);
        for (size_t p = 0; p < num_panels; ++p) {
          MicroKernel<false>(d, kc, ap + p * MR * kc, bp, kNR, c + n0 * ldc + m0 + p * MR, ldc,
                             HWY_MIN(MR, mc - p * MR), nr, k0 != 0);
        }
      }
    }
  }
}

// Horizontal sum of one DotTile accumulator plus the scalar tail k in [k_end, K).
template <class D, typename TA, class V = hn::Vec<D>>
HWY_INLINE float FinishDot(D d, V acc, const TA* HWY_RESTRICT a, const float* HWY_RESTRICT b,
                           size_t k_end, size_t K) {
  float sum = hn::GetLane(hn::SumOfLanes(d, acc));
  for (size_t k = k_end; k < K; ++k) sum += ScalarAsF32(a[k]) * b[k];
  return sum;
}

// c[j * ldc + i] = dot(a row i, b row j) for i < kRA (1 or 4), j < kRB (1..5): kRA x kRB vector
// accumulators over K, then one horizontal sum each. Each loaded vector feeds kRA or kRB FMAs.
// Named accumulators, not arrays (sizeless SVE vectors); unused ones compile away.
// `next` (or nullptr) is the first of kRA rows (stride lda) the caller reads later (MulMatDots:
// kernels/prefetch.h's distance ahead): they are prefetched at the pace this tile is read. A
// decoder step streams every weight once (tiny.en: 56 MB of F16), and the FMA chains waiting on
// each load fill the reorder buffer long before enough cache misses are in flight.
template <size_t kRA, size_t kRB, class D, typename TA>
HWY_INLINE void DotTile(D d, size_t K, const TA* HWY_RESTRICT a, size_t lda,
                        const float* HWY_RESTRICT b, size_t ldb, float* HWY_RESTRICT c,
                        size_t ldc, const TA* HWY_RESTRICT next) {
  using V = hn::Vec<D>;
  static_assert(kRA == 1 || kRA == 4, "rows of a per tile");
  static_assert(1 <= kRB && kRB <= 5, "rows of b per tile");
  const size_t N = hn::Lanes(d);
#define GGML_DT_DECLARE(i)                                                \
  HWY_MAYBE_UNUSED V c##i##0 = hn::Zero(d), c##i##1 = hn::Zero(d), \
                     c##i##2 = hn::Zero(d), c##i##3 = hn::Zero(d), c##i##4 = hn::Zero(d);
  GGML_DT_DECLARE(0) GGML_DT_DECLARE(1) GGML_DT_DECLARE(2) GGML_DT_DECLARE(3)
#undef GGML_DT_DECLARE
  size_t k = 0;
  for (; k + N <= K; k += N) {
    if (next != nullptr) {
      for (size_t i = 0; i < kRA; ++i) hwy::Prefetch(next + i * lda + k);
    }
    const V b0 = hn::LoadU(d, b + k);
    const V b1 = kRB > 1 ? hn::LoadU(d, b + 1 * ldb + k) : b0;
    const V b2 = kRB > 2 ? hn::LoadU(d, b + 2 * ldb + k) : b0;
    const V b3 = kRB > 3 ? hn::LoadU(d, b + 3 * ldb + k) : b0;
    const V b4 = kRB > 4 ? hn::LoadU(d, b + 4 * ldb + k) : b0;
#define GGML_DT_ROW(i)                                            \
  if constexpr (i < kRA) {                                        \
    const V va = LoadAsF32(d, a + i * lda + k);                   \
    c##i##0 = hn::MulAdd(va, b0, c##i##0);                        \
    if constexpr (kRB > 1) c##i##1 = hn::MulAdd(va, b1, c##i##1); \
    if constexpr (kRB > 2) c##i##2 = hn::MulAdd(va, b2, c##i##2); \
    if constexpr (kRB > 3) c##i##3 = hn::MulAdd(va, b3, c##i##3); \
    if constexpr (kRB > 4) c##i##4 = hn::MulAdd(va, b4, c##i##4); \
  }
    GGML_DT_ROW(0) GGML_DT_ROW(1) GGML_DT_ROW(2) GGML_DT_ROW(3)
#undef GGML_DT_ROW
  }
#define GGML_DT_OUT(i, j)           \
  if constexpr (i < kRA && j < kRB) \
    c[j * ldc + i] = FinishDot(d, c##i##j, a + i * lda, b + j * ldb, k, K);
  GGML_DT_OUT(0, 0) GGML_DT_OUT(0, 1) GGML_DT_OUT(0, 2) GGML_DT_OUT(0, 3) GGML_DT_OUT(0, 4)
  GGML_DT_OUT(1, 0) GGML_DT_OUT(1, 1) GGML_DT_OUT(1, 2) GGML_DT_OUT(1, 3) GGML_DT_OUT(1, 4)
  GGML_DT_OUT(2, 0) GGML_DT_OUT(2, 1) GGML_DT_OUT(2, 2) GGML_DT_OUT(2, 3) GGML_DT_OUT(2, 4)
  GGML_DT_OUT(3, 0) GGML_DT_OUT(3, 1) GGML_DT_OUT(3, 2) GGML_DT_OUT(3, 3) GGML_DT_OUT(3, 4)
#undef GGML_DT_OUT
}

// b rows per DotTile: 4 x 5 accumulators plus the 5 b vectors and one a vector fit 32 registers,
// but not the 16 of AVX2 and below, where they spill; 4 x 3 does not (a beam-5 step's
// vocabulary projection, [384, 51864] F16 x 5 rows, ran 1.2-1.4x faster with groups of 3 + 2
// than 4 + 1 on AVX2, //kernels:matmul_benchmark logits_51864x384x5, best of 5, three
// interleaved runs). With 32 registers one group of 5 converts each F16 a vector once for all
// 5 beams, where 4 + 1 converted it twice.
constexpr size_t kDotRowsB = kNR == 12 ? 5 : 3;

// DotTile with a run-time number of b rows (1..5).
template <size_t kRA, class D, typename TA>
HWY_INLINE void DotTileRows(D d, size_t K, const TA* a, size_t lda, const float* b, size_t ldb,
                            size_t nb, float* c, size_t ldc, const TA* next) {
  switch (nb) {
    case 5:
      if constexpr (kDotRowsB >= 5) return DotTile<kRA, 5>(d, K, a, lda, b, ldb, c, ldc, next);
      [[fallthrough]];  // not reached: nb <= kDotRowsB
    case 4:
      return DotTile<kRA, 4>(d, K, a, lda, b, ldb, c, ldc, next);
    case 3:
      return DotTile<kRA, 3>(d, K, a, lda, b, ldb, c, ldc, next);
    case 2:
      return DotTile<kRA, 2>(d, K, a, lda, b, ldb, c, ldc, next);
    default:
      return DotTile<kRA, 1>(d, K, a, lda, b, ldb, c, ldc, next);
  }
}


// The dot-product path over one block of c (few b rows: decoder steps, batched beams): a is
// streamed once, 4 rows at a time, and each 4-row tile meets every group of up to kDotRowsB b
// rows while it is in L1 (the b rows stay in L1 too). Streaming a once per group instead read the logits
// projection (tiny.en: 40 MB of F16) twice from memory for 5 beams.
template <class D, typename TA>
HWY_INLINE void MulMatDots(D d, size_t K, const TA* a, size_t lda, const float* b, size_t ldb,
                           float* c, size_t ldc, size_t m_begin, size_t m_end, size_t n_begin,
                           size_t n_end) {
  // The first group of b rows prefetches the next tile of a (the same rows for the later
  // groups are in L1); only rows inside the block are prefetched.
  const size_t ahead = PrefetchRowsAhead(lda * sizeof(TA));
  size_t m = m_begin;
  for (; m + 4 <= m_end; m += 4) {
    const TA* next = m + ahead + 4 <= m_end ? a + (m + ahead) * lda : nullptr;
    for (size_t n0 = n_begin; n0 < n_end; n0 += kDotRowsB) {
      const size_t nb = HWY_MIN(kDotRowsB, n_end - n0);
      DotTileRows<4>(d, K, a + m * lda, lda, b + n0 * ldb, ldb, nb, c + n0 * ldc + m, ldc,
                     n0 == n_begin ? next : nullptr);
    }
  }
  for (; m < m_end; ++m) {
    const TA* next = m + 1 < m_end ? a + (m + 1) * lda : nullptr;
    for (size_t n0 = n_begin; n0 < n_end; n0 += kDotRowsB) {
      const size_t nb = HWY_MIN(kDotRowsB, n_end - n0);
      DotTileRows<1>(d, K, a + m * lda, lda, b + n0 * ldb, ldb, nb, c + n0 * ldc + m, ldc,
                     n0 == n_begin ? next : nullptr);
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace ggml_cpu
HWY_AFTER_NAMESPACE();

#endif  // GGML_WHISPER_KERNELS_MATMUL_INL_H_
