// Ct2FolderToGgmlImage and FasterWhisperMelFilters:
//   - the mel filterbank against OpenAI's mel_filters.npz (librosa; models/mel_filters.npz from
//     tools/get_model.sh) within one float32 rounding, and against values printed by
//     faster-whisper 1.2.1's FeatureExtractor.get_mel_filters(16000, 400, 80);
//   - the real tiny.en folder's image: hparams, vocabulary and every tensor record byte for byte
//     those of models/ggml-tiny.en.bin (written by //tools:convert from the same folder);
//   - bad folders: each error names the file, the field, the value found and what was expected.
#include "tools/convert/ct2_folder.h"

#include <math.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "tools/convert/file_util.h"
#include "tools/convert/ggml_file.h"
#include "tools/convert/npz.h"
#include "tools/convert/whisper_ct2_test_util.h"

namespace ggml_whisper::convert {
namespace {

using ::testing::HasSubstr;

std::string Msg(const absl::Status& s) { return std::string(s.message()); }

TEST(FasterWhisperMelFiltersTest, MatchesFasterWhisperAndOpenAiNpz) {
  const MelFilters m = FasterWhisperMelFilters(80);
  ASSERT_EQ(m.n_mel, 80);
  ASSERT_EQ(m.n_fft, 201);
  // faster-whisper 1.2.1: get_mel_filters(16000, 400, 80).astype("float32")[0, :3] and the
  // largest weight of the last filter.
  EXPECT_EQ(m.data[0], 0.0f);
  EXPECT_FLOAT_EQ(m.data[1], 0.02486259f);
  EXPECT_EQ(m.data[2], 0.0f);
  float last_max = 0;
  for (int j = 0; j < 201; ++j) last_max = fmaxf(last_max, m.data[79 * 201 + j]);
  EXPECT_FLOAT_EQ(last_max, 0.0031647116f);

  const std::string npz = testdata::ModelPath("mel_filters.npz");
  for (int n_mels : {80, 128}) {
    absl::StatusOr<NpyArrayF32> ref = ReadNpzF32(npz, "mel_" + std::to_string(n_mels));
    ASSERT_TRUE(ref.ok()) << ref.status() << testdata::MissingModelHint(npz);
    const MelFilters ours = FasterWhisperMelFilters(n_mels);
    ASSERT_EQ(ref->data.size(), ours.data.size());
    for (size_t i = 0; i < ours.data.size(); ++i) {
      // faster-whisper's float64 weights and librosa's float32 ones: 1.9e-9 (80) and 3.7e-9 (128)
      // apart at most (numpy), under one float32 ulp of the largest weight (0.025: 1.9e-9).
      ASSERT_NEAR(ours.data[i], ref->data[i], 4e-9) << "mel_" << n_mels << " element " << i;
    }
  }
}

TEST(Ct2FolderTest, TinyEnImageEqualsTheConvertedFile) {
  const std::string dir = testdata::ModelPath("faster-whisper-tiny.en");
  const std::string ggml = testdata::ModelPath("ggml-tiny.en.bin");
  absl::StatusOr<std::vector<uint8_t>> image = Ct2FolderToGgmlImage(dir);
  ASSERT_TRUE(image.ok()) << image.status() << testdata::MissingModelHint(dir);
  absl::StatusOr<std::vector<uint8_t>> file = ReadFileBytes(ggml);
  ASSERT_TRUE(file.ok()) << file.status() << testdata::MissingModelHint(ggml);
  ASSERT_EQ(image->size(), file->size());  // 77,704,715 bytes

  absl::StatusOr<GgmlModelFile> a = ParseGgmlModelFile(*image, "image");
  absl::StatusOr<GgmlModelFile> b = ParseGgmlModelFile(*file, ggml);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_TRUE(a->hparams == b->hparams);
  EXPECT_EQ(a->vocab, b->vocab);
  ASSERT_EQ(a->tensors.size(), 167u);
  ASSERT_EQ(a->tensors.size(), b->tensors.size());
  for (size_t i = 0; i < a->tensors.size(); ++i) {
    const GgmlTensorRecord &x = a->tensors[i], &y = b->tensors[i];
    ASSERT_EQ(x.name, y.name);
    EXPECT_EQ(x.ne, y.ne) << x.name;
    EXPECT_EQ(x.type, y.type) << x.name;
    ASSERT_EQ(x.nbytes, y.nbytes) << x.name;
    EXPECT_EQ(memcmp(image->data() + x.data_offset, file->data() + y.data_offset, x.nbytes), 0) << x.name;
  }
}

// A scratch folder holding a synthetic WhisperSpec model.bin (TinyWhisperCt2: n_vocab 7 ...).
class BadFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::string(getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp") + "/ct2_folder_test";
    mkdir(dir_.c_str(), 0755);
    for (const char* f : {"model.bin", "config.json", "vocabulary.txt", "preprocessor_config.json"}) {
      unlink((dir_ + "/" + f).c_str());
    }
  }
  void Write(const std::string& name, const std::string& text) {
    FILE* f = fopen((dir_ + "/" + name).c_str(), "wb");
    ASSERT_NE(f, nullptr);
    fwrite(text.data(), 1, text.size(), f);
    fclose(f);
  }
  void WriteModel() {
    const std::vector<uint8_t> bin = TinyWhisperCt2().Build();
    Write("model.bin", std::string(bin.begin(), bin.end()));
  }
  std::string Error() {
    absl::StatusOr<std::vector<uint8_t>> r = Ct2FolderToGgmlImage(dir_);
    return r.ok() ? "ok" : Msg(r.status());
  }
  std::string dir_;
};

TEST_F(BadFolderTest, EachErrorNamesTheFileTheFieldAndTheExpectation) {
  EXPECT_THAT(Error(), HasSubstr(dir_ + "/model.bin does not exist: expected a CTranslate2 Whisper"));
  EXPECT_THAT(Msg(Ct2FolderToGgmlImage(dir_ + "/nowhere").status()), HasSubstr("no such directory"));

  Write("model.bin", std::string("\x06\0\0\0", 4));  // binary version 6, then nothing
  EXPECT_THAT(Error(), HasSubstr(dir_ + "/model.bin"));

  WriteModel();
  EXPECT_THAT(Error(), HasSubstr("no vocabulary in " + dir_));
  Write("vocabulary.txt", "a\nb\nc\n");
  EXPECT_THAT(Error(), HasSubstr(dir_ + "/vocabulary.txt: 3 tokens, expected 7 (the rows of "
                                        "decoder/embeddings/weight in model.bin)"));

  Write("config.json", "{\"lang_ids\": [1, 2,");
  EXPECT_THAT(Error(), HasSubstr(dir_ + "/config.json: not valid JSON (19 bytes), expected a JSON object"));
  Write("config.json", "[]");
  EXPECT_THAT(Error(), HasSubstr("config.json: the document is a JSON array, expected an object"));
  Write("config.json", "{\"suppress_ids\": [1, 7]}");
  EXPECT_THAT(Error(), HasSubstr("config.json: suppress_ids[1] is 7, expected a token id in 0..6"));
  Write("config.json", "{\"lang_ids\": \"en\"}");
  EXPECT_THAT(Error(), HasSubstr("config.json: lang_ids is a JSON string, expected a list of token ids"));
  Write("config.json", "{\"alignment_heads\": [[0, 0], [2, 1]]}");
  EXPECT_THAT(Error(), HasSubstr("config.json: alignment_heads[1] is [2,1], expected [layer, head] with "
                                 "layer in 0..1 and head in 0..1"));
  Write("config.json", "{\"alignment_heads\": [[1, 1]]}");
  Write("preprocessor_config.json", "{\"feature_size\": 128}");
  EXPECT_THAT(Error(), HasSubstr("preprocessor_config.json: feature_size is 128, expected 3 (n_mels"));
  Write("preprocessor_config.json", "{\"feature_size\": 3, \"sampling_rate\": 8000}");
  EXPECT_THAT(Error(), HasSubstr("sampling_rate is 8000, expected 16000"));

  // Another CTranslate2 model (a translation model's spec) in model.bin.
  Ct2FileBuilder other("TransformerSpec", 7);
  other.AddTyped<float>("encoder/layer_0/ffn/linear_0/weight", {1}, 0, {1.0f});
  const std::vector<uint8_t> bin = other.Build();
  Write("model.bin", std::string(bin.begin(), bin.end()));
  EXPECT_THAT(Error(), HasSubstr("TransformerSpec"));
}

}  // namespace
}  // namespace ggml_whisper::convert
