// Tensor creation, views, names, errors and shape helpers (ggml.c's ggml_new_tensor_impl and
// friends).
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ggml/ggml.h"
#include "ggml/internal.h"

// ---- Errors -----------------------------------------------------------------------------------

namespace {

void DefaultLog(ggml_log_level, const char* message, void*) { fprintf(stderr, "ggml: %s\n", message); }

ggml_log_callback g_log = DefaultLog;
void* g_log_user = nullptr;
thread_local char t_last_error[512] = "";

}  // namespace

void ggml_log_set(ggml_log_callback callback, void* user_data) {
  g_log = callback;
  g_log_user = user_data;
}

const char* ggml_last_error(void) { return t_last_error; }
void ggml_clear_error(void) { t_last_error[0] = '\0'; }

void ggml_set_error(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsnprintf(t_last_error, sizeof(t_last_error), fmt, args);
  va_end(args);
  if (g_log != nullptr) g_log(GGML_LOG_LEVEL_ERROR, t_last_error, g_log_user);
}

void ggml_log_internal(ggml_log_level level, const char* fmt, ...) {
  if (g_log == nullptr) return;
  char buf[512];
  va_list args;
  va_start(args, fmt);
  vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  g_log(level, buf, g_log_user);
}

// ---- Creation -----------------------------------------------------------------------------------

namespace {

// A new tensor's shape padded to 4 dimensions, its contiguous strides and data bytes.
struct TensorLayout {
  int64_t ne[GGML_MAX_DIMS] = {1, 1, 1, 1};
  size_t nb[GGML_MAX_DIMS] = {};
  size_t data_size = 0;
};

// Checks type, n_dims and ne (a known type, 1..4 dimensions, no negative extent, whole blocks per
// row) and computes the layout, with the data size's overflow checked (a bad shape from a file
// must not wrap around to a small allocation). False with ggml_last_error() set.
bool ContiguousLayout(ggml_type type, int n_dims, const int64_t* ne, TensorLayout* out) {
  if (ggml_type_traits_of(type) == nullptr) {
    ggml_set_error("ggml_new_tensor: unknown ggml_type %d", static_cast<int>(type));
    return false;
  }
  if (n_dims < 1 || n_dims > GGML_MAX_DIMS) {
    ggml_set_error("ggml_new_tensor: n_dims %d is not in 1..%d", n_dims, GGML_MAX_DIMS);
    return false;
  }
  int64_t* full_ne = out->ne;
  for (int i = 0; i < n_dims; ++i) {
    if (ne[i] < 0) {
      ggml_set_error("ggml_new_tensor: ne[%d] = %lld is negative", i, static_cast<long long>(ne[i]));
      return false;
    }
    full_ne[i] = ne[i];
  }
  if (!ggml_row_size_ok(type, full_ne[0])) {
    ggml_set_error("ggml_new_tensor: ne[0] = %lld is not a multiple of the %s block size %lld",
                   static_cast<long long>(full_ne[0]), ggml_type_name(type),
                   static_cast<long long>(ggml_blck_size(type)));
    return false;
  }
  size_t* nb = out->nb;
  nb[0] = ggml_type_size(type);
  nb[1] = ggml_row_size(type, full_ne[0]);
  size_t data_size = nb[1];
  for (int i = 1; i < GGML_MAX_DIMS; ++i) {
    if (i > 1) nb[i] = nb[i - 1] * static_cast<size_t>(full_ne[i - 1]);
    if (full_ne[i] != 0 && data_size > SIZE_MAX / 2 / static_cast<size_t>(full_ne[i])) {
      ggml_set_error("ggml_new_tensor: shape [%lld, %lld, %lld, %lld] of %s overflows size_t",
                     static_cast<long long>(full_ne[0]), static_cast<long long>(full_ne[1]),
                     static_cast<long long>(full_ne[2]), static_cast<long long>(full_ne[3]),
                     ggml_type_name(type));
      return false;
    }
    data_size *= static_cast<size_t>(full_ne[i]);
  }
  out->data_size = data_size;
  return true;
}

}  // namespace

ggml_tensor* ggml_internal_new_tensor(ggml_context* ctx, ggml_type type, int n_dims, const int64_t* ne,
                                      ggml_tensor* view_src, size_t view_offs) {
  if (ctx == nullptr) {
    ggml_set_error("ggml_new_tensor: context is NULL");
    return nullptr;
  }
  TensorLayout layout;
  if (!ContiguousLayout(type, n_dims, ne, &layout)) return nullptr;
  const size_t data_size = layout.data_size;

  if (view_src != nullptr && view_src->view_src != nullptr) {  // collapse view chains
    view_offs += view_src->view_offs;
    view_src = view_src->view_src;
  }
  // Written so that a huge offset cannot wrap around and pass.
  if (view_src != nullptr &&
      (view_offs > ggml_nbytes(view_src) || data_size > ggml_nbytes(view_src) - view_offs)) {
    ggml_set_error("ggml_view: %zu bytes at offset %zu exceed the %zu bytes of '%s'", data_size, view_offs,
                   ggml_nbytes(view_src), view_src->name);
    return nullptr;
  }

  const bool alloc_data = view_src == nullptr && !ggml_get_no_alloc(ctx);
  const size_t obj_size = sizeof(ggml_tensor) + (alloc_data ? data_size : 0);
  void* mem = ggml_internal_new_object(ctx, GGML_INTERNAL_OBJECT_TENSOR, obj_size, "a tensor");
  if (mem == nullptr) return nullptr;

  ggml_tensor* t = static_cast<ggml_tensor*>(mem);
  memset(t, 0, sizeof(*t));
  t->type = type;
  for (int i = 0; i < GGML_MAX_DIMS; ++i) {
    t->ne[i] = layout.ne[i];
    t->nb[i] = layout.nb[i];
  }
  t->op = GGML_OP_NONE;
  t->view_src = view_src;
  t->view_offs = view_offs;
  if (view_src != nullptr) {
    t->buffer = view_src->buffer;
    t->data = view_src->data != nullptr ? static_cast<char*>(view_src->data) + view_offs : nullptr;
  } else if (alloc_data) {
    t->data = static_cast<char*>(mem) + sizeof(ggml_tensor);
  }
  return t;
}

ggml_tensor* ggml_new_tensor(ggml_context* ctx, ggml_type type, int n_dims, const int64_t* ne) {
  return ggml_internal_new_tensor(ctx, type, n_dims, ne, nullptr, 0);
}

ggml_tensor* ggml_new_tensor_1d(ggml_context* ctx, ggml_type type, int64_t ne0) {
  return ggml_new_tensor(ctx, type, 1, &ne0);
}

ggml_tensor* ggml_new_tensor_2d(ggml_context* ctx, ggml_type type, int64_t ne0, int64_t ne1) {
  const int64_t ne[2] = {ne0, ne1};
  return ggml_new_tensor(ctx, type, 2, ne);
}

ggml_tensor* ggml_new_tensor_3d(ggml_context* ctx, ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2) {
  const int64_t ne[3] = {ne0, ne1, ne2};
  return ggml_new_tensor(ctx, type, 3, ne);
}

ggml_tensor* ggml_new_tensor_4d(ggml_context* ctx, ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2,
                                int64_t ne3) {
  const int64_t ne[4] = {ne0, ne1, ne2, ne3};
  return ggml_new_tensor(ctx, type, 4, ne);
}

ggml_tensor* ggml_dup_tensor(ggml_context* ctx, const ggml_tensor* a) {
  if (a == nullptr) {
    ggml_set_error("ggml_dup_tensor: source is NULL");
    return nullptr;
  }
  return ggml_new_tensor(ctx, a->type, GGML_MAX_DIMS, a->ne);
}

// ---- Views --------------------------------------------------------------------------------------

static ggml_tensor* ViewImpl(ggml_context* ctx, ggml_tensor* a, int n_dims, const int64_t* ne, size_t offset) {
  if (a == nullptr) {
    ggml_set_error("ggml_view: source is NULL");
    return nullptr;
  }
  ggml_tensor* r = ggml_internal_new_tensor(ctx, a->type, n_dims, ne, a, offset);
  if (r == nullptr) return nullptr;
  ggml_format_name(r, "%s (view)", a->name);
  r->op = GGML_OP_VIEW;
  r->src[0] = a;
  memcpy(r->op_params, &offset, sizeof(offset));
  return r;
}

// A view's byte span with explicit strides can exceed the contiguous size computed at creation;
// check the real span once the strides are set.
static ggml_tensor* CheckSpan(ggml_tensor* r) {
  if (r == nullptr) return nullptr;
  // view_offs <= nbytes(view_src) was checked at creation. Add up ggml_nbytes(r) term by term
  // against the room left, so that huge strides cannot wrap around and pass.
  const size_t room = ggml_nbytes(r->view_src) - r->view_offs;
  const bool packed_rows = ggml_blck_size(r->type) != 1;
  size_t span = packed_rows ? ggml_row_size(r->type, r->ne[0]) : ggml_type_size(r->type);
  bool fits = ggml_nelements(r) == 0 || span <= room;  // an empty view reads nothing
  for (int i = packed_rows ? 1 : 0; i < GGML_MAX_DIMS && fits && ggml_nelements(r) != 0; ++i) {
    if (r->ne[i] <= 1) continue;
    const size_t n = static_cast<size_t>(r->ne[i] - 1);
    fits = r->nb[i] <= (room - span) / n;
    if (fits) span += n * r->nb[i];
  }
  if (!fits) {
    ggml_set_error(
        "ggml_view: strided view ne [%lld, %lld, %lld, %lld] nb [%zu, %zu, %zu, %zu] at offset %zu reads "
        "past the %zu bytes of '%s'",
        static_cast<long long>(r->ne[0]), static_cast<long long>(r->ne[1]), static_cast<long long>(r->ne[2]),
        static_cast<long long>(r->ne[3]), r->nb[0], r->nb[1], r->nb[2], r->nb[3], r->view_offs,
        ggml_nbytes(r->view_src), r->view_src->name);
    r->data = nullptr;
    return nullptr;
  }
  return r;
}

ggml_tensor* ggml_view_tensor(ggml_context* ctx, ggml_tensor* a) {
  if (a == nullptr) {
    ggml_set_error("ggml_view_tensor: source is NULL");
    return nullptr;
  }
  ggml_tensor* r = ViewImpl(ctx, a, GGML_MAX_DIMS, a->ne, 0);
  if (r == nullptr) return nullptr;
  for (int i = 0; i < GGML_MAX_DIMS; ++i) r->nb[i] = a->nb[i];
  return CheckSpan(r);
}

ggml_tensor* ggml_view_1d(ggml_context* ctx, ggml_tensor* a, int64_t ne0, size_t offset) {
  return ViewImpl(ctx, a, 1, &ne0, offset);
}

ggml_tensor* ggml_view_2d(ggml_context* ctx, ggml_tensor* a, int64_t ne0, int64_t ne1, size_t nb1, size_t offset) {
  const int64_t ne[2] = {ne0, ne1};
  ggml_tensor* r = ViewImpl(ctx, a, 2, ne, offset);
  if (r == nullptr) return nullptr;
  r->nb[1] = nb1;
  r->nb[2] = r->nb[1] * ne1;
  r->nb[3] = r->nb[2];
  return CheckSpan(r);
}

ggml_tensor* ggml_view_3d(ggml_context* ctx, ggml_tensor* a, int64_t ne0, int64_t ne1, int64_t ne2, size_t nb1,
                          size_t nb2, size_t offset) {
  const int64_t ne[3] = {ne0, ne1, ne2};
  ggml_tensor* r = ViewImpl(ctx, a, 3, ne, offset);
  if (r == nullptr) return nullptr;
  r->nb[1] = nb1;
  r->nb[2] = nb2;
  r->nb[3] = r->nb[2] * ne2;
  return CheckSpan(r);
}

ggml_tensor* ggml_view_4d(ggml_context* ctx, ggml_tensor* a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                          size_t nb1, size_t nb2, size_t nb3, size_t offset) {
  const int64_t ne[4] = {ne0, ne1, ne2, ne3};
  ggml_tensor* r = ViewImpl(ctx, a, 4, ne, offset);
  if (r == nullptr) return nullptr;
  r->nb[1] = nb1;
  r->nb[2] = nb2;
  r->nb[3] = nb3;
  return CheckSpan(r);
}

// ---- Names and flags ----------------------------------------------------------------------------

ggml_tensor* ggml_set_name(ggml_tensor* t, const char* name) {
  if (t == nullptr) return nullptr;
  snprintf(t->name, sizeof(t->name), "%s", name);
  return t;
}

ggml_tensor* ggml_format_name(ggml_tensor* t, const char* fmt, ...) {
  if (t == nullptr) return nullptr;
  va_list args;
  va_start(args, fmt);
  vsnprintf(t->name, sizeof(t->name), fmt, args);
  va_end(args);
  return t;
}

const char* ggml_get_name(const ggml_tensor* t) { return t->name; }
void ggml_set_input(ggml_tensor* t) { t->flags |= GGML_TENSOR_FLAG_INPUT; }
void ggml_set_output(ggml_tensor* t) { t->flags |= GGML_TENSOR_FLAG_OUTPUT; }
void ggml_set_param(ggml_tensor* t) { t->flags |= GGML_TENSOR_FLAG_PARAM; }

// ---- Shape helpers ------------------------------------------------------------------------------

int64_t ggml_nelements(const ggml_tensor* t) { return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3]; }
int64_t ggml_nrows(const ggml_tensor* t) { return t->ne[1] * t->ne[2] * t->ne[3]; }
size_t ggml_element_size(const ggml_tensor* t) { return ggml_type_size(t->type); }

size_t ggml_nbytes(const ggml_tensor* t) {
  for (int i = 0; i < GGML_MAX_DIMS; ++i) {
    if (t->ne[i] <= 0) return 0;
  }
  // One past the last byte reached through the strides (ggml.c's ggml_nbytes). For plain types
  // every dimension, ne0 included, may be strided (a transposed or permuted view has nb0 > nb1):
  // the span is one element plus (ne[i] - 1) * nb[i] per dimension. Quantized rows are packed:
  // ne0 / blck blocks of nb0 bytes.
  const int64_t blck = ggml_blck_size(t->type);
  size_t nbytes;
  int first_strided_dim;
  if (blck == 1) {
    nbytes = ggml_type_size(t->type);
    first_strided_dim = 0;
  } else {
    nbytes = static_cast<size_t>(t->ne[0]) * t->nb[0] / static_cast<size_t>(blck);
    first_strided_dim = 1;
  }
  for (int i = first_strided_dim; i < GGML_MAX_DIMS; ++i) nbytes += static_cast<size_t>(t->ne[i] - 1) * t->nb[i];
  return nbytes;
}

int ggml_n_dims(const ggml_tensor* t) {
  for (int i = GGML_MAX_DIMS - 1; i >= 1; --i) {
    if (t->ne[i] > 1) return i + 1;
  }
  return 1;
}

bool ggml_is_contiguous(const ggml_tensor* t) {
  size_t next = ggml_type_size(t->type);
  if (t->ne[0] != ggml_blck_size(t->type) && t->nb[0] != next) return false;
  next = ggml_row_size(t->type, t->ne[0]);
  for (int i = 1; i < GGML_MAX_DIMS; ++i) {
    if (t->ne[i] != 1 && t->nb[i] != next) return false;
    next *= t->ne[i];
  }
  return true;
}

bool ggml_is_transposed(const ggml_tensor* t) { return t->nb[0] > t->nb[1]; }

bool ggml_is_permuted(const ggml_tensor* t) {
  return t->nb[0] > t->nb[1] || t->nb[1] > t->nb[2] || t->nb[2] > t->nb[3];
}

bool ggml_are_same_shape(const ggml_tensor* a, const ggml_tensor* b) {
  for (int i = 0; i < GGML_MAX_DIMS; ++i) {
    if (a->ne[i] != b->ne[i]) return false;
  }
  return true;
}

bool ggml_are_same_layout(const ggml_tensor* a, const ggml_tensor* b) {
  if (a->type != b->type) return false;
  for (int i = 0; i < GGML_MAX_DIMS; ++i) {
    if (a->ne[i] != b->ne[i] || a->nb[i] != b->nb[i]) return false;
  }
  return true;
}

bool ggml_can_repeat(const ggml_tensor* b, const ggml_tensor* a) {
  for (int i = 0; i < GGML_MAX_DIMS; ++i) {
    if (b->ne[i] == 0) return ggml_nelements(a) == 0;
    if (a->ne[i] % b->ne[i] != 0) return false;
  }
  return true;
}

// ---- Element access ------------------------------------------------------------------------------

static char* ElementPtr(const ggml_tensor* t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
  return static_cast<char*>(t->data) + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

float ggml_get_f32_nd(const ggml_tensor* t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
  const char* p = ElementPtr(t, i0, i1, i2, i3);
  switch (t->type) {
    case GGML_TYPE_F32: {
      float v;
      memcpy(&v, p, 4);
      return v;
    }
    case GGML_TYPE_F16: {
      ggml_fp16_t h;
      memcpy(&h, p, 2);
      return ggml_fp16_to_fp32(h);
    }
    case GGML_TYPE_I32: {
      int32_t v;
      memcpy(&v, p, 4);
      return static_cast<float>(v);
    }
    default:
      ggml_set_error("ggml_get_f32_nd: type %s is not supported", ggml_type_name(t->type));
      return NAN;
  }
}

void ggml_set_f32_nd(ggml_tensor* t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, float v) {
  char* p = ElementPtr(t, i0, i1, i2, i3);
  switch (t->type) {
    case GGML_TYPE_F32:
      memcpy(p, &v, 4);
      break;
    case GGML_TYPE_F16: {
      const ggml_fp16_t h = ggml_fp32_to_fp16(v);
      memcpy(p, &h, 2);
      break;
    }
    case GGML_TYPE_I32: {
      const int32_t i = static_cast<int32_t>(v);
      memcpy(p, &i, 4);
      break;
    }
    default:
      ggml_set_error("ggml_set_f32_nd: type %s is not supported", ggml_type_name(t->type));
  }
}

int32_t ggml_get_i32_nd(const ggml_tensor* t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
  if (t->type != GGML_TYPE_I32) {
    ggml_set_error("ggml_get_i32_nd: type %s is not supported (I32 only)", ggml_type_name(t->type));
    return 0;
  }
  int32_t v;
  memcpy(&v, ElementPtr(t, i0, i1, i2, i3), 4);
  return v;
}

void ggml_set_i32_nd(ggml_tensor* t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, int32_t v) {
  if (t->type != GGML_TYPE_I32) {
    ggml_set_error("ggml_set_i32_nd: type %s is not supported (I32 only)", ggml_type_name(t->type));
    return;
  }
  memcpy(ElementPtr(t, i0, i1, i2, i3), &v, 4);
}

int32_t ggml_get_i32_1d(const ggml_tensor* t, int64_t i) {
  int32_t v;
  memcpy(&v, static_cast<const char*>(t->data) + i * t->nb[0], 4);
  return v;
}

void ggml_set_i32_1d(ggml_tensor* t, int64_t i, int32_t v) {
  memcpy(static_cast<char*>(t->data) + i * t->nb[0], &v, 4);
}
