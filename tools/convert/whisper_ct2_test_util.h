// Test helper: a synthetic CTranslate2 WhisperSpec model.bin with tiny dimensions and every
// variable the real converter writes (names and shapes of ctranslate2/specs/whisper_spec.py as
// found in faster-whisper-tiny.en), filled with distinct float16 values so that any wrong row
// split or tensor mix-up shows in the converted data.
#ifndef GGML_WHISPER_TOOLS_CONVERT_WHISPER_CT2_TEST_UTIL_H_
#define GGML_WHISPER_TOOLS_CONVERT_WHISPER_CT2_TEST_UTIL_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ggml/fp16.h"
#include "tools/convert/ct2_test_util.h"

namespace ggml_whisper::convert {

struct TinyWhisperDims {
  uint32_t d = 4;  // n_audio_state = n_text_state
  int16_t heads = 2;
  uint32_t n_mels = 3;
  uint32_t n_audio_ctx = 5;
  uint32_t n_text_ctx = 6;
  uint32_t n_vocab = 7;
  int n_audio_layer = 1;
  int n_text_layer = 2;
};

// The float16 value stored at global element index `k` (in the order variables are added):
// k / 8, exact in binary16 for k < 2048 (the default dims use about 1100 elements).
inline uint16_t TinyWhisperValue(uint32_t k) { return ggml_fp32_to_fp16(k / 8.0f); }

class TinyWhisperCt2 {
 public:
  explicit TinyWhisperCt2(const TinyWhisperDims& dims = TinyWhisperDims()) : dims_(dims) {}

  // Builds the model.bin image; `skip` names a variable to leave out (error tests).
  std::vector<uint8_t> Build(const std::string& skip = "") {
    Ct2FileBuilder b("WhisperSpec", 3);
    const uint32_t d = dims_.d;
    skip_ = skip;
    next_ = 0;
    first_index_.clear();
    b.AddTyped<int16_t>("decoder/num_heads", {}, 2, {dims_.heads});
    F16(b, "decoder/embeddings/weight", {dims_.n_vocab, d});
    F16(b, "decoder/position_encodings/encodings", {dims_.n_text_ctx, d});
    LayerNorm(b, "decoder/layer_norm");
    for (int i = 0; i < dims_.n_text_layer; ++i) {
      const std::string l = absl::StrCat("decoder/layer_", i);
      LayerNorm(b, l + "/self_attention/layer_norm");
      Linear(b, l + "/self_attention/linear_0", 3 * d, d);
      Linear(b, l + "/self_attention/linear_1", d, d);
      LayerNorm(b, l + "/attention/layer_norm");
      Linear(b, l + "/attention/linear_0", d, d);
      Linear(b, l + "/attention/linear_1", 2 * d, d);
      Linear(b, l + "/attention/linear_2", d, d);
      Ffn(b, l);
    }
    b.AddTyped<int16_t>("encoder/num_heads", {}, 2, {dims_.heads});
    F16(b, "encoder/conv1/weight", {d, dims_.n_mels, 3});
    F16(b, "encoder/conv1/bias", {d});
    F16(b, "encoder/conv2/weight", {d, d, 3});
    F16(b, "encoder/conv2/bias", {d});
    F16(b, "encoder/position_encodings/encodings", {dims_.n_audio_ctx, d});
    LayerNorm(b, "encoder/layer_norm");
    for (int i = 0; i < dims_.n_audio_layer; ++i) {
      const std::string l = absl::StrCat("encoder/layer_", i);
      LayerNorm(b, l + "/self_attention/layer_norm");
      Linear(b, l + "/self_attention/linear_0", 3 * d, d);
      Linear(b, l + "/self_attention/linear_1", d, d);
      Ffn(b, l);
    }
    b.Alias("decoder/projection/weight", "decoder/embeddings/weight");
    return b.Build();
  }

  // First global element index of variable `name` in the last Build() (see TinyWhisperValue).
  uint32_t FirstIndex(const std::string& name) const {
    for (const auto& [n, k] : first_index_) {
      if (n == name) return k;
    }
    ADD_FAILURE() << "no variable " << name;
    return 0;
  }

 private:
  void F16(Ct2FileBuilder& b, const std::string& name, std::vector<uint32_t> shape) {
    if (name == skip_) return;
    uint32_t n = 1;
    for (uint32_t s : shape) n *= s;
    std::vector<uint16_t> v(n);
    first_index_.emplace_back(name, next_);
    for (uint32_t i = 0; i < n; ++i) v[i] = TinyWhisperValue(next_++);
    b.AddTyped<uint16_t>(name, std::move(shape), 4, v);
  }
  void LayerNorm(Ct2FileBuilder& b, const std::string& scope) {
    F16(b, scope + "/beta", {dims_.d});
    F16(b, scope + "/gamma", {dims_.d});
  }
  void Linear(Ct2FileBuilder& b, const std::string& scope, uint32_t out, uint32_t in) {
    F16(b, scope + "/bias", {out});
    F16(b, scope + "/weight", {out, in});
  }
  void Ffn(Ct2FileBuilder& b, const std::string& layer) {
    LayerNorm(b, layer + "/ffn/layer_norm");
    Linear(b, layer + "/ffn/linear_0", 4 * dims_.d, dims_.d);
    Linear(b, layer + "/ffn/linear_1", dims_.d, 4 * dims_.d);
  }

  TinyWhisperDims dims_;
  std::string skip_;
  uint32_t next_ = 0;
  std::vector<std::pair<std::string, uint32_t>> first_index_;
};

}  // namespace ggml_whisper::convert

#endif  // GGML_WHISPER_TOOLS_CONVERT_WHISPER_CT2_TEST_UTIL_H_
