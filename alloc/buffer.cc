// The CPU backend buffer (ggml-backend.cpp's CPU buffer: one aligned host allocation) and the
// helpers that place tensors in it.
#include "alloc/buffer.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <new>

struct ggml_backend_buffer {
  void* base;   // GGML_BACKEND_CPU_ALIGNMENT-aligned, never NULL
  size_t size;  // usable bytes
};

namespace {

// aligned_alloc needs a size that is a multiple of the alignment; 0 bytes still get one
// aligned unit so that base is a unique, valid pointer.
void* AlignedBlock(size_t size) {
  if (size > SIZE_MAX - GGML_BACKEND_CPU_ALIGNMENT) return nullptr;
  const size_t padded = size == 0 ? GGML_BACKEND_CPU_ALIGNMENT : GGML_PAD(size, GGML_BACKEND_CPU_ALIGNMENT);
  return aligned_alloc(GGML_BACKEND_CPU_ALIGNMENT, padded);
}

const char* NameOf(const ggml_tensor* t) { return t->name[0] != '\0' ? t->name : "(unnamed)"; }

// Bytes from a tensor's first byte to one past its last, whatever the stride order: ggml's
// ggml_nbytes. (ggml/tensor.cc's ggml_nbytes counts ne0 * nb0 even when nb0 is a row stride, as in
// a transposed view, which overstates such a view's span.)
size_t Span(const ggml_tensor* t) {
  for (int i = 0; i < GGML_MAX_DIMS; ++i) {
    if (t->ne[i] <= 0) return 0;
  }
  const int64_t blck = ggml_blck_size(t->type);
  size_t n = blck == 1 ? ggml_type_size(t->type) : static_cast<size_t>(t->ne[0]) * t->nb[0] / blck;
  for (int i = blck == 1 ? 0 : 1; i < GGML_MAX_DIMS; ++i) n += static_cast<size_t>(t->ne[i] - 1) * t->nb[i];
  return n;
}

}  // namespace

ggml_backend_buffer_t ggml_backend_cpu_buffer_new(size_t size) {
  void* base = AlignedBlock(size);
  if (base == nullptr) {
    ggml_set_error("ggml_backend_cpu_buffer_new: cannot allocate %zu bytes (%.1f MiB)", size,
                   static_cast<double>(size) / (1024.0 * 1024.0));
    return nullptr;
  }
  auto* buffer = new (std::nothrow) ggml_backend_buffer;
  if (buffer == nullptr) {
    free(base);
    ggml_set_error("ggml_backend_cpu_buffer_new: cannot allocate the buffer handle");
    return nullptr;
  }
  buffer->base = base;
  buffer->size = size;
  return buffer;
}

void ggml_backend_buffer_free(ggml_backend_buffer_t buffer) {
  if (buffer == nullptr) return;
  free(buffer->base);
  delete buffer;
}

bool ggml_backend_cpu_buffer_realloc(ggml_backend_buffer_t buffer, size_t size) {
  if (buffer == nullptr) {
    ggml_set_error("ggml_backend_cpu_buffer_realloc: buffer is NULL");
    return false;
  }
  void* base = AlignedBlock(size);
  if (base == nullptr) {
    ggml_set_error("ggml_backend_cpu_buffer_realloc: cannot allocate %zu bytes (%.1f MiB); the buffer keeps "
                   "its %zu bytes",
                   size, static_cast<double>(size) / (1024.0 * 1024.0), buffer->size);
    return false;
  }
  free(buffer->base);
  buffer->base = base;
  buffer->size = size;
  return true;
}

void* ggml_backend_buffer_get_base(ggml_backend_buffer_t buffer) { return buffer->base; }
size_t ggml_backend_buffer_get_size(ggml_backend_buffer_t buffer) { return buffer->size; }
size_t ggml_backend_buffer_get_alignment(ggml_backend_buffer_t) { return GGML_BACKEND_CPU_ALIGNMENT; }

size_t ggml_backend_buffer_get_alloc_size(ggml_backend_buffer_t, const ggml_tensor* tensor) {
  return ggml_nbytes(tensor);
}

void ggml_backend_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
  memset(buffer->base, value, buffer->size);
}

bool ggml_backend_tensor_alloc(ggml_backend_buffer_t buffer, ggml_tensor* tensor, void* addr) {
  if (buffer == nullptr || tensor == nullptr) {
    ggml_set_error("ggml_backend_tensor_alloc: %s is NULL", buffer == nullptr ? "buffer" : "tensor");
    return false;
  }
  if (tensor->view_src != nullptr) {
    ggml_set_error("ggml_backend_tensor_alloc: '%s' is a view of '%s': use ggml_backend_view_init", NameOf(tensor),
                   NameOf(tensor->view_src));
    return false;
  }
  if (tensor->data != nullptr && tensor->buffer != buffer) {
    ggml_set_error("ggml_backend_tensor_alloc: '%s' already has data at %p outside this buffer", NameOf(tensor),
                   tensor->data);
    return false;
  }
  const size_t size = ggml_backend_buffer_get_alloc_size(buffer, tensor);
  const uintptr_t base = reinterpret_cast<uintptr_t>(buffer->base);
  const uintptr_t at = reinterpret_cast<uintptr_t>(addr);
  if (at < base || at - base > buffer->size || size > buffer->size - (at - base)) {
    ggml_set_error("ggml_backend_tensor_alloc: '%s' needs %zu bytes at offset %lld of a %zu-byte buffer",
                   NameOf(tensor), size, static_cast<long long>(at - base), buffer->size);
    return false;
  }
  tensor->buffer = buffer;
  tensor->data = addr;
  return true;
}

bool ggml_backend_view_init(ggml_tensor* tensor) {
  if (tensor == nullptr || tensor->view_src == nullptr) {
    ggml_set_error("ggml_backend_view_init: %s", tensor == nullptr ? "tensor is NULL" : "tensor is not a view");
    return false;
  }
  const ggml_tensor* src = tensor->view_src;
  if (src->data == nullptr) {
    ggml_set_error("ggml_backend_view_init: '%s' is a view of '%s', which has no data yet", NameOf(tensor),
                   NameOf(src));
    return false;
  }
  const size_t size = Span(tensor);
  const size_t src_size = Span(src);
  if (tensor->view_offs > src_size || size > src_size - tensor->view_offs) {
    ggml_set_error("ggml_backend_view_init: view '%s' of %zu bytes at offset %zu exceeds the %zu bytes of '%s'",
                   NameOf(tensor), size, tensor->view_offs, src_size, NameOf(src));
    return false;
  }
  tensor->buffer = src->buffer;
  tensor->data = static_cast<char*>(src->data) + tensor->view_offs;
  return true;
}

ggml_backend_buffer_t ggml_backend_alloc_ctx_tensors(ggml_context* ctx) {
  if (ctx == nullptr) {
    ggml_set_error("ggml_backend_alloc_ctx_tensors: context is NULL");
    return nullptr;
  }
  if (!ggml_get_no_alloc(ctx)) {
    ggml_set_error("ggml_backend_alloc_ctx_tensors: the context is not no_alloc (its tensors already live in "
                   "its arena)");
    return nullptr;
  }
  const size_t align = GGML_BACKEND_CPU_ALIGNMENT;
  size_t total = 0;
  int n_tensors = 0;
  for (ggml_tensor* t = ggml_get_first_tensor(ctx); t != nullptr; t = ggml_get_next_tensor(ctx, t)) {
    if (t->data != nullptr || t->view_src != nullptr) continue;
    const size_t size = ggml_backend_buffer_get_alloc_size(nullptr, t);
    if (size > SIZE_MAX / 2 - total) {
      ggml_set_error("ggml_backend_alloc_ctx_tensors: the tensors need more than %zu bytes", SIZE_MAX / 2);
      return nullptr;
    }
    total += GGML_PAD(size, align);
    ++n_tensors;
  }
  if (n_tensors == 0) {
    ggml_set_error("ggml_backend_alloc_ctx_tensors: no tensor of the context needs allocation (all have data "
                   "or are views)");
    return nullptr;
  }
  ggml_backend_buffer_t buffer = ggml_backend_cpu_buffer_new(total);
  if (buffer == nullptr) return nullptr;

  char* base = static_cast<char*>(buffer->base);
  size_t offset = 0;
  bool ok = true;
  for (ggml_tensor* t = ggml_get_first_tensor(ctx); ok && t != nullptr; t = ggml_get_next_tensor(ctx, t)) {
    if (t->data != nullptr || t->view_src != nullptr) continue;
    ok = ggml_backend_tensor_alloc(buffer, t, base + offset);
    offset += GGML_PAD(ggml_backend_buffer_get_alloc_size(buffer, t), align);
  }
  for (ggml_tensor* t = ggml_get_first_tensor(ctx); ok && t != nullptr; t = ggml_get_next_tensor(ctx, t)) {
    if (t->data == nullptr && t->view_src != nullptr) ok = ggml_backend_view_init(t);
  }
  if (!ok) {  // undo, so that no tensor points into the freed buffer
    for (ggml_tensor* t = ggml_get_first_tensor(ctx); t != nullptr; t = ggml_get_next_tensor(ctx, t)) {
      if (t->buffer == buffer) {
        t->buffer = nullptr;
        t->data = nullptr;
      }
    }
    ggml_backend_buffer_free(buffer);
    return nullptr;
  }
  return buffer;
}
