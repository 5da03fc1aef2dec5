// Scalar reference evaluator for every op in ggml/ops.h: the oracle that the graph executor
// (cpu/graph_compute.h), the allocator and the Whisper model tests are checked against.
//
// It follows each op's definition in ggml/ops.h (ggml's semantics, ggml/src/ggml-cpu/ops.cpp)
// literally, one element at a time, with no SIMD and no threads:
//   - Every source and the result are addressed through their nb[] strides, so views
//     (permuted, transposed, strided) work for any op, and the result may itself be a strided
//     view (CPY into a KV-cache slice).
//   - Reductions (MUL_MAT dot products, NORM / RMS_NORM moments, SOFT_MAX sums) accumulate in
//     double; every result element is rounded to its type once, at the end.
//   - Element types: F32 and F16 wherever ops.h allows them, I32 indices (GET_ROWS) and results
//     (ARGMAX); the quantized types of kernels/quant_traits.h for a of MUL_MAT and GET_ROWS,
//     dequantized exactly with their to_float. Unary ops are computed from their formulas in
//     double (GELU: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), no fp16 lookup table).
//   - View ops (NONE, RESHAPE, VIEW, PERMUTE, TRANSPOSE) compute nothing: their data already
//     aliases their source.
//   - One deliberate difference from ggml: a SOFT_MAX row whose entries are all -inf (fully
//     masked) gives all 0, as kernels/softmax.h does, where ggml gives NaN.
//   - In place: the ops ggml_gallocr may run in place (ADD, MUL, SCALE, UNARY, DIAG_MASK_INF,
//     SOFT_MAX, RMS_NORM; NORM too) read each source element before writing the result element
//     it gives, and the row ops read the whole row (and its mask row) first, so a result that
//     aliases a source of the same layout is computed as if it did not
//     (alloc/gallocr_property_test.cc relies on this).
//
// It is slow (MUL_MAT is a triple loop) and allocates (a dequantized row), which is fine for an
// oracle. Usage:
//   // tensors of `graph` have data (ggml arena or an allocator buffer); inputs are filled
//   if (!ggml_ref_graph_compute(graph)) fprintf(stderr, "%s\n", ggml_last_error());
#ifndef GGML_WHISPER_CPU_REF_OPS_H_
#define GGML_WHISPER_CPU_REF_OPS_H_

#include <stdbool.h>

#include "ggml/ggml.h"
#include "ggml/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

// Computes node->data from node->src[] according to node->op. Returns false with a message
// (ggml_last_error()) naming the node and op when node, a source, or a needed data pointer is
// NULL, when a type or shape is not one the op accepts (see ggml/ops.h), when a GET_ROWS index
// is outside [0, rows of a), or when the op is unknown. The node is unchanged or partly written
// on failure.
bool ggml_ref_compute_forward(struct ggml_tensor* node);

// Computes graph->nodes[0 .. n_nodes) in order. Returns false at the first failing node, with
// its message.
bool ggml_ref_graph_compute(struct ggml_cgraph* graph);

#ifdef __cplusplus
}
#endif

#endif  // GGML_WHISPER_CPU_REF_OPS_H_
