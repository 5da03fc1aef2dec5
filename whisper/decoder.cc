#include "whisper/decoder.h"

#include <algorithm>
#include <cmath>
#include <vector>

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

// One decoder step's inputs. BuildDecoderGraph: one sequence, n_tokens consecutive tokens
// (one_token_each false). BuildSequencesDecoderGraph: n_seqs sequences, one token each
// (n_tokens == n_seqs, column b is sequence b's token).
struct DecoderStep {
  const DecoderSequence* seqs = nullptr;
  int n_seqs = 1;
  bool one_token_each = false;
  int n_tokens = 0;
  const AlignmentHead* aheads = nullptr;
  int n_aheads = 0;
  int n_logits = 1;  // logits of the last n_logits tokens (one sequence)
  Gelu gelu = Gelu::kErf;
};

struct StepShape {
  int64_t S, n_head, d, n_text_ctx, n_tokens;
  bool matvec;  // the products are in matvec mode (one token each; see MatVec)
};

// `product` (a MUL_MAT node, or nullptr) in ggml_mul_mat_set_matvec's mode: each column computed
// as a matrix-vector product, so its bits do not depend on how many sequences share the step.
ggml_tensor* MatVec(ggml_tensor* product) {
  return product == nullptr ? nullptr : ggml_mul_mat_set_matvec(product, true);
}

// w x for x [K, n] (contiguous columns): one product, in matvec mode when s.matvec (each weight
// matrix read once for all n columns, each column the bits of a single sequence's step).
ggml_tensor* Project(ggml_context* ctx, ggml_tensor* w, ggml_tensor* x, const StepShape& s) {
  ggml_tensor* y = ggml_mul_mat(ctx, w, x);
  return s.matvec ? MatVec(y) : y;
}

// x + MLP(LN(x)) (whisper/encoder.h MlpBlock) with the products made by Project.
ggml_tensor* DecoderMlp(ggml_context* ctx, const MlpWeights& w, ggml_tensor* x, const StepShape& s, Gelu gelu) {
  if (!s.matvec) return MlpBlock(ctx, w, x, gelu);
  ggml_tensor* cur = LayerNorm(ctx, x, w.ln_w, w.ln_b);
  cur = GeluOp(ctx, ggml_add(ctx, Project(ctx, w.fc1_w, cur, s), w.fc1_b), gelu);
  cur = ggml_add(ctx, Project(ctx, w.fc2_w, cur, s), w.fc2_b);
  return ggml_add(ctx, cur, x);
}

// Sequence b's new K column and V row (column b of k and v, [S, n_tokens]) are copied to position
// n_past of its cache, then its query (column b of Q) attends to positions 0 .. n_past: no mask,
// since one query at position n_past sees every key up to it. Returns [d, 1, n_head].
ggml_tensor* SequenceSelfAttention(ggml_context* ctx, ggml_cgraph* graph, const DecoderSequence& sq, int b,
                                   size_t layer, const StepShape& s, ggml_tensor* Q, ggml_tensor* k,
                                   ggml_tensor* v) {
  const DecoderKv& kv = sq.self_kv;
  const size_t es = ggml_element_size(kv.k);
  const int64_t n_kv = sq.n_past + 1;
  ggml_tensor* k_dst = ggml_view_1d(ctx, kv.k, s.S, layer + es * s.S * sq.n_past);
  ggml_tensor* v_dst = ggml_view_2d(ctx, kv.v, 1, s.S, es * s.n_text_ctx, layer + es * sq.n_past);
  ggml_tensor* k_b = ggml_view_1d(ctx, k, s.S, b * k->nb[1]);
  ggml_tensor* v_b = ggml_view_2d(ctx, v, 1, s.S, v->nb[0], b * v->nb[1]);
  if (!ggml_build_forward_expand(graph, ggml_cpy(ctx, k_b, k_dst)) ||
      !ggml_build_forward_expand(graph, ggml_cpy(ctx, v_b, v_dst))) {
    return nullptr;
  }
  ggml_tensor* Q_b = ggml_view_3d(ctx, Q, s.d, 1, s.n_head, Q->nb[1], Q->nb[2], b * Q->nb[1]);
  ggml_tensor* K = ggml_view_3d(ctx, kv.k, s.d, n_kv, s.n_head, es * s.S, es * s.d, layer);
  ggml_tensor* kq = ggml_soft_max(ctx, ggml_mul_mat(ctx, K, Q_b));  // [n_kv, 1, n_head]
  ggml_tensor* V = ggml_view_3d(ctx, kv.v, n_kv, s.d, s.n_head, es * s.n_text_ctx, es * s.n_text_ctx * s.d, layer);
  return ggml_mul_mat(ctx, V, kq);  // [d, 1, n_head]
}

// x + SelfAttn(LN(x)) for layer il; appends the K/V cache writes to `graph` first so that they
// run before the products that read the cache. One sequence: the s.n_tokens columns of x are
// consecutive positions n_past.. of its cache (causal mask). One token each: column b is
// sequence b's token; the projections run on all columns at once and each column attends to its
// own cache (SequenceSelfAttention, joined by concat).
ggml_tensor* SelfAttention(ggml_context* ctx, ggml_cgraph* graph, const AttentionWeights& w, const DecoderStep& st,
                           int il, const StepShape& s, ggml_tensor* x) {
  const float scale = std::pow(static_cast<float>(s.d), -0.25f);
  const size_t es = ggml_element_size(st.seqs[0].self_kv.k);
  const size_t layer = es * s.n_text_ctx * s.S * il;
  ggml_tensor* cur = LayerNorm(ctx, x, w.ln_w, w.ln_b);
  ggml_tensor* q = ggml_scale(ctx, ggml_add(ctx, Project(ctx, w.q_w, cur, s), w.q_b), scale);
  ggml_tensor* k = ggml_scale(ctx, Project(ctx, w.k_w, cur, s), scale);
  ggml_tensor* v = ggml_add(ctx, Project(ctx, w.v_w, cur, s), w.v_b);
  if (q == nullptr || k == nullptr || v == nullptr) return nullptr;
  ggml_tensor* Q = ggml_permute(ctx, ggml_reshape_3d(ctx, q, s.d, s.n_head, s.n_tokens), 0, 2, 1, 3);

  ggml_tensor* kqv = nullptr;  // [d, n_tokens, n_head]
  if (!st.one_token_each) {
    const DecoderKv& kv = st.seqs[0].self_kv;
    const int64_t n_past = st.seqs[0].n_past;
    const int64_t n_kv = n_past + s.n_tokens;
    ggml_tensor* k_dst = ggml_view_1d(ctx, kv.k, s.n_tokens * s.S, layer + es * s.S * n_past);
    ggml_tensor* v_dst = ggml_view_2d(ctx, kv.v, s.n_tokens, s.S, es * s.n_text_ctx, layer + es * n_past);
    if (!ggml_build_forward_expand(graph, ggml_cpy(ctx, k, k_dst)) ||
        !ggml_build_forward_expand(graph, ggml_cpy(ctx, ggml_transpose(ctx, v), v_dst))) {
      return nullptr;
    }
    ggml_tensor* K = ggml_view_3d(ctx, kv.k, s.d, n_kv, s.n_head, es * s.S, es * s.d, layer);
    ggml_tensor* kq = ggml_mul_mat(ctx, K, Q);  // [n_kv, n_tokens, n_head]
    kq = ggml_soft_max(ctx, ggml_diag_mask_inf(ctx, kq, static_cast<int>(n_past)));
    ggml_tensor* V = ggml_view_3d(ctx, kv.v, n_kv, s.d, s.n_head, es * s.n_text_ctx, es * s.n_text_ctx * s.d, layer);
    kqv = ggml_mul_mat(ctx, V, kq);
  } else {
    for (int b = 0; b < st.n_seqs; ++b) {
      ggml_tensor* kqv_b = SequenceSelfAttention(ctx, graph, st.seqs[b], b, layer, s, Q, k, v);
      kqv = b == 0 ? kqv_b : ggml_concat(ctx, kqv, kqv_b, 1);
      if (kqv == nullptr) return nullptr;
    }
  }
  cur = ggml_cont_2d(ctx, ggml_permute(ctx, kqv, 0, 2, 1, 3), s.S, s.n_tokens);
  cur = ggml_add(ctx, Project(ctx, w.o_w, cur, s), w.o_b);
  return ggml_add(ctx, cur, x);
}

// True when sequences a and b attend to the same window (same cross K/V and n_audio_ctx).
bool SameWindow(const DecoderSequence& a, const DecoderSequence& b) {
  return a.cross_kv.k == b.cross_kv.k && a.cross_kv.v == b.cross_kv.v && a.n_audio_ctx == b.n_audio_ctx;
}

// Copies the logits K^T Q / sqrt(d) [n_audio_ctx, n_tokens] of each alignment head i of layer il
// (heads[i].layer == il) into slice i of aheads_qk, appending the copies to `graph`.
bool CopyAlignmentHeads(ggml_context* ctx, ggml_cgraph* graph, ggml_tensor* Q, ggml_tensor* K, int il,
                        const StepShape& s, const DecoderStep& st, ggml_tensor* aheads_qk) {
  const float scale = std::pow(static_cast<float>(s.d), -0.25f);
  const int64_t n_audio_ctx = st.seqs[0].n_audio_ctx;
  for (int i = 0; i < st.n_aheads; ++i) {
    if (st.aheads[i].layer != il) continue;
    const size_t h = static_cast<size_t>(st.aheads[i].head);
    ggml_tensor* Kh = ggml_view_2d(ctx, K, s.d, n_audio_ctx, K->nb[1], h * K->nb[2]);
    ggml_tensor* Qh = ggml_view_2d(ctx, Q, s.d, s.n_tokens, Q->nb[1], h * Q->nb[2]);
    ggml_tensor* qk = ggml_scale(ctx, ggml_mul_mat(ctx, Kh, Qh), scale);  // [n_audio_ctx, n_tokens]
    ggml_tensor* dst = ggml_view_2d(ctx, aheads_qk, n_audio_ctx, s.n_tokens, aheads_qk->nb[1],
                                    static_cast<size_t>(i) * aheads_qk->nb[2]);
    if (!ggml_build_forward_expand(graph, ggml_cpy(ctx, qk, dst))) return false;
  }
  return true;
}

// softmax(K^T Q * scale) V for the queries Q [d, n, n_head], heads not yet merged: [d, n,
// n_head]. The products and softmax of BlockedAttention (whisper/encoder.h) for all n queries at
// once, both products in matvec mode: for each query the values of a single query's attention,
// with the window's cross K/V read once for all of them.
ggml_tensor* RunAttention(ggml_context* ctx, ggml_tensor* Q, ggml_tensor* K, ggml_tensor* V, float scale) {
  ggml_tensor* kq = ggml_soft_max_ext(ctx, MatVec(ggml_mul_mat(ctx, K, Q)), nullptr, scale, 0.0f);
  return MatVec(ggml_mul_mat(ctx, V, kq));
}

// x + CrossAttn(LN(x)) for layer il. The columns are cut into runs of consecutive sequences that
// share a window (SameWindow; one sequence's tokens are one run): each run's queries attend to
// its window's n_audio_ctx encoder positions in blocks of at most kDecoderQueryBlock (a long
// prompt's scores [n_audio_ctx, n_tokens, n_head] one block at a time), so the beams of one window
// read its cross K/V once. The runs' outputs are joined by concat (RunAttention). Alignment
// heads (one sequence only): CopyAlignmentHeads.
ggml_tensor* CrossAttention(ggml_context* ctx, ggml_cgraph* graph, const AttentionWeights& w, const DecoderStep& st,
                            int il, const StepShape& s, ggml_tensor* x, ggml_tensor* aheads_qk) {
  ggml_tensor* cur = LayerNorm(ctx, x, w.ln_w, w.ln_b);
  ggml_tensor* q = ggml_add(ctx, Project(ctx, w.q_w, cur, s), w.q_b);
  if (q == nullptr) return nullptr;
  ggml_tensor* Q = ggml_permute(ctx, ggml_reshape_3d(ctx, q, s.d, s.n_head, s.n_tokens), 0, 2, 1, 3);
  const float scale = std::pow(static_cast<float>(s.d), -0.25f);
  ggml_tensor* attn = nullptr;  // [S, columns so far]
  const int n_runs_max = st.one_token_each ? st.n_seqs : 1;
  for (int b0 = 0; b0 < n_runs_max;) {
    int b1 = b0 + 1;
    while (b1 < n_runs_max && SameWindow(st.seqs[b1], st.seqs[b0])) ++b1;
    const DecoderSequence& sq = st.seqs[b0];
    const DecoderKv& kv = sq.cross_kv;
    const int64_t n_ctx = sq.n_audio_ctx;
    const size_t es = ggml_element_size(kv.k);
    const size_t layer = es * n_ctx * s.S * il;
    ggml_tensor* K = ggml_view_3d(ctx, kv.k, s.d, n_ctx, s.n_head, es * s.d, es * s.d * n_ctx, layer);
    ggml_tensor* V = ggml_view_3d(ctx, kv.v, n_ctx, s.d, s.n_head, es * n_ctx, es * n_ctx * s.d, layer);
    if (st.n_aheads > 0 && !CopyAlignmentHeads(ctx, graph, Q, K, il, s, st, aheads_qk)) return nullptr;
    const int64_t n_cols = st.one_token_each ? b1 - b0 : s.n_tokens;
    ggml_tensor* Qr = n_cols == s.n_tokens ? Q
                                           : ggml_view_3d(ctx, Q, s.d, n_cols, s.n_head, Q->nb[1], Q->nb[2],
                                                          b0 * Q->nb[1]);
    // softmax(K^T Q * d^-0.25) V (K was scaled by d^-0.25 in the cross graph), [S, n_cols]; one
    // token each: [d, n_cols, n_head], the runs joined before one permute for all.
    ggml_tensor* run = st.one_token_each ? RunAttention(ctx, Qr, K, V, scale)
                                         : BlockedAttention(ctx, Qr, K, V, scale, kDecoderQueryBlock);
    attn = attn == nullptr ? run : ggml_concat(ctx, attn, run, 1);
    if (attn == nullptr) return nullptr;
    b0 = b1;
  }
  if (st.one_token_each) attn = ggml_cont_2d(ctx, ggml_permute(ctx, attn, 0, 2, 1, 3), s.S, s.n_tokens);
  cur = ggml_add(ctx, Project(ctx, w.o_w, attn, s), w.o_b);
  return ggml_add(ctx, cur, x);
}

}  // namespace

int DecoderGraphSize(const WhisperHparams& h, int n_aheads, int n_batch) {
  const int blocks = (h.n_text_ctx + kDecoderQueryBlock - 1) / kDecoderQueryBlock;
  const int n = std::max(0, n_batch);
  return 64 + 8 * n + (80 + 8 * blocks + 36 * n) * h.n_text_layer + 8 * std::max(0, n_aheads);
}

namespace {

// One cache against the model: F16 with >= need elements in K and V.
bool CacheFits(const DecoderKv& kv, int64_t need) {
  for (const ggml_tensor* t : {kv.k, kv.v}) {
    if (t == nullptr || t->type != GGML_TYPE_F16 || ggml_nelements(t) < need) return false;
  }
  return true;
}

// Sequence b's position, audio context and KV caches (F16, large enough) against the model's
// hparams, for n_new tokens; InvalidArgument naming the first that does not fit.
absl::Status CheckSequence(const WhisperHparams& h, const DecoderSequence& sq, int b, int n_new) {
  if (n_new < 1 || sq.n_past < 0 || sq.n_past + n_new > h.n_text_ctx) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "decoder: %d tokens at n_past %d do not fit n_text_ctx %d (need n_tokens >= 1, "
        "n_past >= 0, n_past + n_tokens <= n_text_ctx; sequence %d)",
        n_new, sq.n_past, h.n_text_ctx, b));
  }
  if (sq.n_audio_ctx < 1 || sq.n_audio_ctx > h.n_audio_ctx) {
    return absl::InvalidArgumentError(absl::StrFormat("decoder: n_audio_ctx %d is not in [1, %d] (sequence %d)",
                                                      sq.n_audio_ctx, h.n_audio_ctx, b));
  }
  const int64_t self_need = static_cast<int64_t>(h.n_text_layer) * h.n_text_ctx * h.n_text_state;
  const int64_t cross_need = static_cast<int64_t>(h.n_text_layer) * sq.n_audio_ctx * h.n_text_state;
  if (!CacheFits(sq.self_kv, self_need) || !CacheFits(sq.cross_kv, cross_need)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "decoder: KV caches must be F16 with >= %lld (self) / %lld (cross) elements (sequence %d)",
        static_cast<long long>(self_need), static_cast<long long>(cross_need), b));
  }
  return absl::OkStatus();
}

// The step's sequences and alignment heads against the model's hparams; InvalidArgument naming
// the first that does not fit.
absl::Status CheckStep(const WhisperHparams& h, const DecoderStep& st) {
  for (int b = 0; b < st.n_seqs; ++b) {
    absl::Status s = CheckSequence(h, st.seqs[b], b, st.one_token_each ? 1 : st.n_tokens);
    if (!s.ok()) return s;
    for (int a = 0; a < b; ++a) {
      if (st.seqs[a].self_kv.k == st.seqs[b].self_kv.k || st.seqs[a].self_kv.v == st.seqs[b].self_kv.v) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "decoder: batch entries %d and %d share a KV cache (one token per decoder)", a, b));
      }
    }
  }
  if (!st.one_token_each && (st.n_logits < 1 || st.n_logits > st.n_tokens)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("decoder: logits of the last %d tokens of %d (need 1 .. n_tokens)", st.n_logits, st.n_tokens));
  }
  if (st.n_aheads < 0 || (st.n_aheads > 0 && (st.aheads == nullptr || st.one_token_each))) {
    return absl::InvalidArgumentError("decoder: alignment heads: a negative count, no array, or a batched step");
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

// token_embedding[tokens] + the positional rows, [S, n_tokens]. One sequence: rows n_past ..
// n_past + n_tokens - 1, consecutive, so a view. One token each at the same n_past: that row,
// broadcast by the add. At different n_past: rows gathered by the `positions` input (I32
// [n_seqs], made here, filled by the caller).
ggml_tensor* Embeddings(ggml_context* ctx, const WhisperWeights& w, const DecoderStep& st, DecoderGraph* g) {
  bool same_past = true;
  for (int b = 1; b < st.n_seqs; ++b) same_past = same_past && st.seqs[b].n_past == st.seqs[0].n_past;
  ggml_tensor* pe = nullptr;
  if (same_past) {
    const int64_t n_rows = st.one_token_each ? 1 : st.n_tokens;
    pe = ggml_view_2d(ctx, w.d_pe, w.d_pe->ne[0], n_rows, w.d_pe->nb[1], w.d_pe->nb[1] * st.seqs[0].n_past);
  } else {
    g->positions = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, st.n_seqs);
    if (g->positions == nullptr) return nullptr;
    ggml_set_name(g->positions, "positions");
    ggml_set_input(g->positions);
    pe = ggml_get_rows(ctx, w.d_pe, g->positions);
  }
  return ggml_add(ctx, ggml_get_rows(ctx, w.d_te, g->tokens), pe);
}

absl::StatusOr<DecoderGraph> Build(ggml_context* ctx, const WhisperModel& model, const DecoderStep& st) {
  const WhisperHparams& h = model.hparams();
  const WhisperWeights& w = model.weights();
  absl::Status check = CheckStep(h, st);
  if (!check.ok()) return check;
  const int n_tokens = st.n_tokens;
  const StepShape s{h.n_text_state, h.n_text_head, h.n_text_state / h.n_text_head, h.n_text_ctx, n_tokens,
                    st.one_token_each};

  DecoderGraph g;
  g.graph = ggml_new_graph_custom(ctx, DecoderGraphSize(h, st.n_aheads, st.one_token_each ? st.n_seqs : 0));
  if (g.graph == nullptr) return BuildError("decoder graph");
  if (st.n_aheads > 0) {
    g.aheads_qk = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, st.seqs[0].n_audio_ctx, n_tokens, st.n_aheads);
    if (g.aheads_qk == nullptr) return BuildError("decoder alignment heads output");
    ggml_set_name(g.aheads_qk, "aheads_qk");
    ggml_set_output(g.aheads_qk);
  }
  g.tokens = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n_tokens);
  if (g.tokens == nullptr) return BuildError("decoder tokens input");
  ggml_set_name(g.tokens, "tokens");
  ggml_set_input(g.tokens);
  ggml_tensor* cur = Embeddings(ctx, w, st, &g);
  if (cur == nullptr) return BuildError("decoder embeddings");
  for (int il = 0; il < h.n_text_layer; ++il) {
    const DecoderLayerWeights& lw = w.decoder[il];
    cur = SelfAttention(ctx, g.graph, lw.attn, st, il, s, cur);
    cur = CrossAttention(ctx, g.graph, lw.cross, st, il, s, cur, g.aheads_qk);
    cur = DecoderMlp(ctx, lw.mlp, cur, s, st.gelu);
    if (cur == nullptr) return BuildError(absl::StrCat("decoder layer ", il));
  }
  // Only the last token's logits are needed (of each sequence's token in a batch; the last
  // n_logits tokens' for the alignment pass's probabilities): LN and the projection on those
  // columns alone.
  const int n_out = st.one_token_each ? n_tokens : st.n_logits;
  ggml_tensor* last = ggml_view_2d(ctx, cur, s.S, n_out, cur->nb[1], cur->nb[1] * (n_tokens - n_out));
  last = LayerNorm(ctx, last, w.d_ln_w, w.d_ln_b);
  g.logits = Project(ctx, w.d_te, last, s);
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
                                               const AlignmentHead* aheads, int n_aheads, int n_logits, Gelu gelu) {
  const DecoderSequence seq{self_kv, cross_kv, n_audio_ctx, n_past};
  return Build(ctx, model, DecoderStep{&seq, 1, false, n_tokens, aheads, n_aheads, n_logits, gelu});
}

absl::StatusOr<DecoderGraph> BuildSequencesDecoderGraph(ggml_context* ctx, const WhisperModel& model,
                                                        const DecoderSequence* seqs, int n_seqs, Gelu gelu) {
  if (seqs == nullptr || n_seqs < 1) {
    return absl::InvalidArgumentError(absl::StrFormat("decoder: a batch of %d sequences%s (need >= 1)", n_seqs,
                                                      seqs == nullptr ? " and no sequence array" : ""));
  }
  return Build(ctx, model, DecoderStep{seqs, n_seqs, true, n_seqs, nullptr, 0, 1, gelu});
}

absl::StatusOr<DecoderGraph> BuildBatchedDecoderGraph(ggml_context* ctx, const WhisperModel& model,
                                                      const DecoderKv* self_kvs, int n_batch,
                                                      const DecoderKv& cross_kv, int n_audio_ctx, int n_past,
                                                      Gelu gelu) {
  if (self_kvs == nullptr || n_batch < 1) {
    return absl::InvalidArgumentError(absl::StrFormat("decoder: a batch of %d decoders%s (need >= 1)", n_batch,
                                                      self_kvs == nullptr ? " and no KV caches" : ""));
  }
  // The sequences on the stack for the usual batch sizes (no heap allocation per step).
  constexpr int kStackSeqs = 32;
  DecoderSequence stack_seqs[kStackSeqs];
  std::vector<DecoderSequence> heap_seqs;
  DecoderSequence* seqs = stack_seqs;
  if (n_batch > kStackSeqs) {
    heap_seqs.resize(n_batch);
    seqs = heap_seqs.data();
  }
  for (int b = 0; b < n_batch; ++b) seqs[b] = DecoderSequence{self_kvs[b], cross_kv, n_audio_ctx, n_past};
  return BuildSequencesDecoderGraph(ctx, model, seqs, n_batch, gelu);
}

}  // namespace whisper
