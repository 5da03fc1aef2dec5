// MUL_MAT, GET_ROWS and IM2COL for the graph executor (see graph_compute_ops.h).
//
// MUL_MAT (ggml's ggml_compute_forward_mul_mat): a [K, M, ne02, ne03] F32, F16 or quantized,
// b [K, N, ne12, ne13] F32 or F16 with any strides, dst [M, N, ne12, ne13] F32; a is broadcast
// over b's dims 2 and 3 (a batch = b batch / (ne12 / ne02), ...).
//   Phase 1 (only when needed; rows of b split across threads, then a barrier): b rows are
//   brought to what the kernel reads. Q8_0/Q4_0/Q5_0 a with N >= kInt8GemmMinN on a target with
//   VNNI: b rows quantized to Q8_0 (QuantGemmQuantizeB) and a packed into 16-row panels
//   (QuantGemmPackA), both split across threads. F32/F16 a, and other quantized a with N >=
//   kMulMatPackedMinN (dequantized into the kernel's packed panels, MulMatDequant): contiguous
//   F32 rows (needed when b is F16 or its rows are strided). Quantized a otherwise: every b
//   row quantized once to the type's vec_dot_type (Q8_0/Q8_1) with the from_float of
//   kernels/quant_matmul.h QuantMulMatRowOps, as ggml does for every N.
//   Phase 2: the output is cut into units of (batch, block of a rows, block of b rows) with block
//   edges at multiples of 64, about 4 units per thread; thread ith takes a contiguous range of
//   units. Each unit is one kernels/matmul.h call (MulMatF32 / MulMatF16 / MulMatDequant with
//   the thread's MulMatWorkSize() scratch, or MulMatConverted), or one QuantGemm call.
//   A node with ggml_mul_mat_set_matvec (ggml/ops.h) takes the small-N paths for every N: F32/F16
//   a MulMatF32Dots / MulMatF16Dots (no scratch), quantized a MulMatConverted after phase 1's
//   vec_dot_type rows, never MulMatDequant; its units never cut the b rows, so each thread reads
//   its rows of a once for all columns. The int8 GEMM stays allowed from kInt8GemmMinN columns:
//   its outputs have vec_dot's bits (Int8PathEqualsReferenceBits), and at 40 columns it is
//   faster than vec_dot even though it packs a per call (//kernels:quant_gemm_benchmark).
// Work buffer: [phase-1 rows, 64-byte aligned][packed a panels (int8 GEMM), 64-byte aligned]
// [nth x per-thread scratch, 64-byte aligned].
#include <stdio.h>
#include <string.h>

#include "absl/status/status.h"
#include "cpu/graph_compute_ops.h"
#include "ggml/fp16.h"
#include "ggml/ops.h"
#include "kernels/conv.h"
#include "kernels/matmul.h"
#include "kernels/quant_gemm.h"
#include "kernels/quant_matmul.h"
#include "kernels/quant_traits.h"
#include "kernels/vec.h"

namespace ggml_cpu {
namespace exec {
namespace {

constexpr size_t kAlign = 64;
constexpr int64_t kBlock = 64;  // unit edges (rows of a and of b) are multiples of this

size_t AlignUp(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool IsFloatType(ggml_type t) { return t == GGML_TYPE_F32 || t == GGML_TYPE_F16; }

// Q8_0, Q4_0 or Q5_0 a on a target with an int8 dot-product instruction (QuantGemmFast): b rows
// are quantized to Q8_0 for every N, as ggml does. From kInt8GemmMinN b rows per batch on, a is
// packed into 16-row panels once and the register-tiled int8 GEMM runs (kernels/quant_gemm.h);
// fewer rows take the vec_dot path (MulMatConverted). //kernels:quant_gemm_benchmark on AVX3_DL,
// 1 thread, M = 384, K = 384: N = 16: GEMM 99 us, vec_dot 68 us (dequantizing: 247 us); N = 32:
// 115 us against 130 us; M = 1536, N = 64: 509 us against 1001 us.
constexpr int64_t kInt8GemmMinN = 32;
bool Int8Types(const ggml_tensor* node) { return QuantGemmSupports(node->src[0]->type) && QuantGemmFast(); }
bool Int8Path(const ggml_tensor* node) {
  return Int8Types(node) && node->src[1]->ne[1] >= kInt8GemmMinN;
}

// Other quantized a with at least kMulMatPackedMinN b rows per batch: a is dequantized into the
// packed panels (MulMatDequant) and b read as F32, as for F16 a; fewer rows quantize b to the
// type's vec_dot_type and run integer dot products (MulMatConverted), reading a once.
bool DequantPath(const ggml_tensor* node) {
  return !IsFloatType(node->src[0]->type) && !Int8Types(node) &&
         node->src[1]->ne[1] >= static_cast<int64_t>(kMulMatPackedMinN) && !ggml_mul_mat_get_matvec(node);
}

// True when b rows can be handed to the F32 kernels in place: F32, contiguous rows, and row
// strides that are whole floats.
bool BDirect(const ggml_tensor* b) {
  return b->type == GGML_TYPE_F32 && b->nb[0] == sizeof(float) && b->nb[1] % sizeof(float) == 0 &&
         b->nb[2] % sizeof(float) == 0 && b->nb[3] % sizeof(float) == 0 &&
         (b->ne[1] == 1 || b->nb[1] >= static_cast<size_t>(b->ne[0]) * sizeof(float));
}

// Row stride in elements of a matrix with `rows` rows of k elements and byte stride nb1
// (element size es); a single row has no stride, so report k (what the kernels require).
size_t RowStride(int64_t rows, int64_t k, size_t nb1, size_t es) {
  return rows == 1 ? static_cast<size_t>(k) : nb1 / es;
}

// The layout of a MUL_MAT node's work buffer.
struct MulMatLayout {
  bool convert;         // phase 1 runs
  size_t row_bytes;     // bytes of one converted b row
  size_t convert_bytes; // all converted rows (aligned)
  size_t thread_bytes;  // per-thread scratch (aligned)
  size_t packed_bytes;  // Int8Path: a's packed panels, per a matrix (aligned); 0 otherwise
  size_t packed_total;  // ... for all ne02 * ne03 a matrices
};

MulMatLayout Layout(const ggml_tensor* node, int nth) {
  const ggml_tensor* a = node->src[0];
  const ggml_tensor* b = node->src[1];
  const int64_t K = a->ne[0];
  const int64_t rows = b->ne[1] * b->ne[2] * b->ne[3];
  MulMatLayout l{};
  if (Int8Path(node)) {
    l.convert = true;
    l.row_bytes = QuantGemmRowBytesB(static_cast<size_t>(K));
    l.thread_bytes = AlignUp(static_cast<size_t>(K) * sizeof(float));  // a b row as F32 (F16 or strided b)
    l.packed_bytes = AlignUp(QuantGemmPackedBytesA(static_cast<size_t>(K), static_cast<size_t>(a->ne[1])));
    l.packed_total = l.packed_bytes * static_cast<size_t>(a->ne[2] * a->ne[3]);
  } else if (IsFloatType(a->type) || DequantPath(node)) {
    l.convert = !BDirect(b);
    l.row_bytes = static_cast<size_t>(K) * sizeof(float);
    l.thread_bytes = ggml_mul_mat_get_matvec(node) ? 0 : AlignUp(MulMatWorkSize());  // the dot path has none
  } else {
    l.convert = true;
    l.row_bytes = MulMatConvertedRowBytes(*QuantMulMatRowOps(a->type), static_cast<size_t>(K));
    l.thread_bytes = AlignUp(static_cast<size_t>(K) * sizeof(float));  // a b row as F32 (F16 or strided b)
  }
  l.convert_bytes = l.convert ? AlignUp(l.row_bytes * static_cast<size_t>(rows)) : 0;
  (void)nth;
  return l;
}

// Copies/converts b row (n, i2, i3) to contiguous F32 at y, or returns the row itself when it is
// already contiguous F32.
const float* BRowF32(const ggml_tensor* b, int64_t n, int64_t i2, int64_t i3, float* y) {
  const char* row = RowPtr(b, n, i2, i3);
  const int64_t K = b->ne[0];
  if (b->type == GGML_TYPE_F32) {
    if (b->nb[0] == sizeof(float)) {
      if (reinterpret_cast<uintptr_t>(row) % alignof(float) == 0) return reinterpret_cast<const float*>(row);
      memcpy(y, row, static_cast<size_t>(K) * sizeof(float));
      return y;
    }
    for (int64_t k = 0; k < K; ++k) memcpy(&y[k], row + k * b->nb[0], sizeof(float));
    return y;
  }
  if (b->nb[0] == sizeof(ggml_fp16_t)) {
    ConvertF16ToF32(static_cast<size_t>(K), reinterpret_cast<const ggml_fp16_t*>(row), y);
    return y;
  }
  for (int64_t k = 0; k < K; ++k) {
    ggml_fp16_t h;
    memcpy(&h, row + k * b->nb[0], sizeof(h));
    y[k] = ggml_fp16_to_fp32(h);
  }
  return y;
}

// How phase 2 cuts one batch: parts along M and N (each edge a multiple of kBlock; the last part
// takes the remainder). split_n false: one part along N (the matvec mode: a read once per call).
struct Split {
  int64_t m_parts, m_chunk, n_parts, n_chunk;
};

Split Partition(int64_t batches, int64_t M, int64_t N, int nth, bool split_n) {
  const int64_t target = nth == 1 ? 1 : 4 * static_cast<int64_t>(nth);
  const int64_t per_batch = CeilDiv(target, batches);
  Split s;
  s.m_parts = std::max<int64_t>(1, std::min(per_batch, M / kBlock));
  s.n_parts = 1;
  if (s.m_parts < per_batch && split_n) {
    s.n_parts = std::max<int64_t>(1, std::min(CeilDiv(per_batch, s.m_parts), N / kBlock));
  }
  s.m_chunk = std::max<int64_t>(kBlock, CeilDiv(CeilDiv(M, s.m_parts), kBlock) * kBlock);
  s.n_chunk = std::max<int64_t>(kBlock, CeilDiv(CeilDiv(N, s.n_parts), kBlock) * kBlock);
  s.m_parts = std::max<int64_t>(1, M / s.m_chunk);  // the last part absorbs the remainder
  s.n_parts = std::max<int64_t>(1, N / s.n_chunk);
  return s;
}

// Int8Path's phase 1 for a: the 16-row panels of every a matrix (ne02 * ne03 of them), split
// across threads. False (after ReportError) if the kernel rejects the arguments.
bool PackA(const ComputeParams& p, const ggml_tensor* dst, const MulMatLayout& l, uint8_t* packed) {
  const ggml_tensor* a = dst->src[0];
  const size_t K = static_cast<size_t>(a->ne[0]), M = static_cast<size_t>(a->ne[1]);
  const int64_t panels = static_cast<int64_t>((M + kQuantGemmPanelRows - 1) / kQuantGemmPanelRows);
  int64_t begin, end;
  SplitRange(panels * a->ne[2] * a->ne[3], p.ith, p.nth, &begin, &end);
  for (int64_t u = begin; u < end;) {  // one call per a matrix's run of panels
    const int64_t ia = u / panels, p0 = u % panels, p1 = std::min(panels, p0 + (end - u));
    const char* ap = static_cast<const char*>(a->data) + (ia % a->ne[2]) * a->nb[2] + (ia / a->ne[2]) * a->nb[3];
    const absl::Status st = QuantGemmPackA(a->type, K, ap, a->nb[1], M, static_cast<size_t>(p0),
                                           static_cast<size_t>(p1), packed + static_cast<size_t>(ia) * l.packed_bytes,
                                           l.packed_bytes);
    if (!st.ok()) {
      ReportError(p, dst, "int8 gemm packing: %.*s", static_cast<int>(st.message().size()), st.message().data());
      return false;
    }
    u += p1 - p0;
  }
  return true;
}

// Phase 1 for b: this thread's share of the b rows, converted into `converted` (row r at r *
// row_bytes): quantized for the int8 GEMM (int8) or the vec_dot path (qops), else F32.
void ConvertBRows(const ComputeParams& p, const ggml_tensor* dst, const MulMatLayout& l, uint8_t* converted,
                  uint8_t* scratch, bool int8, const MulMatRowOps* qops) {
  const ggml_tensor* b = dst->src[1];
  const int64_t K = b->ne[0];
  int64_t begin, end;
  SplitRange(b->ne[1] * b->ne[2] * b->ne[3], p.ith, p.nth, &begin, &end);
  for (int64_t r = begin; r < end; ++r) {
    int64_t n, i2, i3;
    RowIndex(b->ne, r, &n, &i2, &i3);
    uint8_t* out = converted + static_cast<size_t>(r) * l.row_bytes;
    if (int8) {
      const float* row = BRowF32(b, n, i2, i3, reinterpret_cast<float*>(scratch));
      (void)QuantGemmQuantizeB(static_cast<size_t>(K), row, static_cast<size_t>(K), 0, 1, out, l.row_bytes);
    } else if (qops != nullptr) {
      qops->from_float(BRowF32(b, n, i2, i3, reinterpret_cast<float*>(scratch)), out, K);
    } else {
      const float* row = BRowF32(b, n, i2, i3, reinterpret_cast<float*>(out));
      if (row != reinterpret_cast<const float*>(out)) memcpy(out, row, l.row_bytes);
    }
  }
}

}  // namespace

bool CheckMulMat(const ggml_tensor* node, CheckMessage* msg) {
  const ggml_tensor* a = node->src[0];
  const ggml_tensor* b = node->src[1];
  if (node->type != GGML_TYPE_F32 || node->nb[0] != sizeof(float) || node->nb[1] % sizeof(float) != 0 ||
      node->nb[2] % sizeof(float) != 0 || node->nb[3] % sizeof(float) != 0) {
    return msg->Fail("result must be F32 with contiguous rows");
  }
  if (!IsFloatType(b->type)) return msg->Fail("b must be F32 or F16, got %s", ggml_type_name(b->type));
  if (a->ne[0] != b->ne[0] || a->ne[2] <= 0 || a->ne[3] <= 0 || b->ne[2] % a->ne[2] != 0 ||
      b->ne[3] % a->ne[3] != 0 || node->ne[0] != a->ne[1] || node->ne[1] != b->ne[1] || node->ne[2] != b->ne[2] ||
      node->ne[3] != b->ne[3]) {
    return msg->Fail("shapes of a, b and the result do not fit mul_mat");
  }
  const size_t ts = ggml_type_size(a->type);
  if (ts == 0 || a->nb[0] != ts) return msg->Fail("rows of a must be contiguous (nb0 = type size)");
  if (a->ne[1] > 1 && a->nb[1] < ggml_row_size(a->type, a->ne[0])) {
    return msg->Fail("rows of a overlap (nb1 = %zu bytes < one row)", a->nb[1]);
  }
  if (IsFloatType(a->type)) {
    if (a->nb[1] % ts != 0) return msg->Fail("row stride of a (nb1 = %zu) is not a whole element", a->nb[1]);
    return true;
  }
  const MulMatRowOps* ops = QuantMulMatRowOps(a->type);
  if (ops == nullptr) {
    return msg->Fail("a has type %s, which has no vec_dot kernel (F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 do)",
                     ggml_type_name(a->type));
  }
  if (a->ne[0] % ops->blck_size != 0) {
    return msg->Fail("K = %lld is not a multiple of the %s block size", static_cast<long long>(a->ne[0]), ops->name);
  }
  return true;
}

size_t MulMatWorkSizeFor(const ggml_tensor* node, int nth) {
  const MulMatLayout l = Layout(node, nth);
  return l.convert_bytes + l.packed_total + static_cast<size_t>(nth) * l.thread_bytes +
         (l.convert_bytes + l.thread_bytes > 0 ? kAlign : 0);
}

void ForwardMulMat(const ComputeParams& p, ggml_tensor* dst) {
  const ggml_tensor* a = dst->src[0];
  const ggml_tensor* b = dst->src[1];
  const MulMatLayout l = Layout(dst, p.nth);
  // 64-byte align the buffer start so that the per-thread blocks do not share cache lines.
  uint8_t* base = p.wdata == nullptr ? nullptr
                                     : reinterpret_cast<uint8_t*>(AlignUp(reinterpret_cast<uintptr_t>(p.wdata)));
  uint8_t* converted = base;
  uint8_t* packed = base == nullptr ? nullptr : base + l.convert_bytes;
  uint8_t* scratch =
      base == nullptr ? nullptr : base + l.convert_bytes + l.packed_total + static_cast<size_t>(p.ith) * l.thread_bytes;
  const int64_t K = a->ne[0], M = a->ne[1], N = b->ne[1];
  const bool int8 = Int8Path(dst);
  const bool dequant = DequantPath(dst);
  const bool quant = !IsFloatType(a->type) && !dequant && !int8;
  const MulMatRowOps* qops = quant ? QuantMulMatRowOps(a->type) : nullptr;

  if (l.convert) {  // phase 1
    ConvertBRows(p, dst, l, converted, scratch, int8, qops);
    // (Argument errors are reported; every thread still reaches the barrier.)
    const bool packed_ok = !int8 || PackA(p, dst, l, packed);
    ggml_threadpool_barrier(p.tp);
    if (!packed_ok) return;
  }

  const int64_t ne12 = b->ne[2];
  const int64_t batches = ne12 * b->ne[3];
  const int64_t r2 = ne12 / a->ne[2], r3 = b->ne[3] / a->ne[3];
  const bool matvec = ggml_mul_mat_get_matvec(dst);
  const Split s = Partition(batches, M, N, p.nth, !matvec);
  int64_t begin, end;
  SplitRange(batches * s.m_parts * s.n_parts, p.ith, p.nth, &begin, &end);
  const size_t ldc = RowStride(N, M, dst->nb[1], sizeof(float));
  const size_t lda = RowStride(M, K, a->nb[1], ggml_type_size(a->type));
  for (int64_t u = begin; u < end; ++u) {
    const int64_t nc = u % s.n_parts, mc = (u / s.n_parts) % s.m_parts, batch = u / (s.n_parts * s.m_parts);
    const int64_t i12 = batch % ne12, i13 = batch / ne12;
    const size_t m0 = static_cast<size_t>(mc * s.m_chunk);
    const size_t m1 = mc == s.m_parts - 1 ? static_cast<size_t>(M) : m0 + static_cast<size_t>(s.m_chunk);
    const size_t n0 = static_cast<size_t>(nc * s.n_chunk);
    const size_t n1 = nc == s.n_parts - 1 ? static_cast<size_t>(N) : n0 + static_cast<size_t>(s.n_chunk);
    const char* ap = static_cast<const char*>(a->data) + (i12 / r2) * a->nb[2] + (i13 / r3) * a->nb[3];
    float* c = reinterpret_cast<float*>(RowPtr(dst, 0, i12, i13));
    // b rows of this batch: converted (rows packed batch after batch) or in place.
    const uint8_t* bconv = converted + static_cast<size_t>(batch * N) * l.row_bytes;
    const float* bp = l.convert ? reinterpret_cast<const float*>(bconv)
                                : reinterpret_cast<const float*>(RowPtr(b, 0, i12, i13));
    const size_t ldb = l.convert ? static_cast<size_t>(K) : RowStride(N, K, b->nb[1], sizeof(float));
    absl::Status st;
    if (int8) {
      const size_t ia = static_cast<size_t>((i12 / r2) + (i13 / r3) * a->ne[2]);
      st = QuantGemm(a->type, static_cast<size_t>(K), packed + ia * l.packed_bytes, l.packed_bytes,
                     static_cast<size_t>(M), bconv, static_cast<size_t>(N) * l.row_bytes, c, ldc, m0, m1, n0, n1);
    } else if (quant) {
      st = MulMatConverted(*qops, static_cast<size_t>(K), ap, a->nb[1], bconv, static_cast<size_t>(N) * l.row_bytes, c,
                           ldc, m0, m1, n0, n1);
    } else if (dequant) {
      st = MulMatDequant(*QuantMulMatDequantOps(a->type), static_cast<size_t>(K), ap, a->nb[1], bp, ldb, c, ldc,
                         m0, m1, n0, n1, scratch, l.thread_bytes);
    } else if (matvec && a->type == GGML_TYPE_F32) {
      st = MulMatF32Dots(static_cast<size_t>(K), reinterpret_cast<const float*>(ap), lda, bp, ldb, c, ldc, m0, m1,
                         n0, n1);
    } else if (matvec) {
      st = MulMatF16Dots(static_cast<size_t>(K), reinterpret_cast<const ggml_fp16_t*>(ap), lda, bp, ldb, c, ldc,
                         m0, m1, n0, n1);
    } else if (a->type == GGML_TYPE_F32) {
      st = MulMatF32(static_cast<size_t>(K), reinterpret_cast<const float*>(ap), lda, bp, ldb, c,
                     ldc, m0, m1, n0, n1, scratch, l.thread_bytes);
    } else {
      st = MulMatF16(static_cast<size_t>(K), reinterpret_cast<const ggml_fp16_t*>(ap), lda,
                     bp, ldb, c, ldc, m0, m1, n0, n1, scratch, l.thread_bytes);
    }
    if (!st.ok()) {
      ReportError(p, dst, "matmul kernel: %.*s", static_cast<int>(st.message().size()), st.message().data());
      return;
    }
  }
}

// ---- GET_ROWS ---------------------------------------------------------------------------------------

bool CheckGetRows(const ggml_tensor* node, CheckMessage* msg) {
  const ggml_tensor* a = node->src[0];
  const ggml_tensor* b = node->src[1];
  if (b->type != GGML_TYPE_I32) return msg->Fail("indices (src[1]) must be I32");
  if (node->type != GGML_TYPE_F32 || node->nb[0] != sizeof(float)) return msg->Fail("result must be F32, contiguous rows");
  if (node->ne[0] != a->ne[0] || node->ne[1] != b->ne[0] || node->ne[2] != b->ne[1] || a->ne[2] != b->ne[1] ||
      node->ne[3] != 1 || a->ne[3] != 1) {
    return msg->Fail("shapes of a, the indices and the result do not fit get_rows");
  }
  if (IsFloatType(a->type)) return true;
  const QuantTypeTraits* t = GetQuantTypeTraits(a->type);
  if (t == nullptr || t->to_float == nullptr) return msg->Fail("a has type %s, which has no to_float", ggml_type_name(a->type));
  if (a->nb[0] != ggml_type_size(a->type)) return msg->Fail("rows of quantized a must be contiguous");
  return true;
}

void ForwardGetRows(const ComputeParams& p, ggml_tensor* dst) {
  const ggml_tensor* a = dst->src[0];
  const ggml_tensor* b = dst->src[1];
  const int64_t n0 = a->ne[0];
  const QuantTypeTraits* t = IsFloatType(a->type) ? nullptr : GetQuantTypeTraits(a->type);
  int64_t begin, end;
  SplitRange(dst->ne[1] * dst->ne[2], p.ith, p.nth, &begin, &end);
  for (int64_t r = begin; r < end; ++r) {
    const int64_t i = r % dst->ne[1], i2 = r / dst->ne[1];
    int32_t row;
    memcpy(&row, static_cast<const char*>(b->data) + i * b->nb[0] + i2 * b->nb[1], sizeof(row));
    if (row < 0 || row >= a->ne[1]) {
      ReportError(p, dst, "index %d at [%lld, %lld] is outside [0, %lld)", row, static_cast<long long>(i),
                  static_cast<long long>(i2), static_cast<long long>(a->ne[1]));
      return;
    }
    const char* src = RowPtr(a, row, i2, 0);
    float* y = reinterpret_cast<float*>(RowPtr(dst, i, i2, 0));
    if (t != nullptr) {
      t->to_float(src, y, n0);
    } else if (a->type == GGML_TYPE_F16 && a->nb[0] == sizeof(ggml_fp16_t)) {
      ConvertF16ToF32(static_cast<size_t>(n0), reinterpret_cast<const ggml_fp16_t*>(src), y);
    } else {
      for (int64_t k = 0; k < n0; ++k) {
        const char* e = src + k * a->nb[0];
        if (a->type == GGML_TYPE_F32) {
          memcpy(&y[k], e, sizeof(float));
        } else {
          ggml_fp16_t h;
          memcpy(&h, e, sizeof(h));
          y[k] = ggml_fp16_to_fp32(h);
        }
      }
    }
  }
}

// ---- IM2COL ---------------------------------------------------------------------------------------------
// dst[ic * K + k, ol, n] = b[ol * s0 + k * d0 - p0, ic, n], 0 outside the input; rows (ol, n) split
// across threads. Whisper's stem (K = 3, p0 = 1, d0 = 1, s0 = 1 or 2, F32 columns, contiguous
// input rows) goes through kernels/conv.h Im2Col1dPh, one call per run of rows within a batch;
// other parameters, F16 columns and strided input use the scalar loop below (same values).

bool CheckIm2Col(const ggml_tensor* node, CheckMessage* msg) {
  const ggml_tensor* kernel = node->src[0];
  const ggml_tensor* b = node->src[1];
  if (b->type != GGML_TYPE_F32) return msg->Fail("input (src[1]) must be F32");
  if (!IsFloatType(node->type) || node->nb[0] != ggml_type_size(node->type)) {
    return msg->Fail("result must be F32 or F16 with contiguous rows");
  }
  const int32_t s0 = ggml_get_op_params_i32(node, 0), p0 = ggml_get_op_params_i32(node, 1),
                d0 = ggml_get_op_params_i32(node, 2);
  if (s0 <= 0 || d0 <= 0 || p0 < 0) return msg->Fail("stride %d, padding %d, dilation %d are invalid", s0, p0, d0);
  if (kernel->ne[1] != b->ne[1] || node->ne[0] != b->ne[1] * kernel->ne[0] || node->ne[2] != b->ne[2] ||
      node->ne[3] != 1 || b->ne[3] != 1) {
    return msg->Fail("shapes of the kernel, the input and the result do not fit im2col");
  }
  return true;
}

namespace {

// True when rows [ol0, ol1) of batch n can go through Im2Col1dPh.
bool Im2ColKernelFits(const ggml_tensor* dst, int64_t K, int64_t s0, int64_t p0, int64_t d0) {
  const ggml_tensor* b = dst->src[1];
  return K == 3 && p0 == 1 && d0 == 1 && (s0 == 1 || s0 == 2) && dst->type == GGML_TYPE_F32 &&
         b->nb[0] == sizeof(float) && b->nb[1] % sizeof(float) == 0 &&
         dst->nb[1] == static_cast<size_t>(dst->ne[0]) * sizeof(float) &&
         Conv1dPhOutLength(Conv1dShape{static_cast<size_t>(b->ne[0]), static_cast<size_t>(b->ne[1]),
                                       static_cast<size_t>(s0)}) == static_cast<size_t>(dst->ne[1]);
}

}  // namespace

void ForwardIm2Col(const ComputeParams& p, ggml_tensor* dst) {
  const ggml_tensor* kernel = dst->src[0];
  const ggml_tensor* b = dst->src[1];
  const int64_t s0 = ggml_get_op_params_i32(dst, 0), p0 = ggml_get_op_params_i32(dst, 1),
                d0 = ggml_get_op_params_i32(dst, 2);
  const int64_t K = kernel->ne[0], IL = b->ne[0], IC = b->ne[1], OL = dst->ne[1];
  const bool f16 = dst->type == GGML_TYPE_F16;
  int64_t begin, end;
  SplitRange(OL * dst->ne[2], p.ith, p.nth, &begin, &end);
  if (Im2ColKernelFits(dst, K, s0, p0, d0)) {
    const Conv1dShape shape{static_cast<size_t>(IL), static_cast<size_t>(IC), static_cast<size_t>(s0)};
    for (int64_t r = begin; r < end;) {  // one call per batch's run of rows
      const int64_t n = r / OL, ol0 = r % OL, ol1 = std::min(OL, ol0 + (end - r));
      const absl::Status st =
          Im2Col1dPh(shape, reinterpret_cast<const float*>(RowPtr(b, 0, n, 0)), b->nb[1] / sizeof(float),
                     static_cast<size_t>(ol0), static_cast<size_t>(ol1), reinterpret_cast<float*>(RowPtr(dst, ol0, n, 0)));
      if (!st.ok()) {
        ReportError(p, dst, "im2col kernel: %.*s", static_cast<int>(st.message().size()), st.message().data());
        return;
      }
      r += ol1 - ol0;
    }
    return;
  }
  for (int64_t r = begin; r < end; ++r) {
    const int64_t ol = r % OL, n = r / OL;
    char* y = RowPtr(dst, ol, n, 0);
    for (int64_t ic = 0; ic < IC; ++ic) {
      const char* x = RowPtr(b, ic, n, 0);
      for (int64_t k = 0; k < K; ++k) {
        const int64_t il = ol * s0 + k * d0 - p0;
        float v = 0.0f;
        if (il >= 0 && il < IL) memcpy(&v, x + il * b->nb[0], sizeof(float));
        const int64_t i0 = ic * K + k;
        if (f16) {
          const ggml_fp16_t h = ggml_fp32_to_fp16(v);
          memcpy(y + i0 * sizeof(ggml_fp16_t), &h, sizeof(h));
        } else {
          memcpy(y + i0 * sizeof(float), &v, sizeof(float));
        }
      }
    }
  }
}

}  // namespace exec
}  // namespace ggml_cpu
