// Test-only: random ggml graphs for the graph allocator's property tests. Each graph mixes
// element-wise ops that ggml_gallocr may run in place (ADD, MUL, SCALE, UNARY, SOFT_MAX,
// RMS_NORM, DIAG_MASK_INF), ops it may not (NORM, MUL_MAT, CONT, REPEAT, PAD, CONCAT), views
// (VIEW at zero and non-zero offsets, RESHAPE, TRANSPOSE, PERMUTE), GGML_OP_CPY into a fresh tensor
// or into an external "cache", INPUT leafs, constant leafs, external weights, and OUTPUT nodes
// (some of them views). The same seed gives the same graph in any pair of fresh contexts.
#ifndef GGML_WHISPER_ALLOC_RANDOM_GRAPH_H_
#define GGML_WHISPER_ALLOC_RANDOM_GRAPH_H_

#include <stdint.h>

#include <vector>

#include "ggml/ggml.h"
#include "ggml/graph.h"

namespace alloc_testing {

struct RandomGraph {
  ggml_cgraph* graph = nullptr;
  std::vector<ggml_tensor*> inputs;     // INPUT leafs (the caller fills them)
  std::vector<ggml_tensor*> constants;  // other leafs of `ctx` without data (filled after allocation)
  std::vector<ggml_tensor*> outputs;    // OUTPUT-flagged tensors, then the graph's last node
  ggml_tensor* cache = nullptr;         // in `wctx`: the external tensor GGML_OP_CPY writes into
};

// Arena bytes `ctx` needs for BuildRandomGraph (metadata of every tensor and the graph).
size_t RandomGraphContextSize();

// Builds a graph of about `n_ops` ops (5..200) from `seed` in `ctx` (no_alloc); weights and the
// cache are created in `wctx` (no_alloc; the caller gives them data, e.g. with
// ggml_backend_alloc_ctx_tensors). Returns false with ggml_last_error() when an op constructor or
// the graph fails (a bug in the generator).
bool BuildRandomGraph(uint64_t seed, int n_ops, ggml_context* ctx, ggml_context* wctx, RandomGraph* out);

// A deterministic value in [-2, 2) for element `i` of tensor number `tensor_id`.
float FillValue(uint64_t seed, int tensor_id, int64_t i);

// Writes FillValue(seed, tensor_id, k) into every element of t (any strides), k = flat index in
// ne order.
void FillTensor(ggml_tensor* t, uint64_t seed, int tensor_id);

// The elements of t (any strides) in ne order, as raw float bits (F32) or fp32 of F16.
std::vector<uint32_t> TensorBits(const ggml_tensor* t);

}  // namespace alloc_testing

#endif  // GGML_WHISPER_ALLOC_RANDOM_GRAPH_H_
