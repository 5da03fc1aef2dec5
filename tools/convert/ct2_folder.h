// A CTranslate2 Whisper model folder (faster-whisper's WhisperModel("models/faster-whisper-tiny.en"))
// converted in memory to a whisper.cpp ggml model image, for the loaders that take a buffer
// (whisper_init_from_buffer_with_params): the Python module and the CLI accept such a folder
// where they accept a ggml file, and nothing is written to disk.
//
// Why in memory and not a converted file: the loader copies every tensor into its own weight
// buffer whichever the source (whisper/model.h: the file mapping is released before Load
// returns), so a file would only save the conversion (tiny.en: ~0.3 s) on later loads, at the
// price of writing next to the user's model or into a cache directory that must be invalidated.
// Memory: the model.bin bytes and the image (its size in ggml's types) are held together during
// the conversion; model.bin is released before the image is returned.
#ifndef GGML_WHISPER_TOOLS_CONVERT_CT2_FOLDER_H_
#define GGML_WHISPER_TOOLS_CONVERT_CT2_FOLDER_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/convert/ggml_file.h"

namespace ggml_whisper::convert {

// True when `path` is a directory (the callers' test for "a CTranslate2 folder, not a file").
bool IsDirectory(const std::string& path);

// faster-whisper 1.2.1's mel filterbank (faster_whisper/feature_extractor.py
// FeatureExtractor.get_mel_filters: librosa's Slaney-style mel scale and area normalization,
// computed in float64, stored as float32): [n_mels][n_fft / 2 + 1] row-major, for sampling rate
// `sampling_rate` (Hz) and an `n_fft`-point FFT. Whisper: n_mels 80 or 128, 16000 Hz, n_fft 400.
// OpenAI's mel_filters.npz (librosa 0.8) holds the same values within float32 rounding.
MelFilters FasterWhisperMelFilters(int32_t n_mels, int32_t sampling_rate = 16000,
                                   int32_t n_fft = 400);

// The folder `dir` as one ggml model image (the bytes //tools:convert writes, with
// FasterWhisperMelFilters in place of mel_filters.npz, as faster-whisper computes its features):
//   - model.bin: a CTranslate2 WhisperSpec (ct2_model.h, whisper_ct2.h); float32, float16,
//     bfloat16 or int8 weights (int8 dequantized, MaterializeTensor). The image's matrices are
//     F16 (ftype 1) unless the token embedding is float32 or bfloat16 (then F32, ftype 0, so
//     nothing is rounded before compute_type converts them at load);
//   - vocabulary.json or vocabulary.txt: at least n_vocab tokens (n_vocab = rows of
//     decoder/embeddings/weight), of which the image stores the first 50257;
//   - config.json, when present (CTranslate2 writes it; faster-whisper reads it): a JSON object
//     whose suppress_ids, suppress_ids_begin and lang_ids, if present, are lists of token ids
//     below n_vocab, lang_ids empty or holding ids of the language tokens, and alignment_heads a
//     list of [layer < n_text_layer, head < n_text_head] pairs;
//   - preprocessor_config.json, when present: feature_size = n_mels of model.bin, sampling_rate
//     16000, n_fft 400, hop_length 160, chunk_length 30 (the runtime's fixed front end).
// Errors, each naming the file, the field, the value found and what was expected:
//   NotFound when `dir` or model.bin or both vocabulary files are missing; those of
//   Ct2Model::ReadFile (DataLoss for a truncated model.bin, Unimplemented for another binary
//   version), WhisperHparamsFromCt2 (another spec, e.g. "TransformerSpec"), PlanWhisperTensors and
//   MaterializeTensor; InvalidArgument for a config file that is not valid JSON or breaks the
//   rules above, or a vocabulary of the wrong size.
absl::StatusOr<std::vector<uint8_t>> Ct2FolderToGgmlImage(const std::string& dir);

}  // namespace ggml_whisper::convert

#endif  // GGML_WHISPER_TOOLS_CONVERT_CT2_FOLDER_H_
