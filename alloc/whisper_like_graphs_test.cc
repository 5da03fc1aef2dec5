// ggml_gallocr on graphs shaped like Whisper tiny's encoder and decoder steps: valid placement,
// buffer size against the live-bytes lower bound, and the transcription-loop property: reserve
// once for the worst case, then every decoder step of any n_past is placed with no reallocation
// and no heap allocation.
#include "alloc/whisper_like_graphs.h"

#include <stdio.h>

#include "alloc/buffer.h"
#include "alloc/gallocr.h"
#include "alloc/graph_liveness.h"
#include "ggml/ggml.h"
#include "gtest/gtest.h"
#include "testing/alloc_counter.h"

namespace alloc_testing {
namespace {

// gallocr's buffer over the live-bytes lower bound on these graphs. Measured (printed by the
// tests): encoder 67.79 / 65.60 MiB = 1.033, decoder step 1.000, 32-token prompt 1.000.
constexpr double kMaxOverLowerBound = 1.05;

class WhisperLikeGraphsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ggml_log_set(nullptr, nullptr);
    model_ = WhisperLikeModel::Create(WhisperDims());
    ASSERT_NE(model_, nullptr) << ggml_last_error();
    ggml_init_params params = {WhisperLikeModel::GraphContextSize(), nullptr, true};
    ctx_ = ggml_init(params);
    galloc_ = ggml_gallocr_new();
  }
  void TearDown() override {
    ggml_gallocr_free(galloc_);
    ggml_free(ctx_);
  }

  // Checks the placement of an allocated graph and its size against the bounds; prints them.
  void CheckSizes(const char* what, ggml_cgraph* g) {
    ggml_backend_buffer_t buf = ggml_gallocr_get_buffer(galloc_, 0);
    const std::vector<TensorLife> lives = ComputeLives(g, buf);
    ASSERT_EQ(CheckPlacement(g, lives, buf), "");
    const size_t peak = ggml_gallocr_get_buffer_size(galloc_, 0);
    const size_t sum = SumOfSizes(lives, GGML_BACKEND_CPU_ALIGNMENT);
    const size_t bound = LiveBytesLowerBound(g, lives, GGML_BACKEND_CPU_ALIGNMENT);
    printf("%s: %d nodes, %d leafs; buffer %.2f MiB, sum of sizes %.2f MiB, live lower bound %.2f MiB\n", what,
           g->n_nodes, g->n_leafs, peak / 1048576.0, sum / 1048576.0, bound / 1048576.0);
    EXPECT_LE(bound, peak);
    EXPECT_LE(peak, sum);
    EXPECT_LE(static_cast<double>(peak), kMaxOverLowerBound * static_cast<double>(bound));
  }

  std::unique_ptr<WhisperLikeModel> model_;
  ggml_context* ctx_ = nullptr;
  ggml_gallocr_t galloc_ = nullptr;
};

TEST_F(WhisperLikeGraphsTest, Encoder) {
  ggml_cgraph* g = model_->BuildEncoder(ctx_);
  ASSERT_NE(g, nullptr) << ggml_last_error();
  ASSERT_TRUE(ggml_gallocr_reserve(galloc_, g)) << ggml_last_error();
  ggml_gallocr_set_allow_realloc(galloc_, false);
  ASSERT_TRUE(ggml_gallocr_alloc_graph(galloc_, g)) << ggml_last_error();
  CheckSizes("encoder (tiny)", g);

  // Rebuilding the graph in the reset context and placing it again allocates nothing.
  if (!ggml_testing::AllocCounter::Supported()) GTEST_SKIP() << "allocation counting unsupported in this build";
  ggml_testing::AllocCounter::Start();
  ggml_reset(ctx_);
  g = model_->BuildEncoder(ctx_);
  const bool ok = g != nullptr && ggml_gallocr_alloc_graph(galloc_, g);
  EXPECT_EQ(ggml_testing::AllocCounter::Stop(), 0);
  EXPECT_TRUE(ok) << ggml_last_error();
}

TEST_F(WhisperLikeGraphsTest, DecoderStepsFitTheWorstCaseReservation) {
  const int n_text_ctx = model_->dims().n_text_ctx;
  ggml_cgraph* worst = model_->BuildDecoder(ctx_, 1, n_text_ctx - 1);
  ASSERT_NE(worst, nullptr) << ggml_last_error();
  ASSERT_TRUE(ggml_gallocr_reserve(galloc_, worst)) << ggml_last_error();
  ggml_gallocr_set_allow_realloc(galloc_, false);
  const size_t reserved = ggml_gallocr_get_buffer_size(galloc_, 0);
  ASSERT_TRUE(ggml_gallocr_alloc_graph(galloc_, worst));
  CheckSizes("decoder step (tiny, n_past 447)", worst);

  const bool count = ggml_testing::AllocCounter::Supported();
  int64_t allocations = 0;
  for (int n_past = 0; n_past < n_text_ctx; n_past += 3) {
    SCOPED_TRACE(testing::Message() << "n_past " << n_past);
    if (count) ggml_testing::AllocCounter::Start();
    ggml_reset(ctx_);
    ggml_cgraph* g = model_->BuildDecoder(ctx_, 1, n_past);
    const bool ok = g != nullptr && ggml_gallocr_alloc_graph(galloc_, g);
    if (count) allocations += ggml_testing::AllocCounter::Stop();
    ASSERT_TRUE(ok) << ggml_last_error();
    ggml_backend_buffer_t buf = ggml_gallocr_get_buffer(galloc_, 0);
    ASSERT_EQ(CheckPlacement(g, ComputeLives(g, buf), buf), "");
  }
  EXPECT_EQ(allocations, 0);
  EXPECT_EQ(ggml_gallocr_get_buffer_size(galloc_, 0), reserved);
}

TEST_F(WhisperLikeGraphsTest, PromptBatch) {
  // A 32-token prompt step (the decoder's largest batch in whisper.cpp's bench is 256 tokens).
  ggml_cgraph* g = model_->BuildDecoder(ctx_, 32, 0);
  ASSERT_NE(g, nullptr) << ggml_last_error();
  ASSERT_TRUE(ggml_gallocr_alloc_graph(galloc_, g)) << ggml_last_error();
  CheckSizes("decoder prompt (tiny, 32 tokens)", g);
}

}  // namespace
}  // namespace alloc_testing
