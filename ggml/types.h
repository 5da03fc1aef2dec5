// ggml_type and its traits table: name, block size (elements), type size (bytes per block).
// Numeric ids and byte sizes are ggml's (ggml/include/ggml.h, ggml/src/ggml-common.h), so model
// files written by whisper.cpp (whose tensor records store the ggml_type id) read here unchanged.
#ifndef GGML_WHISPER_GGML_TYPES_H_
#define GGML_WHISPER_GGML_TYPES_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ggml/fp16.h"

#ifdef __cplusplus
extern "C" {
#endif

// Values equal ggml's; the gaps (4, 5: removed Q4_2/Q4_3; 10..23: k-quants and iq types) are ids
// this runtime does not implement: ggml_type_traits_of() returns NULL for them.
enum ggml_type {
  GGML_TYPE_F32 = 0,
  GGML_TYPE_F16 = 1,
  GGML_TYPE_Q4_0 = 2,
  GGML_TYPE_Q4_1 = 3,
  GGML_TYPE_Q5_0 = 6,
  GGML_TYPE_Q5_1 = 7,
  GGML_TYPE_Q8_0 = 8,
  GGML_TYPE_Q8_1 = 9,
  GGML_TYPE_I8 = 24,
  GGML_TYPE_I16 = 25,
  GGML_TYPE_I32 = 26,
  GGML_TYPE_COUNT = 27,
};

// Elements per quantization block (ggml's QK4_0 ... QK8_1).
#define GGML_QK 32

struct ggml_type_traits {
  const char* type_name;  // "f32", "q4_0", ... (ggml's names)
  int64_t blck_size;      // elements per block: 1 for plain types, 32 for the quantized ones
  size_t type_size;       // bytes per block: 4 for f32, 18 for q4_0, ...
  bool is_quantized;
};

// The traits of `type`, or NULL when `type` is not one of the ids above (an unknown id read from
// a file is an error for the caller to report, never an abort).
const struct ggml_type_traits* ggml_type_traits_of(enum ggml_type type);

// Shorthands over the table. For an unknown type: blck 0, size 0, name "unknown", false.
int64_t ggml_blck_size(enum ggml_type type);
size_t ggml_type_size(enum ggml_type type);
const char* ggml_type_name(enum ggml_type type);
bool ggml_is_quantized(enum ggml_type type);

// Bytes of one row of `ne` elements: ne / blck_size blocks of type_size bytes. `ne` must be a
// multiple of the block size (callers check with ggml_row_size_ok first).
size_t ggml_row_size(enum ggml_type type, int64_t ne);
bool ggml_row_size_ok(enum ggml_type type, int64_t ne);

#ifdef __cplusplus
}
#endif

#endif  // GGML_WHISPER_GGML_TYPES_H_
