// Test-only: lifetimes of a graph's tensors under in-order execution, computed independently of
// ggml_gallocr, to check a placement and to measure how close it is to optimal.
//
// A tensor "owns bytes" when it is not a view and it is in the allocation under test (data NULL
// before allocation, or data in `buffer` after). Its life is the closed step interval
// [first, last] over node indices: first = -1 for leafs and INPUT tensors (they exist before
// node 0), else its node index; last = the last node that reads it (as a src, or through a view
// used as a src) or writes it (a view node of it, e.g. GGML_OP_CPY), or n_nodes (the end) for
// INPUT/OUTPUT tensors (or tensors with an INPUT/OUTPUT view) and for tensors nothing reads
// (results).
//
// A placement is valid when any two tensors whose lives overlap have disjoint bytes, except the
// in-place case: node i, of an in-place-capable op, has exactly the data of a src (or a view
// src) whose owner's life ends at i.
#ifndef GGML_WHISPER_ALLOC_GRAPH_LIVENESS_H_
#define GGML_WHISPER_ALLOC_GRAPH_LIVENESS_H_

#include <stddef.h>

#include <string>
#include <vector>

#include "alloc/buffer.h"
#include "ggml/ggml.h"
#include "ggml/graph.h"

namespace alloc_testing {

struct TensorLife {
  const ggml_tensor* tensor;
  int first;    // -1: before node 0
  int last;     // n_nodes: to the end
  size_t size;  // ggml_nbytes
};

// The lives of the tensors of `graph` that own bytes (see above), in graph order (leafs, then
// nodes). `buffer` may be NULL before allocation.
std::vector<TensorLife> ComputeLives(const ggml_cgraph* graph, ggml_backend_buffer_t buffer);

// Sum over the lives of PAD(size, alignment): the bytes of an allocator that never reuses.
size_t SumOfSizes(const std::vector<TensorLife>& lives, size_t alignment);

// A lower bound on the buffer size of any valid placement with alignment-aligned offsets: the
// maximum over steps i of the padded bytes of all tensors live at i, node i itself left out when
// it may share a src's bytes (in-place op, a same-layout src whose owner's life ends at i).
size_t LiveBytesLowerBound(const ggml_cgraph* graph, const std::vector<TensorLife>& lives, size_t alignment);

// Checks an allocated graph: every owner's data is inside `buffer` and aligned to its alignment,
// every view's data is view_src->data + view_offs, and overlapping lives have disjoint bytes
// (in-place excepted). Returns "" or a description of the first violation.
std::string CheckPlacement(const ggml_cgraph* graph, const std::vector<TensorLife>& lives,
                           ggml_backend_buffer_t buffer);

// True for the ops ggml_gallocr may run in place (ggml's ggml_op_can_inplace, restricted to the
// ops of ggml/ops.h), stated here a second time for the checks.
bool OpCanInplace(ggml_op op);

}  // namespace alloc_testing

#endif  // GGML_WHISPER_ALLOC_GRAPH_LIVENESS_H_
