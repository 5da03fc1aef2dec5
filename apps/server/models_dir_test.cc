#include "apps/server/models_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace whisper::server {
namespace {

// $TEST_TMPDIR/<name>/models holding: good.bin (a regular file), sub/ (a folder with sub/inner.bin),
// fifo (a FIFO), link_in -> good.bin, link_out -> /etc/passwd, link_up -> ../outside.bin (a real
// file beside the folder), link_dir -> sub, link_self -> . ; and $TEST_TMPDIR/<name>/outside.bin.
class ModelsDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    base_ = std::string(tmp != nullptr ? tmp : "/tmp") + "/models_dir_test";
    ASSERT_EQ(std::system(("rm -rf '" + base_ + "'").c_str()), 0);
    dir_ = base_ + "/models";
    ASSERT_EQ(mkdir(base_.c_str(), 0755), 0);
    ASSERT_EQ(mkdir(dir_.c_str(), 0755), 0);
    ASSERT_EQ(mkdir((dir_ + "/sub").c_str(), 0755), 0);
    std::ofstream(dir_ + "/good.bin") << "model bytes";
    std::ofstream(dir_ + "/sub/inner.bin") << "model bytes";
    std::ofstream(base_ + "/outside.bin") << "secret";
    ASSERT_EQ(mkfifo((dir_ + "/fifo").c_str(), 0644), 0);
    ASSERT_EQ(symlink("good.bin", (dir_ + "/link_in").c_str()), 0);
    ASSERT_EQ(symlink("/etc/passwd", (dir_ + "/link_out").c_str()), 0);
    ASSERT_EQ(symlink("../outside.bin", (dir_ + "/link_up").c_str()), 0);
    ASSERT_EQ(symlink("sub", (dir_ + "/link_dir").c_str()), 0);
    ASSERT_EQ(symlink(".", (dir_ + "/link_self").c_str()), 0);
    absl::StatusOr<std::string> real = ModelsDirRealPath(dir_);
    ASSERT_TRUE(real.ok()) << real.status();
    real_ = *real;
  }

  // The error for `name`, checked to be InvalidArgument, to name the field, and to show neither
  // the folder's path nor a byte of any file.
  std::string Refusal(const std::string& name) {
    absl::StatusOr<std::string> r = ResolveModelName(real_, name);
    if (r.ok()) {
      ADD_FAILURE() << "accepted '" << name << "' as " << *r;
      return "";
    }
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string m(r.status().message());
    EXPECT_EQ(m.rfind("field 'model'", 0), 0u) << m;
    EXPECT_EQ(m.find(real_), std::string::npos) << m;
    EXPECT_EQ(m.find("root:"), std::string::npos) << m;
    EXPECT_EQ(m.find("secret"), std::string::npos) << m;
    EXPECT_EQ(m.find('\0'), std::string::npos);
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    return m;
  }

  std::string base_, dir_, real_;
};

TEST_F(ModelsDirTest, AcceptsAFileInTheFolder) {
  absl::StatusOr<std::string> r = ResolveModelName(real_, "good.bin");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, real_ + "/good.bin");
  // A link to another file of the folder stays in it: the target is what is loaded.
  r = ResolveModelName(real_, "link_in");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, real_ + "/good.bin");
}

TEST_F(ModelsDirTest, RefusesPaths) {
  for (const std::string name :
       {"/etc/passwd", "../../etc/passwd", "models/../../etc/passwd", "../outside.bin", "sub/inner.bin",
        "./good.bin", "good.bin/", "..\\/etc/passwd"}) {
    EXPECT_NE(Refusal(name).find("contains '/'"), std::string::npos) << name;
  }
  // The folder's own absolute path to a file in it is a path too.
  EXPECT_NE(Refusal(real_ + "/good.bin").find("contains '/'"), std::string::npos);
  EXPECT_NE(Refusal("..").find("names a folder"), std::string::npos);
  EXPECT_NE(Refusal(".").find("names a folder"), std::string::npos);
}

TEST_F(ModelsDirTest, UrlEncodingIsNotDecoded) {
  // Multipart values are not URL-decoded (form bodies are, by cpp-httplib, before this check, and
  // then contain '/'): the name is taken literally and is no file of the folder.
  for (const std::string name : {"%2e%2e%2f%2e%2e%2fetc%2fpasswd", "..%2fetc%2fpasswd", "%2fetc%2fpasswd"}) {
    EXPECT_NE(Refusal(name).find("is not a file in the server's --models-dir"), std::string::npos) << name;
  }
}

TEST_F(ModelsDirTest, RefusesSymlinksOutOfTheFolder) {
  EXPECT_NE(Refusal("link_out").find("symbolic link that leads outside"), std::string::npos);
  EXPECT_NE(Refusal("link_up").find("symbolic link that leads outside"), std::string::npos);
}

// A folder of the models folder is a CTranslate2 model folder to load (the loader says whether it
// holds one); the files it reads must stay inside the models folder. Before, every folder was
// refused "is a directory".
TEST_F(ModelsDirTest, AcceptsAFolderWhoseFilesAreInside) {
  for (const char* name : {"sub", "link_dir"}) {
    absl::StatusOr<std::string> path = ResolveModelName(real_, name);
    ASSERT_TRUE(path.ok()) << name << ": " << path.status();
    EXPECT_EQ(*path, real_ + "/sub");
  }
  ASSERT_EQ(mkdir((dir_ + "/ct2").c_str(), 0755), 0);
  ASSERT_EQ(symlink("../good.bin", (dir_ + "/ct2/model.bin").c_str()), 0);  // inside: fine
  EXPECT_TRUE(ResolveModelName(real_, "ct2").ok());
  ASSERT_EQ(symlink("/etc/passwd", (dir_ + "/ct2/config.json").c_str()), 0);
  EXPECT_EQ(Refusal("ct2"), "field 'model' 'ct2' is a folder whose config.json is a symbolic link that leads "
                            "outside the server's --models-dir");
  ASSERT_EQ(mkdir((dir_ + "/ct2b").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((dir_ + "/ct2b/model.bin").c_str(), 0755), 0);
  EXPECT_NE(Refusal("ct2b").find("is a folder whose model.bin is not a regular file"), std::string::npos);
}

TEST_F(ModelsDirTest, RefusesWhatIsNotARegularFile) {
  EXPECT_NE(Refusal("link_self").find("names the server's --models-dir itself"), std::string::npos);
  EXPECT_NE(Refusal("fifo").find("is a FIFO"), std::string::npos);
  EXPECT_NE(Refusal("missing.bin").find("is not a file in the server's --models-dir"), std::string::npos);
}

TEST_F(ModelsDirTest, RefusesMalformedNames) {
  EXPECT_EQ(Refusal(""), "field 'model' is empty: expected the name of a model file in the server's --models-dir");
  // A NUL byte would cut the name short at the C API ("good.bin").
  EXPECT_EQ(Refusal(std::string("good.bin\0../x", 13)),
            "field 'model' 'good.bin\\x00../x' has the control byte 0x00 at offset 8: expected a plain file name in "
            "the server's --models-dir");
  EXPECT_NE(Refusal("good\n.bin").find("control byte 0x0a at offset 4"), std::string::npos);
  const std::string longest(255, 'a');
  EXPECT_NE(Refusal(longest).find("is not a file"), std::string::npos);
  const std::string too_long(100000, 'a');
  const std::string m = Refusal(too_long);
  EXPECT_EQ(m, "field 'model' '" + std::string(64, 'a') +
                   "...' is 100000 bytes long: expected a file name of at most 255 bytes in the server's --models-dir");
}

TEST_F(ModelsDirTest, UnreadableFile) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads a mode 000 file";
  ASSERT_EQ(chmod((dir_ + "/good.bin").c_str(), 0), 0);
  EXPECT_NE(Refusal("good.bin").find("cannot be opened: Permission denied"), std::string::npos);
}

TEST_F(ModelsDirTest, FolderItself) {
  EXPECT_FALSE(ModelsDirRealPath("").ok());
  EXPECT_NE(ModelsDirRealPath(base_ + "/none").status().message().find("No such file"), std::string::npos);
  EXPECT_NE(ModelsDirRealPath(dir_ + "/good.bin").status().message().find("is not a folder"), std::string::npos);
  // A folder reached through a symbolic link is its target.
  ASSERT_EQ(symlink(dir_.c_str(), (base_ + "/models_link").c_str()), 0);
  absl::StatusOr<std::string> r = ModelsDirRealPath(base_ + "/models_link");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, real_);
}

}  // namespace
}  // namespace whisper::server
