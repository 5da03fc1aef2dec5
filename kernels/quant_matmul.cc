#include "kernels/quant_matmul.h"

#include "kernels/quant_traits.h"

namespace ggml_cpu {
namespace {

MulMatRowOps MakeOps(ggml_type type) {
  const QuantTypeTraits* t = GetQuantTypeTraits(type);
  return MulMatRowOps{ggml_type_name(type), t->blck_size, ggml_type_size(t->vec_dot_type),
                      t->from_vec_dot, t->vec_dot};
}

MulMatDequantOps MakeDequantOps(ggml_type type) {
  const QuantTypeTraits* t = GetQuantTypeTraits(type);
  return MulMatDequantOps{ggml_type_name(type), t->blck_size, t->type_size, t->to_float};
}

}  // namespace

const MulMatDequantOps* QuantMulMatDequantOps(ggml_type type) {
  static const MulMatDequantOps kQ4_0 = MakeDequantOps(GGML_TYPE_Q4_0);
  static const MulMatDequantOps kQ4_1 = MakeDequantOps(GGML_TYPE_Q4_1);
  static const MulMatDequantOps kQ5_0 = MakeDequantOps(GGML_TYPE_Q5_0);
  static const MulMatDequantOps kQ5_1 = MakeDequantOps(GGML_TYPE_Q5_1);
  static const MulMatDequantOps kQ8_0 = MakeDequantOps(GGML_TYPE_Q8_0);
  switch (type) {
    case GGML_TYPE_Q4_0:
      return &kQ4_0;
    case GGML_TYPE_Q4_1:
      return &kQ4_1;
    case GGML_TYPE_Q5_0:
      return &kQ5_0;
    case GGML_TYPE_Q5_1:
      return &kQ5_1;
    case GGML_TYPE_Q8_0:
      return &kQ8_0;
    default:
      return nullptr;
  }
}

const MulMatRowOps* QuantMulMatRowOps(ggml_type type) {
  static const MulMatRowOps kQ4_0 = MakeOps(GGML_TYPE_Q4_0);
  static const MulMatRowOps kQ4_1 = MakeOps(GGML_TYPE_Q4_1);
  static const MulMatRowOps kQ5_0 = MakeOps(GGML_TYPE_Q5_0);
  static const MulMatRowOps kQ5_1 = MakeOps(GGML_TYPE_Q5_1);
  static const MulMatRowOps kQ8_0 = MakeOps(GGML_TYPE_Q8_0);
  switch (type) {
    case GGML_TYPE_Q4_0:
      return &kQ4_0;
    case GGML_TYPE_Q4_1:
      return &kQ4_1;
    case GGML_TYPE_Q5_0:
      return &kQ5_0;
    case GGML_TYPE_Q5_1:
      return &kQ5_1;
    case GGML_TYPE_Q8_0:
      return &kQ8_0;
    default:
      return nullptr;
  }
}

}  // namespace ggml_cpu
