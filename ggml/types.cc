#include "ggml/types.h"

namespace {

// Block sizes in bytes follow ggml-common.h: the fp16 scale d (2 B), the optional fp16 min/sum
// (2 B), the 5th-bit plane qh (4 B) and the packed quants.
constexpr size_t kQ4_0 = 2 + GGML_QK / 2;      // 18
constexpr size_t kQ4_1 = 2 + 2 + GGML_QK / 2;  // 20
constexpr size_t kQ5_0 = 2 + 4 + GGML_QK / 2;  // 22
constexpr size_t kQ5_1 = 2 + 2 + 4 + GGML_QK / 2;  // 24
constexpr size_t kQ8_0 = 2 + GGML_QK;          // 34
constexpr size_t kQ8_1 = 2 + 2 + GGML_QK;      // 36

struct Table {
  ggml_type_traits t[GGML_TYPE_COUNT] = {};
  bool known[GGML_TYPE_COUNT] = {};
  constexpr Table() {
    Set(GGML_TYPE_F32, "f32", 1, sizeof(float), false);
    Set(GGML_TYPE_F16, "f16", 1, sizeof(ggml_fp16_t), false);
    Set(GGML_TYPE_Q4_0, "q4_0", GGML_QK, kQ4_0, true);
    Set(GGML_TYPE_Q4_1, "q4_1", GGML_QK, kQ4_1, true);
    Set(GGML_TYPE_Q5_0, "q5_0", GGML_QK, kQ5_0, true);
    Set(GGML_TYPE_Q5_1, "q5_1", GGML_QK, kQ5_1, true);
    Set(GGML_TYPE_Q8_0, "q8_0", GGML_QK, kQ8_0, true);
    Set(GGML_TYPE_Q8_1, "q8_1", GGML_QK, kQ8_1, true);
    Set(GGML_TYPE_I8, "i8", 1, 1, false);
    Set(GGML_TYPE_I16, "i16", 1, 2, false);
    Set(GGML_TYPE_I32, "i32", 1, 4, false);
  }
  constexpr void Set(ggml_type type, const char* name, int64_t blck, size_t size, bool q) {
    t[type] = ggml_type_traits{name, blck, size, q};
    known[type] = true;
  }
};

constexpr Table kTable;

}  // namespace

const ggml_type_traits* ggml_type_traits_of(ggml_type type) {
  const int i = static_cast<int>(type);
  if (i < 0 || i >= GGML_TYPE_COUNT || !kTable.known[i]) return nullptr;
  return &kTable.t[i];
}

int64_t ggml_blck_size(ggml_type type) {
  const ggml_type_traits* t = ggml_type_traits_of(type);
  return t ? t->blck_size : 0;
}

size_t ggml_type_size(ggml_type type) {
  const ggml_type_traits* t = ggml_type_traits_of(type);
  return t ? t->type_size : 0;
}

const char* ggml_type_name(ggml_type type) {
  const ggml_type_traits* t = ggml_type_traits_of(type);
  return t ? t->type_name : "unknown";
}

bool ggml_is_quantized(ggml_type type) {
  const ggml_type_traits* t = ggml_type_traits_of(type);
  return t ? t->is_quantized : false;
}

bool ggml_row_size_ok(ggml_type type, int64_t ne) {
  const int64_t blck = ggml_blck_size(type);
  return blck > 0 && ne >= 0 && ne % blck == 0;
}

size_t ggml_row_size(ggml_type type, int64_t ne) {
  const int64_t blck = ggml_blck_size(type);
  if (blck <= 0) return 0;
  return ggml_type_size(type) * static_cast<size_t>(ne / blck);
}
