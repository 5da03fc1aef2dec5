// ggml_tallocr: a bump allocator that places tensors one after another in a backend buffer, each
// at an offset padded to the buffer's alignment. There is no free. Semantics follow ggml's
// ggml_tallocr (ggml/src/ggml-alloc.c, ggml/include/ggml-alloc.h) except that running out of
// space returns false with a message instead of aborting. For placing the tensors of a whole
// no_alloc context at once see ggml_backend_alloc_ctx_tensors (alloc/buffer.h); for graphs,
// whose intermediate tensors can share bytes, see ggml_gallocr (alloc/gallocr.h).
//
// Usage:
//   ggml_backend_buffer_t buf = ggml_backend_cpu_buffer_new(n_bytes);
//   struct ggml_tallocr talloc = ggml_tallocr_new(buf);
//   if (!ggml_tallocr_alloc(&talloc, tensor)) fprintf(stderr, "%s\n", ggml_last_error());
#ifndef GGML_WHISPER_ALLOC_TALLOCR_H_
#define GGML_WHISPER_ALLOC_TALLOCR_H_

#include <stddef.h>

#include "alloc/buffer.h"
#include "ggml/ggml.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ggml_tallocr {
  ggml_backend_buffer_t buffer;  // not owned
  void* base;                    // ggml_backend_buffer_get_base(buffer)
  size_t alignment;              // bytes; every offset is a multiple of it
  size_t offset;                 // bytes used so far: where the next tensor goes
};

// A bump allocator over all of `buffer`, starting at offset 0 (the base is already aligned).
// `buffer` must not be NULL (a NULL buffer gives an allocator whose every alloc fails).
struct ggml_tallocr ggml_tallocr_new(ggml_backend_buffer_t buffer);

// Places `tensor` (no data, not a view) at the current offset and advances the offset by
// PAD(ggml_backend_buffer_get_alloc_size, alignment) bytes. Returns false, leaving the allocator
// and the tensor unchanged, with a message naming the tensor, the bytes needed and the bytes
// left when it does not fit; also false when talloc/tensor/buffer is NULL, or when
// ggml_backend_tensor_alloc refuses the tensor (a view, or data elsewhere).
bool ggml_tallocr_alloc(struct ggml_tallocr* talloc, struct ggml_tensor* tensor);

#ifdef __cplusplus
}
#endif

#endif  // GGML_WHISPER_ALLOC_TALLOCR_H_
