#include "tools/convert/ggml_file.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testdata/paths.h"

namespace ggml_whisper::convert {
namespace {

using ::testdata::TmpPath;

using ::testing::ElementsAre;
using ::testing::HasSubstr;

template <typename T>
std::string Msg(const absl::StatusOr<T>& s) {
  return std::string(s.status().message());
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::vector<uint8_t> ReadAll(const std::string& path) {
  absl::StatusOr<std::vector<uint8_t>> b = ReadFileBytes(path);
  EXPECT_TRUE(b.ok()) << b.status();
  return b.ok() ? *b : std::vector<uint8_t>();
}

WhisperHparams SmallHparams() {
  WhisperHparams h;
  h.n_vocab = 1, h.n_audio_ctx = 2, h.n_audio_state = 3, h.n_audio_head = 4;
  h.n_audio_layer = 5, h.n_text_ctx = 6, h.n_text_state = 7, h.n_text_head = 8;
  h.n_text_layer = 9, h.n_mels = 10, h.ftype = 11;
  return h;
}

MelFilters SmallMel() { return MelFilters{1, 2, {1.0f, -2.0f}}; }

TEST(GgmlFileTest, HeaderBytesExactly) {
  absl::StatusOr<std::string> header =
      SerializeGgmlHeader(SmallHparams(), SmallMel(), {"a", "", "\xFF\x62"});
  ASSERT_TRUE(header.ok()) << header.status();
  // clang-format off
  const std::string expected = std::string(
      "lmgg"                                          // 0x67676d6c little-endian
      "\x01\0\0\0\x02\0\0\0\x03\0\0\0\x04\0\0\0"      // n_vocab .. n_audio_head
      "\x05\0\0\0\x06\0\0\0\x07\0\0\0\x08\0\0\0"      // n_audio_layer .. n_text_head
      "\x09\0\0\0\x0A\0\0\0\x0B\0\0\0"                // n_text_layer, n_mels, ftype
      "\x01\0\0\0\x02\0\0\0"                          // n_mel 1, n_fft 2
      "\x00\x00\x80\x3F\x00\x00\x00\xC0"              // 1.0f, -2.0f
      "\x03\0\0\0"                                    // 3 tokens
      "\x01\0\0\0" "a"                                //
      "\x00\0\0\0"                                    // the empty token
      "\x02\0\0\0" "\xFF" "b",                        // raw bytes, no NUL
      4 + 44 + 8 + 8 + 4 + 5 + 4 + 6);
  // clang-format on
  EXPECT_EQ(*header, expected);
}

TEST(GgmlFileTest, HeaderErrors) {
  MelFilters bad = SmallMel();
  bad.data.push_back(0);
  EXPECT_THAT(Msg(SerializeGgmlHeader(SmallHparams(), bad, {})),
              HasSubstr("mel filters: 3 values for n_mel 1 x n_fft 2"));
}

TEST(GgmlFileTest, TensorRecordHeaderBytesExactly) {
  absl::StatusOr<std::string> r =
      SerializeTensorRecordHeader("enc.w", GgmlFileType::kF16, {3, 80, 384});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, std::string("\x03\0\0\0\x05\0\0\0\x01\0\0\0"    // n_dims, name length, f16
                            "\x03\0\0\0\x50\0\0\0\x80\x01\0\0"  // ne 3, 80, 384
                            "enc.w",
                            12 + 12 + 5));
  EXPECT_THAT(Msg(SerializeTensorRecordHeader("t", GgmlFileType::kF32, {})),
              HasSubstr("tensor 't' has 0 dims, a ggml file allows 1..4"));
  EXPECT_THAT(Msg(SerializeTensorRecordHeader("t", GgmlFileType::kF32, {1, 1, 1, 1, 1})),
              HasSubstr("has 5 dims"));
  EXPECT_THAT(Msg(SerializeTensorRecordHeader("t", GgmlFileType::kF32, {4, 0})),
              HasSubstr("tensor 't' has ne [4, 0]: each must be in 1..2^31-1"));
  EXPECT_THAT(Msg(SerializeTensorRecordHeader("", GgmlFileType::kF32, {1})),
              HasSubstr("has length 0"));
  EXPECT_THAT(Msg(SerializeTensorRecordHeader("t", static_cast<GgmlFileType>(8), {32})),
              HasSubstr("has ggml_type 8"));
}

TEST(GgmlFileTest, WriteThenParse) {
  const std::string path = TmpPath("ggml_file_test.bin");
  remove(path.c_str());
  absl::StatusOr<GgmlModelWriter> w =
      GgmlModelWriter::Create(path, SmallHparams(), SmallMel(), {"x", "yz"});
  ASSERT_TRUE(w.ok()) << w.status();
  const std::vector<float> f32 = {1, 2, 3, 4, 5, 6};
  const std::vector<uint16_t> f16 = {0x3C00, 0xC000};
  ASSERT_TRUE(w->AddTensor("a.bias", GgmlFileType::kF32, {3, 2}, f32.data(), 24).ok());
  ASSERT_TRUE(w->AddTensor("b.weight", GgmlFileType::kF16, {2}, f16.data(), 4).ok());
  absl::Status bad = w->AddTensor("c", GgmlFileType::kF16, {3}, f16.data(), 4);
  EXPECT_THAT(std::string(bad.message()),
              HasSubstr("tensor 'c': 4 data bytes, but ne [3] of f16 needs 6"));
  EXPECT_FALSE(Exists(path)) << "visible before Finish";
  ASSERT_TRUE(w->Finish().ok());
  EXPECT_EQ(w->n_tensors(), 2);
  EXPECT_EQ(w->tensor_data_bytes(), 28u);

  const std::vector<uint8_t> image = ReadAll(path);
  EXPECT_EQ(image.size(), w->bytes_written());
  absl::StatusOr<GgmlModelFile> f = ParseGgmlModelFile(image, path);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->hparams == SmallHparams());
  EXPECT_EQ(f->mel.data, SmallMel().data);
  EXPECT_THAT(f->vocab, ElementsAre("x", "yz"));
  EXPECT_EQ(f->header_bytes, w->header_bytes());
  ASSERT_EQ(f->tensors.size(), 2u);
  EXPECT_EQ(f->tensors[0].name, "a.bias");
  EXPECT_EQ(f->tensors[0].type, GgmlFileType::kF32);
  EXPECT_EQ(f->tensors[0].ne, std::vector<int64_t>({3, 2}));
  EXPECT_EQ(memcmp(image.data() + f->tensors[0].data_offset, f32.data(), 24), 0);
  EXPECT_EQ(f->tensors[1].name, "b.weight");
  EXPECT_EQ(f->tensors[1].nbytes, 4u);
  EXPECT_EQ(memcmp(image.data() + f->tensors[1].data_offset, f16.data(), 4), 0);
  EXPECT_EQ(f->tensors[1].data_offset + 4, image.size());
  remove(path.c_str());
}

TEST(GgmlFileTest, UnfinishedWriterLeavesNoFile) {
  const std::string path = TmpPath("ggml_file_unfinished.bin");
  {
    absl::StatusOr<GgmlModelWriter> w =
        GgmlModelWriter::Create(path, SmallHparams(), SmallMel(), {});
    ASSERT_TRUE(w.ok());
  }
  EXPECT_FALSE(Exists(path));
  EXPECT_FALSE(Exists(path + ".partial"));
  EXPECT_EQ(GgmlModelWriter::Create("/nonexistent-dir/m.bin", SmallHparams(), SmallMel(), {})
                .status()
                .code(),
            absl::StatusCode::kNotFound);
}

TEST(GgmlFileTest, ParseErrors) {
  const std::string header = *SerializeGgmlHeader(SmallHparams(), SmallMel(), {"a"});
  std::vector<uint8_t> image(header.begin(), header.end());
  image[0] = 'X';
  EXPECT_THAT(Msg(ParseGgmlModelFile(image, "m.bin")), HasSubstr("m.bin: magic 0x"));

  const std::string record = *SerializeTensorRecordHeader("t", GgmlFileType::kF32, {2});
  std::vector<uint8_t> full(header.begin(), header.end());
  full.insert(full.end(), record.begin(), record.end());
  full.resize(full.size() + 8);
  ASSERT_TRUE(ParseGgmlModelFile(full, "m.bin").ok());
  for (size_t n = 0; n < full.size(); ++n) {
    if (n == header.size()) continue;  // a header-only file is valid
    std::vector<uint8_t> prefix(full.begin(), full.begin() + n);
    EXPECT_FALSE(ParseGgmlModelFile(prefix, "m.bin").ok()) << n;
  }
  std::vector<uint8_t> bad_dims = full;
  bad_dims[header.size()] = 5;
  EXPECT_THAT(Msg(ParseGgmlModelFile(bad_dims, "m.bin")),
              HasSubstr("tensor record #0 at offset 73 has n_dims 5, expected 1..4"));
  std::vector<uint8_t> bad_type = full;
  bad_type[header.size() + 8] = 2;  // q4_0
  EXPECT_THAT(Msg(ParseGgmlModelFile(bad_type, "m.bin")), HasSubstr("has ggml_type 2"));
}

// whisper.cpp's own header-only tiny.en file (shared test data): hparams, filters, vocabulary.
TEST(GgmlFileTest, ParsesWhisperCppHeaderOnlyFile) {
  const std::string path = testdata::SharedData("header-only-ggml-tiny.en.bin");
  const std::vector<uint8_t> image = ReadAll(path);
  ASSERT_EQ(image.size(), 586836u) << path;
  absl::StatusOr<GgmlModelFile> f = ParseGgmlModelFile(image, path);
  ASSERT_TRUE(f.ok()) << f.status();
  const WhisperHparams& h = f->hparams;
  EXPECT_EQ(h.n_vocab, 51864);
  EXPECT_EQ(h.n_audio_ctx, 1500);
  EXPECT_EQ(h.n_audio_state, 384);
  EXPECT_EQ(h.n_audio_head, 6);
  EXPECT_EQ(h.n_audio_layer, 4);
  EXPECT_EQ(h.n_text_ctx, 448);
  EXPECT_EQ(h.n_text_state, 384);
  EXPECT_EQ(h.n_text_head, 6);
  EXPECT_EQ(h.n_text_layer, 4);
  EXPECT_EQ(h.n_mels, 80);
  EXPECT_EQ(h.ftype, 1);
  EXPECT_EQ(f->mel.n_mel, 80);
  EXPECT_EQ(f->mel.n_fft, 201);
  ASSERT_EQ(f->vocab.size(), 50257u);
  EXPECT_EQ(f->vocab[0], "!");
  EXPECT_EQ(f->vocab[262], " the");
  EXPECT_EQ(f->vocab[50256], "<|endoftext|>");
  EXPECT_EQ(f->header_bytes, 586836u);
  EXPECT_TRUE(f->tensors.empty());
}

}  // namespace
}  // namespace ggml_whisper::convert
