// Op constructors (ggml.c's ggml_add_impl, ggml_mul_mat, ...): shape checks, result shape,
// op and op_params. Nothing is computed here.
#include "ggml/ops.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cmath>

#include "ggml/internal.h"

namespace {

#define GGML_OP_CHECK(cond, ...)   \
  do {                             \
    if (!(cond)) {                 \
      ggml_set_error(__VA_ARGS__); \
      return nullptr;              \
    }                              \
  } while (0)

#define GGML_OP_NONNULL(name, t) GGML_OP_CHECK((t) != nullptr, "%s: a source tensor is NULL", name)

const char* ShapeStr(const ggml_tensor* t) {
  thread_local char buf[4][96];
  thread_local int slot = 0;
  char* s = buf[slot++ & 3];
  snprintf(s, 96, "'%s' %s [%lld, %lld, %lld, %lld]", t->name, ggml_type_name(t->type),
           static_cast<long long>(t->ne[0]), static_cast<long long>(t->ne[1]),
           static_cast<long long>(t->ne[2]), static_cast<long long>(t->ne[3]));
  return s;
}

ggml_tensor* NewResult(ggml_context* ctx, ggml_type type, const int64_t* ne, ggml_op op, ggml_tensor* a,
                       ggml_tensor* b = nullptr) {
  ggml_tensor* r = ggml_internal_new_tensor(ctx, type, GGML_MAX_DIMS, ne, nullptr, 0);
  if (r == nullptr) return nullptr;
  r->op = op;
  r->src[0] = a;
  r->src[1] = b;
  return r;
}

void SetParamF32(ggml_tensor* t, int i, float v) { memcpy(&t->op_params[i], &v, 4); }
void SetParamI32(ggml_tensor* t, int i, int32_t v) { t->op_params[i] = v; }

// A view of a with new ne and strides (used by reshape, permute, transpose, cpy).
ggml_tensor* ViewWithOp(ggml_context* ctx, ggml_tensor* a, const int64_t* ne, ggml_op op) {
  ggml_tensor* r = ggml_internal_new_tensor(ctx, a->type, GGML_MAX_DIMS, ne, a, 0);
  if (r == nullptr) return nullptr;
  r->op = op;
  r->src[0] = a;
  return r;
}

ggml_tensor* Binary(ggml_context* ctx, ggml_tensor* a, ggml_tensor* b, ggml_op op, const char* name) {
  GGML_OP_NONNULL(name, a);
  GGML_OP_NONNULL(name, b);
  GGML_OP_CHECK(a->type == GGML_TYPE_F32 && b->type == GGML_TYPE_F32, "%s: needs F32 sources, got %s and %s",
                name, ShapeStr(a), ShapeStr(b));
  GGML_OP_CHECK(ggml_can_repeat(b, a), "%s: %s cannot be broadcast to %s", name, ShapeStr(b), ShapeStr(a));
  return NewResult(ctx, GGML_TYPE_F32, a->ne, op, a, b);
}

ggml_tensor* UnaryF32(ggml_context* ctx, ggml_tensor* a, ggml_op op, const char* name) {
  GGML_OP_NONNULL(name, a);
  GGML_OP_CHECK(a->type == GGML_TYPE_F32, "%s: needs an F32 source, got %s", name, ShapeStr(a));
  return NewResult(ctx, GGML_TYPE_F32, a->ne, op, a);
}

}  // namespace

int ggml_op_n_src(ggml_op op) {
  switch (op) {
    case GGML_OP_NONE:
      return 0;
    case GGML_OP_ADD:
    case GGML_OP_MUL:
    case GGML_OP_MUL_MAT:
    case GGML_OP_CPY:
    case GGML_OP_GET_ROWS:
    case GGML_OP_IM2COL:
    case GGML_OP_CONCAT:
      return 2;
    case GGML_OP_FLASH_ATTN_EXT:
      return 3;
    default:
      return 1;
  }
}

bool ggml_op_is_view(ggml_op op) {
  return op == GGML_OP_NONE || op == GGML_OP_VIEW || op == GGML_OP_RESHAPE || op == GGML_OP_PERMUTE ||
         op == GGML_OP_TRANSPOSE;
}

float ggml_get_op_params_f32(const ggml_tensor* t, int i) {
  float v;
  memcpy(&v, &t->op_params[i], 4);
  return v;
}
int32_t ggml_get_op_params_i32(const ggml_tensor* t, int i) { return t->op_params[i]; }

ggml_tensor* ggml_add(ggml_context* ctx, ggml_tensor* a, ggml_tensor* b) {
  return Binary(ctx, a, b, GGML_OP_ADD, "ggml_add");
}
ggml_tensor* ggml_mul(ggml_context* ctx, ggml_tensor* a, ggml_tensor* b) {
  return Binary(ctx, a, b, GGML_OP_MUL, "ggml_mul");
}

ggml_tensor* ggml_scale(ggml_context* ctx, ggml_tensor* a, float s) {
  ggml_tensor* r = UnaryF32(ctx, a, GGML_OP_SCALE, "ggml_scale");
  if (r != nullptr) SetParamF32(r, 0, s);
  return r;
}

ggml_tensor* ggml_norm(ggml_context* ctx, ggml_tensor* a, float eps) {
  ggml_tensor* r = UnaryF32(ctx, a, GGML_OP_NORM, "ggml_norm");
  if (r != nullptr) SetParamF32(r, 0, eps);
  return r;
}

ggml_tensor* ggml_rms_norm(ggml_context* ctx, ggml_tensor* a, float eps) {
  ggml_tensor* r = UnaryF32(ctx, a, GGML_OP_RMS_NORM, "ggml_rms_norm");
  if (r != nullptr) SetParamF32(r, 0, eps);
  return r;
}

ggml_tensor* ggml_unary(ggml_context* ctx, ggml_tensor* a, ggml_unary_op op) {
  GGML_OP_CHECK(op >= 0 && op < GGML_UNARY_OP_COUNT, "ggml_unary: unknown unary op %d", static_cast<int>(op));
  ggml_tensor* r = UnaryF32(ctx, a, GGML_OP_UNARY, "ggml_unary");
  if (r != nullptr) SetParamI32(r, 0, op);
  return r;
}
ggml_tensor* ggml_gelu(ggml_context* ctx, ggml_tensor* a) { return ggml_unary(ctx, a, GGML_UNARY_OP_GELU); }
ggml_tensor* ggml_gelu_erf(ggml_context* ctx, ggml_tensor* a) { return ggml_unary(ctx, a, GGML_UNARY_OP_GELU_ERF); }
ggml_tensor* ggml_silu(ggml_context* ctx, ggml_tensor* a) { return ggml_unary(ctx, a, GGML_UNARY_OP_SILU); }
ggml_tensor* ggml_relu(ggml_context* ctx, ggml_tensor* a) { return ggml_unary(ctx, a, GGML_UNARY_OP_RELU); }
ggml_tensor* ggml_sigmoid(ggml_context* ctx, ggml_tensor* a) { return ggml_unary(ctx, a, GGML_UNARY_OP_SIGMOID); }
ggml_tensor* ggml_tanh(ggml_context* ctx, ggml_tensor* a) { return ggml_unary(ctx, a, GGML_UNARY_OP_TANH); }
ggml_tensor* ggml_sqr(ggml_context* ctx, ggml_tensor* a) { return ggml_unary(ctx, a, GGML_UNARY_OP_SQR); }
ggml_tensor* ggml_sqrt(ggml_context* ctx, ggml_tensor* a) { return ggml_unary(ctx, a, GGML_UNARY_OP_SQRT); }

ggml_tensor* ggml_mul_mat(ggml_context* ctx, ggml_tensor* a, ggml_tensor* b) {
  GGML_OP_NONNULL("ggml_mul_mat", a);
  GGML_OP_NONNULL("ggml_mul_mat", b);
  GGML_OP_CHECK(a->ne[0] == b->ne[0], "ggml_mul_mat: K differs: a %s, b %s", ShapeStr(a), ShapeStr(b));
  GGML_OP_CHECK(a->ne[2] > 0 && a->ne[3] > 0 && b->ne[2] % a->ne[2] == 0 && b->ne[3] % a->ne[3] == 0,
                "ggml_mul_mat: a %s cannot be broadcast over b %s", ShapeStr(a), ShapeStr(b));
  GGML_OP_CHECK(a->nb[0] == ggml_type_size(a->type) && !ggml_is_transposed(a),
                "ggml_mul_mat: rows of a %s are not contiguous", ShapeStr(a));
  GGML_OP_CHECK(a->type == GGML_TYPE_F32 || a->type == GGML_TYPE_F16 || ggml_is_quantized(a->type),
                "ggml_mul_mat: type of a %s is not supported", ShapeStr(a));
  GGML_OP_CHECK(b->type == GGML_TYPE_F32 || b->type == GGML_TYPE_F16, "ggml_mul_mat: b %s must be F32 or F16",
                ShapeStr(b));
  const int64_t ne[4] = {a->ne[1], b->ne[1], b->ne[2], b->ne[3]};
  return NewResult(ctx, GGML_TYPE_F32, ne, GGML_OP_MUL_MAT, a, b);
}

ggml_tensor* ggml_cpy(ggml_context* ctx, ggml_tensor* a, ggml_tensor* b) {
  GGML_OP_NONNULL("ggml_cpy", a);
  GGML_OP_NONNULL("ggml_cpy", b);
  GGML_OP_CHECK(ggml_nelements(a) == ggml_nelements(b), "ggml_cpy: element counts differ: %s vs %s",
                ShapeStr(a), ShapeStr(b));
  GGML_OP_CHECK((a->type == GGML_TYPE_F32 || a->type == GGML_TYPE_F16) &&
                    (b->type == GGML_TYPE_F32 || b->type == GGML_TYPE_F16),
                "ggml_cpy: types must be F32 or F16: %s -> %s", ShapeStr(a), ShapeStr(b));
  ggml_tensor* r = ggml_view_tensor(ctx, b);
  if (r == nullptr) return nullptr;
  ggml_format_name(r, "%s (copy of %s)", b->name, a->name);
  r->op = GGML_OP_CPY;
  r->src[0] = a;
  r->src[1] = b;
  memset(r->op_params, 0, sizeof(r->op_params));
  return r;
}

ggml_tensor* ggml_cast(ggml_context* ctx, ggml_tensor* a, ggml_type type) {
  GGML_OP_NONNULL("ggml_cast", a);
  GGML_OP_CHECK((a->type == GGML_TYPE_F32 || a->type == GGML_TYPE_F16) &&
                    (type == GGML_TYPE_F32 || type == GGML_TYPE_F16),
                "ggml_cast: types must be F32 or F16: %s -> %s", ShapeStr(a), ggml_type_name(type));
  ggml_tensor* r = NewResult(ctx, type, a->ne, GGML_OP_CONT, a);
  if (r != nullptr) ggml_format_name(r, "%s (%s)", a->name, ggml_type_name(type));
  return r;
}

ggml_tensor* ggml_cont(ggml_context* ctx, ggml_tensor* a) {
  GGML_OP_NONNULL("ggml_cont", a);
  GGML_OP_CHECK(a->type == GGML_TYPE_F32 || a->type == GGML_TYPE_F16, "ggml_cont: type of %s is not F32/F16",
                ShapeStr(a));
  ggml_tensor* r = NewResult(ctx, a->type, a->ne, GGML_OP_CONT, a);
  if (r != nullptr) ggml_format_name(r, "%s (cont)", a->name);
  return r;
}

ggml_tensor* ggml_cont_2d(ggml_context* ctx, ggml_tensor* a, int64_t ne0, int64_t ne1) {
  GGML_OP_NONNULL("ggml_cont_2d", a);
  GGML_OP_CHECK(ne0 * ne1 == ggml_nelements(a), "ggml_cont_2d: [%lld, %lld] does not hold the elements of %s",
                static_cast<long long>(ne0), static_cast<long long>(ne1), ShapeStr(a));
  const int64_t ne[4] = {ne0, ne1, 1, 1};
  ggml_tensor* r = NewResult(ctx, a->type, ne, GGML_OP_CONT, a);
  if (r != nullptr) ggml_format_name(r, "%s (cont)", a->name);
  return r;
}

static ggml_tensor* ReshapeImpl(ggml_context* ctx, ggml_tensor* a, const int64_t* ne) {
  GGML_OP_NONNULL("ggml_reshape", a);
  GGML_OP_CHECK(ggml_is_contiguous(a), "ggml_reshape: %s is not contiguous", ShapeStr(a));
  GGML_OP_CHECK(ne[0] * ne[1] * ne[2] * ne[3] == ggml_nelements(a),
                "ggml_reshape: [%lld, %lld, %lld, %lld] does not hold the elements of %s",
                static_cast<long long>(ne[0]), static_cast<long long>(ne[1]), static_cast<long long>(ne[2]),
                static_cast<long long>(ne[3]), ShapeStr(a));
  ggml_tensor* r = ViewWithOp(ctx, a, ne, GGML_OP_RESHAPE);
  if (r != nullptr) ggml_format_name(r, "%s (reshaped)", a->name);
  return r;
}

ggml_tensor* ggml_reshape(ggml_context* ctx, ggml_tensor* a, ggml_tensor* b) {
  GGML_OP_NONNULL("ggml_reshape", b);
  return ReshapeImpl(ctx, a, b->ne);
}
ggml_tensor* ggml_reshape_1d(ggml_context* ctx, ggml_tensor* a, int64_t ne0) {
  const int64_t ne[4] = {ne0, 1, 1, 1};
  return ReshapeImpl(ctx, a, ne);
}
ggml_tensor* ggml_reshape_2d(ggml_context* ctx, ggml_tensor* a, int64_t ne0, int64_t ne1) {
  const int64_t ne[4] = {ne0, ne1, 1, 1};
  return ReshapeImpl(ctx, a, ne);
}
ggml_tensor* ggml_reshape_3d(ggml_context* ctx, ggml_tensor* a, int64_t ne0, int64_t ne1, int64_t ne2) {
  const int64_t ne[4] = {ne0, ne1, ne2, 1};
  return ReshapeImpl(ctx, a, ne);
}
ggml_tensor* ggml_reshape_4d(ggml_context* ctx, ggml_tensor* a, int64_t ne0, int64_t ne1, int64_t ne2,
                             int64_t ne3) {
  const int64_t ne[4] = {ne0, ne1, ne2, ne3};
  return ReshapeImpl(ctx, a, ne);
}

ggml_tensor* ggml_permute(ggml_context* ctx, ggml_tensor* a, int axis0, int axis1, int axis2, int axis3) {
  GGML_OP_NONNULL("ggml_permute", a);
  const int axes[4] = {axis0, axis1, axis2, axis3};
  bool seen[4] = {false, false, false, false};
  for (int i = 0; i < 4; ++i) {
    GGML_OP_CHECK(axes[i] >= 0 && axes[i] < 4 && !seen[axes[i]],
                  "ggml_permute: axes (%d, %d, %d, %d) are not a permutation of 0..3", axis0, axis1, axis2, axis3);
    seen[axes[i]] = true;
  }
  int64_t ne[4];
  size_t nb[4];
  for (int i = 0; i < 4; ++i) {
    ne[axes[i]] = a->ne[i];
    nb[axes[i]] = a->nb[i];
  }
  ggml_tensor* r = ViewWithOp(ctx, a, a->ne, GGML_OP_PERMUTE);
  if (r == nullptr) return nullptr;
  for (int i = 0; i < 4; ++i) {
    r->ne[i] = ne[i];
    r->nb[i] = nb[i];
    r->op_params[i] = axes[i];
  }
  ggml_format_name(r, "%s (permuted)", a->name);
  return r;
}

ggml_tensor* ggml_transpose(ggml_context* ctx, ggml_tensor* a) {
  GGML_OP_NONNULL("ggml_transpose", a);
  ggml_tensor* r = ViewWithOp(ctx, a, a->ne, GGML_OP_TRANSPOSE);
  if (r == nullptr) return nullptr;
  r->ne[0] = a->ne[1];
  r->ne[1] = a->ne[0];
  r->nb[0] = a->nb[1];
  r->nb[1] = a->nb[0];
  r->nb[2] = a->nb[2];  // dims 2 and 3 keep a's strides (a may itself be a permuted view)
  r->nb[3] = a->nb[3];
  ggml_format_name(r, "%s (transposed)", a->name);
  return r;
}

ggml_tensor* ggml_get_rows(ggml_context* ctx, ggml_tensor* a, ggml_tensor* b) {
  GGML_OP_NONNULL("ggml_get_rows", a);
  GGML_OP_NONNULL("ggml_get_rows", b);
  GGML_OP_CHECK(b->type == GGML_TYPE_I32, "ggml_get_rows: indices %s must be I32", ShapeStr(b));
  GGML_OP_CHECK(a->ne[2] == b->ne[1] && b->ne[2] == 1 && b->ne[3] == 1 && a->ne[3] == 1,
                "ggml_get_rows: indices %s do not fit rows of %s", ShapeStr(b), ShapeStr(a));
  const int64_t ne[4] = {a->ne[0], b->ne[0], b->ne[1], 1};
  return NewResult(ctx, GGML_TYPE_F32, ne, GGML_OP_GET_ROWS, a, b);
}

ggml_tensor* ggml_diag_mask_inf(ggml_context* ctx, ggml_tensor* a, int n_past) {
  ggml_tensor* r = UnaryF32(ctx, a, GGML_OP_DIAG_MASK_INF, "ggml_diag_mask_inf");
  if (r != nullptr) SetParamI32(r, 0, n_past);
  return r;
}

ggml_tensor* ggml_soft_max(ggml_context* ctx, ggml_tensor* a) {
  return ggml_soft_max_ext(ctx, a, nullptr, 1.0f, 0.0f);
}

ggml_tensor* ggml_soft_max_ext(ggml_context* ctx, ggml_tensor* a, ggml_tensor* mask, float scale,
                               float max_bias) {
  GGML_OP_CHECK(std::isfinite(scale) && std::isfinite(max_bias),
                "ggml_soft_max_ext: scale %g and max_bias %g must be finite", scale, max_bias);
  GGML_OP_CHECK(max_bias <= 0.0f || mask != nullptr, "ggml_soft_max_ext: max_bias %g (ALiBi) needs a mask",
                max_bias);
  if (mask != nullptr) {
    GGML_OP_NONNULL("ggml_soft_max_ext", a);
    GGML_OP_CHECK(mask->type == GGML_TYPE_F32 && mask->ne[0] == a->ne[0] && mask->ne[1] >= a->ne[1] &&
                      mask->ne[2] == 1 && mask->ne[3] == 1,
                  "ggml_soft_max_ext: mask %s does not fit %s (needs F32 [ne0, >= ne1])", ShapeStr(mask),
                  ShapeStr(a));
  }
  ggml_tensor* r = UnaryF32(ctx, a, GGML_OP_SOFT_MAX, "ggml_soft_max_ext");
  if (r == nullptr) return nullptr;
  r->src[1] = mask;
  SetParamF32(r, 0, scale);
  SetParamF32(r, 1, max_bias);
  return r;
}

ggml_tensor* ggml_im2col_1d(ggml_context* ctx, ggml_tensor* a, ggml_tensor* b, int s0, int p0, int d0,
                            ggml_type dst_type) {
  GGML_OP_NONNULL("ggml_im2col_1d", a);
  GGML_OP_NONNULL("ggml_im2col_1d", b);
  GGML_OP_CHECK(s0 > 0 && d0 > 0 && p0 >= 0, "ggml_im2col_1d: stride %d, padding %d, dilation %d are invalid", s0,
                p0, d0);
  GGML_OP_CHECK(b->type == GGML_TYPE_F32, "ggml_im2col_1d: input %s must be F32", ShapeStr(b));
  GGML_OP_CHECK(dst_type == GGML_TYPE_F32 || dst_type == GGML_TYPE_F16, "ggml_im2col_1d: dst type must be F32/F16");
  GGML_OP_CHECK(a->ne[1] == b->ne[1], "ggml_im2col_1d: kernel %s and input %s differ in channels", ShapeStr(a),
                ShapeStr(b));
  const int64_t K = a->ne[0];
  const int64_t OL = (b->ne[0] + 2 * p0 - d0 * (K - 1) - 1) / s0 + 1;
  GGML_OP_CHECK(OL > 0, "ggml_im2col_1d: input %s is shorter than the kernel %s", ShapeStr(b), ShapeStr(a));
  const int64_t ne[4] = {b->ne[1] * K, OL, b->ne[2], 1};
  ggml_tensor* r = NewResult(ctx, dst_type, ne, GGML_OP_IM2COL, a, b);
  if (r == nullptr) return nullptr;
  SetParamI32(r, 0, s0);
  SetParamI32(r, 1, p0);
  SetParamI32(r, 2, d0);
  return r;
}

ggml_tensor* ggml_conv_1d(ggml_context* ctx, ggml_tensor* a, ggml_tensor* b, int s0, int p0, int d0) {
  ggml_tensor* im2col = ggml_im2col_1d(ctx, a, b, s0, p0, d0, GGML_TYPE_F32);  // [IC*K, OL, N]
  if (im2col == nullptr) return nullptr;
  // [OL*N, OC] = rows of im2col against rows of the kernel, then [OL, OC, N].
  ggml_tensor* cols = ggml_reshape_2d(ctx, im2col, im2col->ne[0], im2col->ne[1] * im2col->ne[2]);
  ggml_tensor* kernel = ggml_reshape_2d(ctx, a, a->ne[0] * a->ne[1], a->ne[2]);
  ggml_tensor* r = ggml_mul_mat(ctx, cols, kernel);
  if (r == nullptr) return nullptr;
  return ggml_reshape_3d(ctx, r, im2col->ne[1], a->ne[2], im2col->ne[2]);
}

ggml_tensor* ggml_conv_1d_ph(ggml_context* ctx, ggml_tensor* a, ggml_tensor* b, int s, int d) {
  GGML_OP_NONNULL("ggml_conv_1d_ph", a);
  return ggml_conv_1d(ctx, a, b, s, static_cast<int>(a->ne[0] / 2), d);
}

ggml_tensor* ggml_concat(ggml_context* ctx, ggml_tensor* a, ggml_tensor* b, int dim) {
  GGML_OP_NONNULL("ggml_concat", a);
  GGML_OP_NONNULL("ggml_concat", b);
  GGML_OP_CHECK(dim >= 0 && dim < 4, "ggml_concat: dim %d is not in 0..3", dim);
  GGML_OP_CHECK(a->type == GGML_TYPE_F32 && b->type == GGML_TYPE_F32, "ggml_concat: needs F32, got %s and %s",
                ShapeStr(a), ShapeStr(b));
  int64_t ne[4];
  for (int i = 0; i < 4; ++i) {
    GGML_OP_CHECK(i == dim || a->ne[i] == b->ne[i], "ggml_concat: %s and %s differ in dim %d", ShapeStr(a),
                  ShapeStr(b), i);
    ne[i] = i == dim ? a->ne[i] + b->ne[i] : a->ne[i];
  }
  ggml_tensor* r = NewResult(ctx, GGML_TYPE_F32, ne, GGML_OP_CONCAT, a, b);
  if (r != nullptr) SetParamI32(r, 0, dim);
  return r;
}

ggml_tensor* ggml_pad(ggml_context* ctx, ggml_tensor* a, int p0, int p1, int p2, int p3) {
  GGML_OP_NONNULL("ggml_pad", a);
  GGML_OP_CHECK(p0 >= 0 && p1 >= 0 && p2 >= 0 && p3 >= 0, "ggml_pad: negative padding");
  GGML_OP_CHECK(a->type == GGML_TYPE_F32, "ggml_pad: %s must be F32", ShapeStr(a));
  const int64_t ne[4] = {a->ne[0] + p0, a->ne[1] + p1, a->ne[2] + p2, a->ne[3] + p3};
  return NewResult(ctx, GGML_TYPE_F32, ne, GGML_OP_PAD, a);
}

ggml_tensor* ggml_repeat(ggml_context* ctx, ggml_tensor* a, ggml_tensor* b) {
  GGML_OP_NONNULL("ggml_repeat", a);
  GGML_OP_NONNULL("ggml_repeat", b);
  GGML_OP_CHECK(a->type == GGML_TYPE_F32, "ggml_repeat: %s must be F32", ShapeStr(a));
  GGML_OP_CHECK(ggml_can_repeat(a, b), "ggml_repeat: %s cannot be tiled to %s", ShapeStr(a), ShapeStr(b));
  return NewResult(ctx, GGML_TYPE_F32, b->ne, GGML_OP_REPEAT, a);
}

float ggml_alibi_slope(float max_bias, int64_t n_head, int64_t h) {
  if (!(max_bias > 0.0f) || n_head < 1) return 1.0f;
  const int64_t n = int64_t{1} << static_cast<int>(std::floor(std::log2(static_cast<double>(n_head))));
  const float m0 = std::pow(2.0f, -max_bias / static_cast<float>(n));
  const float m1 = std::pow(2.0f, -(max_bias / 2.0f) / static_cast<float>(n));
  return h < n ? std::pow(m0, static_cast<float>(h + 1)) : std::pow(m1, static_cast<float>(2 * (h - n) + 1));
}

ggml_tensor* ggml_argmax(ggml_context* ctx, ggml_tensor* a) {
  GGML_OP_NONNULL("ggml_argmax", a);
  GGML_OP_CHECK(a->type == GGML_TYPE_F32 && a->ne[2] == 1 && a->ne[3] == 1, "ggml_argmax: %s must be F32 2-D",
                ShapeStr(a));
  const int64_t ne[4] = {a->ne[1], 1, 1, 1};
  return NewResult(ctx, GGML_TYPE_I32, ne, GGML_OP_ARGMAX, a);
}

ggml_tensor* ggml_flash_attn_ext(ggml_context* ctx, ggml_tensor* q, ggml_tensor* k, ggml_tensor* v, ggml_tensor* mask,
                                float scale, float max_bias, float logit_softcap) {
  const char* fn = "ggml_flash_attn_ext";
  GGML_OP_NONNULL(fn, q);
  GGML_OP_NONNULL(fn, k);
  GGML_OP_NONNULL(fn, v);
  GGML_OP_CHECK(std::isfinite(scale) && std::isfinite(max_bias) && std::isfinite(logit_softcap),
                "%s: scale %g, max_bias %g and logit_softcap %g must be finite", fn, scale, max_bias, logit_softcap);
  GGML_OP_CHECK(max_bias <= 0.0f || mask != nullptr, "%s: max_bias %g (ALiBi) needs a mask", fn, max_bias);
  GGML_OP_CHECK(q->type == GGML_TYPE_F32, "%s: q %s must be F32", fn, ShapeStr(q));
  GGML_OP_CHECK((k->type == GGML_TYPE_F16 || k->type == GGML_TYPE_F32) && v->type == k->type,
                "%s: k %s and v %s must both be F16 or both F32", fn, ShapeStr(k), ShapeStr(v));
  GGML_OP_CHECK(k->ne[0] == q->ne[0], "%s: k %s and q %s differ in head width (ne0)", fn, ShapeStr(k), ShapeStr(q));
  GGML_OP_CHECK(v->ne[1] == k->ne[1] && v->ne[2] == k->ne[2] && v->ne[3] == k->ne[3],
                "%s: v %s does not have k's %s keys and heads (ne1..3)", fn, ShapeStr(v), ShapeStr(k));
  GGML_OP_CHECK(k->ne[2] > 0 && q->ne[2] % k->ne[2] == 0 && q->ne[3] == k->ne[3],
                "%s: q's heads %s are not a multiple of k's %s (or ne3 differs)", fn, ShapeStr(q), ShapeStr(k));
  if (mask != nullptr) {
    GGML_OP_CHECK((mask->type == GGML_TYPE_F16 || mask->type == GGML_TYPE_F32) && mask->ne[0] == k->ne[1] &&
                      mask->ne[1] >= q->ne[1] && mask->ne[2] == 1 && mask->ne[3] == 1,
                  "%s: mask %s does not fit (needs F16 or F32 [n_kv = %lld, >= n_q = %lld])", fn, ShapeStr(mask),
                  static_cast<long long>(k->ne[1]), static_cast<long long>(q->ne[1]));
  }
  const int64_t ne[4] = {v->ne[0], q->ne[2], q->ne[1], q->ne[3]};
  ggml_tensor* r = NewResult(ctx, GGML_TYPE_F32, ne, GGML_OP_FLASH_ATTN_EXT, q, k);
  if (r == nullptr) return nullptr;
  r->src[2] = v;
  r->src[3] = mask;
  SetParamF32(r, 0, scale);
  SetParamF32(r, 1, max_bias);
  SetParamF32(r, 2, logit_softcap);
  return r;
}

ggml_tensor* ggml_mul_mat_set_matvec(ggml_tensor* a, bool matvec) {
  GGML_OP_NONNULL("ggml_mul_mat_set_matvec", a);
  GGML_OP_CHECK(a->op == GGML_OP_MUL_MAT, "ggml_mul_mat_set_matvec: %s is not MUL_MAT", ShapeStr(a));
  SetParamI32(a, 1, matvec ? 1 : 0);
  return a;
}

bool ggml_mul_mat_get_matvec(const ggml_tensor* a) {
  return a != nullptr && a->op == GGML_OP_MUL_MAT && a->op_params[1] == 1;
}

ggml_tensor* ggml_flash_attn_ext_set_int8(ggml_tensor* a, bool int8) {
  GGML_OP_NONNULL("ggml_flash_attn_ext_set_int8", a);
  GGML_OP_CHECK(a->op == GGML_OP_FLASH_ATTN_EXT, "ggml_flash_attn_ext_set_int8: %s is not FLASH_ATTN_EXT",
                ShapeStr(a));
  SetParamI32(a, 4, int8 ? 1 : 0);
  return a;
}

bool ggml_flash_attn_ext_get_int8(const ggml_tensor* a) {
  return a != nullptr && a->op == GGML_OP_FLASH_ATTN_EXT && a->op_params[4] == 1;
}

const char* ggml_op_name(ggml_op op) {
  static const char* const kNames[GGML_OP_COUNT] = {
      "NONE",    "DUP",       "ADD",      "MUL",      "SCALE",         "NORM",     "RMS_NORM",
      "MUL_MAT", "CPY",       "CONT",     "RESHAPE",  "VIEW",          "PERMUTE",  "TRANSPOSE",
      "GET_ROWS", "DIAG_MASK_INF", "SOFT_MAX", "IM2COL", "CONCAT", "PAD", "REPEAT", "ARGMAX", "FLASH_ATTN_EXT", "UNARY",
  };
  return op >= 0 && op < GGML_OP_COUNT ? kNames[op] : "UNKNOWN";
}

const char* ggml_unary_op_name(ggml_unary_op op) {
  switch (op) {
    case GGML_UNARY_OP_GELU:
      return "GELU";
    case GGML_UNARY_OP_GELU_ERF:
      return "GELU_ERF";
    case GGML_UNARY_OP_SILU:
      return "SILU";
    case GGML_UNARY_OP_RELU:
      return "RELU";
    case GGML_UNARY_OP_SIGMOID:
      return "SIGMOID";
    case GGML_UNARY_OP_TANH:
      return "TANH";
    case GGML_UNARY_OP_SQR:
      return "SQR";
    case GGML_UNARY_OP_SQRT:
      return "SQRT";
    default:
      return "UNKNOWN";
  }
}

ggml_unary_op ggml_get_unary_op(const ggml_tensor* t) { return static_cast<ggml_unary_op>(t->op_params[0]); }
