// The context arena: one block of memory, objects appended by bumping an offset (ggml.c's
// ggml_new_object). Layout of each object: a GGML_OBJECT_SIZE header, then its payload (a
// ggml_tensor struct followed by its data, or a graph), the payload size padded to GGML_MEM_ALIGN.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <new>

#include "ggml/ggml.h"
#include "ggml/internal.h"

namespace {

struct ggml_object {
  size_t offs;  // payload offset from the arena start
  size_t size;  // payload bytes (aligned)
  ggml_object* next;
  int type;
  char pad[4];
};
static_assert(sizeof(ggml_object) == GGML_OBJECT_SIZE, "object header is 32 bytes as in ggml");
// Tensor data follows the struct in the arena: keeping the struct a multiple of the alignment
// keeps the data aligned and makes ggml_tensor_overhead() the exact per-tensor metadata cost.
static_assert(sizeof(ggml_tensor) % GGML_MEM_ALIGN == 0, "ggml_tensor must be padded to GGML_MEM_ALIGN");

}  // namespace

struct ggml_context {
  size_t mem_size;
  void* mem_buffer;
  bool mem_buffer_owned;
  bool no_alloc;
  int n_objects;
  ggml_object* objects_begin;
  ggml_object* objects_end;
};

ggml_context* ggml_init(ggml_init_params params) {
  if (params.mem_size > (SIZE_MAX >> 1)) {
    ggml_set_error("ggml_init: mem_size %zu bytes is impossible (more than half the address space)",
                   params.mem_size);
    return nullptr;
  }
  const size_t mem_size = params.mem_size == 0 ? GGML_MEM_ALIGN : GGML_PAD(params.mem_size, GGML_MEM_ALIGN);
  void* buffer = params.mem_buffer;
  bool owned = false;
  if (buffer != nullptr) {
    if (reinterpret_cast<uintptr_t>(buffer) % GGML_MEM_ALIGN != 0) {
      ggml_set_error("ggml_init: mem_buffer %p is not aligned to %d bytes", buffer, GGML_MEM_ALIGN);
      return nullptr;
    }
    if (params.mem_size % GGML_MEM_ALIGN != 0) {
      ggml_set_error("ggml_init: mem_size %zu of a caller mem_buffer is not a multiple of %d bytes",
                     params.mem_size, GGML_MEM_ALIGN);
      return nullptr;
    }
  } else {
    // The one allocation a context makes. Aligned to 64 (a cache line), a multiple of 16.
    buffer = aligned_alloc(64, GGML_PAD(mem_size, 64));
    if (buffer == nullptr) {
      ggml_set_error("ggml_init: cannot allocate an arena of %zu bytes", mem_size);
      return nullptr;
    }
    owned = true;
  }
  ggml_context* ctx = new (std::nothrow) ggml_context;
  if (ctx == nullptr) {
    if (owned) free(buffer);
    ggml_set_error("ggml_init: out of memory for the context struct");
    return nullptr;
  }
  *ctx = ggml_context{mem_size, buffer, owned, params.no_alloc, 0, nullptr, nullptr};
  return ctx;
}

void ggml_free(ggml_context* ctx) {
  if (ctx == nullptr) return;
  if (ctx->mem_buffer_owned) free(ctx->mem_buffer);
  delete ctx;
}

void ggml_reset(ggml_context* ctx) {
  if (ctx == nullptr) return;
  ctx->n_objects = 0;
  ctx->objects_begin = nullptr;
  ctx->objects_end = nullptr;
}

size_t ggml_used_mem(const ggml_context* ctx) {
  return ctx->objects_end == nullptr ? 0 : ctx->objects_end->offs + ctx->objects_end->size;
}
size_t ggml_get_mem_size(const ggml_context* ctx) { return ctx->mem_size; }
void* ggml_get_mem_buffer(const ggml_context* ctx) { return ctx->mem_buffer; }
bool ggml_get_no_alloc(const ggml_context* ctx) { return ctx->no_alloc; }
void ggml_set_no_alloc(ggml_context* ctx, bool no_alloc) { ctx->no_alloc = no_alloc; }
size_t ggml_tensor_overhead(void) { return GGML_OBJECT_SIZE + sizeof(ggml_tensor); }

void* ggml_internal_new_object(ggml_context* ctx, int type, size_t size, const char* what) {
  const size_t cur_end = ggml_used_mem(ctx);
  const size_t size_needed = GGML_PAD(size, GGML_MEM_ALIGN);
  const size_t available = ctx->mem_size > cur_end ? ctx->mem_size - cur_end : 0;
  if (size_needed + GGML_OBJECT_SIZE > available) {
    ggml_set_error(
        "not enough space in the context's memory pool for %s: needed %zu bytes, %zu bytes left "
        "(pool of %zu bytes)",
        what, size_needed + GGML_OBJECT_SIZE, available, ctx->mem_size);
    return nullptr;
  }
  char* base = static_cast<char*>(ctx->mem_buffer);
  auto* obj = reinterpret_cast<ggml_object*>(base + cur_end);
  *obj = ggml_object{cur_end + GGML_OBJECT_SIZE, size_needed, nullptr, type, {}};
  if (ctx->objects_end != nullptr) {
    ctx->objects_end->next = obj;
  } else {
    ctx->objects_begin = obj;
  }
  ctx->objects_end = obj;
  ctx->n_objects++;
  return base + obj->offs;
}

static ggml_tensor* NextTensorObject(const ggml_context* ctx, ggml_object* obj) {
  for (; obj != nullptr; obj = obj->next) {
    if (obj->type == GGML_INTERNAL_OBJECT_TENSOR) {
      return reinterpret_cast<ggml_tensor*>(static_cast<char*>(ctx->mem_buffer) + obj->offs);
    }
  }
  return nullptr;
}

ggml_tensor* ggml_get_first_tensor(const ggml_context* ctx) {
  return NextTensorObject(ctx, ctx->objects_begin);
}

ggml_tensor* ggml_get_next_tensor(const ggml_context* ctx, ggml_tensor* t) {
  auto* obj = reinterpret_cast<ggml_object*>(reinterpret_cast<char*>(t) - GGML_OBJECT_SIZE);
  return NextTensorObject(ctx, obj->next);
}

ggml_tensor* ggml_get_tensor(ggml_context* ctx, const char* name) {
  for (ggml_tensor* t = ggml_get_first_tensor(ctx); t != nullptr; t = ggml_get_next_tensor(ctx, t)) {
    if (strcmp(t->name, name) == 0) return t;
  }
  return nullptr;
}
