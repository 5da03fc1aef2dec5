// Plugs the quantized types into mul_mat's row-ops hook (kernels/matmul.h): a MulMatRowOps per
// weight type, built from the traits table (quant_traits.h), so MulMatConvertB quantizes each b
// row to the type's vec_dot_type and MulMatConverted runs the SIMD vec_dot over blocks of a rows.
//
//   const MulMatRowOps* ops = QuantMulMatRowOps(a->type);   // NULL: not a quantized weight type
//   MulMatConvertB(*ops, K, b, ldb, 0, N, wdata, MulMatConvertedWorkSize(*ops, K, N));
//   MulMatConverted(*ops, K, a->data, a->nb[1], wdata, wdata_size, c, ldc, m0, m1, 0, N);
#ifndef GGML_WHISPER_KERNELS_QUANT_MATMUL_H_
#define GGML_WHISPER_KERNELS_QUANT_MATMUL_H_

#include "ggml/types.h"
#include "kernels/matmul.h"

namespace ggml_cpu {

// The row ops for weights of `type`: Q4_0, Q4_1, Q5_0, Q5_1 or Q8_0 (name = ggml_type_name,
// blck_size 32, vec_dot_block_bytes 34 for Q8_0 or 36 for Q8_1 activations). NULL for every
// other type, including Q8_1, which has no weight kernel (as in ggml). The result is static.
const MulMatRowOps* QuantMulMatRowOps(ggml_type type);

// The dequantizing ops (MulMatDequant, for matrix-matrix products) of the same types, with the
// types' exact scalar to_float; NULL for every other type. The result is static.
const MulMatDequantOps* QuantMulMatDequantOps(ggml_type type);

}  // namespace ggml_cpu

#endif  // GGML_WHISPER_KERNELS_QUANT_MATMUL_H_
