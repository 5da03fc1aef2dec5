// ggml_graph_compute throughput on the current best target, by thread count:
//   - NodeOverhead: 256 SCALE nodes on 16 floats: the cost per node of the executor itself
//     (op dispatch + one pool barrier), reported as ns_per_node.
//   - MulMat: one Whisper-tiny encoder projection, F16 W [384, 384] x X [384, 1500], GFLOP/s
//     (compare kernels/matmul_benchmark, which calls the kernel directly).
//   - EncoderBlock: a Whisper-tiny encoder layer (n_state 384, 6 heads, 1500 positions, F16
//     weights: LN, QKV, softmax(QK^T / 8), V, out proj, LN, GELU MLP, residuals), ms per layer.
//
//   bazel run -c opt //cpu:graph_compute_benchmark
#include <math.h>

#include <vector>

#include "benchmark/benchmark.h"
#include "cpu/graph_compute.h"
#include "cpu/threadpool.h"
#include "ggml/ggml.h"
#include "ggml/graph.h"
#include "ggml/ops.h"

namespace {

// Deterministic pseudo-random fill in [-scale, scale).
ggml_tensor* Filled(ggml_context* ctx, ggml_type type, int64_t ne0, int64_t ne1, float scale, uint32_t seed) {
  ggml_tensor* t = ggml_new_tensor_2d(ctx, type, ne0, ne1);
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i1 = 0; i1 < ne1; ++i1) {
    for (int64_t i0 = 0; i0 < ne0; ++i0) {
      s = s * 1664525u + 1013904223u;
      ggml_set_f32_nd(t, i0, i1, 0, 0, scale * (static_cast<float>(s >> 8) / 8388608.0f - 1.0f));
    }
  }
  return t;
}

// Owns a context, a graph, a pool and the work buffer; runs the graph per benchmark iteration.
class Runner {
 public:
  explicit Runner(size_t mem) : ctx_(ggml_init({mem, nullptr, false})), graph_(ggml_new_graph_custom(ctx_, 4096)) {}
  ~Runner() {
    ggml_threadpool_free(tp_);
    ggml_free(ctx_);
  }
  ggml_context* ctx() { return ctx_; }
  ggml_cgraph* graph() { return graph_; }

  bool Plan(int nth) {
    tp_ = ggml_threadpool_new(nth);
    plan_ = ggml_graph_plan(graph_, nth, tp_);
    work_.resize(plan_.work_size);
    plan_.work_data = work_.data();
    return tp_ != nullptr;
  }
  bool Run() { return ggml_graph_compute(graph_, &plan_) == GGML_STATUS_SUCCESS; }

 private:
  ggml_context* ctx_;
  ggml_cgraph* graph_;
  ggml_threadpool* tp_ = nullptr;
  ggml_cplan plan_{};
  std::vector<uint8_t> work_;
};

void RunLoop(benchmark::State& state, Runner& r) {
  if (!r.Plan(static_cast<int>(state.range(0)))) {
    state.SkipWithError(ggml_last_error());
    return;
  }
  for (auto _ : state) {
    if (!r.Run()) {
      state.SkipWithError(ggml_last_error());
      return;
    }
  }
}

void BM_NodeOverhead(benchmark::State& state) {
  constexpr int kNodes = 256;
  Runner r(4 << 20);
  ggml_tensor* x = Filled(r.ctx(), GGML_TYPE_F32, 16, 1, 1.0f, 1);
  for (int i = 0; i < kNodes; ++i) x = ggml_scale(r.ctx(), x, 1.0f);
  ggml_build_forward_expand(r.graph(), x);
  RunLoop(state, r);
  state.counters["ns_per_node"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kNodes * 1e-9,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_NodeOverhead)->Arg(1)->Arg(2)->Arg(4)->UseRealTime();

void BM_MulMat(benchmark::State& state) {
  Runner r(16 << 20);
  ggml_tensor* w = Filled(r.ctx(), GGML_TYPE_F16, 384, 384, 0.05f, 2);
  ggml_tensor* x = Filled(r.ctx(), GGML_TYPE_F32, 384, 1500, 1.0f, 3);
  ggml_build_forward_expand(r.graph(), ggml_mul_mat(r.ctx(), w, x));
  RunLoop(state, r);
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * 384 * 384 * 1500 * state.iterations() * 1e-9,
                                                 benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MulMat)->Arg(1)->Arg(2)->Arg(4)->UseRealTime()->Unit(benchmark::kMillisecond);

// One Whisper-tiny encoder layer (whisper.cpp's non-flash-attention path).
ggml_tensor* EncoderLayer(ggml_context* ctx, ggml_tensor* x) {
  constexpr int64_t S = 384, H = 6, D = S / H, T = 1500;
  uint32_t seed = 10;
  auto linear = [&](ggml_tensor* in, int64_t k, int64_t m) {
    ggml_tensor* y = ggml_mul_mat(ctx, Filled(ctx, GGML_TYPE_F16, k, m, 1.0f / sqrtf(k), seed++), in);
    return ggml_add(ctx, y, Filled(ctx, GGML_TYPE_F32, m, 1, 0.1f, seed++));
  };
  auto norm = [&](ggml_tensor* in) {
    ggml_tensor* w = Filled(ctx, GGML_TYPE_F32, S, 1, 1.0f, seed++);
    ggml_tensor* b = Filled(ctx, GGML_TYPE_F32, S, 1, 0.1f, seed++);
    return ggml_add(ctx, ggml_mul(ctx, ggml_norm(ctx, in, 1e-5f), w), b);
  };
  ggml_tensor* cur = norm(x);
  ggml_tensor* q = ggml_permute(ctx, ggml_reshape_3d(ctx, linear(cur, S, S), D, H, T), 0, 2, 1, 3);
  ggml_tensor* k = ggml_permute(ctx, ggml_reshape_3d(ctx, linear(cur, S, S), D, H, T), 0, 2, 1, 3);
  ggml_tensor* v = ggml_cont(ctx, ggml_permute(ctx, ggml_reshape_3d(ctx, linear(cur, S, S), D, H, T), 1, 2, 0, 3));
  ggml_tensor* kq = ggml_soft_max_ext(ctx, ggml_mul_mat(ctx, k, q), nullptr, 1.0f / sqrtf(D), 0.0f);
  ggml_tensor* kqv = ggml_permute(ctx, ggml_mul_mat(ctx, v, kq), 0, 2, 1, 3);
  cur = ggml_cpy(ctx, kqv, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, S, T));
  ggml_tensor* x1 = ggml_add(ctx, linear(cur, S, S), x);
  cur = ggml_gelu(ctx, linear(norm(x1), S, 4 * S));
  return ggml_add(ctx, linear(cur, 4 * S, S), x1);
}

void BM_EncoderBlock(benchmark::State& state) {
  Runner r(256 << 20);
  ggml_tensor* out = EncoderLayer(r.ctx(), Filled(r.ctx(), GGML_TYPE_F32, 384, 1500, 1.0f, 1));
  if (out == nullptr || !ggml_build_forward_expand(r.graph(), out)) {
    state.SkipWithError(ggml_last_error());
    return;
  }
  RunLoop(state, r);
}
BENCHMARK(BM_EncoderBlock)->Arg(1)->Arg(2)->Arg(4)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
