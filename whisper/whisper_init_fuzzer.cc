// Fuzz target: the whole model load of the C API, whisper_init_from_buffer_with_params (model
// file parse, tensor table, weight upload, vocabulary, state), on a model file image.
// The first byte picks the mode:
//   < 0x80: the rest is the file image. Small inputs never hold a complete model (the smallest
//           valid one is hundreds of kilobytes), so this exercises the rejection paths and what
//           the loader allocates before it rejects;
//   >= 0x80: the rest edits a valid 8-wide synthetic model, F32 if bit 0 is set, else F16
//           (whisper/fuzz_model_image.h), which reaches the load past the parse.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "whisper/fuzz_model_image.h"
#include "whisper/whisper.h"

namespace {
void Quiet(enum ggml_log_level, const char*, void*) {}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  whisper_log_set(Quiet, nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::vector<uint8_t> buffer;  // the API takes a non-const pointer
  if (data[0] < 0x80) {
    buffer.assign(data + 1, data + size);
  } else {
    buffer = whisper::ApplyFuzzEdits(whisper::FuzzBaseModel(8, (data[0] & 1) ? 0 : 1), data + 1, size - 1);
  }
  whisper_context_params params = whisper_context_default_params();
  whisper_context* ctx = whisper_init_from_buffer_with_params(buffer.data(), buffer.size(), params);
  if (ctx != nullptr) {
    // A few cheap queries over what was loaded.
    const int n_vocab = whisper_n_vocab(ctx);
    for (int id = 0; id < n_vocab; id += 997) (void)whisper_token_to_str(ctx, id);
    (void)whisper_is_multilingual(ctx);
    whisper_free(ctx);
  }
  return 0;
}
