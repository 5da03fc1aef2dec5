#include "alloc/whisper_like_graphs.h"

#include <math.h>

#include "ggml/ops.h"

namespace alloc_testing {

struct WhisperLikeModel::Layer {
  ggml_tensor *attn_ln_w, *attn_ln_b;
  ggml_tensor *q_w, *q_b, *k_w, *v_w, *v_b, *o_w, *o_b;
  ggml_tensor *cross_ln_w, *cross_ln_b, *cross_q_w, *cross_q_b, *cross_o_w, *cross_o_b;  // decoder only
  ggml_tensor *mlp_ln_w, *mlp_ln_b, *mlp_0_w, *mlp_0_b, *mlp_1_w, *mlp_1_b;
};

namespace {

constexpr float kEps = 1e-5f;

ggml_tensor* LayerNorm(ggml_context* ctx, ggml_tensor* x, ggml_tensor* w, ggml_tensor* b) {
  return ggml_add(ctx, ggml_mul(ctx, ggml_norm(ctx, x, kEps), w), b);
}

ggml_tensor* Linear(ggml_context* ctx, ggml_tensor* x, ggml_tensor* w, ggml_tensor* b) {
  ggml_tensor* y = ggml_mul_mat(ctx, w, x);
  return b != nullptr ? ggml_add(ctx, y, b) : y;
}

}  // namespace

WhisperLikeModel::~WhisperLikeModel() {
  ggml_backend_buffer_free(wbuf_);
  ggml_free(wctx_);
}

size_t WhisperLikeModel::GraphContextSize() {
  return 4 * GGML_DEFAULT_GRAPH_SIZE * ggml_tensor_overhead() + ggml_graph_overhead_custom(4 * GGML_DEFAULT_GRAPH_SIZE);
}

std::unique_ptr<WhisperLikeModel> WhisperLikeModel::Create(const WhisperDims& dims) {
  std::unique_ptr<WhisperLikeModel> m(new WhisperLikeModel());
  m->dims_ = dims;
  const size_t n_tensors = 32 + 24 * static_cast<size_t>(dims.n_audio_layer + dims.n_text_layer);
  ggml_init_params params = {n_tensors * ggml_tensor_overhead(), nullptr, true};
  m->wctx_ = ggml_init(params);
  if (m->wctx_ == nullptr || !m->CreateTensors()) return nullptr;
  m->wbuf_ = ggml_backend_alloc_ctx_tensors(m->wctx_);
  if (m->wbuf_ == nullptr) return nullptr;
  return m;
}

bool WhisperLikeModel::CreateTensors() {
  ggml_context* c = wctx_;
  const WhisperDims& d = dims_;
  auto mat = [c](int64_t ne0, int64_t ne1) { return ggml_new_tensor_2d(c, GGML_TYPE_F16, ne0, ne1); };
  auto vec = [c](int64_t ne0) { return ggml_new_tensor_1d(c, GGML_TYPE_F32, ne0); };
  const int64_t as = d.n_audio_state, ts = d.n_text_state;
  conv1_w_ = ggml_new_tensor_3d(c, GGML_TYPE_F16, 3, d.n_mels, as);
  conv1_b_ = ggml_new_tensor_2d(c, GGML_TYPE_F32, 1, as);
  conv2_w_ = ggml_new_tensor_3d(c, GGML_TYPE_F16, 3, as, as);
  conv2_b_ = ggml_new_tensor_2d(c, GGML_TYPE_F32, 1, as);
  e_pe_ = ggml_new_tensor_2d(c, GGML_TYPE_F32, as, d.n_audio_ctx);
  e_ln_w_ = vec(as);
  e_ln_b_ = vec(as);
  d_te_ = mat(ts, d.n_vocab);
  d_pe_ = ggml_new_tensor_2d(c, GGML_TYPE_F32, ts, d.n_text_ctx);
  d_ln_w_ = vec(ts);
  d_ln_b_ = vec(ts);
  kv_k_ = ggml_new_tensor_1d(c, GGML_TYPE_F16, ts * d.n_text_ctx * d.n_text_layer);
  kv_v_ = ggml_new_tensor_1d(c, GGML_TYPE_F16, ts * d.n_text_ctx * d.n_text_layer);
  cross_k_ = ggml_new_tensor_1d(c, GGML_TYPE_F16, ts * d.n_audio_ctx * d.n_text_layer);
  cross_v_ = ggml_new_tensor_1d(c, GGML_TYPE_F16, ts * d.n_audio_ctx * d.n_text_layer);
  auto layer = [&](int64_t s, bool cross) {
    Layer l = {};
    l.attn_ln_w = vec(s), l.attn_ln_b = vec(s);
    l.q_w = mat(s, s), l.q_b = vec(s), l.k_w = mat(s, s), l.v_w = mat(s, s), l.v_b = vec(s);
    l.o_w = mat(s, s), l.o_b = vec(s);
    if (cross) {
      l.cross_ln_w = vec(s), l.cross_ln_b = vec(s), l.cross_q_w = mat(s, s), l.cross_q_b = vec(s);
      l.cross_o_w = mat(s, s), l.cross_o_b = vec(s);
    }
    l.mlp_ln_w = vec(s), l.mlp_ln_b = vec(s);
    l.mlp_0_w = mat(s, 4 * s), l.mlp_0_b = vec(4 * s), l.mlp_1_w = mat(4 * s, s), l.mlp_1_b = vec(s);
    return l;
  };
  for (int i = 0; i < d.n_audio_layer; ++i) enc_.push_back(layer(as, false));
  for (int i = 0; i < d.n_text_layer; ++i) dec_.push_back(layer(ts, true));
  return kv_k_ != nullptr && cross_v_ != nullptr && dec_.back().mlp_1_b != nullptr;
}

ggml_cgraph* WhisperLikeModel::BuildEncoder(ggml_context* ctx) const {
  const WhisperDims& d = dims_;
  const int64_t n_ctx = d.n_audio_ctx, n_state = d.n_audio_state, n_head = d.n_audio_head;
  const int64_t d_head = n_state / n_head;
  ggml_tensor* mel = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2 * n_ctx, d.n_mels);
  ggml_set_name(mel, "mel");
  ggml_set_input(mel);

  // Conv stem: [2 n_ctx, n_mels] -> [2 n_ctx, n_state] -> [n_ctx, n_state], GELU after each.
  ggml_tensor* cur = ggml_gelu(ctx, ggml_add(ctx, ggml_conv_1d_ph(ctx, conv1_w_, mel, 1, 1), conv1_b_));
  cur = ggml_gelu(ctx, ggml_add(ctx, ggml_conv_1d_ph(ctx, conv2_w_, cur, 2, 1), conv2_b_));
  ggml_tensor* inp = ggml_add(ctx, ggml_cont(ctx, ggml_transpose(ctx, cur)), e_pe_);  // [n_state, n_ctx]

  const float kq_scale = 1.0f / sqrtf(static_cast<float>(d_head));
  for (const Layer& l : enc_) {
    cur = LayerNorm(ctx, inp, l.attn_ln_w, l.attn_ln_b);
    ggml_tensor* q = Linear(ctx, cur, l.q_w, l.q_b);
    ggml_tensor* k = Linear(ctx, cur, l.k_w, nullptr);
    ggml_tensor* v = Linear(ctx, cur, l.v_w, l.v_b);
    ggml_tensor* Q = ggml_permute(ctx, ggml_reshape_3d(ctx, q, d_head, n_head, n_ctx), 0, 2, 1, 3);
    ggml_tensor* K = ggml_permute(
        ctx, ggml_cpy(ctx, k, ggml_new_tensor_3d(ctx, GGML_TYPE_F16, d_head, n_head, n_ctx)), 0, 2, 1, 3);
    ggml_tensor* kq = ggml_soft_max_ext(ctx, ggml_mul_mat(ctx, K, Q), nullptr, kq_scale, 0.0f);
    ggml_tensor* V =
        ggml_cpy(ctx, ggml_permute(ctx, ggml_reshape_3d(ctx, v, d_head, n_head, n_ctx), 1, 2, 0, 3),
                 ggml_new_tensor_3d(ctx, GGML_TYPE_F16, n_ctx, d_head, n_head));
    ggml_tensor* kqv = ggml_permute(ctx, ggml_mul_mat(ctx, V, kq), 0, 2, 1, 3);  // [d_head, n_head, n_ctx]
    cur = Linear(ctx, ggml_cont_2d(ctx, kqv, n_state, n_ctx), l.o_w, l.o_b);
    ggml_tensor* inp_ff = ggml_add(ctx, cur, inp);
    cur = LayerNorm(ctx, inp_ff, l.mlp_ln_w, l.mlp_ln_b);
    cur = Linear(ctx, ggml_gelu(ctx, Linear(ctx, cur, l.mlp_0_w, l.mlp_0_b)), l.mlp_1_w, l.mlp_1_b);
    inp = ggml_add(ctx, cur, inp_ff);
  }
  cur = LayerNorm(ctx, inp, e_ln_w_, e_ln_b_);
  if (cur == nullptr) return nullptr;
  ggml_set_name(cur, "encoder_out");
  ggml_set_output(cur);
  ggml_cgraph* g = ggml_new_graph_custom(ctx, 4 * GGML_DEFAULT_GRAPH_SIZE);
  return g != nullptr && ggml_build_forward_expand(g, cur) ? g : nullptr;
}

ggml_cgraph* WhisperLikeModel::BuildDecoder(ggml_context* ctx, int n_tokens, int n_past) const {
  const WhisperDims& d = dims_;
  const int64_t n_state = d.n_text_state, n_head = d.n_text_head, d_head = n_state / n_head;
  const int64_t n_kv = n_past + n_tokens;
  ggml_cgraph* g = ggml_new_graph_custom(ctx, 4 * GGML_DEFAULT_GRAPH_SIZE);
  if (g == nullptr) return nullptr;
  ggml_tensor* tokens = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n_tokens);
  ggml_tensor* positions = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n_tokens);
  ggml_set_input(tokens);
  ggml_set_input(positions);
  ggml_tensor* inp = ggml_add(ctx, ggml_get_rows(ctx, d_te_, tokens), ggml_get_rows(ctx, d_pe_, positions));

  const float kq_scale = powf(static_cast<float>(d_head), -0.25f);
  const size_t es = ggml_element_size(kv_k_);
  for (int il = 0; il < d.n_text_layer; ++il) {
    const Layer& l = dec_[static_cast<size_t>(il)];
    // Self-attention; K and V of the new tokens go to the cache at n_past.
    ggml_tensor* cur = LayerNorm(ctx, inp, l.attn_ln_w, l.attn_ln_b);
    ggml_tensor* q = ggml_scale(ctx, Linear(ctx, cur, l.q_w, l.q_b), kq_scale);
    ggml_tensor* k = ggml_scale(ctx, Linear(ctx, cur, l.k_w, nullptr), kq_scale);
    ggml_tensor* v = Linear(ctx, cur, l.v_w, l.v_b);
    const size_t layer_off = es * static_cast<size_t>(n_state * d.n_text_ctx * il);
    ggml_tensor* k_dst = ggml_view_1d(ctx, kv_k_, n_tokens * n_state, layer_off + es * n_state * n_past);
    // V is cached transposed (whisper.cpp): per layer [n_text_ctx, n_state], token-major rows.
    ggml_tensor* v_dst = ggml_view_2d(ctx, kv_v_, n_tokens, n_state, es * d.n_text_ctx, layer_off + es * n_past);
    if (!ggml_build_forward_expand(g, ggml_cpy(ctx, k, k_dst)) ||
        !ggml_build_forward_expand(g, ggml_cpy(ctx, ggml_transpose(ctx, v), v_dst))) {
      return nullptr;
    }
    ggml_tensor* Q = ggml_permute(ctx, ggml_reshape_3d(ctx, q, d_head, n_head, n_tokens), 0, 2, 1, 3);
    ggml_tensor* K = ggml_view_3d(ctx, kv_k_, d_head, n_kv, n_head, es * n_state, es * d_head, layer_off);
    ggml_tensor* kq = ggml_soft_max(ctx, ggml_diag_mask_inf(ctx, ggml_mul_mat(ctx, K, Q), n_past));
    ggml_tensor* V = ggml_view_3d(ctx, kv_v_, n_kv, d_head, n_head, es * d.n_text_ctx, es * d.n_text_ctx * d_head,
                                  layer_off);  // [n_kv, d_head, n_head]
    ggml_tensor* kqv = ggml_permute(ctx, ggml_mul_mat(ctx, V, kq), 0, 2, 1, 3);
    cur = Linear(ctx, ggml_cont_2d(ctx, kqv, n_state, n_tokens), l.o_w, l.o_b);
    ggml_tensor* inp_ca = ggml_add(ctx, cur, inp);

    // Cross-attention over the encoder's K/V (pre-scaled K, as whisper.cpp stores it).
    cur = LayerNorm(ctx, inp_ca, l.cross_ln_w, l.cross_ln_b);
    q = Linear(ctx, cur, l.cross_q_w, l.cross_q_b);
    Q = ggml_permute(ctx, ggml_reshape_3d(ctx, q, d_head, n_head, n_tokens), 0, 2, 1, 3);
    const size_t cross_off = es * static_cast<size_t>(n_state * d.n_audio_ctx * il);
    K = ggml_view_3d(ctx, cross_k_, d_head, d.n_audio_ctx, n_head, es * n_state, es * d_head, cross_off);
    kq = ggml_soft_max_ext(ctx, ggml_mul_mat(ctx, K, Q), nullptr, kq_scale, 0.0f);
    V = ggml_view_3d(ctx, cross_v_, d.n_audio_ctx, d_head, n_head, es * d.n_audio_ctx, es * d.n_audio_ctx * d_head,
                     cross_off);
    kqv = ggml_permute(ctx, ggml_mul_mat(ctx, V, kq), 0, 2, 1, 3);
    cur = Linear(ctx, ggml_cont_2d(ctx, kqv, n_state, n_tokens), l.cross_o_w, l.cross_o_b);
    ggml_tensor* inp_ff = ggml_add(ctx, cur, inp_ca);

    cur = LayerNorm(ctx, inp_ff, l.mlp_ln_w, l.mlp_ln_b);
    cur = Linear(ctx, ggml_gelu(ctx, Linear(ctx, cur, l.mlp_0_w, l.mlp_0_b)), l.mlp_1_w, l.mlp_1_b);
    inp = ggml_add(ctx, cur, inp_ff);
  }
  ggml_tensor* logits = ggml_mul_mat(ctx, d_te_, LayerNorm(ctx, inp, d_ln_w_, d_ln_b_));
  if (logits == nullptr) return nullptr;
  ggml_set_name(logits, "logits");
  ggml_set_output(logits);
  return ggml_build_forward_expand(g, logits) ? g : nullptr;
}

}  // namespace alloc_testing
