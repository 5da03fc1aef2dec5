// ggml_gallocr: the graph allocator. It gives every tensor of a graph that has no data its bytes
// in ONE CPU buffer, letting tensors whose lifetimes do not overlap share bytes, and letting
// element-wise ops write over their source (in place). Plan once with the worst-case graph
// (ggml_gallocr_reserve), then place each graph of that shape with ggml_gallocr_alloc_graph,
// which makes no heap allocation when the graph fits what was reserved.
//
// The plan (ggml-alloc.c, ggml_gallocr_alloc_graph_impl; see also
// ../shared/reference/whisper_cpp_facts.md §8), over the graph's order:
//   1. Leafs (op NONE) are allocated first, in order.
//   2. Pass 1 counts, per tensor, its children (uses as a src) and its views (graph tensors with
//      view_src == it); INPUT tensors (and INPUT srcs) are allocated here, before any node, so
//      no node's bytes can overlap an input the caller fills before compute.
//   3. Pass 2, per node: allocate the node, then decrement each src's children. A src whose
//      children and views both reach 0 is freed; a view src instead decrements its view_src's
//      views, and the view_src is freed at 0 children and 0 views.
//   A node is allocated in place of a src (same offset) when its op is one of ggml_op_can_inplace
//   (of the ops here: ADD, MUL, SCALE, DIAG_MASK_INF, SOFT_MAX, RMS_NORM, UNARY; NORM is not in
//   ggml's list) and the src: was allocated by this allocator, is not INPUT/OUTPUT (nor a view
//   of one), has ggml_are_same_layout with the node, has no views and no children left but this
//   node (ggml: exactly 1 child, which rules out ggml_add(x, x)). A src that is a
//   view qualifies when it sits at offset 0 of its view_src, the view_src was allocated here and
//   has no children left and only this one view; the node then takes the view_src's block and
//   returns the part past its own padded size to the free list (ggml's free_extra_space).
//   Everything else gets a best-fit block from a ggml_dyn_tallocr (alloc/dyn_tallocr.h).
//   Views never get bytes of their own: they get ggml_backend_view_init once their source is
//   placed, and keep their view_src alive while they are in use.
//
// Rules for the caller and the executor:
//   - OUTPUT and INPUT tensors are never freed nor written in place: after compute, inputs still
//     hold what the caller wrote and outputs hold the results. (ggml frees inputs after their last
//     use; keeping them costs their bytes and lets a graph be computed again without refilling.)
//   - Tensors that already have data outside this allocator's buffer (weights from
//     ggml_backend_alloc_ctx_tensors, a KV cache, a normal context's arena) are left alone: not
//     placed, not freed, never overwritten in place. Tensors whose data is in this allocator's
//     buffer (placed by an earlier alloc_graph) are placed again: so a result that a later graph
//     must read (the encoder output for the decoder steps) has to live in another allocator's
//     buffer, or be copied out, before this allocator places another graph.
//   - A node that is not consumed and not OUTPUT keeps its bytes to the end (nothing frees it).
//   - The executor must compute the in-place-capable ops so that dst may alias a src of the same
//     layout (element i read before element i is written; row ops read their row first).
//   - Compute the nodes in graph order: liveness is derived from that order.
//   - Every leaf without data (op NONE: caller-filled, or a ggml_cpy destination made with
//     ggml_new_tensor inside the graph) is placed before node 0 and holds its bytes until its last
//     use, as in ggml. A cast such as the encoder's ggml_cpy(k, ggml_new_tensor_3d(ctx, F16, ...))
//     therefore costs its bytes from the start of the graph (2.2 MiB per Whisper tiny layer).
//   - Not thread-safe: one allocator per thread, or external locking.
//
// Differences from ggml: one buffer (no per-node buffer ids or backends); a node that uses its
// src twice (x + x) may run in place; alloc_graph plans the graph it is given every time (ggml
// replays the offsets stored at reserve when the node and leaf counts match), so a different graph
// with the same counts is still placed correctly; inputs are kept to the end; errors return false
// with a message (ggml_last_error()) where ggml aborts.
//
// Usage:
//   ggml_gallocr_t galloc = ggml_gallocr_new();
//   if (!ggml_gallocr_reserve(galloc, worst_case_graph)) ...;   // sizes the buffer once
//   ggml_gallocr_set_allow_realloc(galloc, false);               // optional: never grow again
//   for (each step) {
//     build `graph` (same shape, or smaller);
//     if (!ggml_gallocr_alloc_graph(galloc, graph)) fprintf(stderr, "%s\n", ggml_last_error());
//     fill inputs; compute; read outputs;
//   }
//   ggml_gallocr_free(galloc);
#ifndef GGML_WHISPER_ALLOC_GALLOCR_H_
#define GGML_WHISPER_ALLOC_GALLOCR_H_

#include <stddef.h>

#include "alloc/buffer.h"
#include "ggml/ggml.h"
#include "ggml/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ggml_gallocr* ggml_gallocr_t;

// An allocator with no buffer yet; realloc allowed. NULL with a message when out of memory.
ggml_gallocr_t ggml_gallocr_new(void);
// An allocator that places graphs in `buffer`, owned by the caller (it must outlive the allocator)
// and grown in place (ggml_backend_cpu_buffer_realloc) like an owned one when a reserve needs more.
// Several allocators may share one buffer for graphs that never run at the same time (a Whisper
// state's encoder, cross and decoder graphs: one buffer of the largest peak instead of their sum).
// The bytes then belong to whichever graph was placed last: call ggml_gallocr_alloc_graph on a
// graph before each compute, after any other allocator of the buffer placed or reserved (a reserve
// that grows the buffer moves it), and copy out results another graph must read. A tensor already
// in the shared buffer counts as the graph's own and is placed again. Not in ggml (ggml-alloc.c
// has one buffer per allocator and backend). NULL with a message for a NULL buffer or out of
// memory.
ggml_gallocr_t ggml_gallocr_new_with_buffer(ggml_backend_buffer_t buffer);
// Frees the allocator and its buffer if it owns it (not ggml_gallocr_new_with_buffer's): tensors
// placed in it dangle from here on. NULL is a no-op.
void ggml_gallocr_free(ggml_gallocr_t galloc);

// true (the default): ggml_gallocr_alloc_graph re-reserves (grows the buffer and the tables, heap
// allocations) when a graph does not fit. false: it fails instead, with a message naming the
// bytes or tensors needed and reserved, and places nothing.
void ggml_gallocr_set_allow_realloc(ggml_gallocr_t galloc, bool allow);

// Plans `graph` without placing anything: sizes the tensor table for its n_nodes + n_leafs and
// grows the buffer to the plan's peak if that is larger (buffers never shrink, and the buffer
// handle stays the same when it grows). Tensors placed earlier in this buffer must be placed
// again (alloc_graph) after a reserve that grew it. Returns false with a message when galloc or
// graph is NULL, a tensor's src or view_src is not in the graph, the plan needs more than
// GGML_DYN_TALLOCR_MAX_FREE_BLOCKS free blocks, or an allocation fails.
bool ggml_gallocr_reserve(ggml_gallocr_t galloc, struct ggml_cgraph* graph);

// Plans `graph` and places it: every leaf and node without data elsewhere gets data in the
// buffer (aligned to GGML_BACKEND_CPU_ALIGNMENT), every view gets ggml_backend_view_init. Makes
// no heap allocation when the graph has at most the reserved number of tensors and its peak fits
// the buffer. Otherwise it re-reserves if allowed, or returns false with a message (tensors
// untouched). Also false for the errors of ggml_gallocr_reserve.
bool ggml_gallocr_alloc_graph(ggml_gallocr_t galloc, struct ggml_cgraph* graph);

// The largest peak, in bytes, of the graphs this allocator has planned (reserve or alloc_graph):
// what a graph of its own needs, whatever the size of a shared buffer. 0 before the first plan.
size_t ggml_gallocr_get_max_plan_size(ggml_gallocr_t galloc);
// Bytes of buffer `buffer_id` (only 0 exists), 0 before the first reserve or for another id.
size_t ggml_gallocr_get_buffer_size(ggml_gallocr_t galloc, int buffer_id);
// The buffer (only id 0), NULL before the first reserve or for another id. Owned by galloc unless
// it was given to ggml_gallocr_new_with_buffer.
ggml_backend_buffer_t ggml_gallocr_get_buffer(ggml_gallocr_t galloc, int buffer_id);

#ifdef __cplusplus
}
#endif

#endif  // GGML_WHISPER_ALLOC_GALLOCR_H_
