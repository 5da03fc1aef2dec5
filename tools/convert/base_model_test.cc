// Checks models/ggml-base.bin (tools/get_model.sh base: Whisper base, multilingual), when it is
// present; skipped, naming that command, when it is not:
//   - hparams of Whisper base (OpenAI's ModelDimensions for "base") and 245 tensor records
//     (15 + 24 per encoder block x 6 + 2 + ... : the same table as tiny.en, with 6 + 6 blocks);
//   - mel filters byte-identical to whisper.cpp's header-only multilingual tiny file (shared
//     test data), whose vocabulary is base's too; tokens identical except the 1,476 that hold
//     part of a UTF-8 character, stored raw here and U+FFFD-replaced there
//     (legacy_header_test_util.h; 1,480 tokens of that file hold U+FFFD, 4 of them genuinely);
//   - the raw bytes of tokens that make up CJK characters in base's transcript of the AISHELL
//     clip, hand-derived from GPT-2's byte alphabet (gpt2_vocab.h).
#include <string.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "tools/convert/file_util.h"
#include "tools/convert/ggml_file.h"
#include "tools/convert/legacy_header_test_util.h"

namespace ggml_whisper::convert {
namespace {

constexpr uint64_t kFileBytes = 147951465;  // tools/get_model.sh base OUT_SIZE

class BaseModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string path = testdata::ModelPath("ggml-base.bin");
    absl::StatusOr<std::vector<uint8_t>> image = ReadFileBytes(path);
    if (!image.ok()) {
      GTEST_SKIP() << path << " is absent: run `tools/get_model.sh base` (tools/test.sh does) ("
                   << image.status() << ")";
    }
    image_ = std::move(*image);
    absl::StatusOr<GgmlModelFile> file = ParseGgmlModelFile(image_, path);
    ASSERT_TRUE(file.ok()) << file.status();
    file_ = std::move(*file);
  }
  std::vector<uint8_t> image_;
  GgmlModelFile file_;
};

TEST_F(BaseModelTest, HparamsAndTensors) {
  const WhisperHparams& h = file_.hparams;
  EXPECT_EQ(h.n_vocab, 51865);
  EXPECT_EQ(h.n_audio_ctx, 1500);
  EXPECT_EQ(h.n_audio_state, 512);
  EXPECT_EQ(h.n_audio_head, 8);
  EXPECT_EQ(h.n_audio_layer, 6);
  EXPECT_EQ(h.n_text_ctx, 448);
  EXPECT_EQ(h.n_text_state, 512);
  EXPECT_EQ(h.n_text_head, 8);
  EXPECT_EQ(h.n_text_layer, 6);
  EXPECT_EQ(h.n_mels, 80);
  EXPECT_EQ(h.ftype, 1);
  // 7 encoder/decoder-level tensors + 4 decoder-level + 15 per encoder block + 24 per decoder
  // block (tiny.en: 11 + 4 x 39 = 167).
  EXPECT_EQ(file_.tensors.size(), 11u + 6 * 15 + 6 * 24);
  EXPECT_EQ(image_.size(), kFileBytes);
}

TEST_F(BaseModelTest, HeaderMatchesWhisperCppTinyExceptReplacedTokens) {
  const std::string path = testdata::SharedData("header-only-ggml-tiny.bin");
  absl::StatusOr<std::vector<uint8_t>> header = ReadFileBytes(path);
  ASSERT_TRUE(header.ok()) << header.status();
  ASSERT_EQ(header->size(), 575451u);
  absl::StatusOr<GgmlModelFile> legacy = ParseGgmlModelFile(*header, path);
  ASSERT_TRUE(legacy.ok()) << legacy.status();
  EXPECT_EQ(legacy->hparams.n_vocab, 51865);
  // Mel filters and the token count, byte for byte (the hparams differ: tiny is smaller).
  const size_t mel_at = 4 + 11 * 4;
  const size_t vocab_at = VocabularyOffset(file_) + 4;
  ASSERT_EQ(VocabularyOffset(*legacy) + 4, vocab_at);
  EXPECT_EQ(memcmp(image_.data() + mel_at, header->data() + mel_at, vocab_at - mel_at), 0);
  // Counted with Python from models/faster-whisper-base/vocabulary.json.
  const LegacyVocabDiff d = CompareWithLegacyVocab(file_.vocab, legacy->vocab);
  EXPECT_EQ(d.n_tokens, 50257);
  EXPECT_EQ(d.n_replaced, 1476);
  EXPECT_EQ(d.n_old_with_fffd, 1480);
}

// Hand-derived from GPT-2's bytes_to_unicode: vocabulary.json's "çļ" (id 1514) is E7 9A ('ç' is
// the printable byte E7; 'ļ' U+013C is non-printable byte #60, 9A) and "Ħ" (id 226) is 84 ('Ħ'
// U+0126 is #38): together U+7684 '的', which is also the whole token "çļĦ" (id 1546). Base's
// greedy transcript of the AISHELL clip spells 几 as ids 6336 + 254 ("åĩ" E5 87 + "ł" A0) and 乎
// as 2930 + 236 ("ä¹" E4 B9 + "İ" 8E) (testdata/reference/base_faster_whisper.json).
TEST_F(BaseModelTest, PartialCharacterTokensAreRaw) {
  ASSERT_EQ(file_.vocab.size(), 50257u);
  EXPECT_EQ(file_.vocab[1514], "\xE7\x9A");
  EXPECT_EQ(file_.vocab[226], "\x84");
  EXPECT_EQ(file_.vocab[1546], "\xE7\x9A\x84");
  EXPECT_EQ(file_.vocab[1514] + file_.vocab[226], u8"\u7684");
  EXPECT_EQ(file_.vocab[6336] + file_.vocab[254], u8"\u51E0");
  EXPECT_EQ(file_.vocab[2930] + file_.vocab[236], u8"\u4E4E");
}

}  // namespace
}  // namespace ggml_whisper::convert
