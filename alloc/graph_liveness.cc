#include "alloc/graph_liveness.h"

#include <stdint.h>

#include <algorithm>
#include <unordered_map>

#include "absl/strings/str_format.h"

namespace alloc_testing {
namespace {

const ggml_tensor* Owner(const ggml_tensor* t) { return t->view_src != nullptr ? t->view_src : t; }

bool Pinned(const ggml_tensor* t) { return (t->flags & (GGML_TENSOR_FLAG_INPUT | GGML_TENSOR_FLAG_OUTPUT)) != 0; }

size_t Pad(size_t n, size_t a) { return (n + a - 1) / a * a; }

}  // namespace

bool OpCanInplace(ggml_op op) {
  return op == GGML_OP_ADD || op == GGML_OP_MUL || op == GGML_OP_SCALE || op == GGML_OP_DIAG_MASK_INF ||
         op == GGML_OP_SOFT_MAX || op == GGML_OP_RMS_NORM || op == GGML_OP_UNARY;
}

std::vector<TensorLife> ComputeLives(const ggml_cgraph* graph, ggml_backend_buffer_t buffer) {
  std::vector<TensorLife> lives;
  std::unordered_map<const ggml_tensor*, size_t> index;
  std::unordered_map<const ggml_tensor*, bool> used;  // read or written by some node
  auto add = [&](const ggml_tensor* t, int first) {
    if (t->view_src != nullptr) return;
    if (t->data != nullptr && (buffer == nullptr || t->buffer != buffer)) return;
    index[t] = lives.size();
    lives.push_back({t, first, first, ggml_nbytes(t)});
  };
  for (int i = 0; i < graph->n_leafs; ++i) add(graph->leafs[i], -1);
  for (int i = 0; i < graph->n_nodes; ++i) {
    const ggml_tensor* t = graph->nodes[i];
    add(t, (t->flags & GGML_TENSOR_FLAG_INPUT) != 0 ? -1 : i);
  }
  auto touch = [&](const ggml_tensor* t, int step) {
    auto it = index.find(Owner(t));
    if (it != index.end()) lives[it->second].last = std::max(lives[it->second].last, step);
  };
  for (int i = 0; i < graph->n_nodes; ++i) {
    const ggml_tensor* node = graph->nodes[i];
    for (const ggml_tensor* src : node->src) {
      if (src == nullptr) continue;
      touch(src, i);
      used[src] = true;
      used[Owner(src)] = true;
    }
    if (node->view_src != nullptr) touch(node, i);
  }
  const int end = graph->n_nodes;
  auto keep = [&](const ggml_tensor* t) { touch(t, end); };
  for (int k = 0; k < graph->n_leafs + graph->n_nodes; ++k) {
    const ggml_tensor* t = k < graph->n_leafs ? graph->leafs[k] : graph->nodes[k - graph->n_leafs];
    if (Pinned(t) || !used[t]) keep(t);
  }
  return lives;
}

size_t SumOfSizes(const std::vector<TensorLife>& lives, size_t alignment) {
  size_t sum = 0;
  for (const TensorLife& l : lives) sum += Pad(l.size, alignment);
  return sum;
}

size_t LiveBytesLowerBound(const ggml_cgraph* graph, const std::vector<TensorLife>& lives, size_t alignment) {
  std::unordered_map<const ggml_tensor*, const TensorLife*> life_of;
  for (const TensorLife& l : lives) life_of[l.tensor] = &l;
  size_t best = 0;
  for (int step = -1; step <= graph->n_nodes; ++step) {
    const ggml_tensor* node = step >= 0 && step < graph->n_nodes ? graph->nodes[step] : nullptr;
    // Node `step` may share the bytes of a src's owner whose life ends here (the in-place
    // exception of CheckPlacement); then it need not be counted.
    bool may_share = false;
    if (node != nullptr && OpCanInplace(node->op)) {
      for (const ggml_tensor* src : node->src) {
        if (src == nullptr || !ggml_are_same_layout(src, node)) continue;
        auto it = life_of.find(Owner(src));
        if (it != life_of.end() && it->second->last == step) may_share = true;
      }
    }
    size_t live = 0;
    for (const TensorLife& l : lives) {
      if (l.first > step || l.last < step) continue;
      if (l.tensor == node && may_share) continue;
      live += Pad(l.size, alignment);
    }
    best = std::max(best, live);
  }
  return best;
}

std::string CheckPlacement(const ggml_cgraph* graph, const std::vector<TensorLife>& lives,
                           ggml_backend_buffer_t buffer) {
  const auto base = reinterpret_cast<uintptr_t>(ggml_backend_buffer_get_base(buffer));
  const size_t capacity = ggml_backend_buffer_get_size(buffer);
  const size_t align = ggml_backend_buffer_get_alignment(buffer);
  for (const TensorLife& l : lives) {
    const auto at = reinterpret_cast<uintptr_t>(l.tensor->data);
    if (l.tensor->data == nullptr || l.tensor->buffer != buffer || at < base || at - base + l.size > capacity) {
      return absl::StrFormat("'%s' (%zu bytes) is not inside the buffer", l.tensor->name, l.size);
    }
    if ((at - base) % align != 0) return absl::StrFormat("'%s' is not aligned to %zu", l.tensor->name, align);
  }
  for (int k = 0; k < graph->n_leafs + graph->n_nodes; ++k) {
    const ggml_tensor* t = k < graph->n_leafs ? graph->leafs[k] : graph->nodes[k - graph->n_leafs];
    if (t->view_src != nullptr && t->data != static_cast<char*>(t->view_src->data) + t->view_offs) {
      return absl::StrFormat("view '%s' does not point at its source + %zu", t->name, t->view_offs);
    }
  }
  // Node index of every node, for the in-place exception.
  std::unordered_map<const ggml_tensor*, int> step_of;
  for (int i = 0; i < graph->n_nodes; ++i) step_of[graph->nodes[i]] = i;
  auto in_place_over = [&](const TensorLife& b, const TensorLife& a) {
    // b is node a.last, of an in-place op, at exactly the data of a src owned by a.
    auto it = step_of.find(b.tensor);
    if (it == step_of.end() || it->second != b.first || b.first != a.last || !OpCanInplace(b.tensor->op)) {
      return false;
    }
    for (const ggml_tensor* src : b.tensor->src) {
      if (src != nullptr && Owner(src) == a.tensor && src->data == b.tensor->data &&
          ggml_are_same_layout(src, b.tensor)) {
        return true;
      }
    }
    return false;
  };
  for (size_t i = 0; i < lives.size(); ++i) {
    for (size_t j = i + 1; j < lives.size(); ++j) {
      const TensorLife& a = lives[i];
      const TensorLife& b = lives[j];
      if (a.size == 0 || b.size == 0) continue;
      const auto a0 = reinterpret_cast<uintptr_t>(a.tensor->data);
      const auto b0 = reinterpret_cast<uintptr_t>(b.tensor->data);
      if (a0 + a.size <= b0 || b0 + b.size <= a0) continue;  // disjoint bytes
      if (a.last < b.first || b.last < a.first) continue;      // disjoint lives
      if (in_place_over(b, a) || in_place_over(a, b)) continue;
      return absl::StrFormat("'%s' [%d, %d] and '%s' [%d, %d] are live together and share bytes", a.tensor->name,
                             a.first, a.last, b.tensor->name, b.first, b.last);
    }
  }
  return "";
}

}  // namespace alloc_testing
