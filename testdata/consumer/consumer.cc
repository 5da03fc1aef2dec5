// Uses @ggml_whisper//ggml from another workspace: a context, a tensor, a view and a graph.
// Prints one line that tools/test_consumer.sh compares with the values computed there:
//   consumer: sum=138 nbytes=48 view=43 nodes=2 overhead=368
#include <stdio.h>

#include "ggml/ggml.h"
#include "ggml/graph.h"
#include "ggml/ops.h"

int main() {
  struct ggml_init_params params = {1 << 20, NULL, false};
  struct ggml_context* ctx = ggml_init(params);
  if (ctx == NULL) {
    fprintf(stderr, "consumer: %s\n", ggml_last_error());
    return 1;
  }
  // a: F32 [4, 3], element (i0, i1) = i0 + 10 * i1.
  struct ggml_tensor* a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
  if (a == NULL) {
    fprintf(stderr, "consumer: %s\n", ggml_last_error());
    ggml_free(ctx);
    return 1;
  }
  float sum = 0.0f;
  for (int i1 = 0; i1 < 3; ++i1) {
    for (int i0 = 0; i0 < 4; ++i0) ggml_set_f32_nd(a, i0, i1, 0, 0, (float)(i0 + 10 * i1));
  }
  for (int i1 = 0; i1 < 3; ++i1) {
    for (int i0 = 0; i0 < 4; ++i0) sum += ggml_get_f32_nd(a, i0, i1, 0, 0);
  }
  // A view of the 2 elements starting at (1, 2): 21 and 22.
  struct ggml_tensor* v = ggml_view_1d(ctx, a, 2, 2 * a->nb[1] + 1 * a->nb[0]);
  struct ggml_tensor* y = ggml_scale(ctx, ggml_add(ctx, a, a), 0.5f);
  struct ggml_cgraph* g = ggml_new_graph(ctx);
  if (v == NULL || y == NULL || g == NULL || !ggml_build_forward_expand(g, y)) {
    fprintf(stderr, "consumer: %s\n", ggml_last_error());
    ggml_free(ctx);
    return 1;
  }
  const float view_sum = ggml_get_f32_nd(v, 0, 0, 0, 0) + ggml_get_f32_nd(v, 1, 0, 0, 0);
  printf("consumer: sum=%g nbytes=%zu view=%g nodes=%d overhead=%zu\n", sum, ggml_nbytes(a), view_sum,
         ggml_graph_n_nodes(g), ggml_tensor_overhead());
  ggml_free(ctx);
  return 0;
}
