#include "kernels/quant_matmul.h"

#include "kernels/quant_traits.h"

namespace ggml_cpu {
namespace {

MulMatRowOps MakeOps(ggml_type type) {
  const QuantTypeTraits* t = GetQuantTypeTraits(type);
  return MulMatRowOps{ggml_type_name(type), t->blck_size, ggml_type_size(t->vec_dot_type),
                      t->from_vec_dot, t->vec_dot, t->vec_dot_cols};
}

MulMatDequantOps MakeDequantOps(ggml_type type) {
  const QuantTypeTraits* t = GetQuantTypeTraits(type);
  return MulMatDequantOps{ggml_type_name(type), t->blck_size, t->type_size, t->to_float};
}

// The weight types with kernels, in table order; -1 for any other type.
constexpr ggml_type kWeightTypes[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1,
                                      GGML_TYPE_Q8_0};
int WeightIndex(ggml_type type) {
  for (int i = 0; i < 5; ++i) {
    if (kWeightTypes[i] == type) return i;
  }
  return -1;
}

// A static table of Make(t) for every weight type, looked up by type.
template <class Ops, Ops (*Make)(ggml_type)>
const Ops* Lookup(ggml_type type) {
  static const Ops table[5] = {Make(kWeightTypes[0]), Make(kWeightTypes[1]), Make(kWeightTypes[2]),
                               Make(kWeightTypes[3]), Make(kWeightTypes[4])};
  const int i = WeightIndex(type);
  return i < 0 ? nullptr : &table[i];
}

}  // namespace

const MulMatDequantOps* QuantMulMatDequantOps(ggml_type type) {
  return Lookup<MulMatDequantOps, MakeDequantOps>(type);
}

const MulMatRowOps* QuantMulMatRowOps(ggml_type type) { return Lookup<MulMatRowOps, MakeOps>(type); }

}  // namespace ggml_cpu
