#include "whisper/encoder.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ggml/ops.h"

namespace whisper {
namespace {

absl::Status BuildError(const char* what) {
  return absl::InternalError(absl::StrCat(what, ": ", ggml_last_error()));
}

// Self-attention without mask over n_ctx positions (encoder): x [S, n_ctx] -> x + Attn(LN(x)).
// K and V are rounded to F16 (ggml_cast nodes: their bytes exist from this layer's cast to its
// attention only). Flash: one FLASH_ATTN_EXT node per layer, V not transposed, its result
// [d, n_head, n_ctx] already in the [S, n_ctx] order of the output projection. Blocked: the
// queries in blocks of at most `query_block` positions (BlockedAttention), V transposed.
ggml_tensor* EncoderAttention(ggml_context* ctx, const AttentionWeights& w, ggml_tensor* x, int n_head,
                              const EncoderOptions& opt) {
  const int64_t S = x->ne[0];
  const int64_t n_ctx = x->ne[1];
  const int64_t d = S / n_head;
  ggml_tensor* cur = LayerNorm(ctx, x, w.ln_w, w.ln_b);
  ggml_tensor* q = ggml_add(ctx, ggml_mul_mat(ctx, w.q_w, cur), w.q_b);
  ggml_tensor* k = ggml_mul_mat(ctx, w.k_w, cur);
  ggml_tensor* v = ggml_add(ctx, ggml_mul_mat(ctx, w.v_w, cur), w.v_b);
  if (q == nullptr || k == nullptr || v == nullptr) return nullptr;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));

  // Q, K: [d, n_ctx, n_head] (permuted views of [S, n_ctx]; K of its F16 copy).
  ggml_tensor* Q = ggml_permute(ctx, ggml_reshape_3d(ctx, q, d, n_head, n_ctx), 0, 2, 1, 3);
  ggml_tensor* K = ggml_permute(ctx, ggml_reshape_3d(ctx, ggml_cast(ctx, k, GGML_TYPE_F16), d, n_head, n_ctx), 0,
                                2, 1, 3);
  ggml_tensor* attn = nullptr;
  if (opt.flash_attn) {
    ggml_tensor* V = ggml_permute(ctx, ggml_reshape_3d(ctx, ggml_cast(ctx, v, GGML_TYPE_F16), d, n_head, n_ctx), 0,
                                  2, 1, 3);
    ggml_tensor* fa = ggml_flash_attn_ext(ctx, Q, K, V, nullptr, scale, 0.0f, 0.0f);  // [d, n_head, n_ctx]
    if (fa != nullptr && UseInt8Attention(opt.int8_attention, w)) ggml_flash_attn_ext_set_int8(fa, true);
    attn = fa == nullptr ? nullptr : ggml_reshape_2d(ctx, fa, S, n_ctx);
  } else {
    // V: F16 [n_ctx, d, n_head] (rows along time) so that V x softmax gives [d, n, n_head].
    ggml_tensor* V =
        ggml_cast(ctx, ggml_permute(ctx, ggml_reshape_3d(ctx, v, d, n_head, n_ctx), 1, 2, 0, 3), GGML_TYPE_F16);
    attn = BlockedAttention(ctx, Q, K, V, scale, opt.query_block);
  }
  if (attn == nullptr) return nullptr;
  cur = ggml_add(ctx, ggml_mul_mat(ctx, w.o_w, attn), w.o_b);
  return ggml_add(ctx, cur, x);
}

}  // namespace

bool UseInt8Attention(Int8Attention mode, const AttentionWeights& w) {
  if (mode != kInt8AttentionAuto) return mode == kInt8AttentionOn;
  const char* env = std::getenv("WHISPER_INT8_ATTENTION");
  if (env != nullptr && std::strcmp(env, "0") == 0) return false;
  for (const ggml_tensor* t : {w.q_w, w.k_w, w.v_w, w.o_w}) {
    if (t != nullptr && ggml_is_quantized(t->type)) return true;
  }
  return false;
}

ggml_tensor* BlockedAttention(ggml_context* ctx, ggml_tensor* Q, ggml_tensor* K, ggml_tensor* V, float scale,
                              int query_block) {
  if (Q == nullptr || K == nullptr || V == nullptr || query_block < 1) return nullptr;
  const int64_t d = Q->ne[0], n_q = Q->ne[1], n_head = Q->ne[2];
  ggml_tensor* attn = nullptr;  // [d * n_head, queries so far]
  // ceil(n_q / query_block) blocks of equal size (+-1), so no block is a short remainder.
  const int64_t n_blocks = (n_q + query_block - 1) / query_block;
  for (int64_t b = 0; b < n_blocks; ++b) {
    const int64_t i0 = b * n_q / n_blocks;
    const int64_t n = (b + 1) * n_q / n_blocks - i0;
    ggml_tensor* Qb = n == n_q ? Q : ggml_view_3d(ctx, Q, d, n, n_head, Q->nb[1], Q->nb[2], i0 * Q->nb[1]);
    // KQ[h][i][j] = K_j . Q_i: [n_kv (keys), n (queries), n_head].
    ggml_tensor* kq = ggml_soft_max_ext(ctx, ggml_mul_mat(ctx, K, Qb), nullptr, scale, 0.0f);
    ggml_tensor* kqv = ggml_mul_mat(ctx, V, kq);  // [d, n, n_head]
    // [d, n, n_head] -> [d, n_head, n] -> [d * n_head, n].
    ggml_tensor* block = ggml_cont_2d(ctx, ggml_permute(ctx, kqv, 0, 2, 1, 3), d * n_head, n);
    attn = attn == nullptr ? block : ggml_concat(ctx, attn, block, 1);
    if (attn == nullptr) return nullptr;
  }
  return attn;
}

ggml_tensor* LayerNorm(ggml_context* ctx, ggml_tensor* x, ggml_tensor* w, ggml_tensor* b) {
  return ggml_add(ctx, ggml_mul(ctx, ggml_norm(ctx, x, kLayerNormEps), w), b);
}

ggml_tensor* GeluOp(ggml_context* ctx, ggml_tensor* x, Gelu gelu) {
  return gelu == Gelu::kTanh ? ggml_gelu(ctx, x) : ggml_gelu_erf(ctx, x);
}

ggml_tensor* MlpBlock(ggml_context* ctx, const MlpWeights& w, ggml_tensor* x, Gelu gelu) {
  ggml_tensor* cur = LayerNorm(ctx, x, w.ln_w, w.ln_b);
  cur = GeluOp(ctx, ggml_add(ctx, ggml_mul_mat(ctx, w.fc1_w, cur), w.fc1_b), gelu);
  cur = ggml_add(ctx, ggml_mul_mat(ctx, w.fc2_w, cur), w.fc2_b);
  return ggml_add(ctx, cur, x);
}

int EncoderGraphSize(const WhisperHparams& h, const EncoderOptions& opt) {
  const int block = std::max(1, opt.query_block);
  const int blocks = opt.flash_attn ? 1 : (h.n_audio_ctx + block - 1) / block;
  return 64 + (48 + 8 * blocks) * h.n_audio_layer;
}
int CrossGraphSize(const WhisperHparams& h) { return 16 + 16 * h.n_text_layer; }

absl::StatusOr<EncoderGraph> BuildEncoderGraph(ggml_context* ctx, const WhisperModel& model,
                                               int n_ctx, ggml_tensor* embd, const EncoderOptions& opt) {
  const WhisperHparams& h = model.hparams();
  const WhisperWeights& w = model.weights();
  const int64_t S = h.n_audio_state;
  if (n_ctx < 1 || n_ctx > h.n_audio_ctx) {
    return absl::InvalidArgumentError(
        absl::StrFormat("encoder: n_ctx %d is not in [1, n_audio_ctx = %d]", n_ctx, h.n_audio_ctx));
  }
  if (!opt.flash_attn && opt.query_block < 1) {
    return absl::InvalidArgumentError(absl::StrFormat("encoder: query_block %d is not >= 1", opt.query_block));
  }
  if (embd == nullptr || embd->type != GGML_TYPE_F32 || embd->ne[0] != S || embd->ne[1] < n_ctx ||
      !ggml_is_contiguous(embd)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("encoder: embd must be contiguous F32 [%d, >= %d]", S, n_ctx));
  }
  EncoderGraph g;
  g.graph = ggml_new_graph_custom(ctx, EncoderGraphSize(h, opt));
  if (g.graph == nullptr) return BuildError("encoder graph");
  g.mel = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2 * n_ctx, h.n_mels);
  if (g.mel == nullptr) return BuildError("encoder mel input");
  ggml_set_name(g.mel, "mel");
  ggml_set_input(g.mel);

  // Conv stem: [2 n_ctx, n_mels] -> [2 n_ctx, S] -> [n_ctx, S]. The biases [1, S] broadcast
  // over time.
  ggml_tensor* cur = ggml_conv_1d_ph(ctx, w.conv1_w, g.mel, 1, 1);
  cur = GeluOp(ctx, ggml_add(ctx, cur, w.conv1_b), opt.gelu);
  cur = ggml_conv_1d_ph(ctx, w.conv2_w, cur, 2, 1);
  cur = GeluOp(ctx, ggml_add(ctx, cur, w.conv2_b), opt.gelu);
  // [S, n_ctx] plus the first n_ctx rows of the positional embedding.
  ggml_tensor* pe = ggml_view_2d(ctx, w.e_pe, S, n_ctx, w.e_pe->nb[1], 0);
  cur = ggml_add(ctx, ggml_cont(ctx, ggml_transpose(ctx, cur)), pe);
  if (cur == nullptr) return BuildError("encoder conv stem");

  for (int il = 0; il < h.n_audio_layer; ++il) {
    cur = EncoderAttention(ctx, w.encoder[il].attn, cur, h.n_audio_head, opt);
    cur = MlpBlock(ctx, w.encoder[il].mlp, cur, opt.gelu);
    if (cur == nullptr) return BuildError(absl::StrCat("encoder layer ", il).c_str());
  }
  cur = LayerNorm(ctx, cur, w.e_ln_w, w.e_ln_b);
  g.out = ggml_cpy(ctx, cur, ggml_view_2d(ctx, embd, S, n_ctx, embd->nb[1], 0));
  if (g.out == nullptr) return BuildError("encoder output");
  ggml_set_name(g.out, "encoder_out");
  if (!ggml_build_forward_expand(g.graph, g.out)) return BuildError("encoder graph");
  return g;
}

absl::StatusOr<ggml_cgraph*> BuildCrossGraph(ggml_context* ctx, const WhisperModel& model,
                                             int n_ctx, ggml_tensor* embd, ggml_tensor* cross_k,
                                             ggml_tensor* cross_v) {
  const WhisperHparams& h = model.hparams();
  const int64_t S = h.n_text_state;
  const int64_t need = static_cast<int64_t>(h.n_text_layer) * n_ctx * S;
  if (n_ctx < 1 || n_ctx > h.n_audio_ctx) {
    return absl::InvalidArgumentError(
        absl::StrFormat("cross: n_ctx %d is not in [1, n_audio_ctx = %d]", n_ctx, h.n_audio_ctx));
  }
  for (const ggml_tensor* t : {cross_k, cross_v}) {
    if (t == nullptr || t->type != GGML_TYPE_F16 || ggml_nelements(t) < need) {
      return absl::InvalidArgumentError(
          absl::StrFormat("cross: K/V caches must be F16 with >= %lld elements",
                          static_cast<long long>(need)));
    }
  }
  ggml_cgraph* graph = ggml_new_graph_custom(ctx, CrossGraphSize(h));
  if (graph == nullptr) return BuildError("cross graph");
  ggml_tensor* x = ggml_view_2d(ctx, embd, S, n_ctx, embd->nb[1], 0);
  const float k_scale = std::pow(static_cast<float>(S / h.n_text_head), -0.25f);
  const size_t es = ggml_element_size(cross_k);
  for (int il = 0; il < h.n_text_layer; ++il) {
    const AttentionWeights& w = model.weights().decoder[il].cross;
    const size_t layer_offset = es * S * n_ctx * il;
    ggml_tensor* k = ggml_scale(ctx, ggml_mul_mat(ctx, w.k_w, x), k_scale);
    ggml_tensor* v = ggml_add(ctx, ggml_mul_mat(ctx, w.v_w, x), w.v_b);
    // K head-major ([d, n_ctx, n_head], each head's keys contiguous), so that a decoder step's
    // scores read one contiguous block per head instead of 128-byte rows 768 bytes apart.
    const int64_t n_head = h.n_text_head, d = S / n_head;
    ggml_tensor* k_heads = ggml_permute(ctx, ggml_reshape_3d(ctx, k, d, n_head, n_ctx), 0, 2, 1, 3);
    ggml_tensor* k_dst = ggml_view_3d(ctx, cross_k, d, n_ctx, n_head, es * d, es * d * n_ctx, layer_offset);
    ggml_tensor* v_dst = ggml_view_2d(ctx, cross_v, n_ctx, S, es * n_ctx, layer_offset);
    if (!ggml_build_forward_expand(graph, ggml_cpy(ctx, k_heads, k_dst)) ||
        !ggml_build_forward_expand(graph, ggml_cpy(ctx, ggml_transpose(ctx, v), v_dst))) {
      return BuildError(absl::StrCat("cross layer ", il).c_str());
    }
  }
  return graph;
}

}  // namespace whisper
