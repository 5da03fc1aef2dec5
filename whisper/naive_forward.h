// Test oracle: Whisper's forward pass written out as plain loops in double precision, straight
// from OpenAI's whisper/model.py (AudioEncoder, TextDecoder, MultiHeadAttention), reading the
// weights of a WhisperModel (F32/F16 tensors only). It shares no code with the ggml graphs, so
// agreement checks the graph construction itself: layouts, transposes, scalings, the causal
// mask, KV positions.
//
// To compare tightly with the graphs, it rounds to F16 exactly where the graphs store F16 (the
// encoder's K and V, the cross K/V and the self KV cache, after the same d^-0.25 scalings);
// everything else stays in double.
#ifndef GGML_WHISPER_WHISPER_NAIVE_FORWARD_H_
#define GGML_WHISPER_WHISPER_NAIVE_FORWARD_H_

#include <cstdint>
#include <vector>

#include "whisper/encoder.h"
#include "whisper/model.h"

namespace whisper {

// Encoder output for a window of 2 n_ctx frames: `window` is row-major [n_mels][2 n_ctx].
// Returns [n_ctx][S] (position-major). `gelu`: the model's erf form (nn.GELU()) or whisper.cpp's
// tanh approximation (whisper/encoder.h Gelu), evaluated in double.
std::vector<double> NaiveEncode(const WhisperModel& model, const std::vector<float>& window,
                                int n_ctx, Gelu gelu = Gelu::kErf);

// Logits [n_vocab] of the last of `tokens` (positions 0 .. tokens.size() - 1) given the encoder
// output `enc` ([n_ctx][S], from NaiveEncode). `gelu` as NaiveEncode's.
std::vector<double> NaiveDecode(const WhisperModel& model, const std::vector<double>& enc, int n_ctx,
                                const std::vector<int32_t>& tokens, Gelu gelu = Gelu::kErf);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_NAIVE_FORWARD_H_
