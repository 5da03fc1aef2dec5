// mul_mat entry points (kernels/matmul.h): argument checks, then one HWY_DYNAMIC_DISPATCH per
// call into the per-target drivers of matmul-inl.h.
#include "kernels/matmul.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/matmul.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/matmul-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ggml_cpu {
namespace HWY_NAMESPACE {

size_t MulMatWorkFloats() { return kWorkFloats; }

template <typename TA>
HWY_INLINE void MulMatBlock(size_t k, const TA* a, size_t lda, const float* b, size_t ldb,
                            float* c, size_t ldc, size_t m_begin, size_t m_end, size_t n_begin,
                            size_t n_end, float* work) {
  const hn::ScalableTag<float> d;
  if (n_end - n_begin >= kMulMatPackedMinN) {
    MulMatPacked(d, k, DenseRows<TA>{a, lda}, b, ldb, c, ldc, m_begin, m_end, n_begin, n_end, work);
  } else {
    MulMatDots(d, k, a, lda, b, ldb, c, ldc, m_begin, m_end, n_begin, n_end);
  }
}

void MulMatF32Block(size_t k, const float* a, size_t lda, const float* b, size_t ldb, float* c,
                    size_t ldc, size_t m_begin, size_t m_end, size_t n_begin, size_t n_end,
                    float* work) {
  MulMatBlock(k, a, lda, b, ldb, c, ldc, m_begin, m_end, n_begin, n_end, work);
}

void MulMatF16Block(size_t k, const ggml_fp16_t* a, size_t lda, const float* b, size_t ldb,
                    float* c, size_t ldc, size_t m_begin, size_t m_end, size_t n_begin,
                    size_t n_end, float* work) {
  MulMatBlock(k, a, lda, b, ldb, c, ldc, m_begin, m_end, n_begin, n_end, work);
}

// The dot-product path for any number of b rows (MulMatF32Dots, MulMatF16Dots).
void MulMatF32DotsBlock(size_t k, const float* a, size_t lda, const float* b, size_t ldb, float* c,
                        size_t ldc, size_t m_begin, size_t m_end, size_t n_begin, size_t n_end) {
  const hn::ScalableTag<float> d;
  MulMatDots(d, k, a, lda, b, ldb, c, ldc, m_begin, m_end, n_begin, n_end);
}

void MulMatF16DotsBlock(size_t k, const ggml_fp16_t* a, size_t lda, const float* b, size_t ldb,
                        float* c, size_t ldc, size_t m_begin, size_t m_end, size_t n_begin,
                        size_t n_end) {
  const hn::ScalableTag<float> d;
  MulMatDots(d, k, a, lda, b, ldb, c, ldc, m_begin, m_end, n_begin, n_end);
}

void MulMatDequantBlock(size_t k, const MulMatDequantOps* ops, const void* a, size_t a_nb1,
                        const float* b, size_t ldb, float* c, size_t ldc, size_t m_begin,
                        size_t m_end, size_t n_begin, size_t n_end, float* work) {
  const hn::ScalableTag<float> d;
  const QuantRows rows{static_cast<const uint8_t*>(a), a_nb1, static_cast<size_t>(ops->blck_size),
                       ops->block_bytes, ops->to_float};
  MulMatPacked(d, k, rows, b, ldb, c, ldc, m_begin, m_end, n_begin, n_end, work);
}

}  // namespace HWY_NAMESPACE
}  // namespace ggml_cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "absl/strings/str_format.h"
#include "kernels/asan_ranges.h"
#include "kernels/dispatch.h"

namespace ggml_cpu {

HWY_EXPORT(MulMatWorkFloats);
HWY_EXPORT(MulMatF32Block);
HWY_EXPORT(MulMatF16Block);
HWY_EXPORT(MulMatDequantBlock);
HWY_EXPORT(MulMatF32DotsBlock);
HWY_EXPORT(MulMatF16DotsBlock);

namespace {

constexpr size_t kWorkAlign = 64;

absl::Status Invalid(const char* fn, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s", fn, what));
}

// Checks the c block and its ranges; shared by every entry point.
absl::Status CheckBlock(const char* fn, const float* c, size_t ldc, size_t m_begin, size_t m_end,
                        size_t n_begin, size_t n_end) {
  if (m_begin > m_end) return Invalid(fn, absl::StrFormat("m_begin=%zu > m_end=%zu", m_begin, m_end));
  if (n_begin > n_end) return Invalid(fn, absl::StrFormat("n_begin=%zu > n_end=%zu", n_begin, n_end));
  if (m_begin == m_end || n_begin == n_end) return absl::OkStatus();
  if (c == nullptr) return Invalid(fn, "c is null");
  if (ldc < m_end) return Invalid(fn, absl::StrFormat("ldc=%zu < m_end=%zu", ldc, m_end));
  return absl::OkStatus();
}

void ZeroBlock(float* c, size_t ldc, size_t m_begin, size_t m_end, size_t n_begin, size_t n_end) {
  for (size_t n = n_begin; n < n_end; ++n) memset(c + n * ldc + m_begin, 0, (m_end - m_begin) * 4);
}

// The operands of a dense block (a, b, strides; c via CheckBlock).
absl::Status CheckDenseOperands(const char* fn, size_t k, const void* a, size_t lda, const float* b,
                                size_t ldb, const float* c, size_t ldc, size_t m_begin,
                                size_t m_end, size_t n_begin, size_t n_end) {
  absl::Status s = CheckBlock(fn, c, ldc, m_begin, m_end, n_begin, n_end);
  if (!s.ok() || m_begin == m_end || n_begin == n_end || k == 0) return s;
  if (a == nullptr) return Invalid(fn, "a is null");
  if (b == nullptr) return Invalid(fn, "b is null");
  if (lda < k) return Invalid(fn, absl::StrFormat("lda=%zu < k=%zu", lda, k));
  if (ldb < k) return Invalid(fn, absl::StrFormat("ldb=%zu < k=%zu", ldb, k));
  return absl::OkStatus();
}

// ... and the scratch buffer of the entry points that take one.
absl::Status CheckDense(const char* fn, size_t k, const void* a, size_t lda, const float* b,
                        size_t ldb, const float* c, size_t ldc, size_t m_begin, size_t m_end,
                        size_t n_begin, size_t n_end, const void* work, size_t work_size) {
  absl::Status s = CheckDenseOperands(fn, k, a, lda, b, ldb, c, ldc, m_begin, m_end, n_begin, n_end);
  if (!s.ok() || m_begin == m_end || n_begin == n_end || k == 0) return s;
  if (work == nullptr || work_size < MulMatWorkSize()) {
    return Invalid(fn, absl::StrFormat("work_size=%zu (work %s) < MulMatWorkSize()=%zu", work_size,
                                       work == nullptr ? "null" : "given", MulMatWorkSize()));
  }
  return absl::OkStatus();
}

// Under ASan with this file uninstrumented (kernels/asan_ranges.h): every row the block will
// touch, checked once per call. a and b rows hold k elements; c rows hold m_end - m_begin floats.
void AsanCheckDense(const char* fn, size_t k, const void* a, size_t a_elem, size_t lda,
                    const float* b, size_t ldb, const float* c, size_t ldc, size_t m_begin,
                    size_t m_end, size_t n_begin, size_t n_end, const void* work) {
  if (!AsanRuntimePresent()) return;
  AsanCheckRows(fn, "a", static_cast<const char*>(a) + m_begin * lda * a_elem, m_end - m_begin,
                k * a_elem, lda * a_elem);
  AsanCheckRows(fn, "b", b + n_begin * ldb, n_end - n_begin, k * sizeof(float),
                ldb * sizeof(float));
  AsanCheckRows(fn, "c", c + n_begin * ldc + m_begin, n_end - n_begin,
                (m_end - m_begin) * sizeof(float), ldc * sizeof(float));
  if (work != nullptr) AsanCheckRows(fn, "work", work, 1, MulMatWorkSize(), 0);
}

float* AlignWork(void* work) {
  const uintptr_t p = reinterpret_cast<uintptr_t>(work);
  return reinterpret_cast<float*>((p + kWorkAlign - 1) & ~uintptr_t{kWorkAlign - 1});
}

// Rows of a per vec_dot call in MulMatConverted: about 256 KiB of a, so the block stays in L2
// while every converted b row sweeps it.
size_t RowsPerABlock(size_t a_nb1) {
  const size_t rows = (size_t{256} << 10) / (a_nb1 == 0 ? 1 : a_nb1);
  return rows < 4 ? 4 : rows;
}

}  // namespace

size_t MulMatWorkSize() {
  InitDispatchOnce();
  return HWY_DYNAMIC_DISPATCH(MulMatWorkFloats)() * sizeof(float) + kWorkAlign;
}

absl::Status MulMatF32(size_t k, const float* a, size_t lda, const float* b, size_t ldb, float* c,
                       size_t ldc, size_t m_begin, size_t m_end, size_t n_begin, size_t n_end,
                       void* work, size_t work_size) {
  absl::Status s = CheckDense("MulMatF32", k, a, lda, b, ldb, c, ldc, m_begin, m_end, n_begin,
                              n_end, work, work_size);
  if (!s.ok() || m_begin == m_end || n_begin == n_end) return s;
  if (k == 0) {
    ZeroBlock(c, ldc, m_begin, m_end, n_begin, n_end);
    return s;
  }
  AsanCheckDense("MulMatF32", k, a, sizeof(float), lda, b, ldb, c, ldc, m_begin, m_end, n_begin, n_end,
                 work);
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(MulMatF32Block)(k, a, lda, b, ldb, c, ldc, m_begin, m_end, n_begin, n_end,
                                       AlignWork(work));
  return s;
}

absl::Status MulMatF16(size_t k, const ggml_fp16_t* a, size_t lda, const float* b, size_t ldb,
                       float* c, size_t ldc, size_t m_begin, size_t m_end, size_t n_begin,
                       size_t n_end, void* work, size_t work_size) {
  absl::Status s = CheckDense("MulMatF16", k, a, lda, b, ldb, c, ldc, m_begin, m_end, n_begin,
                              n_end, work, work_size);
  if (!s.ok() || m_begin == m_end || n_begin == n_end) return s;
  if (k == 0) {
    ZeroBlock(c, ldc, m_begin, m_end, n_begin, n_end);
    return s;
  }
  AsanCheckDense("MulMatF16", k, a, sizeof(ggml_fp16_t), lda, b, ldb, c, ldc, m_begin, m_end, n_begin, n_end,
                 work);
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(MulMatF16Block)(k, a, lda, b, ldb, c, ldc, m_begin, m_end, n_begin, n_end,
                                       AlignWork(work));
  return s;
}

absl::Status MulMatF32Dots(size_t k, const float* a, size_t lda, const float* b, size_t ldb,
                           float* c, size_t ldc, size_t m_begin, size_t m_end, size_t n_begin,
                           size_t n_end) {
  absl::Status s = CheckDenseOperands("MulMatF32Dots", k, a, lda, b, ldb, c, ldc, m_begin, m_end,
                                      n_begin, n_end);
  if (!s.ok() || m_begin == m_end || n_begin == n_end) return s;
  if (k == 0) {
    ZeroBlock(c, ldc, m_begin, m_end, n_begin, n_end);
    return s;
  }
  AsanCheckDense("MulMatF32Dots", k, a, sizeof(float), lda, b, ldb, c, ldc, m_begin, m_end, n_begin,
                 n_end, nullptr);
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(MulMatF32DotsBlock)(k, a, lda, b, ldb, c, ldc, m_begin, m_end, n_begin, n_end);
  return s;
}

absl::Status MulMatF16Dots(size_t k, const ggml_fp16_t* a, size_t lda, const float* b, size_t ldb,
                           float* c, size_t ldc, size_t m_begin, size_t m_end, size_t n_begin,
                           size_t n_end) {
  absl::Status s = CheckDenseOperands("MulMatF16Dots", k, a, lda, b, ldb, c, ldc, m_begin, m_end,
                                      n_begin, n_end);
  if (!s.ok() || m_begin == m_end || n_begin == n_end) return s;
  if (k == 0) {
    ZeroBlock(c, ldc, m_begin, m_end, n_begin, n_end);
    return s;
  }
  AsanCheckDense("MulMatF16Dots", k, a, sizeof(ggml_fp16_t), lda, b, ldb, c, ldc, m_begin, m_end,
                 n_begin, n_end, nullptr);
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(MulMatF16DotsBlock)(k, a, lda, b, ldb, c, ldc, m_begin, m_end, n_begin, n_end);
  return s;
}

absl::Status MulMatDequant(const MulMatDequantOps& ops, size_t k, const void* a, size_t a_nb1,
                           const float* b, size_t ldb, float* c, size_t ldc, size_t m_begin,
                           size_t m_end, size_t n_begin, size_t n_end, void* work,
                           size_t work_size) {
  const char* fn = "MulMatDequant";
  if (ops.blck_size <= 0 || static_cast<size_t>(ops.blck_size) > 512 || 512 % ops.blck_size != 0 ||
      ops.block_bytes == 0 || ops.to_float == nullptr) {
    return Invalid(fn, absl::StrFormat("dequant ops \"%s\" incomplete or block size %d does not divide 512",
                                       ops.name ? ops.name : "?", ops.blck_size));
  }
  if (k % static_cast<size_t>(ops.blck_size) != 0) {
    return Invalid(fn, absl::StrFormat("k=%zu is not a multiple of the %s block size %d", k,
                                       ops.name ? ops.name : "?", ops.blck_size));
  }
  const size_t row_bytes = k / static_cast<size_t>(ops.blck_size) * ops.block_bytes;
  absl::Status s = CheckBlock(fn, c, ldc, m_begin, m_end, n_begin, n_end);
  if (s.ok() && m_begin != m_end && n_begin != n_end && k != 0) {
    if (a == nullptr) return Invalid(fn, "a is null");
    if (b == nullptr) return Invalid(fn, "b is null");
    if (a_nb1 < row_bytes && m_end - m_begin > 1) {
      return Invalid(fn, absl::StrFormat("a_nb1=%zu < one %s row of k=%zu (%zu bytes)", a_nb1, ops.name, k, row_bytes));
    }
    if (ldb < k) return Invalid(fn, absl::StrFormat("ldb=%zu < k=%zu", ldb, k));
    if (work == nullptr || work_size < MulMatWorkSize()) {
      return Invalid(fn, absl::StrFormat("work_size=%zu (work %s) < MulMatWorkSize()=%zu", work_size,
                                         work == nullptr ? "null" : "given", MulMatWorkSize()));
    }
  }
  if (!s.ok() || m_begin == m_end || n_begin == n_end) return s;
  if (k == 0) {
    ZeroBlock(c, ldc, m_begin, m_end, n_begin, n_end);
    return s;
  }
  if (AsanRuntimePresent()) {
    AsanCheckRows(fn, "a", static_cast<const char*>(a) + m_begin * a_nb1, m_end - m_begin, row_bytes, a_nb1);
    AsanCheckRows(fn, "b", b + n_begin * ldb, n_end - n_begin, k * sizeof(float), ldb * sizeof(float));
    AsanCheckRows(fn, "c", c + n_begin * ldc + m_begin, n_end - n_begin, (m_end - m_begin) * sizeof(float),
                  ldc * sizeof(float));
    AsanCheckRows(fn, "work", work, 1, MulMatWorkSize(), 0);
  }
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(MulMatDequantBlock)(k, &ops, a, a_nb1, b, ldb, c, ldc, m_begin, m_end, n_begin,
                                           n_end, AlignWork(work));
  return s;
}

size_t MulMatConvertedRowBytes(const MulMatRowOps& ops, size_t k) {
  const size_t blck = ops.blck_size > 0 ? static_cast<size_t>(ops.blck_size) : 1;
  return k / blck * ops.vec_dot_block_bytes;
}

size_t MulMatConvertedWorkSize(const MulMatRowOps& ops, size_t k, size_t n) {
  return n * MulMatConvertedRowBytes(ops, k);
}

namespace {
absl::Status CheckOps(const char* fn, const MulMatRowOps& ops, size_t k) {
  if (ops.blck_size <= 0 || ops.vec_dot_block_bytes == 0 || ops.from_float == nullptr ||
      ops.vec_dot == nullptr) {
    return Invalid(fn, absl::StrFormat("row ops \"%s\" incomplete", ops.name ? ops.name : "?"));
  }
  if (k % static_cast<size_t>(ops.blck_size) != 0) {
    return Invalid(fn, absl::StrFormat("k=%zu is not a multiple of the %s block size %d", k,
                                       ops.name ? ops.name : "?", ops.blck_size));
  }
  return absl::OkStatus();
}
}  // namespace

absl::Status MulMatConvertB(const MulMatRowOps& ops, size_t k, const float* b, size_t ldb,
                            size_t n_begin, size_t n_end, void* wdata, size_t wdata_size) {
  const char* fn = "MulMatConvertB";
  absl::Status s = CheckOps(fn, ops, k);
  if (!s.ok()) return s;
  if (n_begin > n_end) return Invalid(fn, absl::StrFormat("n_begin=%zu > n_end=%zu", n_begin, n_end));
  if (n_begin == n_end) return s;
  if (b == nullptr) return Invalid(fn, "b is null");
  if (ldb < k) return Invalid(fn, absl::StrFormat("ldb=%zu < k=%zu", ldb, k));
  const size_t rb = MulMatConvertedRowBytes(ops, k);
  if (wdata == nullptr || wdata_size < n_end * rb) {
    return Invalid(fn, absl::StrFormat("wdata_size=%zu < n_end * row bytes = %zu", wdata_size,
                                       n_end * rb));
  }
  char* w = static_cast<char*>(wdata);
  for (size_t n = n_begin; n < n_end; ++n) {
    ops.from_float(b + n * ldb, w + n * rb, static_cast<int64_t>(k));
  }
  return s;
}

absl::Status MulMatConverted(const MulMatRowOps& ops, size_t k, const void* a, size_t a_nb1,
                             const void* wdata, size_t wdata_size, float* c, size_t ldc,
                             size_t m_begin, size_t m_end, size_t n_begin, size_t n_end) {
  const char* fn = "MulMatConverted";
  absl::Status s = CheckOps(fn, ops, k);
  if (!s.ok()) return s;
  s = CheckBlock(fn, c, ldc, m_begin, m_end, n_begin, n_end);
  if (!s.ok() || m_begin == m_end || n_begin == n_end) return s;
  if (k == 0) {
    ZeroBlock(c, ldc, m_begin, m_end, n_begin, n_end);
    return s;
  }
  if (a == nullptr) return Invalid(fn, "a is null");
  const size_t rb = MulMatConvertedRowBytes(ops, k);
  if (wdata == nullptr || wdata_size < n_end * rb) {
    return Invalid(fn, absl::StrFormat("wdata_size=%zu < n_end * row bytes = %zu", wdata_size,
                                       n_end * rb));
  }
  const char* ab = static_cast<const char*>(a);
  const char* w = static_cast<const char*>(wdata);
  const size_t block = RowsPerABlock(a_nb1);
  for (size_t m0 = m_begin; m0 < m_end; m0 += block) {
    const size_t rows = m_end - m0 < block ? m_end - m0 : block;
    if (ops.vec_dot_cols != nullptr && n_end - n_begin > 1) {
      ops.vec_dot_cols(static_cast<int64_t>(k), static_cast<int64_t>(rows), ab + m0 * a_nb1, a_nb1,
                       w + n_begin * rb, rb, static_cast<int64_t>(n_end - n_begin), c + n_begin * ldc + m0, ldc);
      continue;
    }
    for (size_t n = n_begin; n < n_end; ++n) {
      ops.vec_dot(static_cast<int64_t>(k), static_cast<int64_t>(rows), ab + m0 * a_nb1, a_nb1,
                  w + n * rb, c + n * ldc + m0);
    }
  }
  return s;
}

}  // namespace ggml_cpu
#endif  // HWY_ONCE
