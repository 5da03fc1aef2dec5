// ggml_dyn_tallocr (ggml-alloc.c): best-fit allocation of offsets with coalescing frees.
#include "alloc/dyn_tallocr.h"

#include <string.h>

#include <new>

namespace {

struct FreeBlock {
  size_t offset;
  size_t size;
};

const char* NameOf(const ggml_tensor* t) {
  if (t == nullptr) return "(no tensor)";
  return t->name[0] != '\0' ? t->name : "(unnamed)";
}

}  // namespace

struct ggml_dyn_tallocr {
  size_t alignment;
  size_t end;  // GGML_DYN_TALLOCR_MAX_OFFSET rounded down to the alignment
  int n_free_blocks;
  FreeBlock free_blocks[GGML_DYN_TALLOCR_MAX_FREE_BLOCKS];
  size_t max_size;
};

ggml_dyn_tallocr* ggml_dyn_tallocr_new(size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    ggml_set_error("ggml_dyn_tallocr_new: alignment %zu is not a power of two", alignment);
    return nullptr;
  }
  auto* alloc = new (std::nothrow) ggml_dyn_tallocr;
  if (alloc == nullptr) {
    ggml_set_error("ggml_dyn_tallocr_new: cannot allocate %zu bytes of state", sizeof(ggml_dyn_tallocr));
    return nullptr;
  }
  alloc->alignment = alignment;
  alloc->end = GGML_DYN_TALLOCR_MAX_OFFSET / alignment * alignment;
  ggml_dyn_tallocr_reset(alloc);
  return alloc;
}

void ggml_dyn_tallocr_free(ggml_dyn_tallocr* alloc) { delete alloc; }

void ggml_dyn_tallocr_reset(ggml_dyn_tallocr* alloc) {
  alloc->n_free_blocks = 1;
  alloc->free_blocks[0] = {0, alloc->end};
  alloc->max_size = 0;
}

bool ggml_dyn_tallocr_alloc(ggml_dyn_tallocr* alloc, size_t size, const ggml_tensor* tensor, size_t* offset) {
  if (alloc == nullptr || offset == nullptr) {
    ggml_set_error("ggml_dyn_tallocr_alloc: %s is NULL", alloc == nullptr ? "the allocator" : "offset");
    return false;
  }
  if (size > alloc->end) {
    ggml_set_error("ggml_dyn_tallocr_alloc: '%s' asks for %zu bytes, more than the %zu-byte offset space",
                   NameOf(tensor), size, alloc->end);
    return false;
  }
  const size_t padded = size == 0 ? alloc->alignment : GGML_PAD(size, alloc->alignment);

  // Best fit over every block but the last; the lowest offset wins a tie.
  const int last = alloc->n_free_blocks - 1;
  int best = -1;
  for (int i = 0; i < last; ++i) {
    const FreeBlock& b = alloc->free_blocks[i];
    if (b.size >= padded && (best < 0 || b.size < alloc->free_blocks[best].size)) best = i;
  }
  if (best < 0) {
    if (alloc->free_blocks[last].size < padded) {
      ggml_set_error("ggml_dyn_tallocr_alloc: '%s' needs %zu bytes; the offset space has %zu bytes left",
                     NameOf(tensor), padded, alloc->free_blocks[last].size);
      return false;
    }
    best = last;
  }

  FreeBlock& block = alloc->free_blocks[best];
  *offset = block.offset;
  block.offset += padded;
  block.size -= padded;
  if (block.size == 0 && best != last) {
    memmove(&alloc->free_blocks[best], &alloc->free_blocks[best + 1],
            static_cast<size_t>(alloc->n_free_blocks - best - 1) * sizeof(FreeBlock));
    --alloc->n_free_blocks;
  }
  if (*offset + padded > alloc->max_size) alloc->max_size = *offset + padded;
  return true;
}

bool ggml_dyn_tallocr_free_tensor(ggml_dyn_tallocr* alloc, size_t offset, size_t size, const ggml_tensor* tensor) {
  if (alloc == nullptr) {
    ggml_set_error("ggml_dyn_tallocr_free_tensor: the allocator is NULL");
    return false;
  }
  if (offset % alloc->alignment != 0 || offset > alloc->end || size > alloc->end - offset) {
    ggml_set_error("ggml_dyn_tallocr_free_tensor: '%s': %zu bytes at offset %zu is not an allocation (alignment "
                   "%zu)",
                   NameOf(tensor), size, offset, alloc->alignment);
    return false;
  }
  const size_t padded = size == 0 ? alloc->alignment : GGML_PAD(size, alloc->alignment);
  const size_t end = offset + padded;

  // i: the first free block after the range. The last block reaches alloc->end, so a range at or
  // beyond its start overlaps it and is caught below.
  int i = 0;
  while (i < alloc->n_free_blocks && alloc->free_blocks[i].offset <= offset) ++i;
  FreeBlock* prev = i > 0 ? &alloc->free_blocks[i - 1] : nullptr;
  FreeBlock* next = i < alloc->n_free_blocks ? &alloc->free_blocks[i] : nullptr;
  if ((prev != nullptr && prev->offset + prev->size > offset) || (next != nullptr && end > next->offset)) {
    const FreeBlock* hit = (prev != nullptr && prev->offset + prev->size > offset) ? prev : next;
    ggml_set_error("ggml_dyn_tallocr_free_tensor: '%s': [%zu, %zu) overlaps the free block [%zu, %zu) (double "
                   "free, or a range never allocated)",
                   NameOf(tensor), offset, end, hit->offset, hit->offset + hit->size);
    return false;
  }

  const bool merge_prev = prev != nullptr && prev->offset + prev->size == offset;
  const bool merge_next = next != nullptr && next->offset == end;
  if (merge_prev && merge_next) {
    prev->size += padded + next->size;
    memmove(next, next + 1, static_cast<size_t>(alloc->n_free_blocks - i - 1) * sizeof(FreeBlock));
    --alloc->n_free_blocks;
  } else if (merge_prev) {
    prev->size += padded;
  } else if (merge_next) {
    next->offset = offset;
    next->size += padded;
  } else {
    if (alloc->n_free_blocks == GGML_DYN_TALLOCR_MAX_FREE_BLOCKS) {
      ggml_set_error("ggml_dyn_tallocr_free_tensor: '%s': out of free blocks: the list already holds %d (the "
                     "limit) and [%zu, %zu) touches none of them",
                     NameOf(tensor), GGML_DYN_TALLOCR_MAX_FREE_BLOCKS, offset, end);
      return false;
    }
    memmove(&alloc->free_blocks[i + 1], &alloc->free_blocks[i],
            static_cast<size_t>(alloc->n_free_blocks - i) * sizeof(FreeBlock));
    alloc->free_blocks[i] = {offset, padded};
    ++alloc->n_free_blocks;
  }
  return true;
}

size_t ggml_dyn_tallocr_max_size(const ggml_dyn_tallocr* alloc) { return alloc->max_size; }
size_t ggml_dyn_tallocr_get_alignment(const ggml_dyn_tallocr* alloc) { return alloc->alignment; }
int ggml_dyn_tallocr_n_free_blocks(const ggml_dyn_tallocr* alloc) { return alloc->n_free_blocks; }

bool ggml_dyn_tallocr_get_free_block(const ggml_dyn_tallocr* alloc, int i, size_t* offset, size_t* size) {
  if (i < 0 || i >= alloc->n_free_blocks) return false;
  if (offset != nullptr) *offset = alloc->free_blocks[i].offset;
  if (size != nullptr) *size = alloc->free_blocks[i].size;
  return true;
}
