#include "whisper/decoder.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ggml/ops.h"
#include "whisper/encoder.h"

namespace whisper {
namespace {

absl::Status BuildError(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", ggml_last_error()));
}

struct StepShape {
  int64_t S, n_head, d, n_text_ctx, n_audio_ctx, n_tokens, n_past;
};

// x + SelfAttn(LN(x)) for layer il; appends the K/V cache writes to `graph` first so that they
// run before the products that read the cache.
ggml_tensor* SelfAttention(ggml_context* ctx, ggml_cgraph* graph, const AttentionWeights& w,
                           const DecoderKv& kv, int il, const StepShape& s, ggml_tensor* x) {
  const float scale = std::pow(static_cast<float>(s.d), -0.25f);
  const size_t es = ggml_element_size(kv.k);
  const size_t layer = es * s.n_text_ctx * s.S * il;
  const int64_t n_kv = s.n_past + s.n_tokens;
  ggml_tensor* cur = LayerNorm(ctx, x, w.ln_w, w.ln_b);
  ggml_tensor* q = ggml_scale(ctx, ggml_add(ctx, ggml_mul_mat(ctx, w.q_w, cur), w.q_b), scale);
  ggml_tensor* k = ggml_scale(ctx, ggml_mul_mat(ctx, w.k_w, cur), scale);
  ggml_tensor* v = ggml_add(ctx, ggml_mul_mat(ctx, w.v_w, cur), w.v_b);
  if (q == nullptr || k == nullptr || v == nullptr) return nullptr;

  ggml_tensor* k_dst = ggml_view_1d(ctx, kv.k, s.n_tokens * s.S, layer + es * s.S * s.n_past);
  ggml_tensor* v_dst = ggml_view_2d(ctx, kv.v, s.n_tokens, s.S, es * s.n_text_ctx,
                                    layer + es * s.n_past);
  if (!ggml_build_forward_expand(graph, ggml_cpy(ctx, k, k_dst)) ||
      !ggml_build_forward_expand(graph, ggml_cpy(ctx, ggml_transpose(ctx, v), v_dst))) {
    return nullptr;
  }

  ggml_tensor* Q = ggml_permute(ctx, ggml_reshape_3d(ctx, q, s.d, s.n_head, s.n_tokens), 0, 2, 1, 3);
  ggml_tensor* K = ggml_view_3d(ctx, kv.k, s.d, n_kv, s.n_head, es * s.S, es * s.d, layer);
  ggml_tensor* kq = ggml_mul_mat(ctx, K, Q);  // [n_kv, n_tokens, n_head]
  kq = ggml_soft_max(ctx, ggml_diag_mask_inf(ctx, kq, static_cast<int>(s.n_past)));
  ggml_tensor* V = ggml_view_3d(ctx, kv.v, n_kv, s.d, s.n_head, es * s.n_text_ctx,
                                es * s.n_text_ctx * s.d, layer);
  ggml_tensor* kqv = ggml_mul_mat(ctx, V, kq);  // [d, n_tokens, n_head]
  cur = ggml_cont_2d(ctx, ggml_permute(ctx, kqv, 0, 2, 1, 3), s.S, s.n_tokens);
  cur = ggml_add(ctx, ggml_mul_mat(ctx, w.o_w, cur), w.o_b);
  return ggml_add(ctx, cur, x);
}

// x + CrossAttn(LN(x)) for layer il over the window's n_audio_ctx encoder positions, the tokens
// in blocks of at most kDecoderQueryBlock (a long prompt's scores [n_audio_ctx, n_tokens, n_head]
// one block at a time).
// For each alignment head i of layer il (heads[i].layer == il), copies its logits
// [n_audio_ctx, n_tokens] into slice i of aheads_qk (appending the copies to `graph`).
ggml_tensor* CrossAttention(ggml_context* ctx, ggml_cgraph* graph, const AttentionWeights& w, const DecoderKv& kv,
                            int il, const StepShape& s, ggml_tensor* x, const AlignmentHead* heads,
                            int n_heads, ggml_tensor* aheads_qk) {
  const size_t es = ggml_element_size(kv.k);
  const size_t layer = es * s.n_audio_ctx * s.S * il;
  ggml_tensor* cur = LayerNorm(ctx, x, w.ln_w, w.ln_b);
  ggml_tensor* q = ggml_add(ctx, ggml_mul_mat(ctx, w.q_w, cur), w.q_b);
  if (q == nullptr) return nullptr;
  ggml_tensor* Q = ggml_permute(ctx, ggml_reshape_3d(ctx, q, s.d, s.n_head, s.n_tokens), 0, 2, 1, 3);
  ggml_tensor* K = ggml_view_3d(ctx, kv.k, s.d, s.n_audio_ctx, s.n_head, es * s.S, es * s.d, layer);
  ggml_tensor* V = ggml_view_3d(ctx, kv.v, s.n_audio_ctx, s.d, s.n_head, es * s.n_audio_ctx,
                                es * s.n_audio_ctx * s.d, layer);
  const float scale = std::pow(static_cast<float>(s.d), -0.25f);
  for (int i = 0; i < n_heads; ++i) {
    if (heads[i].layer != il) continue;
    const size_t h = static_cast<size_t>(heads[i].head);
    ggml_tensor* Kh = ggml_view_2d(ctx, K, s.d, s.n_audio_ctx, K->nb[1], h * K->nb[2]);
    ggml_tensor* Qh = ggml_view_2d(ctx, Q, s.d, s.n_tokens, Q->nb[1], h * Q->nb[2]);
    ggml_tensor* qk = ggml_scale(ctx, ggml_mul_mat(ctx, Kh, Qh), scale);  // [n_audio_ctx, n_tokens]
    ggml_tensor* dst = ggml_view_2d(ctx, aheads_qk, s.n_audio_ctx, s.n_tokens, aheads_qk->nb[1],
                                    static_cast<size_t>(i) * aheads_qk->nb[2]);
    if (!ggml_build_forward_expand(graph, ggml_cpy(ctx, qk, dst))) return nullptr;
  }
  // softmax(K^T Q * d^-0.25) V (K was scaled by d^-0.25 in the cross graph), [S, n_tokens].
  cur = BlockedAttention(ctx, Q, K, V, scale, kDecoderQueryBlock);
  if (cur == nullptr) return nullptr;
  cur = ggml_add(ctx, ggml_mul_mat(ctx, w.o_w, cur), w.o_b);
  return ggml_add(ctx, cur, x);
}

}  // namespace

int DecoderGraphSize(const WhisperHparams& h, int n_aheads) {
  const int blocks = (h.n_text_ctx + kDecoderQueryBlock - 1) / kDecoderQueryBlock;
  return 64 + (80 + 8 * blocks) * h.n_text_layer + 8 * std::max(0, n_aheads);
}

absl::StatusOr<DecoderGraph> BuildDecoderGraph(ggml_context* ctx, const WhisperModel& model,
                                               const DecoderKv& self_kv, const DecoderKv& cross_kv,
                                               int n_audio_ctx, int n_tokens, int n_past,
                                               const AlignmentHead* aheads, int n_aheads) {
  const WhisperHparams& h = model.hparams();
  const WhisperWeights& w = model.weights();
  StepShape s;
  s.S = h.n_text_state;
  s.n_head = h.n_text_head;
  s.d = s.S / s.n_head;
  s.n_text_ctx = h.n_text_ctx;
  s.n_audio_ctx = n_audio_ctx;
  s.n_tokens = n_tokens;
  s.n_past = n_past;
  if (n_tokens < 1 || n_past < 0 || n_past + n_tokens > h.n_text_ctx) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "decoder: %d tokens at n_past %d do not fit n_text_ctx %d (need n_tokens >= 1, "
        "n_past >= 0, n_past + n_tokens <= n_text_ctx)",
        n_tokens, n_past, h.n_text_ctx));
  }
  if (n_audio_ctx < 1 || n_audio_ctx > h.n_audio_ctx) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "decoder: n_audio_ctx %d is not in [1, %d]", n_audio_ctx, h.n_audio_ctx));
  }
  const int64_t self_need = static_cast<int64_t>(h.n_text_layer) * h.n_text_ctx * s.S;
  const int64_t cross_need = static_cast<int64_t>(h.n_text_layer) * n_audio_ctx * s.S;
  for (const ggml_tensor* t : {self_kv.k, self_kv.v, cross_kv.k, cross_kv.v}) {
    const int64_t need = (t == self_kv.k || t == self_kv.v) ? self_need : cross_need;
    if (t == nullptr || t->type != GGML_TYPE_F16 || ggml_nelements(t) < need) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "decoder: KV caches must be F16 with >= %lld (self) / %lld (cross) elements",
          static_cast<long long>(self_need), static_cast<long long>(cross_need)));
    }
  }

  if (n_aheads < 0 || (n_aheads > 0 && aheads == nullptr)) {
    return absl::InvalidArgumentError("decoder: alignment heads: a negative count or no array");
  }
  for (int i = 0; i < n_aheads; ++i) {
    if (aheads[i].layer < 0 || aheads[i].layer >= h.n_text_layer || aheads[i].head < 0 ||
        aheads[i].head >= h.n_text_head) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "decoder: alignment head %d is layer %d head %d, outside %d layers of %d heads", i, aheads[i].layer,
          aheads[i].head, h.n_text_layer, h.n_text_head));
    }
  }

  DecoderGraph g;
  g.graph = ggml_new_graph_custom(ctx, DecoderGraphSize(h, n_aheads));
  if (g.graph == nullptr) return BuildError("decoder graph");
  if (n_aheads > 0) {
    g.aheads_qk = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, n_audio_ctx, n_tokens, n_aheads);
    if (g.aheads_qk == nullptr) return BuildError("decoder alignment heads output");
    ggml_set_name(g.aheads_qk, "aheads_qk");
    ggml_set_output(g.aheads_qk);
  }
  g.tokens = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n_tokens);
  if (g.tokens == nullptr) return BuildError("decoder tokens input");
  ggml_set_name(g.tokens, "tokens");
  ggml_set_input(g.tokens);

  // Positions n_past .. n_past + n_tokens - 1 are consecutive rows of the embedding: a view.
  ggml_tensor* pe = ggml_view_2d(ctx, w.d_pe, s.S, n_tokens, w.d_pe->nb[1], w.d_pe->nb[1] * n_past);
  ggml_tensor* cur = ggml_add(ctx, ggml_get_rows(ctx, w.d_te, g.tokens), pe);
  if (cur == nullptr) return BuildError("decoder embeddings");
  for (int il = 0; il < h.n_text_layer; ++il) {
    const DecoderLayerWeights& lw = w.decoder[il];
    cur = SelfAttention(ctx, g.graph, lw.attn, self_kv, il, s, cur);
    cur = CrossAttention(ctx, g.graph, lw.cross, cross_kv, il, s, cur, aheads, n_aheads, g.aheads_qk);
    cur = MlpBlock(ctx, lw.mlp, cur);
    if (cur == nullptr) return BuildError(absl::StrCat("decoder layer ", il));
  }
  // Only the last token's logits are needed: LN and the projection on that column alone.
  ggml_tensor* last = ggml_view_2d(ctx, cur, s.S, 1, cur->nb[1], cur->nb[1] * (n_tokens - 1));
  last = LayerNorm(ctx, last, w.d_ln_w, w.d_ln_b);
  g.logits = ggml_mul_mat(ctx, w.d_te, last);
  if (g.logits == nullptr) return BuildError("decoder logits");
  ggml_set_name(g.logits, "logits");
  ggml_set_output(g.logits);
  if (!ggml_build_forward_expand(g.graph, g.logits)) return BuildError("decoder graph");
  return g;
}

}  // namespace whisper
