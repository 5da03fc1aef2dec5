#include "alloc/scalar_eval.h"

#include <math.h>

#include <vector>

#include "ggml/ops.h"

namespace alloc_testing {
namespace {

float Get(const ggml_tensor* t, const int64_t* i) { return ggml_get_f32_nd(t, i[0], i[1], i[2], i[3]); }
void Set(ggml_tensor* t, const int64_t* i, float v) { ggml_set_f32_nd(t, i[0], i[1], i[2], i[3], v); }

// Calls f(index) for every index of `ne`, i0 fastest.
template <typename F>
void ForEach(const int64_t* ne, F f) {
  int64_t i[4];
  for (i[3] = 0; i[3] < ne[3]; ++i[3]) {
    for (i[2] = 0; i[2] < ne[2]; ++i[2]) {
      for (i[1] = 0; i[1] < ne[1]; ++i[1]) {
        for (i[0] = 0; i[0] < ne[0]; ++i[0]) f(i);
      }
    }
  }
}

void Unravel(int64_t k, const int64_t* ne, int64_t* i) {
  for (int d = 0; d < 4; ++d) {
    i[d] = k % ne[d];
    k /= ne[d];
  }
}

// dst element k (ne order) = src element k: CONT, CPY.
void FlatCopy(const ggml_tensor* src, ggml_tensor* dst) {
  const int64_t n = ggml_nelements(dst);
  int64_t is[4], id[4];
  for (int64_t k = 0; k < n; ++k) {
    Unravel(k, src->ne, is);
    Unravel(k, dst->ne, id);
    Set(dst, id, Get(src, is));
  }
}

float Unary(ggml_unary_op op, float x) {
  switch (op) {
    case GGML_UNARY_OP_GELU:
      return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * x * (1.0f + 0.044715f * x * x)));
    case GGML_UNARY_OP_GELU_ERF:
      return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));
    case GGML_UNARY_OP_SILU:
      return x / (1.0f + expf(-x));
    default:
      return NAN;
  }
}

// Row ops: the whole row of src is read before dst's row is written.
template <typename F>
void ForEachRow(const ggml_tensor* src, ggml_tensor* dst, F row_fn) {
  std::vector<float> row(static_cast<size_t>(src->ne[0]));
  const int64_t ne_rows[4] = {1, src->ne[1], src->ne[2], src->ne[3]};
  ForEach(ne_rows, [&](const int64_t* r) {
    int64_t i[4] = {0, r[1], r[2], r[3]};
    for (i[0] = 0; i[0] < src->ne[0]; ++i[0]) row[static_cast<size_t>(i[0])] = Get(src, i);
    row_fn(r, row);
    for (i[0] = 0; i[0] < src->ne[0]; ++i[0]) Set(dst, i, row[static_cast<size_t>(i[0])]);
  });
}

std::string EvalNode(ggml_tensor* dst) {
  const ggml_tensor* a = dst->src[0];
  const ggml_tensor* b = dst->src[1];
  switch (dst->op) {
    case GGML_OP_VIEW:
    case GGML_OP_RESHAPE:
    case GGML_OP_PERMUTE:
    case GGML_OP_TRANSPOSE:
      return "";
    case GGML_OP_ADD:
    case GGML_OP_MUL: {
      const bool add = dst->op == GGML_OP_ADD;
      ForEach(dst->ne, [&](const int64_t* i) {
        const int64_t j[4] = {i[0] % b->ne[0], i[1] % b->ne[1], i[2] % b->ne[2], i[3] % b->ne[3]};
        const float x = Get(a, i);
        const float y = Get(b, j);
        Set(dst, i, add ? x + y : x * y);
      });
      return "";
    }
    case GGML_OP_SCALE: {
      const float s = ggml_get_op_params_f32(dst, 0);
      ForEach(dst->ne, [&](const int64_t* i) { Set(dst, i, Get(a, i) * s); });
      return "";
    }
    case GGML_OP_UNARY: {
      const ggml_unary_op op = ggml_get_unary_op(dst);
      ForEach(dst->ne, [&](const int64_t* i) { Set(dst, i, Unary(op, Get(a, i))); });
      return "";
    }
    case GGML_OP_NORM:
    case GGML_OP_RMS_NORM: {
      const float eps = ggml_get_op_params_f32(dst, 0);
      const bool rms = dst->op == GGML_OP_RMS_NORM;
      ForEachRow(a, dst, [&](const int64_t*, std::vector<float>& row) {
        float mean = 0.0f;
        if (!rms) {
          for (float v : row) mean += v;
          mean /= static_cast<float>(row.size());
        }
        float var = 0.0f;
        for (float v : row) var += (v - mean) * (v - mean);
        const float scale = 1.0f / sqrtf(var / static_cast<float>(row.size()) + eps);
        for (float& v : row) v = (v - mean) * scale;
      });
      return "";
    }
    case GGML_OP_SOFT_MAX: {
      const float scale = ggml_get_op_params_f32(dst, 0);
      // The mask row is read with the src row, before dst is written (dst may alias the mask).
      std::vector<float> mask_row(static_cast<size_t>(a->ne[0]));
      ForEachRow(a, dst, [&](const int64_t* r, std::vector<float>& row) {
        for (int64_t i0 = 0; i0 < a->ne[0]; ++i0) {
          const int64_t j[4] = {i0, r[1], 0, 0};
          mask_row[static_cast<size_t>(i0)] = b != nullptr ? Get(b, j) : 0.0f;
        }
        float max = -INFINITY;
        for (size_t k = 0; k < row.size(); ++k) {
          row[k] = row[k] * scale + mask_row[k];
          max = fmaxf(max, row[k]);
        }
        float sum = 0.0f;
        for (float& v : row) sum += (v = expf(v - max));
        for (float& v : row) v /= sum;
      });
      return "";
    }
    case GGML_OP_DIAG_MASK_INF: {
      const int n_past = ggml_get_op_params_i32(dst, 0);
      ForEach(dst->ne, [&](const int64_t* i) { Set(dst, i, i[0] > n_past + i[1] ? -INFINITY : Get(a, i)); });
      return "";
    }
    case GGML_OP_MUL_MAT: {
      if (a->type != GGML_TYPE_F32 || b->type != GGML_TYPE_F32) return "MUL_MAT of non-F32";
      const int64_t r2 = b->ne[2] / a->ne[2];
      const int64_t r3 = b->ne[3] / a->ne[3];
      ForEach(dst->ne, [&](const int64_t* i) {
        float sum = 0.0f;
        for (int64_t k = 0; k < a->ne[0]; ++k) {
          const int64_t ia[4] = {k, i[0], i[2] / r2, i[3] / r3};
          const int64_t ib[4] = {k, i[1], i[2], i[3]};
          sum += Get(a, ia) * Get(b, ib);
        }
        Set(dst, i, sum);
      });
      return "";
    }
    case GGML_OP_CONT:
    case GGML_OP_CPY:
      FlatCopy(a, dst);
      return "";
    case GGML_OP_REPEAT:
      ForEach(dst->ne, [&](const int64_t* i) {
        const int64_t j[4] = {i[0] % a->ne[0], i[1] % a->ne[1], i[2] % a->ne[2], i[3] % a->ne[3]};
        Set(dst, i, Get(a, j));
      });
      return "";
    case GGML_OP_PAD:
      ForEach(dst->ne, [&](const int64_t* i) {
        const bool inside = i[0] < a->ne[0] && i[1] < a->ne[1] && i[2] < a->ne[2] && i[3] < a->ne[3];
        Set(dst, i, inside ? Get(a, i) : 0.0f);
      });
      return "";
    case GGML_OP_CONCAT: {
      const int dim = ggml_get_op_params_i32(dst, 0);
      ForEach(dst->ne, [&](const int64_t* i) {
        if (i[dim] < a->ne[dim]) {
          Set(dst, i, Get(a, i));
        } else {
          int64_t j[4] = {i[0], i[1], i[2], i[3]};
          j[dim] -= a->ne[dim];
          Set(dst, i, Get(b, j));
        }
      });
      return "";
    }
    default:
      return std::string("unsupported op ") + ggml_op_name(dst->op);
  }
}

}  // namespace

std::string EvalGraph(ggml_cgraph* graph) {
  for (int i = 0; i < graph->n_nodes; ++i) {
    ggml_tensor* node = graph->nodes[i];
    if (node->type != GGML_TYPE_F32 && node->type != GGML_TYPE_F16) {
      return std::string("node '") + node->name + "' has type " + ggml_type_name(node->type);
    }
    std::string error = EvalNode(node);
    if (!error.empty()) return std::string("node '") + node->name + "': " + error;
  }
  return "";
}

}  // namespace alloc_testing
