#include "whisper/model.h"

#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/quant_ref.h"
#include "testdata/paths.h"
#include "whisper/synthetic_model.h"

namespace whisper {
namespace {

using ::testing::HasSubstr;

// Every weight tensor holds exactly the bytes of its record, in one buffer.
TEST(ModelTest, WeightsAreTheFileBytes) {
  SyntheticModelOptions o;
  o.matrix_type = GGML_TYPE_Q5_1;
  const SyntheticModel m = MakeSyntheticModel(o);
  const std::string path = WriteTempFile("model_test.bin", m.bytes);
  absl::StatusOr<std::unique_ptr<WhisperModel>> model = WhisperModel::Load(path);
  ASSERT_TRUE(model.ok()) << model.status();
  const WhisperModel& w = **model;
  EXPECT_EQ(w.n_tensors(), 50);
  EXPECT_EQ(w.hparams().n_audio_state, 32);
  EXPECT_EQ(w.vocab().n_vocab(), 51864);
  EXPECT_EQ(w.vocab().token(3), "tok3");
  EXPECT_EQ(w.mel_filters().size(), 80u * 201u);

  size_t total = 0;
  const std::vector<TensorSpec> specs = ExpectedTensors(w.hparams());
  const WhisperWeights& wt = w.weights();
  // Spot-check named fields against the table, then compare every record's bytes.
  EXPECT_EQ(wt.conv1_w->ne[1], 80);
  EXPECT_EQ(wt.conv1_w->type, GGML_TYPE_F16);
  EXPECT_EQ(wt.d_te->type, GGML_TYPE_Q5_1);
  EXPECT_EQ(wt.d_te->ne[1], 51864);
  EXPECT_EQ(wt.encoder[0].mlp.fc1_w->ne[1], 128);
  EXPECT_EQ(wt.decoder[0].cross.k_w->type, GGML_TYPE_Q5_1);
  EXPECT_EQ(wt.decoder[0].cross.ln_b->ne[0], 32);
  char* base = nullptr;
  for (const FieldMark& f : m.fields) {
    const std::string suffix = "' data";
    if (f.name.size() < suffix.size() || f.name.compare(f.name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    const std::string name = f.name.substr(8, f.name.size() - 8 - suffix.size());  // "tensor '<name>' data"
    const ggml_tensor* t = nullptr;
    for (const ggml_tensor* c :
         {wt.e_pe, wt.conv1_w, wt.conv1_b, wt.conv2_w, wt.conv2_b, wt.e_ln_w, wt.e_ln_b, wt.d_pe,
          wt.d_te, wt.d_ln_w, wt.d_ln_b, wt.encoder[0].attn.q_w, wt.encoder[0].mlp.fc2_b,
          wt.decoder[0].attn.o_b, wt.decoder[0].cross.v_w, wt.decoder[0].mlp.ln_w}) {
      if (name == ggml_get_name(c)) t = c;
    }
    if (t == nullptr) continue;
    EXPECT_EQ(0, memcmp(t->data, m.bytes.data() + f.offset, ggml_nbytes(t))) << name;
    total += ggml_nbytes(t);
    if (base == nullptr || static_cast<char*>(t->data) < base) base = static_cast<char*>(t->data);
  }
  EXPECT_GT(total, 0u);
  // All tensors lie in one buffer of weights_buffer_size bytes.
  size_t file_bytes = 0;
  for (const TensorSpec& s : specs) {
    const ggml_type type = s.role == TensorRole::kF32      ? GGML_TYPE_F32
                           : s.role == TensorRole::kConv ? GGML_TYPE_F16
                                                           : GGML_TYPE_Q5_1;
    file_bytes += ggml_row_size(type, s.ne[0]) * s.ne[1] * s.ne[2];
  }
  EXPECT_EQ(w.weights_file_bytes(), file_bytes);
  EXPECT_GE(w.weights_buffer_size(), file_bytes);
  EXPECT_LT(w.weights_buffer_size(), file_bytes + 64 * specs.size());
  for (const ggml_tensor* t : {wt.e_pe, wt.d_te, wt.decoder[0].mlp.fc2_b}) {
    EXPECT_GE(static_cast<const char*>(t->data), base);
    EXPECT_LE(static_cast<const char*>(t->data) + ggml_nbytes(t), base + w.weights_buffer_size());
    EXPECT_EQ(t->buffer, wt.conv1_w->buffer);
  }
}

// A weight type at load converts only the matrices //tools/quantize selects whose ne0 is whole
// blocks: with a width of 48 (not a multiple of 32) only the two fc2 matrices ([192, 48], ne0 192)
// become Q8_0; the rest keep their types. The arena is the sum of the tensors' sizes in their
// memory types, each padded to 64 bytes (GGML_BACKEND_CPU_ALIGNMENT).
TEST(ModelTest, WeightTypeConvertsWholeBlockMatricesOnly) {
  SyntheticModelOptions o;
  o.hparams.n_audio_state = o.hparams.n_text_state = 48;
  const SyntheticModel m = MakeSyntheticModel(o);
  absl::StatusOr<std::unique_ptr<WhisperModel>> model =
      WhisperModel::LoadFromBuffer(m.bytes.data(), m.bytes.size(), "w48.bin", GGML_TYPE_Q8_0);
  ASSERT_TRUE(model.ok()) << model.status();
  const WhisperModel& w = **model;
  EXPECT_EQ(w.n_converted(), 2);
  const WhisperWeights& wt = w.weights();
  EXPECT_EQ(wt.encoder[0].mlp.fc2_w->type, GGML_TYPE_Q8_0);
  EXPECT_EQ(wt.decoder[0].mlp.fc2_w->type, GGML_TYPE_Q8_0);
  EXPECT_EQ(wt.encoder[0].mlp.fc1_w->type, GGML_TYPE_F16);
  EXPECT_EQ(wt.d_te->type, GGML_TYPE_F16);
  EXPECT_EQ(wt.e_pe->type, GGML_TYPE_F32);
  size_t arena = 0;
  for (const TensorSpec& s : ExpectedTensors(w.hparams())) {
    const ggml_tensor* t = w.tensor(s.name);
    ASSERT_NE(t, nullptr) << s.name;
    const bool q8 = s.name == "encoder.blocks.0.mlp.2.weight" || s.name == "decoder.blocks.0.mlp.2.weight";
    // Q8_0: 34 bytes per 32 elements; F16 2 bytes; F32 4 bytes.
    const size_t bytes = q8 ? static_cast<size_t>(s.ne[0] / 32 * 34 * s.ne[1])
                            : ggml_nelements(t) * (t->type == GGML_TYPE_F32 ? 4 : 2);
    EXPECT_EQ(ggml_nbytes(t), bytes) << s.name;
    arena += (bytes + 63) / 64 * 64;
  }
  EXPECT_EQ(w.weights_buffer_size(), arena);
}

// Q5_1 matrices loaded as F32 are dequantized: q * d + m per element (kernels/quant_ref.h, the
// same as ggml's dequantize_row_q5_1), read back from the file's blocks.
TEST(ModelTest, QuantizedMatricesDequantizeToF32) {
  SyntheticModelOptions o;
  o.matrix_type = GGML_TYPE_Q5_1;
  const SyntheticModel m = MakeSyntheticModel(o);
  const std::string path = WriteTempFile("model_q51.bin", m.bytes);
  absl::StatusOr<std::unique_ptr<WhisperModel>> q = WhisperModel::Load(path);
  absl::StatusOr<std::unique_ptr<WhisperModel>> f = WhisperModel::Load(path, GGML_TYPE_F32);
  ASSERT_TRUE(q.ok() && f.ok()) << q.status() << f.status();
  const ggml_tensor* tq = (*q)->weights().decoder[0].cross.k_w;
  const ggml_tensor* tf = (*f)->weights().decoder[0].cross.k_w;
  ASSERT_EQ(tf->type, GGML_TYPE_F32);
  std::vector<float> want(ggml_nelements(tq));
  ggml_cpu::dequantize_row_q5_1(static_cast<const ggml_cpu::block_q5_1*>(tq->data), want.data(),
                                static_cast<int64_t>(want.size()));
  EXPECT_EQ(memcmp(tf->data, want.data(), want.size() * sizeof(float)), 0);
  EXPECT_EQ((*q)->n_converted(), 0);
  EXPECT_EQ((*f)->n_converted(), 17);  // 6 encoder and 10 decoder matrices, the token embedding
}

TEST(ModelTest, WeightTypeMustBeOneTheKernelsMultiply) {
  const SyntheticModel m = MakeSyntheticModel({});
  // (A value outside the enum comes only through whisper.h's int field: compute_type_test.)
  for (ggml_type t : {GGML_TYPE_Q8_1, GGML_TYPE_I8}) {
    absl::StatusOr<std::unique_ptr<WhisperModel>> model =
        WhisperModel::LoadFromBuffer(m.bytes.data(), m.bytes.size(), "m.bin", t);
    ASSERT_FALSE(model.ok());
    EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(model.status().message(), HasSubstr("is not a type the matrix kernels multiply"));
    EXPECT_THAT(model.status().message(), HasSubstr("q8_0 (8)"));
  }
}

TEST(ModelTest, HeaderOnlyFileIsRejected) {
  const std::string path = testdata::SharedData("header-only-ggml-tiny.en.bin");
  absl::StatusOr<std::unique_ptr<WhisperModel>> m = WhisperModel::Load(path);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr(path));
  EXPECT_THAT(m.status().message(),
              HasSubstr("no tensors: file has header, mel filters and vocabulary only"));
}

TEST(ModelTest, FileErrors) {
  absl::Status s = WhisperModel::Load("/nonexistent/model.bin").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("/nonexistent/model.bin: cannot open model file"));

  const std::string empty = WriteTempFile("empty.bin", {});
  s = WhisperModel::Load(empty).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("empty.bin: empty file (0 bytes), expected a whisper.cpp ggml Whisper model"));

  const char* tmp = getenv("TEST_TMPDIR");
  s = WhisperModel::Load(tmp != nullptr ? tmp : "/tmp").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("not a regular file"));

  // Truncated in the middle of the last tensor's data.
  const SyntheticModel m = MakeSyntheticModel({});
  std::vector<uint8_t> cut(m.bytes.begin(), m.bytes.end() - 5);
  s = WhisperModel::Load(WriteTempFile("cut.bin", cut)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("data: 128 bytes needed, 123 left"));
}

}  // namespace
}  // namespace whisper
