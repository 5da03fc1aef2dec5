// ggml_tallocr (ggml-alloc.c): bump allocation of tensors in a backend buffer.
#include "alloc/tallocr.h"

ggml_tallocr ggml_tallocr_new(ggml_backend_buffer_t buffer) {
  ggml_tallocr talloc;
  talloc.buffer = buffer;
  talloc.base = buffer != nullptr ? ggml_backend_buffer_get_base(buffer) : nullptr;
  talloc.alignment = buffer != nullptr ? ggml_backend_buffer_get_alignment(buffer) : GGML_BACKEND_CPU_ALIGNMENT;
  talloc.offset = 0;
  return talloc;
}

bool ggml_tallocr_alloc(ggml_tallocr* talloc, ggml_tensor* tensor) {
  if (talloc == nullptr || tensor == nullptr || talloc->buffer == nullptr) {
    ggml_set_error("ggml_tallocr_alloc: %s is NULL",
                   talloc == nullptr ? "the allocator" : tensor == nullptr ? "the tensor" : "the allocator's buffer");
    return false;
  }
  const char* name = tensor->name[0] != '\0' ? tensor->name : "(unnamed)";
  if (tensor->view_src != nullptr || (tensor->data != nullptr && tensor->buffer != talloc->buffer)) {
    ggml_set_error("ggml_tallocr_alloc: '%s' %s", name,
                   tensor->view_src != nullptr ? "is a view (use ggml_backend_view_init)"
                                               : "already has data outside this buffer");
    return false;
  }
  const size_t size = GGML_PAD(ggml_backend_buffer_get_alloc_size(talloc->buffer, tensor), talloc->alignment);
  const size_t capacity = ggml_backend_buffer_get_size(talloc->buffer);
  const size_t left = capacity > talloc->offset ? capacity - talloc->offset : 0;
  if (size > left) {
    ggml_set_error("ggml_tallocr_alloc: not enough space in the buffer for '%s' (needed %zu bytes, %zu bytes "
                   "left of %zu)",
                   name, size, left, capacity);
    return false;
  }
  if (!ggml_backend_tensor_alloc(talloc->buffer, tensor, static_cast<char*>(talloc->base) + talloc->offset)) {
    return false;
  }
  talloc->offset += size;
  return true;
}
