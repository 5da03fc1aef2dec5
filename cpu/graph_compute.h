// The CPU graph executor: runs the nodes of a ggml_cgraph whose tensors already have data (a
// ggml arena or an allocator's buffer), splitting each node's rows across a persistent thread
// pool. Follows ggml's ggml_graph_plan / ggml_graph_compute (ggml/src/ggml-cpu/ggml-cpu.c):
//
//   - ggml_graph_plan measures the scratch ("work") buffer the graph needs; the caller allocates
//     it once and owns it (no hidden allocation: there is no ggml_graph_compute_with_ctx).
//   - ggml_graph_compute runs the nodes in order on cplan->n_threads threads (the caller is
//     thread 0). Each thread computes its share of a node's rows (ggml's ith/nth split) and all
//     threads meet at a barrier before the next node. View ops (NONE, VIEW, RESHAPE, PERMUTE,
//     TRANSPOSE) are skipped: their data aliases their source.
//   - After planning, ggml_graph_compute allocates nothing and creates no threads.
//
// Numerics (per op, see kernels/*.h for the kernels): results are independent of n_threads bit
// for bit, because every output element is computed by exactly one thread with a reduction
// order that does not depend on the split. They do depend on the Highway target (vector width
// changes the order of f32 sums in MUL_MAT, NORM and SOFT_MAX). Two deliberate differences from
// ggml's CPU backend: GELU is computed from its tanh formula (kernels/activations.h), not read
// from an fp16 lookup table; a SOFT_MAX row that is entirely -inf gives 0, not NaN. MUL_MAT with
// F16 a keeps b in f32 (ggml rounds b to f16); with quantized a, b is quantized to Q8_0/Q8_1
// exactly as ggml does.
//
// Usage:
//   struct ggml_threadpool* tp = ggml_threadpool_new(4);
//   struct ggml_cplan plan = ggml_graph_plan(graph, 4, tp);
//   std::vector<uint8_t> work(plan.work_size);            // once; reuse for every compute
//   plan.work_data = work.data();
//   if (ggml_graph_compute(graph, &plan) != GGML_STATUS_SUCCESS) log(ggml_last_error());
#ifndef GGML_WHISPER_CPU_GRAPH_COMPUTE_H_
#define GGML_WHISPER_CPU_GRAPH_COMPUTE_H_

#include <stddef.h>
#include <stdint.h>

#include "cpu/threadpool.h"
#include "ggml/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ggml_status {
  GGML_STATUS_SUCCESS = 0,
  GGML_STATUS_FAILED = -1,   // bad plan or graph, or a node failed: see ggml_last_error()
  GGML_STATUS_ABORTED = 1,   // abort_callback returned true; the remaining nodes did not run
};

// Polled by thread 0 between nodes; returning true stops the computation (ggml's
// ggml_abort_callback, which whisper_full_params.abort_callback is passed to).
typedef bool (*ggml_abort_callback)(void* data);

// Where a computation's time goes, per op and per thread: what ggml's old GGML_PERF counters
// (node->perf_cycles) told, split into each thread's time inside the op and its wait at the
// barrier after it. The wait is the node's load imbalance plus the barrier's own cost, so
// wall time ~ busy + wait of any one thread, and with nth threads the time lost to the split is
// the sum of the waits (tools/bench --profile prints it). Threads ith >= GGML_CPU_PROFILE_MAX_THREADS
// are not recorded. Counters accumulate over ggml_graph_compute calls until the caller zeroes
// the struct; each thread writes only its own slots, so reading them is safe once
// ggml_graph_compute has returned.
#define GGML_CPU_PROFILE_MAX_THREADS 8
struct ggml_cpu_profile {
  int64_t n_computes;             // ggml_graph_compute calls that ran nodes
  int64_t wall_ns;                // their wall time, entry to return (checks and wake-up included)
  int64_t n_nodes[GGML_OP_COUNT];  // nodes run, per op (views and empty nodes are not run)
  int64_t busy_ns[GGML_OP_COUNT][GGML_CPU_PROFILE_MAX_THREADS];  // thread ith inside the op
  int64_t wait_ns[GGML_OP_COUNT][GGML_CPU_PROFILE_MAX_THREADS];  // thread ith at the barrier after it
};

struct ggml_cplan {
  size_t work_size;    // bytes of scratch the graph needs (ggml_graph_plan fills it)
  uint8_t* work_data;  // caller-owned buffer of >= work_size bytes (any alignment); NULL if 0
  int n_threads;       // threads per node, including the caller: 1..threadpool's n_threads
  struct ggml_threadpool* threadpool;  // NULL only when n_threads == 1
  ggml_abort_callback abort_callback;  // optional (NULL from ggml_graph_plan)
  void* abort_callback_data;
  // Optional (NULL from ggml_graph_plan): adds this computation's times to *profile, at the cost
  // of three clock reads per node per thread.
  struct ggml_cpu_profile* profile;
};

// Returns the plan for computing `graph` on n_threads threads of `tp`: work_size is the largest
// scratch any node needs for that thread count (MUL_MAT: b rows converted to the vec_dot type of
// a, i.e. F32 rows or Q8_0/Q8_1 blocks, plus per-thread kernel scratch), work_data is NULL.
// Never fails; the plan is checked by ggml_graph_compute (n_threads < 1 is kept and rejected
// there). The work size depends on the shapes, the thread count and the dispatch target (the
// matmul kernel's blocking), so plan again after ggml_cpu_set_target_limit.
struct ggml_cplan ggml_graph_plan(const struct ggml_cgraph* graph, int n_threads, struct ggml_threadpool* tp);

// Computes every node of `graph` in order (see the top of this file). Returns
// GGML_STATUS_SUCCESS, GGML_STATUS_ABORTED, or GGML_STATUS_FAILED with a message
// (ggml_last_error()) when: graph or cplan is NULL; n_threads is < 1, or > 1 without a pool, or
// more than the pool's threads; work_size or work_data is smaller than this graph needs; a node
// or a source it reads has no data; a node's op, types or strides are not supported (the message
// names the node index, name and op, e.g. "node 3 'kq' (MUL_MAT): ..."); a GET_ROWS index is out
// of range. Nodes are checked before any runs, except GET_ROWS indices (data) and kernel errors,
// after which the earlier nodes' results are written and the rest are not. The pool must not be
// running another graph at the same time.
enum ggml_status ggml_graph_compute(struct ggml_cgraph* graph, struct ggml_cplan* cplan);

#ifdef __cplusplus
}
#endif

#endif  // GGML_WHISPER_CPU_GRAPH_COMPUTE_H_
