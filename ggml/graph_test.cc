// Graph construction on random DAGs: the set of nodes and leafs is compared with a reachability
// search done here, the order with the src-before-consumer rule and with ggml's depth-first
// post-order (ggml.c's ggml_visit_parents), restated independently below.
#include "ggml/graph.h"

#include <stdint.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "ggml/ggml.h"
#include "ggml/ops.h"
#include "ggml/test_util.h"
#include "gtest/gtest.h"

namespace {

using ggml_test::ErrorMentions;
using ggml_test::LogCapture;

// A DAG of F32 [1] tensors whose ops and src[] slots are set by hand (any op != NONE is a node;
// up to GGML_MAX_SRC sources, with holes), plus real views (view_src set by ggml_view_1d).
struct RandomDag {
  std::vector<ggml_tensor*> tensors;  // creation order: every source precedes its consumers
};

RandomDag MakeRandomDag(ggml_context* ctx, std::mt19937& rng) {
  RandomDag dag;
  const int n_leafs = std::uniform_int_distribution<int>(1, 8)(rng);
  const int n_ops = std::uniform_int_distribution<int>(1, 70)(rng);
  for (int i = 0; i < n_leafs; ++i) {
    dag.tensors.push_back(ggml_format_name(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1), "leaf%d", i));
  }
  std::uniform_int_distribution<int> n_src_dist(1, 4);
  std::uniform_int_distribution<int> slot_dist(0, GGML_MAX_SRC - 1);
  std::uniform_int_distribution<int> kind_dist(0, 9);
  std::uniform_int_distribution<int> op_dist(GGML_OP_DUP, GGML_OP_COUNT - 1);
  for (int i = 0; i < n_ops; ++i) {
    // Prefer recent tensors so that the DAGs get deep, not only wide.
    const int n = static_cast<int>(dag.tensors.size());
    std::uniform_int_distribution<int> pick(std::max(0, n - 12), n - 1);
    std::uniform_int_distribution<int> pick_any(0, n - 1);
    ggml_tensor* t;
    if (kind_dist(rng) == 0) {
      t = ggml_view_1d(ctx, dag.tensors[pick(rng)], 1, 0);  // op VIEW, src[0], view_src
    } else {
      t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
      t->op = static_cast<ggml_op>(op_dist(rng));
      const int n_src = n_src_dist(rng);
      for (int s = 0; s < n_src; ++s) {
        t->src[slot_dist(rng)] = dag.tensors[s == 0 ? pick(rng) : pick_any(rng)];
      }
    }
    ggml_format_name(t, "op%d", i);
    dag.tensors.push_back(t);
  }
  return dag;
}

std::vector<ggml_tensor*> Sources(const ggml_tensor* t) {
  std::vector<ggml_tensor*> s;
  for (int i = 0; i < GGML_MAX_SRC; ++i) {
    if (t->src[i] != nullptr) s.push_back(t->src[i]);
  }
  if (t->view_src != nullptr) s.push_back(t->view_src);
  return s;
}

void CollectReachable(ggml_tensor* t, std::set<ggml_tensor*>* seen) {
  if (!seen->insert(t).second) return;
  for (ggml_tensor* s : Sources(t)) CollectReachable(s, seen);
}

// ggml's order: depth first, sources in src[] order then view_src, a tensor after its sources.
void PostOrder(ggml_tensor* t, std::set<ggml_tensor*>* seen, std::vector<ggml_tensor*>* nodes,
               std::vector<ggml_tensor*>* leafs) {
  if (!seen->insert(t).second) return;
  for (ggml_tensor* s : Sources(t)) PostOrder(s, seen, nodes, leafs);
  (t->op == GGML_OP_NONE ? leafs : nodes)->push_back(t);
}

class GraphTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = ggml_init({4 << 20, nullptr, false});
    ASSERT_NE(ctx_, nullptr);
  }
  void TearDown() override { ggml_free(ctx_); }

  LogCapture log_;
  ggml_context* ctx_ = nullptr;
};

TEST_F(GraphTest, RandomDagsComeOutInTopologicalOrder) {
  std::mt19937 rng(20240601);
  int n_nodes_total = 0;
  for (int dag_index = 0; dag_index < 250; ++dag_index) {
    SCOPED_TRACE(dag_index);
    ggml_reset(ctx_);
    RandomDag dag = MakeRandomDag(ctx_, rng);
    ggml_cgraph* g = ggml_new_graph_custom(ctx_, 128);
    ASSERT_NE(g, nullptr);
    // Expand from 1..3 roots (the last tensor and random others), as a decoder expands logits
    // and the KV-cache copies into one graph.
    std::vector<ggml_tensor*> roots = {dag.tensors.back()};
    const int n_extra = std::uniform_int_distribution<int>(0, 2)(rng);
    for (int i = 0; i < n_extra; ++i) {
      roots.push_back(dag.tensors[std::uniform_int_distribution<size_t>(0, dag.tensors.size() - 1)(rng)]);
    }
    std::set<ggml_tensor*> reachable;
    std::set<ggml_tensor*> seen;
    std::vector<ggml_tensor*> want_nodes, want_leafs;
    for (ggml_tensor* root : roots) {
      ASSERT_TRUE(ggml_build_forward_expand(g, root)) << ggml_last_error();
      CollectReachable(root, &reachable);
      PostOrder(root, &seen, &want_nodes, &want_leafs);
    }

    // Each reachable tensor exactly once; leafs are exactly the op NONE ones.
    std::map<ggml_tensor*, int> node_index;
    std::set<ggml_tensor*> in_graph;
    for (int i = 0; i < g->n_nodes; ++i) {
      ggml_tensor* t = g->nodes[i];
      EXPECT_NE(t->op, GGML_OP_NONE) << t->name;
      EXPECT_TRUE(node_index.emplace(t, i).second) << t->name << " appears twice";
      EXPECT_TRUE(in_graph.insert(t).second);
    }
    for (int i = 0; i < g->n_leafs; ++i) {
      ggml_tensor* t = g->leafs[i];
      EXPECT_EQ(t->op, GGML_OP_NONE) << t->name;
      EXPECT_TRUE(in_graph.insert(t).second) << t->name << " appears twice";
    }
    EXPECT_EQ(in_graph, reachable);
    // Every source precedes its consumer.
    for (int i = 0; i < g->n_nodes; ++i) {
      for (ggml_tensor* s : Sources(g->nodes[i])) {
        ASSERT_TRUE(in_graph.count(s)) << s->name << " missing";
        if (s->op != GGML_OP_NONE) {
          EXPECT_LT(node_index[s], i) << s->name << " comes after its consumer " << g->nodes[i]->name;
        }
      }
    }
    // And the order is ggml's depth-first post-order.
    EXPECT_EQ(std::vector<ggml_tensor*>(g->nodes, g->nodes + g->n_nodes), want_nodes);
    EXPECT_EQ(std::vector<ggml_tensor*>(g->leafs, g->leafs + g->n_leafs), want_leafs);
    n_nodes_total += g->n_nodes;
  }
  EXPECT_GT(n_nodes_total, 250 * 10);  // the DAGs were not trivial
  EXPECT_TRUE(log_.messages().empty());
}

TEST_F(GraphTest, RealOpsAndViews) {
  ggml_tensor* w = ggml_set_name(ggml_new_tensor_2d(ctx_, GGML_TYPE_F16, 64, 32), "w");
  ggml_tensor* x = ggml_set_name(ggml_new_tensor_2d(ctx_, GGML_TYPE_F32, 64, 10), "x");
  ggml_tensor* bias = ggml_set_name(ggml_new_tensor_1d(ctx_, GGML_TYPE_F32, 32), "bias");
  ggml_tensor* y = ggml_set_name(ggml_mul_mat(ctx_, w, x), "y");    // [32, 10]
  ggml_tensor* z = ggml_set_name(ggml_add(ctx_, y, bias), "z");      // [32, 10]
  ggml_tensor* zt = ggml_set_name(ggml_transpose(ctx_, z), "zt");    // view of node z
  ggml_tensor* out = ggml_set_name(ggml_cont(ctx_, zt), "out");
  ggml_cgraph* g = ggml_new_graph(ctx_);
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(ggml_build_forward_expand(g, out));
  ASSERT_EQ(ggml_graph_n_nodes(g), 4);
  EXPECT_EQ(g->nodes[0], y);
  EXPECT_EQ(g->nodes[1], z);
  EXPECT_EQ(g->nodes[2], zt);
  EXPECT_EQ(g->nodes[3], out);
  ASSERT_EQ(g->n_leafs, 3);
  EXPECT_EQ(g->leafs[0], w);
  EXPECT_EQ(g->leafs[1], x);
  EXPECT_EQ(g->leafs[2], bias);

  EXPECT_EQ(ggml_graph_node(g, -1), out);
  EXPECT_EQ(ggml_graph_node(g, -4), y);
  EXPECT_EQ(ggml_graph_node(g, 0), y);
  EXPECT_EQ(ggml_graph_node(g, 3), out);
  EXPECT_EQ(ggml_graph_node(g, 4), nullptr);
  EXPECT_EQ(ggml_graph_node(g, -5), nullptr);
  EXPECT_EQ(ggml_graph_get_tensor(g, "bias"), bias);
  EXPECT_EQ(ggml_graph_get_tensor(g, "zt"), zt);
  EXPECT_EQ(ggml_graph_get_tensor(g, "nope"), nullptr);

  // Expanding again adds nothing; clearing and re-expanding gives the same graph.
  ASSERT_TRUE(ggml_build_forward_expand(g, z));
  EXPECT_EQ(ggml_graph_n_nodes(g), 4);
  ggml_graph_clear(g);
  EXPECT_EQ(ggml_graph_n_nodes(g), 0);
  EXPECT_EQ(g->n_leafs, 0);
  EXPECT_EQ(ggml_graph_node(g, -1), nullptr);
  ASSERT_TRUE(ggml_build_forward_expand(g, out));
  EXPECT_EQ(ggml_graph_node(g, -1), out);
  EXPECT_EQ(ggml_graph_n_nodes(g), 4);
}

TEST_F(GraphTest, OverflowingNodesReturnsFalseNamingTheCapacity) {
  ggml_tensor* t = ggml_set_name(ggml_new_tensor_1d(ctx_, GGML_TYPE_F32, 4), "input");
  std::vector<ggml_tensor*> chain;
  for (int i = 0; i < 10; ++i) {
    t = ggml_format_name(ggml_scale(ctx_, t, 2.0f), "scaled%d", i);
    chain.push_back(t);
  }
  ggml_cgraph* g = ggml_new_graph_custom(ctx_, 5);
  ASSERT_NE(g, nullptr);
  EXPECT_FALSE(ggml_build_forward_expand(g, chain.back()));
  EXPECT_TRUE(ErrorMentions(log_, {"at most 5 nodes", "'scaled5'", "SCALE"}));
  // The graph keeps what fit: the input and the first five ops, in order.
  ASSERT_EQ(ggml_graph_n_nodes(g), 5);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(g->nodes[i], chain[i]);
  EXPECT_EQ(g->n_leafs, 1);
  // What is in the graph can still be expanded (nothing to add).
  EXPECT_TRUE(ggml_build_forward_expand(g, chain[3]));
}

TEST_F(GraphTest, OverflowingLeafsReturnsFalseNamingTheCapacity) {
  ggml_tensor* sum = ggml_new_tensor_1d(ctx_, GGML_TYPE_F32, 4);
  for (int i = 1; i < 4; ++i) {
    ggml_tensor* leaf = ggml_format_name(ggml_new_tensor_1d(ctx_, GGML_TYPE_F32, 4), "leaf%d", i);
    sum = ggml_add(ctx_, sum, leaf);
  }
  ggml_cgraph* g = ggml_new_graph_custom(ctx_, 3);
  ASSERT_NE(g, nullptr);
  EXPECT_FALSE(ggml_build_forward_expand(g, sum));
  EXPECT_TRUE(ErrorMentions(log_, {"at most 3 leafs", "'leaf3'"}));
}

TEST_F(GraphTest, AFailedExpandIsNotRememberedAsDone) {
  ggml_tensor* l1 = ggml_set_name(ggml_new_tensor_1d(ctx_, GGML_TYPE_F32, 4), "l1");
  ggml_tensor* l2 = ggml_set_name(ggml_new_tensor_1d(ctx_, GGML_TYPE_F32, 4), "l2");
  ggml_tensor* l3 = ggml_set_name(ggml_new_tensor_1d(ctx_, GGML_TYPE_F32, 4), "l3");
  ggml_tensor* e = ggml_add(ctx_, l1, l2);
  ggml_tensor* w = ggml_scale(ctx_, e, 3.0f);
  ggml_tensor* d = ggml_set_name(ggml_add(ctx_, l3, w), "d");  // l3 first: it overflows the leafs
  ggml_cgraph* g = ggml_new_graph_custom(ctx_, 2);
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(ggml_build_forward_expand(g, e));  // leafs l1, l2 (full), node e
  EXPECT_FALSE(ggml_build_forward_expand(g, d));
  EXPECT_TRUE(ErrorMentions(log_, {"at most 2 leafs", "'l3'"}));
  ASSERT_TRUE(ggml_build_forward_expand(g, w));  // e is there: w fits as the second node
  EXPECT_EQ(ggml_graph_node(g, -1), w);
  // d and l3 were visited by the failed call but never added: trying again must fail again, not
  // report success with d missing from the graph.
  EXPECT_FALSE(ggml_build_forward_expand(g, d));
  EXPECT_EQ(ggml_graph_get_tensor(g, "d"), nullptr);
  EXPECT_EQ(ggml_graph_get_tensor(g, "l3"), nullptr);
}

TEST_F(GraphTest, TinyGraphFillsUpWithoutHanging) {
  // A graph of size 1 has 3 visited slots; a second expand fills them while descending.
  ggml_tensor* a = ggml_new_tensor_1d(ctx_, GGML_TYPE_F32, 4);
  ggml_tensor* b = ggml_scale(ctx_, a, 2.0f);
  ggml_tensor* c = ggml_new_tensor_1d(ctx_, GGML_TYPE_F32, 4);
  ggml_tensor* d = ggml_scale(ctx_, ggml_scale(ctx_, c, 2.0f), 3.0f);
  ggml_cgraph* g = ggml_new_graph_custom(ctx_, 1);
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(ggml_build_forward_expand(g, b));
  EXPECT_FALSE(ggml_build_forward_expand(g, d));
  EXPECT_TRUE(ErrorMentions(log_, {"at most 1 nodes"}));
  EXPECT_EQ(ggml_graph_n_nodes(g), 1);
  EXPECT_EQ(g->n_leafs, 1);
  EXPECT_FALSE(ggml_build_forward_expand(g, d));  // and again
}

TEST_F(GraphTest, GraphArenaAccountingAndErrors) {
  const size_t before = ggml_used_mem(ctx_);
  ggml_cgraph* g = ggml_new_graph_custom(ctx_, 100);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(ggml_used_mem(ctx_) - before, ggml_graph_overhead_custom(100));
  EXPECT_EQ(g->size, 100);
  // The arrays live in the arena right after the struct and do not overlap.
  EXPECT_EQ(reinterpret_cast<char*>(g->nodes), reinterpret_cast<char*>(g + 1));
  EXPECT_EQ(g->leafs, g->nodes + 100);
  EXPECT_GE(g->visited_size, 201u);
  EXPECT_GE(reinterpret_cast<char*>(g->visited), reinterpret_cast<char*>(g->leafs + 100));
  EXPECT_LE(reinterpret_cast<char*>(g->visited + g->visited_size),
            static_cast<char*>(ggml_get_mem_buffer(ctx_)) + ggml_used_mem(ctx_));
  EXPECT_GT(ggml_graph_overhead(), ggml_graph_overhead_custom(100));

  EXPECT_EQ(ggml_new_graph_custom(ctx_, 0), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"size 0"}));
  EXPECT_EQ(ggml_new_graph_custom(ctx_, -3), nullptr);
  EXPECT_FALSE(ggml_build_forward_expand(g, nullptr));
  EXPECT_TRUE(ErrorMentions(log_, {"tensor is NULL"}));
  EXPECT_FALSE(ggml_build_forward_expand(nullptr, ggml_new_tensor_1d(ctx_, GGML_TYPE_F32, 1)));
  EXPECT_TRUE(ErrorMentions(log_, {"graph is NULL"}));

  ggml_context* small = ggml_init({ggml_graph_overhead_custom(16) - 16, nullptr, false});
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(ggml_new_graph_custom(small, 16), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"a graph", "needed " + std::to_string(ggml_graph_overhead_custom(16))}));
  ggml_free(small);
}

}  // namespace
