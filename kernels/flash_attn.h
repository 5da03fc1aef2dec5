// Fused scaled-dot-product attention for one head (flash attention: online softmax over blocks of
// keys, so no [n_kv x n_q] score matrix is ever stored):
//
//   q:    n_q  rows of d_k f32        (row i at q + i * ldq)
//   k:    n_kv rows of d_k f16 or f32 (row j at k + j * ldk)
//   v:    n_kv rows of d_v f16 or f32 (row j at v + j * ldv)       (not transposed)
//   mask: NULL, or n_q rows of n_kv f32 or f16 (row i at mask + i * ld_mask), added to the scores
//   out:  n_q  rows of d_v f32        (row i at out + i * ld_out)
//
//   s[i][j]  = cap(scale * dot(q_i, k_j)) + mask_scale * mask[i][j]
//   cap(x)   = softcap * tanh(x / softcap) if softcap != 0, else x
//   out[i]   = sum_j exp(s[i][j] - max_j s[i][j]) v_j / sum_j exp(s[i][j] - max_j s[i][j])
//
// This is ggml_flash_attn_ext's definition for one head (ggml/include/ggml.h; the CPU reference
// ggml_compute_forward_flash_attn_ext_f16 in ggml-cpu/ops.cpp; ALiBi is mask_scale = the head's
// slope, logit_softcap is softcap);
// the algorithm is FlashAttention's (Dao et al., 2022, arXiv:2205.14135, Algorithm 1) with the
// score block kept in registers. A row whose scores are all -inf gives zeros (ggml: NaN), like
// kernels/softmax.h; a NaN score, or (int8) a NaN in q, k or v, makes the row's output NaN, so a
// corrupt weight is seen by the finiteness checks downstream (it came out as a masked row).
//
// How: K is packed once per call into panels of 2 vectors of keys (the layout of mul_mat's packed
// a panels, kernels/matmul-inl.h), V into panels of 2 vectors of its width, both widened to f32.
// Then for each tile of 12 (AVX-512, A64) or 6 (AVX2 and below) queries and each step of 8
// vectors of keys (4 panels; 64 keys on AVX2): S = K_step . Q_tile with mul_mat's register
// micro-kernel (f32 FMAs), one panel at a time, the running max, exp and sum per query, and
// O += P . V_step with the same micro-kernel. Scores,
// probabilities and the output tile live in the scratch (a few KB, in L1); K and V panels in L2.
// Numerics: f32 throughout (f16 K/V are widened exactly, q is scaled once); the result depends on
// the dispatch target (block width) and not on how callers split the queries.
//
// int8 (FlashAttnKV::int8): the two products in 8-bit integers, blocks of 32 with f32 scales as in
// ggml's Q8_0 (without its f16 rounding of the scale). With Quant(x) of 32 floats: d = max|x| /
// 127, codes c = round-to-nearest-even(x * (127 / max|x|)) (all 0, d = 0, when max|x| < 2^-100:
// below ~2^-120, 127 / max|x| overflows f32; such a p block weighs < 2^-95 of the row's top key):
//   - q_i * scale (scale / softcap with a softcap) and k_j quantized per 32 channels;
//     s[i][j] = sum over channel blocks b of isum_b * (dk_jb * dq_ib) (isum: the exact int32
//     code dot product), then cap and mask as above;
//   - in steps of 128 keys, p = exp(s - m) with m the running max (as above; exp by a polynomial,
//     2e-7 relative), quantized per 32 keys to unsigned 8-bit codes (as Quant with 255 for 127:
//     p >= 0, d = max p / 255, codes 0..255); v quantized per channel and per 32 keys (the scale
//     of channel c over keys 32b..32b+31), i.e. v^T in Q8_0 blocks along the keys;
//   - out[i] = sum over key blocks of isum * (dv * dp), divided by the sum of the quantized p
//     (sum of dp times the codes' sum), so the weights of the v rows sum to 1.
// The code products run on AVX512-VNNI's vpdpbusd on AVX3_DL (kernels/flash_attn_int8-inl.h);
// elsewhere exactly but slowly, so callers take this only where QuantGemmFast() is true. A new
// running max scales a block's p and its d alike, so the block's codes do not depend on the step
// (up to rounding ties). The result differs from the f32 path by the quantization (for v in
// [-1, 1] and scores of order 1: up to ~0.02; scores are quantized relative to their block's
// largest |q| and |k|, so logits of order 30 move p by tens of percent: 0.07 in
// flash_attn_int8_test's sharp case; Whisper tiny.en's encoder output moves by 0.5% RMS) and
// from target to target only in the f32 sums' order. Needs d_k a multiple of 32 (any d_v).
//
// Errors (absl::InvalidArgumentError naming the argument): null pointers for a non-empty call,
// both or neither of the f16/f32 pointers of k or v, both mask pointers, a stride smaller than its
// row, d_k, d_v or n_kv of 0, int8 with d_k not a multiple of 32, scratch smaller than
// FlashAttnWorkSize. n_q == 0 does nothing.
// Allocates nothing; dispatched once per call.
#ifndef GGML_WHISPER_KERNELS_FLASH_ATTN_H_
#define GGML_WHISPER_KERNELS_FLASH_ATTN_H_

#include <stddef.h>

#include "absl/status/status.h"
#include "ggml/fp16.h"

namespace ggml_cpu {

// One head's keys and values and the score scale; strides in elements.
struct FlashAttnKV {
  size_t d_k = 0;   // width of q and k rows
  size_t d_v = 0;   // width of v and out rows
  size_t n_kv = 0;  // keys
  const ggml_fp16_t* k_f16 = nullptr;  // exactly one of k_f16 / k_f32
  const float* k_f32 = nullptr;
  size_t ldk = 0;
  const ggml_fp16_t* v_f16 = nullptr;  // exactly one of v_f16 / v_f32
  const float* v_f32 = nullptr;
  size_t ldv = 0;
  float scale = 1.0f;  // Whisper: 1 / sqrt(d_k)
  float mask_scale = 1.0f;  // the mask's factor: ALiBi's slope for this head (ggml_alibi_slope)
  float softcap = 0.0f;     // logit soft capping (0: none)
  bool int8 = false;        // both products in int8 (see "int8" above); d_k a multiple of 32
};

// The queries, the optional mask and the output of one call.
struct FlashAttnQueries {
  size_t n_q = 0;
  const float* q = nullptr;
  size_t ldq = 0;
  const float* mask_f32 = nullptr;  // at most one of the two; row i covers keys 0..n_kv-1
  const ggml_fp16_t* mask_f16 = nullptr;
  size_t ld_mask = 0;
  float* out = nullptr;
  size_t ld_out = 0;
};

// Scratch bytes one concurrent call needs for these shapes on the current dispatch target, f32 or
// int8 (about 4 * n_kv * (d_k + d_v) bytes: tiny.en's encoder, 1500 keys x 64 + 64, takes 0.77 MB;
// int8 needs less). Any alignment; each thread needs its own.
size_t FlashAttnWorkSize(size_t d_k, size_t d_v, size_t n_kv);

// out = attention(q, k, v, mask) for one head (see the top of this file).
absl::Status FlashAttn(const FlashAttnKV& kv, const FlashAttnQueries& qs, void* work, size_t work_size);

}  // namespace ggml_cpu

#endif  // GGML_WHISPER_KERNELS_FLASH_ATTN_H_
