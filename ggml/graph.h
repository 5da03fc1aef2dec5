// Computation graphs: the nodes (op results) and leafs (op NONE tensors: inputs, weights) that a
// result depends on, in topological order (every source before its consumers), each exactly once.
// Follows ggml's ggml_cgraph / ggml_build_forward_expand, except that exceeding the capacity
// returns false with a message instead of aborting. A graph lives in its context's arena.
#ifndef GGML_WHISPER_GGML_GRAPH_H_
#define GGML_WHISPER_GGML_GRAPH_H_

#include "ggml/ggml.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GGML_DEFAULT_GRAPH_SIZE 2048

struct ggml_cgraph {
  int size;     // capacity: the most nodes, and separately the most leafs
  int n_nodes;  // tensors with op != NONE, in execution order
  int n_leafs;  // tensors with op == NONE
  struct ggml_tensor** nodes;
  struct ggml_tensor** leafs;
  // Open-addressing set of the tensors already visited (2 * size + 1 slots, a prime).
  size_t visited_size;
  const struct ggml_tensor** visited;
};

// Arena bytes a graph of `size` needs (object header included): what ggml calls
// ggml_graph_overhead_custom.
size_t ggml_graph_overhead_custom(int size);
size_t ggml_graph_overhead(void);  // for GGML_DEFAULT_GRAPH_SIZE

// A graph with room for `size` nodes and `size` leafs, in ctx's arena. NULL with a message when
// size < 1 or the arena is full.
struct ggml_cgraph* ggml_new_graph_custom(struct ggml_context* ctx, int size);
struct ggml_cgraph* ggml_new_graph(struct ggml_context* ctx);  // GGML_DEFAULT_GRAPH_SIZE

// Adds `tensor` and everything it depends on (through src[], view_src) that is not yet in the
// graph. Returns false with a message naming the capacity when it does not fit (the graph keeps
// what was added before) or when tensor is NULL.
bool ggml_build_forward_expand(struct ggml_cgraph* graph, struct ggml_tensor* tensor);

int ggml_graph_n_nodes(const struct ggml_cgraph* graph);
// Node i; negative i counts from the end (-1 is the last node). NULL when out of range.
struct ggml_tensor* ggml_graph_node(struct ggml_cgraph* graph, int i);
// The node or leaf named `name`, or NULL.
struct ggml_tensor* ggml_graph_get_tensor(const struct ggml_cgraph* graph, const char* name);
// Empties the graph (capacity kept).
void ggml_graph_clear(struct ggml_cgraph* graph);

#ifdef __cplusplus
}
#endif

#endif  // GGML_WHISPER_GGML_GRAPH_H_
