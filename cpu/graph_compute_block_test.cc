// ggml_graph_compute on a whole transformer block (pre-LN self-attention with an F16 KV cache and
// a causal mask, output projection, GELU MLP, residuals, the shape of Whisper's decoder layer)
// against the reference evaluator on every target; zero heap allocation during compute; plan
// sizes; and the error / abort paths.
#include "cpu/graph_compute.h"

#include <math.h>
#include <string.h>

#include <string>
#include <vector>

#include "cpu/graph_compute_test_util.h"
#include "ggml/ggml.h"
#include "ggml/ops.h"
#include "gtest/gtest.h"
#include "hwy/tests/hwy_gtest.h"
#include "kernels/matmul.h"
#include "kernels/test_util.h"
#include "testing/alloc_counter.h"

namespace ggml_cpu {
namespace {

using test::RandomTensor;

struct Ctx {
  ggml_context* ctx = ggml_init({64u << 20, nullptr, false});
  ~Ctx() { ggml_free(ctx); }
};

test::Executor& Exec() {
  static test::Executor* ex = new test::Executor();
  return *ex;
}

constexpr int64_t kState = 64, kHead = 4, kDHead = 16, kTokens = 33, kPast = 5, kCtx = 48, kMlp = 256;

// LN(x) * w + b.
ggml_tensor* LayerNorm(ggml_context* ctx, ggml_tensor* x, uint32_t seed) {
  ggml_tensor* w = RandomTensor(ctx, GGML_TYPE_F32, {kState}, seed, 0.5f, 1.5f);
  ggml_tensor* b = RandomTensor(ctx, GGML_TYPE_F32, {kState}, seed + 1, -0.1f, 0.1f);
  return ggml_add(ctx, ggml_mul(ctx, ggml_norm(ctx, x, 1e-5f), w), b);
}

// Builds the block; adds the two KV-cache writes to `graph` first (as whisper.cpp does) and
// returns the block output [kState, kTokens].
ggml_tensor* BuildBlock(ggml_context* ctx, ggml_cgraph* graph) {
  auto linear = [&](ggml_tensor* x, int64_t k, int64_t m, uint32_t seed, bool bias) {
    const float s = 1.0f / sqrtf(static_cast<float>(k));
    ggml_tensor* y = ggml_mul_mat(ctx, RandomTensor(ctx, GGML_TYPE_F16, {k, m}, seed, -s, s), x);
    return bias ? ggml_add(ctx, y, RandomTensor(ctx, GGML_TYPE_F32, {m}, seed + 1, -0.1f, 0.1f)) : y;
  };
  ggml_tensor* x = RandomTensor(ctx, GGML_TYPE_F32, {kState, kTokens}, 100);
  ggml_set_name(x, "x");
  ggml_tensor* cur = LayerNorm(ctx, x, 101);
  ggml_tensor* q = linear(cur, kState, kState, 103, true);
  ggml_tensor* k = linear(cur, kState, kState, 105, false);
  ggml_tensor* v = linear(cur, kState, kState, 107, true);

  // F16 caches holding kPast earlier tokens; this step's K and V go after them. K is stored token
  // by token, V channel by channel (transposed), as in whisper.cpp.
  ggml_tensor* k_cache = RandomTensor(ctx, GGML_TYPE_F16, {kState * kCtx}, 110);
  ggml_tensor* v_cache = RandomTensor(ctx, GGML_TYPE_F16, {kCtx * kState}, 111);
  const size_t h = sizeof(ggml_fp16_t);
  ggml_tensor* k_slot = ggml_view_1d(ctx, k_cache, kState * kTokens, kState * kPast * h);
  ggml_tensor* v_slot = ggml_view_2d(ctx, v_cache, kTokens, kState, kCtx * h, kPast * h);
  EXPECT_TRUE(ggml_build_forward_expand(graph, ggml_cpy(ctx, k, k_slot)));
  EXPECT_TRUE(ggml_build_forward_expand(graph, ggml_cpy(ctx, ggml_transpose(ctx, v), v_slot)));

  const int64_t n_kv = kPast + kTokens;
  ggml_tensor* kh = ggml_permute(
      ctx, ggml_view_3d(ctx, k_cache, kDHead, kHead, n_kv, kDHead * h, kState * h, 0), 0, 2, 1, 3);  // [16, kv, 4]
  ggml_tensor* qh = ggml_permute(ctx, ggml_reshape_3d(ctx, q, kDHead, kHead, kTokens), 0, 2, 1, 3);  // [16, T, 4]
  ggml_tensor* kq = ggml_mul_mat(ctx, kh, qh);                                                       // [kv, T, 4]
  ggml_tensor* mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n_kv, kTokens + 7);  // padded rows
  for (int64_t i = 0; i < mask->ne[1]; ++i) {
    for (int64_t j = 0; j < n_kv; ++j) ggml_set_f32_nd(mask, j, i, 0, 0, j > kPast + i ? -INFINITY : 0.0f);
  }
  ggml_tensor* kq_soft = ggml_soft_max_ext(ctx, kq, mask, 1.0f / sqrtf(static_cast<float>(kDHead)), 0.0f);
  ggml_tensor* vh = ggml_view_3d(ctx, v_cache, n_kv, kDHead, kHead, kCtx * h, kCtx * kDHead * h, 0);  // [kv, 16, 4]
  ggml_tensor* kqv = ggml_mul_mat(ctx, vh, kq_soft);                                                // [16, T, 4]
  ggml_tensor* merged = ggml_cpy(ctx, ggml_permute(ctx, kqv, 0, 2, 1, 3),
                                 ggml_new_tensor_2d(ctx, GGML_TYPE_F32, kState, kTokens));
  ggml_tensor* x1 = ggml_add(ctx, linear(merged, kState, kState, 120, true), x);

  cur = LayerNorm(ctx, x1, 130);
  cur = ggml_gelu(ctx, linear(cur, kState, kMlp, 132, true));
  ggml_tensor* out = ggml_add(ctx, linear(cur, kMlp, kState, 134, true), x1);
  ggml_set_name(out, "out");
  EXPECT_TRUE(ggml_build_forward_expand(graph, out));
  return out;
}

HWY_BEFORE_TEST(GraphComputeBlockTest);

TEST_P(GraphComputeBlockTest, AttentionMlpBlockMatchesReference) {
  test::ExpectDispatchedTo(GetParam());
  Ctx c;
  ggml_cgraph* graph = ggml_new_graph(c.ctx);
  ggml_tensor* out = BuildBlock(c.ctx, graph);
  ASSERT_NE(out, nullptr) << ggml_last_error();
  // RunAndReference rebuilds the graph of `out`, which reaches the cache writes only through the
  // cache leaves; so run the full graph here: threads first, then the reference.
  std::vector<uint32_t> baseline;
  std::vector<float> exec;
  for (int nth : test::ThreadCounts()) {
    ASSERT_EQ(Exec().Run(graph, nth), GGML_STATUS_SUCCESS) << ggml_last_error();
    if (nth == 1) {
      baseline = test::Bits(out);
      exec = test::Values(out);
    } else {
      EXPECT_EQ(test::Bits(out), baseline) << nth << " threads differ from 1";
    }
  }
  ASSERT_TRUE(ggml_ref_graph_compute(graph)) << ggml_last_error();
  // Differences come from f32 summation order and, rarely, a cached K/V value rounding to the
  // neighbouring f16 (2^-11 relative) because its f32 input differed in the last bit.
  test::Outcome o{exec, test::Values(out)};
  test::ExpectClose(o, 2e-4, 2e-4, "block output");
  double max_abs = 0.0;
  for (float v : o.ref) max_abs = std::max(max_abs, static_cast<double>(fabsf(v)));
  EXPECT_GT(max_abs, 0.5);  // the block produced real values, not zeros
}

// After planning (and one warm-up compute, which may initialize run-time dispatch), computing
// allocates nothing on any thread.
TEST(GraphComputeAllocTest, NoHeapAllocationDuringCompute) {
  if (!ggml_testing::AllocCounter::Supported()) GTEST_SKIP() << "allocation counting unsupported in this build";
  Ctx c;
  ggml_cgraph* graph = ggml_new_graph(c.ctx);
  ggml_tensor* out = BuildBlock(c.ctx, graph);
  ASSERT_NE(out, nullptr);
  // A quantized mul_mat too (activations quantized into the work buffer).
  ggml_tensor* wq = RandomTensor(c.ctx, GGML_TYPE_Q4_0, {kState, 96}, 140);
  ASSERT_TRUE(ggml_build_forward_expand(graph, ggml_mul_mat(c.ctx, wq, out)));
  // Warm up with every thread count first: the pool's workers must have started (a starting
  // thread's TLS setup goes through malloc under ASan) before any count begins.
  for (int nth : test::ThreadCounts()) {
    ggml_cplan plan = ggml_graph_plan(graph, nth, Exec().pool());
    std::vector<uint8_t> work(plan.work_size);
    plan.work_data = work.data();
    ASSERT_EQ(ggml_graph_compute(graph, &plan), GGML_STATUS_SUCCESS) << ggml_last_error();
  }
  for (int nth : test::ThreadCounts()) {
    ggml_cplan plan = ggml_graph_plan(graph, nth, Exec().pool());
    std::vector<uint8_t> work(plan.work_size);
    plan.work_data = work.data();
    ASSERT_EQ(ggml_graph_compute(graph, &plan), GGML_STATUS_SUCCESS) << ggml_last_error();
    ggml_testing::AllocCounter::Start();
    const ggml_status status = ggml_graph_compute(graph, &plan);
    const int64_t allocations = ggml_testing::AllocCounter::Stop();
    ASSERT_EQ(status, GGML_STATUS_SUCCESS) << ggml_last_error();
    EXPECT_EQ(allocations, 0) << nth << " threads";
  }
}

TEST(GraphComputePlanTest, WorkSizeFollowsTheMatMulLayout) {
  Ctx c;
  ggml_tensor* a = RandomTensor(c.ctx, GGML_TYPE_F32, {64, 8}, 1);
  ggml_tensor* b = RandomTensor(c.ctx, GGML_TYPE_F32, {64, 5}, 2);
  ggml_cgraph* g = ggml_new_graph(c.ctx);
  ASSERT_TRUE(ggml_build_forward_expand(g, ggml_add(c.ctx, a, a)));
  EXPECT_EQ(ggml_graph_plan(g, 4, nullptr).work_size, 0u);  // no MUL_MAT: no work buffer

  const size_t per_thread = (MulMatWorkSize() + 63) / 64 * 64;
  ggml_cgraph* gf = ggml_new_graph(c.ctx);
  ASSERT_TRUE(ggml_build_forward_expand(gf, ggml_mul_mat(c.ctx, a, b)));
  // F32 a and contiguous F32 b: the kernel's scratch per thread, plus 64 bytes of alignment slack.
  EXPECT_EQ(ggml_graph_plan(gf, 1, nullptr).work_size, per_thread + 64);
  EXPECT_EQ(ggml_graph_plan(gf, 3, nullptr).work_size, 3 * per_thread + 64);
  // F16 b: also the 5 b rows as F32 (5 * 64 * 4 = 1280 bytes, a multiple of 64).
  ggml_cgraph* gh = ggml_new_graph(c.ctx);
  ASSERT_TRUE(ggml_build_forward_expand(gh, ggml_mul_mat(c.ctx, a, RandomTensor(c.ctx, GGML_TYPE_F16, {64, 5}, 3))));
  EXPECT_EQ(ggml_graph_plan(gh, 2, nullptr).work_size, 1280 + 2 * per_thread + 64);
  // Q4_0 a: 5 b rows as Q8_0 (5 * 2 blocks * 34 bytes = 340 -> 384) plus one F32 row per thread
  // (256 bytes).
  ggml_cgraph* gq = ggml_new_graph(c.ctx);
  ASSERT_TRUE(ggml_build_forward_expand(gq, ggml_mul_mat(c.ctx, RandomTensor(c.ctx, GGML_TYPE_Q4_0, {64, 8}, 4), b)));
  EXPECT_EQ(ggml_graph_plan(gq, 2, nullptr).work_size, 384 + 2 * 256 + 64);
}

std::string LastError() { return ggml_last_error(); }

TEST(GraphComputeErrorTest, BadPlansAreRejected) {
  Ctx c;
  ggml_tensor* a = RandomTensor(c.ctx, GGML_TYPE_F32, {64, 8}, 1);
  ggml_tensor* b = RandomTensor(c.ctx, GGML_TYPE_F32, {64, 5}, 2);
  ggml_cgraph* g = ggml_new_graph(c.ctx);
  ASSERT_TRUE(ggml_build_forward_expand(g, ggml_mul_mat(c.ctx, a, b)));
  ggml_cplan plan = ggml_graph_plan(g, 2, nullptr);
  std::vector<uint8_t> work(plan.work_size);
  plan.work_data = work.data();
  EXPECT_EQ(ggml_graph_compute(g, &plan), GGML_STATUS_FAILED);  // 2 threads, no pool
  EXPECT_NE(LastError().find("n_threads 2 needs a thread pool"), std::string::npos) << LastError();
  plan.threadpool = Exec().pool();
  plan.n_threads = 9;
  EXPECT_EQ(ggml_graph_compute(g, &plan), GGML_STATUS_FAILED);
  EXPECT_NE(LastError().find("(pool: 8)"), std::string::npos) << LastError();
  plan.n_threads = 2;
  plan.work_size -= 1;
  EXPECT_EQ(ggml_graph_compute(g, &plan), GGML_STATUS_FAILED);
  EXPECT_NE(LastError().find("needs " + std::to_string(plan.work_size + 1) + " bytes of work buffer"),
            std::string::npos)
      << LastError();
  plan.work_size += 1;
  plan.work_data = nullptr;
  EXPECT_EQ(ggml_graph_compute(g, &plan), GGML_STATUS_FAILED);
  EXPECT_EQ(ggml_graph_compute(nullptr, &plan), GGML_STATUS_FAILED);
  EXPECT_EQ(ggml_graph_compute(g, nullptr), GGML_STATUS_FAILED);
}

TEST(GraphComputeErrorTest, UnsupportedNodesAreNamedBeforeAnythingRuns) {
  Ctx c;
  ggml_tensor* x = RandomTensor(c.ctx, GGML_TYPE_F32, {64, 3}, 1);
  ggml_tensor* first = ggml_scale(c.ctx, x, 2.0f);
  ggml_tensor* w = RandomTensor(c.ctx, GGML_TYPE_Q8_1, {64, 4}, 2);  // Q8_1 weights have no vec_dot
  ggml_tensor* mm = ggml_mul_mat(c.ctx, w, first);
  ggml_set_name(mm, "logits");
  ggml_cgraph* g = ggml_new_graph(c.ctx);
  ASSERT_TRUE(ggml_build_forward_expand(g, mm));
  memset(first->data, 0, ggml_nbytes(first));
  EXPECT_EQ(Exec().Run(g, 2), GGML_STATUS_FAILED);
  EXPECT_NE(LastError().find("node 1 'logits' (MUL_MAT): a has type q8_1, which has no vec_dot"), std::string::npos)
      << LastError();
  EXPECT_EQ(ggml_get_f32_nd(first, 0, 0, 0, 0), 0.0f);  // checked before running: node 0 did not run

  // A node without data (metadata-only context, nothing allocated).
  ggml_context* meta = ggml_init({1 << 20, nullptr, true});
  ggml_tensor* m = ggml_add(meta, ggml_new_tensor_1d(meta, GGML_TYPE_F32, 4), ggml_new_tensor_1d(meta, GGML_TYPE_F32, 4));
  ggml_set_name(m, "sum");
  ggml_cgraph* gm = ggml_new_graph(meta);
  ASSERT_TRUE(ggml_build_forward_expand(gm, m));
  EXPECT_EQ(Exec().Run(gm, 1), GGML_STATUS_FAILED);
  EXPECT_NE(LastError().find("node 0 'sum' (ADD): result has no data"), std::string::npos) << LastError();
  ggml_free(meta);
}

TEST(GraphComputeErrorTest, GetRowsIndexOutOfRangeStopsAtThatNode) {
  Ctx c;
  ggml_tensor* table = RandomTensor(c.ctx, GGML_TYPE_F16, {8, 4}, 1);
  ggml_tensor* x = RandomTensor(c.ctx, GGML_TYPE_F32, {8, 2}, 2);
  ggml_tensor* idx = ggml_new_tensor_1d(c.ctx, GGML_TYPE_I32, 2);
  ggml_set_i32_1d(idx, 0, 1);
  ggml_set_i32_1d(idx, 1, 9);
  ggml_tensor* before = ggml_scale(c.ctx, x, 3.0f);
  ggml_tensor* rows = ggml_get_rows(c.ctx, table, idx);
  ggml_set_name(rows, "tok_emb");
  ggml_tensor* after = ggml_add(c.ctx, before, rows);
  ggml_cgraph* g = ggml_new_graph(c.ctx);
  ASSERT_TRUE(ggml_build_forward_expand(g, after));
  ASSERT_EQ(g->nodes[0], before);
  memset(after->data, 0x7F, ggml_nbytes(after));
  for (int nth : test::ThreadCounts()) {
    EXPECT_EQ(Exec().Run(g, nth), GGML_STATUS_FAILED);
    EXPECT_NE(LastError().find("node 1 'tok_emb' (GET_ROWS): index 9 at [1, 0] is outside [0, 4)"), std::string::npos)
        << LastError();
    EXPECT_EQ(ggml_get_f32_nd(before, 0, 0, 0, 0), 3.0f * ggml_get_f32_nd(x, 0, 0, 0, 0));  // node 0 ran
    uint32_t bits;
    memcpy(&bits, after->data, 4);
    EXPECT_EQ(bits, 0x7F7F7F7Fu);  // node 2 did not
  }
}

struct AbortState {
  int calls = 0;
};
bool AbortAfterFirst(void* data) { return ++static_cast<AbortState*>(data)->calls >= 1; }

TEST(GraphComputeErrorTest, AbortCallbackStopsBetweenNodes) {
  Ctx c;
  ggml_tensor* x = RandomTensor(c.ctx, GGML_TYPE_F32, {8, 2}, 1);
  ggml_tensor* n1 = ggml_scale(c.ctx, x, 2.0f);
  ggml_tensor* n2 = ggml_scale(c.ctx, n1, 2.0f);
  ggml_cgraph* g = ggml_new_graph(c.ctx);
  ASSERT_TRUE(ggml_build_forward_expand(g, n2));
  memset(n2->data, 0, ggml_nbytes(n2));
  AbortState state;
  ggml_cplan plan = ggml_graph_plan(g, 3, Exec().pool());
  plan.abort_callback = AbortAfterFirst;
  plan.abort_callback_data = &state;
  EXPECT_EQ(ggml_graph_compute(g, &plan), GGML_STATUS_ABORTED);
  EXPECT_EQ(state.calls, 1);
  EXPECT_EQ(ggml_get_f32_nd(n1, 1, 1, 0, 0), 2.0f * ggml_get_f32_nd(x, 1, 1, 0, 0));
  EXPECT_EQ(ggml_get_f32_nd(n2, 1, 1, 0, 0), 0.0f);
}

TEST(GraphComputeProfileTest, CountsNodesPerOpAndTimesEachThread) {
  Ctx c;
  ggml_tensor* x = RandomTensor(c.ctx, GGML_TYPE_F32, {64, 12}, 1);
  ggml_tensor* n1 = ggml_scale(c.ctx, x, 2.0f);
  ggml_tensor* n2 = ggml_add(c.ctx, ggml_reshape_2d(c.ctx, n1, 64, 12), x);  // the reshape is a view: not run
  ggml_tensor* n3 = ggml_scale(c.ctx, n2, 0.5f);
  ggml_cgraph* g = ggml_new_graph(c.ctx);
  ASSERT_TRUE(ggml_build_forward_expand(g, n3));
  ggml_cpu_profile prof;
  memset(&prof, 0, sizeof(prof));
  constexpr int kThreads = 3;
  ggml_cplan plan = ggml_graph_plan(g, kThreads, Exec().pool());
  EXPECT_EQ(plan.profile, nullptr);
  plan.profile = &prof;
  ASSERT_EQ(ggml_graph_compute(g, &plan), GGML_STATUS_SUCCESS) << ggml_last_error();
  ASSERT_EQ(ggml_graph_compute(g, &plan), GGML_STATUS_SUCCESS) << ggml_last_error();
  EXPECT_EQ(ggml_get_f32_nd(n3, 5, 7, 0, 0), 1.5f * ggml_get_f32_nd(x, 5, 7, 0, 0));

  EXPECT_EQ(prof.n_computes, 2);
  for (int op = 0; op < GGML_OP_COUNT; ++op) {
    const int64_t want = op == GGML_OP_SCALE ? 4 : op == GGML_OP_ADD ? 2 : 0;
    EXPECT_EQ(prof.n_nodes[op], want) << ggml_op_name(static_cast<ggml_op>(op));
    for (int ith = 0; ith < GGML_CPU_PROFILE_MAX_THREADS; ++ith) {
      EXPECT_GE(prof.busy_ns[op][ith], 0);
      EXPECT_GE(prof.wait_ns[op][ith], 0);
      if (want == 0 || ith >= kThreads) {  // ops not in the graph, threads not in the run
        EXPECT_EQ(prof.busy_ns[op][ith] + prof.wait_ns[op][ith], 0) << ggml_op_name(static_cast<ggml_op>(op)) << ith;
      }
    }
  }
  // Every run thread spent time on each op (at least its barrier), and thread 0's time is part of
  // the wall time.
  int64_t thread0 = 0;
  for (ggml_op op : {GGML_OP_SCALE, GGML_OP_ADD}) {
    for (int ith = 0; ith < kThreads; ++ith) EXPECT_GT(prof.busy_ns[op][ith] + prof.wait_ns[op][ith], 0);
    thread0 += prof.busy_ns[op][0] + prof.wait_ns[op][0];
  }
  EXPECT_GE(prof.wall_ns, thread0);
}

}  // namespace
}  // namespace ggml_cpu
