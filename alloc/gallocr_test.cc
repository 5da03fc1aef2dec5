// Hand-built graphs with exact expected offsets, the placement rules one by one, errors, and
// zero heap allocations after reserve. Random graphs are in gallocr_property_test.cc.
#include "alloc/gallocr.h"

#include <string>

#include "alloc/buffer.h"
#include "alloc/graph_liveness.h"
#include "ggml/ggml.h"
#include "ggml/graph.h"
#include "ggml/ops.h"
#include "gtest/gtest.h"
#include "testing/alloc_counter.h"

namespace {

class GallocrTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ggml_log_set(nullptr, nullptr);
    ggml_init_params params = {4096 * ggml_tensor_overhead() + 2 * ggml_graph_overhead(), nullptr, true};
    ctx_ = ggml_init(params);
    galloc_ = ggml_gallocr_new();
    ASSERT_NE(galloc_, nullptr);
  }
  void TearDown() override {
    ggml_gallocr_free(galloc_);
    ggml_backend_buffer_free(weights_);
    ggml_free(wctx_);
    ggml_free(ctx_);
  }

  ggml_tensor* Input(int64_t ne0, int64_t ne1 = 1) {
    ggml_tensor* t = ggml_new_tensor_2d(ctx_, GGML_TYPE_F32, ne0, ne1);
    ggml_set_input(t);
    return t;
  }
  // A tensor with data outside the allocator (weights): placed in weights_ by Finish().
  ggml_tensor* Weight(int64_t ne0, int64_t ne1 = 1) {
    return ggml_new_tensor_2d(weights_ctx(), GGML_TYPE_F32, ne0, ne1);
  }
  ggml_context* weights_ctx() {
    if (wctx_ == nullptr) {
      ggml_init_params params = {64 * ggml_tensor_overhead(), nullptr, true};
      wctx_ = ggml_init(params);
    }
    return wctx_;
  }
  ggml_cgraph* Graph(ggml_tensor* result) {
    if (wctx_ != nullptr && weights_ == nullptr) weights_ = ggml_backend_alloc_ctx_tensors(wctx_);
    ggml_cgraph* g = ggml_new_graph(ctx_);
    EXPECT_TRUE(ggml_build_forward_expand(g, result)) << ggml_last_error();
    return g;
  }
  size_t Offset(const ggml_tensor* t) const {
    return static_cast<size_t>(static_cast<const char*>(t->data) -
                               static_cast<const char*>(ggml_backend_buffer_get_base(
                                   ggml_gallocr_get_buffer(galloc_, 0))));
  }
  void ExpectValid(ggml_cgraph* g) {
    ggml_backend_buffer_t buf = ggml_gallocr_get_buffer(galloc_, 0);
    EXPECT_EQ(alloc_testing::CheckPlacement(g, alloc_testing::ComputeLives(g, buf), buf), "");
  }

  ggml_context* ctx_ = nullptr;
  ggml_context* wctx_ = nullptr;
  ggml_backend_buffer_t weights_ = nullptr;
  ggml_gallocr_t galloc_ = nullptr;
};

TEST_F(GallocrTest, ChainWithInPlaceOpsHasExactOffsets) {
  ggml_tensor* x = Input(256);                              // 1024 bytes, INPUT: never reused
  ggml_tensor* w = Weight(256, 64);                         // external
  ggml_tensor* bias = Weight(64);                           // external
  ggml_tensor* a = ggml_gelu(ctx_, x);                      // new block (x is INPUT)
  ggml_tensor* b = ggml_scale(ctx_, a, 0.5f);               // in place over a
  ggml_tensor* c = ggml_mul_mat(ctx_, w, b);                // [64, 1]: not in-place capable
  ggml_tensor* d = ggml_add(ctx_, c, bias);                 // in place over c
  ggml_cgraph* g = Graph(d);
  ASSERT_TRUE(ggml_gallocr_alloc_graph(galloc_, g)) << ggml_last_error();
  EXPECT_EQ(Offset(x), 0u);
  EXPECT_EQ(Offset(a), 1024u);
  EXPECT_EQ(Offset(b), 1024u);
  EXPECT_EQ(Offset(c), 2048u);  // b is still live while c is computed
  EXPECT_EQ(Offset(d), 2048u);
  EXPECT_EQ(ggml_gallocr_get_buffer_size(galloc_, 0), 2048u + 256);
  EXPECT_EQ(ggml_gallocr_get_buffer_size(galloc_, 1), 0u);
  EXPECT_EQ(w->buffer, weights_);  // external tensors untouched
  EXPECT_EQ(bias->buffer, weights_);
  ExpectValid(g);
}

TEST_F(GallocrTest, FreedBytesAreReusedBestFit) {
  ggml_tensor* x = Input(256);
  ggml_tensor* a = ggml_norm(ctx_, x, 1e-5f);   // 1024 @ 1024 (NORM: never in place)
  ggml_tensor* b = ggml_norm(ctx_, a, 1e-5f);   // 1024 @ 2048; a freed after
  ggml_tensor* c = ggml_norm(ctx_, b, 1e-5f);   // takes a's freed block @ 1024; b freed
  ggml_tensor* d = ggml_norm(ctx_, c, 1e-5f);   // b's block @ 2048
  ggml_cgraph* g = Graph(d);
  ASSERT_TRUE(ggml_gallocr_alloc_graph(galloc_, g)) << ggml_last_error();
  EXPECT_EQ(Offset(a), 1024u);
  EXPECT_EQ(Offset(b), 2048u);
  EXPECT_EQ(Offset(c), 1024u);
  EXPECT_EQ(Offset(d), 2048u);
  EXPECT_EQ(ggml_gallocr_get_buffer_size(galloc_, 0), 3072u);
  ExpectValid(g);
}

TEST_F(GallocrTest, CastIsPlacedWhenComputedNotBeforeNodeZero) {
  ggml_tensor* x = Input(256);                          // 1024 @ 0
  ggml_tensor* a = ggml_norm(ctx_, x, 1e-5f);            // 1024 @ 1024
  ggml_tensor* c = ggml_cast(ctx_, a, GGML_TYPE_F16);    // 512 @ 2048: after a, a node
  ggml_tensor* d = ggml_cast(ctx_, c, GGML_TYPE_F32);    // 1024: a's freed block @ 1024
  ggml_cgraph* g = Graph(d);
  ASSERT_TRUE(ggml_gallocr_alloc_graph(galloc_, g)) << ggml_last_error();
  EXPECT_EQ(Offset(a), 1024u);
  EXPECT_EQ(Offset(c), 2048u);
  EXPECT_EQ(Offset(d), 1024u);
  EXPECT_EQ(ggml_gallocr_get_buffer_size(galloc_, 0), 2560u);
  ExpectValid(g);
}

TEST_F(GallocrTest, AllocatorsShareACallerOwnedBuffer) {
  ggml_backend_buffer_t buffer = ggml_backend_cpu_buffer_new(0);
  ASSERT_NE(buffer, nullptr);
  ggml_gallocr_t big = ggml_gallocr_new_with_buffer(buffer);
  ggml_gallocr_t small = ggml_gallocr_new_with_buffer(buffer);
  ASSERT_NE(big, nullptr);
  ASSERT_NE(small, nullptr);
  // Four norms over 256 floats: peak 3072 (FreedBytesAreReusedBestFit); one norm over 64: 512.
  ggml_tensor* x = Input(256);
  ggml_tensor* d = ggml_norm(ctx_, ggml_norm(ctx_, ggml_norm(ctx_, ggml_norm(ctx_, x, 1e-5f), 1e-5f), 1e-5f), 1e-5f);
  ggml_cgraph* g_big = Graph(d);
  ggml_tensor* y = Input(64);                        // 256 @ 0
  ggml_tensor* e = ggml_norm(ctx_, y, 1e-5f);        // 256 @ 256
  ggml_cgraph* g_small = Graph(e);
  ASSERT_TRUE(ggml_gallocr_reserve(small, g_small)) << ggml_last_error();
  EXPECT_EQ(ggml_backend_buffer_get_size(buffer), 512u);
  ASSERT_TRUE(ggml_gallocr_reserve(big, g_big)) << ggml_last_error();
  EXPECT_EQ(ggml_backend_buffer_get_size(buffer), 3072u);  // the largest peak, not 3584
  ASSERT_TRUE(ggml_gallocr_reserve(small, g_small)) << ggml_last_error();
  EXPECT_EQ(ggml_backend_buffer_get_size(buffer), 3072u);  // never shrinks
  EXPECT_EQ(ggml_gallocr_get_max_plan_size(big), 3072u);
  EXPECT_EQ(ggml_gallocr_get_max_plan_size(small), 512u);
  EXPECT_EQ(ggml_gallocr_get_buffer(small, 0), buffer);

  // Each graph placed from the same base in turn.
  const char* base = static_cast<const char*>(ggml_backend_buffer_get_base(buffer));
  ASSERT_TRUE(ggml_gallocr_alloc_graph(big, g_big)) << ggml_last_error();
  EXPECT_EQ(static_cast<const char*>(x->data), base);
  EXPECT_EQ(static_cast<const char*>(d->data), base + 2048);
  ASSERT_TRUE(ggml_gallocr_alloc_graph(small, g_small)) << ggml_last_error();
  EXPECT_EQ(static_cast<const char*>(y->data), base);
  EXPECT_EQ(static_cast<const char*>(e->data), base + 256);
  // The big graph's tensors are in the shared buffer: placed again, not taken as external.
  ASSERT_TRUE(ggml_gallocr_alloc_graph(big, g_big)) << ggml_last_error();
  EXPECT_EQ(static_cast<const char*>(d->data), base + 2048);

  // Freeing the allocators leaves the buffer to its owner (ASan reports a double free otherwise).
  ggml_gallocr_free(big);
  ggml_gallocr_free(small);
  EXPECT_EQ(ggml_backend_buffer_get_size(buffer), 3072u);
  ggml_backend_buffer_free(buffer);

  EXPECT_EQ(ggml_gallocr_new_with_buffer(nullptr), nullptr);
  EXPECT_NE(std::string(ggml_last_error()).find("buffer is NULL"), std::string::npos);
}

TEST_F(GallocrTest, OutputsInputsAndSharedParentsAreNotOverwritten) {
  ggml_tensor* x = Input(64);                     // 256 bytes @ 0
  ggml_tensor* a = ggml_norm(ctx_, x, 1e-5f);     // @ 256
  ggml_set_output(a);
  ggml_tensor* b = ggml_scale(ctx_, a, 2.0f);     // a is OUTPUT: new block @ 512
  ggml_tensor* c = ggml_silu(ctx_, b);            // b has 2 children: new block @ 768
  ggml_tensor* d = ggml_mul(ctx_, c, b);          // in place over c (1 child), b freed after
  ggml_tensor* e = ggml_scale(ctx_, x, 3.0f);     // x is INPUT: b's freed block @ 512
  ggml_tensor* f = ggml_add(ctx_, d, e);          // in place over d (= c's block)
  ggml_cgraph* g = Graph(f);
  ASSERT_TRUE(ggml_gallocr_alloc_graph(galloc_, g)) << ggml_last_error();
  EXPECT_EQ(Offset(x), 0u);
  EXPECT_EQ(Offset(a), 256u);
  EXPECT_EQ(Offset(b), 512u);
  EXPECT_EQ(Offset(c), 768u);
  EXPECT_EQ(Offset(d), 768u);
  EXPECT_EQ(Offset(e), 512u);
  EXPECT_EQ(Offset(f), 768u);
  EXPECT_EQ(ggml_gallocr_get_buffer_size(galloc_, 0), 1024u);
  ExpectValid(g);
}

TEST_F(GallocrTest, DifferentLayoutIsNotInPlace) {
  ggml_tensor* x = Input(8, 4);
  ggml_tensor* a = ggml_norm(ctx_, x, 1e-5f);            // [8, 4] @ 128
  ggml_tensor* t = ggml_transpose(ctx_, a);              // view [4, 8], strided
  ggml_tensor* s = ggml_scale(ctx_, t, 2.0f);            // contiguous [4, 8]: layout differs from t
  ggml_cgraph* g = Graph(s);
  ASSERT_TRUE(ggml_gallocr_alloc_graph(galloc_, g)) << ggml_last_error();
  EXPECT_EQ(Offset(a), 128u);
  EXPECT_EQ(Offset(s), 256u);
  EXPECT_EQ(static_cast<char*>(t->data), static_cast<char*>(a->data));
  ExpectValid(g);
}

TEST_F(GallocrTest, ViewKeepsSourceAliveAndInPlaceOverViewReturnsTail) {
  ggml_tensor* x = Input(256);                                   // 1024 @ 0
  ggml_tensor* a = ggml_norm(ctx_, x, 1e-5f);                    // 1024 @ 1024
  ggml_tensor* v = ggml_view_1d(ctx_, a, 128, 0);                // first half of a
  ggml_tensor* s = ggml_scale(ctx_, v, 2.0f);                    // in place over a's block, 512 bytes
  ggml_tensor* n = ggml_norm(ctx_, s, 1e-5f);                    // 512: the returned tail @ 1536
  ggml_cgraph* g = Graph(n);
  ASSERT_TRUE(ggml_gallocr_alloc_graph(galloc_, g)) << ggml_last_error();
  EXPECT_EQ(Offset(a), 1024u);
  EXPECT_EQ(v->data, a->data);
  EXPECT_EQ(Offset(s), 1024u);
  EXPECT_EQ(Offset(n), 1536u);
  EXPECT_EQ(ggml_gallocr_get_buffer_size(galloc_, 0), 2048u);
  ExpectValid(g);
}

TEST_F(GallocrTest, ViewAtNonZeroOffsetKeepsItsSourceUntilUsed) {
  // Graph order (depth-first from r, src[0] first): b, a, v, s, rep, r.
  ggml_tensor* x = Input(256);                                   // @ 0
  ggml_tensor* a = ggml_norm(ctx_, x, 1e-5f);                    // 1024 bytes
  ggml_tensor* v = ggml_view_1d(ctx_, a, 128, 512);              // second half of a
  ggml_tensor* b = ggml_norm(ctx_, x, 1e-5f);                    // 1024 bytes
  ggml_tensor* s = ggml_scale(ctx_, v, 2.0f);                    // offset 512: not in place
  ggml_tensor* rep = ggml_repeat(ctx_, s, b);                    // 1024 bytes
  ggml_tensor* r = ggml_add(ctx_, b, rep);
  ggml_cgraph* g = Graph(r);
  ASSERT_EQ(g->nodes[1], a);
  ASSERT_TRUE(ggml_gallocr_alloc_graph(galloc_, g)) << ggml_last_error();
  EXPECT_EQ(Offset(b), 1024u);
  EXPECT_EQ(Offset(a), 2048u);
  EXPECT_EQ(static_cast<char*>(v->data), static_cast<char*>(a->data) + 512);
  EXPECT_EQ(Offset(s), 3072u);    // a is kept while its view is unused
  EXPECT_EQ(Offset(rep), 2048u);  // after s, a's block is free again
  EXPECT_EQ(Offset(r), 1024u);    // in place over b (its other child, rep, has run)
  EXPECT_EQ(ggml_gallocr_get_buffer_size(galloc_, 0), 3584u);
  ExpectValid(g);
}

TEST_F(GallocrTest, PresetDataIsLeftAlone) {
  float cache[64] = {};
  ggml_init_params params = {ggml_tensor_overhead() + 256 + 64, nullptr, false};
  ggml_context* arena = ggml_init(params);  // a normal context: the tensor's data is in its arena
  ggml_tensor* kv = ggml_new_tensor_1d(arena, GGML_TYPE_F32, 64);
  ggml_tensor* kv2 = ggml_new_tensor_1d(ctx_, GGML_TYPE_F32, 64);
  kv2->data = cache;                                  // caller-set data, no buffer
  ggml_tensor* x = Input(64);
  ggml_tensor* a = ggml_add(ctx_, kv, x);             // kv is not ours: never in place over it
  ggml_tensor* b = ggml_cpy(ctx_, a, ggml_view_1d(ctx_, kv2, 64, 0));  // writes into the cache
  ggml_cgraph* g = Graph(b);
  void* kv_data = kv->data;
  ASSERT_TRUE(ggml_gallocr_alloc_graph(galloc_, g)) << ggml_last_error();
  EXPECT_EQ(kv->data, kv_data);
  EXPECT_EQ(kv->buffer, nullptr);
  EXPECT_EQ(kv2->data, cache);
  EXPECT_EQ(b->data, cache);
  EXPECT_NE(a->data, kv->data);
  EXPECT_EQ(ggml_gallocr_get_buffer_size(galloc_, 0), 512u);  // x and a only
  ExpectValid(g);
  ggml_free(arena);
}

TEST_F(GallocrTest, AllocGraphAgainGivesTheSamePlacement) {
  ggml_tensor* x = Input(100);
  ggml_tensor* r = ggml_gelu(ctx_, ggml_norm(ctx_, ggml_scale(ctx_, x, 2.0f), 1e-5f));
  ggml_cgraph* g = Graph(r);
  ASSERT_TRUE(ggml_gallocr_reserve(galloc_, g));
  EXPECT_EQ(x->data, nullptr);  // reserve places nothing
  const size_t size = ggml_gallocr_get_buffer_size(galloc_, 0);
  ASSERT_TRUE(ggml_gallocr_alloc_graph(galloc_, g));
  void* first[4];
  for (int i = 0; i < g->n_nodes; ++i) first[i] = g->nodes[i]->data;
  ASSERT_TRUE(ggml_gallocr_alloc_graph(galloc_, g));  // the tensors now have data in our buffer
  for (int i = 0; i < g->n_nodes; ++i) EXPECT_EQ(g->nodes[i]->data, first[i]);
  EXPECT_EQ(ggml_gallocr_get_buffer_size(galloc_, 0), size);
  ExpectValid(g);
}

TEST_F(GallocrTest, NoReallocFailsClearlyWhenTheGraphGrows) {
  ggml_tensor* small = ggml_norm(ctx_, Input(64), 1e-5f);
  ggml_cgraph* g_small = Graph(small);
  ASSERT_TRUE(ggml_gallocr_reserve(galloc_, g_small));
  EXPECT_EQ(ggml_gallocr_get_buffer_size(galloc_, 0), 512u);
  ggml_gallocr_set_allow_realloc(galloc_, false);

  ggml_tensor* big = ggml_norm(ctx_, Input(1024), 1e-5f);  // same tensor count, more bytes
  ggml_cgraph* g_big = Graph(big);
  EXPECT_FALSE(ggml_gallocr_alloc_graph(galloc_, g_big));
  const std::string msg = ggml_last_error();
  EXPECT_NE(msg.find("needs 8192 bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("buffer has 512"), std::string::npos) << msg;
  EXPECT_EQ(big->data, nullptr);  // nothing placed

  ggml_tensor* more = ggml_norm(ctx_, ggml_norm(ctx_, Input(8), 1e-5f), 1e-5f);  // 3 tensors > 2
  EXPECT_FALSE(ggml_gallocr_alloc_graph(galloc_, Graph(more)));
  EXPECT_NE(std::string(ggml_last_error()).find("reserved for 2"), std::string::npos) << ggml_last_error();

  ggml_gallocr_set_allow_realloc(galloc_, true);
  ggml_backend_buffer_t handle = ggml_gallocr_get_buffer(galloc_, 0);
  ASSERT_TRUE(ggml_gallocr_alloc_graph(galloc_, g_big)) << ggml_last_error();
  EXPECT_EQ(ggml_gallocr_get_buffer_size(galloc_, 0), 8192u);
  EXPECT_EQ(ggml_gallocr_get_buffer(galloc_, 0), handle);  // grown in place
  ExpectValid(g_big);
  // The small graph still fits: no shrinking, no error.
  ggml_gallocr_set_allow_realloc(galloc_, false);
  ASSERT_TRUE(ggml_gallocr_alloc_graph(galloc_, g_small));
  EXPECT_EQ(ggml_gallocr_get_buffer_size(galloc_, 0), 8192u);
}

TEST_F(GallocrTest, NeverReservedWithoutReallocIsAnError) {
  ggml_gallocr_set_allow_realloc(galloc_, false);
  EXPECT_FALSE(ggml_gallocr_alloc_graph(galloc_, Graph(ggml_norm(ctx_, Input(4), 1e-5f))));
  EXPECT_NE(std::string(ggml_last_error()).find("never reserved"), std::string::npos) << ggml_last_error();
}

TEST_F(GallocrTest, ArgumentAndGraphErrors) {
  EXPECT_FALSE(ggml_gallocr_reserve(nullptr, nullptr));
  EXPECT_FALSE(ggml_gallocr_alloc_graph(galloc_, nullptr));
  EXPECT_NE(std::string(ggml_last_error()).find("graph is NULL"), std::string::npos);
  ggml_gallocr_free(nullptr);

  ggml_tensor* x = Input(4);
  ggml_tensor* a = ggml_norm(ctx_, x, 1e-5f);
  ggml_cgraph* g = Graph(a);
  ggml_tensor* stranger = ggml_set_name(ggml_new_tensor_1d(ctx_, GGML_TYPE_F32, 4), "stranger");
  a->src[1] = stranger;  // edited after the graph was built
  EXPECT_FALSE(ggml_gallocr_alloc_graph(galloc_, g));
  EXPECT_NE(std::string(ggml_last_error()).find("'stranger' (a src of"), std::string::npos) << ggml_last_error();
  EXPECT_EQ(a->data, nullptr);
}

TEST_F(GallocrTest, TooManyFreeBlocksIsAnError) {
  // 600 leafs of 64 bytes side by side; the odd ones are never used (kept to the end), each even
  // one feeds a node 4x its size and is then freed: 300 isolated holes > 256 free blocks.
  ggml_cgraph* g = ggml_new_graph(ctx_);
  ggml_tensor* leafs[600];
  for (int i = 0; i < 600; ++i) {
    leafs[i] = ggml_new_tensor_1d(ctx_, GGML_TYPE_F32, 16);
    ASSERT_TRUE(ggml_build_forward_expand(g, leafs[i]));
  }
  for (int i = 0; i < 600; i += 2) {
    ASSERT_TRUE(ggml_build_forward_expand(g, ggml_pad(ctx_, leafs[i], 48, 0, 0, 0)));
  }
  EXPECT_FALSE(ggml_gallocr_reserve(galloc_, g));
  EXPECT_NE(std::string(ggml_last_error()).find("out of free blocks"), std::string::npos) << ggml_last_error();
  EXPECT_EQ(ggml_gallocr_get_buffer_size(galloc_, 0), 0u);
}

TEST_F(GallocrTest, EmptyGraph) {
  ggml_cgraph* g = ggml_new_graph(ctx_);
  ASSERT_TRUE(ggml_gallocr_alloc_graph(galloc_, g)) << ggml_last_error();
  EXPECT_EQ(ggml_gallocr_get_buffer_size(galloc_, 0), 0u);
  EXPECT_NE(ggml_gallocr_get_buffer(galloc_, 0), nullptr);
}

TEST_F(GallocrTest, ZeroSizedTensors) {
  ggml_tensor* x = Input(0);
  ggml_tensor* a = ggml_scale(ctx_, x, 2.0f);
  ggml_tensor* b = ggml_norm(ctx_, a, 1e-5f);
  ggml_cgraph* g = Graph(b);
  ASSERT_TRUE(ggml_gallocr_alloc_graph(galloc_, g)) << ggml_last_error();
  EXPECT_EQ(ggml_gallocr_get_buffer_size(galloc_, 0), 0u);
  for (ggml_tensor* t : {x, a, b}) EXPECT_NE(t->data, nullptr);
}

// Builds the same graph again in the reset context each step, as a transcription loop does.
ggml_cgraph* BuildStep(ggml_context* ctx, int64_t n) {
  ggml_tensor* x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, n);
  ggml_set_input(x);
  ggml_tensor* h = x;
  for (int layer = 0; layer < 8; ++layer) {
    ggml_tensor* y = ggml_norm(ctx, h, 1e-5f);
    y = ggml_gelu(ctx, ggml_scale(ctx, y, 0.5f));
    ggml_tensor* att = ggml_soft_max(ctx, ggml_mul_mat(ctx, y, y));
    h = ggml_add(ctx, h, ggml_mul_mat(ctx, ggml_cont(ctx, ggml_transpose(ctx, y)), att));
  }
  ggml_set_output(h);
  ggml_cgraph* g = ggml_new_graph(ctx);
  return ggml_build_forward_expand(g, h) ? g : nullptr;
}

TEST_F(GallocrTest, AllocGraphAfterReserveMakesNoHeapAllocation) {
  if (!ggml_testing::AllocCounter::Supported()) GTEST_SKIP() << "allocation counting unsupported in this build";
  ggml_init_params params = {1024 * ggml_tensor_overhead() + ggml_graph_overhead(), nullptr, true};
  ggml_context* step_ctx = ggml_init(params);
  ASSERT_TRUE(ggml_gallocr_reserve(galloc_, BuildStep(step_ctx, 32)));  // worst case: 32 rows
  ggml_gallocr_set_allow_realloc(galloc_, false);
  const size_t size = ggml_gallocr_get_buffer_size(galloc_, 0);

  ggml_testing::AllocCounter::Start();
  int failures = 0;
  for (int step = 0; step < 20; ++step) {
    ggml_reset(step_ctx);
    ggml_cgraph* g = BuildStep(step_ctx, 1 + step % 32);
    if (g == nullptr || !ggml_gallocr_alloc_graph(galloc_, g)) ++failures;
    if (!ggml_gallocr_alloc_graph(galloc_, g)) ++failures;  // the same graph again
  }
  const int64_t allocations = ggml_testing::AllocCounter::Stop();
  EXPECT_EQ(failures, 0) << ggml_last_error();
  EXPECT_EQ(allocations, 0);
  EXPECT_EQ(ggml_gallocr_get_buffer_size(galloc_, 0), size);

  // The counter is live in this binary: growing the buffer for a larger graph allocates.
  ggml_gallocr_set_allow_realloc(galloc_, true);
  ggml_reset(step_ctx);
  ggml_cgraph* bigger = BuildStep(step_ctx, 64);
  ggml_testing::AllocCounter::Start();
  EXPECT_TRUE(ggml_gallocr_alloc_graph(galloc_, bigger));
  EXPECT_GE(ggml_testing::AllocCounter::Stop(), 1);
  EXPECT_GT(ggml_gallocr_get_buffer_size(galloc_, 0), size);
  ggml_free(step_ctx);
}

}  // namespace
