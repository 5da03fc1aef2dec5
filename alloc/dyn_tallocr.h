// ggml_dyn_tallocr: a best-fit allocator over byte OFFSETS (it owns no memory). The graph
// allocator (alloc/gallocr.h) runs it over a graph to find each tensor's offset and the peak,
// then places the tensors in one buffer of that peak size.
//
// Follows ggml's ggml_dyn_tallocr (ggml/src/ggml-alloc.c):
//   - The free space is a list of at most GGML_DYN_TALLOCR_MAX_FREE_BLOCKS blocks sorted by
//     offset. The last block starts at the high end of everything ever handed out and is
//     unbounded (it reaches GGML_DYN_TALLOCR_MAX_OFFSET).
//   - alloc pads the size to the alignment and takes the best fit: the smallest free block that
//     is large enough, searched over every block except the last (ties: the lowest offset; ggml
//     takes the highest). Only when none fits does it carve from the last block, which raises the
//     high-water mark. The allocation is cut from the front of the block; an emptied block is
//     removed.
//   - free merges the range with the free block that ends at its start and/or the one that
//     starts at its end, so adjacent frees coalesce whatever their order; otherwise it inserts a
//     new block.
//   - max_size: the high-water mark, max over allocations of offset + padded size. free never
//     lowers it; reset does.
// Differences: ggml's current version is multi-chunk (up to 16 chunks, for backends with a
// maximum buffer size); this one is a single chunk, as a CPU buffer has no size limit. Where ggml
// asserts (out of free blocks, a double free) these functions return false with a message
// (ggml_last_error()) and leave the allocator unchanged.
//
// Usage:
//   struct ggml_dyn_tallocr* a = ggml_dyn_tallocr_new(64);
//   size_t off_x, off_y;
//   ggml_dyn_tallocr_alloc(a, 1000, x, &off_x);          // off_x = 0 (1024 bytes used)
//   ggml_dyn_tallocr_alloc(a, 100, y, &off_y);           // off_y = 1024
//   ggml_dyn_tallocr_free_tensor(a, off_x, 1000, x);     // [0, 1024) free again
//   size_t peak = ggml_dyn_tallocr_max_size(a);          // 1152
//   ggml_dyn_tallocr_free(a);
#ifndef GGML_WHISPER_ALLOC_DYN_TALLOCR_H_
#define GGML_WHISPER_ALLOC_DYN_TALLOCR_H_

#include <stddef.h>
#include <stdint.h>

#include "ggml/ggml.h"

#ifdef __cplusplus
extern "C" {
#endif

// Most free blocks the list holds, the last (unbounded) block included. ggml's MAX_FREE_BLOCKS.
#define GGML_DYN_TALLOCR_MAX_FREE_BLOCKS 256
// End of the offset space (bytes): SIZE_MAX / 2, as ggml sizes its last chunk.
#define GGML_DYN_TALLOCR_MAX_OFFSET (SIZE_MAX / 2)

struct ggml_dyn_tallocr;

// An empty allocator (one free block [0, MAX_OFFSET) rounded down to the alignment, max_size 0)
// whose offsets and sizes are multiples of `alignment` bytes. Returns NULL with a message when
// alignment is not a power of two or the allocation of the ~4 KiB state fails.
struct ggml_dyn_tallocr* ggml_dyn_tallocr_new(size_t alignment);
// NULL is a no-op.
void ggml_dyn_tallocr_free(struct ggml_dyn_tallocr* alloc);
// Back to the state of ggml_dyn_tallocr_new (max_size 0).
void ggml_dyn_tallocr_reset(struct ggml_dyn_tallocr* alloc);

// Reserves PAD(size, alignment) bytes (a 0-byte request reserves one alignment unit, so that
// every live allocation has its own offset) and stores their offset in *offset. `tensor` is only
// used to name it in messages and may be NULL. Returns false with a message, *offset and the
// allocator unchanged, when alloc/offset is NULL or the request exceeds the free space left below
// GGML_DYN_TALLOCR_MAX_OFFSET.
bool ggml_dyn_tallocr_alloc(struct ggml_dyn_tallocr* alloc, size_t size, const struct ggml_tensor* tensor,
                            size_t* offset);
// Returns the PAD(size, alignment) bytes at `offset` (as passed to and returned by alloc) to the
// free list, merging with adjacent free blocks. Returns false with a message, the allocator
// unchanged, when offset is not a multiple of the alignment, when the range overlaps free space
// (a double free, or a range never handed out), or when the range touches no free block and the
// list already holds GGML_DYN_TALLOCR_MAX_FREE_BLOCKS blocks (too fragmented).
bool ggml_dyn_tallocr_free_tensor(struct ggml_dyn_tallocr* alloc, size_t offset, size_t size,
                                  const struct ggml_tensor* tensor);

// The high-water mark in bytes: the buffer size that holds every allocation made since the last
// reset.
size_t ggml_dyn_tallocr_max_size(const struct ggml_dyn_tallocr* alloc);
size_t ggml_dyn_tallocr_get_alignment(const struct ggml_dyn_tallocr* alloc);

// Inspection, for tests and debugging: the number of free blocks (>= 1: the last block is always
// there) and free block i in offset order (the last one's size reaches MAX_OFFSET). false when i
// is out of range.
int ggml_dyn_tallocr_n_free_blocks(const struct ggml_dyn_tallocr* alloc);
bool ggml_dyn_tallocr_get_free_block(const struct ggml_dyn_tallocr* alloc, int i, size_t* offset, size_t* size);

#ifdef __cplusplus
}
#endif

#endif  // GGML_WHISPER_ALLOC_DYN_TALLOCR_H_
