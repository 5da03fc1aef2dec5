// Mapping a CTranslate2 Whisper model (WhisperSpec, see ct2_model.h) onto whisper.cpp's ggml
// tensors: hyperparameters from the variables' shapes, and for each ggml tensor its name, type,
// ne and the rows of the CTranslate2 variable it comes from.
//
// Follows whisper.cpp's models/convert-pt-to-ggml.py (f16 mode) on OpenAI's PyTorch names, with
// CTranslate2's fusions undone (ctranslate2/converters/transformers.py, WhisperLoader):
//   - self-attention linear_0 = [Q; K; V] stacked by rows -> attn.{query,key,value};
//   - cross-attention linear_0 = Q, linear_1 = [K; V] -> cross_attn.{query}, {key,value};
//   - the key bias (zeros in Whisper; a per-query constant that softmax cancels) is dropped;
//   - conv biases [n] are reshaped to PyTorch [n, 1], i.e. ggml ne [1, n];
//   - the output projection must be tied to the token embedding (whisper.cpp computes logits
//     with decoder.token_embedding.weight).
#ifndef GGML_WHISPER_TOOLS_CONVERT_WHISPER_CT2_H_
#define GGML_WHISPER_TOOLS_CONVERT_WHISPER_CT2_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/convert/ct2_model.h"
#include "tools/convert/ggml_file.h"
#include "tools/convert/npz.h"

namespace ggml_whisper::convert {

// Hyperparameters from the model's variables:
//   n_vocab, n_text_state   = decoder/embeddings/weight [n_vocab, n_text_state]
//   n_audio_ctx, n_audio_state = encoder/position_encodings/encodings [n_audio_ctx, n_audio_state]
//   n_text_ctx              = decoder/position_encodings/encodings [n_text_ctx, n_text_state]
//   n_mels                  = encoder/conv1/weight [n_audio_state, n_mels, 3]
//   n_audio_head, n_text_head = the int scalars encoder/num_heads, decoder/num_heads
//   n_audio_layer, n_text_layer = number of consecutive encoder/layer_N, decoder/layer_N
// `ftype` is stored as given (1 for F16 weights, 0 for all F32).
// Errors (naming model.bin and the variable): InvalidArgument when the spec is not
// "WhisperSpec", a shape is inconsistent, a head count does not divide the width, or there is
// no layer; NotFound for a missing variable.
absl::StatusOr<WhisperHparams> WhisperHparamsFromCt2(const Ct2Model& model, int32_t ftype);

// One ggml tensor and where its data comes from: `row_count` rows of `src` starting at
// `row_begin` (a row = all elements after the first dimension; every element for 1-D sources).
struct GgmlTensorPlan {
  std::string name;         // whisper.cpp's name, e.g. "encoder.blocks.0.attn.key.weight"
  GgmlFileType type;        // F16 or F32, see GgmlTypeFor
  std::vector<int64_t> ne;  // ggml order (PyTorch shape reversed)
  const Ct2Variable* src;   // owned by the Ct2Model
  int64_t row_begin = 0;
  int64_t row_count = 0;
  // For an int8 `src` (CTranslate2's int8* quantization): its `<src>_scale` variable, float32
  // (or float16/bfloat16) [rows of src], one scale per row; NULL otherwise.
  const Ct2Variable* scale = nullptr;
};

// convert-pt-to-ggml.py's f16-mode rule: F32 for tensors of fewer than 2 dims, for the conv
// biases and for both positional embeddings; `weight_type` (F16 normally) for the rest (conv
// weights, matrices, token embedding).
GgmlFileType GgmlTypeFor(absl::string_view name, size_t n_dims, GgmlFileType weight_type);

// Every tensor whisper.cpp loads (tiny: 167), in the PyTorch state-dict order of OpenAI's
// model.py that whisper.cpp's converter writes: encoder.positional_embedding, conv1, conv2,
// blocks (attn q/k/v/out, attn_ln, mlp.0, mlp.2, mlp_ln), ln_post; then
// decoder.positional_embedding, token_embedding, blocks (attn, attn_ln, cross_attn,
// cross_attn_ln, mlp, mlp_ln), ln. Every source shape is checked against `h`.
// Errors: NotFound / InvalidArgument from Ct2Model::Get naming the variable and both shapes;
// InvalidArgument for an untied output projection.
absl::StatusOr<std::vector<GgmlTensorPlan>> PlanWhisperTensors(const Ct2Model& model,
                                                               const WhisperHparams& h,
                                                               GgmlFileType weight_type);

// The tensor's bytes in its ggml type: the planned rows of the source, converted
// float32/float16/bfloat16 -> F32 or F16 (F16 rounding to nearest even, ggml/fp16.h). An int8
// source (CTranslate2's int8, int8_float16, int8_float32, int8_bfloat16 conversions) is
// dequantized as CTranslate2 does: row r's element = q / scale[r] in float32
// (ctranslate2/specs/model_spec.py _quantize: q = rint(w * 127 / amax(|row|)), scale = 127 / amax).
// Errors: Unimplemented naming the variable for int16/int32 sources; InvalidArgument when an int8
// source has no scale or a scale of another shape than [rows] (both named), or when the rows are
// outside the source or do not hold exactly product(ne) elements.
absl::StatusOr<std::vector<uint8_t>> MaterializeTensor(const GgmlTensorPlan& plan);

// The `n_mels` mel filterbank from OpenAI's mel_filters.npz (key "mel_<n_mels>", float32
// [n_mels, n_fft]). Negative zeros become +0.0 (equal values): whisper.cpp's published files
// store +0.0 where the npz has -0.0 (element [0][0] of mel_80), so this gives a byte-identical
// header. Errors: those of ReadNpzF32; InvalidArgument when the array is not [n_mels, n_fft].
absl::StatusOr<MelFilters> MelFiltersFromNpz(const std::string& npz_path, int32_t n_mels);

}  // namespace ggml_whisper::convert

#endif  // GGML_WHISPER_TOOLS_CONVERT_WHISPER_CT2_H_
