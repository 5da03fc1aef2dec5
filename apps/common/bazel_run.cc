#include "apps/common/bazel_run.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace whisper {
namespace {

const char* BuildWorkingDirectory() {
  const char* dir = std::getenv("BUILD_WORKING_DIRECTORY");
  return dir != nullptr && dir[0] != '\0' ? dir : nullptr;
}

}  // namespace

absl::Status ChdirToBuildWorkingDirectory() {
  const char* dir = BuildWorkingDirectory();
  if (dir == nullptr || chdir(dir) == 0) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("cannot change to BUILD_WORKING_DIRECTORY '", dir, "': ", std::strerror(errno)));
}

std::string UserPath(const std::string& path) {
  const char* dir = BuildWorkingDirectory();
  if (path.empty() || path[0] == '/' || dir == nullptr) return path;
  return absl::StrCat(dir, "/", path);
}

}  // namespace whisper
