// Scalar reference evaluator (see ref_ops.h). Each op is a direct transcription of its
// definition in ggml/ops.h over 4-D indices, with strided element access.
#include "cpu/ref_ops.h"

#include <math.h>
#include <stdint.h>

#include <vector>

#include "ggml/ops.h"
#include "kernels/quant_traits.h"

namespace {

// ---- Element access through nb[] ----------------------------------------------------------------

// Start of row (i1, i2, i3) of t.
const char* RowPtr(const ggml_tensor* t, int64_t i1, int64_t i2, int64_t i3) {
  return static_cast<const char*>(t->data) + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

// Reads one F32, F16 or I32 element as double (exact for all three: I32 through ggml's I32
// accessor, the floats through ggml_get_f32_nd).
double Get(const ggml_tensor* t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
  return t->type == GGML_TYPE_I32 ? ggml_get_i32_nd(t, i0, i1, i2, i3) : ggml_get_f32_nd(t, i0, i1, i2, i3);
}

// Writes v rounded to t's type (F32: nearest float; F16: nearest float, then nearest-even f16;
// I32: truncation of an integral value).
void Set(ggml_tensor* t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, double v) {
  if (t->type == GGML_TYPE_I32) {
    ggml_set_i32_nd(t, i0, i1, i2, i3, static_cast<int32_t>(v));
  } else {
    ggml_set_f32_nd(t, i0, i1, i2, i3, static_cast<float>(v));
  }
}

// Calls fn(i0, i1, i2, i3) for every index of ne, i0 fastest (ggml's element order).
template <class Fn>
void ForEach(const int64_t* ne, const Fn& fn) {
  for (int64_t i3 = 0; i3 < ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < ne[2]; ++i2) {
      for (int64_t i1 = 0; i1 < ne[1]; ++i1) {
        for (int64_t i0 = 0; i0 < ne[0]; ++i0) fn(i0, i1, i2, i3);
      }
    }
  }
}

bool IsFloat(const ggml_tensor* t) { return t->type == GGML_TYPE_F32 || t->type == GGML_TYPE_F16; }
bool IsF32(const ggml_tensor* t) { return t->type == GGML_TYPE_F32; }

// Records "ggml_ref_compute_forward: node 'name' (OP): <what>" and returns false.
bool Fail(const ggml_tensor* node, const char* what) {
  ggml_set_error("ggml_ref_compute_forward: node '%s' (%s): %s", node->name, ggml_op_name(node->op), what);
  return false;
}

// ---- Ops ---------------------------------------------------------------------------------------------

// DUP, CONT, CPY: the elements of src in ggml order, written to dst in ggml order (shapes may
// differ; element counts are equal).
bool Copy(ggml_tensor* dst, const ggml_tensor* src) {
  if (!IsFloat(src) || !IsFloat(dst)) return Fail(dst, "source and result must be F32 or F16");
  if (ggml_nelements(src) != ggml_nelements(dst)) return Fail(dst, "element counts differ");
  int64_t d[4] = {0, 0, 0, 0};
  ForEach(src->ne, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    Set(dst, d[0], d[1], d[2], d[3], Get(src, i0, i1, i2, i3));
    for (int k = 0; k < 4; ++k) {  // advance dst's index, i0 fastest
      if (++d[k] < dst->ne[k]) break;
      d[k] = 0;
    }
  });
  return true;
}

// ADD, MUL: dst = a op b[i mod ne(b)].
bool Binary(ggml_tensor* dst, const ggml_tensor* a, const ggml_tensor* b, bool add) {
  if (!IsFloat(a) || !IsFloat(b)) return Fail(dst, "sources must be F32 or F16");
  if (!ggml_can_repeat(b, a) || !ggml_are_same_shape(a, dst)) return Fail(dst, "b cannot be broadcast to a");
  ForEach(dst->ne, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    const double x = Get(a, i0, i1, i2, i3);
    const double y = Get(b, i0 % b->ne[0], i1 % b->ne[1], i2 % b->ne[2], i3 % b->ne[3]);
    // Rounding the double sum or product of two floats to float gives the correctly rounded
    // float result, so ADD, MUL and SCALE here equal f32 arithmetic bit for bit.
    Set(dst, i0, i1, i2, i3, add ? x + y : x * y);
  });
  return true;
}

bool Scale(ggml_tensor* dst, const ggml_tensor* a) {
  const double s = ggml_get_op_params_f32(dst, 0);
  ForEach(dst->ne, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    Set(dst, i0, i1, i2, i3, Get(a, i0, i1, i2, i3) * s);
  });
  return true;
}

// NORM (rms = false): (x - mean) / sqrt(var + eps); RMS_NORM: x / sqrt(mean(x^2) + eps).
bool Norm(ggml_tensor* dst, const ggml_tensor* a, bool rms) {
  const double eps = ggml_get_op_params_f32(dst, 0);
  const int64_t n = a->ne[0];
  ForEach(dst->ne, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    if (i0 != 0) return;  // once per row
    double mean = 0.0;
    if (!rms) {
      for (int64_t k = 0; k < n; ++k) mean += Get(a, k, i1, i2, i3);
      mean /= static_cast<double>(n);
    }
    double sum2 = 0.0;
    for (int64_t k = 0; k < n; ++k) {
      const double x = Get(a, k, i1, i2, i3) - mean;
      sum2 += x * x;
    }
    const double inv = 1.0 / sqrt(sum2 / static_cast<double>(n) + eps);
    for (int64_t k = 0; k < n; ++k) Set(dst, k, i1, i2, i3, (Get(a, k, i1, i2, i3) - mean) * inv);
  });
  return true;
}

double Unary(ggml_unary_op op, double x) {
  switch (op) {
    case GGML_UNARY_OP_GELU:
      return 0.5 * x * (1.0 + tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x)));
    case GGML_UNARY_OP_GELU_ERF:
      return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440));
    case GGML_UNARY_OP_RELU:
      return x > 0.0 ? x : 0.0;
    case GGML_UNARY_OP_SIGMOID:
      return 1.0 / (1.0 + exp(-x));
    case GGML_UNARY_OP_TANH:
      return tanh(x);
    case GGML_UNARY_OP_SQR:
      return x * x;
    case GGML_UNARY_OP_SQRT:
      return sqrt(x);
    default:  // SILU
      return x / (1.0 + exp(-x));
  }
}

// Reads row (i1, i2, i3) of a (F32, F16 or quantized) into `row` as floats.
bool ReadRow(const ggml_tensor* node, const ggml_tensor* a, int64_t i1, int64_t i2, int64_t i3,
             std::vector<float>* row) {
  row->resize(static_cast<size_t>(a->ne[0]));
  if (IsFloat(a)) {
    for (int64_t k = 0; k < a->ne[0]; ++k) (*row)[k] = static_cast<float>(Get(a, k, i1, i2, i3));
    return true;
  }
  const ggml_cpu::QuantTypeTraits* traits = ggml_cpu::GetQuantTypeTraits(a->type);
  if (traits == nullptr) return Fail(node, "a must be F32, F16 or a quantized type with to_float");
  if (a->nb[0] != ggml_type_size(a->type)) return Fail(node, "rows of quantized a are not contiguous");
  traits->to_float(RowPtr(a, i1, i2, i3), row->data(), a->ne[0]);
  return true;
}

// dst[m, n, i2, i3] = sum_k a[k, m, i2 / (ne12 / ne02), i3 / (ne13 / ne03)] * b[k, n, i2, i3].
bool MulMat(ggml_tensor* dst, const ggml_tensor* a, const ggml_tensor* b) {
  if (!IsFloat(b)) return Fail(dst, "b must be F32 or F16");
  if (a->ne[0] != b->ne[0] || a->ne[2] <= 0 || a->ne[3] <= 0 || b->ne[2] % a->ne[2] != 0 ||
      b->ne[3] % a->ne[3] != 0 || dst->ne[0] != a->ne[1] || dst->ne[1] != b->ne[1] || dst->ne[2] != b->ne[2] ||
      dst->ne[3] != b->ne[3]) {
    return Fail(dst, "shapes of a, b and the result do not fit mul_mat");
  }
  const int64_t r2 = b->ne[2] / a->ne[2];
  const int64_t r3 = b->ne[3] / a->ne[3];
  std::vector<float> arow;
  for (int64_t i3 = 0; i3 < dst->ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < dst->ne[2]; ++i2) {
      for (int64_t m = 0; m < dst->ne[0]; ++m) {
        if (!ReadRow(dst, a, m, i2 / r2, i3 / r3, &arow)) return false;
        for (int64_t n = 0; n < dst->ne[1]; ++n) {
          double sum = 0.0;
          for (int64_t k = 0; k < a->ne[0]; ++k) sum += static_cast<double>(arow[k]) * Get(b, k, n, i2, i3);
          Set(dst, m, n, i2, i3, sum);
        }
      }
    }
  }
  return true;
}

// dst[i0, i, i2] = a[i0, b[i, i2], i2].
bool GetRows(ggml_tensor* dst, const ggml_tensor* a, const ggml_tensor* b) {
  if (b->type != GGML_TYPE_I32) return Fail(dst, "indices (src[1]) must be I32");
  if (dst->ne[0] != a->ne[0] || dst->ne[1] != b->ne[0] || dst->ne[2] != b->ne[1] || a->ne[2] != b->ne[1]) {
    return Fail(dst, "shapes of a, the indices and the result do not fit get_rows");
  }
  std::vector<float> row;
  for (int64_t i2 = 0; i2 < dst->ne[2]; ++i2) {
    for (int64_t i = 0; i < dst->ne[1]; ++i) {
      const int64_t r = static_cast<int64_t>(Get(b, i, i2, 0, 0));
      if (r < 0 || r >= a->ne[1]) {
        ggml_set_error("ggml_ref_compute_forward: node '%s' (GET_ROWS): index %lld at [%lld, %lld] is outside [0, %lld)",
                       dst->name, static_cast<long long>(r), static_cast<long long>(i), static_cast<long long>(i2),
                       static_cast<long long>(a->ne[1]));
        return false;
      }
      if (!ReadRow(dst, a, r, i2, 0, &row)) return false;
      for (int64_t i0 = 0; i0 < dst->ne[0]; ++i0) Set(dst, i0, i, i2, 0, row[i0]);
    }
  }
  return true;
}

bool DiagMaskInf(ggml_tensor* dst, const ggml_tensor* a) {
  const int64_t n_past = ggml_get_op_params_i32(dst, 0);
  ForEach(dst->ne, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    Set(dst, i0, i1, i2, i3, i0 > n_past + i1 ? -INFINITY : Get(a, i0, i1, i2, i3));
  });
  return true;
}

// ALiBi's slope for head h of n_head, in double, from its definition (ggml/ops.h
// ggml_alibi_slope): n = 2^floor(log2 n_head); 2^(-max_bias (h + 1) / n) for h < n, else
// 2^(-max_bias (2 (h - n) + 1) / (2 n)).
double RefAlibiSlope(double max_bias, int64_t n_head, int64_t h) {
  if (!(max_bias > 0.0)) return 1.0;
  int64_t n = 1;
  while (n * 2 <= n_head) n *= 2;
  return h < n ? exp2(-max_bias * static_cast<double>(h + 1) / static_cast<double>(n))
               : exp2(-max_bias * static_cast<double>(2 * (h - n) + 1) / (2.0 * static_cast<double>(n)));
}

// Row softmax of a * scale + slope(i2) * mask[:, i1], with max subtraction.
bool SoftMax(ggml_tensor* dst, const ggml_tensor* a, const ggml_tensor* mask) {
  const double scale = ggml_get_op_params_f32(dst, 0);
  const double max_bias = ggml_get_op_params_f32(dst, 1);
  if (max_bias > 0.0 && mask == nullptr) return Fail(dst, "max_bias (ALiBi) needs a mask");
  if (mask != nullptr && (!IsFloat(mask) || mask->ne[0] != a->ne[0] || mask->ne[1] < a->ne[1])) {
    return Fail(dst, "mask must be F32 [ne0, >= ne1]");
  }
  const int64_t n = a->ne[0];
  std::vector<double> x(static_cast<size_t>(n));
  for (int64_t i3 = 0; i3 < a->ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < a->ne[2]; ++i2) {
      const double slope = RefAlibiSlope(max_bias, a->ne[2], i2);
      for (int64_t i1 = 0; i1 < a->ne[1]; ++i1) {
        double max = -INFINITY;
        for (int64_t k = 0; k < n; ++k) {
          x[k] = Get(a, k, i1, i2, i3) * scale + (mask != nullptr ? slope * Get(mask, k, i1, 0, 0) : 0.0);
          if (x[k] > max) max = x[k];
        }
        if (max == -INFINITY) {  // every entry masked: all 0 (ggml gives NaN; see ref_ops.h)
          for (int64_t k = 0; k < n; ++k) Set(dst, k, i1, i2, i3, 0.0);
          continue;
        }
        double sum = 0.0;
        for (int64_t k = 0; k < n; ++k) {
          x[k] = exp(x[k] - max);
          sum += x[k];
        }
        for (int64_t k = 0; k < n; ++k) Set(dst, k, i1, i2, i3, x[k] / sum);
      }
    }
  }
  return true;
}

// dst[ic * K + k, ol, n] = b[ol * s0 + k * d0 - p0, ic, n], 0 outside [0, IL).
bool Im2Col(ggml_tensor* dst, const ggml_tensor* kernel, const ggml_tensor* b) {
  const int64_t s0 = ggml_get_op_params_i32(dst, 0);
  const int64_t p0 = ggml_get_op_params_i32(dst, 1);
  const int64_t d0 = ggml_get_op_params_i32(dst, 2);
  const int64_t K = kernel->ne[0];
  const int64_t IL = b->ne[0];
  const int64_t IC = b->ne[1];
  if (!IsFloat(b) || !IsFloat(dst)) return Fail(dst, "input and result must be F32 or F16");
  if (kernel->ne[1] != IC || dst->ne[0] != IC * K || dst->ne[2] != b->ne[2] || b->ne[3] != 1) {
    return Fail(dst, "shapes of the kernel, the input and the result do not fit im2col");
  }
  ForEach(dst->ne, [&](int64_t i0, int64_t ol, int64_t n, int64_t i3) {
    const int64_t ic = i0 / K;
    const int64_t k = i0 % K;
    const int64_t il = ol * s0 + k * d0 - p0;
    Set(dst, i0, ol, n, i3, il >= 0 && il < IL ? Get(b, il, ic, n, 0) : 0.0);
  });
  return true;
}

bool Concat(ggml_tensor* dst, const ggml_tensor* a, const ggml_tensor* b) {
  const int dim = ggml_get_op_params_i32(dst, 0);
  if (dim < 0 || dim > 3) return Fail(dst, "dim is not in 0..3");
  if (!IsFloat(b)) return Fail(dst, "b must be F32 or F16");
  for (int i = 0; i < 4; ++i) {
    const bool ok = i == dim ? dst->ne[i] == a->ne[i] + b->ne[i] : dst->ne[i] == a->ne[i] && b->ne[i] == a->ne[i];
    if (!ok) return Fail(dst, "shapes of a, b and the result do not fit concat");
  }
  ForEach(dst->ne, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    int64_t i[4] = {i0, i1, i2, i3};
    double v;
    if (i[dim] < a->ne[dim]) {
      v = Get(a, i0, i1, i2, i3);
    } else {
      i[dim] -= a->ne[dim];
      v = Get(b, i[0], i[1], i[2], i[3]);
    }
    Set(dst, i0, i1, i2, i3, v);
  });
  return true;
}

bool Pad(ggml_tensor* dst, const ggml_tensor* a) {
  for (int i = 0; i < 4; ++i) {
    if (dst->ne[i] < a->ne[i]) return Fail(dst, "result is smaller than a");
  }
  ForEach(dst->ne, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    const bool inside = i0 < a->ne[0] && i1 < a->ne[1] && i2 < a->ne[2] && i3 < a->ne[3];
    Set(dst, i0, i1, i2, i3, inside ? Get(a, i0, i1, i2, i3) : 0.0);
  });
  return true;
}

bool Repeat(ggml_tensor* dst, const ggml_tensor* a) {
  if (!ggml_can_repeat(a, dst)) return Fail(dst, "a cannot be tiled to the result shape");
  ForEach(dst->ne, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    Set(dst, i0, i1, i2, i3, Get(a, i0 % a->ne[0], i1 % a->ne[1], i2 % a->ne[2], i3 % a->ne[3]));
  });
  return true;
}

// dst[i1] = the lowest i0 with a[i0, i1] == max of row i1.
bool Argmax(ggml_tensor* dst, const ggml_tensor* a) {
  if (!IsFloat(a) || a->ne[2] != 1 || a->ne[3] != 1) return Fail(dst, "a must be F32 [ne0, ne1]");
  if (dst->type != GGML_TYPE_I32 || dst->ne[0] != a->ne[1]) return Fail(dst, "result must be I32 [ne1 of a]");
  for (int64_t i1 = 0; i1 < a->ne[1]; ++i1) {
    int64_t best = 0;
    double max = -INFINITY;
    for (int64_t i0 = 0; i0 < a->ne[0]; ++i0) {
      const double v = Get(a, i0, i1, 0, 0);
      if (v > max) {
        max = v;
        best = i0;
      }
    }
    Set(dst, i1, 0, 0, 0, static_cast<double>(best));
  }
  return true;
}

// result[e, h, i, i3] = sum_j softmax_j(cap(scale * q[:, i, h, i3] . k[:, j, hk, i3]) + slope(h) mask[j, i])
// v[e, j, hk, i3] with hk = h / (n_head / n_head_kv), cap(s) = c tanh(s / c) for logit_softcap c != 0;
// a query whose scores are all -inf gives zeros.
bool FlashAttnExt(ggml_tensor* dst) {
  const ggml_tensor* q = dst->src[0];
  const ggml_tensor* k = dst->src[1];
  const ggml_tensor* v = dst->src[2];
  const ggml_tensor* mask = dst->src[3];
  const double max_bias = ggml_get_op_params_f32(dst, 1), softcap = ggml_get_op_params_f32(dst, 2);
  if (max_bias > 0.0 && mask == nullptr) return Fail(dst, "max_bias (ALiBi) needs a mask");
  if (!IsFloat(k) || !IsFloat(v) || k->ne[0] != q->ne[0] || v->ne[1] != k->ne[1] || k->ne[2] < 1 ||
      q->ne[2] % k->ne[2] != 0 || dst->ne[0] != v->ne[0] || dst->ne[1] != q->ne[2] || dst->ne[2] != q->ne[1] ||
      dst->ne[3] != q->ne[3]) {
    return Fail(dst, "shapes of q, k, v and the result do not fit flash_attn_ext");
  }
  if (mask != nullptr && (mask->data == nullptr || !IsFloat(mask) || mask->ne[0] != k->ne[1] || mask->ne[1] < q->ne[1])) {
    return Fail(dst, "mask must be F32/F16 [n_kv, >= n_q] with data");
  }
  const double scale = ggml_get_op_params_f32(dst, 0);
  const int64_t n_kv = k->ne[1], group = q->ne[2] / k->ne[2];
  std::vector<double> s(static_cast<size_t>(n_kv));
  for (int64_t i3 = 0; i3 < q->ne[3]; ++i3) {
    for (int64_t h = 0; h < q->ne[2]; ++h) {
      const double slope = RefAlibiSlope(max_bias, q->ne[2], h);
      for (int64_t i = 0; i < q->ne[1]; ++i) {
        double mx = -INFINITY;
        for (int64_t j = 0; j < n_kv; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < q->ne[0]; ++c) dot += Get(q, c, i, h, i3) * Get(k, c, j, h / group, i3);
          s[j] = scale * dot;
          if (softcap != 0.0) s[j] = softcap * tanh(s[j] / softcap);
          s[j] += mask != nullptr ? slope * Get(mask, j, i, 0, 0) : 0.0;
          mx = fmax(mx, s[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < n_kv; ++j) {
          s[j] = mx == -INFINITY ? 0.0 : exp(s[j] - mx);
          sum += s[j];
        }
        for (int64_t e = 0; e < v->ne[0]; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < n_kv; ++j) acc += s[j] * Get(v, e, j, h / group, i3);
          Set(dst, e, h, i, i3, sum > 0 ? acc / sum : 0.0);
        }
      }
    }
  }
  return true;
}

// The checks every op shares: a known op, allocated result and sources, source and result types
// and shapes the op's reference reads and writes. False with the error recorded (Fail).
bool CheckNode(const ggml_tensor* node) {
  if (node->op <= GGML_OP_NONE || node->op >= GGML_OP_COUNT) return Fail(node, "unknown op");
  if (node->data == nullptr) return Fail(node, "result has no data (not allocated)");
  for (int i = 0; i < ggml_op_n_src(node->op); ++i) {
    if (node->src[i] == nullptr || node->src[i]->data == nullptr) {
      ggml_set_error("ggml_ref_compute_forward: node '%s' (%s): src[%d] is NULL or has no data", node->name,
                     ggml_op_name(node->op), i);
      return false;
    }
  }
  if (node->op == GGML_OP_SOFT_MAX && node->src[1] != nullptr && node->src[1]->data == nullptr) {
    return Fail(node, "mask (src[1]) has no data");
  }
  const ggml_tensor* a = node->src[0];
  // Ops other than MUL_MAT, GET_ROWS and the copies read F32 (or F16) sources and write F32.
  const bool elementwise = node->op != GGML_OP_MUL_MAT && node->op != GGML_OP_GET_ROWS && node->op != GGML_OP_DUP &&
                           node->op != GGML_OP_CONT && node->op != GGML_OP_CPY && node->op != GGML_OP_IM2COL &&
                           node->op != GGML_OP_ARGMAX && node->op != GGML_OP_FLASH_ATTN_EXT;
  if (elementwise && (!IsFloat(a) || node->type != GGML_TYPE_F32)) {
    return Fail(node, "source must be F32 or F16 and the result F32");
  }
  const bool same_shape = node->op == GGML_OP_SCALE || node->op == GGML_OP_NORM || node->op == GGML_OP_RMS_NORM ||
                          node->op == GGML_OP_UNARY || node->op == GGML_OP_DIAG_MASK_INF ||
                          node->op == GGML_OP_SOFT_MAX;
  if (same_shape && !ggml_are_same_shape(a, node)) return Fail(node, "result shape differs from src[0]");
  if ((node->op == GGML_OP_MUL_MAT || node->op == GGML_OP_GET_ROWS) && node->type != GGML_TYPE_F32) {
    return Fail(node, "result must be F32");
  }
  return true;
}

// Evaluates the checked, non-view node with its op's reference.
bool RunOp(ggml_tensor* node) {
  const ggml_tensor* a = node->src[0];
  const ggml_tensor* b = node->src[1];
  switch (node->op) {
    case GGML_OP_DUP:
    case GGML_OP_CONT:
    case GGML_OP_CPY:  // node is the view of src[1] that receives src[0]
      return Copy(node, a);
    case GGML_OP_ADD:
      return Binary(node, a, b, /*add=*/true);
    case GGML_OP_MUL:
      return Binary(node, a, b, /*add=*/false);
    case GGML_OP_SCALE:
      return Scale(node, a);
    case GGML_OP_NORM:
      return Norm(node, a, /*rms=*/false);
    case GGML_OP_RMS_NORM:
      return Norm(node, a, /*rms=*/true);
    case GGML_OP_MUL_MAT:
      return MulMat(node, a, b);
    case GGML_OP_GET_ROWS:
      return GetRows(node, a, b);
    case GGML_OP_DIAG_MASK_INF:
      return DiagMaskInf(node, a);
    case GGML_OP_SOFT_MAX:
      return SoftMax(node, a, b);
    case GGML_OP_IM2COL:
      return Im2Col(node, a, b);
    case GGML_OP_CONCAT:
      return Concat(node, a, b);
    case GGML_OP_PAD:
      return Pad(node, a);
    case GGML_OP_REPEAT:
      return Repeat(node, a);
    case GGML_OP_ARGMAX:
      return Argmax(node, a);
    case GGML_OP_FLASH_ATTN_EXT:
      if (!IsF32(a) || node->type != GGML_TYPE_F32) return Fail(node, "q and the result must be F32");
      return FlashAttnExt(node);
    case GGML_OP_UNARY: {
      const ggml_unary_op op = ggml_get_unary_op(node);
      if (op < 0 || op >= GGML_UNARY_OP_COUNT) return Fail(node, "unknown unary op");
      ForEach(node->ne, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
        Set(node, i0, i1, i2, i3, Unary(op, Get(a, i0, i1, i2, i3)));
      });
      return true;
    }
    default:
      return Fail(node, "op has no reference implementation");
  }
}

}  // namespace

extern "C" bool ggml_ref_compute_forward(ggml_tensor* node) {
  if (node == nullptr) {
    ggml_set_error("ggml_ref_compute_forward: node is NULL");
    return false;
  }
  if (ggml_op_is_view(node->op)) return true;
  return CheckNode(node) && RunOp(node);
}

extern "C" bool ggml_ref_graph_compute(ggml_cgraph* graph) {
  if (graph == nullptr) {
    ggml_set_error("ggml_ref_graph_compute: graph is NULL");
    return false;
  }
  for (int i = 0; i < graph->n_nodes; ++i) {
    if (!ggml_ref_compute_forward(graph->nodes[i])) return false;
  }
  return true;
}
