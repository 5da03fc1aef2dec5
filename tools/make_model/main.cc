// make_model: a whisper.cpp-format model file with random weights in a real model's shape, for
// timing the larger models (the weights are random: transcripts mean nothing).
//
//   bazel run -c opt //tools:make_model -- --shape small --out /tmp/ggml-small-random.bin
//   bazel run -c opt //tools:bench -- -m /tmp/ggml-small-random.bin -t 2
//
// Flags: --shape tiny|base|small|medium|large|large-v3|large-v3-turbo (required), --out FILE
// (required), --type f16 (default; or f32, q4_0, q4_1, q5_0, q5_1, q8_0), --seed N (default 1),
// --mel_filters FILE (default models/mel_filters.npz, which tools/get_model.sh extracts from
// openai-whisper: the filterbank mel_80 or mel_128 is written, not random numbers). Relative
// paths are taken from the directory `bazel run` was started in. The file is written to FILE.tmp
// and renamed. -h/--help prints the usage (exit 0). Errors: one line on stderr, exit 2 for bad
// flags, 1 for a filterbank that cannot be read or a file that cannot be written. The file is
// built in memory first (about 2x its size): medium is 1.5 GB as F16, large-v3 3.1 GB (use
// --type q8_0 or q4_0 to keep memory and time down), large-v3-turbo 1.6 GB.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "apps/common/bazel_run.h"
#include "absl/strings/numbers.h"
#include "tools/make_model/make_model_lib.h"
#include "whisper/synthetic_model.h"

namespace {

constexpr char kUsage[] =
    "usage: %s --shape tiny|base|small|medium|large|large-v3|large-v3-turbo --out FILE\n"
    "       [--type f16|f32|q4_0|q4_1|q5_0|q5_1|q8_0] [--seed N] [--mel_filters models/mel_filters.npz]\n";

int Usage(const char* argv0, const std::string& error) {
  std::fprintf(stderr, "make_model: error: %s\n", error.c_str());
  std::fprintf(stderr, kUsage, argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string shape, out, type = "f16", mel_filters = "models/mel_filters.npz";
  uint32_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::printf(kUsage, argv[0]);
      return 0;
    }
    if (i + 1 >= argc) return Usage(argv[0], "missing value for " + arg);
    const std::string value = argv[++i];
    if (arg == "--shape") {
      shape = value;
    } else if (arg == "--out") {
      out = value;
    } else if (arg == "--mel_filters") {
      mel_filters = value;
    } else if (arg == "--type") {
      type = value;
    } else if (arg == "--seed") {
      if (!absl::SimpleAtoi(value, &seed)) return Usage(argv[0], "--seed: '" + value + "' is not a number");
    } else {
      return Usage(argv[0], "unknown flag " + arg);
    }
  }
  if (shape.empty() || out.empty()) return Usage(argv[0], "--shape and --out are required");
  absl::StatusOr<whisper::SyntheticModelOptions> options = whisper::ShapeModelOptions(shape, type, seed);
  if (!options.ok()) return Usage(argv[0], std::string(options.status().message()));
  absl::StatusOr<std::vector<float>> filters =
      whisper::ShapeMelFilters(whisper::UserPath(mel_filters), options->hparams.n_mels);
  if (!filters.ok()) {
    std::fprintf(stderr,
                 "make_model: error: %s\n(the mel filterbank: tools/get_model.sh writes models/mel_filters.npz; "
                 "or give --mel_filters FILE, OpenAI Whisper's whisper/assets/mel_filters.npz)\n",
                 std::string(filters.status().message()).c_str());
    return 1;
  }
  options->mel_filters = std::move(*filters);
  const whisper::SyntheticModel model = whisper::MakeSyntheticModel(*options);
  const std::string path = whisper::UserPath(out), tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  const bool written = f != nullptr && std::fwrite(model.bytes.data(), 1, model.bytes.size(), f) == model.bytes.size();
  const bool closed = f != nullptr && std::fclose(f) == 0;
  if (!written || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::perror(("make_model: error: cannot write " + tmp).c_str());
    std::remove(tmp.c_str());
    return 1;
  }
  std::printf("make_model: wrote %s: %s shape, %s weights (random), %zu bytes\n", path.c_str(), shape.c_str(),
              type.c_str(), model.bytes.size());
  return 0;
}
