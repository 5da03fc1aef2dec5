// Element-wise, row and data-movement ops of the graph executor (see graph_compute_ops.h).
// Semantics: ggml/ops.h (ggml-cpu/ops.cpp). Rows are split across threads; a row whose elements
// are contiguous (nb0 = type size) goes straight to a kernel (vec.h, norm.h, activations.h,
// softmax.h); a row of a permuted or transposed view is first gathered (or, for ADD, MUL, SCALE,
// copies, handled by a strided scalar loop that gives the same values as the kernel).
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>

#include "cpu/graph_compute_ops.h"
#include "ggml/fp16.h"
#include "ggml/ops.h"
#include "kernels/activations.h"
#include "kernels/norm.h"
#include "kernels/softmax.h"
#include "kernels/vec.h"

namespace ggml_cpu {
namespace exec {
namespace {

// ---- Strided element access (F32 / F16) ----------------------------------------------------------

inline float LoadF(ggml_type type, const char* p) {
  if (type == GGML_TYPE_F16) {
    ggml_fp16_t h;
    memcpy(&h, p, 2);
    return ggml_fp16_to_fp32(h);
  }
  float v;
  memcpy(&v, p, 4);
  return v;
}

inline void StoreF(ggml_type type, char* p, float v) {
  if (type == GGML_TYPE_F16) {
    const ggml_fp16_t h = ggml_fp32_to_fp16(v);
    memcpy(p, &h, 2);
  } else {
    memcpy(p, &v, 4);
  }
}

// Copies n F32 elements nb0 bytes apart into the contiguous row y.
inline void GatherRowF32(int64_t n, const char* x, size_t nb0, float* y) {
  if (nb0 == sizeof(float)) {
    memcpy(y, x, static_cast<size_t>(n) * sizeof(float));
  } else {
    for (int64_t i = 0; i < n; ++i) memcpy(&y[i], x + i * nb0, sizeof(float));
  }
}

bool IsF32(const ggml_tensor* t) { return t != nullptr && t->type == GGML_TYPE_F32; }
bool IsFloat(const ggml_tensor* t) {
  return t != nullptr && (t->type == GGML_TYPE_F32 || t->type == GGML_TYPE_F16);
}

// Iterates over this thread's rows of dst: fn(i1, i2, i3, dst_row).
template <class Fn>
void ForMyRows(const ComputeParams& p, ggml_tensor* dst, const Fn& fn) {
  int64_t begin, end;
  SplitRange(ggml_nrows(dst), p.ith, p.nth, &begin, &end);
  for (int64_t r = begin; r < end; ++r) {
    int64_t i1, i2, i3;
    RowIndex(dst->ne, r, &i1, &i2, &i3);
    fn(i1, i2, i3, reinterpret_cast<float*>(RowPtr(dst, i1, i2, i3)));
  }
}

// Iterates over this thread's rows of dst as runs of consecutive i1 within one (i2, i3):
// fn(i1_begin, i1_end, i2, i3). Within a run, rows of dst (and of a same-shaped source) are
// nb[1] bytes apart, so a multi-row kernel can take the whole run in one call.
template <class Fn>
void ForMyRowRuns(const ComputeParams& p, const ggml_tensor* dst, const Fn& fn) {
  int64_t begin, end;
  SplitRange(ggml_nrows(dst), p.ith, p.nth, &begin, &end);
  const int64_t ne1 = dst->ne[1];
  for (int64_t r = begin; r < end;) {
    int64_t i1, i2, i3;
    RowIndex(dst->ne, r, &i1, &i2, &i3);
    const int64_t run = std::min(end - r, ne1 - i1);
    fn(i1, i1 + run, i2, i3);
    r += run;
  }
}

// Row stride of t in floats, or 0 if its rows are not float-aligned or its elements not
// contiguous (then the caller goes row by row).
size_t FloatRowStride(const ggml_tensor* t) {
  if (t->nb[0] != sizeof(float) || t->nb[1] % sizeof(float) != 0) return 0;
  return t->nb[1] / sizeof(float);
}

}  // namespace

// ---- Checks ---------------------------------------------------------------------------------------

bool CheckElementwise(const ggml_tensor* node, CheckMessage* msg) {
  const ggml_tensor* a = node->src[0];
  const ggml_tensor* b = node->src[1];
  switch (node->op) {
    case GGML_OP_DUP:
    case GGML_OP_CONT:
    case GGML_OP_CPY:
      if (!IsFloat(a) || !IsFloat(node)) return msg->Fail("source and result must be F32 or F16");
      if (ggml_nelements(a) != ggml_nelements(node)) return msg->Fail("element counts of source and result differ");
      return true;
    default:
      break;
  }
  if (node->op == GGML_OP_ARGMAX) {
    if (!IsF32(a) || a->ne[2] != 1 || a->ne[3] != 1) return msg->Fail("a must be F32 [ne0, ne1]");
    if (node->type != GGML_TYPE_I32 || node->ne[0] != a->ne[1] || ggml_nrows(node) != 1 ||
        node->nb[0] != sizeof(int32_t)) {
      return msg->Fail("result must be a contiguous I32 [ne1 of a]");
    }
    return true;
  }
  if (!IsF32(a) || !IsF32(node)) return msg->Fail("source and result must be F32");
  if (node->nb[0] != sizeof(float)) return msg->Fail("result rows must be contiguous (nb0 = 4)");
  switch (node->op) {
    case GGML_OP_ADD:
    case GGML_OP_MUL:
      if (!IsF32(b)) return msg->Fail("b must be F32");
      if (!ggml_can_repeat(b, a) || !ggml_are_same_shape(a, node)) return msg->Fail("b cannot be broadcast to a");
      return true;
    case GGML_OP_SOFT_MAX:
      if (ggml_get_op_params_f32(node, 1) > 0.0f && b == nullptr) return msg->Fail("max_bias (ALiBi) needs a mask");
      if (b != nullptr && (!IsF32(b) || b->ne[0] != a->ne[0] || b->ne[1] < a->ne[1])) {
        return msg->Fail("mask must be F32 [ne0, >= ne1]");
      }
      if (b != nullptr && b->data == nullptr) return msg->Fail("mask (src[1]) has no data");
      break;
    case GGML_OP_UNARY:
      if (ggml_get_unary_op(node) < 0 || ggml_get_unary_op(node) >= GGML_UNARY_OP_COUNT) {
        return msg->Fail("unknown unary op %d", static_cast<int>(ggml_get_unary_op(node)));
      }
      break;
    case GGML_OP_CONCAT: {
      const int dim = ggml_get_op_params_i32(node, 0);
      if (dim < 0 || dim > 3 || !IsF32(b)) return msg->Fail("needs F32 b and dim in 0..3");
      for (int i = 0; i < 4; ++i) {
        const bool ok = i == dim ? node->ne[i] == a->ne[i] + b->ne[i] : node->ne[i] == a->ne[i] && b->ne[i] == a->ne[i];
        if (!ok) return msg->Fail("shapes of a, b and the result do not fit concat along dim %d", dim);
      }
      return true;
    }
    case GGML_OP_PAD:
      for (int i = 0; i < 4; ++i) {
        if (node->ne[i] < a->ne[i]) return msg->Fail("result is smaller than a in dim %d", i);
      }
      return true;
    case GGML_OP_REPEAT:
      if (!ggml_can_repeat(a, node)) return msg->Fail("a cannot be tiled to the result");
      return true;
    default:
      break;
  }
  // SCALE, NORM, RMS_NORM, UNARY, SOFT_MAX, DIAG_MASK_INF.
  if (!ggml_are_same_shape(a, node)) return msg->Fail("result shape differs from src[0]");
  return true;
}

// ---- ADD, MUL, SCALE -------------------------------------------------------------------------------

void ForwardAddMul(const ComputeParams& p, ggml_tensor* dst) {
  const ggml_tensor* a = dst->src[0];
  const ggml_tensor* b = dst->src[1];
  const bool add = dst->op == GGML_OP_ADD;
  const int64_t n = dst->ne[0];
  const int64_t nb_ne0 = b->ne[0];
  ForMyRows(p, dst, [&](int64_t i1, int64_t i2, int64_t i3, float* y) {
    const char* x = RowPtr(a, i1, i2, i3);
    const char* bp = RowPtr(b, i1 % b->ne[1], i2 % b->ne[2], i3 % b->ne[3]);
    if (a->nb[0] == sizeof(float) && b->nb[0] == sizeof(float)) {
      const float* xf = reinterpret_cast<const float*>(x);
      const float* bf = reinterpret_cast<const float*>(bp);
      if (nb_ne0 == n) {
        (add ? AddF32 : MulF32)(static_cast<size_t>(n), xf, bf, y);
      } else if (nb_ne0 == 1) {  // one scalar per row (the encoder's conv bias, ne [1, n_state])
        const float v = bf[0];
        if (add) {
          for (int64_t i0 = 0; i0 < n; ++i0) y[i0] = xf[i0] + v;
        } else {
          ScaleF32(static_cast<size_t>(n), v, xf, y);
        }
      } else {  // b's row repeats n / ne10 times along the row (ne10 == 1: a scalar)
        (add ? AddRowsBroadcastF32 : MulRowsBroadcastF32)(static_cast<size_t>(nb_ne0), static_cast<size_t>(n / nb_ne0),
                                                          xf, static_cast<size_t>(nb_ne0), bf, y,
                                                          static_cast<size_t>(nb_ne0));
      }
      return;
    }
    for (int64_t i0 = 0; i0 < n; ++i0) {  // strided source rows
      const float u = LoadF(GGML_TYPE_F32, x + i0 * a->nb[0]);
      const float v = LoadF(GGML_TYPE_F32, bp + (i0 % nb_ne0) * b->nb[0]);
      y[i0] = add ? u + v : u * v;
    }
  });
}

void ForwardScale(const ComputeParams& p, ggml_tensor* dst) {
  const ggml_tensor* a = dst->src[0];
  const float s = ggml_get_op_params_f32(dst, 0);
  ForMyRows(p, dst, [&](int64_t i1, int64_t i2, int64_t i3, float* y) {
    const char* x = RowPtr(a, i1, i2, i3);
    if (a->nb[0] == sizeof(float)) {
      ScaleF32(static_cast<size_t>(dst->ne[0]), s, reinterpret_cast<const float*>(x), y);
    } else {
      for (int64_t i0 = 0; i0 < dst->ne[0]; ++i0) y[i0] = LoadF(GGML_TYPE_F32, x + i0 * a->nb[0]) * s;
    }
  });
}

// ---- NORM, RMS_NORM, UNARY (kernels/norm.h, kernels/activations.h) ---------------------------------
// NORM and RMS_NORM: one kernel call per run of this thread's rows when the source's rows are
// contiguous (the common case); else per row, a strided source row gathered into the result row
// and normalized in place (the kernels allow y == x). UNARY: one call per row.

void ForwardNorm(const ComputeParams& p, ggml_tensor* dst) {
  const ggml_tensor* a = dst->src[0];
  const bool rms = dst->op == GGML_OP_RMS_NORM;
  const float eps = ggml_get_op_params_f32(dst, 0);
  const size_t n = static_cast<size_t>(dst->ne[0]);
  auto norm_rows = [&](size_t nrows, const float* x, size_t x_stride, float* y, size_t y_stride) {
    if (rms) {
      RmsNormRowsF32(n, nrows, x, x_stride, eps, nullptr, y, y_stride);
    } else {
      LayerNormRowsF32(n, nrows, x, x_stride, eps, nullptr, nullptr, y, y_stride);
    }
  };
  const size_t x_stride = FloatRowStride(a), y_stride = FloatRowStride(dst);
  if (x_stride != 0 && y_stride != 0) {
    ForMyRowRuns(p, dst, [&](int64_t i1_begin, int64_t i1_end, int64_t i2, int64_t i3) {
      norm_rows(static_cast<size_t>(i1_end - i1_begin),
                reinterpret_cast<const float*>(RowPtr(a, i1_begin, i2, i3)), x_stride,
                reinterpret_cast<float*>(RowPtr(dst, i1_begin, i2, i3)), y_stride);
    });
    return;
  }
  ForMyRows(p, dst, [&](int64_t i1, int64_t i2, int64_t i3, float* y) {
    const float* x = y;
    if (a->nb[0] == sizeof(float)) {
      x = reinterpret_cast<const float*>(RowPtr(a, i1, i2, i3));
    } else {
      GatherRowF32(dst->ne[0], RowPtr(a, i1, i2, i3), a->nb[0], y);
    }
    norm_rows(1, x, n, y, n);
  });
}

void ForwardUnary(const ComputeParams& p, ggml_tensor* dst) {
  const ggml_tensor* a = dst->src[0];
  const ggml_unary_op op = ggml_get_unary_op(dst);
  const size_t n = static_cast<size_t>(dst->ne[0]);
  ForMyRows(p, dst, [&](int64_t i1, int64_t i2, int64_t i3, float* y) {
    const float* x = y;
    if (a->nb[0] == sizeof(float)) {
      x = reinterpret_cast<const float*>(RowPtr(a, i1, i2, i3));
    } else {
      GatherRowF32(dst->ne[0], RowPtr(a, i1, i2, i3), a->nb[0], y);
    }
    switch (op) {
      case GGML_UNARY_OP_GELU:
        GeluF32(n, x, y, GeluMode::kTanh);
        break;
      case GGML_UNARY_OP_GELU_ERF:
        GeluF32(n, x, y, GeluMode::kErf);
        break;
      case GGML_UNARY_OP_RELU:
        ReluF32(n, x, y);
        break;
      case GGML_UNARY_OP_SIGMOID:
        SigmoidF32(n, x, y);
        break;
      case GGML_UNARY_OP_TANH:
        TanhF32(n, x, y);
        break;
      case GGML_UNARY_OP_SQR:
        SqrF32(n, x, y);
        break;
      case GGML_UNARY_OP_SQRT:
        SqrtF32(n, x, y);
        break;
      default:  // SILU
        SiluF32(n, x, y);
        break;
    }
  });
}

// ---- SOFT_MAX (kernels/softmax.h) ---------------------------------------------------------------------
// One SoftmaxRowsF32 call per run of this thread's rows when the source's rows are contiguous
// and the mask (if any) has contiguous float rows: the kernel takes absolute row indices, so
// mask row i1 applies to source row i1 in every (i2, i3). Otherwise per row: a strided source
// row or mask row is gathered into the result row / added there first. A row that is entirely
// -inf gives 0 (the kernel's rule; ggml gives NaN).

void ForwardSoftMax(const ComputeParams& p, ggml_tensor* dst) {
  const ggml_tensor* a = dst->src[0];
  const ggml_tensor* mask = dst->src[1];
  const int64_t n = dst->ne[0];
  SoftmaxParams params;
  params.scale = ggml_get_op_params_f32(dst, 0);
  const float max_bias = ggml_get_op_params_f32(dst, 1);  // ALiBi: the mask times the slope of head i2
  const bool mask_direct = mask != nullptr && mask->nb[0] == sizeof(float);
  const size_t x_stride = FloatRowStride(a), y_stride = FloatRowStride(dst);
  const size_t mask_stride = mask == nullptr ? 0 : FloatRowStride(mask);
  if (x_stride != 0 && y_stride != 0 && (mask == nullptr || mask_stride != 0)) {
    SoftmaxParams run_params = params;
    if (mask != nullptr) {
      run_params.mask = reinterpret_cast<const float*>(RowPtr(mask, 0, 0, 0));
      run_params.mask_stride = mask_stride;
    }
    ForMyRowRuns(p, dst, [&](int64_t i1_begin, int64_t i1_end, int64_t i2, int64_t i3) {
      // x and y point at row 0 of this (i2, i3): the kernel indexes rows absolutely.
      SoftmaxParams head_params = run_params;
      head_params.mask_scale = ggml_alibi_slope(max_bias, a->ne[2], i2);
      SoftmaxRowsF32(static_cast<size_t>(n), static_cast<size_t>(i1_begin),
                     static_cast<size_t>(i1_end),
                     reinterpret_cast<const float*>(RowPtr(a, 0, i2, i3)), x_stride,
                     reinterpret_cast<float*>(RowPtr(dst, 0, i2, i3)), y_stride, head_params);
    });
    return;
  }
  ForMyRows(p, dst, [&](int64_t i1, int64_t i2, int64_t i3, float* y) {
    const float* x = y;
    if (a->nb[0] == sizeof(float) && (mask == nullptr || mask_direct)) {
      x = reinterpret_cast<const float*>(RowPtr(a, i1, i2, i3));
    } else {
      GatherRowF32(n, RowPtr(a, i1, i2, i3), a->nb[0], y);
    }
    SoftmaxParams row_params = params;
    const float slope = ggml_alibi_slope(max_bias, a->ne[2], i2);
    if (mask_direct) {
      row_params.mask = reinterpret_cast<const float*>(RowPtr(mask, i1, 0, 0));
      row_params.mask_scale = slope;
    } else if (mask != nullptr) {  // strided mask: apply scale and mask here, then scale 1
      const char* m = RowPtr(mask, i1, 0, 0);
      for (int64_t i = 0; i < n; ++i) y[i] = y[i] * params.scale + slope * LoadF(GGML_TYPE_F32, m + i * mask->nb[0]);
      row_params.scale = 1.0f;
    }
    // The call covers row i1 only: x, y and the mask point at that row, strides 0.
    SoftmaxRowsF32(static_cast<size_t>(n), static_cast<size_t>(i1), static_cast<size_t>(i1) + 1, x, 0, y, 0,
                   row_params);
  });
}

// ---- DIAG_MASK_INF, ARGMAX ---------------------------------------------------------------------------

void ForwardDiagMaskInf(const ComputeParams& p, ggml_tensor* dst) {
  const ggml_tensor* a = dst->src[0];
  const int64_t n_past = ggml_get_op_params_i32(dst, 0);
  const int64_t n = dst->ne[0];
  ForMyRows(p, dst, [&](int64_t i1, int64_t i2, int64_t i3, float* y) {
    GatherRowF32(n, RowPtr(a, i1, i2, i3), a->nb[0], y);
    for (int64_t i0 = std::max<int64_t>(0, n_past + i1 + 1); i0 < n; ++i0) y[i0] = -INFINITY;
  });
}

void ForwardArgmax(const ComputeParams& p, ggml_tensor* dst) {
  const ggml_tensor* a = dst->src[0];
  int64_t begin, end;
  SplitRange(a->ne[1], p.ith, p.nth, &begin, &end);
  int32_t* out = static_cast<int32_t*>(dst->data);
  for (int64_t i1 = begin; i1 < end; ++i1) {
    const char* x = RowPtr(a, i1, 0, 0);
    if (a->nb[0] == sizeof(float)) {
      out[i1] = static_cast<int32_t>(ArgmaxF32(static_cast<size_t>(a->ne[0]), reinterpret_cast<const float*>(x)));
      continue;
    }
    int64_t best = 0;
    float max = -INFINITY;
    for (int64_t i0 = 0; i0 < a->ne[0]; ++i0) {
      const float v = LoadF(GGML_TYPE_F32, x + i0 * a->nb[0]);
      if (v > max) {
        max = v;
        best = i0;
      }
    }
    out[i1] = static_cast<int32_t>(best);
  }
}

// ---- DUP, CONT, CPY ------------------------------------------------------------------------------------
// Elements of src in ggml order go to dst in ggml order. Same shapes: rows split across threads,
// contiguous rows converted with vec.h (ConvertF32ToF16 rounds to nearest even, bit-exact with
// ggml_fp32_to_fp16) or memcpy. Different shapes (cont_2d, cpy into a 1-D cache view): with a
// contiguous dst, each source row is one run of dst (source rows split); with a contiguous
// source, each dst row is one run of the source; otherwise the flat element range is split and
// both index tuples are walked.

namespace {

void ConvertRun(ggml_type st, const char* s, ggml_type dt, char* d, size_t n) {
  if (st == dt) {
    memcpy(d, s, n * ggml_type_size(st));
  } else if (st == GGML_TYPE_F32) {
    ConvertF32ToF16(n, reinterpret_cast<const float*>(s), reinterpret_cast<ggml_fp16_t*>(d));
  } else {
    ConvertF16ToF32(n, reinterpret_cast<const ggml_fp16_t*>(s), reinterpret_cast<float*>(d));
  }
}

// The index tuple of flat element e in a tensor of shape ne.
void Unflatten(const int64_t* ne, int64_t e, int64_t* idx) {
  for (int k = 0; k < 4; ++k) {
    idx[k] = e % ne[k];
    e /= ne[k];
  }
}

}  // namespace

// CPY/CONT of a transposed F32 source (ne0 strided, ne1 contiguous: ggml_transpose of a
// contiguous matrix, e.g. the cross graph's V^T into the F16 cache) to a destination with
// contiguous rows, of the same shape. Row by row, every source element would be a different
// cache line (tiny.en's [384, 1500] V: 1.4 ms per layer); here kTileRows destination rows are
// gathered kTileCols elements at a time (each source line is used whole) into an F32 tile, which
// ConvertRun then writes out row by row (SIMD F32 -> F16).
void CopyTransposedF32(const ComputeParams& p, const ggml_tensor* src, ggml_tensor* dst) {
  constexpr int64_t kTileRows = 16, kTileCols = 256;
  const int64_t ne0 = dst->ne[0], ne1 = dst->ne[1];
  const int64_t tiles1 = (ne1 + kTileRows - 1) / kTileRows;
  int64_t begin, end;
  SplitRange(tiles1 * dst->ne[2] * dst->ne[3], p.ith, p.nth, &begin, &end);
  float tile[kTileRows][kTileCols];
  for (int64_t u = begin; u < end; ++u) {
    const int64_t t1 = u % tiles1, i2 = (u / tiles1) % dst->ne[2], i3 = u / (tiles1 * dst->ne[2]);
    const int64_t r0 = t1 * kTileRows, nr = std::min(kTileRows, ne1 - r0);
    const char* s = RowPtr(src, r0, i2, i3);  // element (i0, r0 + r) at s + i0 * nb0 + r * 4
    for (int64_t c0 = 0; c0 < ne0; c0 += kTileCols) {
      const int64_t nc = std::min(kTileCols, ne0 - c0);
      for (int64_t c = 0; c < nc; ++c) {
        const float* col = reinterpret_cast<const float*>(s + (c0 + c) * src->nb[0]);
        for (int64_t r = 0; r < nr; ++r) tile[r][c] = col[r];
      }
      for (int64_t r = 0; r < nr; ++r) {
        ConvertRun(GGML_TYPE_F32, reinterpret_cast<const char*>(tile[r]), dst->type, RowPtr(dst, r0 + r, i2, i3) + c0 * ggml_type_size(dst->type),
                   static_cast<size_t>(nc));
      }
    }
  }
}

void ForwardCopy(const ComputeParams& p, ggml_tensor* dst) {
  const ggml_tensor* src = dst->src[0];
  const size_t ssz = ggml_type_size(src->type);
  const size_t dsz = ggml_type_size(dst->type);
  if (ggml_are_same_shape(src, dst) && src->type == GGML_TYPE_F32 && src->nb[0] != ssz && src->nb[1] == ssz &&
      dst->nb[0] == dsz && (dst->type == GGML_TYPE_F32 || dst->type == GGML_TYPE_F16)) {
    CopyTransposedF32(p, src, dst);
    return;
  }
  if (ggml_are_same_shape(src, dst)) {
    const int64_t n = dst->ne[0];
    ForMyRows(p, dst, [&](int64_t i1, int64_t i2, int64_t i3, float*) {
      const char* s = RowPtr(src, i1, i2, i3);
      char* d = RowPtr(dst, i1, i2, i3);
      if (src->nb[0] == ssz && dst->nb[0] == dsz) {
        ConvertRun(src->type, s, dst->type, d, static_cast<size_t>(n));
      } else {
        for (int64_t i0 = 0; i0 < n; ++i0) StoreF(dst->type, d + i0 * dst->nb[0], LoadF(src->type, s + i0 * src->nb[0]));
      }
    });
    return;
  }
  if (ggml_is_contiguous(dst)) {
    // Source row r (ggml order) fills dst's flat elements [r * ne00, (r + 1) * ne00): split the
    // source rows (cont_2d of a permuted view: rows contiguous, row order permuted).
    const int64_t n = src->ne[0];
    int64_t rb, re;
    SplitRange(ggml_nrows(src), p.ith, p.nth, &rb, &re);
    for (int64_t r = rb; r < re; ++r) {
      int64_t i1, i2, i3;
      RowIndex(src->ne, r, &i1, &i2, &i3);
      const char* s = RowPtr(src, i1, i2, i3);
      char* d = static_cast<char*>(dst->data) + r * n * dsz;
      if (src->nb[0] == ssz) {
        ConvertRun(src->type, s, dst->type, d, static_cast<size_t>(n));
      } else {
        for (int64_t i0 = 0; i0 < n; ++i0) StoreF(dst->type, d + i0 * dsz, LoadF(src->type, s + i0 * src->nb[0]));
      }
    }
    return;
  }
  if (ggml_is_contiguous(src)) {  // mirror image: dst row r takes src's flat [r * ne0, ...)
    const int64_t n = dst->ne[0];
    ForMyRows(p, dst, [&](int64_t i1, int64_t i2, int64_t i3, float*) {
      const int64_t r = (i3 * dst->ne[2] + i2) * dst->ne[1] + i1;
      const char* s = static_cast<const char*>(src->data) + r * n * ssz;
      char* d = RowPtr(dst, i1, i2, i3);
      if (dst->nb[0] == dsz) {
        ConvertRun(src->type, s, dst->type, d, static_cast<size_t>(n));
      } else {
        for (int64_t i0 = 0; i0 < n; ++i0) StoreF(dst->type, d + i0 * dst->nb[0], LoadF(src->type, s + i0 * ssz));
      }
    });
    return;
  }
  int64_t begin, end;
  SplitRange(ggml_nelements(dst), p.ith, p.nth, &begin, &end);
  if (begin >= end) return;
  int64_t si[4], di[4];
  Unflatten(src->ne, begin, si);
  Unflatten(dst->ne, begin, di);
  for (int64_t e = begin; e < end; ++e) {
    const float v = LoadF(src->type, static_cast<const char*>(src->data) + si[0] * src->nb[0] + si[1] * src->nb[1] +
                                         si[2] * src->nb[2] + si[3] * src->nb[3]);
    StoreF(dst->type,
           static_cast<char*>(dst->data) + di[0] * dst->nb[0] + di[1] * dst->nb[1] + di[2] * dst->nb[2] +
               di[3] * dst->nb[3],
           v);
    for (int k = 0; k < 4 && ++si[k] == src->ne[k]; ++k) si[k] = 0;
    for (int k = 0; k < 4 && ++di[k] == dst->ne[k]; ++k) di[k] = 0;
  }
}

// ---- CONCAT, PAD, REPEAT (data movement: memcpy of contiguous rows) -------------------------------------

void ForwardConcat(const ComputeParams& p, ggml_tensor* dst) {
  const ggml_tensor* a = dst->src[0];
  const ggml_tensor* b = dst->src[1];
  const int dim = ggml_get_op_params_i32(dst, 0);
  ForMyRows(p, dst, [&](int64_t i1, int64_t i2, int64_t i3, float* y) {
    if (dim == 0) {
      GatherRowF32(a->ne[0], RowPtr(a, i1, i2, i3), a->nb[0], y);
      GatherRowF32(b->ne[0], RowPtr(b, i1, i2, i3), b->nb[0], y + a->ne[0]);
      return;
    }
    int64_t i[4] = {0, i1, i2, i3};
    const ggml_tensor* s = a;
    if (i[dim] >= a->ne[dim]) {
      i[dim] -= a->ne[dim];
      s = b;
    }
    GatherRowF32(dst->ne[0], RowPtr(s, i[1], i[2], i[3]), s->nb[0], y);
  });
}

void ForwardPad(const ComputeParams& p, ggml_tensor* dst) {
  const ggml_tensor* a = dst->src[0];
  ForMyRows(p, dst, [&](int64_t i1, int64_t i2, int64_t i3, float* y) {
    int64_t n_copy = 0;
    if (i1 < a->ne[1] && i2 < a->ne[2] && i3 < a->ne[3]) {
      n_copy = a->ne[0];
      GatherRowF32(n_copy, RowPtr(a, i1, i2, i3), a->nb[0], y);
    }
    memset(y + n_copy, 0, static_cast<size_t>(dst->ne[0] - n_copy) * sizeof(float));
  });
}

void ForwardRepeat(const ComputeParams& p, ggml_tensor* dst) {
  const ggml_tensor* a = dst->src[0];
  const int64_t n0 = a->ne[0];
  ForMyRows(p, dst, [&](int64_t i1, int64_t i2, int64_t i3, float* y) {
    GatherRowF32(n0, RowPtr(a, i1 % a->ne[1], i2 % a->ne[2], i3 % a->ne[3]), a->nb[0], y);
    for (int64_t k = n0; k < dst->ne[0]; k += n0) memcpy(y + k, y, static_cast<size_t>(n0) * sizeof(float));
  });
}

}  // namespace exec
}  // namespace ggml_cpu
