#include "tools/make_model/make_model_lib.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "tools/convert/gpt2_vocab.h"
#include "whisper/model.h"
#include "whisper/model_file.h"
#include "whisper/synthetic_model.h"
#include "whisper/vocab.h"

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
    EXPECT_EQ(h->n_mels, 80) << w.name;  // whisper.cpp's for-tests-ggml-{base,...,large}.bin
    EXPECT_EQ(h->n_vocab, 51865) << w.name;
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

// The bytes of the header as whisper.cpp's loader reads them (src/whisper.cpp L1495-1620): magic,
// 11 int32 hparams, n_mel, n_fft, the filters, the token count, then per token a uint32 length and
// its bytes.
struct HeaderWords {
  std::vector<int32_t> words;  // magic, hparams, n_mel, n_fft
  std::vector<float> filters;
  int32_t n_tokens = 0;
  size_t size = 0;
};

HeaderWords ReadHeaderWords(const std::vector<uint8_t>& b, int n_mels) {
  HeaderWords h;
  h.words.resize(14);
  std::memcpy(h.words.data(), b.data(), 14 * 4);
  h.filters.resize(static_cast<size_t>(n_mels) * 201);
  std::memcpy(h.filters.data(), b.data() + 56, h.filters.size() * 4);
  std::memcpy(&h.n_tokens, b.data() + 56 + h.filters.size() * 4, 4);
  h.size = b.size();
  return h;
}

std::vector<float> MelFilters128() {
  const std::string npz = testdata::ModelPath("mel_filters.npz");
  absl::StatusOr<std::vector<float>> f = ShapeMelFilters(npz, 128);
  EXPECT_TRUE(f.ok()) << f.status() << "\n" << testdata::MissingModelHint(npz);
  return f.ok() ? *f : std::vector<float>();
}

// Element [0][1] of a Slaney-normalized librosa filterbank (OpenAI's mel_filters.npz, and
// faster-whisper's get_mel_filters) over 0..8000 Hz: the n_mels + 2 band edges lie
// d = (200 / 3) * 45.245640471924965 / (n_mels + 1) Hz apart below 1 kHz (the linear part of
// the Slaney scale; 45.2456... is 8000 Hz in Slaney mels), FFT bin 1 is 40 Hz, so the first
// triangle's falling edge there is (2d - 40) / d, times the area normalization 2 / (2d).
double FirstFilterAtBin1(int n_mels) {
  const double d = (200.0 / 3.0) * 45.245640471924965 / (n_mels + 1);
  return (2 * d - 40.0) / d * (2.0 / (2 * d));
}

// large-v3 and large-v3-turbo headers against values derived by hand: the dims of OpenAI's
// checkpoints (whisper.cpp's for-tests-ggml-large.bin has the same but n_vocab 51865 and n_mels
// 80), 128 mel rows, the 256 single-byte tokens, and the file's length:
// 4 + 44 + 8 + 128 * 201 * 4 + 4 + 256 * (4 + 1).
TEST(MakeModelTest, LargeV3HeadersByHand) {
  const std::vector<float> filters = MelFilters128();
  ASSERT_EQ(filters.size(), 128u * 201u);
  EXPECT_NEAR(filters[1], FirstFilterAtBin1(128), 1e-8);  // 0.01237399
  EXPECT_EQ(filters[0], 0.0f);
  EXPECT_EQ(filters[2], 0.0f);
  for (const auto& [shape, text_layers] : {std::pair<const char*, int32_t>{"large-v3", 32}, {"large-v3-turbo", 4}}) {
    absl::StatusOr<SyntheticModelOptions> o = ShapeModelOptions(shape, "q8_0", 1, filters);
    ASSERT_TRUE(o.ok()) << o.status();
    o->write_tensors = false;
    const SyntheticModel m = MakeSyntheticModel(*o);
    ASSERT_EQ(m.bytes.size(), 4u + 44 + 8 + 128 * 201 * 4 + 4 + 256 * 5) << shape;
    const HeaderWords h = ReadHeaderWords(m.bytes, 128);
    const std::vector<int32_t> want = {0x67676d6c, 51866, 1500, 1280, 20, 32, 448, 1280, 20, text_layers, 128,
                                       2007 /* 2 * 1000 + GGML_FTYPE_MOSTLY_Q8_0 */, 128, 201};
    EXPECT_EQ(h.words, want) << shape;
    EXPECT_EQ(h.filters, filters) << shape;
    EXPECT_EQ(h.n_tokens, 256) << shape;

    // Our loader's header stage accepts it, and the vocabulary it builds has whisper.cpp's
    // large-v3 special ids (num_languages = 51866 - 51765 - 1 = 100: <|yue|> is 50258 + 1 + 99).
    absl::StatusOr<ModelFileHeader> parsed = ParseModelFileHeader(m.bytes.data(), m.bytes.size(), shape);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->hparams.n_text_layer, text_layers);
    EXPECT_EQ(parsed->hparams.ftype, 7);
    EXPECT_EQ(parsed->hparams.qntvr, 2);
    const WhisperVocab vocab(parsed->tokens, parsed->hparams.n_vocab);
    EXPECT_EQ(vocab.special().eot, 50257);
    EXPECT_EQ(vocab.special().sot, 50258);
    EXPECT_EQ(vocab.token(50358), "[_LANG_yue]");
    EXPECT_EQ(vocab.special().translate, 50359);
    EXPECT_EQ(vocab.special().beg, 50365);
    EXPECT_EQ(vocab.token(51865), "[_TT_1500]");  // the last timestamp, 30.00 s
    EXPECT_EQ(vocab.token(220), " ");              // whisper-cli's suppress_blank needs it
    EXPECT_EQ(vocab.id(" "), 220);
    EXPECT_EQ(vocab.token(256), "[_extra_token_256]");
    // 7 + 15 per encoder layer + 4 + 24 per decoder layer; conv1 takes 128 channels.
    const std::vector<TensorSpec> tensors = ExpectedTensors(parsed->hparams);
    EXPECT_EQ(tensors.size(), 11u + 15 * 32 + 24 * text_layers) << shape;
    EXPECT_EQ(tensors[1].name, "encoder.conv1.weight");
    EXPECT_EQ(tensors[1].ne[1], 128);
  }
}

// The stored tokens are ids 0..255 of the real tokenizer: the first 256 entries of the
// CTranslate2 tiny.en vocabulary (GPT-2's; multilingual.tiktoken starts with the same 256), as
// the converter turns them into raw bytes.
TEST(MakeModelTest, ByteTokensAreTheTokenizersFirst256) {
  const std::string dir = testdata::ModelPath("faster-whisper-tiny.en");
  absl::StatusOr<std::vector<std::string>> ct2 = ggml_whisper::convert::ReadCt2Vocabulary(dir);
  ASSERT_TRUE(ct2.ok()) << ct2.status() << "\n" << testdata::MissingModelHint(dir);
  ASSERT_GE(ct2->size(), 256u);
  const std::vector<std::string> ours = Gpt2ByteTokens();
  ASSERT_EQ(ours.size(), 256u);
  for (int i = 0; i < 256; ++i) {
    absl::StatusOr<std::string> bytes = ggml_whisper::convert::Gpt2TokenToBytes((*ct2)[i]);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    EXPECT_EQ(ours[i], *bytes) << "id " << i;
  }
  EXPECT_EQ(ours[0], "!");
  EXPECT_EQ(ours[188], std::string(1, '\0'));
  EXPECT_EQ(ours[220], " ");
}

// The 80-bin shapes take mel_80: its first filter at bin 1 by the same derivation.
TEST(MakeModelTest, MelFilters80) {
  absl::StatusOr<std::vector<float>> f = ShapeMelFilters(testdata::ModelPath("mel_filters.npz"), 80);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->size(), 80u * 201u);
  EXPECT_NEAR((*f)[1], FirstFilterAtBin1(80), 1e-8);  // 0.02486
  EXPECT_THAT(std::string(ShapeMelFilters(testdata::ModelPath("mel_filters.npz"), 64).status().message()),
              HasSubstr("mel_filters.npz: no member 'mel_64.npy'"));
  EXPECT_THAT(std::string(ShapeModelOptions("large-v3", "f16", 1, *f).status().message()),
              HasSubstr("mel filters: 16080 values, expected 128 x 201 for shape 'large-v3'"));
}

// The loader on a whole file with large-v3's n_mels and n_vocab (small widths and one layer
// each, so that it stays a unit test: the real shapes are 0.5-3 GB and are loaded by
// //tools:bench, tools/bench/README.md).
TEST(MakeModelTest, LoaderTakes128MelsAnd51866Tokens) {
  SyntheticModelOptions o;
  o.hparams.n_vocab = 51866;
  o.hparams.n_mels = 128;
  o.mel_filters = MelFilters128();
  const SyntheticModel m = MakeSyntheticModel(o);
  absl::StatusOr<std::unique_ptr<WhisperModel>> model =
      WhisperModel::Load(WriteTempFile("mel128-vocab51866.bin", m.bytes));
  ASSERT_TRUE(model.ok()) << model.status();
  const WhisperModel& w = **model;
  EXPECT_EQ(w.hparams().n_mels, 128);
  EXPECT_EQ(w.weights().conv1_w->ne[1], 128);
  EXPECT_EQ(w.weights().d_te->ne[1], 51866);
  EXPECT_EQ(w.vocab().special().num_languages, 100);
  EXPECT_EQ(w.vocab().special().beg, 50365);
}

TEST(MakeModelTest, UnknownShapeOrType) {
  EXPECT_THAT(std::string(ShapeHparams("huge").status().message()), HasSubstr("unknown model shape 'huge' (expected one of tiny, base, small, medium, large, "
                        "large-v3, large-v3-turbo)"));
  EXPECT_THAT(std::string(ShapeModelOptions("tiny", "q6_k", 1).status().message()),
              HasSubstr("unknown weight type 'q6_k'"));
  EXPECT_FALSE(ShapeModelOptions("tiny", "f16", 1)->hparams.qntvr != 0);
}

}  // namespace
}  // namespace whisper
