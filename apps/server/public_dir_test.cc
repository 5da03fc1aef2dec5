// --public's folder (public_dir.h) on a temporary folder with the links a folder may hold: to a
// file of the folder (served), to /etc/passwd, to a file beside the folder and through a folder
// link that leads out (each refused, 403, without a byte of the target), a FIFO (not served, and
// the open does not block), ".." segments and paths outside the mount point (not served).
#include "apps/server/public_dir.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "gtest/gtest.h"

namespace whisper::server {
namespace {

void WriteFile(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
}

class PublicDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/public_dir_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    dir_ = base_ + "/pub";
    ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
    ASSERT_EQ(mkdir((dir_ + "/css").c_str(), 0700), 0);
    ASSERT_EQ(mkdir((base_ + "/outside").c_str(), 0700), 0);
    WriteFile(dir_ + "/index.html", "<p>home</p>");
    WriteFile(dir_ + "/css/site.css", "p{}");
    WriteFile(base_ + "/secret.txt", "secret beside the folder");
    WriteFile(base_ + "/outside/secret.txt", "secret in a folder beside");
    ASSERT_EQ(symlink("/etc/passwd", (dir_ + "/passwd").c_str()), 0);
    ASSERT_EQ(symlink("../secret.txt", (dir_ + "/up.txt").c_str()), 0);
    ASSERT_EQ(symlink("../outside", (dir_ + "/outlink").c_str()), 0);
    ASSERT_EQ(symlink("css/site.css", (dir_ + "/in.css").c_str()), 0);
    ASSERT_EQ(mkfifo((dir_ + "/fifo").c_str(), 0600), 0);
    absl::StatusOr<std::string> real = PublicDirRealPath(dir_);
    ASSERT_TRUE(real.ok()) << real.status();
    real_ = *real;
  }
  void TearDown() override {
    const std::string cmd = "rm -rf '" + base_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }

  std::string base_, dir_, real_;
};

TEST_F(PublicDirTest, FilesOfTheFolderAreServed) {
  std::optional<PublicFile> f = ReadPublicFile(real_, "/", "/");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->status, 200);
  EXPECT_EQ(f->body, "<p>home</p>");
  EXPECT_EQ(f->content_type, "text/html");
  for (const char* path : {"/css/site.css", "/in.css"}) {  // a link to a file of the folder is fine
    f = ReadPublicFile(real_, "/", path);
    ASSERT_TRUE(f.has_value()) << path;
    EXPECT_EQ(f->status, 200) << path;
    EXPECT_EQ(f->body, "p{}") << path;
    EXPECT_EQ(f->content_type, "text/css") << path;
  }
  // Under a --request-path mount point.
  f = ReadPublicFile(real_, "/api", "/api/css/site.css");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->body, "p{}");
}

TEST_F(PublicDirTest, LinksLeadingOutsideAreRefused) {
  for (const char* path : {"/passwd", "/up.txt", "/outlink/secret.txt"}) {
    std::optional<PublicFile> f = ReadPublicFile(real_, "/", path);
    ASSERT_TRUE(f.has_value()) << path;
    EXPECT_EQ(f->status, 403) << path;
    EXPECT_EQ(f->body, std::string("GET ") + path + ": the path leads outside the server's --public folder");
    EXPECT_EQ(f->body.find("root:"), std::string::npos);
    EXPECT_EQ(f->body.find("secret beside"), std::string::npos);
    EXPECT_EQ(f->body.find("secret in a folder"), std::string::npos);
  }
}

TEST_F(PublicDirTest, OtherPathsGoOnToTheRoutes) {
  for (const char* path : {"/fifo", "/missing.html", "/css", "/../secret.txt", "/css/../../secret.txt", "/..",
                           "/health"}) {
    EXPECT_FALSE(ReadPublicFile(real_, "/", path).has_value()) << path;
  }
  EXPECT_FALSE(ReadPublicFile(real_, "/api", "/index.html").has_value());  // not under the mount point
  // The mount point is a path segment: "/api" does not cover "/apiindex.html" or "/apicss/site.css"
  // (before, both served the folder's index.html and css/site.css).
  for (const char* path : {"/apiindex.html", "/apicss/site.css"}) {
    EXPECT_FALSE(ReadPublicFile(real_, "/api", path).has_value()) << path;
  }
  EXPECT_TRUE(ReadPublicFile(real_, "/api", "/api").has_value());   // the mount point itself: index.html
  EXPECT_TRUE(ReadPublicFile(real_, "/api/", "/api/").has_value());
}

TEST_F(PublicDirTest, FolderMustExist) {
  for (const std::string& bad : {dir_ + "/missing", dir_ + "/index.html", std::string()}) {
    absl::StatusOr<std::string> r = PublicDirRealPath(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("--public '" + bad + "'"), std::string::npos) << r.status();
  }
}

}  // namespace
}  // namespace whisper::server
