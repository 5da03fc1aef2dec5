#include "testdata/paths.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

using ::testing::HasSubstr;

bool Exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

// Sets (value) or unsets (nullptr) an environment variable until the end of the scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name); old != nullptr) old_ = old, had_ = true;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST(Paths, FindTheRepositoryAndSharedData) {
  const std::string root = testdata::RepoRoot();
  ASSERT_FALSE(root.empty());
  EXPECT_TRUE(Exists(root + "/WORKSPACE")) << root;
  EXPECT_TRUE(Exists(testdata::SharedData("jfk.wav"))) << testdata::SharedData("jfk.wav");
}

TEST(Paths, SharedDirIsTheEnvironmentsElseBesideTheRepository) {
  const std::string root = testdata::RepoRoot();
  {
    ScopedEnv shared("GGML_WHISPER_SHARED", nullptr);
    EXPECT_EQ(testdata::SharedDir(), root + "/../shared");
  }
  const std::string tmp = getenv("TEST_TMPDIR");
  ScopedEnv shared("GGML_WHISPER_SHARED", tmp.c_str());
  EXPECT_EQ(testdata::SharedDir(), tmp);
  EXPECT_EQ(testdata::SharedData("clip.wav"), tmp + "/data/clip.wav");
}

TEST(Paths, AMissingSharedDirSaysWhatToSet) {
  const std::string checkout = std::string(getenv("TEST_TMPDIR")) + "/checkout";
  ASSERT_TRUE(mkdir(checkout.c_str(), 0755) == 0 || Exists(checkout));
  ScopedEnv ws("BUILD_WORKSPACE_DIRECTORY", checkout.c_str());  // as under `bazel run`
  ScopedEnv shared("GGML_WHISPER_SHARED", nullptr);
  ASSERT_EQ(testdata::RepoRoot(), checkout);
  testing::internal::CaptureStderr();
  const std::string dir = testdata::SharedDir();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(dir, checkout + "/../shared");  // no fallback elsewhere: the test then fails there
  EXPECT_THAT(err, HasSubstr("'" + dir + "' (../shared beside the repository root) does not exist"));
  EXPECT_THAT(err, HasSubstr("set GGML_WHISPER_SHARED"));
}

}  // namespace
