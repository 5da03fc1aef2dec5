// Test-only: graphs shaped like whisper.cpp's (non-flash-attention) encoder and one decoder step,
// built with ggml/ops.h over weights that exist (one buffer from ggml_backend_alloc_ctx_tensors,
// never written: the allocator only needs their data pointers). For the graph allocator's tests
// and benchmark: the shapes, op mix and views match whisper.cpp's whisper_build_graph_conv,
// _encoder and _decoder (see ../shared/reference/whisper_cpp_facts.md §5); the numbers are
// not meant to be computed.
#ifndef GGML_WHISPER_ALLOC_WHISPER_LIKE_GRAPHS_H_
#define GGML_WHISPER_ALLOC_WHISPER_LIKE_GRAPHS_H_

#include <stddef.h>

#include <memory>
#include <vector>

#include "alloc/buffer.h"
#include "ggml/ggml.h"
#include "ggml/graph.h"

namespace alloc_testing {

// Hyperparameters (whisper tiny by default).
struct WhisperDims {
  int n_mels = 80;
  int n_audio_ctx = 1500;
  int n_audio_state = 384;
  int n_audio_head = 6;
  int n_audio_layer = 4;
  int n_text_ctx = 448;
  int n_text_state = 384;
  int n_text_head = 6;
  int n_text_layer = 4;
  int n_vocab = 51865;
};

class WhisperLikeModel {
 public:
  // Creates the weights (F16 matrices, F32 biases and norms), the self-attention KV cache
  // (F16, n_text_ctx per layer) and the cross-attention K/V (F16, n_audio_ctx per layer), all in
  // one buffer. NULL with ggml_last_error() on failure.
  static std::unique_ptr<WhisperLikeModel> Create(const WhisperDims& dims);
  ~WhisperLikeModel();

  // Arena bytes a graph context needs for either graph (metadata only: no_alloc).
  static size_t GraphContextSize();

  // The encoder: INPUT mel [2 n_audio_ctx, n_mels] -> conv stem -> n_audio_layer blocks ->
  // ln_post, OUTPUT [n_audio_state, n_audio_ctx]. NULL with ggml_last_error() on failure.
  ggml_cgraph* BuildEncoder(ggml_context* ctx) const;
  // One decoder step of n_tokens tokens after n_past cached ones: INPUT tokens and positions
  // (I32 [n_tokens]); K/V of the new tokens are copied into the cache; OUTPUT logits
  // [n_vocab, n_tokens]. NULL with ggml_last_error() on failure.
  ggml_cgraph* BuildDecoder(ggml_context* ctx, int n_tokens, int n_past) const;

  const WhisperDims& dims() const { return dims_; }

 private:
  struct Layer;
  WhisperLikeModel() = default;
  bool CreateTensors();

  WhisperDims dims_;
  ggml_context* wctx_ = nullptr;
  ggml_backend_buffer_t wbuf_ = nullptr;
  ggml_tensor *conv1_w_ = nullptr, *conv1_b_ = nullptr, *conv2_w_ = nullptr, *conv2_b_ = nullptr;
  ggml_tensor *e_pe_ = nullptr, *e_ln_w_ = nullptr, *e_ln_b_ = nullptr;
  ggml_tensor *d_te_ = nullptr, *d_pe_ = nullptr, *d_ln_w_ = nullptr, *d_ln_b_ = nullptr;
  ggml_tensor *kv_k_ = nullptr, *kv_v_ = nullptr, *cross_k_ = nullptr, *cross_v_ = nullptr;
  std::vector<Layer> enc_;
  std::vector<Layer> dec_;
};

}  // namespace alloc_testing

#endif  // GGML_WHISPER_ALLOC_WHISPER_LIKE_GRAPHS_H_
