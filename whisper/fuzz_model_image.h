// Fuzzing helper: complete model file images from small fuzz inputs. A valid model is hundreds of
// kilobytes at least (tiny.en's vocabulary of 51864 rows is in every token embedding), far past
// what a fuzzer mutates well, so a fuzz target can instead take its input as edits of a valid
// synthetic model (whisper/synthetic_model.h), which reaches the code after the parse: the
// tensor table, weight upload, state allocation and the quantizer's row loop.
#ifndef GGML_WHISPER_WHISPER_FUZZ_MODEL_IMAGE_H_
#define GGML_WHISPER_WHISPER_FUZZ_MODEL_IMAGE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "whisper/synthetic_model.h"

namespace whisper {

// A synthetic model with `n_state`-wide layers (heads of 16 or fewer, 1 layer each), made once
// per n_state and ftype (cached; not thread-safe).
const std::vector<uint8_t>& FuzzBaseModel(int n_state, int32_t ftype);

// `base` edited by `edits`, read as a sequence of (uint24 little-endian offset, uint8 length,
// length bytes): each overwrites base[offset % size ...], clipped at the end. An edit whose
// length byte is 0 instead truncates the image at its offset. Stops at the first incomplete edit.
std::vector<uint8_t> ApplyFuzzEdits(const std::vector<uint8_t>& base, const uint8_t* edits, size_t size);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_FUZZ_MODEL_IMAGE_H_
