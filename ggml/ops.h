// Op constructors: each records op, src[] and op_params on a new tensor of the result shape. They
// compute nothing (kernels/ does, in ggml_graph_compute). Shapes use ggml's ne order (ne0 is the
// row length). Every constructor returns NULL with a message (ggml_last_error()) when a source
// is NULL, a shape or type does not fit, or the context is full: a NULL propagates through a
// chain of constructors, so a graph builder may check only its final result.
//
// The semantics are ggml's (ggml/src/ggml.c) for every op listed; the kernels implement them for
// the types stated per op.
#ifndef GGML_WHISPER_GGML_OPS_H_
#define GGML_WHISPER_GGML_OPS_H_

#include "ggml/ggml.h"

#ifdef __cplusplus
extern "C" {
#endif

// a + b, a * b (element-wise). b is broadcast to a (ggml_can_repeat(b, a)). Result: a's shape,
// F32. a and b: F32.
struct ggml_tensor* ggml_add(struct ggml_context* ctx, struct ggml_tensor* a, struct ggml_tensor* b);
struct ggml_tensor* ggml_mul(struct ggml_context* ctx, struct ggml_tensor* a, struct ggml_tensor* b);
// a * s. op_params: float s.
struct ggml_tensor* ggml_scale(struct ggml_context* ctx, struct ggml_tensor* a, float s);

// Per row of ne0 elements: (x - mean) / sqrt(var + eps) (NORM) or x / sqrt(mean(x^2) + eps)
// (RMS_NORM). op_params: float eps. F32.
struct ggml_tensor* ggml_norm(struct ggml_context* ctx, struct ggml_tensor* a, float eps);
struct ggml_tensor* ggml_rms_norm(struct ggml_context* ctx, struct ggml_tensor* a, float eps);

// GGML_OP_UNARY with op_params[0] = enum ggml_unary_op. F32.
struct ggml_tensor* ggml_unary(struct ggml_context* ctx, struct ggml_tensor* a, enum ggml_unary_op op);
struct ggml_tensor* ggml_gelu(struct ggml_context* ctx, struct ggml_tensor* a);      // tanh approx.
struct ggml_tensor* ggml_gelu_erf(struct ggml_context* ctx, struct ggml_tensor* a);  // exact erf
struct ggml_tensor* ggml_silu(struct ggml_context* ctx, struct ggml_tensor* a);
struct ggml_tensor* ggml_relu(struct ggml_context* ctx, struct ggml_tensor* a);     // max(x, 0)
struct ggml_tensor* ggml_sigmoid(struct ggml_context* ctx, struct ggml_tensor* a);  // 1 / (1 + e^-x)
struct ggml_tensor* ggml_tanh(struct ggml_context* ctx, struct ggml_tensor* a);
struct ggml_tensor* ggml_sqr(struct ggml_context* ctx, struct ggml_tensor* a);      // x^2
struct ggml_tensor* ggml_sqrt(struct ggml_context* ctx, struct ggml_tensor* a);     // NaN for x < 0

// Matrix product as ggml defines it: a ne = [K, M, ne2, ne3], b ne = [K, N, ne12, ne13] with
// ne12 % ne2 == 0 and ne13 % ne3 == 0 (a is broadcast over b's batch dims). Result F32
// [M, N, ne12, ne13]: result[n][m] = dot(row m of a, row n of b). a: F32, F16 or a quantized type
// with contiguous rows (nb0 = type size); b: F32 or F16, any strides.
struct ggml_tensor* ggml_mul_mat(struct ggml_context* ctx, struct ggml_tensor* a, struct ggml_tensor* b);
// Extension (ggml has no such mode): asks the MUL_MAT node `a` to compute every result column as
// a matrix-vector product of a and that column of b, for any number of columns N, so column n's
// bits depend only on a and b's column n, never on N or the other columns. A multi-sequence
// decoder step sets it on its projections (whisper/decoder.h): each sequence's logits are then
// bit for bit those of the sequence alone while each weight matrix is read once for all of them.
// Stored in op_params[1] (ggml keeps its precision, GGML_PREC_*, in op_params[0]). The CPU
// executor (cpu/graph_compute_matmul.cc) honours it: F32/F16 a take kernels/matmul.h's dot-product
// path (MulMatF32Dots / MulMatF16Dots) over all N columns, quantized a the vec_dot path
// (MulMatConverted: b rows quantized to the type's vec_dot_type) or, from 32 columns, the int8
// GEMM, whose outputs have vec_dot's bits; never the packed F32 or dequantizing paths of larger
// N; threads split the rows of a, so each reads its share once.
// Below kMulMatPackedMinN (16) columns those are the paths taken anyway, so the mode changes no
// result there. The reference executor (cpu/ref_ops.h) computes every column alone regardless.
// Returns a; NULL with a message when a is NULL or not MUL_MAT.
struct ggml_tensor* ggml_mul_mat_set_matvec(struct ggml_tensor* a, bool matvec);
// True when ggml_mul_mat_set_matvec(a, true) was applied to the MUL_MAT node a.
bool ggml_mul_mat_get_matvec(const struct ggml_tensor* a);

// Copies a into b (a view of b is returned, op CPY, src = {a, b}); same element count; types
// F32/F16 in any combination; both may be non-contiguous.
struct ggml_tensor* ggml_cpy(struct ggml_context* ctx, struct ggml_tensor* a, struct ggml_tensor* b);
// A contiguous copy of a (op CONT), same type and shape.
struct ggml_tensor* ggml_cont(struct ggml_context* ctx, struct ggml_tensor* a);
// A contiguous copy of a converted to `type` (F32 or F16), same shape: a node with its own bytes,
// placed by the graph allocator when it is computed and freed after its last use, where
// ggml_cpy(a, ggml_new_tensor(...)) makes the destination a leaf that holds its bytes from the start
// of the graph. ggml's ggml_cast is op CPY with src[1] = the result itself; here it is op CONT
// with one source (the executors convert types in DUP, CONT and CPY alike). NULL with a message
// for a NULL or non-float a or type.
struct ggml_tensor* ggml_cast(struct ggml_context* ctx, struct ggml_tensor* a, enum ggml_type type);
struct ggml_tensor* ggml_cont_2d(struct ggml_context* ctx, struct ggml_tensor* a, int64_t ne0, int64_t ne1);

// Views that change the shape of a contiguous tensor (op RESHAPE, no data copy). The element
// count must be unchanged.
struct ggml_tensor* ggml_reshape(struct ggml_context* ctx, struct ggml_tensor* a, struct ggml_tensor* b);
struct ggml_tensor* ggml_reshape_1d(struct ggml_context* ctx, struct ggml_tensor* a, int64_t ne0);
struct ggml_tensor* ggml_reshape_2d(struct ggml_context* ctx, struct ggml_tensor* a, int64_t ne0, int64_t ne1);
struct ggml_tensor* ggml_reshape_3d(struct ggml_context* ctx, struct ggml_tensor* a, int64_t ne0, int64_t ne1,
                                    int64_t ne2);
struct ggml_tensor* ggml_reshape_4d(struct ggml_context* ctx, struct ggml_tensor* a, int64_t ne0, int64_t ne1,
                                    int64_t ne2, int64_t ne3);
// Moves dimension i of a to position axis_i (ggml_permute semantics: axes is a permutation of
// 0..3). A view; op_params: the four axes.
struct ggml_tensor* ggml_permute(struct ggml_context* ctx, struct ggml_tensor* a, int axis0, int axis1,
                                 int axis2, int axis3);
// Swaps dimensions 0 and 1 (a view).
struct ggml_tensor* ggml_transpose(struct ggml_context* ctx, struct ggml_tensor* a);

// Rows of a selected by the I32 indices in b: a ne = [ne0, n_rows, ne2], b ne = [n, ne2].
// Result F32 [ne0, n, ne2]. a: F32, F16 or quantized.
struct ggml_tensor* ggml_get_rows(struct ggml_context* ctx, struct ggml_tensor* a, struct ggml_tensor* b);

// Sets a[i1][i0] = -INF for i0 > n_past + i1 (causal mask). op_params: int n_past. F32.
struct ggml_tensor* ggml_diag_mask_inf(struct ggml_context* ctx, struct ggml_tensor* a, int n_past);

// Row softmax of (a * scale + slope(i2) * mask) with max subtraction. mask is NULL or F32
// [ne0, >= ne1] broadcast over a's dims 2 and 3. op_params: float scale, float max_bias. max_bias
// > 0 is ALiBi (Press et al., 2021, arXiv:2108.12409): a's dim 2 is the head h of ne2 heads and
// the mask is multiplied by ggml_alibi_slope(max_bias, ne2, h) (1 when max_bias is 0); it needs
// a mask. ggml_soft_max(a) is scale 1 without a mask. NULL with a message for a mask that does
// not fit, max_bias > 0 without a mask, or a non-finite scale or max_bias.
struct ggml_tensor* ggml_soft_max(struct ggml_context* ctx, struct ggml_tensor* a);
struct ggml_tensor* ggml_soft_max_ext(struct ggml_context* ctx, struct ggml_tensor* a, struct ggml_tensor* mask,
                                      float scale, float max_bias);

// 1-D im2col (ggml_im2col with is_2D = false): a = kernel [K, IC, OC] (only its shape is used),
// b = input [IL, IC, N] F32. Result dst_type (F32 or F16) [IC * K, OL, N] with
// OL = (IL + 2 p0 - d0 (K - 1) - 1) / s0 + 1; element [ic * K + k][ol] = b[ol s0 + k d0 - p0][ic]
// (0 outside). op_params: s0, p0, d0.
struct ggml_tensor* ggml_im2col_1d(struct ggml_context* ctx, struct ggml_tensor* a, struct ggml_tensor* b,
                                   int s0, int p0, int d0, enum ggml_type dst_type);
// 1-D convolution as ggml defines it: a = kernel [K, IC, OC], b = input [IL, IC, N].
// Result F32 [OL, OC, N], built as im2col + mul_mat (no op of its own).
struct ggml_tensor* ggml_conv_1d(struct ggml_context* ctx, struct ggml_tensor* a, struct ggml_tensor* b, int s0,
                                 int p0, int d0);
// "Half padding": p0 = K / 2 (ggml_conv_1d_ph), as Whisper's encoder stem uses.
struct ggml_tensor* ggml_conv_1d_ph(struct ggml_context* ctx, struct ggml_tensor* a, struct ggml_tensor* b, int s,
                                    int d);

// a and b joined along dimension dim (0..3); all other dims equal. op_params: dim. F32.
struct ggml_tensor* ggml_concat(struct ggml_context* ctx, struct ggml_tensor* a, struct ggml_tensor* b, int dim);
// a padded with zeros at the end of each dimension by p0..p3 elements. F32.
struct ggml_tensor* ggml_pad(struct ggml_context* ctx, struct ggml_tensor* a, int p0, int p1, int p2, int p3);
// a tiled to b's shape (ggml_can_repeat(a, b)). F32.
struct ggml_tensor* ggml_repeat(struct ggml_context* ctx, struct ggml_tensor* a, struct ggml_tensor* b);
// Index of the maximum of each row (ties: the lowest index): a F32 [ne0, ne1] -> I32 [ne1].
struct ggml_tensor* ggml_argmax(struct ggml_context* ctx, struct ggml_tensor* a);

// Fused attention (ggml_flash_attn_ext; ggml/include/ggml.h), per head h of q and batch i3:
//   q:    F32        [d_k, n_q,  n_head,    ne3]
//   k:    F16 or F32 [d_k, n_kv, n_head_kv, ne3]   (n_head a multiple of n_head_kv: grouped heads)
//   v:    as k       [d_v, n_kv, n_head_kv, ne3]   (not transposed)
//   mask: NULL or F16/F32 [n_kv, >= n_q], added to every head's scores (ggml pads n_q to
//         GGML_KQ_MASK_PAD; any ne1 >= n_q is accepted here)
//   result F32 [d_v, n_head, n_q, ne3]   (permuted: a query's heads are adjacent, so the result
//         reshapes to [d_v * n_head, n_q] without a copy)
//   result[:, h, i] = sum_j softmax_j(scale * q[:, i, h] . k[:, j, h'] + mask[j, i]) v[:, j, h']
// with h' = h / (n_head / n_head_kv). op_params: float scale, max_bias, logit_softcap. As in
// ggml's CPU kernel, a score is s = scale * q.k; with logit_softcap c != 0 it becomes
// c * tanh(s / c) (Gemma 2's soft capping); then slope(h) * mask is added, slope =
// ggml_alibi_slope(max_bias, n_head, h) (ALiBi; 1 when max_bias is 0, which needs a mask when
// > 0). src: q, k, v, mask. NULL with a message for NULL or mistyped sources, shapes that do not
// fit, max_bias > 0 without a mask, or non-finite parameters.
struct ggml_tensor* ggml_flash_attn_ext(struct ggml_context* ctx, struct ggml_tensor* q, struct ggml_tensor* k,
                                       struct ggml_tensor* v, struct ggml_tensor* mask, float scale, float max_bias,
                                       float logit_softcap);

// Extension (ggml has no such mode): asks for the FLASH_ATTN_EXT node `a`'s two products in int8,
// as kernels/flash_attn.h's FlashAttnKV::int8 defines them (q, k, p and v quantized in blocks of
// 32). Stored in op_params[4] (ggml keeps its precision, GGML_PREC_*, in op_params[3]). The CPU
// executor honours it where the dispatched target has an int8 dot-product instruction that the
// kernel uses (kernels/quant_gemm.h QuantGemmFast(): AVX512-VNNI) and d_k is a multiple of 32;
// elsewhere, and in the reference executor (cpu/ref_ops.h), the node computes in f32 as without it.
// Returns a; NULL with a message when a is NULL or not FLASH_ATTN_EXT.
struct ggml_tensor* ggml_flash_attn_ext_set_int8(struct ggml_tensor* a, bool int8);
// True when ggml_flash_attn_ext_set_int8(a, true) was applied to the FLASH_ATTN_EXT node a.
bool ggml_flash_attn_ext_get_int8(const struct ggml_tensor* a);

// ALiBi's slope for head h of n_head (ggml-cpu's soft_max and flash_attn_ext): with n =
// 2^floor(log2(n_head)), m0 = 2^(-max_bias / n) and m1 = 2^(-max_bias / 2 / n), the slope is
// m0^(h + 1) for h < n and m1^(2 (h - n) + 1) after (the interleaved slopes of a non-power-of-2
// head count); 1 when max_bias <= 0 or n_head < 1.
float ggml_alibi_slope(float max_bias, int64_t n_head, int64_t h);

// How many sources an op requires (src[0..n) must be non-NULL): 2 for ADD, MUL, MUL_MAT, CPY,
// GET_ROWS, IM2COL, CONCAT; 3 for FLASH_ATTN_EXT (its mask, src[3], is optional); 1 for the others (SOFT_MAX's mask, src[1], is optional); 0 for NONE.
int ggml_op_n_src(enum ggml_op op);

// True for ops that compute nothing: NONE and the views (VIEW, RESHAPE, PERMUTE, TRANSPOSE).
bool ggml_op_is_view(enum ggml_op op);

// Helpers to read op_params by position.
float ggml_get_op_params_f32(const struct ggml_tensor* t, int i);
int32_t ggml_get_op_params_i32(const struct ggml_tensor* t, int i);

#ifdef __cplusplus
}
#endif

#endif  // GGML_WHISPER_GGML_OPS_H_
