// Fuzz target: the ggml model file parser (whisper/model_file.h) on an arbitrary file image.
// Everything it allocates is bounded by the input's size (ASan/libFuzzer report a malloc past
// -malloc_limit_mb, and -rss_limit_mb, as crashes).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "whisper/model_file.h"

namespace {
// $MODEL_FILE_FUZZER_VERBOSE=1 prints each input's result (to check what a seed reaches).
const bool g_verbose = getenv("MODEL_FILE_FUZZER_VERBOSE") != nullptr;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
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
