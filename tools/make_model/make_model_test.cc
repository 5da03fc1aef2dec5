#include "tools/make_model/make_model_lib.h"

#include <cstdio>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "whisper/model.h"
#include "whisper/model_file.h"
#include "whisper/synthetic_model.h"

namespace whisper {
namespace {

using ::testing::HasSubstr;

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::vector<uint8_t> bytes;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return bytes;
  uint8_t buf[1 << 16];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), f)) > 0;) bytes.insert(bytes.end(), buf, buf + n);
  std::fclose(f);
  return bytes;
}

// The tiny shape is the real tiny.en file's header but for n_vocab (51864 in the English-only
// file, 51865 in the multilingual shapes): an independent check of the shape table's layout.
TEST(MakeModelTest, TinyShapeMatchesTheRealTinyEnHeader) {
  const std::string path = testdata::ModelPath("ggml-tiny.en.bin");
  const std::vector<uint8_t> file = ReadFile(path);
  ASSERT_FALSE(file.empty()) << testdata::MissingModelHint(path);
  absl::StatusOr<ModelFileHeader> real = ParseModelFileHeader(file.data(), file.size(), path);
  ASSERT_TRUE(real.ok()) << real.status();
  absl::StatusOr<WhisperHparams> tiny = ShapeHparams("tiny");
  ASSERT_TRUE(tiny.ok()) << tiny.status();
  const WhisperHparams& r = real->hparams;
  EXPECT_EQ(r.n_vocab, 51864);
  EXPECT_EQ(tiny->n_vocab, 51865);
  EXPECT_EQ(tiny->n_audio_ctx, r.n_audio_ctx);
  EXPECT_EQ(tiny->n_audio_state, r.n_audio_state);
  EXPECT_EQ(tiny->n_audio_head, r.n_audio_head);
  EXPECT_EQ(tiny->n_audio_layer, r.n_audio_layer);
  EXPECT_EQ(tiny->n_text_ctx, r.n_text_ctx);
  EXPECT_EQ(tiny->n_text_state, r.n_text_state);
  EXPECT_EQ(tiny->n_text_head, r.n_text_head);
  EXPECT_EQ(tiny->n_text_layer, r.n_text_layer);
  EXPECT_EQ(tiny->n_mels, r.n_mels);
  EXPECT_EQ(tiny->ftype, r.ftype);
}

// The published dims of the larger checkpoints (state, heads, layers).
TEST(MakeModelTest, LargerShapes) {
  const struct {
    const char* name;
    int state, heads, layers;
  } kWant[] = {{"base", 512, 8, 6}, {"small", 768, 12, 12}, {"medium", 1024, 16, 24}, {"large", 1280, 20, 32}};
  for (const auto& w : kWant) {
    absl::StatusOr<WhisperHparams> h = ShapeHparams(w.name);
    ASSERT_TRUE(h.ok()) << w.name;
    EXPECT_EQ(h->n_audio_state, w.state) << w.name;
    EXPECT_EQ(h->n_text_state, w.state) << w.name;
    EXPECT_EQ(h->n_audio_head, w.heads) << w.name;
    EXPECT_EQ(h->n_text_head, w.heads) << w.name;
    EXPECT_EQ(h->n_audio_layer, w.layers) << w.name;
    EXPECT_EQ(h->n_text_layer, w.layers) << w.name;
  }
}

// A written base-shape Q8_0 file loads: hparams, ftype with whisper.cpp's quantization version,
// the weight types, and 7 + 15 * 6 + 4 + 24 * 6 = 245 tensors.
TEST(MakeModelTest, WrittenFileLoads) {
  absl::StatusOr<SyntheticModelOptions> o = ShapeModelOptions("base", "Q8_0", 7);
  ASSERT_TRUE(o.ok()) << o.status();
  const SyntheticModel m = MakeSyntheticModel(*o);
  const std::string path = WriteTempFile("random-base-q8_0.bin", m.bytes);
  absl::StatusOr<std::unique_ptr<WhisperModel>> model = WhisperModel::Load(path);
  ASSERT_TRUE(model.ok()) << model.status();
  const WhisperModel& w = **model;
  EXPECT_STREQ(w.type_name(), "base");
  EXPECT_EQ(w.hparams().n_audio_state, 512);
  EXPECT_EQ(w.hparams().ftype, 7);
  EXPECT_EQ(w.hparams().qntvr, 2);
  EXPECT_EQ(w.n_tensors(), 245);
  EXPECT_EQ(w.weights().encoder[0].mlp.fc1_w->type, GGML_TYPE_Q8_0);
  EXPECT_EQ(w.weights().conv1_w->type, GGML_TYPE_F16);
  EXPECT_EQ(w.weights().d_te->ne[1], 51865);
}

TEST(MakeModelTest, UnknownShapeOrType) {
  EXPECT_THAT(std::string(ShapeHparams("huge").status().message()), HasSubstr("unknown model shape 'huge'"));
  EXPECT_THAT(std::string(ShapeModelOptions("tiny", "q6_k", 1).status().message()),
              HasSubstr("unknown weight type 'q6_k'"));
  EXPECT_FALSE(ShapeModelOptions("tiny", "f16", 1)->hparams.qntvr != 0);
}

}  // namespace
}  // namespace whisper
