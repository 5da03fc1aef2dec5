// Fuzz target: the whole model load of the C API, whisper_init_from_buffer_with_params (model
// file parse, weight upload, vocabulary, state), on an arbitrary file image. Small inputs never
// hold a complete model (the smallest valid one is megabytes), so this mostly exercises the
// rejection paths and what the loader allocates before it rejects.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "whisper/whisper.h"

namespace {
void Quiet(enum ggml_log_level, const char*, void*) {}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  whisper_log_set(Quiet, nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> buffer(data, data + size);  // the API takes a non-const pointer
  whisper_context_params params = whisper_context_default_params();
  whisper_context* ctx = whisper_init_from_buffer_with_params(buffer.data(), buffer.size(), params);
  if (ctx != nullptr) whisper_free(ctx);
  return 0;
}
