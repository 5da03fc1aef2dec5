// Fuzz target: the quantizer's input parsing and transform (tools/quantize/quantize_lib.h
// QuantizeModelImage) on an arbitrary file image. The first byte picks the target type; the
// output goes to a sink that only counts bytes (and fails now and then, to cover that path).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "absl/status/status.h"
#include "tools/quantize/quantize_lib.h"

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
  absl::StatusOr<q::QuantizeSummary> summary = q::QuantizeModelImage(data + 1, size - 1, "fuzz.bin", *target, sink);
  if (summary.ok() && summary->file_bytes_out != written) {
    fprintf(stderr, "quantize_fuzzer: summary says %zu bytes, sink got %zu\n", summary->file_bytes_out, written);
    abort();
  }
  return 0;
}
