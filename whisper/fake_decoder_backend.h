// A scripted DecoderBackend for the decoding tests (whisper/decoding_test.cc,
// decoding_beam_test.cc): logits are a function of the tokens each decoder generated.
#ifndef GGML_WHISPER_WHISPER_FAKE_DECODER_BACKEND_H_
#define GGML_WHISPER_WHISPER_FAKE_DECODER_BACKEND_H_

#include <algorithm>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "whisper/decoding.h"

namespace whisper {

// A scripted model: each decoder keeps the tokens its "KV cache" holds; logits are a function of
// the tokens generated after the prompt.
class FakeBackend : public DecoderBackend {
 public:
  using Script = std::function<void(const std::vector<Token>& generated, std::vector<float>* logits)>;
  FakeBackend(const SpecialTokens& s, int n_decoders, int n_prompt, Script script)
      : s_(s), n_prompt_(n_prompt), script_(std::move(script)), kv_(n_decoders), logits_(n_decoders) {}

  absl::Status Decode(int d, const Token* tokens, int n, int n_past) override {
    if (n_past > static_cast<int>(kv_[d].size())) return absl::InternalError("gap in the KV cache");
    kv_[d].resize(n_past);
    kv_[d].insert(kv_[d].end(), tokens, tokens + n);
    std::vector<Token> generated(kv_[d].begin() + std::min<size_t>(n_prompt_, kv_[d].size()), kv_[d].end());
    logits_[d].assign(s_.n_vocab, -std::numeric_limits<float>::infinity());
    script_(generated, &logits_[d]);
    ++n_decode_calls;
    return absl::OkStatus();
  }
  const float* logits(int d) const override { return logits_[d].data(); }
  // Positions [0, begin) of dst must already hold src's tokens: a copy that relies on a prefix
  // dst does not have is counted (and made anyway, so the decoding result stays comparable).
  // Logits are not copied (the interface's contract).
  void CopyKv(int src, int dst, int begin, int end) override {
    if (begin > static_cast<int>(kv_[dst].size()) || end > static_cast<int>(kv_[src].size()) ||
        !std::equal(kv_[src].begin(), kv_[src].begin() + begin, kv_[dst].begin())) {
      ++stale_prefix_copies;
    }
    kv_[dst].assign(kv_[src].begin(), kv_[src].begin() + end);
    copied_positions += end - begin;
    full_copy_positions += end;
  }
  int n_decoders() const override { return static_cast<int>(kv_.size()); }
  int n_decode_calls = 0;
  int stale_prefix_copies = 0;
  long copied_positions = 0;     // positions CopyKv copied
  long full_copy_positions = 0;  // what copying [0, end) every time would have copied

 private:
  SpecialTokens s_;
  size_t n_prompt_;
  Script script_;
  std::vector<std::vector<Token>> kv_;
  std::vector<std::vector<float>> logits_;
};

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_FAKE_DECODER_BACKEND_H_
