// Where relative paths on a program's command line point under `bazel run`.
//
// `bazel run` starts a binary in its runfiles tree and sets BUILD_WORKING_DIRECTORY to the
// directory the user ran bazel from (Bazel's "bazel run" documentation, "Running executables");
// a user's relative path means that directory. Used by every program's main() (the CLI, the
// server, the stream tool, tools/bench, tools/quantize, tools/make_model).
#ifndef GGML_WHISPER_APPS_COMMON_BAZEL_RUN_H_
#define GGML_WHISPER_APPS_COMMON_BAZEL_RUN_H_

#include <string>

#include "absl/status/status.h"

namespace whisper {

// Changes the process's working directory to $BUILD_WORKING_DIRECTORY when it is set and not
// empty; does nothing otherwise. Errors: FailedPrecondition naming the directory and errno's text
// when chdir fails.
absl::Status ChdirToBuildWorkingDirectory();

// `path` resolved against $BUILD_WORKING_DIRECTORY when that is set and `path` is relative;
// `path` unchanged otherwise (for programs that keep their own working directory).
std::string UserPath(const std::string& path);

}  // namespace whisper

#endif  // GGML_WHISPER_APPS_COMMON_BAZEL_RUN_H_
