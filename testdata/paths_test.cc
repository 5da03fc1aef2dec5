#include "testdata/paths.h"

#include <sys/stat.h>

#include "gtest/gtest.h"

namespace {

bool Exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

TEST(Paths, FindTheRepositoryAndSharedData) {
  const std::string root = testdata::RepoRoot();
  ASSERT_FALSE(root.empty());
  EXPECT_TRUE(Exists(root + "/WORKSPACE")) << root;
  EXPECT_TRUE(Exists(testdata::SharedData("jfk.wav"))) << testdata::SharedData("jfk.wav");
}

}  // namespace
