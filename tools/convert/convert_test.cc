// End-to-end conversion of a synthetic model directory (no real model needed).
#include "tools/convert/convert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/convert/file_util.h"
#include "tools/convert/whisper_ct2_test_util.h"
#include "tools/convert/zip_test_util.h"

namespace ggml_whisper::convert {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

template <typename T>
std::string Msg(const absl::StatusOr<T>& s) {
  return std::string(s.status().message());
}

void WriteFile(const std::string& path, const void* data, size_t n) {
  FILE* f = fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(fwrite(data, 1, n, f), n);
  fclose(f);
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

class ConvertTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = getenv("TEST_TMPDIR");
    dir_ = std::string(tmp != nullptr ? tmp : "/tmp") + "/convert_test";
    mkdir(dir_.c_str(), 0755);
    const std::vector<uint8_t> model = TinyWhisperCt2().Build();
    WriteFile(dir_ + "/model.bin", model.data(), model.size());
    // Byte-level tokens: "!", "Ġa", "çļ" and "Ħ" (bytes E7 9A and 84, below), "<|endoftext|>",
    // then specials the file does not store.
    const std::string vocab =
        "!\n\xC4\xA0"
        "a\n\xC3\xA7\xC4\xBC\n\xC4\xA6\n<|endoftext|>\n<|startoftranscript|>\n<|x|>\n";
    WriteFile(dir_ + "/vocabulary.txt", vocab.data(), vocab.size());
    // mel_3: [3 x 4] with a negative zero first, as in OpenAI's mel_80.
    const std::vector<float> mel = {-0.0f, 0.5f, 0.25f, 0, 0, 1, 2, 3, 4, 5, 6, -0.0f};
    const std::vector<uint8_t> npz =
        ZipBuilder()
            .Add("mel_3.npy",
                 Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", mel), true)
            .Build();
    WriteFile(dir_ + "/mel_filters.npz", npz.data(), npz.size());
    options_.model_dir = dir_;
    options_.mel_filters = dir_ + "/mel_filters.npz";
    options_.out = dir_ + "/ggml-tiny.bin";
    options_.n_vocab_stored = 5;
    remove(options_.out.c_str());
  }

  std::string dir_;
  ConvertOptions options_;
};

TEST_F(ConvertTest, WritesAParsableModel) {
  absl::StatusOr<ConvertSummary> s = ConvertCt2WhisperToGgml(options_);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->n_tensors, 74);

  absl::StatusOr<std::vector<uint8_t>> image = ReadFileBytes(options_.out);
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(image->size(), s->file_bytes);
  absl::StatusOr<GgmlModelFile> f = ParseGgmlModelFile(*image, options_.out);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->hparams.n_vocab, 7);
  EXPECT_EQ(f->hparams.n_mels, 3);
  EXPECT_EQ(f->hparams.ftype, 1);
  EXPECT_THAT(f->vocab, ElementsAre("!", " a", "\xE7\x9A", "\x84", "<|endoftext|>"));
  EXPECT_EQ(f->mel.n_mel, 3);
  EXPECT_EQ(f->mel.n_fft, 4);
  uint32_t first_bits, last_bits;
  memcpy(&first_bits, &f->mel.data[0], 4);
  memcpy(&last_bits, &f->mel.data[11], 4);
  EXPECT_EQ(first_bits, 0u) << "-0.0 is stored as +0.0";
  EXPECT_EQ(last_bits, 0u);
  EXPECT_EQ(f->mel.data[6], 2.0f);
  EXPECT_EQ(f->header_bytes, s->header_bytes);
  ASSERT_EQ(f->tensors.size(), 74u);
  uint64_t data_bytes = 0;
  for (const GgmlTensorRecord& t : f->tensors) data_bytes += t.nbytes;
  EXPECT_EQ(data_bytes, s->tensor_data_bytes);
  EXPECT_EQ(f->tensors[1].name, "encoder.conv1.weight");
  EXPECT_EQ(f->tensors[1].ne, std::vector<int64_t>({3, 3, 4}));
}

// A token holding part of a UTF-8 character is stored as its raw bytes (whisper.cpp's
// convert-pt-to-ggml.py writes them unchanged), so consecutive tokens rebuild the character.
// Hand-derived from GPT-2's bytes_to_unicode: 'ç' U+00E7 is the printable byte 0xE7; 'ļ' U+013C
// is non-printable byte #60 (0x00..0x20 are #0..32, 0x7F #33, 0x80 #34, so 0x9A is #60), i.e.
// 0x9A; 'Ħ' U+0126 is #38, i.e. 0x84. E7 9A 84 is U+7684 '的' in UTF-8.
TEST_F(ConvertTest, PartialUtf8TokensRoundTripByteForByte) {
  ASSERT_TRUE(ConvertCt2WhisperToGgml(options_).ok());
  absl::StatusOr<GgmlModelFile> f = ParseGgmlModelFile(*ReadFileBytes(options_.out), "out");
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->vocab.size(), 5u);
  EXPECT_EQ(f->vocab[2], std::string("\xE7\x9A"));
  EXPECT_EQ(f->vocab[3], std::string("\x84"));
  EXPECT_EQ(f->vocab[2] + f->vocab[3], "\xE7\x9A\x84");
  EXPECT_EQ(f->vocab[2] + f->vocab[3], u8"\u7684");
}

TEST_F(ConvertTest, F32) {
  options_.weight_type = GgmlFileType::kF32;
  absl::StatusOr<ConvertSummary> s = ConvertCt2WhisperToGgml(options_);
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<GgmlModelFile> f = ParseGgmlModelFile(*ReadFileBytes(options_.out), "out");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->hparams.ftype, 0);
  for (const GgmlTensorRecord& t : f->tensors) EXPECT_EQ(t.type, GgmlFileType::kF32) << t.name;
}

TEST_F(ConvertTest, ErrorsNameTheFileAndLeaveNoOutput) {
  ConvertOptions missing_dir = options_;
  missing_dir.model_dir = dir_ + "/nope";
  EXPECT_THAT(Msg(ConvertCt2WhisperToGgml(missing_dir)),
              HasSubstr("cannot open " + dir_ + "/nope/model.bin"));

  ConvertOptions too_many = options_;
  too_many.n_vocab_stored = 50257;
  EXPECT_THAT(Msg(ConvertCt2WhisperToGgml(too_many)),
              HasSubstr(dir_ + " vocabulary: the vocabulary has 7 tokens, the ggml file "
                               "stores 50257"));

  const std::vector<uint8_t> npz =
      ZipBuilder()
          .Add("mel_80.npy",
               Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", {0.0f}), false)
          .Build();
  WriteFile(dir_ + "/mel80.npz", npz.data(), npz.size());
  ConvertOptions wrong_mel = options_;
  wrong_mel.mel_filters = dir_ + "/mel80.npz";
  EXPECT_THAT(Msg(ConvertCt2WhisperToGgml(wrong_mel)),
              HasSubstr(dir_ + "/mel80.npz: no member 'mel_3.npy' (members: mel_80.npy)"));

  const std::string bad_vocab = "!\nb c\n";  // a raw space is not a byte-level character
  WriteFile(dir_ + "/vocabulary.txt", bad_vocab.data(), bad_vocab.size());
  ConvertOptions two = options_;
  two.n_vocab_stored = 2;
  EXPECT_THAT(Msg(ConvertCt2WhisperToGgml(two)), HasSubstr("vocabulary id 1: token 'b c'"));

  EXPECT_FALSE(Exists(options_.out));
  EXPECT_FALSE(Exists(options_.out + ".partial"));
}

// A large-v3 directory: conv1 takes 128 mel channels, so the filterbank is mel_128 of an npz that
// also holds mel_80, as OpenAI's mel_filters.npz does. The key comes from the model's n_mels (its
// conv1 weight), the value CTranslate2 large-v3 directories also give as preprocessor_config.json
// feature_size 128.
TEST_F(ConvertTest, Takes128MelFiltersFromTheModelsNMels) {
  TinyWhisperDims dims;
  dims.n_mels = 128;
  const std::vector<uint8_t> model = TinyWhisperCt2(dims).Build();
  WriteFile(dir_ + "/model.bin", model.data(), model.size());
  std::vector<float> mel80(80 * 4, 1.0f), mel128(128 * 4);
  for (size_t i = 0; i < mel128.size(); ++i) mel128[i] = 0.5f + static_cast<float>(i);
  const std::vector<uint8_t> npz =
      ZipBuilder()
          .Add("mel_80.npy", Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (80, 4), }", mel80), true)
          .Add("mel_128.npy", Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (128, 4), }", mel128), true)
          .Build();
  WriteFile(dir_ + "/mel_filters.npz", npz.data(), npz.size());

  absl::StatusOr<ConvertSummary> s = ConvertCt2WhisperToGgml(options_);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->hparams.n_mels, 128);
  absl::StatusOr<GgmlModelFile> f = ParseGgmlModelFile(*ReadFileBytes(options_.out), options_.out);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->hparams.n_mels, 128);
  EXPECT_EQ(f->mel.n_mel, 128);
  EXPECT_EQ(f->mel.n_fft, 4);
  EXPECT_EQ(f->mel.data, mel128);
  EXPECT_EQ(f->tensors[1].name, "encoder.conv1.weight");
  EXPECT_EQ(f->tensors[1].ne, std::vector<int64_t>({3, 128, 4}));

  // An npz without mel_128 (an old mel_filters.npz with mel_80 only) is named, with its members.
  const std::vector<uint8_t> old_npz =
      ZipBuilder()
          .Add("mel_80.npy", Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (80, 4), }", mel80), true)
          .Build();
  WriteFile(dir_ + "/mel_filters.npz", old_npz.data(), old_npz.size());
  remove(options_.out.c_str());
  EXPECT_THAT(Msg(ConvertCt2WhisperToGgml(options_)),
              HasSubstr(dir_ + "/mel_filters.npz: no member 'mel_128.npy' (members: mel_80.npy)"));
  EXPECT_FALSE(Exists(options_.out));
}

}  // namespace
}  // namespace ggml_whisper::convert
