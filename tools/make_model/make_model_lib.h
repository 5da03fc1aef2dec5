// Whisper model files with random weights in the shapes of the real models, for timing larger
// models than the one the project ships (tiny.en): `//tools:make_model -- --shape small --out F`
// writes a whisper.cpp-format file that both //tools:bench and whisper.cpp's whisper-bench load
// (tools/compare_bench.py runs them side by side). The weights are random, so transcripts from
// these files mean nothing; timings do.
#ifndef GGML_WHISPER_TOOLS_MAKE_MODEL_MAKE_MODEL_LIB_H_
#define GGML_WHISPER_TOOLS_MAKE_MODEL_MAKE_MODEL_LIB_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "whisper/model_file.h"
#include "whisper/synthetic_model.h"

namespace whisper {

// The hyperparameters of an OpenAI Whisper model size (whisper.cpp's MODEL_* table,
// src/whisper.cpp L1523-1547, and the released checkpoints' dims): "tiny" (n_audio_state 384,
// 6 heads, 4 layers), "base" (512, 8, 6), "small" (768, 12, 12), "medium" (1024, 16, 24),
// "large" (1280, 20, 32; large-v2's 80 mel bins). Every size: n_vocab 51865 (multilingual),
// n_audio_ctx 1500, n_text_ctx 448, the text dims equal to the audio dims, ftype 1 (F16).
// InvalidArgument for any other name, listing the valid ones.
absl::StatusOr<WhisperHparams> ShapeHparams(absl::string_view shape);

// Options for MakeSyntheticModel: `shape`'s hparams and the weight type `type` ("f32", "f16",
// "q4_0", "q4_1", "q5_0", "q5_1", "q8_0"; the 2-D matrices get that type, the conv kernels F16
// (F32 for "f32") and the rest F32, as in whisper.cpp's files; quantized files store ftype
// 2 * 1000 + ggml_ftype, as whisper.cpp's quantize writes). Only 6 vocabulary entries are stored
// ("tok0".."tok5"); both loaders name the others themselves. InvalidArgument for an unknown
// shape or type.
absl::StatusOr<SyntheticModelOptions> ShapeModelOptions(absl::string_view shape, absl::string_view type,
                                                        uint32_t seed);

}  // namespace whisper

#endif  // GGML_WHISPER_TOOLS_MAKE_MODEL_MAKE_MODEL_LIB_H_
