// Where tests find inputs that live outside Bazel's view: the repository's sibling `shared/`
// (sample audio, header-only models) and `models/` (the converted model, made by tools/setup.sh).
#ifndef GGML_WHISPER_TESTDATA_PATHS_H_
#define GGML_WHISPER_TESTDATA_PATHS_H_

#include <string>
#include <vector>

namespace testdata {

// The repository root: $BUILD_WORKSPACE_DIRECTORY under `bazel run`; under `bazel test`, resolved
// through the runfiles symlink of testdata/README.md (a data dependency of this library), so it
// works in any checkout. "" if unknown.
std::string RepoRoot();

// The folder of shared inputs beside the checkout (data/: sample audio and header-only models;
// reference/): $GGML_WHISPER_SHARED if set, else RepoRoot() + "/../shared" ("../shared", relative
// to the working directory, when the root is unknown). When neither names an existing folder it
// prints what it looked for and how to fix it (set $GGML_WHISPER_SHARED) to stderr, and returns
// the path anyway, so a test fails opening a file under it after that message.
std::string SharedDir();

// SharedDir() + "/data/" + name.
std::string SharedData(const std::string& name);

// RepoRoot() + "/models/" + name (e.g. "ggml-tiny.en.bin"); $GGML_WHISPER_MODELS overrides the
// folder.
std::string ModelPath(const std::string& name);

// A message for a missing model: what to run to get it.
std::string MissingModelHint(const std::string& path);

// $TEST_TMPDIR + "/" + name under `bazel test` ("/tmp/" + name outside it): a file a test may write.
std::string TmpPath(const std::string& name);

// The whole file at `path` as bytes; empty when it cannot be read (the caller's assertion on the
// content then fails).
std::vector<unsigned char> ReadBytes(const std::string& path);

}  // namespace testdata

#endif  // GGML_WHISPER_TESTDATA_PATHS_H_
