// Token timing from the decoder's cross-attention (DTW): the alignment-head pipeline of OpenAI's
// whisper/timing.py find_alignment, which CTranslate2's Whisper::align (used by faster-whisper
// 1.2.1 for word_timestamps=True) and whisper.cpp 1.8.5's -dtw (whisper_exp_compute_token_level_
// timestamps_dtw) also follow.
//
// The decoder is run once, teacher-forced, over
//   [sot sequence (sot_len tokens)] <|notimestamps|> text_0 .. text_{n-1} <|endoftext|>
// and returns, for each alignment head, the pre-softmax cross-attention logits QK^T / sqrt(d)
// (ne = [n_audio_ctx, n_tokens] per head). Then, per head: keep the first n_frames audio
// positions (the window's content frames / 2: the encoder's second convolution has stride 2),
// softmax each token's row, standardise each audio position over the tokens (mean and population
// standard deviation over all n_tokens rows), median-filter each row over time (width 7, reflect
// padding). Average the heads, keep rows sot_len .. n_tokens - 2 (the <|notimestamps|> row and
// the n text rows) and find the monotonic path of least cost through minus that matrix (DTW with
// OpenAI's tie rule). Row k is entered at audio position jumps[k]: text token k starts at
// jumps[k] and ends at jumps[k + 1], in units of 20 ms from the window start.
#ifndef GGML_WHISPER_WHISPER_DTW_H_
#define GGML_WHISPER_WHISPER_DTW_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace whisper {

// One cross-attention head: decoder layer and head index, both from 0.
struct AlignmentHead {
  int layer = 0;
  int head = 0;
};

// whisper.h's enum whisper_alignment_heads_preset, value for value (whisper/whisper_context.cc
// checks), so that this library does not depend on the C API.
enum class AheadsPreset : int {
  kNone = 0,
  kNTopMost,
  kCustom,
  kTinyEn,
  kTiny,
  kBaseEn,
  kBase,
  kSmallEn,
  kSmall,
  kMediumEn,
  kMedium,
  kLargeV1,
  kLargeV2,
  kLargeV3,
  kLargeV3Turbo,
};

// The alignment heads of `preset` for a decoder of n_text_layer layers of n_text_head heads,
// sorted by layer (stable within one): kTinyEn .. kLargeV3Turbo are whisper.cpp 1.8.5's lists
// (OpenAI's _ALIGNMENT_HEADS; tiny.en's equals its CTranslate2 config.json alignment_heads);
// kNTopMost is every head of the last n_top layers; kCustom is custom[0 .. n_custom). Errors: InvalidArgument for NONE or an unknown preset, an
// n_top not in [1, n_text_layer], an empty or null custom list, or a head outside the model.
absl::StatusOr<std::vector<AlignmentHead>> AlignmentHeadsFor(AheadsPreset preset, int n_top,
                                                             const AlignmentHead* custom, size_t n_custom,
                                                             int n_text_layer, int n_text_head);

// The preset of whisper-cli's -dtw MODEL names ("tiny.en", "tiny", "base.en", "base", "small.en",
// "small", "medium.en", "medium", "large.v1", "large.v2", "large.v3", "large.v3.turbo");
// kNone for any other name.
AheadsPreset AlignmentHeadsPresetByName(const char* name);

// The preset of a released Whisper checkpoint recognised by its shape (n_vocab 51864: the .en
// models, 51865: multilingual, 51866: large-v3 and large-v3-turbo; layer counts from OpenAI's
// model dims). large-v1 and large-v2 share a shape: large-v2's heads. kNone for any other shape
// (a fine-tune with other layer counts, a synthetic model).
AheadsPreset AlignmentHeadsPresetForDims(int n_vocab, int n_audio_layer, int n_text_layer);

// Runs the pipeline above with scratch memory sized once: after construction, Align makes no
// heap allocation for shapes within the limits.
class DtwAligner {
 public:
  // Median filter width of timing.py and of both peers.
  static constexpr int kMedianFilterWidth = 7;

  // Limits: up to max_tokens rows (the whole aligned sequence) and max_frames audio positions.
  DtwAligner(int max_tokens, int max_frames);

  // qk: n_heads blocks of n_tokens rows of row_stride floats (ne = [row_stride, n_tokens,
  // n_heads]); row r of head h starts at qk[(h * n_tokens + r) * row_stride], and its first
  // n_frames values are used. Rows: sot_len start tokens, <|notimestamps|>, n_text = n_tokens -
  // sot_len - 2 text tokens, <|endoftext|>. Writes jumps[0 .. n_text] (audio positions, 20 ms
  // each). Errors: InvalidArgument for a null pointer, n_heads < 1, sot_len < 1, n_text < 1,
  // n_tokens > max_tokens, n_frames not in [1, min(row_stride, max_frames)], a median width
  // that is not odd and positive, or a non-finite logit.
  // softmax_all: softmax each row over all row_stride positions before keeping the first n_frames,
  // as whisper.cpp 1.8.5 does (it saves the attention after the decoder's own softmax); false:
  // over the kept n_frames, as timing.py and CTranslate2.
  absl::Status Align(const float* qk, int n_heads, int n_tokens, int row_stride, int n_frames, int sot_len,
                     int median_width, int* jumps, bool softmax_all = false);

 private:
  // Align's steps for head h of qk ([n_heads][T][row_stride]): head_ ([T][F]) = the softmax of
  // each token's row over its first F positions (all row_stride with softmax_all); InvalidArgument
  // for a logit that is not finite.
  absl::Status SoftmaxHead(const float* qk, int h, int T, int F, int row_stride, bool softmax_all);
  // Standardises each position (column) of head_ over the T tokens.
  void StandardizeHead(int T, int F);
  // matrix_ += scale * head_ median-filtered along time (odd width median_width).
  void AddMedianFiltered(int T, int F, int median_width, float scale);

  int max_tokens_;
  int max_frames_;
  // The large buffers are left uninitialised (every cell Align reads it has written first), so
  // their pages are touched only by an alignment that uses them: a batched transcriber holds one
  // aligner per window (232 tokens x 1500 frames: 5.9 MB each) whether or not words are timed.
  std::unique_ptr<float[]> head_;    // one head's rows [n_tokens][n_frames]
  std::unique_ptr<float[]> matrix_;  // the heads' mean [n_tokens][n_frames]
  std::vector<float> window_;        // median filter window
  std::unique_ptr<double[]> cost_;   // DTW cost [(N + 1) (M + 1)]
  std::unique_ptr<int8_t[]> trace_;  // DTW step taken into each cell
};

// OpenAI's dtw_cpu on x (N rows, M columns, row-major): the least-cost monotonic path from
// (0, 0) to (N - 1, M - 1) by steps (1, 1), (1, 0), (0, 1); a step is (1, 1) only when strictly
// cheapest, else (1, 0) when strictly cheapest, else (0, 1) (timing.py's tie rule).
// `cost` and `trace` hold at least (N + 1) (M + 1) entries. Writes, for each row, the column at
// which the path first enters it (row_entry[0 .. N)).
void DtwPath(const float* x, int n, int m, double* cost, int8_t* trace, int* row_entry);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_DTW_H_
