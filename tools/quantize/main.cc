// quantize: whisper.cpp's examples/quantize for this runtime.
//
//   bazel run -c opt //tools:quantize -- models/ggml-tiny.en.bin /tmp/ggml-tiny.en-q5_0.bin q5_0
//
// TYPE is q4_0, q4_1, q5_0, q5_1, q8_0 or the ggml_ftype number (2, 3, 8, 9, 7). Relative paths
// are taken from the directory `bazel run` was started in. Prints one line per tensor and the
// totals; on error prints one line to stderr and exits 1. What is quantized: quantize_lib.h.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <string>

#include "apps/common/bazel_run.h"
#include "absl/status/statusor.h"
#include "tools/quantize/quantize_file.h"
#include "tools/quantize/quantize_lib.h"

namespace {

namespace qz = ggml_whisper::quantize;

int Fail(const std::string& message) {
  fprintf(stderr, "quantize: error: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  constexpr char kUsage[] =
      "usage: %s model-f32-or-f16.bin model-quant.bin TYPE\n"
      "  TYPE: q4_0 (2), q4_1 (3), q5_0 (8), q5_1 (9), q8_0 (7)\n";
  if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
    printf(kUsage, argv[0]);  // asked for: stdout, status 0
    return 0;
  }
  if (argc != 4) {
    fprintf(stderr, kUsage, argv[0]);
    return 1;
  }
  const std::string in = whisper::UserPath(argv[1]);
  const std::string out = whisper::UserPath(argv[2]);
  absl::StatusOr<qz::QuantTarget> target = qz::ParseQuantTarget(argv[3]);
  if (!target.ok()) return Fail(std::string(target.status().message()));

  printf("quantize: loading model from '%s'\n", in.c_str());
  const auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<qz::QuantizeSummary> s = qz::QuantizeModelFile(
      in, out, *target,
      [](const qz::TensorReport& t) { printf("%s\n", qz::FormatTensorReport(t).c_str()); });
  if (!s.ok()) return Fail(std::string(s.status().message()));
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  printf("%s\n", qz::FormatSummary(*s, *target).c_str());
  printf("quantize: wrote '%s'\n", out.c_str());
  printf("quantize: quantize time = %8.2f ms\n", ms);
  return 0;
}
