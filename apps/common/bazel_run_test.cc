#include "apps/common/bazel_run.h"

#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

namespace whisper {
namespace {

TEST(BazelRun, UserPathJoinsOnlyRelativePaths) {
  ASSERT_EQ(setenv("BUILD_WORKING_DIRECTORY", "/home/u/repo", 1), 0);
  EXPECT_EQ(UserPath("models/a.bin"), "/home/u/repo/models/a.bin");
  EXPECT_EQ(UserPath("/abs/a.bin"), "/abs/a.bin");
  EXPECT_EQ(UserPath(""), "");
  ASSERT_EQ(setenv("BUILD_WORKING_DIRECTORY", "", 1), 0);
  EXPECT_EQ(UserPath("models/a.bin"), "models/a.bin");
  ASSERT_EQ(unsetenv("BUILD_WORKING_DIRECTORY"), 0);
  EXPECT_EQ(UserPath("models/a.bin"), "models/a.bin");
}

TEST(BazelRun, ChdirGoesThereOrNamesTheDirectory) {
  char before[4096];
  ASSERT_NE(getcwd(before, sizeof before), nullptr);
  ASSERT_EQ(setenv("BUILD_WORKING_DIRECTORY", "/", 1), 0);
  ASSERT_TRUE(ChdirToBuildWorkingDirectory().ok());
  char now[4096];
  ASSERT_NE(getcwd(now, sizeof now), nullptr);
  EXPECT_EQ(std::string(now), "/");
  ASSERT_EQ(setenv("BUILD_WORKING_DIRECTORY", "/nonexistent-dir-x", 1), 0);
  const absl::Status st = ChdirToBuildWorkingDirectory();
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("'/nonexistent-dir-x'"), absl::string_view::npos) << st;
  ASSERT_EQ(unsetenv("BUILD_WORKING_DIRECTORY"), 0);
  EXPECT_TRUE(ChdirToBuildWorkingDirectory().ok());
  ASSERT_EQ(chdir(before), 0);
}

}  // namespace
}  // namespace whisper
