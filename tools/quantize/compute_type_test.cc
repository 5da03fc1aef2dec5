// compute_type at load (whisper_context_params.ggml_convert_weights / ggml_weight_type) against
// the offline quantizer, on the real tiny.en F16 model (models/ggml-tiny.en.bin, tools/setup.sh):
//   - the model loaded with weight type Q8_0 holds, tensor by tensor, the bytes (type, shape,
//     data) of the file QuantizeModelFile -- the code of `bazel run //tools/quantize -- IN OUT
//     q8_0` -- writes from the same F16 file (tiny_en_quantize_test checks that file against the
//     reference quantizer, quantize_lib_test against whisper.cpp's quantizer's output);
//   - a greedy transcription of jfk.wav through the C API with whisper_ggml_set_compute_type
//     "int8" gives, token for token, the transcription of that q8_0 file;
//   - whisper_ggml_set_int8_attention switches the encoder's attention of that model;
//   - bad weight types are refused with a message naming the value.
// Fails (does not skip) without the model or jfk.wav.
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "apps/common/audio.h"
#include "ggml/ggml.h"
#include "gtest/gtest.h"
#include "kernels/quant_gemm.h"
#include "testdata/paths.h"
#include "tools/quantize/quantize_file.h"
#include "tools/quantize/quantize_lib.h"
#include "whisper/model.h"
#include "whisper/model_file.h"
#include "whisper/whisper.h"

namespace ggml_whisper::quantize {
namespace {

using ::testdata::TmpPath;

using whisper::WhisperModel;

// The q8_0 file quantized offline from the F16 model, once for the suite.
class ComputeTypeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    f16_path_ = new std::string(testdata::ModelPath("ggml-tiny.en.bin"));
    q8_path_ = new std::string(TmpPath("ggml-tiny.en-q8_0.bin"));
    struct stat st;
    if (stat(f16_path_->c_str(), &st) != 0) return;  // each test fails with the hint
    absl::StatusOr<QuantTarget> target = ParseQuantTarget("q8_0");
    ASSERT_TRUE(target.ok()) << target.status();
    absl::StatusOr<QuantizeSummary> s = QuantizeModelFile(*f16_path_, *q8_path_, *target);
    ASSERT_TRUE(s.ok()) << s.status();
    n_quantized_ = s->n_quantized;
  }
  static void TearDownTestSuite() {
    delete f16_path_;
    delete q8_path_;
  }
  void SetUp() override { ASSERT_GT(n_quantized_, 0) << testdata::MissingModelHint(*f16_path_); }

  static std::string* f16_path_;
  static std::string* q8_path_;
  static int n_quantized_;
};
std::string* ComputeTypeTest::f16_path_ = nullptr;
std::string* ComputeTypeTest::q8_path_ = nullptr;
int ComputeTypeTest::n_quantized_ = 0;

TEST_F(ComputeTypeTest, Q8_0AtLoadEqualsTheOfflineFileByteForByte) {
  absl::StatusOr<std::unique_ptr<WhisperModel>> converted = WhisperModel::Load(*f16_path_, GGML_TYPE_Q8_0);
  ASSERT_TRUE(converted.ok()) << converted.status();
  absl::StatusOr<std::unique_ptr<WhisperModel>> offline = WhisperModel::Load(*q8_path_);
  ASSERT_TRUE(offline.ok()) << offline.status();
  const WhisperModel& a = **converted;
  const WhisperModel& b = **offline;
  EXPECT_EQ(n_quantized_, 65);  // 4 + 4 layers: 24 encoder, 40 decoder matrices, token embedding
  EXPECT_EQ(a.n_converted(), n_quantized_);
  EXPECT_EQ(b.n_converted(), 0);
  EXPECT_EQ(a.weights_buffer_size(), b.weights_buffer_size());
  EXPECT_EQ(a.weights_file_bytes(), 77110272u);  // read from the F16 file

  const std::vector<whisper::TensorSpec> specs = whisper::ExpectedTensors(a.hparams());
  ASSERT_EQ(specs.size(), 167u);
  int n_q8 = 0;
  for (const whisper::TensorSpec& spec : specs) {
    SCOPED_TRACE(spec.name);
    const ggml_tensor* ta = a.tensor(spec.name);
    const ggml_tensor* tb = b.tensor(spec.name);
    ASSERT_NE(ta, nullptr);
    ASSERT_NE(tb, nullptr);
    EXPECT_EQ(ta->type, tb->type);
    for (int d = 0; d < 4; ++d) EXPECT_EQ(ta->ne[d], tb->ne[d]);
    ASSERT_EQ(ggml_nbytes(ta), ggml_nbytes(tb));
    EXPECT_EQ(memcmp(ta->data, tb->data, ggml_nbytes(ta)), 0);
    n_q8 += ta->type == GGML_TYPE_Q8_0 ? 1 : 0;
  }
  EXPECT_EQ(n_q8, 65);
}

// Greedy tokens of jfk.wav (whisper.cpp's rules, the C API's default), two threads.
std::vector<whisper_token> Transcribe(whisper_context* ctx, const std::vector<float>& pcm) {
  whisper_full_params p = whisper_full_default_params(WHISPER_SAMPLING_GREEDY);
  p.n_threads = 2;
  p.language = "en";
  std::vector<whisper_token> tokens;
  if (whisper_full(ctx, p, pcm.data(), static_cast<int>(pcm.size())) != 0) return tokens;
  for (int s = 0; s < whisper_full_n_segments(ctx); ++s) {
    for (int i = 0; i < whisper_full_n_tokens(ctx, s); ++i) tokens.push_back(whisper_full_get_token_id(ctx, s, i));
  }
  return tokens;
}

TEST_F(ComputeTypeTest, Int8TranscriptEqualsTheOfflineQ8_0File) {
  absl::StatusOr<std::vector<float>> pcm = whisper::LoadAudio16kMono(testdata::SharedData("jfk.wav"));
  ASSERT_TRUE(pcm.ok()) << pcm.status();
  whisper_context_params cp = whisper_context_default_params();
  char msg[256] = "";
  ASSERT_EQ(whisper_ggml_set_compute_type(&cp, "int8", msg, sizeof(msg)), 0) << msg;
  EXPECT_TRUE(cp.ggml_convert_weights);
  EXPECT_EQ(cp.ggml_weight_type, GGML_TYPE_Q8_0);
  whisper_context* at_load = whisper_init_from_file_with_params(f16_path_->c_str(), cp);
  ASSERT_NE(at_load, nullptr);
  whisper_context* offline = whisper_init_from_file_with_params(q8_path_->c_str(), whisper_context_default_params());
  ASSERT_NE(offline, nullptr);
  const std::vector<whisper_token> a = Transcribe(at_load, *pcm);
  const std::vector<whisper_token> b = Transcribe(offline, *pcm);
  std::string text;
  for (int s = 0; s < whisper_full_n_segments(at_load); ++s) text += whisper_full_get_segment_text(at_load, s);
  whisper_free(at_load);
  whisper_free(offline);
  ASSERT_GT(a.size(), 20u);
  EXPECT_EQ(a, b);
  EXPECT_NE(text.find("ask not what your country can do for you"), std::string::npos) << text;
}

// The first step's logits after the start-of-transcript token over jfk.wav's window.
std::vector<float> FirstLogits(whisper_context* ctx, const std::vector<float>& pcm) {
  const whisper_token sot = whisper_token_sot(ctx);
  if (whisper_pcm_to_mel(ctx, pcm.data(), static_cast<int>(pcm.size()), 2) != 0 || whisper_encode(ctx, 0, 2) != 0 ||
      whisper_decode(ctx, &sot, 1, 0, 2) != 0) {
    return {};
  }
  const float* l = whisper_get_logits(ctx);
  return std::vector<float>(l, l + whisper_n_vocab(ctx));
}

// whisper_ggml_set_int8_attention: auto (the default) is int8 attention for the Q8_0 weights
// where the CPU has AVX512-VNNI (QuantGemmFast), so off changes the logits there and nowhere
// else; on equals auto for quantized weights; a mode set back gives the first logits again (the
// encoder graph is rebuilt each time). Bad arguments are -1.
TEST_F(ComputeTypeTest, Int8AttentionSwitchTakesEffectAtTheNextEncode) {
  absl::StatusOr<std::vector<float>> pcm = whisper::LoadAudio16kMono(testdata::SharedData("jfk.wav"));
  ASSERT_TRUE(pcm.ok()) << pcm.status();
  whisper_context* ctx = whisper_init_from_file_with_params(q8_path_->c_str(), whisper_context_default_params());
  ASSERT_NE(ctx, nullptr);
  EXPECT_EQ(whisper_ggml_set_int8_attention(nullptr, 0), -1);
  EXPECT_EQ(whisper_ggml_set_int8_attention(ctx, 2), -1);
  const std::vector<float> auto_first = FirstLogits(ctx, *pcm);
  ASSERT_EQ(whisper_ggml_set_int8_attention(ctx, 0), 0);
  const std::vector<float> off = FirstLogits(ctx, *pcm);
  ASSERT_EQ(whisper_ggml_set_int8_attention(ctx, 1), 0);
  const std::vector<float> on = FirstLogits(ctx, *pcm);
  ASSERT_EQ(whisper_ggml_set_int8_attention(ctx, -1), 0);
  const std::vector<float> auto_again = FirstLogits(ctx, *pcm);
  whisper_free(ctx);
  ASSERT_EQ(auto_first.size(), 51864u);  // tiny.en's vocabulary
  ASSERT_EQ(off.size(), auto_first.size());
  EXPECT_EQ(on, auto_first);
  EXPECT_EQ(auto_again, auto_first);
  if (ggml_cpu::QuantGemmFast()) {
    EXPECT_NE(off, auto_first);
  } else {
    EXPECT_EQ(off, auto_first);
  }
}

std::string* g_log = nullptr;
void CaptureLog(ggml_log_level, const char* text, void*) {
  if (g_log != nullptr) *g_log += text;
}

TEST_F(ComputeTypeTest, RefusesTypesTheKernelsCannotMultiply) {
  std::string log;
  g_log = &log;
  whisper_log_set(CaptureLog, nullptr);
  whisper_context_params cp = whisper_context_default_params();
  cp.ggml_convert_weights = true;
  cp.ggml_weight_type = GGML_TYPE_Q8_1;
  EXPECT_EQ(whisper_init_from_file_with_params(f16_path_->c_str(), cp), nullptr);
  EXPECT_NE(log.find("ggml_weight_type = 9 (q8_1) is not a weight type"), std::string::npos) << log;
  EXPECT_NE(log.find("8 (q8_0)"), std::string::npos) << log;
  log.clear();
  cp.ggml_weight_type = -3;
  EXPECT_EQ(whisper_init_from_file_with_params_no_state(f16_path_->c_str(), cp), nullptr);
  EXPECT_NE(log.find("ggml_weight_type = -3 (not a ggml_type)"), std::string::npos) << log;
  whisper_log_set(nullptr, nullptr);
  g_log = nullptr;
}

}  // namespace
}  // namespace ggml_whisper::quantize
