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
// run before the products that read the cache. With n_kvs == 1 the s.n_tokens columns of x are
// consecutive positions n_past.. of kvs[0] (causal mask); with n_kvs == s.n_tokens > 1, column b is
// one token of decoder kvs[b] at position n_past: the projections run on all columns at once and
// each column attends to its own cache (one product pair per column, joined by concat).
ggml_tensor* SelfAttention(ggml_context* ctx, ggml_cgraph* graph, const AttentionWeights& w,
                           const DecoderKv* kvs, int n_kvs, int il, const StepShape& s, ggml_tensor* x) {
  const float scale = std::pow(static_cast<float>(s.d), -0.25f);
  const size_t es = ggml_element_size(kvs[0].k);
  const size_t layer = es * s.n_text_ctx * s.S * il;
  const int64_t n_kv = s.n_past + (n_kvs == 1 ? s.n_tokens : 1);
  ggml_tensor* cur = LayerNorm(ctx, x, w.ln_w, w.ln_b);
  ggml_tensor* q = ggml_scale(ctx, ggml_add(ctx, ggml_mul_mat(ctx, w.q_w, cur), w.q_b), scale);
  ggml_tensor* k = ggml_scale(ctx, ggml_mul_mat(ctx, w.k_w, cur), scale);
  ggml_tensor* v = ggml_add(ctx, ggml_mul_mat(ctx, w.v_w, cur), w.v_b);
  if (q == nullptr || k == nullptr || v == nullptr) return nullptr;
  ggml_tensor* Q = ggml_permute(ctx, ggml_reshape_3d(ctx, q, s.d, s.n_head, s.n_tokens), 0, 2, 1, 3);

  ggml_tensor* kqv = nullptr;  // [d, n_tokens, n_head]
  if (n_kvs == 1) {
    const DecoderKv& kv = kvs[0];
    ggml_tensor* k_dst = ggml_view_1d(ctx, kv.k, s.n_tokens * s.S, layer + es * s.S * s.n_past);
    ggml_tensor* v_dst = ggml_view_2d(ctx, kv.v, s.n_tokens, s.S, es * s.n_text_ctx, layer + es * s.n_past);
    if (!ggml_build_forward_expand(graph, ggml_cpy(ctx, k, k_dst)) ||
        !ggml_build_forward_expand(graph, ggml_cpy(ctx, ggml_transpose(ctx, v), v_dst))) {
      return nullptr;
    }
    ggml_tensor* K = ggml_view_3d(ctx, kv.k, s.d, n_kv, s.n_head, es * s.S, es * s.d, layer);
    ggml_tensor* kq = ggml_mul_mat(ctx, K, Q);  // [n_kv, n_tokens, n_head]
    kq = ggml_soft_max(ctx, ggml_diag_mask_inf(ctx, kq, static_cast<int>(s.n_past)));
    ggml_tensor* V = ggml_view_3d(ctx, kv.v, n_kv, s.d, s.n_head, es * s.n_text_ctx, es * s.n_text_ctx * s.d, layer);
    kqv = ggml_mul_mat(ctx, V, kq);
  } else {
    for (int b = 0; b < n_kvs; ++b) {
      const DecoderKv& kv = kvs[b];
      // Column b of k ([S, n_tokens]) to position n_past of its cache; column b of v to the
      // transposed cache as a [1, S] row.
      ggml_tensor* k_dst = ggml_view_1d(ctx, kv.k, s.S, layer + es * s.S * s.n_past);
      ggml_tensor* v_dst = ggml_view_2d(ctx, kv.v, 1, s.S, es * s.n_text_ctx, layer + es * s.n_past);
      ggml_tensor* k_b = ggml_view_1d(ctx, k, s.S, b * k->nb[1]);
      ggml_tensor* v_b = ggml_view_2d(ctx, v, 1, s.S, v->nb[0], b * v->nb[1]);
      if (!ggml_build_forward_expand(graph, ggml_cpy(ctx, k_b, k_dst)) ||
          !ggml_build_forward_expand(graph, ggml_cpy(ctx, v_b, v_dst))) {
        return nullptr;
      }
      ggml_tensor* Q_b = ggml_view_3d(ctx, Q, s.d, 1, s.n_head, Q->nb[1], Q->nb[2], b * Q->nb[1]);
      ggml_tensor* K = ggml_view_3d(ctx, kv.k, s.d, n_kv, s.n_head, es * s.S, es * s.d, layer);
      // One query at position n_past sees every key 0..n_past: no mask.
      ggml_tensor* kq = ggml_soft_max(ctx, ggml_mul_mat(ctx, K, Q_b));  // [n_kv, 1, n_head]
      ggml_tensor* V = ggml_view_3d(ctx, kv.v, n_kv, s.d, s.n_head, es * s.n_text_ctx, es * s.n_text_ctx * s.d, layer);
      ggml_tensor* kqv_b = ggml_mul_mat(ctx, V, kq);  // [d, 1, n_head]
      kqv = b == 0 ? kqv_b : ggml_concat(ctx, kqv, kqv_b, 1);
    }
  }
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
  ggml_tensor* K = ggml_view_3d(ctx, kv.k, s.d, s.n_audio_ctx, s.n_head, es * s.d, es * s.d * s.n_audio_ctx, layer);
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

int DecoderGraphSize(const WhisperHparams& h, int n_aheads, int n_batch) {
  const int blocks = (h.n_text_ctx + kDecoderQueryBlock - 1) / kDecoderQueryBlock;
  return 64 + (80 + 8 * blocks + 16 * std::max(0, n_batch)) * h.n_text_layer + 8 * std::max(0, n_aheads);
}

namespace {

// One decoder step's inputs: BuildDecoderGraph's (n_kvs == 1) or BuildBatchedDecoderGraph's
// (n_kvs == n_tokens decoders, one token each; see SelfAttention).
struct DecoderStep {
  const DecoderKv* self_kvs = nullptr;
  int n_kvs = 1;
  const DecoderKv* cross_kv = nullptr;
  int n_audio_ctx = 0;
  int n_tokens = 0;
  int n_past = 0;
  const AlignmentHead* aheads = nullptr;
  int n_aheads = 0;
  int n_logits = 1;  // logits of the last n_logits tokens (n_kvs == 1)
};

// The step's positions, audio context, KV caches (F16, large enough) and alignment heads against
// the model's hparams; InvalidArgument naming the first that does not fit.
absl::Status CheckStep(const WhisperHparams& h, const DecoderStep& st) {
  const int n_new = st.n_kvs > 1 ? 1 : st.n_tokens;  // positions appended to each cache
  if (st.n_tokens < 1 || st.n_past < 0 || st.n_past + n_new > h.n_text_ctx) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "decoder: %d tokens at n_past %d do not fit n_text_ctx %d (need n_tokens >= 1, "
        "n_past >= 0, n_past + n_tokens <= n_text_ctx)",
        n_new, st.n_past, h.n_text_ctx));
  }
  if (st.n_audio_ctx < 1 || st.n_audio_ctx > h.n_audio_ctx) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "decoder: n_audio_ctx %d is not in [1, %d]", st.n_audio_ctx, h.n_audio_ctx));
  }
  const int64_t self_need = static_cast<int64_t>(h.n_text_layer) * h.n_text_ctx * h.n_text_state;
  const int64_t cross_need = static_cast<int64_t>(h.n_text_layer) * st.n_audio_ctx * h.n_text_state;
  for (int b = 0; b <= st.n_kvs; ++b) {
    const DecoderKv& kv = b < st.n_kvs ? st.self_kvs[b] : *st.cross_kv;
    const int64_t need = b < st.n_kvs ? self_need : cross_need;
    for (const ggml_tensor* t : {kv.k, kv.v}) {
      if (t == nullptr || t->type != GGML_TYPE_F16 || ggml_nelements(t) < need) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "decoder: KV caches must be F16 with >= %lld (self) / %lld (cross) elements",
            static_cast<long long>(self_need), static_cast<long long>(cross_need)));
      }
    }
  }
  if (st.n_kvs == 1 && (st.n_logits < 1 || st.n_logits > st.n_tokens)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("decoder: logits of the last %d tokens of %d (need 1 .. n_tokens)", st.n_logits, st.n_tokens));
  }
  if (st.n_aheads < 0 || (st.n_aheads > 0 && st.aheads == nullptr)) {
    return absl::InvalidArgumentError("decoder: alignment heads: a negative count or no array");
  }
  for (int i = 0; i < st.n_aheads; ++i) {
    const AlignmentHead& a = st.aheads[i];
    if (a.layer < 0 || a.layer >= h.n_text_layer || a.head < 0 || a.head >= h.n_text_head) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "decoder: alignment head %d is layer %d head %d, outside %d layers of %d heads", i, a.layer, a.head,
          h.n_text_layer, h.n_text_head));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<DecoderGraph> Build(ggml_context* ctx, const WhisperModel& model, const DecoderStep& st) {
  const WhisperHparams& h = model.hparams();
  const WhisperWeights& w = model.weights();
  absl::Status check = CheckStep(h, st);
  if (!check.ok()) return check;
  const int n_kvs = st.n_kvs;
  const int n_tokens = st.n_tokens;
  StepShape s;
  s.S = h.n_text_state;
  s.n_head = h.n_text_head;
  s.d = s.S / s.n_head;
  s.n_text_ctx = h.n_text_ctx;
  s.n_audio_ctx = st.n_audio_ctx;
  s.n_tokens = n_tokens;
  s.n_past = st.n_past;
  const int n_new = n_kvs > 1 ? 1 : n_tokens;  // positions appended to each cache

  DecoderGraph g;
  g.graph = ggml_new_graph_custom(ctx, DecoderGraphSize(h, st.n_aheads, n_kvs > 1 ? n_kvs : 0));
  if (g.graph == nullptr) return BuildError("decoder graph");
  if (st.n_aheads > 0) {
    g.aheads_qk = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, st.n_audio_ctx, n_tokens, st.n_aheads);
    if (g.aheads_qk == nullptr) return BuildError("decoder alignment heads output");
    ggml_set_name(g.aheads_qk, "aheads_qk");
    ggml_set_output(g.aheads_qk);
  }
  g.tokens = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n_tokens);
  if (g.tokens == nullptr) return BuildError("decoder tokens input");
  ggml_set_name(g.tokens, "tokens");
  ggml_set_input(g.tokens);

  // Positions n_past .. n_past + n_tokens - 1 are consecutive rows of the embedding: a view.
  // (A batch's tokens all sit at n_past: one row, broadcast by the add.)
  ggml_tensor* pe = ggml_view_2d(ctx, w.d_pe, s.S, n_new, w.d_pe->nb[1], w.d_pe->nb[1] * st.n_past);
  ggml_tensor* cur = ggml_add(ctx, ggml_get_rows(ctx, w.d_te, g.tokens), pe);
  if (cur == nullptr) return BuildError("decoder embeddings");
  for (int il = 0; il < h.n_text_layer; ++il) {
    const DecoderLayerWeights& lw = w.decoder[il];
    cur = SelfAttention(ctx, g.graph, lw.attn, st.self_kvs, n_kvs, il, s, cur);
    cur = CrossAttention(ctx, g.graph, lw.cross, *st.cross_kv, il, s, cur, st.aheads, st.n_aheads, g.aheads_qk);
    cur = MlpBlock(ctx, lw.mlp, cur);
    if (cur == nullptr) return BuildError(absl::StrCat("decoder layer ", il));
  }
  // Only the last token's logits are needed (of each decoder's token in a batch; the last
  // n_logits tokens' for the alignment pass's probabilities): LN and the projection on those
  // columns alone.
  const int n_out = n_kvs > 1 ? n_tokens : st.n_logits;
  ggml_tensor* last = ggml_view_2d(ctx, cur, s.S, n_out, cur->nb[1], cur->nb[1] * (n_tokens - n_out));
  last = LayerNorm(ctx, last, w.d_ln_w, w.d_ln_b);
  g.logits = ggml_mul_mat(ctx, w.d_te, last);
  if (g.logits == nullptr) return BuildError("decoder logits");
  ggml_set_name(g.logits, "logits");
  ggml_set_output(g.logits);
  if (!ggml_build_forward_expand(g.graph, g.logits)) return BuildError("decoder graph");
  return g;
}

}  // namespace

absl::StatusOr<DecoderGraph> BuildDecoderGraph(ggml_context* ctx, const WhisperModel& model,
                                               const DecoderKv& self_kv, const DecoderKv& cross_kv,
                                               int n_audio_ctx, int n_tokens, int n_past,
                                               const AlignmentHead* aheads, int n_aheads, int n_logits) {
  return Build(ctx, model,
               DecoderStep{&self_kv, 1, &cross_kv, n_audio_ctx, n_tokens, n_past, aheads, n_aheads, n_logits});
}

absl::StatusOr<DecoderGraph> BuildBatchedDecoderGraph(ggml_context* ctx, const WhisperModel& model,
                                                      const DecoderKv* self_kvs, int n_batch,
                                                      const DecoderKv& cross_kv, int n_audio_ctx, int n_past) {
  if (self_kvs == nullptr || n_batch < 1) {
    return absl::InvalidArgumentError(absl::StrFormat("decoder: a batch of %d decoders%s (need >= 1)", n_batch,
                                                      self_kvs == nullptr ? " and no KV caches" : ""));
  }
  for (int a = 0; a < n_batch; ++a) {
    for (int b = 0; b < a; ++b) {
      if (self_kvs[a].k == self_kvs[b].k || self_kvs[a].v == self_kvs[b].v) {
        return absl::InvalidArgumentError(
            absl::StrFormat("decoder: batch entries %d and %d share a KV cache (one token per decoder)", b, a));
      }
    }
  }
  return Build(ctx, model, DecoderStep{self_kvs, n_batch, &cross_kv, n_audio_ctx, n_batch, n_past, nullptr, 0});
}

}  // namespace whisper
