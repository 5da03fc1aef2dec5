// QuantizeModelFile: the output file equals the in-memory image, `<out>.tmp` is never left
// behind, the same-file check, and the file-level errors.
#include "tools/quantize/quantize_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "tools/quantize/quantize_lib.h"
#include "whisper/synthetic_model.h"

namespace ggml_whisper::quantize {
namespace {

using ::testing::HasSubstr;

std::string TmpDir() {
  const char* dir = getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

std::vector<uint8_t> ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

QuantTarget Q5_0() { return *ParseQuantTarget("q5_0"); }

std::string Message(const absl::StatusOr<QuantizeSummary>& s) {
  return std::string(s.status().message());
}

class QuantizeFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = whisper::MakeSyntheticModel({}).bytes;
    in_ = whisper::WriteTempFile("in.bin", model_);
  }
  std::vector<uint8_t> model_;
  std::string in_;
};

TEST_F(QuantizeFileTest, WritesTheImageAndNoTemporary) {
  const std::string out = TmpDir() + "/out.bin";
  int n_reported = 0;
  absl::StatusOr<QuantizeSummary> s =
      QuantizeModelFile(in_, out, Q5_0(), [&n_reported](const TensorReport&) { ++n_reported; });
  ASSERT_TRUE(s.ok()) << s.status();
  std::vector<uint8_t> image;
  ASSERT_TRUE(QuantizeModelImage(model_.data(), model_.size(), in_, Q5_0(),
                                 [&image](const void* p, size_t n) {
                                   const uint8_t* b = static_cast<const uint8_t*>(p);
                                   image.insert(image.end(), b, b + n);
                                   return absl::OkStatus();
                                 })
                  .ok());
  EXPECT_EQ(ReadAll(out), image);
  EXPECT_EQ(s->file_bytes_out, image.size());
  EXPECT_EQ(n_reported, static_cast<int>(s->tensors.size()));
  EXPECT_FALSE(Exists(out + ".tmp"));
  EXPECT_EQ(ReadAll(in_), model_);  // input untouched
}

TEST_F(QuantizeFileTest, ReplacesAnExistingOutputOnlyOnSuccess) {
  const std::string out = TmpDir() + "/existing.bin";
  const std::vector<uint8_t> old = {'o', 'l', 'd'};
  whisper::WriteTempFile("existing.bin", old);
  const std::string bad = whisper::WriteTempFile(
      "truncated.bin", std::vector<uint8_t>(model_.begin(), model_.begin() + 1000));
  absl::StatusOr<QuantizeSummary> s = QuantizeModelFile(bad, out, Q5_0());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(Message(s), HasSubstr("truncated.bin: truncated at offset"));
  EXPECT_THAT(Message(s), HasSubstr("mel_filters"));
  EXPECT_EQ(ReadAll(out), old);
  EXPECT_FALSE(Exists(out + ".tmp"));

  ASSERT_TRUE(QuantizeModelFile(in_, out, Q5_0()).ok());
  EXPECT_GT(ReadAll(out).size(), 1000u);
}

TEST_F(QuantizeFileTest, RefusesInputAsOutput) {
  const std::string dir = TmpDir();
  const std::string link = dir + "/link.bin";
  unlink(link.c_str());
  ASSERT_EQ(symlink(in_.c_str(), link.c_str()), 0);
  const std::string tmp_named = whisper::WriteTempFile("x.bin.tmp", model_);
  const struct {
    std::string in, out;
  } cases[] = {{in_, in_}, {in_, dir + "/./in.bin"}, {in_, link}, {tmp_named, dir + "/x.bin"}};
  for (const auto& c : cases) {
    absl::StatusOr<QuantizeSummary> s = QuantizeModelFile(c.in, c.out, Q5_0());
    ASSERT_FALSE(s.ok()) << c.out;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(Message(s), HasSubstr("are the same file")) << c.out;
  }
  EXPECT_EQ(ReadAll(in_), model_);
  EXPECT_EQ(ReadAll(tmp_named), model_);
  EXPECT_FALSE(Exists(dir + "/x.bin"));
}

TEST_F(QuantizeFileTest, MissingInput) {
  const std::string out = TmpDir() + "/never.bin";
  absl::StatusOr<QuantizeSummary> s = QuantizeModelFile(TmpDir() + "/absent.bin", out, Q5_0());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Message(s), HasSubstr("cannot open input '" + TmpDir() + "/absent.bin'"));
  EXPECT_FALSE(Exists(out));
  EXPECT_FALSE(Exists(out + ".tmp"));
}

TEST_F(QuantizeFileTest, DirectoryAsInput) {
  absl::StatusOr<QuantizeSummary> s = QuantizeModelFile(TmpDir(), TmpDir() + "/o.bin", Q5_0());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(Message(s), HasSubstr("is not a regular file"));
}

TEST_F(QuantizeFileTest, EmptyInputNamesTheMagic) {
  const std::string empty = whisper::WriteTempFile("empty.bin", {});
  const std::string out = TmpDir() + "/from_empty.bin";
  absl::StatusOr<QuantizeSummary> s = QuantizeModelFile(empty, out, Q5_0());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(Message(s), HasSubstr("magic"));
  EXPECT_FALSE(Exists(out));
  EXPECT_FALSE(Exists(out + ".tmp"));
}

TEST_F(QuantizeFileTest, OutputDirectoryMissing) {
  const std::string out = TmpDir() + "/no/such/dir/out.bin";
  absl::StatusOr<QuantizeSummary> s = QuantizeModelFile(in_, out, Q5_0());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Message(s), HasSubstr("cannot create output '" + out + ".tmp'"));
}

// The rename onto a directory fails after everything was written: the temporary is removed.
TEST_F(QuantizeFileTest, OutputIsADirectory) {
  const std::string out = TmpDir() + "/outdir";
  ASSERT_TRUE(Exists(out) || mkdir(out.c_str(), 0755) == 0);
  absl::StatusOr<QuantizeSummary> s = QuantizeModelFile(in_, out, Q5_0());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(Message(s), HasSubstr("cannot rename '" + out + ".tmp' to '" + out + "'"));
  EXPECT_FALSE(Exists(out + ".tmp"));
}

// The shared header-only tiny.en file (header, mel filters, vocabulary; no tensor records).
TEST_F(QuantizeFileTest, HeaderOnlyTinyEnIsRejected) {
  const std::string in = testdata::SharedData("header-only-ggml-tiny.en.bin");
  ASSERT_TRUE(Exists(in)) << in;
  const std::string out = TmpDir() + "/header-only-q5_0.bin";
  absl::StatusOr<QuantizeSummary> s = QuantizeModelFile(in, out, Q5_0());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(s), HasSubstr(in + ": no tensors: file has header, mel filters and "
                                         "vocabulary only (586836 bytes; 167 tensors expected"));
  EXPECT_FALSE(Exists(out));
  EXPECT_FALSE(Exists(out + ".tmp"));
}

}  // namespace
}  // namespace ggml_whisper::quantize
