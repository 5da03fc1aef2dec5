// Fuzz target: the ggml model file parser (whisper/model_file.h) on a file image. Everything it
// allocates is bounded by the input's size (libFuzzer reports a malloc past -malloc_limit_mb, and
// -rss_limit_mb, as crashes). The first byte picks the mode:
//   < 0x80: the rest is the file image;
//   >= 0x80: the rest edits a valid 8-wide synthetic model, F32 if bit 0 is set, else F16
//           (whisper/fuzz_model_image.h), so the records of every tensor are reached.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "whisper/fuzz_model_image.h"
#include "whisper/model_file.h"

namespace {
// $MODEL_FILE_FUZZER_VERBOSE=1 prints each input's result (to check what a seed reaches).
const bool g_verbose = getenv("MODEL_FILE_FUZZER_VERBOSE") != nullptr;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t input_size) {
  if (input_size < 1) return 0;
  std::vector<uint8_t> edited;
  const uint8_t* data = input + 1;
  size_t size = input_size - 1;
  if (input[0] >= 0x80) {
    edited = whisper::ApplyFuzzEdits(whisper::FuzzBaseModel(8, (input[0] & 1) ? 0 : 1), data, size);
    data = edited.data();
    size = edited.size();
  }
  absl::StatusOr<whisper::ModelFileHeader> header = whisper::ParseModelFileHeader(data, size, "fuzz.bin");
  if (!header.ok()) {
    if (g_verbose) fprintf(stderr, "header: %s\n", header.status().ToString().c_str());
    return 0;
  }
  // Invariants of a header that parsed.
  if (header->tensors_offset > size ||
      header->mel_filters.size() != static_cast<size_t>(header->n_mel) * static_cast<size_t>(header->n_fft) ||
      header->tokens.size() > static_cast<size_t>(header->hparams.n_vocab)) {
    fprintf(stderr, "model_file_fuzzer: inconsistent header\n");
    abort();
  }
  absl::StatusOr<std::vector<whisper::TensorRecord>> records =
      whisper::ParseTensorRecords(data, size, *header, "fuzz.bin");
  if (g_verbose) fprintf(stderr, "records: %s\n", records.status().ToString().c_str());
  if (!records.ok()) return 0;
  for (const whisper::TensorRecord& r : *records) {
    if (r.data_offset > size || r.nbytes > size - r.data_offset) {
      fprintf(stderr, "model_file_fuzzer: tensor '%s' data past the end of the file\n", r.name.c_str());
      abort();
    }
  }
  return 0;
}
