// ggml_gallocr on Whisper-shaped graphs: time of ggml_gallocr_reserve and ggml_gallocr_alloc_graph
// (the per-step cost in a transcription loop), nodes placed per microsecond, and memory: the
// buffer size against the sum of all tensor sizes (an allocator that never reuses) and the
// live-bytes lower bound (alloc/graph_liveness.h), as counters in MiB.
//
//   bazel run -c opt //alloc:gallocr_benchmark
#include <memory>

#include "alloc/buffer.h"
#include "alloc/gallocr.h"
#include "alloc/graph_liveness.h"
#include "alloc/whisper_like_graphs.h"
#include "benchmark/benchmark.h"
#include "ggml/ggml.h"

namespace alloc_testing {
namespace {

enum GraphKind { kEncoder, kDecoderStep };

// One model and graph per benchmark run: args are (kind, n_layer, n_past).
struct Setup {
  explicit Setup(const benchmark::State& state) {
    WhisperDims dims;
    kind = static_cast<GraphKind>(state.range(0));
    dims.n_audio_layer = dims.n_text_layer = static_cast<int>(state.range(1));
    model = WhisperLikeModel::Create(dims);
    ggml_init_params params = {WhisperLikeModel::GraphContextSize(), nullptr, true};
    ctx = ggml_init(params);
    galloc = ggml_gallocr_new();
    graph = Build();
  }
  ~Setup() {
    ggml_gallocr_free(galloc);
    ggml_free(ctx);
  }
  ggml_cgraph* Build() {
    if (model == nullptr) return nullptr;
    return kind == kEncoder ? model->BuildEncoder(ctx) : model->BuildDecoder(ctx, 1, 447);
  }
  // Buffer, sum of sizes and lower bound (MiB) of the placed graph.
  void SetMemoryCounters(benchmark::State& state) {
    ggml_backend_buffer_t buf = ggml_gallocr_get_buffer(galloc, 0);
    const auto lives = ComputeLives(graph, buf);
    const double mib = 1024.0 * 1024.0;
    state.counters["buffer_MiB"] = ggml_gallocr_get_buffer_size(galloc, 0) / mib;
    state.counters["sum_MiB"] = SumOfSizes(lives, GGML_BACKEND_CPU_ALIGNMENT) / mib;
    state.counters["lower_bound_MiB"] = LiveBytesLowerBound(graph, lives, GGML_BACKEND_CPU_ALIGNMENT) / mib;
  }

  GraphKind kind;
  std::unique_ptr<WhisperLikeModel> model;
  ggml_context* ctx = nullptr;
  ggml_gallocr_t galloc = nullptr;
  ggml_cgraph* graph = nullptr;
};

// Printed as "<x>M/s": x million nodes per second = x nodes per microsecond.
void NodesPerMicrosecond(benchmark::State& state, int n_nodes) {
  state.counters["nodes"] = n_nodes;
  state.counters["node_rate"] = benchmark::Counter(static_cast<double>(n_nodes) * static_cast<double>(state.iterations()),
                                                   benchmark::Counter::kIsRate);
}

void BM_Reserve(benchmark::State& state) {
  Setup s(state);
  if (s.graph == nullptr) return state.SkipWithError(ggml_last_error());
  for (auto _ : state) {
    if (!ggml_gallocr_reserve(s.galloc, s.graph)) return state.SkipWithError(ggml_last_error());
  }
  if (!ggml_gallocr_alloc_graph(s.galloc, s.graph)) return state.SkipWithError(ggml_last_error());
  NodesPerMicrosecond(state, s.graph->n_nodes);
  s.SetMemoryCounters(state);
}

void BM_AllocGraph(benchmark::State& state) {
  Setup s(state);
  if (s.graph == nullptr || !ggml_gallocr_reserve(s.galloc, s.graph)) return state.SkipWithError(ggml_last_error());
  ggml_gallocr_set_allow_realloc(s.galloc, false);
  for (auto _ : state) {
    if (!ggml_gallocr_alloc_graph(s.galloc, s.graph)) return state.SkipWithError(ggml_last_error());
  }
  NodesPerMicrosecond(state, s.graph->n_nodes);
  s.SetMemoryCounters(state);
}

// A transcription step as the runtime does it: reset the graph context, build the graph, place it.
void BM_BuildAndAllocGraph(benchmark::State& state) {
  Setup s(state);
  if (s.graph == nullptr || !ggml_gallocr_reserve(s.galloc, s.graph)) return state.SkipWithError(ggml_last_error());
  ggml_gallocr_set_allow_realloc(s.galloc, false);
  for (auto _ : state) {
    ggml_reset(s.ctx);
    s.graph = s.Build();
    if (s.graph == nullptr || !ggml_gallocr_alloc_graph(s.galloc, s.graph)) {
      return state.SkipWithError(ggml_last_error());
    }
  }
  NodesPerMicrosecond(state, s.graph->n_nodes);
  s.SetMemoryCounters(state);
}

// Args: graph kind, layers. Encoder: tiny (4 layers) and a 32-layer stack of tiny's width
// (large's depth); decoder: one token after 447 cached ones, 4 layers.
void Args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"kind", "layers"});
  b->Args({kEncoder, 4});
  b->Args({kEncoder, 32});
  b->Args({kDecoderStep, 4});
  b->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_Reserve)->Apply(Args);
BENCHMARK(BM_AllocGraph)->Apply(Args);
BENCHMARK(BM_BuildAndAllocGraph)->Apply(Args);

}  // namespace
}  // namespace alloc_testing
