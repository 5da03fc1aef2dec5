// Graph builders for Whisper's audio encoder and for the cross-attention K/V it feeds the decoder.
//
// Architecture (OpenAI whisper/model.py AudioEncoder; whisper.cpp whisper_build_graph_conv,
// _encoder and _cross, src/whisper.cpp L1982-2320):
//   x = GELU(conv1d(mel, conv1, k3 s1 p1) + b1)          [2 n_ctx, S]   (ne: time first)
//   x = GELU(conv1d(x, conv2, k3 s2 p1) + b2)            [n_ctx, S]
//   x = transpose(x) + positional_embedding[:n_ctx]      [S, n_ctx]
//   per layer: x += SelfAttn(LN(x));  x += MLP(LN(x))    (pre-LN; MLP = fc2(GELU(fc1)))
//   out = LN_post(x)
// The convolutions use ggml_conv_1d (im2col in F32, then mul_mat with the F16 kernel);
// whisper.cpp's im2col rounds the input to F16 first, faster-whisper computes in F32, whose
// tokens are the reference here (whisper/tiny_en_test.cc). LN is ggml_norm (eps 1e-5), * w + b. Attention: softmax(K^T Q / sqrt(d_head)) with
// d_head = S / n_head and no mask; K and V are rounded to F16 before the products, as in both of
// whisper.cpp's attention paths.
//
// Cross K/V, computed once per window from `out` for every decoder layer l:
//   K_l = (Wk_l out) * d_head^-0.25    stored F16, per layer [S, n_ctx] (ne0 = S)
//   V_l = Wv_l out + bv_l              stored F16 transposed, per layer [n_ctx, S] (ne0 = n_ctx)
// Both caches are 1-D F16 tensors of n_text_layer * n_audio_ctx * S elements; layer l of a
// window with n_ctx positions starts at element l * n_ctx * S (packed for the current n_ctx).
#ifndef GGML_WHISPER_WHISPER_ENCODER_H_
#define GGML_WHISPER_WHISPER_ENCODER_H_

#include "absl/status/statusor.h"
#include "ggml/ggml.h"
#include "ggml/graph.h"
#include "whisper/model.h"

namespace whisper {

// The encoder's self-attention, two ways (whisper.cpp's -fa / -nfa):
//
// Flash (the default, as in whisper.cpp 1.8.5): one FLASH_ATTN_EXT node per layer
// (kernels/flash_attn.h): online softmax over blocks of keys, so no score tensor exists; F16 K/V
// as whisper.cpp's flash path. tiny.en's encoder compute buffer for a 30 s window: 15.4 MB
// (whisper/encoder_test.cc; the MLP's [1536, 1500] F32 is the largest tensor).
//
// Blocked: ceil(n_ctx / query_block) query blocks of equal size (+-1). Per block: scores
// [n_ctx, block, n_head] F32, softmax, times V (F16, transposed); then the blocks are
// concatenated along positions (ggml_concat, dim 1), the graph allocator reusing one block's
// score buffer for the next: tiny.en holds 1500 x 250 x 6 x 4 B = 9 MB of scores at a time
// instead of 54 MB, a 21 MB compute buffer instead of 71 MB. Each score and each output is the
// same dot product as in one [n_ctx, n_ctx, n_head] product, computed in the same order
// (kernels/matmul.h's packed path for every block of >= kMulMatPackedMinN = 16 positions, which
// equal blocks of more than 128 are), so the output bytes do not depend on the block size: these
// are whisper.cpp's non-flash numerics.
inline constexpr int kEncoderQueryBlock = 256;

// int8 attention (flash path only; ggml_flash_attn_ext_set_int8, kernels/flash_attn.h
// FlashAttnKV::int8): the self-attention's two products in int8 on CPUs with AVX512-VNNI, as the
// weight products of a quantized model already run (kernels/quant_gemm.h; elsewhere the node runs
// f32). About 1.75x faster per head than the f32 flash attention on AVX3_DL
// (//kernels:flash_attn_benchmark), which makes a tiny.en Q8_0 window about 1.8x faster than an
// F16 one instead of 1.3-1.5x; timings, words on long_speech.flac and the encoder output's change:
// tools/bench/README.md. kInt8AttentionAuto (the default) turns it on when the layer's attention
// weights are quantized (Q8_0, Q5_0, Q4_0, ...) unless the environment variable
// WHISPER_INT8_ATTENTION is "0"; F16 and F32 models keep f32 attention. A context's mode:
// whisper_ggml_set_int8_attention (whisper_ggml.h; whisper-cli/-server --int8-attention
// auto|on|off). It changes near-ties of the decoder: tiny.en Q8_0 on jfk.wav, greedy, ends
// "country." (p = 0.46) where our f32 attention and faster-whisper's int8 end "country".
// CTranslate2's int8 (faster-whisper compute_type="int8") keeps attention in float, so the tests
// that compare our int8 with it token for token (python_test's greedy jfk test, test_ct2_folder)
// set WHISPER_INT8_ATTENTION=0, the same computation; the default is checked by words and segment
// times against faster-whisper's int8 (python_test) and by WER on long_speech (bench README).
// The encoder output's change on encoder_test's random mel: 0.4-0.6% RMS over 288 to 1500
// positions (TinyEnInt8AttentionStaysClose). Until 2026-12 300 positions gave NaN or 1.6% with
// one value 0.9 off: a p block ~85 below its row's max (layer 0 head 2 has score gaps ~29)
// made 255 / max p overflow f32; such blocks now quantize to zero (kernels/flash_attn.h).
// kInt8AttentionOn and kInt8AttentionOff ignore the weights and the environment.
enum Int8Attention { kInt8AttentionAuto = -1, kInt8AttentionOff = 0, kInt8AttentionOn = 1 };

// The GELU of the encoder's convolutions and MLPs and of the decoder's MLPs:
//   kErf:  0.5 x (1 + erf(x / sqrt(2))), ggml_gelu_erf. The model's (OpenAI whisper/model.py
//          nn.GELU()) and CTranslate2's (faster-whisper), so OpenAI's decoding rules use it.
//   kTanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), ggml_gelu: whisper.cpp's
//          (src/whisper.cpp ggml_gelu), so --decoding whisper.cpp stays byte-equal to whisper-cli.
// The two differ by up to 4.7e-4 (at |x| = 2.7); on base, jfk.wav, beam 5 that changes a token
// (whisper/e2e/avg_logprob_test.cc).
enum class Gelu { kErf, kTanh };

struct EncoderOptions {
  bool flash_attn = true;
  int query_block = kEncoderQueryBlock;  // blocked path only; >= 1 (n_ctx: one block)
  Int8Attention int8_attention = kInt8AttentionAuto;
  Gelu gelu = Gelu::kErf;
};

// Whether the encoder's attention over these weights runs in int8 under `mode` (see
// Int8Attention; auto: quantized weights, unless WHISPER_INT8_ATTENTION is "0").
bool UseInt8Attention(Int8Attention mode, const AttentionWeights& w);

// Graph capacity (nodes, and separately leafs) of the encoder / cross graphs of `hparams`.
int EncoderGraphSize(const WhisperHparams& hparams, const EncoderOptions& options = EncoderOptions());
int CrossGraphSize(const WhisperHparams& hparams);

struct EncoderGraph {
  ggml_cgraph* graph = nullptr;
  // Input (INPUT flag, bytes from the graph allocator): F32 ne = [2 n_ctx, n_mels], row m holds
  // mel band m of the window's 2 n_ctx frames.
  ggml_tensor* mel = nullptr;
  // The last node: a view of `embd` (ne = [S, n_ctx]) that receives LN_post(x).
  ggml_tensor* out = nullptr;
};

// Builds the encoder graph for n_ctx positions (1 <= n_ctx <= n_audio_ctx) into `ctx`, a
// no_alloc metadata context with room for EncoderGraphSize(hparams, options) tensors plus the
// graph. `embd` is the caller's persistent F32 tensor of ne [S, >= n_ctx] (contiguous) that the
// encoder output is copied into. `options` chooses the attention and the GELU (see EncoderOptions).
// Errors: InvalidArgument for a bad n_ctx, query_block (blocked path) or embd shape; Internal (with
// ggml_last_error()) when a constructor fails (metadata context too small).
absl::StatusOr<EncoderGraph> BuildEncoderGraph(ggml_context* ctx, const WhisperModel& model,
                                               int n_ctx, ggml_tensor* embd,
                                               const EncoderOptions& options = EncoderOptions());

// Builds the graph that fills `cross_k` and `cross_v` (F16, 1-D, >= n_text_layer * n_ctx * S
// elements each) from the first n_ctx columns of `embd`. Layer il starts at il * n_ctx * S
// elements of each; within it K is [d, n_ctx, n_head] (head-major: head h's n_ctx keys of d =
// S / n_text_head elements are contiguous, scaled by d^-0.25) and V is transposed, [n_ctx, S]
// (channel c's n_ctx values contiguous), the layouts the decoder's products read. Errors as BuildEncoderGraph.
absl::StatusOr<ggml_cgraph*> BuildCrossGraph(ggml_context* ctx, const WhisperModel& model,
                                             int n_ctx, ggml_tensor* embd, ggml_tensor* cross_k,
                                             ggml_tensor* cross_v);

// Shared by the encoder and decoder builders: unmasked attention softmax(K^T Q * scale) V with
// the queries in ceil(n_q / query_block) equal blocks (see kEncoderQueryBlock), concatenated.
//   Q: [d, n_q, n_head] (any strides, e.g. a permuted view), K: [d, n_kv, n_head],
//   V: [n_kv, d, n_head] (time along rows) -> [d * n_head, n_q] F32, heads side by side.
// Returns NULL when an op rejects its shapes or the metadata context is full (ggml_last_error()
// says why), or for query_block < 1 (the callers' constants; no message).
ggml_tensor* BlockedAttention(ggml_context* ctx, ggml_tensor* Q, ggml_tensor* K, ggml_tensor* V, float scale,
                              int query_block);

// Shared by the encoder and decoder builders: LN(x) * w + b, with eps 1e-5.
ggml_tensor* LayerNorm(ggml_context* ctx, ggml_tensor* x, ggml_tensor* w, ggml_tensor* b);
// x + MLP(LN(x)): fc2(GELU(fc1(LN(x)) + b1)) + b2, then the residual; `gelu` picks the form.
ggml_tensor* MlpBlock(ggml_context* ctx, const MlpWeights& w, ggml_tensor* x, Gelu gelu);
// GELU(x) in the form `gelu` (ggml_gelu_erf or ggml_gelu); NULL as those return it.
ggml_tensor* GeluOp(ggml_context* ctx, ggml_tensor* x, Gelu gelu);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_ENCODER_H_
