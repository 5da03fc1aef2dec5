#include "tools/convert/whisper_ct2.h"

#include <string.h>

#include <map>
#include <string>
#include <vector>

#include "ggml/fp16.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/convert/whisper_ct2_test_util.h"

namespace ggml_whisper::convert {
namespace {

using ::testing::HasSubstr;

template <typename T>
std::string Msg(const absl::StatusOr<T>& s) {
  return std::string(s.status().message());
}

class WhisperCt2Test : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<Ct2Model> m = Ct2Model::Parse(tiny_.Build(), "tiny/model.bin");
    ASSERT_TRUE(m.ok()) << m.status();
    model_ = std::make_unique<Ct2Model>(std::move(*m));
  }

  // Plans with F16 weights and materializes every tensor, by name.
  void PlanAll(GgmlFileType weight_type = GgmlFileType::kF16) {
    absl::StatusOr<WhisperHparams> h = WhisperHparamsFromCt2(*model_, 1);
    ASSERT_TRUE(h.ok()) << h.status();
    absl::StatusOr<std::vector<GgmlTensorPlan>> plans =
        PlanWhisperTensors(*model_, *h, weight_type);
    ASSERT_TRUE(plans.ok()) << plans.status();
    plans_ = std::move(*plans);
    for (const GgmlTensorPlan& p : plans_) {
      absl::StatusOr<std::vector<uint8_t>> data = MaterializeTensor(p);
      ASSERT_TRUE(data.ok()) << data.status();
      data_[p.name] = std::move(*data);
      index_[p.name] = &p - plans_.data();
    }
  }

  const GgmlTensorPlan& Plan(const std::string& name) { return plans_[index_.at(name)]; }

  // Expects tensor `name` to hold `n` F16 values starting at global index `first`.
  void ExpectF16(const std::string& name, uint32_t first, size_t n) {
    ASSERT_EQ(Plan(name).type, GgmlFileType::kF16) << name;
    const std::vector<uint8_t>& d = data_.at(name);
    ASSERT_EQ(d.size(), 2 * n) << name;
    for (size_t i = 0; i < n; ++i) {
      uint16_t h;
      memcpy(&h, d.data() + 2 * i, 2);
      ASSERT_EQ(h, TinyWhisperValue(first + i)) << name << " element " << i;
    }
  }
  void ExpectF32(const std::string& name, uint32_t first, size_t n) {
    ASSERT_EQ(Plan(name).type, GgmlFileType::kF32) << name;
    const std::vector<uint8_t>& d = data_.at(name);
    ASSERT_EQ(d.size(), 4 * n) << name;
    for (size_t i = 0; i < n; ++i) {
      float f;
      memcpy(&f, d.data() + 4 * i, 4);
      ASSERT_EQ(f, (first + i) / 8.0f) << name << " element " << i;
    }
  }

  TinyWhisperCt2 tiny_;
  std::unique_ptr<Ct2Model> model_;
  std::vector<GgmlTensorPlan> plans_;
  std::map<std::string, std::vector<uint8_t>> data_;
  std::map<std::string, size_t> index_;
};

TEST_F(WhisperCt2Test, Hparams) {
  absl::StatusOr<WhisperHparams> h = WhisperHparamsFromCt2(*model_, 1);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->n_vocab, 7);
  EXPECT_EQ(h->n_audio_ctx, 5);
  EXPECT_EQ(h->n_audio_state, 4);
  EXPECT_EQ(h->n_audio_head, 2);
  EXPECT_EQ(h->n_audio_layer, 1);
  EXPECT_EQ(h->n_text_ctx, 6);
  EXPECT_EQ(h->n_text_state, 4);
  EXPECT_EQ(h->n_text_head, 2);
  EXPECT_EQ(h->n_text_layer, 2);
  EXPECT_EQ(h->n_mels, 3);
  EXPECT_EQ(h->ftype, 1);
}

TEST_F(WhisperCt2Test, TensorOrderIsPyTorchStateDictOrder) {
  PlanAll();
  // 5 stem + 15 per encoder block + 2 ln_post + 2 decoder embeddings + 24 per decoder block + 2.
  ASSERT_EQ(plans_.size(), 5u + 15 * 1 + 2 + 2 + 24 * 2 + 2);
  const std::vector<std::string> head = {
      "encoder.positional_embedding",
      "encoder.conv1.weight",
      "encoder.conv1.bias",
      "encoder.conv2.weight",
      "encoder.conv2.bias",
      "encoder.blocks.0.attn.query.weight",
      "encoder.blocks.0.attn.query.bias",
      "encoder.blocks.0.attn.key.weight",
      "encoder.blocks.0.attn.value.weight",
      "encoder.blocks.0.attn.value.bias",
      "encoder.blocks.0.attn.out.weight",
      "encoder.blocks.0.attn.out.bias",
      "encoder.blocks.0.attn_ln.weight",
      "encoder.blocks.0.attn_ln.bias",
      "encoder.blocks.0.mlp.0.weight",
      "encoder.blocks.0.mlp.0.bias",
      "encoder.blocks.0.mlp.2.weight",
      "encoder.blocks.0.mlp.2.bias",
      "encoder.blocks.0.mlp_ln.weight",
      "encoder.blocks.0.mlp_ln.bias",
      "encoder.ln_post.weight",
      "encoder.ln_post.bias",
      "decoder.positional_embedding",
      "decoder.token_embedding.weight",
      "decoder.blocks.0.attn.query.weight",
      "decoder.blocks.0.attn.query.bias",
      "decoder.blocks.0.attn.key.weight",
      "decoder.blocks.0.attn.value.weight",
      "decoder.blocks.0.attn.value.bias",
      "decoder.blocks.0.attn.out.weight",
      "decoder.blocks.0.attn.out.bias",
      "decoder.blocks.0.attn_ln.weight",
      "decoder.blocks.0.attn_ln.bias",
      "decoder.blocks.0.cross_attn.query.weight",
      "decoder.blocks.0.cross_attn.query.bias",
      "decoder.blocks.0.cross_attn.key.weight",
      "decoder.blocks.0.cross_attn.value.weight",
      "decoder.blocks.0.cross_attn.value.bias",
      "decoder.blocks.0.cross_attn.out.weight",
      "decoder.blocks.0.cross_attn.out.bias",
      "decoder.blocks.0.cross_attn_ln.weight",
      "decoder.blocks.0.cross_attn_ln.bias",
      "decoder.blocks.0.mlp.0.weight",
      "decoder.blocks.0.mlp.0.bias",
      "decoder.blocks.0.mlp.2.weight",
      "decoder.blocks.0.mlp.2.bias",
      "decoder.blocks.0.mlp_ln.weight",
      "decoder.blocks.0.mlp_ln.bias",
      "decoder.blocks.1.attn.query.weight",
  };
  for (size_t i = 0; i < head.size(); ++i) EXPECT_EQ(plans_[i].name, head[i]) << i;
  EXPECT_EQ(plans_[plans_.size() - 2].name, "decoder.ln.weight");
  EXPECT_EQ(plans_.back().name, "decoder.ln.bias");
}

TEST_F(WhisperCt2Test, ShapesAndTypes) {
  PlanAll();
  const auto ne = [&](const std::string& name) { return Plan(name).ne; };
  using V = std::vector<int64_t>;
  EXPECT_EQ(ne("encoder.positional_embedding"), V({4, 5}));
  EXPECT_EQ(ne("encoder.conv1.weight"), V({3, 3, 4}));
  EXPECT_EQ(ne("encoder.conv1.bias"), V({1, 4}));
  EXPECT_EQ(ne("encoder.conv2.weight"), V({3, 4, 4}));
  EXPECT_EQ(ne("encoder.conv2.bias"), V({1, 4}));
  EXPECT_EQ(ne("encoder.blocks.0.attn.key.weight"), V({4, 4}));
  EXPECT_EQ(ne("encoder.blocks.0.attn.value.bias"), V({4}));
  EXPECT_EQ(ne("encoder.blocks.0.mlp.0.weight"), V({4, 16}));
  EXPECT_EQ(ne("encoder.blocks.0.mlp.2.weight"), V({16, 4}));
  EXPECT_EQ(ne("decoder.positional_embedding"), V({4, 6}));
  EXPECT_EQ(ne("decoder.token_embedding.weight"), V({4, 7}));
  EXPECT_EQ(ne("decoder.blocks.1.cross_attn.value.weight"), V({4, 4}));
  for (const GgmlTensorPlan& p : plans_) {
    const bool f32 = p.ne.size() < 2 || p.name == "encoder.conv1.bias" ||
                     p.name == "encoder.conv2.bias" ||
                     p.name.find("positional_embedding") != std::string::npos;
    EXPECT_EQ(p.type, f32 ? GgmlFileType::kF32 : GgmlFileType::kF16) << p.name;
  }
}

TEST_F(WhisperCt2Test, DataComesFromTheRightRows) {
  PlanAll();
  const uint32_t d = 4;
  // Encoder self-attention: linear_0 = [Q; K; V] rows of d x d values each.
  const uint32_t w0 = tiny_.FirstIndex("encoder/layer_0/self_attention/linear_0/weight");
  const uint32_t b0 = tiny_.FirstIndex("encoder/layer_0/self_attention/linear_0/bias");
  ExpectF16("encoder.blocks.0.attn.query.weight", w0, d * d);
  ExpectF16("encoder.blocks.0.attn.key.weight", w0 + d * d, d * d);
  ExpectF16("encoder.blocks.0.attn.value.weight", w0 + 2 * d * d, d * d);
  ExpectF32("encoder.blocks.0.attn.query.bias", b0, d);
  ExpectF32("encoder.blocks.0.attn.value.bias", b0 + 2 * d, d);  // the key third is skipped
  // Cross-attention: linear_1 = [K; V].
  const uint32_t kv = tiny_.FirstIndex("decoder/layer_1/attention/linear_1/weight");
  const uint32_t kvb = tiny_.FirstIndex("decoder/layer_1/attention/linear_1/bias");
  ExpectF16("decoder.blocks.1.cross_attn.key.weight", kv, d * d);
  ExpectF16("decoder.blocks.1.cross_attn.value.weight", kv + d * d, d * d);
  ExpectF32("decoder.blocks.1.cross_attn.value.bias", kvb + d, d);
  ExpectF16("decoder.blocks.1.cross_attn.query.weight",
            tiny_.FirstIndex("decoder/layer_1/attention/linear_0/weight"), d * d);
  ExpectF16("decoder.blocks.1.cross_attn.out.weight",
            tiny_.FirstIndex("decoder/layer_1/attention/linear_2/weight"), d * d);
  // Whole tensors, widened or copied.
  ExpectF32("encoder.conv1.bias", tiny_.FirstIndex("encoder/conv1/bias"), d);
  ExpectF16("encoder.conv1.weight", tiny_.FirstIndex("encoder/conv1/weight"), d * 3 * 3);
  ExpectF32("encoder.positional_embedding",
            tiny_.FirstIndex("encoder/position_encodings/encodings"), 5 * d);
  ExpectF16("decoder.token_embedding.weight", tiny_.FirstIndex("decoder/embeddings/weight"), 7 * d);
  ExpectF32("decoder.blocks.0.cross_attn_ln.weight",
            tiny_.FirstIndex("decoder/layer_0/attention/layer_norm/gamma"), d);
  ExpectF32("decoder.blocks.0.mlp_ln.bias", tiny_.FirstIndex("decoder/layer_0/ffn/layer_norm/beta"),
            d);
  ExpectF16("decoder.blocks.0.mlp.2.weight",
            tiny_.FirstIndex("decoder/layer_0/ffn/linear_1/weight"), d * 4 * d);
  ExpectF32("encoder.ln_post.weight", tiny_.FirstIndex("encoder/layer_norm/gamma"), d);
  ExpectF32("decoder.ln.bias", tiny_.FirstIndex("decoder/layer_norm/beta"), d);
}

TEST_F(WhisperCt2Test, AllF32Mode) {
  PlanAll(GgmlFileType::kF32);
  for (const GgmlTensorPlan& p : plans_) EXPECT_EQ(p.type, GgmlFileType::kF32) << p.name;
  ExpectF32("decoder.token_embedding.weight", tiny_.FirstIndex("decoder/embeddings/weight"), 7 * 4);
}

TEST_F(WhisperCt2Test, MissingOrMisshapenVariables) {
  absl::StatusOr<Ct2Model> m =
      Ct2Model::Parse(tiny_.Build("decoder/layer_1/attention/linear_1/bias"), "tiny/model.bin");
  ASSERT_TRUE(m.ok());
  const WhisperHparams h = *WhisperHparamsFromCt2(*m, 1);
  EXPECT_THAT(Msg(PlanWhisperTensors(*m, h, GgmlFileType::kF16)),
              HasSubstr("tiny/model.bin: no variable 'decoder/layer_1/attention/linear_1/bias'"));

  WhisperHparams wrong = h;
  wrong.n_mels = 80;
  EXPECT_THAT(
      Msg(PlanWhisperTensors(*model_, wrong, GgmlFileType::kF16)),
      HasSubstr("variable 'encoder/conv1/weight' has shape [4, 3, 3], expected [4, 80, 3]"));

  absl::StatusOr<Ct2Model> no_heads =
      Ct2Model::Parse(tiny_.Build("encoder/position_encodings/encodings"), "t.bin");
  EXPECT_THAT(Msg(WhisperHparamsFromCt2(*no_heads, 1)),
              HasSubstr("t.bin: no variable 'encoder/position_encodings/encodings'"));
}

TEST_F(WhisperCt2Test, HeadsMustDivideWidth) {
  TinyWhisperDims dims;
  dims.heads = 3;
  TinyWhisperCt2 tiny(dims);
  absl::StatusOr<Ct2Model> m = Ct2Model::Parse(tiny.Build(), "t.bin");
  ASSERT_TRUE(m.ok());
  EXPECT_THAT(Msg(WhisperHparamsFromCt2(*m, 1)),
              HasSubstr("t.bin: encoder/num_heads = 3 does not divide the width 4"));
}

TEST(WhisperCt2ErrorsTest, WrongSpecAndUntiedProjection) {
  Ct2FileBuilder other("TransformerSpec", 1);
  absl::StatusOr<Ct2Model> m = Ct2Model::Parse(other.Build(), "t.bin");
  ASSERT_TRUE(m.ok());
  EXPECT_THAT(Msg(WhisperHparamsFromCt2(*m, 1)),
              HasSubstr("t.bin: spec 'TransformerSpec', expected 'WhisperSpec'"));

  // Re-serialize the tiny model with a projection that differs from the embedding.
  TinyWhisperCt2 tiny;
  absl::StatusOr<Ct2Model> base = Ct2Model::Parse(tiny.Build(), "t.bin");
  ASSERT_TRUE(base.ok());
  Ct2FileBuilder b("WhisperSpec", 3);
  for (const Ct2Variable& v : base->variables()) {
    std::vector<uint32_t> shape(v.shape.begin(), v.shape.end());
    b.Add(v.name, shape, static_cast<uint8_t>(v.dtype),
          std::vector<uint8_t>(v.data, v.data + v.nbytes));
  }
  const Ct2Variable* emb = base->Find("decoder/embeddings/weight");
  b.Add("decoder/projection/weight", {7, 4}, 4, std::vector<uint8_t>(emb->nbytes, 0));
  absl::StatusOr<Ct2Model> untied = Ct2Model::Parse(b.Build(), "t.bin");
  ASSERT_TRUE(untied.ok()) << untied.status();
  const WhisperHparams h = *WhisperHparamsFromCt2(*untied, 1);
  EXPECT_THAT(Msg(PlanWhisperTensors(*untied, h, GgmlFileType::kF16)),
              HasSubstr("decoder/projection/weight differs from decoder/embeddings/weight"));
}

// Source types other than float16: float32 rounds to F16 (nearest even), bfloat16 widens
// exactly, integer types are refused.
TEST(WhisperCt2MaterializeTest, SourceTypes) {
  Ct2FileBuilder b;
  // 1 + 2^-11 is a tie between 1 and 1 + 2^-10 (rounds to even: 1.0); 1 + 3 * 2^-11 is a tie
  // that rounds up to 1 + 2^-9; 65520 overflows to +inf.
  b.AddTyped<float>("f32", {2, 2}, 0, {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, -2.5f, 65520.0f})
      .AddTyped<uint16_t>("bf16", {2}, 5, {0x3F80, 0xC0A0})
      .AddTyped<int8_t>("i8", {2}, 1, {1, 2})
      .AddTyped<int8_t>("q", {2, 2}, 1, {127, -64, 2, -127})
      .AddTyped<float>("q_scale", {2}, 0, {127.0f / 3.0f, 0.5f})
      .AddTyped<int16_t>("i16", {2}, 2, {1, 2});
  absl::StatusOr<Ct2Model> m = Ct2Model::Parse(b.Build(), "t.bin");
  ASSERT_TRUE(m.ok()) << m.status();

  GgmlTensorPlan to_f16{"w", GgmlFileType::kF16, {2, 2}, m->Find("f32"), 0, 2};
  absl::StatusOr<std::vector<uint8_t>> h = MaterializeTensor(to_f16);
  ASSERT_TRUE(h.ok()) << h.status();
  std::vector<uint16_t> halves(4);
  memcpy(halves.data(), h->data(), 8);
  EXPECT_EQ(halves, std::vector<uint16_t>({0x3C00, 0x3C02, 0xC100, 0x7C00}));

  GgmlTensorPlan second_row{"w", GgmlFileType::kF32, {2}, m->Find("f32"), 1, 1};
  absl::StatusOr<std::vector<uint8_t>> row = MaterializeTensor(second_row);
  ASSERT_TRUE(row.ok());
  std::vector<float> floats(2);
  memcpy(floats.data(), row->data(), 8);
  EXPECT_EQ(floats, std::vector<float>({-2.5f, 65520.0f}));

  GgmlTensorPlan bf{"b", GgmlFileType::kF32, {2}, m->Find("bf16"), 0, 2};
  absl::StatusOr<std::vector<uint8_t>> bf32 = MaterializeTensor(bf);
  ASSERT_TRUE(bf32.ok());
  memcpy(floats.data(), bf32->data(), 8);
  EXPECT_EQ(floats, std::vector<float>({1.0f, -5.0f}));

  GgmlTensorPlan past_end{"w", GgmlFileType::kF32, {2}, m->Find("f32"), 1, 2};
  EXPECT_THAT(Msg(MaterializeTensor(past_end)),
              HasSubstr("tensor 'w': rows [1, 3) of 'f32' [2, 2] do not fill ne [2]"));
  GgmlTensorPlan wrong_ne{"w", GgmlFileType::kF32, {3}, m->Find("f32"), 0, 1};
  EXPECT_THAT(Msg(MaterializeTensor(wrong_ne)), HasSubstr("do not fill ne [3]"));

  // int8 rows dequantized as CTranslate2 quantized them (q = rint(w * scale)): q / scale[row].
  GgmlTensorPlan q{"q", GgmlFileType::kF32, {2, 2}, m->Find("q"), 0, 2, m->Find("q_scale")};
  absl::StatusOr<std::vector<uint8_t>> dq = MaterializeTensor(q);
  ASSERT_TRUE(dq.ok()) << dq.status();
  std::vector<float> four(4);
  memcpy(four.data(), dq->data(), 16);
  EXPECT_EQ(four, std::vector<float>({127 / (127.0f / 3.0f), -64 / (127.0f / 3.0f), 4.0f, -254.0f}));
  GgmlTensorPlan q_row1{"q", GgmlFileType::kF32, {2}, m->Find("q"), 1, 1, m->Find("q_scale")};
  absl::StatusOr<std::vector<uint8_t>> dq1 = MaterializeTensor(q_row1);
  ASSERT_TRUE(dq1.ok()) << dq1.status();
  memcpy(floats.data(), dq1->data(), 8);
  EXPECT_EQ(floats, std::vector<float>({4.0f, -254.0f}));  // row 1's scale, not row 0's

  GgmlTensorPlan no_scale{"i", GgmlFileType::kF16, {2}, m->Find("i8"), 0, 2};
  EXPECT_THAT(Msg(MaterializeTensor(no_scale)),
              HasSubstr("variable 'i8' is int8 but 'i8_scale' (its per-row scales) is missing"));
  GgmlTensorPlan bad_scale{"i", GgmlFileType::kF16, {2}, m->Find("i8"), 0, 2, m->Find("f32")};
  EXPECT_THAT(Msg(MaterializeTensor(bad_scale)),
              HasSubstr("variable 'f32' is float32 [2, 2], expected a float [2]"));
  GgmlTensorPlan i16{"i", GgmlFileType::kF16, {2}, m->Find("i16"), 0, 2};
  absl::StatusOr<std::vector<uint8_t>> refused = MaterializeTensor(i16);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(Msg(refused), HasSubstr("variable 'i16' is int16, expected float32, float16"));
}

TEST(WhisperCt2TypeRuleTest, MatchesConvertPtToGgml) {
  const GgmlFileType f16 = GgmlFileType::kF16, f32 = GgmlFileType::kF32;
  EXPECT_EQ(GgmlTypeFor("encoder.conv1.weight", 3, f16), f16);
  EXPECT_EQ(GgmlTypeFor("encoder.conv1.bias", 2, f16), f32);
  EXPECT_EQ(GgmlTypeFor("encoder.positional_embedding", 2, f16), f32);
  EXPECT_EQ(GgmlTypeFor("decoder.positional_embedding", 2, f16), f32);
  EXPECT_EQ(GgmlTypeFor("decoder.token_embedding.weight", 2, f16), f16);
  EXPECT_EQ(GgmlTypeFor("decoder.blocks.0.attn.query.bias", 1, f16), f32);
  EXPECT_EQ(GgmlTypeFor("decoder.blocks.0.attn.query.weight", 2, f32), f32);
}

}  // namespace
}  // namespace ggml_whisper::convert
