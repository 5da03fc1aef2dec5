// Integer matrix-matrix product for 8-bit and smaller block-quantized weights (the encoder's
// mul_mat with Q8_0, Q4_0 or Q5_0 weights): ggml's scheme of quantizing the activations to Q8_0
// once per product and taking int8 block dot products, but register-tiled over several weight
// rows and several activation columns, so each weight byte and each activation byte loaded
// feeds many multiply-adds.
//
//   a: ne = [K, M] in `type` (rows a_nb1 bytes apart),   b: ne = [K, N] F32 (row stride ldb),
//   c: ne = [M, N] F32, c[n * ldc + m] = sum over blocks i of the reference's block term
//   (quant_ref.h vec_dot_*_q8_0_ref of a row m with b row n quantized by quantize_row_q8_0).
//
// Usage (three phases; the first two split across threads, then a barrier):
//   QuantGemmPackA(type, K, a, a_nb1, M, p0, p1, pa, QuantGemmPackedBytesA(K, M));  // panels
//   QuantGemmQuantizeB(K, b, ldb, n0, n1, qb, N * QuantGemmRowBytesB(K));           // b rows
//   QuantGemm(type, K, pa, pa_size, M, qb, qb_size, c, ldc, m_begin, m_end, n_begin, n_end);
//
// Packed a (QuantGemmPackA): panels of kQuantGemmPanelRows = 16 rows (the last one padded with
// zero codes and zero scales); per panel and block of 32 elements, 576 bytes: the codes as
// unsigned bytes value + 128, quad q (elements 4q..4q+3) of row r at byte 64 q + 4 r (the
// AVX512-VNNI operand order: one int32 lane per row), then the 16 rows' scales as F32.
// Quantized b (QuantGemmQuantizeB): per block 40 bytes, QuantGemmBlockB.
//
// Integer core: per block, each output's code products are summed exactly as int32:
//   - AVX3_DL: vpdpbusd (AVX512-VNNI), 4 products per int32 lane, one lane per weight row:
//     sum_j (w_j + 128) y_j, started at -128 sum_j y_j (QuantGemmBlockB::corr), so exact;
//   - SVE, SVE2, SVE_256, SVE2_128: sdot on the codes made signed again (byte ^ 0x80), one panel
//     and one column at a time;
//   - every other target (SSSE3..AVX3, NEON, SCALAR): the same sum from the same packed bytes
//     with int32 lane multiplies.
//   Only AVX3_DL's kernel is register-tiled and measured: QuantGemmFast() is false elsewhere,
//   and the graph executor keeps its other paths there.
// Each block's integer sum is then scaled and added to the output's float sum in block order
// with the reference's expression (Q8_0: isum * (dx * dy); Q4_0, Q5_0: isum * dx * dy), lane by
// lane, so every output has the bits of the reference and of quant_ops.h's vec_dot.
//
// Errors (absl::InvalidArgumentError): a type other than Q8_0, Q4_0, Q5_0; K not a multiple of
// 32; null pointers for non-empty work; buffers smaller than stated; ranges with begin > end;
// m_begin not a multiple of 16; ldc < m_end; a_nb1 shorter than a row.
#ifndef GGML_WHISPER_KERNELS_QUANT_GEMM_H_
#define GGML_WHISPER_KERNELS_QUANT_GEMM_H_

#include <stddef.h>
#include <stdint.h>

#include "absl/status/status.h"
#include "ggml/types.h"

namespace ggml_cpu {

inline constexpr size_t kQuantGemmPanelRows = 16;
inline constexpr size_t kQuantGemmPanelBlockBytes = 576;  // 16 rows x 32 codes + 16 f32 scales

// One block of 32 quantized activations: quantize_row_q8_0's codes and scale (as F32, exactly
// the f16 scale widened), and -128 times the codes' sum (the unsigned-weight correction).
struct QuantGemmBlockB {
  float d;
  int32_t corr;
  int8_t qs[32];
};
static_assert(sizeof(QuantGemmBlockB) == 40, "40-byte activation blocks");

// True for the weight types QuantGemm takes: Q8_0, Q4_0, Q5_0.
bool QuantGemmSupports(ggml_type type);

// True when the dispatched target has an int8 dot-product instruction QuantGemm uses (AVX3_DL's
// AVX512-VNNI); elsewhere QuantGemm is exact but slower than dequantizing into the F32 GEMM.
bool QuantGemmFast();

// Bytes of k quantized activations (one b row), and of the packed panels of m weight rows.
size_t QuantGemmRowBytesB(size_t k);
size_t QuantGemmPackedBytesA(size_t k, size_t m);

// Packs panels [p_begin, p_end) of the m rows of a (panel p: rows 16p .. 16p + 15) into
// `packed`, which holds all ceil(m / 16) panels.
absl::Status QuantGemmPackA(ggml_type type, size_t k, const void* a, size_t a_nb1, size_t m,
                            size_t p_begin, size_t p_end, void* packed, size_t packed_size);

// Quantizes b rows [n_begin, n_end) (k floats each, ldb apart) with quantize_row_q8_0 (bit-
// identical to quantize_row_q8_0_ref) into row n at qb + n * QuantGemmRowBytesB(k).
absl::Status QuantGemmQuantizeB(size_t k, const float* b, size_t ldb, size_t n_begin,
                                size_t n_end, void* qb, size_t qb_size);

// c[n * ldc + m] for m in [m_begin, m_end) (m_begin a multiple of 16, m_end <= m), n in
// [n_begin, n_end): the product of the packed a (m rows of `type`) and the quantized b rows.
// Writes (does not accumulate) c; allocates nothing.
absl::Status QuantGemm(ggml_type type, size_t k, const void* packed, size_t packed_size,
                       size_t m, const void* qb, size_t qb_size, float* c, size_t ldc,
                       size_t m_begin, size_t m_end, size_t n_begin, size_t n_end);

}  // namespace ggml_cpu

#endif  // GGML_WHISPER_KERNELS_QUANT_GEMM_H_
