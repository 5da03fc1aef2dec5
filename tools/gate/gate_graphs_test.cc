#include "tools/gate/gate_graphs.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "cpu/ref_ops.h"
#include "gtest/gtest.h"

namespace gate {
namespace {

std::vector<float> OutputCopy(const GateGraph& g) {
  const ggml_tensor* out = g.output();
  std::vector<float> v(static_cast<size_t>(ggml_nelements(out)));
  std::memcpy(v.data(), out->data, v.size() * sizeof(float));
  return v;
}

// Every workload, computed by the executor, matches the scalar double-accumulating oracle
// (cpu/ref_ops.h) recomputing the same graph from the same inputs.
TEST(GateGraphs, ExecutorMatchesReferenceOps) {
  for (Workload w :
       {Workload::kMulMatF16, Workload::kMulMatQ8_0, Workload::kSoftmax, Workload::kEncoderLayer}) {
    SCOPED_TRACE(WorkloadName(w));
    absl::StatusOr<std::unique_ptr<GateGraph>> g = GateGraph::Create(w, 24, 1);
    ASSERT_TRUE(g.ok()) << g.status();
    ASSERT_TRUE((*g)->Compute().ok());
    const std::vector<float> fast = OutputCopy(**g);
    ASSERT_TRUE(ggml_ref_graph_compute((*g)->graph())) << ggml_last_error();
    const std::vector<float> ref = OutputCopy(**g);
    ASSERT_EQ(fast.size(), ref.size());
    double max_err = 0.0, max_ref = 0.0;
    for (size_t i = 0; i < ref.size(); ++i) {
      ASSERT_TRUE(std::isfinite(fast[i])) << i;
      max_err = std::fmax(max_err, std::fabs(static_cast<double>(fast[i]) - ref[i]));
      max_ref = std::fmax(max_ref, std::fabs(static_cast<double>(ref[i])));
    }
    EXPECT_GT(max_ref, 0.0);
    // f32 accumulation (and Q8_0 activations for kMulMatQ8_0) vs double: 1e-2 of the range.
    EXPECT_LE(max_err, 1e-2 * max_ref) << "max_err " << max_err << " max_ref " << max_ref;
  }
}

// Softmax rows sum to one: the checksum is the row count, 6 heads x n_ctx rows.
TEST(GateGraphs, SoftmaxChecksumIsRowCount) {
  absl::StatusOr<std::unique_ptr<GateGraph>> g = GateGraph::Create(Workload::kSoftmax, 40, 1);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_TRUE((*g)->Compute().ok());
  EXPECT_EQ((*g)->output()->ne[0], 40);
  EXPECT_EQ((*g)->output()->ne[1], 6 * 40);
  EXPECT_NEAR((*g)->OutputChecksum(), 6.0 * 40, 1e-3);
}

// The executor promises thread-count independence bit for bit; the gate relies on the workload
// being the same computation whatever the thread count.
TEST(GateGraphs, OneAndTwoThreadsGiveIdenticalOutputs) {
  for (Workload w : {Workload::kMulMatF16, Workload::kEncoderLayer}) {
    SCOPED_TRACE(WorkloadName(w));
    auto g1 = GateGraph::Create(w, 32, 1);
    auto g2 = GateGraph::Create(w, 32, 2);
    ASSERT_TRUE(g1.ok() && g2.ok());
    ASSERT_TRUE((*g1)->Compute().ok());
    ASSERT_TRUE((*g2)->Compute().ok());
    EXPECT_EQ(OutputCopy(**g1), OutputCopy(**g2));
  }
}

TEST(GateGraphs, OutputShapes) {
  auto mm = GateGraph::Create(Workload::kMulMatQ8_0, 16, 1);
  ASSERT_TRUE(mm.ok());
  EXPECT_EQ((*mm)->output()->ne[0], 1536);
  EXPECT_EQ((*mm)->output()->ne[1], 16);
  auto enc = GateGraph::Create(Workload::kEncoderLayer, 16, 1);
  ASSERT_TRUE(enc.ok());
  EXPECT_EQ((*enc)->output()->ne[0], 384);
  EXPECT_EQ((*enc)->output()->ne[1], 16);
}

TEST(GateGraphs, FlopCounts) {
  EXPECT_EQ(WorkloadFlops(Workload::kMulMatF16, 256), 2.0 * 384 * 384 * 256);
  EXPECT_EQ(WorkloadFlops(Workload::kMulMatQ8_0, 64), 2.0 * 384 * 1536 * 64);
  EXPECT_EQ(WorkloadFlops(Workload::kSoftmax, 256), 0.0);
  // 4 projections + 2 MLP products per position, plus K^T Q and V * P over 6 heads of 64.
  EXPECT_EQ(WorkloadFlops(Workload::kEncoderLayer, 10),
            2.0 * 10 * (4 * 384 * 384 + 2 * 384 * 1536) + 2.0 * 2 * 10 * 10 * 384);
}

TEST(GateGraphs, RejectsBadArguments) {
  EXPECT_EQ(GateGraph::Create(Workload::kSoftmax, 0, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GateGraph::Create(Workload::kSoftmax, 1501, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GateGraph::Create(Workload::kSoftmax, 8, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gate
