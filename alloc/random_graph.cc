#include "alloc/random_graph.h"

#include <string.h>

#include <algorithm>

#include "ggml/ops.h"

namespace alloc_testing {
namespace {

constexpr int kMaxTensors = 2048;
constexpr int64_t kMaxElements = 4096;
constexpr int64_t kCacheElements = 4096;

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t Next() {  // splitmix64
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int Uniform(int n) { return static_cast<int>(Next() % static_cast<uint64_t>(n)); }
  bool Chance(int percent) { return Uniform(100) < percent; }
  template <typename T, size_t N>
  T Pick(const T (&values)[N]) {
    return values[Uniform(static_cast<int>(N))];
  }

 private:
  uint64_t state_;
};

class Builder {
 public:
  Builder(uint64_t seed, ggml_context* ctx, ggml_context* wctx, RandomGraph* out)
      : rng_(seed), ctx_(ctx), wctx_(wctx), out_(out) {}

  bool Build(int n_ops) {
    const int n_inputs = 1 + rng_.Uniform(3);
    for (int i = 0; i < n_inputs; ++i) {
      ggml_tensor* t = NewLeaf(kInput, RandomShape());
      if (t == nullptr) return false;
      pool_.push_back(t);
    }
    if (rng_.Chance(50)) pool_.push_back(NewLeaf(kWeight, RandomShape()));
    if (rng_.Chance(30)) pool_.push_back(NewLeaf(kConstant, RandomShape()));
    out_->cache = ggml_new_tensor_1d(wctx_, rng_.Chance(50) ? GGML_TYPE_F32 : GGML_TYPE_F16, kCacheElements);
    ggml_set_name(out_->cache, "cache");

    for (int op = 0; op < n_ops; ++op) {
      ggml_tensor* r = RandomOp();
      if (r == nullptr) continue;  // the op did not fit the chosen operands
      if (ggml_nelements(r) > kMaxElements) continue;
      ggml_format_name(r, "n%d_%s", op, ggml_op_name(r->op));
      if (rng_.Chance(8)) {
        ggml_set_output(r);
        out_->outputs.push_back(r);
      }
      pool_.push_back(r);
    }
    ggml_clear_error();

    out_->graph = ggml_new_graph_custom(ctx_, kMaxTensors);
    if (out_->graph == nullptr) return false;
    for (ggml_tensor* t : out_->outputs) {
      if (!ggml_build_forward_expand(out_->graph, t)) return false;
    }
    for (ggml_tensor* t : copies_) {
      if (!ggml_build_forward_expand(out_->graph, t)) return false;
    }
    if (!ggml_build_forward_expand(out_->graph, pool_.back())) return false;
    if (out_->graph->n_nodes > 0) out_->outputs.push_back(out_->graph->nodes[out_->graph->n_nodes - 1]);
    // Inputs the graph does not use are dropped; leafs of ctx that are not inputs are constants
    // the caller fills.
    std::vector<ggml_tensor*> used_inputs;
    for (ggml_tensor* t : out_->inputs) {
      if (ggml_graph_get_tensor(out_->graph, t->name) == t) used_inputs.push_back(t);
    }
    out_->inputs = used_inputs;
    for (int i = 0; i < out_->graph->n_leafs; ++i) {
      ggml_tensor* leaf = out_->graph->leafs[i];
      if (leaf->view_src == nullptr && (leaf->flags & GGML_TENSOR_FLAG_INPUT) == 0 &&
          std::find(weights_.begin(), weights_.end(), leaf) == weights_.end() && leaf != out_->cache) {
        out_->constants.push_back(leaf);
      }
    }
    return true;
  }

 private:
  enum LeafKind { kInput, kWeight, kConstant };
  struct Shape {
    int64_t ne[4];
  };

  Shape RandomShape() {
    static const int64_t kNe0[] = {1, 3, 4, 8, 16, 17, 32, 64, 100};
    static const int64_t kNe1[] = {1, 1, 2, 3, 4, 8};
    static const int64_t kNe2[] = {1, 1, 1, 2, 3};
    return {{rng_.Pick(kNe0), rng_.Pick(kNe1), rng_.Pick(kNe2), 1}};
  }

  ggml_tensor* NewLeaf(LeafKind kind, const Shape& s) {
    ggml_tensor* t = ggml_new_tensor(kind == kWeight ? wctx_ : ctx_, GGML_TYPE_F32, 4, s.ne);
    if (t == nullptr) return nullptr;
    switch (kind) {
      case kInput:
        ggml_format_name(t, "in%zu", out_->inputs.size());
        ggml_set_input(t);
        out_->inputs.push_back(t);
        break;
      case kWeight:
        ggml_format_name(t, "w%zu", weights_.size());
        weights_.push_back(t);
        break;
      case kConstant:
        ggml_set_name(t, "const");
        break;
    }
    return t;
  }

  // Mostly recent tensors (chains, in-place chances), sometimes any.
  ggml_tensor* PickTensor() {
    const int n = static_cast<int>(pool_.size());
    if (rng_.Chance(60)) return pool_[n - 1 - rng_.Uniform(std::min(n, 3))];
    return pool_[rng_.Uniform(n)];
  }

  // A pool tensor satisfying `ok`, or NULL after a few tries.
  template <typename Pred>
  ggml_tensor* PickWhere(Pred ok) {
    for (int tries = 0; tries < 8; ++tries) {
      ggml_tensor* t = PickTensor();
      if (ok(t)) return t;
    }
    return nullptr;
  }

  ggml_tensor* NewOperandLike(const ggml_tensor* a, bool broadcast_row) {
    Shape s = {{a->ne[0], broadcast_row ? 1 : a->ne[1], broadcast_row ? 1 : a->ne[2], broadcast_row ? 1 : a->ne[3]}};
    return NewLeaf(rng_.Chance(50) ? kWeight : kConstant, s);
  }

  // One of 19 op kinds on a pool tensor (the draws, and so the graphs for a seed, in a fixed order).
  ggml_tensor* RandomOp() {
    ggml_tensor* a = PickTensor();
    switch (rng_.Uniform(19)) {
      case 0:
      case 1:
        return AddOrMul(a);
      case 2:
        return ggml_add(ctx_, a, a);
      case 3: {
        static const float kScales[] = {0.5f, -1.25f, 3.0f};
        return ggml_scale(ctx_, a, rng_.Pick(kScales));
      }
      case 4: {
        static const ggml_unary_op kOps[] = {GGML_UNARY_OP_GELU, GGML_UNARY_OP_GELU_ERF, GGML_UNARY_OP_SILU,
                                             GGML_UNARY_OP_RELU, GGML_UNARY_OP_SIGMOID, GGML_UNARY_OP_TANH,
                                             GGML_UNARY_OP_SQR};
        return ggml_unary(ctx_, a, rng_.Pick(kOps));
      }
      case 5:
        return SoftMax(a);
      case 6:
        return ggml_norm(ctx_, a, 1e-5f);
      case 7:
        return ggml_rms_norm(ctx_, a, 1e-6f);
      case 8:
        return ggml_diag_mask_inf(ctx_, a, rng_.Uniform(3));
      case 9:
        return ggml_cont(ctx_, a);
      case 10:
        // Only contiguous sources: ggml/ops.cc's ggml_transpose keeps the contiguous nb2/nb3 of
        // a->ne instead of a->nb[2], a->nb[3] (ggml copies a's strides), so the transpose of a
        // permuted view reads the wrong bytes (and past its source).
        return ggml_transpose(ctx_, ggml_is_contiguous(a) ? a : ggml_cont(ctx_, a));
      case 11:
      case 12:
        return View(a);
      case 13:
        return Reshape(a);
      case 14:
        return rng_.Chance(50) ? ggml_permute(ctx_, a, 0, 2, 1, 3) : ggml_permute(ctx_, a, 1, 0, 2, 3);
      case 15:
        return MulMat(a);
      case 16:
        return Copy(a);
      case 17:
        return PadOrRepeat(a);
      default:
        return Concat(a);
    }
  }

  // ADD / MUL with a broadcast b.
  ggml_tensor* AddOrMul(ggml_tensor* a) {
    ggml_tensor* b = PickWhere([&](ggml_tensor* t) { return t->type == GGML_TYPE_F32 && ggml_can_repeat(t, a); });
    if (b == nullptr) b = NewOperandLike(a, rng_.Chance(50));
    if (b == nullptr) return nullptr;
    return rng_.Chance(50) ? ggml_add(ctx_, a, b) : ggml_mul(ctx_, a, b);
  }

  ggml_tensor* SoftMax(ggml_tensor* a) {
    if (rng_.Chance(50)) return ggml_soft_max(ctx_, a);
    ggml_tensor* mask = PickWhere([&](ggml_tensor* t) {
      return t->type == GGML_TYPE_F32 && t->ne[0] == a->ne[0] && t->ne[1] >= a->ne[1] && t->ne[2] == 1 && t->ne[3] == 1;
    });
    if (mask == nullptr) mask = NewLeaf(kConstant, {{a->ne[0], a->ne[1], 1, 1}});
    return ggml_soft_max_ext(ctx_, a, mask, 0.125f, 0.0f);
  }

  // A view of a contiguous tensor: often at offset 0 (in place over a view).
  ggml_tensor* View(ggml_tensor* a) {
    if (!ggml_is_contiguous(a)) return ggml_cont(ctx_, a);
    const int64_t n = ggml_nelements(a);
    if (a->ne[1] > 1 && rng_.Chance(50)) {
      const int64_t rows = 1 + rng_.Uniform(static_cast<int>(a->ne[1]));
      const int64_t first = rng_.Chance(50) ? 0 : rng_.Uniform(static_cast<int>(a->ne[1] - rows + 1));
      return ggml_view_2d(ctx_, a, a->ne[0], rows, a->nb[1], static_cast<size_t>(first) * a->nb[1]);
    }
    const int64_t len = 1 + rng_.Uniform(static_cast<int>(n));
    const int64_t off = rng_.Chance(50) ? 0 : rng_.Uniform(static_cast<int>(n - len + 1));
    return ggml_view_1d(ctx_, a, len, static_cast<size_t>(off) * ggml_element_size(a));
  }

  ggml_tensor* Reshape(ggml_tensor* a) {
    if (!ggml_is_contiguous(a)) return ggml_cont(ctx_, a);
    const int64_t n = ggml_nelements(a);
    if (a->ne[0] * a->ne[1] == n && rng_.Chance(50)) return ggml_reshape_1d(ctx_, a, n);
    return ggml_reshape_2d(ctx_, a, a->ne[0], n / a->ne[0]);
  }

  // MUL_MAT: b from the pool (any strides), a contiguous rows with the same K.
  ggml_tensor* MulMat(ggml_tensor* b) {
    ggml_tensor* w = PickWhere([&](ggml_tensor* t) {
      return t != b && t->ne[0] == b->ne[0] && t->ne[2] == 1 && t->ne[3] == 1 && t->nb[0] == 4 &&
             !ggml_is_transposed(t);
    });
    if (w == nullptr) w = NewLeaf(kWeight, {{b->ne[0], 1 + rng_.Uniform(12), 1, 1}});
    return ggml_mul_mat(ctx_, w, b);
  }

  // CPY into the cache or a fresh tensor.
  ggml_tensor* Copy(ggml_tensor* a) {
    ggml_tensor* dst;
    const int64_t n = ggml_nelements(a);
    if (rng_.Chance(50) && n <= kCacheElements) {
      const int64_t off = rng_.Uniform(static_cast<int>(kCacheElements - n + 1));
      dst = ggml_view_1d(ctx_, out_->cache, n, static_cast<size_t>(off) * ggml_element_size(out_->cache));
    } else {
      dst = ggml_new_tensor(ctx_, GGML_TYPE_F32, 4, a->ne);
      if (dst != nullptr) ggml_set_name(dst, "cpy_dst");
    }
    ggml_tensor* r = ggml_cpy(ctx_, a, dst);
    if (r != nullptr) copies_.push_back(r);
    return r != nullptr && r->type == GGML_TYPE_F32 ? r : nullptr;  // F16 results stay out of the pool
  }

  ggml_tensor* PadOrRepeat(ggml_tensor* a) {
    if (rng_.Chance(50)) return ggml_pad(ctx_, a, rng_.Uniform(4), rng_.Uniform(2), 0, 0);
    const int64_t ne[4] = {a->ne[0] * (1 + rng_.Uniform(2)), a->ne[1] * (1 + rng_.Uniform(3)), a->ne[2], a->ne[3]};
    ggml_tensor* shape = ggml_new_tensor(ctx_, GGML_TYPE_F32, 4, ne);  // shape only: not in the graph
    return ggml_repeat(ctx_, a, shape);
  }

  ggml_tensor* Concat(ggml_tensor* a) {
    ggml_tensor* b = PickWhere([&](ggml_tensor* t) {
      return t->type == GGML_TYPE_F32 && t->ne[1] == a->ne[1] && t->ne[2] == a->ne[2] && t->ne[3] == a->ne[3];
    });
    return b == nullptr ? nullptr : ggml_concat(ctx_, a, b, 0);
  }

  Rng rng_;
  ggml_context* ctx_;
  ggml_context* wctx_;
  RandomGraph* out_;
  std::vector<ggml_tensor*> pool_;     // F32 tensors available as operands
  std::vector<ggml_tensor*> weights_;  // leafs in wctx
  std::vector<ggml_tensor*> copies_;   // CPY results: always in the graph
};

}  // namespace

size_t RandomGraphContextSize() {
  return 4 * kMaxTensors * ggml_tensor_overhead() + ggml_graph_overhead_custom(kMaxTensors);
}

bool BuildRandomGraph(uint64_t seed, int n_ops, ggml_context* ctx, ggml_context* wctx, RandomGraph* out) {
  *out = RandomGraph();
  Builder builder(seed, ctx, wctx, out);
  return builder.Build(std::max(5, std::min(n_ops, 200)));
}

float FillValue(uint64_t seed, int tensor_id, int64_t i) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull ^ (static_cast<uint64_t>(tensor_id) << 40) ^ static_cast<uint64_t>(i);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) / static_cast<float>(1 << 24) * 4.0f - 2.0f;
}

void FillTensor(ggml_tensor* t, uint64_t seed, int tensor_id) {
  const int64_t n = ggml_nelements(t);
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i0 = k % t->ne[0], i1 = k / t->ne[0] % t->ne[1], i2 = k / (t->ne[0] * t->ne[1]) % t->ne[2],
                  i3 = k / (t->ne[0] * t->ne[1] * t->ne[2]);
    ggml_set_f32_nd(t, i0, i1, i2, i3, FillValue(seed, tensor_id, k));
  }
}

std::vector<uint32_t> TensorBits(const ggml_tensor* t) {
  const int64_t n = ggml_nelements(t);
  std::vector<uint32_t> bits(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i0 = k % t->ne[0], i1 = k / t->ne[0] % t->ne[1], i2 = k / (t->ne[0] * t->ne[1]) % t->ne[2],
                  i3 = k / (t->ne[0] * t->ne[1] * t->ne[2]);
    const float v = ggml_get_f32_nd(t, i0, i1, i2, i3);
    memcpy(&bits[static_cast<size_t>(k)], &v, 4);
  }
  return bits;
}

}  // namespace alloc_testing
