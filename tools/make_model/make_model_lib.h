// Whisper model files with random weights in the shapes of the real models, for timing larger
// models than the one the project ships (tiny.en): `//tools:make_model -- --shape small --out F`
// writes a whisper.cpp-format file that both //tools:bench and whisper.cpp's whisper-bench load
// (tools/compare/compare_bench.py runs them side by side). The weights are random, so transcripts from
// these files mean nothing; timings do. The mel filterbank is the real one (OpenAI's
// mel_filters.npz), so the encoder input has the value range of real audio.
#ifndef GGML_WHISPER_TOOLS_MAKE_MODEL_MAKE_MODEL_LIB_H_
#define GGML_WHISPER_TOOLS_MAKE_MODEL_MAKE_MODEL_LIB_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "whisper/model_file.h"
#include "whisper/synthetic_model.h"

namespace whisper {

// The hyperparameters of an OpenAI Whisper model (the released checkpoints' ModelDimensions;
// whisper.cpp's model-type table, src/whisper.cpp L1523-1547, names them by n_audio_layer and
// adds " v3" for n_vocab 51866):
//   name            state heads enc dec n_mels n_vocab
//   tiny              384     6   4   4     80   51865
//   base              512     8   6   6     80   51865
//   small             768    12  12  12     80   51865
//   medium           1024    16  24  24     80   51865
//   large            1280    20  32  32     80   51865   (large-v1/v2)
//   large-v3         1280    20  32  32    128   51866   (adds <|yue|>: 100 languages)
//   large-v3-turbo   1280    20  32   4    128   51866
// Every shape: n_audio_ctx 1500, n_text_ctx 448, the text width and heads equal to the audio
// ones, ftype 1 (F16). InvalidArgument for any other name, listing the valid ones.
absl::StatusOr<WhisperHparams> ShapeHparams(absl::string_view shape);

// The shape names ShapeHparams accepts, in the table's order.
std::vector<std::string> ShapeNames();

// The `n_mels` x 201 filterbank (row-major [n_mels][201], ggml ne = [201, n_mels]) from OpenAI
// Whisper's whisper/assets/mel_filters.npz, key "mel_<n_mels>" (mel_80 or mel_128; -0.0 stored
// as +0.0, as the converter writes it). Errors: those of the npz reader naming `npz_path:key`
// (NotFound for a missing file or key), InvalidArgument when the array is not [n_mels, 201].
absl::StatusOr<std::vector<float>> ShapeMelFilters(const std::string& npz_path, int n_mels);

// Ids 0..255 of OpenAI's Whisper tokenizers (gpt2.tiktoken and multilingual.tiktoken alike): the
// 256 single bytes, as raw bytes, in the order of GPT-2's bytes_to_unicode (openai/gpt-2
// src/encoder.py): 0x21..0x7E, 0xA1..0xAC, 0xAE..0xFF, then 0x00..0x20, 0x7F..0xA0, 0xAD. So
// id 220 is " ", the token whisper.cpp's suppress_blank filter looks up (token_to_id.at(" "),
// src/whisper.cpp L6206: whisper-cli throws std::out_of_range on a file without it).
std::vector<std::string> Gpt2ByteTokens();

// Options for MakeSyntheticModel: `shape`'s hparams and the weight type `type` ("f32", "f16",
// "q4_0", "q4_1", "q5_0", "q5_1", "q8_0"; the 2-D matrices get that type, the conv kernels F16
// (F32 for "f32") and the rest F32, as in whisper.cpp's files; quantized files store ftype
// 2 * 1000 + ggml_ftype, as whisper.cpp's quantize writes). The stored vocabulary is
// Gpt2ByteTokens() (256 entries; real files store 50257); both loaders name ids 256..n_vocab - 1
// themselves ("[_extra_token_256]", ..., then the special and timestamp tokens from n_vocab,
// whisper.cpp L1624-1666), so the special ids are those of a real file. `mel_filters` ([n_mels][201], e.g. from ShapeMelFilters) is written as the
// filterbank; empty leaves MakeSyntheticModel's random one. InvalidArgument for an unknown shape
// or type, or filters of the wrong size.
absl::StatusOr<SyntheticModelOptions> ShapeModelOptions(absl::string_view shape, absl::string_view type,
                                                        uint32_t seed, std::vector<float> mel_filters = {});

}  // namespace whisper

#endif  // GGML_WHISPER_TOOLS_MAKE_MODEL_MAKE_MODEL_LIB_H_
