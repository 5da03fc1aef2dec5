// The graph executor (see graph_compute.h): plan, checks, the per-node loop on the pool, and the
// op table. The ops themselves are in graph_compute_ops.cc, graph_compute_matmul.cc and
// graph_compute_attn.cc.
#include "cpu/graph_compute.h"

#include <stdarg.h>
#include <stdio.h>

#include <algorithm>
#include <atomic>
#include <chrono>

#include "cpu/graph_compute_ops.h"
#include "ggml/ops.h"

namespace ggml_cpu {
namespace exec {

void ReportError(const ComputeParams& p, const ggml_tensor* node, const char* fmt, ...) {
  bool expected = false;
  if (!p.error->failed.compare_exchange_strong(expected, true)) return;  // keep the first error
  const int n = snprintf(p.error->message, sizeof(p.error->message), "node %d '%s' (%s): ", p.node_index, node->name,
                         ggml_op_name(node->op));
  if (n < 0 || static_cast<size_t>(n) >= sizeof(p.error->message)) {
    p.error->node_index.store(p.node_index);
    return;
  }
  va_list args;
  va_start(args, fmt);
  vsnprintf(p.error->message + n, sizeof(p.error->message) - static_cast<size_t>(n), fmt, args);
  va_end(args);
  p.error->node_index.store(p.node_index);
}

bool CheckMessage::Fail(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsnprintf(text, sizeof(text), fmt, args);
  va_end(args);
  return false;
}

namespace {

// Types and shapes only (no data pointers): what ggml_graph_plan can check before allocation.
bool CheckOpShapes(const ggml_tensor* node, CheckMessage* msg) {
  if (node->op < 0 || node->op >= GGML_OP_COUNT) return msg->Fail("unknown op %d", static_cast<int>(node->op));
  for (int i = 0; i < ggml_op_n_src(node->op); ++i) {
    if (node->src[i] == nullptr) return msg->Fail("src[%d] is NULL", i);
  }
  switch (node->op) {
    case GGML_OP_MUL_MAT:
      return CheckMulMat(node, msg);
    case GGML_OP_GET_ROWS:
      return CheckGetRows(node, msg);
    case GGML_OP_IM2COL:
      return CheckIm2Col(node, msg);
    case GGML_OP_FLASH_ATTN_EXT:
      return CheckFlashAttn(node, msg);
    default:
      return CheckElementwise(node, msg);
  }
}

// A node with no elements computes nothing (ggml_is_empty), like a view.
bool Skipped(const ggml_tensor* node) { return ggml_op_is_view(node->op) || ggml_nelements(node) == 0; }

}  // namespace

bool CheckNode(const ggml_tensor* node, CheckMessage* msg) {
  if (node->op < 0 || node->op >= GGML_OP_COUNT) return msg->Fail("unknown op %d", static_cast<int>(node->op));
  if (Skipped(node)) return true;
  if (node->data == nullptr) return msg->Fail("result has no data (not allocated)");
  for (int i = 0; i < ggml_op_n_src(node->op); ++i) {
    if (node->src[i] != nullptr && node->src[i]->data == nullptr) {
      return msg->Fail("src[%d] '%s' has no data (not allocated)", i, node->src[i]->name);
    }
  }
  return CheckOpShapes(node, msg);
}

size_t NodeWorkSize(const ggml_tensor* node, int nth) {
  switch (node->op) {
    case GGML_OP_MUL_MAT:
      return MulMatWorkSizeFor(node, nth);
    case GGML_OP_FLASH_ATTN_EXT:
      return FlashAttnWorkSizeFor(node, nth);
    default:
      return 0;
  }
}

void ComputeForward(const ComputeParams& p, ggml_tensor* node) {
  switch (node->op) {
    case GGML_OP_DUP:
    case GGML_OP_CONT:
    case GGML_OP_CPY:
      return ForwardCopy(p, node);
    case GGML_OP_ADD:
    case GGML_OP_MUL:
      return ForwardAddMul(p, node);
    case GGML_OP_SCALE:
      return ForwardScale(p, node);
    case GGML_OP_NORM:
    case GGML_OP_RMS_NORM:
      return ForwardNorm(p, node);
    case GGML_OP_MUL_MAT:
      return ForwardMulMat(p, node);
    case GGML_OP_GET_ROWS:
      return ForwardGetRows(p, node);
    case GGML_OP_DIAG_MASK_INF:
      return ForwardDiagMaskInf(p, node);
    case GGML_OP_SOFT_MAX:
      return ForwardSoftMax(p, node);
    case GGML_OP_IM2COL:
      return ForwardIm2Col(p, node);
    case GGML_OP_CONCAT:
      return ForwardConcat(p, node);
    case GGML_OP_PAD:
      return ForwardPad(p, node);
    case GGML_OP_REPEAT:
      return ForwardRepeat(p, node);
    case GGML_OP_ARGMAX:
      return ForwardArgmax(p, node);
    case GGML_OP_FLASH_ATTN_EXT:
      return ForwardFlashAttn(p, node);
    case GGML_OP_UNARY:
      return ForwardUnary(p, node);
    default:  // view ops never get here; CheckNode rejected the rest
      return;
  }
}

namespace {

// Shared by the threads of one ggml_graph_compute.
struct RunState {
  ggml_cgraph* graph;
  const ggml_cplan* plan;
  ComputeError error;
  std::atomic<int> aborted_at{INT32_MAX};  // index of the node after which thread 0 saw an abort
};

// The work function of the run: every thread walks all nodes; a barrier separates them. After
// the barrier of node i every thread asks whether an error or abort was recorded at a node <= i
// (recorded before that barrier, so all threads see it there; see ComputeError), so all threads
// leave at the same barrier.
int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void RunNodes(void* arg, int ith, int nth) {
  RunState* s = static_cast<RunState*>(arg);
  const ggml_cplan* plan = s->plan;
  ggml_threadpool* tp = nth > 1 ? plan->threadpool : nullptr;
  ggml_cpu_profile* prof = ith < GGML_CPU_PROFILE_MAX_THREADS ? plan->profile : nullptr;
  for (int i = 0; i < s->graph->n_nodes; ++i) {
    ggml_tensor* node = s->graph->nodes[i];
    if (Skipped(node)) continue;
    const ComputeParams p{ith, nth, plan->work_data, plan->work_size, tp, &s->error, i};
    const int64_t t0 = prof != nullptr ? NowNs() : 0;
    ComputeForward(p, node);
    if (ith == 0 && plan->abort_callback != nullptr && plan->abort_callback(plan->abort_callback_data)) {
      s->aborted_at.store(i);
    }
    const int64_t t1 = prof != nullptr ? NowNs() : 0;
    ggml_threadpool_barrier(tp);
    if (prof != nullptr) {
      prof->busy_ns[node->op][ith] += t1 - t0;
      prof->wait_ns[node->op][ith] += NowNs() - t1;
      if (ith == 0) ++prof->n_nodes[node->op];
    }
    if (s->error.node_index.load() <= i || s->aborted_at.load() <= i) break;
  }
}

}  // namespace
}  // namespace exec
}  // namespace ggml_cpu

using ggml_cpu::exec::CheckMessage;

extern "C" ggml_cplan ggml_graph_plan(const ggml_cgraph* graph, int n_threads, ggml_threadpool* tp) {
  ggml_cplan plan{};
  plan.n_threads = n_threads;
  plan.threadpool = tp;
  if (graph == nullptr || n_threads < 1) return plan;
  size_t work = 0;
  for (int i = 0; i < graph->n_nodes; ++i) {
    const ggml_tensor* node = graph->nodes[i];
    CheckMessage msg;
    if (node == nullptr || ggml_cpu::exec::Skipped(node) || !ggml_cpu::exec::CheckOpShapes(node, &msg)) continue;
    work = std::max(work, ggml_cpu::exec::NodeWorkSize(node, n_threads));
  }
  plan.work_size = work;
  return plan;
}

extern "C" ggml_status ggml_graph_compute(ggml_cgraph* graph, ggml_cplan* cplan) {
  if (graph == nullptr || cplan == nullptr) {
    ggml_set_error("ggml_graph_compute: %s is NULL", graph == nullptr ? "graph" : "cplan");
    return GGML_STATUS_FAILED;
  }
  const int64_t t_start = cplan->profile != nullptr ? ggml_cpu::exec::NowNs() : 0;
  const int nth = cplan->n_threads;
  const int pool_threads = ggml_threadpool_get_n_threads(cplan->threadpool);
  if (nth < 1 || (nth > 1 && cplan->threadpool == nullptr) || (cplan->threadpool != nullptr && nth > pool_threads)) {
    ggml_set_error("ggml_graph_compute: n_threads %d needs a thread pool of at least that many threads (pool: %d)", nth,
                   pool_threads);
    return GGML_STATUS_FAILED;
  }
  // Check every node before running any, and measure the work buffer this graph needs now.
  size_t need = 0;
  for (int i = 0; i < graph->n_nodes; ++i) {
    const ggml_tensor* node = graph->nodes[i];
    CheckMessage msg;
    if (node == nullptr) {
      ggml_set_error("ggml_graph_compute: node %d is NULL", i);
      return GGML_STATUS_FAILED;
    }
    if (!ggml_cpu::exec::CheckNode(node, &msg)) {
      ggml_set_error("ggml_graph_compute: node %d '%s' (%s): %s", i, node->name, ggml_op_name(node->op), msg.text);
      return GGML_STATUS_FAILED;
    }
    if (!ggml_cpu::exec::Skipped(node)) need = std::max(need, ggml_cpu::exec::NodeWorkSize(node, nth));
  }
  if (need > cplan->work_size || (need > 0 && cplan->work_data == nullptr)) {
    ggml_set_error(
        "ggml_graph_compute: the graph needs %zu bytes of work buffer with %d threads; cplan has work_size %zu, "
        "work_data %s (call ggml_graph_plan with the same graph and n_threads, after any target change)",
        need, nth, cplan->work_size, cplan->work_data == nullptr ? "NULL" : "set");
    return GGML_STATUS_FAILED;
  }
  ggml_cpu::exec::RunState state;
  state.graph = graph;
  state.plan = cplan;
  if (cplan->threadpool != nullptr) {
    if (!ggml_threadpool_run(cplan->threadpool, nth, ggml_cpu::exec::RunNodes, &state)) {
      return GGML_STATUS_FAILED;  // the pool recorded why (busy)
    }
  } else {
    ggml_cpu::exec::RunNodes(&state, 0, 1);
  }
  if (cplan->profile != nullptr) {
    ++cplan->profile->n_computes;
    cplan->profile->wall_ns += ggml_cpu::exec::NowNs() - t_start;
  }
  if (state.error.failed.load()) {
    ggml_set_error("ggml_graph_compute: %s", state.error.message);
    return GGML_STATUS_FAILED;
  }
  return state.aborted_at.load() != INT32_MAX ? GGML_STATUS_ABORTED : GGML_STATUS_SUCCESS;
}
