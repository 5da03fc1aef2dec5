// Block layouts of ggml's legacy quantized types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1), byte for
// byte as in ggml/src/ggml-common.h, so tensors in whisper.cpp model files are used in place.
//
// Every block holds kQK = 32 consecutive elements of a row (ne0 must be a multiple of 32). All
// scales are IEEE binary16 (ggml_fp16_t) stored little-endian; the structs have no padding, so
// `sizeof(block_*)` is the ggml type_size and a row of ne0 elements is ne0 / 32 blocks.
//
// Nibble order (4- and 5-bit types): element j (0 <= j < 16) is the LOW nibble of qs[j] and
// element j + 16 is the HIGH nibble of qs[j]. 5-bit types keep bit 4 of element j (0..31) in bit
// j of qh read as a little-endian uint32 (element 0 -> bit 0 of qh[0], element 31 -> bit 7 of
// qh[3]).
//
// The quantizers that produce these blocks are in quant_ref.h (scalar, ggml's rounding rules)
// and quant_ops.h (SIMD activations, bit-identical to the scalar ones).
#ifndef GGML_WHISPER_KERNELS_QUANT_TYPES_H_
#define GGML_WHISPER_KERNELS_QUANT_TYPES_H_

#include <stddef.h>
#include <stdint.h>

#include "ggml/fp16.h"

namespace ggml_cpu {

// Elements per block for every type in this file (ggml's QK4_0 = QK4_1 = QK5_0 = QK5_1 = QK8_0 =
// QK8_1 = 32).
inline constexpr int kQK = 32;

// Q4_0: symmetric 4-bit. value = (q - 8) * d with q in [0, 15], i.e. integer levels -8..7.
// d = (the element of largest |x|, with its sign) / -8, so that element maps exactly to level -8
// and the opposite extreme is clamped to level 7.
// Layout (18 bytes): d (fp16) | qs[16] (two 4-bit codes per byte, see nibble order above).
struct block_q4_0 {
  ggml_fp16_t d;        // scale
  uint8_t qs[kQK / 2];  // codes q in [0, 15]
};

// Q4_1: asymmetric 4-bit. value = q * d + m with q in [0, 15].
// m = min(x), d = (max(x) - min(x)) / 15.
// Layout (20 bytes): d (fp16) | m (fp16) | qs[16].
struct block_q4_1 {
  ggml_fp16_t d;        // scale
  ggml_fp16_t m;        // offset: the block minimum
  uint8_t qs[kQK / 2];  // codes q in [0, 15]
};

// Q5_0: symmetric 5-bit. value = (q - 16) * d with q in [0, 31], levels -16..15.
// d = (the element of largest |x|, with its sign) / -16.
// Layout (22 bytes): d (fp16) | qh[4] (bit 4 of each code) | qs[16] (bits 0..3 of each code).
struct block_q5_0 {
  ggml_fp16_t d;        // scale
  uint8_t qh[4];        // bit 4 of code j is bit j of qh as a little-endian uint32
  uint8_t qs[kQK / 2];  // low 4 bits of the codes
};

// Q5_1: asymmetric 5-bit. value = q * d + m with q in [0, 31].
// m = min(x), d = (max(x) - min(x)) / 31.
// Layout (24 bytes): d (fp16) | m (fp16) | qh[4] | qs[16].
struct block_q5_1 {
  ggml_fp16_t d;        // scale
  ggml_fp16_t m;        // offset: the block minimum
  uint8_t qh[4];        // bit 4 of code j is bit j of qh as a little-endian uint32
  uint8_t qs[kQK / 2];  // low 4 bits of the codes
};

// Q8_0: symmetric 8-bit. value = q * d with q in [-127, 127] (-128 never occurs).
// d = max|x| / 127. Also the activation type for vec_dot with Q4_0, Q5_0 and Q8_0 weights.
// Layout (34 bytes): d (fp16) | qs[32] (int8, element j in qs[j]).
struct block_q8_0 {
  ggml_fp16_t d;   // scale
  int8_t qs[kQK];  // codes q in [-127, 127]
};

// Q8_1: Q8_0 plus a precomputed sum. value = q * d, d = max|x| / 127, and
// s = d * sum_j q[j] (the float d before fp16 rounding times the integer code sum, then rounded
// to fp16), which lets vec_dot with the asymmetric Q4_1/Q5_1 weights add the m * sum(y) term
// without a pass over the codes. Activation type for Q4_1 and Q5_1 weights.
// Layout (36 bytes): d (fp16) | s (fp16) | qs[32] (int8).
struct block_q8_1 {
  ggml_fp16_t d;   // scale
  ggml_fp16_t s;   // d * sum(qs)
  int8_t qs[kQK];  // codes q in [-127, 127]
};

static_assert(sizeof(block_q4_0) == 18, "block_q4_0 must match ggml (d + 16 B)");
static_assert(sizeof(block_q4_1) == 20, "block_q4_1 must match ggml (d, m + 16 B)");
static_assert(sizeof(block_q5_0) == 22, "block_q5_0 must match ggml (d + 4 B qh + 16 B)");
static_assert(sizeof(block_q5_1) == 24, "block_q5_1 must match ggml (d, m + 4 B qh + 16 B)");
static_assert(sizeof(block_q8_0) == 34, "block_q8_0 must match ggml (d + 32 B)");
static_assert(sizeof(block_q8_1) == 36, "block_q8_1 must match ggml (d, s + 32 B)");
static_assert(offsetof(block_q5_1, qh) == 4 && offsetof(block_q5_1, qs) == 8,
              "block_q5_1 field order must match ggml");
static_assert(offsetof(block_q8_1, qs) == 4, "block_q8_1 field order must match ggml");

}  // namespace ggml_cpu

#endif  // GGML_WHISPER_KERNELS_QUANT_TYPES_H_
