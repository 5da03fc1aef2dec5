// Helpers for end-to-end tests of `whisper:cli`: run the binary as a user would (a child process
// with its own working directory, stdout and stderr captured), parse its transcript lines, and
// prepare inputs (the model, WAV files) under $TEST_TMPDIR.
#ifndef GGML_WHISPER_WHISPER_E2E_CLI_RUNNER_H_
#define GGML_WHISPER_WHISPER_E2E_CLI_RUNNER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace whisper_e2e {

// What one CLI run produced. exit_code is the process's exit status, or 128 + the signal number
// when a signal ended it (a crash is then visible as e.g. 134 for SIGABRT, 139 for SIGSEGV).
struct CliRun {
  int exit_code = -1;
  std::string out;  // stdout, bytes
  std::string err;  // stderr, bytes
};

// The CLI binary: $WHISPER_CLI (the BUILD file sets it to $(rootpath //whisper:cli)), made
// absolute against the test's working directory. Fails the test (and returns "") when unset.
std::string CliPath();

// Runs the CLI with `args` (argv[1..]) in directory `cwd` ("" = the test's), with the
// environment of the test plus `env` ("NAME=value" entries), and standard input read from the
// file `stdin_path` ("" = the test's own), and, when address_space_limit > 0, RLIMIT_AS set to
// that many bytes (`ulimit -v`). Waits for it to exit.
CliRun RunCli(const std::vector<std::string>& args, const std::string& cwd = "",
              const std::vector<std::string>& env = {}, const std::string& stdin_path = "",
              int64_t address_space_limit = 0);

// A new, empty directory $TEST_TMPDIR/<name> (removed first if it exists).
std::string MakeTempDir(const std::string& name);

// Succeeds when models/ggml-tiny.en.bin (testdata::ModelPath) exists; otherwise fails with
// testdata::MissingModelHint (a missing model is a failure, not a skip).
::testing::AssertionResult ModelAvailable();

// A directory $TEST_TMPDIR/<name> holding models/ggml-tiny.en.bin as a symlink to the real model,
// so a CLI run there can pass the stable relative path "models/ggml-tiny.en.bin" (which the JSON
// output records).
std::string MakeModelWorkDir(const std::string& name);

// One transcript line of the CLI's stdout, "[HH:MM:SS.mmm --> HH:MM:SS.mmm]  text".
struct CliSegment {
  int64_t t0_ms = 0;
  int64_t t1_ms = 0;
  std::string text;  // after the two spaces; usually starts with a space
};

// Parses every line of `out`. Each non-empty line must be a transcript line; a line that is not
// adds a test failure naming it.
std::vector<CliSegment> ParseSegments(const std::string& out);

// Whole file as bytes; fails the test and returns "" when it cannot be read.
std::string ReadFileOrFail(const std::string& path);

// Writes `bytes` to `path`; fails the test when it cannot.
void WriteFileOrFail(const std::string& path, const std::string& bytes);

// Lines of `text` split at '\n' (a final '\n' ends the last line; it does not start a new one).
std::vector<std::string> Lines(const std::string& text);

}  // namespace whisper_e2e

#endif  // GGML_WHISPER_WHISPER_E2E_CLI_RUNNER_H_
