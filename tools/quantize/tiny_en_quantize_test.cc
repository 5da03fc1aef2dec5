// The real tiny.en model (models/ggml-tiny.en.bin, made by tools/setup.sh) quantized to q5_0 and
// q8_0 in TEST_TMPDIR and loaded with WhisperModel::Load: every tensor's type and shape, the file
// and buffer sizes computed from the tensor table, and every loaded tensor's bytes against the
// reference quantizer applied to the F16 model's tensor. Fails (does not skip) without the model.
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ggml/fp16.h"
#include "ggml/ggml.h"
#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "tools/quantize/quantize_file.h"
#include "tools/quantize/quantize_lib.h"
#include "whisper/model.h"
#include "whisper/model_file.h"

namespace ggml_whisper::quantize {
namespace {

using whisper::TensorRole;
using whisper::WhisperModel;

// Every weight tensor of `w`, by name.
std::map<std::string, const ggml_tensor*> TensorsByName(const whisper::WhisperWeights& w) {
  std::vector<const ggml_tensor*> all = {w.e_pe,    w.conv1_w, w.conv1_b, w.conv2_w,
                                         w.conv2_b, w.e_ln_w,  w.e_ln_b,  w.d_pe,
                                         w.d_te,    w.d_ln_w,  w.d_ln_b};
  auto add_attn = [&all](const whisper::AttentionWeights& a) {
    all.insert(all.end(), {a.ln_w, a.ln_b, a.q_w, a.q_b, a.k_w, a.v_w, a.v_b, a.o_w, a.o_b});
  };
  auto add_mlp = [&all](const whisper::MlpWeights& m) {
    all.insert(all.end(), {m.ln_w, m.ln_b, m.fc1_w, m.fc1_b, m.fc2_w, m.fc2_b});
  };
  for (const auto& l : w.encoder) {
    add_attn(l.attn);
    add_mlp(l.mlp);
  }
  for (const auto& l : w.decoder) {
    add_attn(l.attn);
    add_attn(l.cross);
    add_mlp(l.mlp);
  }
  std::map<std::string, const ggml_tensor*> by_name;
  for (const ggml_tensor* t : all) {
    if (t != nullptr) by_name[ggml_get_name(t)] = t;
  }
  return by_name;
}

std::vector<float> F16ToF32(const ggml_tensor* t) {
  const int64_t n = ggml_nelements(t);
  std::vector<float> f(n);
  const ggml_fp16_t* h = static_cast<const ggml_fp16_t*>(t->data);
  for (int64_t i = 0; i < n; ++i) f[i] = ggml_fp16_to_fp32(h[i]);
  return f;
}

class TinyEnQuantizeTest : public ::testing::TestWithParam<const char*> {
 protected:
  static void SetUpTestSuite() {
    const std::string path = testdata::ModelPath("ggml-tiny.en.bin");
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return;  // each test fails with the hint
    absl::StatusOr<std::unique_ptr<WhisperModel>> m = WhisperModel::Load(path);
    ASSERT_TRUE(m.ok()) << m.status();
    f16_ = m->release();
  }
  static void TearDownTestSuite() {
    delete f16_;
    f16_ = nullptr;
  }
  static WhisperModel* f16_;
};
WhisperModel* TinyEnQuantizeTest::f16_ = nullptr;

TEST_P(TinyEnQuantizeTest, QuantizesLoadsAndMatchesTheReference) {
  const std::string in = testdata::ModelPath("ggml-tiny.en.bin");
  ASSERT_NE(f16_, nullptr) << testdata::MissingModelHint(in);
  const absl::StatusOr<QuantTarget> target = ParseQuantTarget(GetParam());
  ASSERT_TRUE(target.ok()) << target.status();
  const char* tmp = getenv("TEST_TMPDIR");
  const std::string out =
      std::string(tmp != nullptr ? tmp : "/tmp") + "/ggml-tiny.en-" + target->name + ".bin";

  absl::StatusOr<QuantizeSummary> s = QuantizeModelFile(in, out, *target);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->n_quantized, 65);
  EXPECT_EQ(s->file_bytes_in, 77704715u);  // tools/get_model.sh OUT_SIZE
  EXPECT_EQ(s->tensor_bytes_in, 77110272u);

  absl::StatusOr<std::unique_ptr<WhisperModel>> loaded = WhisperModel::Load(out);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const WhisperModel& q = **loaded;
  EXPECT_EQ(q.hparams().ftype, target->ftype);
  EXPECT_EQ(q.hparams().qntvr, 2);
  EXPECT_EQ(q.n_tensors(), 167);
  EXPECT_EQ(q.mel_filters(), f16_->mel_filters());
  EXPECT_EQ(q.vocab().n_stored(), f16_->vocab().n_stored());

  const auto f16 = TensorsByName(f16_->weights());
  const auto got = TensorsByName(q.weights());
  const std::vector<whisper::TensorSpec> specs = whisper::ExpectedTensors(q.hparams());
  ASSERT_EQ(got.size(), specs.size());
  // Header, mel filters, raw vocabulary: the shared header-only file's 586,836 bytes less the 601
  // its 344 U+FFFD-replaced tokens added (//tools/convert:tiny_en_model_test).
  size_t file_bytes = 586235;
  size_t data_bytes = 0, buffer_bytes = 0;
  for (const whisper::TensorSpec& spec : specs) {
    SCOPED_TRACE(spec.name);
    ASSERT_EQ(got.count(spec.name), 1u);
    const ggml_tensor* t = got.at(spec.name);
    const ggml_tensor* src = f16.at(spec.name);
    for (int d = 0; d < 4; ++d) EXPECT_EQ(t->ne[d], spec.ne[d]);
    std::vector<uint8_t> want;
    switch (spec.role) {
      case TensorRole::kMatrix: {
        ASSERT_EQ(t->type, target->type);
        ASSERT_EQ(src->type, GGML_TYPE_F16);
        const std::vector<float> x = F16ToF32(src);
        want.resize(ggml_row_size(target->type, static_cast<int64_t>(x.size())));
        ASSERT_TRUE(
            QuantizeRowRef(target->type, x.data(), want.data(), static_cast<int64_t>(x.size()))
                .ok());
        break;
      }
      case TensorRole::kConv:
        EXPECT_EQ(t->type, GGML_TYPE_F16);
        want.assign(static_cast<uint8_t*>(src->data),
                    static_cast<uint8_t*>(src->data) + ggml_nbytes(src));
        break;
      case TensorRole::kF32:
        EXPECT_EQ(t->type, GGML_TYPE_F32);
        want.assign(static_cast<uint8_t*>(src->data),
                    static_cast<uint8_t*>(src->data) + ggml_nbytes(src));
        break;
    }
    ASSERT_EQ(ggml_nbytes(t), want.size());
    EXPECT_EQ(memcmp(t->data, want.data(), want.size()), 0);
    int n_dims = 4;
    while (n_dims > 1 && spec.ne[n_dims - 1] == 1) --n_dims;
    file_bytes += 4 * (3 + n_dims) + spec.name.size() + want.size();
    data_bytes += want.size();
    buffer_bytes += (want.size() + 63) / 64 * 64;  // GGML_BACKEND_CPU_ALIGNMENT
  }
  EXPECT_EQ(q.weights_file_bytes(), data_bytes);
  EXPECT_EQ(q.weights_buffer_size(), buffer_bytes);
  EXPECT_EQ(s->tensor_bytes_out, data_bytes);
  EXPECT_EQ(s->file_bytes_out, file_bytes);
  struct stat st;
  ASSERT_EQ(stat(out.c_str(), &st), 0);
  EXPECT_EQ(static_cast<size_t>(st.st_size), file_bytes);
}

INSTANTIATE_TEST_SUITE_P(Types, TinyEnQuantizeTest, ::testing::Values("q5_0", "q8_0"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace ggml_whisper::quantize
