// The regression gate's workloads: small, fixed ggml graphs with deterministic inputs that
// exercise the hot paths of a Whisper forward pass through the public API only (ggml/ops.h for the
// graph, cpu/graph_compute.h for the executor). Timed by //tools/gate:gate_benchmark and
// counted (instructions, under callgrind) by //tools/gate:gate_workload.
//
// The gate builds these sources against two commits of the library (it copies tools/gate/ into
// the baseline checkout), so they use only APIs that have been stable since the graph executor
// landed: ggml_init, ggml_new_tensor_2d, the op constructors, ggml_graph_plan/_compute.
//
// Workloads (n_ctx = number of positions, the ne1 of the activations; Whisper tiny sizes):
//   kMulMatF16    F16 W ne = [384, 384]  x  F32 X ne = [384, n_ctx]      (an attention projection)
//   kMulMatQ8_0   Q8_0 W ne = [384, 1536] x F32 X ne = [384, n_ctx]      (fc1 of a Q8_0 model)
//   kSoftmax      soft_max_ext(scale 1/8) over F32 ne = [n_ctx, 6 * n_ctx] (one layer's scores)
//   kEncoderLayer a Whisper encoder block (n_state 384, 6 heads, F16 weights, n_ctx positions):
//                 LN, Q/K/V, softmax(K^T Q / 8), V, out proj, residual, LN, GELU MLP, residual
//                 (whisper.cpp whisper_build_graph_encoder, the non-flash-attention path).
#ifndef GGML_WHISPER_TOOLS_GATE_GATE_GRAPHS_H_
#define GGML_WHISPER_TOOLS_GATE_GATE_GRAPHS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cpu/graph_compute.h"
#include "cpu/threadpool.h"
#include "ggml/ggml.h"
#include "ggml/graph.h"

namespace gate {

enum class Workload { kMulMatF16, kMulMatQ8_0, kSoftmax, kEncoderLayer };

// "MulMatF16", "MulMatQ8_0", "Softmax", "EncoderLayer".
const char* WorkloadName(Workload w);

// Floating-point operations of one Compute() (2 per multiply-add; softmax counts 0), for
// GFLOP/s counters.
double WorkloadFlops(Workload w, int64_t n_ctx);

// One workload: its own context (weights and inputs filled once from a fixed LCG seed), graph,
// plan and work buffer. Compute() runs the graph; nothing is allocated after Create().
class GateGraph {
 public:
  // Builds workload `w` for n_ctx positions (n_ctx in [1, 4096]) on n_threads threads (1: no
  // pool). Errors: InvalidArgument for n_ctx or n_threads out of range; Internal with
  // ggml_last_error() when a tensor, op or the thread pool cannot be made.
  static absl::StatusOr<std::unique_ptr<GateGraph>> Create(Workload w, int64_t n_ctx,
                                                           int n_threads);
  ~GateGraph();
  GateGraph(const GateGraph&) = delete;
  GateGraph& operator=(const GateGraph&) = delete;

  // Computes the graph. Errors: Internal with ggml_last_error() if the executor fails.
  absl::Status Compute();

  // Sum of the output's elements (F32, 2-D, contiguous rows) in double: keeps the work
  // observable and lets runs be compared.
  double OutputChecksum() const;

  // For tests: the graph (to recompute it with cpu/ref_ops.h) and its output.
  ggml_cgraph* graph() { return graph_; }
  const ggml_tensor* output() const { return out_; }

 private:
  GateGraph() = default;

  ggml_context* ctx_ = nullptr;
  ggml_cgraph* graph_ = nullptr;
  ggml_tensor* out_ = nullptr;
  ggml_threadpool* pool_ = nullptr;
  ggml_cplan plan_{};
  std::vector<uint8_t> work_;
};

}  // namespace gate

#endif  // GGML_WHISPER_TOOLS_GATE_GATE_GRAPHS_H_
