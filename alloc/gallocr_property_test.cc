// Property tests of ggml_gallocr over random graphs (alloc/random_graph.h):
//   - the placement is valid: tensors live at the same time never share a byte (in-place
//     excepted), everything is inside the buffer and aligned, views point into their sources;
//   - lower bound <= buffer size <= sum of all tensor sizes, and buffer size <= kMaxOverLowerBound
//     x the live-bytes lower bound;
//   - computing the graph with the scalar oracle (cpu/ref_ops.h) gives bit-identical outputs
//     (and cache writes) to a naive placement where no two tensors share bytes, and INPUT tensors
//     are intact afterwards;
//   - alloc_graph after reserve makes no heap allocation.
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#include "alloc/buffer.h"
#include "alloc/gallocr.h"
#include "alloc/graph_liveness.h"
#include "alloc/random_graph.h"
#include "cpu/ref_ops.h"
#include "ggml/ggml.h"
#include "gtest/gtest.h"
#include "testing/alloc_counter.h"

namespace alloc_testing {
namespace {

constexpr int kNumGraphs = 1200;
// Best fit on these graphs stays within this factor of the live-bytes lower bound. Measured over
// the 1200 seeds: mean 1.050, max 1.520 (the test prints both). The worst cases are small graphs
// where a late large tensor fits no hole left by greedy placement.
constexpr double kMaxOverLowerBound = 1.6;

// One build of the random graph for `seed` with its contexts and buffers.
class Instance {
 public:
  explicit Instance(uint64_t seed) : seed_(seed) {
    ggml_init_params params = {RandomGraphContextSize(), nullptr, true};
    ctx_ = ggml_init(params);
    ggml_init_params wparams = {1024 * ggml_tensor_overhead(), nullptr, true};
    wctx_ = ggml_init(wparams);
  }
  ~Instance() {
    ggml_gallocr_free(galloc_);
    ggml_backend_buffer_free(buf_);
    ggml_backend_buffer_free(wbuf_);
    ggml_free(ctx_);
    ggml_free(wctx_);
  }

  bool Build() {
    if (!BuildRandomGraph(seed_, 5 + static_cast<int>(seed_ % 80), ctx_, wctx_, &g_)) return false;
    wbuf_ = ggml_backend_alloc_ctx_tensors(wctx_);
    return wbuf_ != nullptr;
  }
  // Every tensor of ctx in its own bytes.
  bool AllocNaive() {
    buf_ = ggml_backend_alloc_ctx_tensors(ctx_);
    if (buf_ != nullptr) ggml_backend_buffer_clear(buf_, 0x11);
    return buf_ != nullptr;
  }
  ggml_gallocr_t galloc() {
    if (galloc_ == nullptr) galloc_ = ggml_gallocr_new();
    return galloc_;
  }
  // Same values in every instance of the seed: inputs, constants, weights and the cache.
  void Fill() {
    int id = 0;
    for (ggml_tensor* t = ggml_get_first_tensor(wctx_); t != nullptr; t = ggml_get_next_tensor(wctx_, t)) {
      FillTensor(t, seed_, 1000 + id++);
    }
    for (size_t i = 0; i < g_.inputs.size(); ++i) FillTensor(g_.inputs[i], seed_, static_cast<int>(i));
    for (size_t i = 0; i < g_.constants.size(); ++i) FillTensor(g_.constants[i], seed_, 500 + static_cast<int>(i));
  }
  bool InputsIntact() const {
    for (size_t i = 0; i < g_.inputs.size(); ++i) {
      const std::vector<uint32_t> bits = TensorBits(g_.inputs[i]);
      for (size_t k = 0; k < bits.size(); ++k) {
        const float v = FillValue(seed_, static_cast<int>(i), static_cast<int64_t>(k));
        uint32_t expect;
        memcpy(&expect, &v, 4);
        if (bits[k] != expect) return false;
      }
    }
    return true;
  }
  std::vector<std::vector<uint32_t>> Results() const {
    std::vector<std::vector<uint32_t>> r;
    for (const ggml_tensor* t : g_.outputs) r.push_back(TensorBits(t));
    r.push_back(TensorBits(g_.cache));
    return r;
  }

  const RandomGraph& g() const { return g_; }

 private:
  uint64_t seed_;
  ggml_context* ctx_ = nullptr;
  ggml_context* wctx_ = nullptr;
  ggml_backend_buffer_t buf_ = nullptr;
  ggml_backend_buffer_t wbuf_ = nullptr;
  ggml_gallocr_t galloc_ = nullptr;
  RandomGraph g_;
};

// "" when equal, else where the first differing element is.
std::string FirstDifference(const std::vector<std::vector<uint32_t>>& a, const std::vector<std::vector<uint32_t>>& b) {
  if (a.size() != b.size()) return "different numbers of results";
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size()) return "result " + std::to_string(i) + ": different sizes";
    for (size_t k = 0; k < a[i].size(); ++k) {
      if (a[i][k] != b[i][k]) {
        float x, y;
        memcpy(&x, &a[i][k], 4);
        memcpy(&y, &b[i][k], 4);
        return "result " + std::to_string(i) + " (the last is the cache), element " + std::to_string(k) + ": " +
               std::to_string(x) + " vs " + std::to_string(y) + " (naive)";
      }
    }
  }
  return "";
}

TEST(GallocrPropertyTest, RandomGraphs) {
  ggml_log_set(nullptr, nullptr);
  const bool count_allocations = ggml_testing::AllocCounter::Supported();
  double max_ratio = 0.0, sum_ratio = 0.0;
  int64_t total_nodes = 0, inplace_nodes = 0, views = 0;
  for (uint64_t seed = 0; seed < kNumGraphs; ++seed) {
    SCOPED_TRACE(testing::Message() << "seed " << seed);
    Instance alloc(seed);
    ASSERT_TRUE(alloc.Build()) << ggml_last_error();
    ggml_cgraph* graph = alloc.g().graph;
    ggml_gallocr_t galloc = alloc.galloc();
    ASSERT_TRUE(ggml_gallocr_reserve(galloc, graph)) << ggml_last_error();
    ggml_testing::AllocCounter::Start();
    const bool ok = ggml_gallocr_alloc_graph(galloc, graph);
    const int64_t allocations = ggml_testing::AllocCounter::Stop();
    ASSERT_TRUE(ok) << ggml_last_error();
    if (count_allocations) ASSERT_EQ(allocations, 0);

    ggml_backend_buffer_t buf = ggml_gallocr_get_buffer(galloc, 0);
    const std::vector<TensorLife> lives = ComputeLives(graph, buf);
    ASSERT_EQ(CheckPlacement(graph, lives, buf), "");
    const size_t peak = ggml_gallocr_get_buffer_size(galloc, 0);
    const size_t sum = SumOfSizes(lives, GGML_BACKEND_CPU_ALIGNMENT);
    const size_t bound = LiveBytesLowerBound(graph, lives, GGML_BACKEND_CPU_ALIGNMENT);
    ASSERT_LE(bound, peak);
    ASSERT_LE(peak, sum);
    const double ratio = bound == 0 ? 1.0 : static_cast<double>(peak) / static_cast<double>(bound);
    ASSERT_LE(ratio, kMaxOverLowerBound) << "peak " << peak << " lower bound " << bound;
    max_ratio = std::max(max_ratio, ratio);
    sum_ratio += ratio;
    for (int i = 0; i < graph->n_nodes; ++i) {
      const ggml_tensor* n = graph->nodes[i];
      ++total_nodes;
      if (n->view_src != nullptr) ++views;
      for (const ggml_tensor* s : n->src) {
        if (s != nullptr && n->view_src == nullptr && s->data == n->data && OpCanInplace(n->op)) {
          ++inplace_nodes;
          break;
        }
      }
    }

    // Same graph, naive placement; both computed by the scalar oracle.
    ggml_backend_buffer_clear(buf, 0x7F);
    alloc.Fill();
    Instance naive(seed);
    ASSERT_TRUE(naive.Build());
    ASSERT_TRUE(naive.AllocNaive()) << ggml_last_error();
    naive.Fill();
    ASSERT_TRUE(ggml_ref_graph_compute(graph)) << ggml_last_error();
    ASSERT_TRUE(ggml_ref_graph_compute(naive.g().graph)) << ggml_last_error();
    ASSERT_TRUE(alloc.InputsIntact());
    ASSERT_EQ(FirstDifference(alloc.Results(), naive.Results()), "");
  }
  printf("%d graphs, %lld nodes (%lld views, %lld run in place); buffer / live-bytes lower bound: mean %.3f, "
         "max %.3f\n",
         kNumGraphs, static_cast<long long>(total_nodes), static_cast<long long>(views),
         static_cast<long long>(inplace_nodes), sum_ratio / kNumGraphs, max_ratio);
  EXPECT_GT(inplace_nodes, total_nodes / 20);  // the generator really exercises in-place reuse
}

}  // namespace
}  // namespace alloc_testing
