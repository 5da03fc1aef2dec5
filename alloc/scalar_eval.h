// Test-only: a scalar evaluator of ggml graphs (ggml's op semantics, plain loops, any strides),
// independent of kernels/. Used to check that a graph computes the same bits whatever its
// allocation. Element-wise ops read element i before writing element i and row ops (SOFT_MAX,
// NORM, RMS_NORM) read their whole row first, so a dst that aliases a same-layout src (an in-place
// placement by ggml_gallocr) is computed correctly.
#ifndef GGML_WHISPER_ALLOC_SCALAR_EVAL_H_
#define GGML_WHISPER_ALLOC_SCALAR_EVAL_H_

#include <string>

#include "ggml/ggml.h"
#include "ggml/graph.h"

namespace alloc_testing {

// Computes graph->nodes in order. Supports F32 tensors (F16 as a CPY destination) and the ops
// ADD, MUL (broadcast b), SCALE, UNARY (GELU tanh, GELU_ERF, SILU), NORM, RMS_NORM, SOFT_MAX
// (scale, optional mask), DIAG_MASK_INF, MUL_MAT (F32, a broadcast over b's dims 2 and 3), CONT,
// CPY, REPEAT, PAD, CONCAT, and the views (VIEW, RESHAPE, PERMUTE, TRANSPOSE: nothing to do).
// Returns "" or the name of the first unsupported op or type.
std::string EvalGraph(ggml_cgraph* graph);

}  // namespace alloc_testing

#endif  // GGML_WHISPER_ALLOC_SCALAR_EVAL_H_
