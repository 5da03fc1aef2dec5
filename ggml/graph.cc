// Graph construction by depth-first search from the result (ggml.c's ggml_visit_parents): sources
// are visited in src[] order before the tensor itself, so nodes come out in an order where every
// source precedes its consumers.
#include "ggml/graph.h"

#include <stdint.h>
#include <string.h>

#include "ggml/internal.h"

namespace {

bool IsPrime(size_t n) {
  if (n < 2) return false;
  for (size_t d = 2; d * d <= n; ++d) {
    if (n % d == 0) return false;
  }
  return true;
}

size_t VisitedSlots(int size) {
  size_t n = 2 * static_cast<size_t>(size) + 1;
  while (!IsPrime(n)) ++n;
  return n;
}

size_t GraphBytes(int size) {
  const size_t slots = VisitedSlots(size);
  return sizeof(ggml_cgraph) + 2 * static_cast<size_t>(size) * sizeof(ggml_tensor*) +
         slots * sizeof(const ggml_tensor*);
}

size_t Hash(const ggml_tensor* t) { return static_cast<size_t>(reinterpret_cast<uintptr_t>(t) >> 4); }

enum class Insert { kNew, kPresent, kFull };

// Inserts t into the visited set. Probing is bounded: the set can fill up while one expand is
// still on its way down (tensors on the DFS path are in the set but not yet in nodes/leafs).
Insert InsertVisited(ggml_cgraph* g, const ggml_tensor* t) {
  size_t i = Hash(t) % g->visited_size;
  for (size_t probes = 0; probes < g->visited_size; ++probes) {
    if (g->visited[i] == nullptr) {
      g->visited[i] = t;
      return Insert::kNew;
    }
    if (g->visited[i] == t) return Insert::kPresent;
    i = (i + 1) % g->visited_size;
  }
  return Insert::kFull;
}

// After a failed expand the visited set holds tensors that never made it into nodes/leafs;
// rebuild it from what the graph really holds, so that a later expand does not skip them.
void RebuildVisited(ggml_cgraph* g) {
  memset(g->visited, 0, g->visited_size * sizeof(*g->visited));
  for (int i = 0; i < g->n_leafs; ++i) InsertVisited(g, g->leafs[i]);
  for (int i = 0; i < g->n_nodes; ++i) InsertVisited(g, g->nodes[i]);
}

bool Visit(ggml_cgraph* g, ggml_tensor* t) {
  const Insert inserted = InsertVisited(g, t);
  if (inserted == Insert::kPresent) return true;
  if (inserted == Insert::kFull) {
    ggml_set_error("ggml_build_forward_expand: graph holds at most %d nodes and %d leafs; '%s' (%s) and its "
                   "sources do not fit (use ggml_new_graph_custom with a larger size)",
                   g->size, g->size, t->name, ggml_op_name(t->op));
    return false;
  }
  for (int i = 0; i < GGML_MAX_SRC; ++i) {
    if (t->src[i] != nullptr && !Visit(g, t->src[i])) return false;
  }
  if (t->view_src != nullptr && !Visit(g, t->view_src)) return false;
  if (t->op == GGML_OP_NONE) {  // inputs, weights, constants
    if (g->n_leafs >= g->size) {
      ggml_set_error("ggml_build_forward_expand: graph holds at most %d leafs; '%s' does not fit (use "
                     "ggml_new_graph_custom with a larger size)",
                     g->size, t->name);
      return false;
    }
    g->leafs[g->n_leafs++] = t;
  } else {
    if (g->n_nodes >= g->size) {
      ggml_set_error("ggml_build_forward_expand: graph holds at most %d nodes; '%s' (%s) does not fit (use "
                     "ggml_new_graph_custom with a larger size)",
                     g->size, t->name, ggml_op_name(t->op));
      return false;
    }
    g->nodes[g->n_nodes++] = t;
  }
  return true;
}

}  // namespace

size_t ggml_graph_overhead_custom(int size) { return GGML_OBJECT_SIZE + GGML_PAD(GraphBytes(size), GGML_MEM_ALIGN); }
size_t ggml_graph_overhead(void) { return ggml_graph_overhead_custom(GGML_DEFAULT_GRAPH_SIZE); }

ggml_cgraph* ggml_new_graph_custom(ggml_context* ctx, int size) {
  if (size < 1) {
    ggml_set_error("ggml_new_graph_custom: size %d must be at least 1", size);
    return nullptr;
  }
  void* mem = ggml_internal_new_object(ctx, GGML_INTERNAL_OBJECT_GRAPH, GraphBytes(size), "a graph");
  if (mem == nullptr) return nullptr;
  auto* g = static_cast<ggml_cgraph*>(mem);
  auto** arrays = reinterpret_cast<ggml_tensor**>(g + 1);
  g->size = size;
  g->n_nodes = 0;
  g->n_leafs = 0;
  g->nodes = arrays;
  g->leafs = arrays + size;
  g->visited_size = VisitedSlots(size);
  g->visited = const_cast<const ggml_tensor**>(arrays + 2 * static_cast<size_t>(size));
  memset(g->visited, 0, g->visited_size * sizeof(*g->visited));
  return g;
}

ggml_cgraph* ggml_new_graph(ggml_context* ctx) { return ggml_new_graph_custom(ctx, GGML_DEFAULT_GRAPH_SIZE); }

bool ggml_build_forward_expand(ggml_cgraph* graph, ggml_tensor* tensor) {
  if (graph == nullptr || tensor == nullptr) {
    ggml_set_error("ggml_build_forward_expand: %s is NULL (did an op constructor fail? last error above)",
                   graph == nullptr ? "graph" : "tensor");
    return false;
  }
  if (!Visit(graph, tensor)) {
    RebuildVisited(graph);
    return false;
  }
  return true;
}

int ggml_graph_n_nodes(const ggml_cgraph* graph) { return graph->n_nodes; }

ggml_tensor* ggml_graph_node(ggml_cgraph* graph, int i) {
  if (i < 0) i += graph->n_nodes;
  if (i < 0 || i >= graph->n_nodes) return nullptr;
  return graph->nodes[i];
}

ggml_tensor* ggml_graph_get_tensor(const ggml_cgraph* graph, const char* name) {
  for (int i = 0; i < graph->n_leafs; ++i) {
    if (strcmp(graph->leafs[i]->name, name) == 0) return graph->leafs[i];
  }
  for (int i = 0; i < graph->n_nodes; ++i) {
    if (strcmp(graph->nodes[i]->name, name) == 0) return graph->nodes[i];
  }
  return nullptr;
}

void ggml_graph_clear(ggml_cgraph* graph) {
  graph->n_nodes = 0;
  graph->n_leafs = 0;
  memset(graph->visited, 0, graph->visited_size * sizeof(*graph->visited));
}
