// Graph builder for one step of Whisper's text decoder: n_tokens new tokens at positions
// n_past .. n_past + n_tokens - 1 of one decoder's KV cache, and the logits of the last of them.
//
// Architecture (OpenAI whisper/model.py TextDecoder; whisper.cpp whisper_build_graph_decoder,
// src/whisper.cpp L2480-2830), width S, d = S / n_head:
//   x = token_embedding[tokens] + positional_embedding[n_past : n_past + n_tokens]   [S, n_tokens]
//   per layer: x += SelfAttn(LN(x)) (causal); x += CrossAttn(LN(x), cross K/V); x += MLP(LN(x))
//   logits = token_embedding x LN(x_last)                                            [n_vocab]
// Self-attention: Q and K are each scaled by d^-0.25 (so softmax(K^T Q) has the 1/sqrt(d) scale),
// the new K and V are written into the F16 cache, and the queries attend to cache positions
// 0 .. n_past + n_tokens - 1 with the causal mask (key j is hidden from query i when
// j > n_past + i). Cross-attention: K is pre-scaled (whisper/encoder.h), softmax scale d^-0.25.
//
// Self KV cache of one decoder: two 1-D F16 tensors of n_text_layer * n_text_ctx * S elements.
//   K: layer l, position p starts at element (l * n_text_ctx + p) * S (ne0 = S per position).
//   V: transposed, layer l is [n_text_ctx, S] (ne0 = n_text_ctx): element
//      l * n_text_ctx * S + c * n_text_ctx + p holds channel c of position p.
#ifndef GGML_WHISPER_WHISPER_DECODER_H_
#define GGML_WHISPER_WHISPER_DECODER_H_

#include "absl/status/statusor.h"
#include "ggml/ggml.h"
#include "ggml/graph.h"
#include "whisper/dtw.h"
#include "whisper/encoder.h"
#include "whisper/model.h"

namespace whisper {

// Cross-attention takes the step's tokens in blocks of at most this many (BlockedAttention,
// whisper/encoder.h): a prompt pass of n_tokens holds one block's scores
// [n_audio_ctx, <= 64, n_head] F32 at a time (tiny.en: 2.3 MB instead of up to 16 MB at 448
// tokens). Steps of <= 64 tokens (every sampling step) are one block; longer ones split into
// equal blocks of > 32, so every product keeps its summation order and the logits their bytes.
inline constexpr int kDecoderQueryBlock = 64;

// Graph capacity (nodes, and separately leafs) of a decoder step of `hparams` that also outputs
// n_aheads alignment heads, or of a step of n_batch sequences (BuildSequencesDecoderGraph,
// BuildBatchedDecoderGraph).
int DecoderGraphSize(const WhisperHparams& hparams, int n_aheads = 0, int n_batch = 0);

struct DecoderKv {
  ggml_tensor* k = nullptr;  // F16, 1-D
  ggml_tensor* v = nullptr;  // F16, 1-D
};

// One sequence of a multi-sequence step (BuildSequencesDecoderGraph): its own self KV cache,
// the cross K/V of its window (n_audio_ctx positions, layout of whisper/encoder.h) and the
// position n_past of its one new token.
struct DecoderSequence {
  DecoderKv self_kv;
  DecoderKv cross_kv;
  int n_audio_ctx = 0;
  int n_past = 0;
};

struct DecoderGraph {
  ggml_cgraph* graph = nullptr;
  ggml_tensor* tokens = nullptr;  // input (INPUT flag): I32 ne = [n_tokens]
  // Input (INPUT flag) of a multi-sequence step whose sequences are not all at one n_past:
  // I32 ne = [n_seqs], the caller writes sequence b's n_past at [b]. nullptr otherwise (the
  // positional rows are then a view of the embedding).
  ggml_tensor* positions = nullptr;
  // output (OUTPUT flag): F32 ne = [n_vocab, 1] ([n_vocab, n_batch]; [n_vocab, n_logits] for
  // BuildDecoderGraph's last n_logits tokens)
  ggml_tensor* logits = nullptr;
  // With alignment heads (output, written by copies in the graph): each head's cross-attention
  // logits K^T Q / sqrt(d) before the softmax, F32 ne = [n_audio_ctx, n_tokens, n_aheads] (heads
  // in the order given).
  ggml_tensor* aheads_qk = nullptr;
};

// Builds the step into `ctx` (a no_alloc metadata context with room for DecoderGraphSize()
// tensors plus the graph). `self_kv` holds >= n_text_layer * n_text_ctx * S elements each;
// `cross_kv` holds the cross K/V of a window of n_audio_ctx positions (layout of
// whisper/encoder.h). Errors: InvalidArgument when n_tokens < 1, n_past < 0,
// n_past + n_tokens > n_text_ctx, n_audio_ctx is not in [1, hparams.n_audio_ctx], or a cache is
// too small or not F16, or an alignment head outside the model; Internal (with
// ggml_last_error()) when a constructor fails. aheads[0 .. n_aheads) (sorted by layer, see
// whisper/dtw.h) adds the aheads_qk output for DTW timestamps; the context then needs
// DecoderGraphSize(hparams, n_aheads). n_logits (1 .. n_tokens; InvalidArgument otherwise): the
// logits of the last n_logits tokens, ne = [n_vocab, n_logits] (the alignment pass's token
// probabilities need every text position's, as CTranslate2's Whisper align). `gelu`: the MLPs'
// GELU (whisper/encoder.h Gelu; the encoder's and the decoder's are the same form).
absl::StatusOr<DecoderGraph> BuildDecoderGraph(ggml_context* ctx, const WhisperModel& model,
                                               const DecoderKv& self_kv, const DecoderKv& cross_kv,
                                               int n_audio_ctx, int n_tokens, int n_past,
                                               const AlignmentHead* aheads = nullptr, int n_aheads = 0,
                                               int n_logits = 1, Gelu gelu = Gelu::kErf);

// One sampling step of n_seqs independent sequences in one graph: token b (input tokens[b],
// ne = [n_seqs]) is sequence seqs[b]'s token at position seqs[b].n_past of seqs[b].self_kv, and
// logits column b (ne = [n_vocab, n_seqs]) is its next-token logits against the window of
// seqs[b].cross_kv (seqs[b].n_audio_ctx positions; windows may differ in n_audio_ctx). If the
// sequences' n_past differ, fill g.positions too (see DecoderGraph).
//   - Every projection (self and cross Q/K/V/O, MLP, the vocabulary) is one product on
//     [S, n_seqs] in matvec mode (ggml/ops.h ggml_mul_mat_set_matvec), so each weight matrix is
//     read once per step for all sequences (whisper.cpp batches its decoders the same way,
//     src/whisper.cpp whisper_build_graph_decoder with a whisper_batch; vLLM-style continuous
//     batching mixes sequences of different requests).
//   - Self-attention is per sequence: one query at n_past attends to positions 0 .. n_past of
//     its own cache (views; no mask is needed, so sequences at different n_past share the graph).
//   - Cross-attention is per run of consecutive sequences sharing a window (same cross K/V
//     tensors and n_audio_ctx): the beams of one window are one product pair (matvec mode too).
// Each column's logits are bit for bit those of BuildDecoderGraph for that sequence alone with
// n_tokens = 1, for any n_seqs: in matvec mode each product's column n is computed as the
// single step's one-column product (the CPU executor's matrix-vector / vec_dot paths, whose
// outputs sum their K terms in one order for any number of columns, for F32, F16 and quantized
// weights alike), and the other ops work column by column.
// Needs DecoderGraphSize(hparams, 0, n_seqs). Errors: InvalidArgument for a null
// array or n_seqs < 1, a sequence whose n_past is not in [0, n_text_ctx), whose n_audio_ctx is not
// in [1, hparams.n_audio_ctx], whose caches are too small or not F16, or two sequences that share
// a self KV cache; Internal (with ggml_last_error()) when a constructor fails. `gelu` as
// BuildDecoderGraph's.
absl::StatusOr<DecoderGraph> BuildSequencesDecoderGraph(ggml_context* ctx, const WhisperModel& model,
                                                        const DecoderSequence* seqs, int n_seqs,
                                                        Gelu gelu = Gelu::kErf);

// One sampling step of n_batch decoders of one window (beam search, best-of): the special case
// of BuildSequencesDecoderGraph where every sequence has cross_kv, n_audio_ctx and n_past (so
// g.positions is nullptr, and cross-attention is one product pair for all). Token b (input
// tokens[b], ne = [n_batch]) is decoder self_kvs[b]'s token at position n_past, and logits column
// b (ne = [n_vocab, n_batch]) is its next-token logits. Needs DecoderGraphSize(hparams, 0,
// n_batch). Errors: those of BuildSequencesDecoderGraph. Heap-allocates only for n_batch > 32.
absl::StatusOr<DecoderGraph> BuildBatchedDecoderGraph(ggml_context* ctx, const WhisperModel& model,
                                                      const DecoderKv* self_kvs, int n_batch,
                                                      const DecoderKv& cross_kv, int n_audio_ctx, int n_past,
                                                      Gelu gelu = Gelu::kErf);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_DECODER_H_
