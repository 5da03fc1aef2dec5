#include "whisper/e2e/cli_runner.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>

#include "testdata/paths.h"

extern char** environ;

namespace whisper_e2e {
namespace {

std::string TestTmpDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr && *dir != '\0' ? dir : "/tmp";
}

std::string Absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char cwd[4096];
  if (getcwd(cwd, sizeof(cwd)) == nullptr) return path;
  return std::string(cwd) + "/" + path;
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

}  // namespace

std::string CliPath() {
  const char* cli = std::getenv("WHISPER_CLI");
  if (cli == nullptr || *cli == '\0') {
    ADD_FAILURE() << "WHISPER_CLI is not set: the test's BUILD rule sets it to $(rootpath //whisper:cli)";
    return "";
  }
  return Absolute(cli);
}

CliRun RunCli(const std::vector<std::string>& args, const std::string& cwd, const std::vector<std::string>& env,
              const std::string& stdin_path, int64_t address_space_limit) {
  static std::atomic<int> counter{0};
  const std::string base = TestTmpDir() + "/cli_run_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
  const std::string out_path = base + ".out", err_path = base + ".err";
  CliRun run;
  const std::string cli = CliPath();
  if (cli.empty()) return run;

  std::vector<std::string> argv_s = {cli};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s;
  for (char** e = environ; *e != nullptr; ++e) env_s.push_back(*e);
  env_s.insert(env_s.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (std::string& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  const pid_t pid = fork();
  if (pid < 0) {
    ADD_FAILURE() << "fork: " << std::strerror(errno);
    return run;
  }
  if (pid == 0) {  // child: only async-signal-safe calls until exec
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(126);
    if (address_space_limit > 0) {
      const struct rlimit lim = {static_cast<rlim_t>(address_space_limit), static_cast<rlim_t>(address_space_limit)};
      if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(126);
    }
    if (!stdin_path.empty()) {
      const int in = open(stdin_path.c_str(), O_RDONLY);
      if (in < 0 || dup2(in, 0) < 0) _exit(126);
    }
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.out = ReadFileOrFail(out_path);
  run.err = ReadFileOrFail(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return run;
}

std::string MakeTempDir(const std::string& name) {
  const std::string dir = TestTmpDir() + "/" + name;
  const std::string rm = "rm -rf '" + dir + "'";
  if (std::system(rm.c_str()) != 0 || mkdir(dir.c_str(), 0755) != 0) {
    ADD_FAILURE() << "cannot create " << dir << ": " << std::strerror(errno);
  }
  return dir;
}

::testing::AssertionResult ModelAvailable() {
  const std::string path = testdata::ModelPath("ggml-tiny.en.bin");
  if (Exists(path)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << testdata::MissingModelHint(path);
}

std::string MakeModelWorkDir(const std::string& name) {
  const std::string dir = MakeTempDir(name);
  const std::string models = dir + "/models";
  const std::string target = testdata::ModelPath("ggml-tiny.en.bin");
  if (mkdir(models.c_str(), 0755) != 0 || symlink(target.c_str(), (models + "/ggml-tiny.en.bin").c_str()) != 0) {
    ADD_FAILURE() << "cannot link " << target << " into " << models << ": " << std::strerror(errno);
  }
  return dir;
}

std::vector<CliSegment> ParseSegments(const std::string& out) {
  static const std::regex line_re(R"(\[(\d\d):(\d\d):(\d\d)\.(\d\d\d) --> (\d\d):(\d\d):(\d\d)\.(\d\d\d)\]  (.*))");
  std::vector<CliSegment> segments;
  for (const std::string& line : Lines(out)) {
    if (line.empty()) continue;
    std::smatch m;
    if (!std::regex_match(line, m, line_re)) {
      ADD_FAILURE() << "not a transcript line: '" << line << "'";
      continue;
    }
    auto ms = [&](int i) {
      return ((std::stoll(m[i]) * 60 + std::stoll(m[i + 1])) * 60 + std::stoll(m[i + 2])) * 1000 + std::stoll(m[i + 3]);
    };
    segments.push_back({ms(1), ms(5), m[9]});
  }
  return segments;
}

std::string ReadFileOrFail(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    ADD_FAILURE() << "cannot read " << path;
    return "";
  }
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

void WriteFileOrFail(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) ADD_FAILURE() << "cannot write " << path;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace whisper_e2e
