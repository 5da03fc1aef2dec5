// The ggml core: tensors, the context arena, views and naming. Graphs are in ggml/graph.h, op
// constructors in ggml/ops.h.
//
// Semantics follow ggml (ggml/include/ggml.h, ggml/src/ggml.c) with one deliberate difference:
// where ggml aborts on a full context or a bad shape, these functions return NULL and record a
// message (ggml_last_error(), and the log callback), leaving the context usable.
//
// Usage:
//   struct ggml_init_params params = {16 * 1024 * 1024, NULL, false};
//   struct ggml_context* ctx = ggml_init(params);        // one allocation, 16 MiB
//   struct ggml_tensor* a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 384, 1500);  // ne0 = 384
//   if (a == NULL) fprintf(stderr, "%s\n", ggml_last_error());
//   ggml_free(ctx);
#ifndef GGML_WHISPER_GGML_GGML_H_
#define GGML_WHISPER_GGML_GGML_H_

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ggml/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GGML_MAX_DIMS 4
#define GGML_MAX_SRC 10
#define GGML_MAX_OP_PARAMS 64  // bytes
#define GGML_MAX_NAME 64
// Alignment of every object and tensor payload in a context arena (ggml's GGML_MEM_ALIGN on
// 64-bit hosts).
#define GGML_MEM_ALIGN 16
// Bytes of the object header that precedes every object in the arena (ggml's GGML_OBJECT_SIZE).
#define GGML_OBJECT_SIZE 32

#define GGML_PAD(x, n) (((x) + (n) - 1) / (n) * (n))

// The operations a tensor can be the result of. Names and order follow ggml's enum ggml_op for
// the subset this runtime implements.
enum ggml_op {
  GGML_OP_NONE = 0,
  GGML_OP_DUP,
  GGML_OP_ADD,
  GGML_OP_MUL,
  GGML_OP_SCALE,
  GGML_OP_NORM,
  GGML_OP_RMS_NORM,
  GGML_OP_MUL_MAT,
  GGML_OP_CPY,
  GGML_OP_CONT,
  GGML_OP_RESHAPE,
  GGML_OP_VIEW,
  GGML_OP_PERMUTE,
  GGML_OP_TRANSPOSE,
  GGML_OP_GET_ROWS,
  GGML_OP_DIAG_MASK_INF,
  GGML_OP_SOFT_MAX,
  GGML_OP_IM2COL,
  GGML_OP_CONCAT,
  GGML_OP_PAD,
  GGML_OP_REPEAT,
  GGML_OP_ARGMAX,
  GGML_OP_FLASH_ATTN_EXT,
  GGML_OP_UNARY,
  GGML_OP_COUNT,
};

// op_params[0] of a GGML_OP_UNARY tensor.
enum ggml_unary_op {
  GGML_UNARY_OP_GELU = 0,      // tanh approximation (ggml_gelu)
  GGML_UNARY_OP_GELU_ERF = 1,  // exact 0.5 x (1 + erf(x / sqrt 2))
  GGML_UNARY_OP_SILU = 2,
  // For the Silero VAD graph (ggml has SQR and SQRT as ops of their own; here they are unary).
  GGML_UNARY_OP_RELU = 3,
  GGML_UNARY_OP_SIGMOID = 4,
  GGML_UNARY_OP_TANH = 5,
  GGML_UNARY_OP_SQR = 6,
  GGML_UNARY_OP_SQRT = 7,
  GGML_UNARY_OP_COUNT,
};

enum ggml_tensor_flag {
  GGML_TENSOR_FLAG_INPUT = 1,   // filled by the caller before compute; allocators never reuse it
  GGML_TENSOR_FLAG_OUTPUT = 2,  // read after compute; allocators never free or overwrite it
  GGML_TENSOR_FLAG_PARAM = 4,   // a parameter (weights); never a leaf to recompute
};

struct ggml_backend_buffer;  // alloc/: the buffer a tensor's data lives in (NULL: arena or none)

// An n-dimensional tensor. ne[i] counts elements along dimension i (ne[0] is the fastest, the
// row length); nb[i] is the stride in bytes (nb[0] = type size, nb[1] = row size, ...).
// Unused dimensions have ne = 1.
struct ggml_tensor {
  enum ggml_type type;
  struct ggml_backend_buffer* buffer;
  int64_t ne[GGML_MAX_DIMS];
  size_t nb[GGML_MAX_DIMS];
  enum ggml_op op;
  int32_t op_params[GGML_MAX_OP_PARAMS / sizeof(int32_t)];
  int32_t flags;  // ggml_tensor_flag bits
  struct ggml_tensor* src[GGML_MAX_SRC];
  struct ggml_tensor* view_src;  // the tensor whose bytes this view reads (never itself a view)
  size_t view_offs;              // byte offset of this view inside view_src
  void* data;
  char name[GGML_MAX_NAME];
  void* extra;
  // Pads the struct to a multiple of GGML_MEM_ALIGN (336 bytes on LP64, as in ggml) so that the
  // data placed right after it in the arena is aligned and ggml_tensor_overhead() is exact.
  char padding[8];
};

struct ggml_context;

struct ggml_init_params {
  size_t mem_size;   // bytes of the arena
  void* mem_buffer;  // caller-provided arena of mem_size bytes, or NULL to allocate one
  bool no_alloc;     // true: tensors get metadata only (data = NULL), for allocators to place
};

// ---- Errors -------------------------------------------------------------------------------
// Functions that fail return NULL/false and record a message: the last one on this thread is
// returned by ggml_last_error() ("" when none), and each is passed to the log callback (default:
// stderr). The callback may be NULL to silence logging.
// Levels and callback signature are ggml's (ggml/include/ggml.h: enum ggml_log_level,
// ggml_log_callback), so a callback written for ggml or whisper.cpp (whisper_log_set) works here.
// Messages from this layer are GGML_LOG_LEVEL_ERROR and carry no trailing newline.
enum ggml_log_level {
  GGML_LOG_LEVEL_NONE = 0,
  GGML_LOG_LEVEL_DEBUG = 1,
  GGML_LOG_LEVEL_INFO = 2,
  GGML_LOG_LEVEL_WARN = 3,
  GGML_LOG_LEVEL_ERROR = 4,
  GGML_LOG_LEVEL_CONT = 5,  // continues the previous message
};
typedef void (*ggml_log_callback)(enum ggml_log_level level, const char* text, void* user_data);
void ggml_log_set(ggml_log_callback callback, void* user_data);
// ggml's abort callback: returns true to stop the computation in progress (checked by
// whisper.cpp-style APIs between graph computes).
typedef bool (*ggml_abort_callback)(void* data);
const char* ggml_last_error(void);
void ggml_clear_error(void);
// Records a formatted error (for the other layers of this runtime: alloc/, kernels/).
void ggml_set_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// Passes a formatted message (no trailing newline) to the log callback at `level` without
// recording it as the last error: for warnings and notes of the other layers (kernels/). As
// upstream ggml's ggml_log_internal (src/ggml-impl.h), which its GGML_LOG_WARN macros call.
void ggml_log_internal(enum ggml_log_level level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// ---- Context --------------------------------------------------------------------------------
// Creates a context whose arena is params.mem_buffer (not owned, never freed here) or one
// aligned allocation of params.mem_size bytes (mem_size 0 becomes GGML_MEM_ALIGN). Returns NULL
// with a message when the allocation fails or when mem_buffer is not GGML_MEM_ALIGN-aligned.
struct ggml_context* ggml_init(struct ggml_init_params params);
// Frees the context and, when it owns it, its arena. NULL is a no-op.
void ggml_free(struct ggml_context* ctx);
// Drops every object; the arena is kept for reuse.
void ggml_reset(struct ggml_context* ctx);
// Bytes of the arena used so far: end of the last object (header + payload, aligned).
size_t ggml_used_mem(const struct ggml_context* ctx);
size_t ggml_get_mem_size(const struct ggml_context* ctx);
void* ggml_get_mem_buffer(const struct ggml_context* ctx);
bool ggml_get_no_alloc(const struct ggml_context* ctx);
void ggml_set_no_alloc(struct ggml_context* ctx, bool no_alloc);
// Arena bytes of one tensor's metadata: GGML_OBJECT_SIZE + sizeof(struct ggml_tensor) (368 on
// LP64, as in ggml), exactly the amount a no_alloc context uses per tensor.
size_t ggml_tensor_overhead(void);

// ---- Tensors --------------------------------------------------------------------------------
// Creates a tensor of n_dims (1..4) dimensions with contiguous strides. Its data is placed in
// the arena right after the metadata unless the context is no_alloc. Returns NULL with a message
// naming the bytes needed and the bytes left when the arena is full, or when the type is unknown,
// a dimension is negative, or ne[0] is not a multiple of the type's block size.
struct ggml_tensor* ggml_new_tensor(struct ggml_context* ctx, enum ggml_type type, int n_dims,
                                    const int64_t* ne);
struct ggml_tensor* ggml_new_tensor_1d(struct ggml_context* ctx, enum ggml_type type, int64_t ne0);
struct ggml_tensor* ggml_new_tensor_2d(struct ggml_context* ctx, enum ggml_type type, int64_t ne0,
                                       int64_t ne1);
struct ggml_tensor* ggml_new_tensor_3d(struct ggml_context* ctx, enum ggml_type type, int64_t ne0,
                                       int64_t ne1, int64_t ne2);
struct ggml_tensor* ggml_new_tensor_4d(struct ggml_context* ctx, enum ggml_type type, int64_t ne0,
                                       int64_t ne1, int64_t ne2, int64_t ne3);
// A new tensor of a's type and shape (contiguous), data not copied.
struct ggml_tensor* ggml_dup_tensor(struct ggml_context* ctx, const struct ggml_tensor* a);
// A view of all of a with a's ne and nb.
struct ggml_tensor* ggml_view_tensor(struct ggml_context* ctx, struct ggml_tensor* a);

// Views: a tensor that reads a's bytes starting at `offset` bytes, with the given ne and row
// strides nb1..nb3 (bytes). View chains collapse to the first non-view tensor. NULL with a message
// when the view would read past the end of its source.
struct ggml_tensor* ggml_view_1d(struct ggml_context* ctx, struct ggml_tensor* a, int64_t ne0,
                                 size_t offset);
struct ggml_tensor* ggml_view_2d(struct ggml_context* ctx, struct ggml_tensor* a, int64_t ne0,
                                 int64_t ne1, size_t nb1, size_t offset);
struct ggml_tensor* ggml_view_3d(struct ggml_context* ctx, struct ggml_tensor* a, int64_t ne0,
                                 int64_t ne1, int64_t ne2, size_t nb1, size_t nb2, size_t offset);
struct ggml_tensor* ggml_view_4d(struct ggml_context* ctx, struct ggml_tensor* a, int64_t ne0,
                                 int64_t ne1, int64_t ne2, int64_t ne3, size_t nb1, size_t nb2,
                                 size_t nb3, size_t offset);

// Names (truncated to GGML_MAX_NAME - 1 bytes). Return the tensor.
struct ggml_tensor* ggml_set_name(struct ggml_tensor* t, const char* name);
struct ggml_tensor* ggml_format_name(struct ggml_tensor* t, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));
const char* ggml_get_name(const struct ggml_tensor* t);
// The first tensor of ctx named `name`, or NULL (no error recorded: absence is an answer).
struct ggml_tensor* ggml_get_tensor(struct ggml_context* ctx, const char* name);
// Iteration over the context's tensors in creation order; NULL at the end.
struct ggml_tensor* ggml_get_first_tensor(const struct ggml_context* ctx);
struct ggml_tensor* ggml_get_next_tensor(const struct ggml_context* ctx, struct ggml_tensor* t);

void ggml_set_input(struct ggml_tensor* t);
void ggml_set_output(struct ggml_tensor* t);
void ggml_set_param(struct ggml_tensor* t);

// ---- Shape helpers ---------------------------------------------------------------------------
int64_t ggml_nelements(const struct ggml_tensor* t);
int64_t ggml_nrows(const struct ggml_tensor* t);  // ne1 * ne2 * ne3
// Bytes spanned by t's data given its strides (for a contiguous tensor: nelements * type size
// / block size).
size_t ggml_nbytes(const struct ggml_tensor* t);
size_t ggml_element_size(const struct ggml_tensor* t);  // type size (bytes)
int ggml_n_dims(const struct ggml_tensor* t);           // 1 + index of the last ne > 1
bool ggml_is_contiguous(const struct ggml_tensor* t);   // nb[] are the packed strides of ne[]
bool ggml_is_transposed(const struct ggml_tensor* t);   // nb[0] > nb[1]
bool ggml_is_permuted(const struct ggml_tensor* t);
bool ggml_are_same_shape(const struct ggml_tensor* a, const struct ggml_tensor* b);
bool ggml_are_same_layout(const struct ggml_tensor* a, const struct ggml_tensor* b);  // type,ne,nb
// True when b can be broadcast to a: every a->ne[i] is a multiple of b->ne[i].
bool ggml_can_repeat(const struct ggml_tensor* b, const struct ggml_tensor* a);
const char* ggml_op_name(enum ggml_op op);
const char* ggml_unary_op_name(enum ggml_unary_op op);
enum ggml_unary_op ggml_get_unary_op(const struct ggml_tensor* t);

// Element access for tests and small glue code (F32, F16, I32 only; contiguous or strided).
// Indices are along ne0..ne3. No bounds checks beyond an assert-free clamp: callers index within ne.
float ggml_get_f32_nd(const struct ggml_tensor* t, int64_t i0, int64_t i1, int64_t i2, int64_t i3);
void ggml_set_f32_nd(struct ggml_tensor* t, int64_t i0, int64_t i1, int64_t i2, int64_t i3,
                     float v);
int32_t ggml_get_i32_1d(const struct ggml_tensor* t, int64_t i);
void ggml_set_i32_1d(struct ggml_tensor* t, int64_t i, int32_t v);
// Element (i0, i1, i2, i3) of an I32 tensor, exact (ggml_get_f32_nd rounds values past 2^24 to
// float). ggml's names; this subset takes I32 only: another type is an error (ggml_last_error(),
// get returns 0, set writes nothing).
int32_t ggml_get_i32_nd(const struct ggml_tensor* t, int64_t i0, int64_t i1, int64_t i2, int64_t i3);
void ggml_set_i32_nd(struct ggml_tensor* t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, int32_t v);

#ifdef __cplusplus
}
#endif

#endif  // GGML_WHISPER_GGML_GGML_H_
