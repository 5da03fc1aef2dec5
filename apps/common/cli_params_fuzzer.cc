// Fuzz target: the CLI flag parser (apps/common/cli_params.h ParseCliParams). The input split at NUL
// bytes is argv[1..]; an input starting with '@' is instead a response file (written to a
// temporary file, passed as "@FILE").
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "apps/common/cli_params.h"

namespace {
std::string ResponseFilePath() {
  const char* tmp = getenv("TMPDIR");
  return std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/cli_params_fuzzer." +
         std::to_string(getpid()) + ".args";
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args = {"whisper-cli"};
  static const std::string response_path = ResponseFilePath();
  if (size > 0 && data[0] == '@') {
    FILE* f = fopen(response_path.c_str(), "wb");
    if (f == nullptr) abort();
    if (size > 1 && fwrite(data + 1, 1, size - 1, f) != size - 1) abort();
    fclose(f);
    args.push_back("@" + response_path);
  } else {
    std::string cur;
    for (size_t i = 0; i < size; ++i) {
      if (data[i] == 0) {
        args.push_back(cur);
        cur.clear();
      } else {
        cur.push_back(static_cast<char>(data[i]));
      }
    }
    if (size > 0) args.push_back(cur);
    // A lone "@PATH" would read an arbitrary file (/dev/zero never ends); the branch above
    // covers response files.
    if (args.size() == 2 && !args[1].empty() && args[1][0] == '@') return 0;
  }
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  absl::StatusOr<whisper::CliParams> params = whisper::ParseCliParams(static_cast<int>(args.size()), argv.data());
  if (params.ok()) {
    // Invariants the CLI relies on.
    if (params->output_files.size() > params->files.size() && !params->help) {
      fprintf(stderr, "cli_params_fuzzer: more -of than inputs accepted\n");
      abort();
    }
    if (params->unimplemented.empty() != params->unimplemented_flags.empty() && !params->help) {
      fprintf(stderr, "cli_params_fuzzer: unimplemented inconsistent with unimplemented_flags\n");
      abort();
    }
  } else if (params.status().message().empty()) {
    fprintf(stderr, "cli_params_fuzzer: error without a message\n");
    abort();
  }
  return 0;
}
