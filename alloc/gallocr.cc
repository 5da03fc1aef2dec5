// ggml_gallocr (ggml-alloc.c): plans a graph's tensors into one buffer with a ggml_dyn_tallocr,
// reusing the bytes of tensors whose last use has passed. See gallocr.h for the rules.
#include "alloc/gallocr.h"

#include <stdint.h>
#include <string.h>

#include <new>

#include "alloc/dyn_tallocr.h"

namespace {

// Per-tensor state of one plan.
struct Entry {
  int32_t n_children;  // uses as a src not yet computed
  int32_t n_views;     // views (view_src == this) still in use
  size_t offset;       // bytes from the buffer base (valid when placed)
  size_t size;         // bytes of the block held: PAD(nbytes, alignment), 0 for an empty tensor
  bool external;       // has data outside our buffer: never placed, freed or overwritten
  bool pinned;         // INPUT/OUTPUT (or the view_src of one): never freed, never in place
  bool placed;         // got an offset in this plan
  bool holds_block;    // owns its block right now (not freed, not handed to an in-place node)
};

const char* NameOf(const ggml_tensor* t) { return t->name[0] != '\0' ? t->name : "(unnamed)"; }

// ggml_op_can_inplace (ggml-alloc.c), restricted to the ops this runtime has.
bool CanInplace(ggml_op op) {
  switch (op) {
    case GGML_OP_ADD:
    case GGML_OP_MUL:
    case GGML_OP_SCALE:
    case GGML_OP_DIAG_MASK_INF:
    case GGML_OP_SOFT_MAX:
    case GGML_OP_RMS_NORM:
    case GGML_OP_UNARY:
      return true;
    default:
      return false;
  }
}

size_t NextPow2(size_t n) {
  size_t p = 16;
  while (p < n) p <<= 1;
  return p;
}

}  // namespace

struct ggml_gallocr {
  ggml_backend_buffer_t buffer = nullptr;  // the handle never changes once created
  bool owns_buffer = true;                  // false: ggml_gallocr_new_with_buffer's, not freed here
  size_t max_plan = 0;                      // the largest peak of a graph planned so far
  ggml_dyn_tallocr* talloc = nullptr;
  size_t alignment = GGML_BACKEND_CPU_ALIGNMENT;
  bool allow_realloc = true;

  // Open-addressing table keyed by tensor pointer: slots = power of two >= 2 * max_tensors.
  int max_tensors = 0;
  size_t n_slots = 0;
  const ggml_tensor** keys = nullptr;
  Entry* entries = nullptr;
};

namespace {

size_t Slot(const ggml_gallocr* g, const ggml_tensor* t) {
  const uint64_t h = (static_cast<uint64_t>(reinterpret_cast<uintptr_t>(t)) >> 4) * 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(h >> 32) & (g->n_slots - 1);
}

Entry* Find(ggml_gallocr* g, const ggml_tensor* t) {
  for (size_t i = Slot(g, t);; i = (i + 1) & (g->n_slots - 1)) {
    if (g->keys[i] == t) return &g->entries[i];
    if (g->keys[i] == nullptr) return nullptr;
  }
}

// Inserts t (callers keep the count <= max_tensors, so a free slot always exists).
void Insert(ggml_gallocr* g, const ggml_tensor* t) {
  size_t i = Slot(g, t);
  while (g->keys[i] != nullptr && g->keys[i] != t) i = (i + 1) & (g->n_slots - 1);
  if (g->keys[i] == t) return;
  g->keys[i] = t;
  Entry& e = g->entries[i];
  memset(&e, 0, sizeof(e));
  e.external = t->view_src == nullptr && t->data != nullptr && (g->buffer == nullptr || t->buffer != g->buffer);
}

// The entry of `t`, which `owner` uses as `role`; NULL with a message when t is not in the graph.
Entry* Lookup(ggml_gallocr* g, const ggml_tensor* t, const ggml_tensor* owner, const char* role) {
  Entry* e = Find(g, t);
  if (e == nullptr) {
    ggml_set_error("ggml_gallocr: '%s' (%s of '%s') is not in the graph (add it with ggml_build_forward_expand)",
                   NameOf(t), role, NameOf(owner));
  }
  return e;
}

bool EnsureTable(ggml_gallocr* g, int n_tensors) {
  if (n_tensors <= g->max_tensors && g->keys != nullptr) return true;
  const size_t n_slots = NextPow2(2 * static_cast<size_t>(n_tensors));
  auto* keys = new (std::nothrow) const ggml_tensor*[n_slots];
  auto* entries = new (std::nothrow) Entry[n_slots];
  if (keys == nullptr || entries == nullptr) {
    delete[] keys;
    delete[] entries;
    ggml_set_error("ggml_gallocr: cannot allocate the table for %d tensors", n_tensors);
    return false;
  }
  delete[] g->keys;
  delete[] g->entries;
  g->keys = keys;
  g->entries = entries;
  g->n_slots = n_slots;
  g->max_tensors = n_tensors;
  return true;
}

size_t BlockSize(const ggml_gallocr* g, const ggml_tensor* t) {
  const size_t n = ggml_backend_buffer_get_alloc_size(g->buffer, t);
  return n == 0 ? 0 : GGML_PAD(n, g->alignment);
}

// Gives `t` an offset unless it is a view, external or already placed: in place of a src when
// allowed (gallocr.h), else a best-fit block. `inplace` is false in pass 1, where the children
// counts are still incomplete.
bool Allocate(ggml_gallocr* g, ggml_tensor* t, bool inplace = true) {
  Entry* e = Find(g, t);
  if (t->view_src != nullptr || e->external || e->placed) return true;
  const size_t need = BlockSize(g, t);
  if (inplace && CanInplace(t->op)) {
    for (int i = 0; i < GGML_MAX_SRC; ++i) {
      ggml_tensor* p = t->src[i];
      if (p == nullptr) continue;
      // p's remaining children must all be this node (ggml requires exactly 1; a node such as
      // ggml_add(x, x) uses its src twice, and element-wise ops read both before writing).
      int uses = 0;
      for (int k = 0; k < GGML_MAX_SRC; ++k) uses += t->src[k] == p;
      Entry* pe = Find(g, p);
      if (pe->pinned || pe->n_children != uses || pe->n_views != 0 || !ggml_are_same_layout(t, p)) continue;
      if (p->view_src == nullptr) {
        if (!pe->holds_block) continue;
        e->offset = pe->offset;
        e->size = pe->size;
        pe->holds_block = false;
        e->placed = e->holds_block = true;
        return true;
      }
      Entry* ve = Find(g, p->view_src);
      if (!ve->holds_block || ve->pinned || ve->n_views != 1 || ve->n_children != 0 || p->view_offs != 0) continue;
      e->offset = ve->offset;
      e->size = need;
      ve->holds_block = false;
      e->placed = e->holds_block = true;
      // The view covers the start of view_src's block; return the rest (ggml_gallocr_free_extra_space).
      if (ve->size > need) {
        return ggml_dyn_tallocr_free_tensor(g->talloc, ve->offset + need, ve->size - need, p->view_src);
      }
      return true;
    }
  }
  e->offset = 0;
  e->size = need;
  if (need > 0 && !ggml_dyn_tallocr_alloc(g->talloc, need, t, &e->offset)) return false;
  e->placed = e->holds_block = true;
  return true;
}

bool FreeBlock(ggml_gallocr* g, const ggml_tensor* t, Entry* e) {
  if (e->pinned || !e->holds_block) return true;
  e->holds_block = false;
  return e->size == 0 || ggml_dyn_tallocr_free_tensor(g->talloc, e->offset, e->size, t);
}

// `p` was used once more as a src: free it (or its view_src) when nothing needs it any longer.
bool Release(ggml_gallocr* g, const ggml_tensor* p) {
  Entry* pe = Find(g, p);
  pe->n_children -= 1;
  if (pe->n_children != 0 || pe->n_views != 0) return true;
  if (p->view_src == nullptr) return FreeBlock(g, p, pe);
  Entry* ve = Find(g, p->view_src);
  ve->n_views -= 1;
  if (ve->n_views == 0 && ve->n_children == 0) return FreeBlock(g, p->view_src, ve);
  return true;
}

void Pin(Entry* e) { e->pinned = true; }

// Runs the plan over `graph`; on success every non-view, non-external tensor's entry holds its
// offset and ggml_dyn_tallocr_max_size(talloc) the peak. No heap allocation.
bool Plan(ggml_gallocr* g, ggml_cgraph* graph) {
  memset(g->keys, 0, g->n_slots * sizeof(*g->keys));
  ggml_dyn_tallocr_reset(g->talloc);
  for (int i = 0; i < graph->n_leafs; ++i) Insert(g, graph->leafs[i]);
  for (int i = 0; i < graph->n_nodes; ++i) Insert(g, graph->nodes[i]);

  // Every src and view_src must be in the graph; INPUT/OUTPUT tensors and the bytes under them
  // are pinned.
  for (int k = 0; k < graph->n_leafs + graph->n_nodes; ++k) {
    ggml_tensor* t = k < graph->n_leafs ? graph->leafs[k] : graph->nodes[k - graph->n_leafs];
    for (int j = 0; j < GGML_MAX_SRC; ++j) {
      if (t->src[j] != nullptr && Lookup(g, t->src[j], t, "a src") == nullptr) return false;
    }
    Entry* ve = nullptr;
    if (t->view_src != nullptr && (ve = Lookup(g, t->view_src, t, "the view_src")) == nullptr) return false;
    if ((t->flags & (GGML_TENSOR_FLAG_INPUT | GGML_TENSOR_FLAG_OUTPUT)) != 0) {
      Pin(Find(g, t));
      if (ve != nullptr) Pin(ve);
    }
  }

  // 1. Leafs first.
  for (int i = 0; i < graph->n_leafs; ++i) {
    ggml_tensor* leaf = graph->leafs[i];
    if (!Allocate(g, leaf)) return false;
    // ggml counts only op != NONE views; counting leaf views too keeps their view_src alive.
    if (leaf->view_src != nullptr) Find(g, leaf->view_src)->n_views += 1;
  }
  // 2. Count children and views; inputs before any node.
  for (int i = 0; i < graph->n_nodes; ++i) {
    ggml_tensor* node = graph->nodes[i];
    if (node->view_src != nullptr) Find(g, node->view_src)->n_views += 1;
    if ((node->flags & GGML_TENSOR_FLAG_INPUT) != 0 && !Allocate(g, node, false)) return false;
    for (int j = 0; j < GGML_MAX_SRC; ++j) {
      ggml_tensor* src = node->src[j];
      if (src == nullptr) continue;
      Find(g, src)->n_children += 1;
      if ((src->flags & GGML_TENSOR_FLAG_INPUT) != 0 && !Allocate(g, src, false)) return false;
    }
  }
  // 3. Nodes in order: allocate, then release the srcs.
  for (int i = 0; i < graph->n_nodes; ++i) {
    ggml_tensor* node = graph->nodes[i];
    for (int j = 0; j < GGML_MAX_SRC; ++j) {
      if (node->src[j] != nullptr && !Allocate(g, node->src[j])) return false;
    }
    if (!Allocate(g, node)) return false;
    for (int j = 0; j < GGML_MAX_SRC; ++j) {
      if (node->src[j] != nullptr && !Release(g, node->src[j])) return false;
    }
  }
  return true;
}

// Sets data/buffer of every planned tensor, then of every view.
bool Apply(ggml_gallocr* g, ggml_cgraph* graph) {
  char* base = static_cast<char*>(ggml_backend_buffer_get_base(g->buffer));
  const int n = graph->n_leafs + graph->n_nodes;
  for (int k = 0; k < n; ++k) {
    ggml_tensor* t = k < graph->n_leafs ? graph->leafs[k] : graph->nodes[k - graph->n_leafs];
    const Entry* e = Find(g, t);
    if (e->placed && !ggml_backend_tensor_alloc(g->buffer, t, base + e->offset)) return false;
  }
  for (int k = 0; k < n; ++k) {
    ggml_tensor* t = k < graph->n_leafs ? graph->leafs[k] : graph->nodes[k - graph->n_leafs];
    if (t->view_src != nullptr && !ggml_backend_view_init(t)) return false;
  }
  return true;
}

bool CheckArgs(ggml_gallocr* g, ggml_cgraph* graph, const char* fn) {
  if (g == nullptr || graph == nullptr) {
    ggml_set_error("%s: %s is NULL", fn, g == nullptr ? "the allocator" : "the graph");
    return false;
  }
  return true;
}

bool GrowBuffer(ggml_gallocr* g, size_t size) {
  if (g->buffer == nullptr) {
    g->buffer = ggml_backend_cpu_buffer_new(size);
    return g->buffer != nullptr;
  }
  if (ggml_backend_buffer_get_size(g->buffer) >= size) return true;
  return ggml_backend_cpu_buffer_realloc(g->buffer, size);
}

}  // namespace

ggml_gallocr_t ggml_gallocr_new(void) {
  auto* g = new (std::nothrow) ggml_gallocr;
  if (g == nullptr || (g->talloc = ggml_dyn_tallocr_new(GGML_BACKEND_CPU_ALIGNMENT)) == nullptr) {
    delete g;
    ggml_set_error("ggml_gallocr_new: out of memory");
    return nullptr;
  }
  return g;
}

ggml_gallocr_t ggml_gallocr_new_with_buffer(ggml_backend_buffer_t buffer) {
  if (buffer == nullptr) {
    ggml_set_error("ggml_gallocr_new_with_buffer: buffer is NULL");
    return nullptr;
  }
  ggml_gallocr_t g = ggml_gallocr_new();
  if (g == nullptr) return nullptr;
  g->buffer = buffer;
  g->owns_buffer = false;
  return g;
}

void ggml_gallocr_free(ggml_gallocr_t galloc) {
  if (galloc == nullptr) return;
  if (galloc->owns_buffer) ggml_backend_buffer_free(galloc->buffer);
  ggml_dyn_tallocr_free(galloc->talloc);
  delete[] galloc->keys;
  delete[] galloc->entries;
  delete galloc;
}

void ggml_gallocr_set_allow_realloc(ggml_gallocr_t galloc, bool allow) {
  if (galloc != nullptr) galloc->allow_realloc = allow;
}

bool ggml_gallocr_reserve(ggml_gallocr_t galloc, ggml_cgraph* graph) {
  if (!CheckArgs(galloc, graph, "ggml_gallocr_reserve")) return false;
  if (!EnsureTable(galloc, graph->n_nodes + graph->n_leafs)) return false;
  if (!Plan(galloc, graph)) return false;
  const size_t need = ggml_dyn_tallocr_max_size(galloc->talloc);
  if (need > galloc->max_plan) galloc->max_plan = need;
  return GrowBuffer(galloc, need);
}

bool ggml_gallocr_alloc_graph(ggml_gallocr_t galloc, ggml_cgraph* graph) {
  if (!CheckArgs(galloc, graph, "ggml_gallocr_alloc_graph")) return false;
  const int n_tensors = graph->n_nodes + graph->n_leafs;
  if (galloc->buffer == nullptr || n_tensors > galloc->max_tensors) {
    if (!galloc->allow_realloc) {
      ggml_set_error("ggml_gallocr_alloc_graph: the graph has %d tensors (%d nodes, %d leafs) but the allocator "
                     "is reserved for %d%s, and realloc is off",
                     n_tensors, graph->n_nodes, graph->n_leafs, galloc->max_tensors,
                     galloc->buffer == nullptr ? " (never reserved)" : "");
      return false;
    }
    if (!ggml_gallocr_reserve(galloc, graph)) return false;
  }
  if (!Plan(galloc, graph)) return false;
  const size_t need = ggml_dyn_tallocr_max_size(galloc->talloc);
  if (need > galloc->max_plan) galloc->max_plan = need;
  const size_t have = ggml_backend_buffer_get_size(galloc->buffer);
  if (need > have) {
    if (!galloc->allow_realloc) {
      ggml_set_error("ggml_gallocr_alloc_graph: the graph needs %zu bytes (%.2f MiB) but the buffer has %zu "
                     "(%.2f MiB), and realloc is off: reserve with the worst-case graph",
                     need, need / 1048576.0, have, have / 1048576.0);
      return false;
    }
    if (!GrowBuffer(galloc, need)) return false;
  }
  return Apply(galloc, graph);
}

size_t ggml_gallocr_get_max_plan_size(ggml_gallocr_t galloc) {
  return galloc == nullptr ? 0 : galloc->max_plan;
}

size_t ggml_gallocr_get_buffer_size(ggml_gallocr_t galloc, int buffer_id) {
  if (galloc == nullptr || buffer_id != 0 || galloc->buffer == nullptr) return 0;
  return ggml_backend_buffer_get_size(galloc->buffer);
}

ggml_backend_buffer_t ggml_gallocr_get_buffer(ggml_gallocr_t galloc, int buffer_id) {
  if (galloc == nullptr || buffer_id != 0) return nullptr;
  return galloc->buffer;
}
