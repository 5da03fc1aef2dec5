#include "tools/gate/gate_graphs.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ggml/fp16.h"
#include "ggml/ops.h"
#include "kernels/quant_ref.h"

namespace gate {
namespace {

constexpr int64_t kState = 384;  // Whisper tiny n_audio_state
constexpr int64_t kHeads = 6;    // n_audio_head
constexpr int64_t kMlp = 4 * kState;
constexpr int64_t kMaxCtx = 1500;

absl::Status GgmlError(const char* what) {
  return absl::InternalError(absl::StrCat("gate: ", what, ": ", ggml_last_error()));
}

// Fixed pseudo-random values in [-scale, scale): a 32-bit LCG (Numerical Recipes constants)
// seeded per tensor, so every build of the gate sees identical inputs.
class Lcg {
 public:
  explicit Lcg(uint32_t seed) : s_(seed * 2654435761u + 1u) {}
  float Next(float scale) {
    s_ = s_ * 1664525u + 1013904223u;
    return scale * (static_cast<float>(s_ >> 8) / 8388608.0f - 1.0f);
  }

 private:
  uint32_t s_;
};

// Builds tensors with filled data in one context. Returns nullptr (ggml_last_error() set) when
// the arena is full.
class Filler {
 public:
  explicit Filler(ggml_context* ctx) : ctx_(ctx) {}

  // F32 or F16 ne = [ne0, ne1], or Q8_0 (ne0 a multiple of 32) quantized from F32 values.
  ggml_tensor* Tensor(ggml_type type, int64_t ne0, int64_t ne1, float scale) {
    ggml_tensor* t = ggml_new_tensor_2d(ctx_, type, ne0, ne1);
    if (t == nullptr) return nullptr;
    Lcg rng(++seed_);
    std::vector<float> row(static_cast<size_t>(ne0));
    for (int64_t i1 = 0; i1 < ne1; ++i1) {
      for (float& v : row) v = rng.Next(scale);
      char* dst = static_cast<char*>(t->data) + i1 * t->nb[1];
      if (type == GGML_TYPE_F32) {
        std::memcpy(dst, row.data(), row.size() * sizeof(float));
      } else if (type == GGML_TYPE_F16) {
        auto* h = reinterpret_cast<ggml_fp16_t*>(dst);
        for (int64_t i0 = 0; i0 < ne0; ++i0) h[i0] = ggml_fp32_to_fp16(row[i0]);
      } else {
        ggml_cpu::quantize_row_q8_0_ref(row.data(), reinterpret_cast<ggml_cpu::block_q8_0*>(dst),
                                        ne0);
      }
    }
    return t;
  }

 private:
  ggml_context* ctx_;
  uint32_t seed_ = 0;
};

// y = W x + b, W F16 ne = [k, m], b F32 ne = [m, 1]; nullptr on error.
ggml_tensor* Linear(ggml_context* ctx, Filler& f, ggml_tensor* x, int64_t k, int64_t m, bool bias) {
  ggml_tensor* w = f.Tensor(GGML_TYPE_F16, k, m, 1.0f / std::sqrt(static_cast<float>(k)));
  if (w == nullptr) return nullptr;
  ggml_tensor* y = ggml_mul_mat(ctx, w, x);
  if (y == nullptr || !bias) return y;
  ggml_tensor* b = f.Tensor(GGML_TYPE_F32, m, 1, 0.1f);
  return b == nullptr ? nullptr : ggml_add(ctx, y, b);
}

// LayerNorm over ne0 with weight and bias ne = [kState, 1].
ggml_tensor* LayerNorm(ggml_context* ctx, Filler& f, ggml_tensor* x) {
  ggml_tensor* g = f.Tensor(GGML_TYPE_F32, kState, 1, 1.0f);
  ggml_tensor* b = f.Tensor(GGML_TYPE_F32, kState, 1, 0.1f);
  ggml_tensor* n = ggml_norm(ctx, x, 1e-5f);
  if (g == nullptr || b == nullptr || n == nullptr) return nullptr;
  ggml_tensor* scaled = ggml_mul(ctx, n, g);
  return scaled == nullptr ? nullptr : ggml_add(ctx, scaled, b);
}

// Splits y ne = [kState, T] into heads: [D, H, T] permuted by (p0, p1, p2, 3).
ggml_tensor* Heads(ggml_context* ctx, ggml_tensor* y, int64_t n_ctx, int p0, int p1, int p2) {
  if (y == nullptr) return nullptr;
  ggml_tensor* r = ggml_reshape_3d(ctx, y, kState / kHeads, kHeads, n_ctx);
  return r == nullptr ? nullptr : ggml_permute(ctx, r, p0, p1, p2, 3);
}

ggml_tensor* EncoderLayer(ggml_context* ctx, Filler& f, ggml_tensor* x, int64_t n_ctx) {
  const int64_t d = kState / kHeads;
  ggml_tensor* cur = LayerNorm(ctx, f, x);
  if (cur == nullptr) return nullptr;
  ggml_tensor* q =
      Heads(ctx, Linear(ctx, f, cur, kState, kState, true), n_ctx, 0, 2, 1);  // [D,T,H]
  ggml_tensor* k = Heads(ctx, Linear(ctx, f, cur, kState, kState, false), n_ctx, 0, 2, 1);
  ggml_tensor* v =
      Heads(ctx, Linear(ctx, f, cur, kState, kState, true), n_ctx, 1, 2, 0);  // [T,D,H]
  if (q == nullptr || k == nullptr || v == nullptr) return nullptr;
  v = ggml_cont(ctx, v);
  ggml_tensor* kq = ggml_mul_mat(ctx, k, q);  // [T_k, T_q, H]
  if (v == nullptr || kq == nullptr) return nullptr;
  kq = ggml_soft_max_ext(ctx, kq, nullptr, 1.0f / std::sqrt(static_cast<float>(d)), 0.0f);
  ggml_tensor* kqv = kq == nullptr ? nullptr : ggml_mul_mat(ctx, v, kq);  // [D, T_q, H]
  if (kqv == nullptr) return nullptr;
  ggml_tensor* merged = ggml_permute(ctx, kqv, 0, 2, 1, 3);  // [D, H, T]
  ggml_tensor* flat = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, kState, n_ctx);
  if (merged == nullptr || flat == nullptr) return nullptr;
  cur = ggml_cpy(ctx, merged, flat);
  cur = cur == nullptr ? nullptr : Linear(ctx, f, cur, kState, kState, true);
  ggml_tensor* x1 = cur == nullptr ? nullptr : ggml_add(ctx, cur, x);
  if (x1 == nullptr) return nullptr;
  cur = LayerNorm(ctx, f, x1);
  cur = cur == nullptr ? nullptr : Linear(ctx, f, cur, kState, kMlp, true);
  cur = cur == nullptr ? nullptr : ggml_gelu(ctx, cur);
  cur = cur == nullptr ? nullptr : Linear(ctx, f, cur, kMlp, kState, true);
  return cur == nullptr ? nullptr : ggml_add(ctx, cur, x1);
}

}  // namespace

const char* WorkloadName(Workload w) {
  switch (w) {
    case Workload::kMulMatF16:
      return "MulMatF16";
    case Workload::kMulMatQ8_0:
      return "MulMatQ8_0";
    case Workload::kSoftmax:
      return "Softmax";
    case Workload::kEncoderLayer:
      return "EncoderLayer";
  }
  return "?";
}

double WorkloadFlops(Workload w, int64_t n_ctx) {
  const double t = static_cast<double>(n_ctx), s = kState, m = kMlp;
  switch (w) {
    case Workload::kMulMatF16:
      return 2.0 * s * s * t;
    case Workload::kMulMatQ8_0:
      return 2.0 * s * m * t;
    case Workload::kSoftmax:
      return 0.0;
    case Workload::kEncoderLayer:
      return 2.0 * t * (4 * s * s + 2 * s * m) + 4.0 * t * t * s;
  }
  return 0.0;
}

absl::StatusOr<std::unique_ptr<GateGraph>> GateGraph::Create(Workload w, int64_t n_ctx,
                                                             int n_threads) {
  if (n_ctx < 1 || n_ctx > kMaxCtx) {
    return absl::InvalidArgumentError(
        absl::StrCat("gate: n_ctx ", n_ctx, " is not in [1, ", kMaxCtx, "]"));
  }
  if (n_threads < 1 || n_threads > GGML_THREADPOOL_MAX_THREADS) {
    return absl::InvalidArgumentError(absl::StrCat("gate: n_threads ", n_threads, " is not in [1, ",
                                                   GGML_THREADPOOL_MAX_THREADS, "]"));
  }
  std::unique_ptr<GateGraph> g(new GateGraph());
  // Weights (< 4 MB), ~40 activations of up to [kMlp, n_ctx] F32, 3 score tensors
  // [n_ctx, n_ctx, kHeads] F32, and the metadata.
  const size_t mem = (16u << 20) + static_cast<size_t>(n_ctx) * kMlp * 4 * 48 +
                     static_cast<size_t>(n_ctx) * n_ctx * kHeads * 4 * 3;
  g->ctx_ = ggml_init({mem, nullptr, false});
  if (g->ctx_ == nullptr) return GgmlError("ggml_init");
  g->graph_ = ggml_new_graph_custom(g->ctx_, 256);
  if (g->graph_ == nullptr) return GgmlError("ggml_new_graph_custom");
  Filler f(g->ctx_);
  ggml_context* ctx = g->ctx_;
  ggml_tensor* x = f.Tensor(GGML_TYPE_F32, kState, n_ctx, 1.0f);
  if (x == nullptr) return GgmlError("input");
  switch (w) {
    case Workload::kMulMatF16: {
      ggml_tensor* a = f.Tensor(GGML_TYPE_F16, kState, kState, 0.05f);
      g->out_ = a == nullptr ? nullptr : ggml_mul_mat(ctx, a, x);
      break;
    }
    case Workload::kMulMatQ8_0: {
      ggml_tensor* a = f.Tensor(GGML_TYPE_Q8_0, kState, kMlp, 0.05f);
      g->out_ = a == nullptr ? nullptr : ggml_mul_mat(ctx, a, x);
      break;
    }
    case Workload::kSoftmax: {
      ggml_tensor* s = f.Tensor(GGML_TYPE_F32, n_ctx, kHeads * n_ctx, 8.0f);
      g->out_ = s == nullptr ? nullptr : ggml_soft_max_ext(ctx, s, nullptr, 0.125f, 0.0f);
      break;
    }
    case Workload::kEncoderLayer:
      g->out_ = EncoderLayer(ctx, f, x, n_ctx);
      break;
  }
  if (g->out_ == nullptr) return GgmlError(WorkloadName(w));
  if (!ggml_build_forward_expand(g->graph_, g->out_)) return GgmlError("ggml_build_forward_expand");
  if (n_threads > 1) {
    g->pool_ = ggml_threadpool_new(n_threads);
    if (g->pool_ == nullptr) return GgmlError("ggml_threadpool_new");
  }
  g->plan_ = ggml_graph_plan(g->graph_, n_threads, g->pool_);
  g->work_.resize(g->plan_.work_size);
  g->plan_.work_data = g->work_.empty() ? nullptr : g->work_.data();
  return g;
}

GateGraph::~GateGraph() {
  ggml_threadpool_free(pool_);
  ggml_free(ctx_);
}

absl::Status GateGraph::Compute() {
  if (ggml_graph_compute(graph_, &plan_) != GGML_STATUS_SUCCESS) {
    return GgmlError("ggml_graph_compute");
  }
  return absl::OkStatus();
}

double GateGraph::OutputChecksum() const {
  double sum = 0.0;
  const int64_t n0 = out_->ne[0], n1 = ggml_nrows(out_);
  for (int64_t i1 = 0; i1 < n1; ++i1) {
    const float* row =
        reinterpret_cast<const float*>(static_cast<const char*>(out_->data) + i1 * out_->nb[1]);
    for (int64_t i0 = 0; i0 < n0; ++i0) sum += row[i0];
  }
  return sum;
}

}  // namespace gate
