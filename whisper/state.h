// The inference state of one transcription stream, or of several decoded together: the encoder
// output, the cross K/V of n_windows windows (window 0 is "the current window" of Encode, Decode,
// DecodeBatch and Align), one self-attention KV cache per decoder, the three compute graphs with their
// graph allocators, the executor's thread pool and work buffer, and the logits.
//
// Memory (architecture.md "Memory promise"): Create() sizes everything from the hparams:
//   - one state buffer (alloc/buffer.h) for the encoder output (F32 [S, n_audio_ctx]), n_windows
//     cross K/V (F16, 2 x n_text_layer x n_audio_ctx x S each) and n_decoders self KV caches (F16,
//     2 x n_text_layer x n_text_ctx x S each);
//   - three graph allocators (alloc/gallocr.h), each reserved once for its worst case: the encoder
//     and cross graphs at n_ctx = n_audio_ctx, the decoder step at n_tokens = n_text_ctx,
//     n_past = 0 (every smaller step fits), and at one token for each of n_decoders sequences
//     (DecodeBatch: one window; DecodeSequences: each sequence its own window and n_past);
//   - three metadata contexts sized from EncoderGraphSize / CrossGraphSize / DecoderGraphSize,
//     reset and reused for every build;
//   - the executor's work buffer, sized from the worst-case plans.
// The encoder and cross graphs are built and placed once per audio_ctx and recomputed for each
// window (the cross graph again when it writes another window). A decoder step is rebuilt (its
// views depend on n_past) in the reused metadata context and placed by its reserved allocator.
// After Create, Encode, EncodeWindow, Decode, DecodeBatch
// and DecodeSequences allocate no heap memory (tested with //testing:alloc_counter).
//
// Not thread-safe: one call at a time.
#ifndef GGML_WHISPER_WHISPER_STATE_H_
#define GGML_WHISPER_WHISPER_STATE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "alloc/buffer.h"
#include "alloc/gallocr.h"
#include "cpu/graph_compute.h"
#include "cpu/threadpool.h"
#include "ggml/ggml.h"
#include "whisper/decoder.h"
#include "whisper/dtw.h"
#include "whisper/encoder.h"
#include "whisper/model.h"

namespace whisper {

// The three compute graphs, for compute_buffer_size().
enum class Graph { kEncoder, kCross, kDecoder, kAlign };

// An executor to compute the state's graphs with instead of the multithreaded SIMD one
// (cpu/graph_compute.h), for tests: computes graph->nodes[0 .. n_nodes) in order on the
// calling thread (every tensor placed, the inputs filled); returns false with ggml_last_error()
// set when a node fails. The scalar oracle ggml_ref_graph_compute (cpu/ref_ops.h, testonly
// //cpu:ref_ops) is one; production code passes none.
using GraphComputeFn = bool (*)(ggml_cgraph* graph);

// Wall time (steady clock) spent in Encode (encoder + cross graphs, mel copy included) and in
// Decode (graph build, placement, compute, logits copy).
struct InferenceTimings {
  double encode_ms = 0.0;
  int n_encode = 0;
  double decode_ms = 0.0;
  int n_decode = 0;         // Decode calls, and DecodeBatch calls of n > 1
  int n_decode_tokens = 0;  // tokens over all of them
};

// One sequence's token in a DecodeSequences step.
struct SequenceStep {
  int decoder = 0;    // its self KV cache and logits, in [0, n_decoders)
  int window = 0;     // the window it attends to, in [0, n_windows), encoded by EncodeWindow
  int32_t token = 0;  // in [0, n_vocab)
  int n_past = 0;     // the token's position in its cache, in [0, n_text_ctx)
};

class InferenceState {
 public:
  // Most decoders a state holds: beam search with beam_size 8 double-buffers 16, and a batch of
  // sequences decoded together (DecodeSequences) may hold several windows' beams (8 windows of
  // beam 5 double-buffered: 80; 128 covers 8 windows of beam 8).
  static constexpr int kMaxStateDecoders = 128;
  // Most windows (cross K/V) a state holds.
  static constexpr int kMaxStateWindows = 64;

  // Creates the state for `model` (which must outlive it). Graphs run on the SIMD executor with
  // n_threads threads, or, when `compute` is not null, on `compute` alone (no thread pool and no
  // work buffer are made; n_threads is still checked and reported by n_threads()). Errors:
  // InvalidArgument when n_decoders is not in [1, kMaxStateDecoders] or n_threads not in
  // [1, GGML_THREADPOOL_MAX_THREADS]; ResourceExhausted / Internal (with ggml_last_error()) when a
  // buffer, the thread pool or a worst-case graph cannot be made. `encoder` chooses the
  // encoder's attention (whisper_context_params.flash_attn: flash, the default, or blocked);
  // the compute buffer is sized for it. n_windows (in [1, kMaxStateWindows], else
  // InvalidArgument) cross K/V slots are made, each 2 x n_text_layer x n_audio_ctx x S F16
  // (tiny.en: 9.2 MB), for sequences of several windows decoded together (DecodeSequences).
  static absl::StatusOr<std::unique_ptr<InferenceState>> Create(const WhisperModel& model,
                                                              int n_decoders, int n_threads,
                                                              GraphComputeFn compute = nullptr,
                                                              const EncoderOptions& encoder = EncoderOptions(),
                                                              int n_windows = 1);
  ~InferenceState();
  InferenceState(const InferenceState&) = delete;
  InferenceState& operator=(const InferenceState&) = delete;

  // Encodes the window of 2 * n_ctx mel frames starting at frame `seek` (n_ctx = audio_ctx, or
  // n_audio_ctx = 1500 when audio_ctx is 0: a 3000-frame, 30 s window) and fills the cross K/V.
  // `mel` is row-major [n_mels][n_frames_total] (ne = [n_frames_total, n_mels]), the layout of
  // whisper/mel.h; frames at or beyond n_frames_total are zero (whisper.cpp L2385-2404).
  // Errors: InvalidArgument for a null mel, n_frames_total < 0, seek < 0, or audio_ctx not in
  // [0, n_audio_ctx]; Internal when a graph cannot be built, placed or computed.
  // n_frames_valid (-1 = n_frames_total) limits the frames taken from `mel`: later frames of the
  // window are 0.0, as OpenAI's pad_or_trim and faster-whisper fill the window after the audio's
  // content (whisper.cpp instead keeps the log-mel of its 30 s zero padding there).
  // A NaN or infinity in the encoder output is an error (NonFiniteError): DataLoss naming the
  // model's first non-finite weight, or Internal naming the output's element.
  absl::Status Encode(const float* mel, int n_frames_total, int seek, int audio_ctx = 0,
                      int n_frames_valid = -1);
  // Encode into window slot `window` (in [0, n_windows), else InvalidArgument): its cross K/V
  // and n_audio_ctx(window) are replaced, the other windows' are kept. The encoder output
  // (encoder_output()) is the last encoded window's. Encode is EncodeWindow(0, ...).
  absl::Status EncodeWindow(int window, const float* mel, int n_frames_total, int seek, int audio_ctx = 0,
                            int n_frames_valid = -1);

  // Appends tokens[0 .. n_tokens) to decoder `decoder`'s KV cache at positions n_past ..
  // n_past + n_tokens - 1 (positions before n_past are kept, later ones are overwritten later)
  // and computes the logits of the last token, attending to the last Encode's window.
  // Errors: FailedPrecondition before the first Encode; InvalidArgument for a decoder not in
  // [0, n_decoders), null tokens, n_tokens < 1, n_past < 0, n_past + n_tokens > n_text_ctx, or a
  // token not in [0, n_vocab); Internal when the step cannot be built, placed or computed.
  // `window` (in [0, n_windows), else InvalidArgument; FailedPrecondition before its
  // EncodeWindow) chooses the window attended to: a sequence's prompt pass before it joins a
  // DecodeSequences batch. A NaN or infinity in the logits is an error (NonFiniteError), in
  // DecodeBatch and DecodeSequences too: DataLoss naming the model's first non-finite weight, or
  // Internal naming the decoder, position and vocabulary index.
  absl::Status Decode(int decoder, const int32_t* tokens, int n_tokens, int n_past, int window = 0);

  // One token for each of decoders[0 .. n) (distinct), all at position n_past, in one graph
  // (BuildBatchedDecoderGraph): the weights are read once for the n tokens. Gives each decoder the
  // logits that Decode(decoders[b], &tokens[b], 1, n_past) gives. n == 1 is Decode. Errors: those
  // of Decode, and InvalidArgument for n not in [1, n_decoders], null arrays or a repeated decoder.
  absl::Status DecodeBatch(const int* decoders, const int32_t* tokens, int n, int n_past);

  // One token for each of n independent sequences in one graph (BuildSequencesDecoderGraph):
  // steps[b] appends its token at its n_past of its decoder's cache and attends to its window;
  // the weights are read once for all n. Each decoder gets the logits Decode(decoder, &token, 1,
  // n_past, window) gives (bit for bit while n < 16, whisper/decoder.h). Sequences may join or
  // leave between calls (any subset of decoders, any windows): the graph is rebuilt each step in
  // the reused metadata context and placed in the buffer reserved at Create for n_decoders
  // sequences, so no call allocates. Put sequences of one window next to each other (beams):
  // they then share one cross-attention product. Errors: InvalidArgument for null steps, n not in
  // [1, n_decoders], a decoder out of range or repeated, a window out of range, a token not in
  // [0, n_vocab), n_past not in [0, n_text_ctx); FailedPrecondition for a window never encoded;
  // Internal when the step cannot be built, placed or computed.
  absl::Status DecodeSequences(const SequenceStep* steps, int n);

  // DTW timestamps (whisper/dtw.h): keeps `heads` (sorted by layer) for Align and reserves an
  // allocator of its own for the alignment graph at n_tokens = kMaxAlignTokens, so that Align
  // makes no heap allocation within that. Call before transcribing; an empty list turns it off.
  // Errors: InvalidArgument for a head outside the model; ResourceExhausted / Internal when the
  // graph cannot be reserved.
  absl::Status SetAlignmentHeads(const std::vector<AlignmentHead>& heads);
  int n_alignment_heads() const { return static_cast<int>(aheads_.size()); }

  // The alignment pass: decodes tokens[0 .. n_tokens) at positions 0 .. n_tokens - 1 of decoder
  // `decoder`'s cache (overwriting it; call after the window's decoding) against window
  // `window` (by default the last Encode's) and returns the alignment heads' cross-attention
  // logits, F32 ne = [n_audio_ctx, n_tokens, n_alignment_heads] contiguous, valid until the next
  // Align. Errors:
  // FailedPrecondition before SetAlignmentHeads or the first Encode; the errors of Decode.
  // logits_from in [0, n_tokens) also computes the logits of positions [logits_from, n_tokens),
  // read with align_logits() (the allocator then grows to hold them on first use: n_vocab floats
  // per position); -1: none. InvalidArgument for another value. `window` and `decoder` (in
  // [0, n_windows) and [0, n_decoders), else InvalidArgument; FailedPrecondition for a window
  // never encoded) choose the window aligned to and the cache overwritten, so that a batch of
  // windows (DecodeSequences) aligns each of its windows with a decoder it no longer uses.
  absl::StatusOr<const float*> Align(const int32_t* tokens, int n_tokens, int logits_from = -1, int window = 0,
                                     int decoder = 0);
  // The logits of the last Align with logits_from >= 0: F32 ne = [n_vocab, n_tokens - logits_from]
  // contiguous, valid until the next Align; nullptr otherwise.
  const float* align_logits() const { return align_logits_; }

  // Longest sequence the alignment allocator is reserved for: a window's text (at most
  // n_text_ctx / 2 tokens are sampled) with the sot sequence, <|notimestamps|> and <|endoftext|>.
  static int MaxAlignTokens(const WhisperHparams& h) { return std::min(h.n_text_ctx, h.n_text_ctx / 2 + 8); }

  // The n_vocab logits of decoder's last Decode (zeros before it). nullptr for a bad index.
  const float* logits(int decoder) const;

  // Copies KV positions [0, n_tokens) and the logits of src_decoder to dst_decoder (beam
  // search's sequence reordering). Indices outside [0, n_decoders) or src == dst are a no-op;
  // n_tokens is clamped to [0, n_text_ctx]. No allocation.
  void CopyKv(int src_decoder, int dst_decoder, int n_tokens);
  // Copies KV positions [begin, end) of src_decoder to dst_decoder, not the logits (beam search
  // copies only after the prefix the two caches share). The same no-ops and clamping (begin to
  // [0, end]); no allocation.
  void CopyKvRange(int src_decoder, int dst_decoder, int begin, int end);
  // Calls fn(arg, i) for i in [0, n) on the state's thread pool (thread ith takes i = ith,
  // ith + nth, ...; nth = min(n, n_threads)), or in order on this thread without a pool, and
  // returns when all calls have returned. For work outside the graphs (the decoder's per-beam
  // logit filters, whisper/decoding.h). Allocates nothing.
  void ParallelFor(int n, void (*fn)(void* arg, int i), void* arg);

  // Bytes the graph `which` needs at its peak (its allocator's largest plan; for the memory
  // report). The encoder, cross and decoder graphs share one buffer of the largest of the three.
  size_t compute_buffer_size(Graph which) const;
  // Bytes of all compute buffers held: the shared one plus the alignment graph's (DTW).
  size_t compute_buffer_total() const;
  // Bytes of the state buffer (encoder output, cross K/V, self KV caches).
  size_t kv_buffer_size() const;

  const InferenceTimings& timings() const { return timings_; }
  // Adds every later graph computation's per-op, per-thread times to *profile (the SIMD executor
  // only; cpu/graph_compute.h ggml_cpu_profile); NULL stops. The caller owns and zeroes it.
  void set_profile(ggml_cpu_profile* profile) { profile_ = profile; }

  int n_decoders() const { return static_cast<int>(self_kv_.size()); }
  int n_windows() const { return static_cast<int>(cross_kvs_.size()); }
  int n_threads() const { return n_threads_; }
  // n_ctx of the last Encode of `window` (0 before it, or for a window out of range).
  int n_audio_ctx(int window = 0) const {
    return window >= 0 && window < n_windows() ? window_n_ctx_[window] : 0;
  }
  const WhisperModel& model() const { return model_; }

  // The GELU of the encoder and decoder graphs (whisper/encoder.h Gelu), at first
  // EncoderOptions::gelu. set_gelu changes it for later calls: the next Encode rebuilds the
  // encoder graph (in its reused metadata context and reserved allocator: no heap allocation),
  // every later decoder step and alignment pass uses it. The decoding rules pick it (OpenAI's:
  // kErf, whisper.cpp's: kTanh; whisper/whisper_inference.cc).
  void set_gelu(Gelu gelu) { gelu_ = gelu; }
  Gelu gelu() const { return gelu_; }
  // The encoder's int8 attention mode (whisper/encoder.h Int8Attention), at first
  // EncoderOptions::int8_attention; a change rebuilds the encoder graph at the next Encode, as
  // set_gelu (whisper_ggml_set_int8_attention).
  void set_int8_attention(Int8Attention mode) { int8_attention_ = mode; }
  Int8Attention int8_attention() const { return int8_attention_; }

  // For tests: the encoder output [S, n_audio_ctx] F32, the cross K/V and a decoder's self K/V
  // (layouts in whisper/encoder.h and whisper/decoder.h).
  const ggml_tensor* encoder_output() const { return embd_; }
  DecoderKv cross_kv(int window = 0) const { return cross_kvs_[window]; }
  DecoderKv self_kv(int decoder) const { return self_kv_[decoder]; }

 private:
  InferenceState(const WhisperModel& model, int n_threads, GraphComputeFn compute, const EncoderOptions& encoder);

  absl::Status Init(int n_decoders, int n_windows);
  // Init's steps. The state buffer: the encoder output, n_windows cross K/V and n_decoders self
  // K/V (F16), the first two zeroed. Errors: Internal, ResourceExhausted.
  absl::Status AllocateStateBuffer(int n_decoders, int n_windows);
  // The graphs' metadata contexts, the shared compute buffer, its allocators and (SIMD executor,
  // n_threads > 1) the thread pool. Errors: Internal.
  absl::Status CreateGraphAllocators(int n_decoders);
  // Builds, reserves and places the worst-case graphs (encoder and cross at the full window, the
  // decoder at n_text_ctx tokens and at one token after a full cache, the batched step of every
  // decoder, in one window and in distinct windows); returns the largest work size they plan.
  // Errors: the builders', Internal.
  absl::StatusOr<size_t> ReserveGraphs(int n_decoders);
  // The encoder and cross graphs for windows of n_ctx, the cross graph writing window `window`.
  absl::Status BuildWindowGraphs(int n_ctx, int window);
  // Builds, places and computes the step of seqs_[0 .. n) with tokens[0 .. n) (each sequence's
  // PrepareKv done), then copies column b of the logits to decoders[b]. `what` names the caller.
  absl::Status RunSequences(const char* what, const int* decoders, const int32_t* tokens, int n);
  // DecodeSequences' argument checks. Errors: InvalidArgument, FailedPrecondition.
  absl::Status CheckSequenceSteps(const SequenceStep* steps, int n) const;
  // Before a graph reads `decoder`'s self K/V at positions [0, n_past + n_tokens) and writes
  // [n_past, n_past + n_tokens): zeroes its V the first time, and its K rows below n_past that
  // were never written (Decode, CopyKv, Align). No allocation.
  void PrepareKv(int decoder, int n_past, int n_tokens);
  // The error for a computed value that is not finite (`value` at `index` of what `what` names;
  // Encode, Decode, DecodeBatch and DecodeSequences check their encoder output and logits with a
  // sum, ~1 float add per value): the model's first non-finite weight when it has one
  // (WhisperModel::CheckWeightsFinite, DataLoss), else Internal naming `what`, the value and the
  // index. Runs only on that error path (the weight scan allocates one row).
  absl::Status NonFiniteError(const std::string& what, float value, int64_t index) const;
  // Runs `graph` with compute_, or the SIMD executor when it is null; grows the work buffer only
  // if a plan needs more than was sized in Init (never for graphs within the reserved shapes).
  absl::Status Compute(ggml_cgraph* graph, const char* what);

  const WhisperModel& model_;
  const int n_threads_;
  const EncoderOptions encoder_options_;
  const GraphComputeFn compute_;  // nullptr: the SIMD executor (cpu/graph_compute.h)
  Gelu gelu_;                     // set_gelu
  Int8Attention int8_attention_;  // set_int8_attention

  ggml_context* kv_ctx_ = nullptr;  // metadata of the state buffer's tensors (no_alloc)
  ggml_backend_buffer_t kv_buffer_ = nullptr;
  ggml_tensor* embd_ = nullptr;
  std::vector<DecoderKv> cross_kvs_;    // [n_windows]
  std::vector<int> window_n_ctx_;       // [n_windows]: n_ctx of its last Encode (0: none)
  std::vector<DecoderKv> self_kv_;
  std::vector<uint8_t> self_v_zeroed_;  // [n_decoders]: 1 once that decoder's V is zeroed
  std::vector<int64_t> self_k_rows_;    // [n_decoders]: K rows [0, this) written or zeroed
  std::vector<DecoderSequence> seqs_;   // [n_decoders]: a batched step's sequences, sized at Init
  std::vector<int> step_decoders_;      // [n_decoders]: DecodeSequences' decoders, sized at Init
  std::vector<int32_t> step_tokens_;    // [n_decoders]: DecodeSequences' tokens, sized at Init

  // Per graph: metadata context (reset per build) and allocator (reserved once); the encoder,
  // cross and decoder allocators place their graphs in compute_buffer_, each before it computes.
  ggml_backend_buffer_t compute_buffer_ = nullptr;
  ggml_context* enc_ctx_ = nullptr;
  ggml_context* cross_ctx_ = nullptr;
  ggml_context* dec_ctx_ = nullptr;
  ggml_gallocr_t enc_alloc_ = nullptr;
  ggml_gallocr_t cross_alloc_ = nullptr;
  ggml_gallocr_t dec_alloc_ = nullptr;
  ggml_context* align_ctx_ = nullptr;    // DTW: the alignment graph (made by SetAlignmentHeads)
  ggml_gallocr_t align_alloc_ = nullptr;
  const float* align_logits_ = nullptr;  // Align's logits output (logits_from >= 0)
  std::vector<AlignmentHead> aheads_;

  EncoderGraph enc_graph_;
  ggml_cgraph* cross_graph_ = nullptr;
  int graphs_n_ctx_ = 0;     // n_ctx the encoder/cross graphs are built for (0: none)
  int cross_graph_window_ = 0;  // the window the cross graph writes
  Gelu graphs_gelu_ = Gelu::kErf;  // the GELU the encoder graph is built with
  Int8Attention graphs_int8_attention_ = kInt8AttentionAuto;  // and its int8 attention mode

  ggml_threadpool* threadpool_ = nullptr;
  ggml_cpu_profile* profile_ = nullptr;
  std::vector<uint8_t> work_;
  std::vector<std::vector<float>> logits_;  // [n_decoders][n_vocab]
  InferenceTimings timings_;
};

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_STATE_H_
