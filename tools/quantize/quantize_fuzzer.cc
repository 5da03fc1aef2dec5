// Fuzz target: the quantizer's input parsing and transform (tools/quantize/quantize_lib.h
// QuantizeModelImage) on a model file image. The first byte b picks the target type (b % 5),
// a sink that fails after 3 writes ((b / 5) & 1; the sink otherwise only counts bytes) and the
// mode: b < 0x80, the rest is the file image; b >= 0x80, the rest edits a valid 32-wide
// synthetic model (whisper/fuzz_model_image.h), F32 if (b / 10) & 1, else F16, which reaches the
// quantization of every tensor.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "absl/status/status.h"
#include "tools/quantize/quantize_lib.h"
#include "whisper/fuzz_model_image.h"

namespace q = ggml_whisper::quantize;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const char* const kTargets[] = {"q4_0", "q4_1", "q5_0", "q5_1", "q8_0"};
  absl::StatusOr<q::QuantTarget> target = q::ParseQuantTarget(kTargets[data[0] % 5]);
  if (!target.ok()) abort();
  const bool fail_sink = (data[0] / 5) & 1;
  size_t written = 0;
  int calls = 0;
  const q::ByteSink sink = [&](const void*, size_t n) -> absl::Status {
    written += n;
    if (fail_sink && ++calls > 3) return absl::DataLossError("sink full");
    return absl::OkStatus();
  };
  std::vector<uint8_t> edited;
  const uint8_t* image = data + 1;
  size_t image_size = size - 1;
  if (data[0] >= 0x80) {
    edited = whisper::ApplyFuzzEdits(whisper::FuzzBaseModel(32, ((data[0] / 10) & 1) ? 0 : 1), image, image_size);
    image = edited.data();
    image_size = edited.size();
  }
  absl::StatusOr<q::QuantizeSummary> summary = q::QuantizeModelImage(image, image_size, "fuzz.bin", *target, sink);
  if (summary.ok() && summary->file_bytes_out != written) {
    fprintf(stderr, "quantize_fuzzer: summary says %zu bytes, sink got %zu\n", summary->file_bytes_out, written);
    abort();
  }
  return 0;
}
