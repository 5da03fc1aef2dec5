// Internal to the graph executor (cpu/graph_compute.h): the per-op forward functions, their
// checks and their scratch sizes. Not a public API.
//
// Every forward function computes one thread's share of a node (ggml's
// ggml_compute_forward_* with ggml_compute_params): thread ith of nth takes rows
// [ith * ceil(nrows / nth), ...) of the result, or a block of the output for MUL_MAT. They see
// only nodes that CheckNode accepted, allocate nothing, and report data-dependent errors
// (GET_ROWS indices, kernel status) through ReportError.
//
// Files: graph_compute_ops.cc (element-wise, row and data-movement ops), graph_compute_matmul.cc
// (MUL_MAT, GET_ROWS, IM2COL: the ops with a type-dependent kernel or scratch),
// graph_compute_attn.cc (FLASH_ATTN_EXT).
#ifndef GGML_WHISPER_CPU_GRAPH_COMPUTE_OPS_H_
#define GGML_WHISPER_CPU_GRAPH_COMPUTE_OPS_H_

#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "cpu/threadpool.h"
#include "ggml/ggml.h"

namespace ggml_cpu {
namespace exec {

// The first error of a compute, shared by its threads. Whoever sets `failed` first writes
// `message` and then `node_index`; the caller reads the message after the run (the pool's run
// completion orders the accesses). Threads stop after the barrier of node i only when
// node_index <= i: a thread that is already computing node i + 1 may record an error before a
// slower thread has read the flag after barrier i, and both must leave at the same barrier.
struct ComputeError {
  std::atomic<bool> failed{false};
  std::atomic<int> node_index{INT32_MAX};
  char message[512] = {0};
};

// What one thread knows while computing a node.
struct ComputeParams {
  int ith;  // this thread, in [0, nth)
  int nth;
  uint8_t* wdata;  // the plan's work buffer, shared by all threads
  size_t wsize;
  ggml_threadpool* tp;  // for barriers inside a node (NULL when nth == 1)
  ComputeError* error;
  int node_index;  // for messages
};

// Records "node <i> '<name>' (<OP>): <message>" unless an error was already recorded.
void ReportError(const ComputeParams& p, const ggml_tensor* node, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

// A fixed-size message buffer for checks (the success path must not allocate).
struct CheckMessage {
  char text[256] = {0};
  // Formats the message and returns false, so checks read `return msg->Fail(...)`.
  bool Fail(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
};

// True for the ops that compute nothing (their data aliases a source).

// Returns true if the executor supports `node` as built (op, types, shapes, strides, data
// pointers present); otherwise false with the reason in *msg.
bool CheckNode(const ggml_tensor* node, CheckMessage* msg);

// Scratch bytes `node` needs when computed by nth threads (0 for most ops). Only for nodes that
// CheckNode accepted.
size_t NodeWorkSize(const ggml_tensor* node, int nth);

// Computes thread p.ith's share of `node`. Every thread of the run must call it for the same
// node (ops with two phases, MUL_MAT, hit a barrier inside).
void ComputeForward(const ComputeParams& p, ggml_tensor* node);

// ---- Split helpers ----------------------------------------------------------------------------

// Thread ith's range of n items: [ith * per, (ith + 1) * per) clipped to n, per = ceil(n / nth).
inline void SplitRange(int64_t n, int ith, int nth, int64_t* begin, int64_t* end) {
  const int64_t per = (n + nth - 1) / nth;
  *begin = std::min<int64_t>(n, per * ith);
  *end = std::min<int64_t>(n, *begin + per);
}

// Row r of a tensor with ne[1..3] -> (i1, i2, i3).
inline void RowIndex(const int64_t* ne, int64_t r, int64_t* i1, int64_t* i2, int64_t* i3) {
  *i1 = r % ne[1];
  *i2 = (r / ne[1]) % ne[2];
  *i3 = r / (ne[1] * ne[2]);
}

inline char* RowPtr(const ggml_tensor* t, int64_t i1, int64_t i2, int64_t i3) {
  return static_cast<char*>(t->data) + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

// ---- Per-op entry points ------------------------------------------------------------------------

// graph_compute_ops.cc
bool CheckElementwise(const ggml_tensor* node, CheckMessage* msg);
void ForwardAddMul(const ComputeParams& p, ggml_tensor* node);
void ForwardScale(const ComputeParams& p, ggml_tensor* node);
void ForwardNorm(const ComputeParams& p, ggml_tensor* node);
void ForwardUnary(const ComputeParams& p, ggml_tensor* node);
void ForwardSoftMax(const ComputeParams& p, ggml_tensor* node);
void ForwardDiagMaskInf(const ComputeParams& p, ggml_tensor* node);
void ForwardArgmax(const ComputeParams& p, ggml_tensor* node);
void ForwardCopy(const ComputeParams& p, ggml_tensor* node);  // DUP, CONT, CPY
void ForwardConcat(const ComputeParams& p, ggml_tensor* node);
void ForwardPad(const ComputeParams& p, ggml_tensor* node);
void ForwardRepeat(const ComputeParams& p, ggml_tensor* node);

// graph_compute_matmul.cc
bool CheckMulMat(const ggml_tensor* node, CheckMessage* msg);
bool CheckGetRows(const ggml_tensor* node, CheckMessage* msg);
bool CheckIm2Col(const ggml_tensor* node, CheckMessage* msg);
size_t MulMatWorkSizeFor(const ggml_tensor* node, int nth);
void ForwardMulMat(const ComputeParams& p, ggml_tensor* node);
void ForwardGetRows(const ComputeParams& p, ggml_tensor* node);
void ForwardIm2Col(const ComputeParams& p, ggml_tensor* node);

// graph_compute_attn.cc
bool CheckFlashAttn(const ggml_tensor* node, CheckMessage* msg);
size_t FlashAttnWorkSizeFor(const ggml_tensor* node, int nth);
void ForwardFlashAttn(const ComputeParams& p, ggml_tensor* node);

}  // namespace exec
}  // namespace ggml_cpu

#endif  // GGML_WHISPER_CPU_GRAPH_COMPUTE_OPS_H_
