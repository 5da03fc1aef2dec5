// Backend buffers: one aligned block of host memory that tensors are placed in. The CPU buffer is
// the only kind this runtime has; the names follow ggml-backend (ggml/include/ggml-backend.h,
// ggml/src/ggml-backend.cpp) so code written against ggml reads the same. Where ggml aborts
// (GGML_ASSERT on a misplaced tensor), these functions return NULL/false and record a message
// (ggml_last_error(), and the ggml log callback).
//
// Usage (weights in one buffer of exactly the size they need):
//   struct ggml_init_params params = {n_tensors * ggml_tensor_overhead(), NULL, true};  // no_alloc
//   struct ggml_context* ctx = ggml_init(params);
//   ... ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 384, 384) ...
//   ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx);  // every tensor gets data
//   if (buf == NULL) fprintf(stderr, "%s\n", ggml_last_error());
//   ...
//   ggml_backend_buffer_free(buf);  // tensors' data dangle from here on
#ifndef GGML_WHISPER_ALLOC_BUFFER_H_
#define GGML_WHISPER_ALLOC_BUFFER_H_

#include <stddef.h>
#include <stdint.h>

#include "ggml/ggml.h"

#ifdef __cplusplus
extern "C" {
#endif

// Alignment (bytes) of a CPU buffer's base and of every tensor the allocators place in it: a
// cache line, and a multiple of every SIMD vector width the kernels use (AVX-512: 64). ggml's
// CPU buffer uses TENSOR_ALIGNMENT = 32.
#define GGML_BACKEND_CPU_ALIGNMENT 64

typedef struct ggml_backend_buffer* ggml_backend_buffer_t;

// A CPU buffer of `size` bytes (one aligned_alloc; base aligned to GGML_BACKEND_CPU_ALIGNMENT).
// The contents are uninitialized. size 0 is allowed (base is still a valid, unique pointer).
// Returns NULL with a message naming the size when the allocation fails.
ggml_backend_buffer_t ggml_backend_cpu_buffer_new(size_t size);
// Frees the memory and the handle. Tensors placed in it keep dangling data pointers. NULL is a
// no-op.
void ggml_backend_buffer_free(ggml_backend_buffer_t buffer);
// Replaces the buffer's memory with a new block of `size` bytes; the handle stays the same, the
// contents are not kept and every tensor placed in it must be placed again. On failure (false,
// message) the old block and size are kept. Used by the graph allocator to grow its buffer.
bool ggml_backend_cpu_buffer_realloc(ggml_backend_buffer_t buffer, size_t size);

void* ggml_backend_buffer_get_base(ggml_backend_buffer_t buffer);
// Usable bytes, as requested at creation (the block may be padded to the alignment).
size_t ggml_backend_buffer_get_size(ggml_backend_buffer_t buffer);
// GGML_BACKEND_CPU_ALIGNMENT.
size_t ggml_backend_buffer_get_alignment(ggml_backend_buffer_t buffer);
// Bytes a tensor occupies in a buffer: ggml_nbytes(tensor), as ggml's CPU buffer type. There is
// no padding of quantized rows (ggml's CUDA buffer pads them to 512 elements; our kernels read
// exactly ggml_row_size bytes per row). `buffer` may be NULL: every buffer is a CPU buffer.
// Callers that pack tensors pad the result to the alignment themselves.
size_t ggml_backend_buffer_get_alloc_size(ggml_backend_buffer_t buffer, const struct ggml_tensor* tensor);
// Sets every byte of the buffer to `value` (memset).
void ggml_backend_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value);

// Places `tensor` at `addr` inside `buffer`: sets tensor->buffer and tensor->data. Fails (false,
// message naming the tensor, the offset and the sizes) when the buffer or tensor is NULL, the
// tensor is a view (use ggml_backend_view_init), the tensor already has data outside this buffer
// (weights, a normal context's arena: placing it again would hide a bug), or
// [addr, addr + alloc_size) is not inside the buffer. Placing a tensor again in the same buffer
// is allowed (the graph allocator does so on every ggml_gallocr_alloc_graph). ggml asserts
// instead and also requires data == NULL.
bool ggml_backend_tensor_alloc(ggml_backend_buffer_t buffer, struct ggml_tensor* tensor, void* addr);

// Gives a view the bytes of its source: data = view_src->data + view_offs, buffer =
// view_src->buffer. Fails (false, message) when tensor or view_src is NULL, view_src has no data
// yet, or the view's last byte lies past view_src's (spans computed as ggml's ggml_nbytes does:
// type size + sum of (ne[i] - 1) * nb[i], correct for transposed views).
bool ggml_backend_view_init(struct ggml_tensor* tensor);

// Allocates every tensor of a no_alloc context in one new buffer of exactly the needed size:
// tensors without data and without view_src get PAD(alloc_size, GGML_BACKEND_CPU_ALIGNMENT)
// bytes each, in creation order from offset 0 (a bump allocation, as ggml_tallocr does); views
// without data then get ggml_backend_view_init (on failure every tensor placed so far is reset
// to data = NULL, buffer = NULL and the buffer is freed). Tensors that already have data are left alone. Returns the buffer
// (the caller frees it after the tensors' last use), or NULL with a message when ctx is NULL or
// not no_alloc, when no tensor needs bytes, or when the allocation fails.
// ggml: ggml_backend_alloc_ctx_tensors_from_buft (ggml-alloc.c), single buffer.
ggml_backend_buffer_t ggml_backend_alloc_ctx_tensors(struct ggml_context* ctx);

#ifdef __cplusplus
}
#endif

#endif  // GGML_WHISPER_ALLOC_BUFFER_H_
