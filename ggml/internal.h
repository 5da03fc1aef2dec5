// Shared between ggml/'s own source files; not part of the public API.
#ifndef GGML_WHISPER_GGML_INTERNAL_H_
#define GGML_WHISPER_GGML_INTERNAL_H_

#include <stddef.h>

#include "ggml/ggml.h"

enum {
  GGML_INTERNAL_OBJECT_TENSOR = 0,
  GGML_INTERNAL_OBJECT_GRAPH = 1,
};

// Appends an object of `size` payload bytes to the arena; returns the payload (GGML_MEM_ALIGN
// aligned) or NULL with a message naming `what`, the bytes needed and the bytes left.
void* ggml_internal_new_object(struct ggml_context* ctx, int type, size_t size, const char* what);

// Creates a tensor, optionally a view of view_src at view_offs (collapsing view chains). The
// common path of every ggml_new_tensor_* and op constructor.
struct ggml_tensor* ggml_internal_new_tensor(struct ggml_context* ctx, enum ggml_type type, int n_dims,
                                             const int64_t* ne, struct ggml_tensor* view_src,
                                             size_t view_offs);

#endif  // GGML_WHISPER_GGML_INTERNAL_H_
