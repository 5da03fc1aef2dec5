// The converter's driver: a CTranslate2 Whisper model directory plus OpenAI's mel_filters.npz
// -> one whisper.cpp ggml model file (format: ggml_file.h; mapping: whisper_ct2.h).
#ifndef GGML_WHISPER_TOOLS_CONVERT_CONVERT_H_
#define GGML_WHISPER_TOOLS_CONVERT_CONVERT_H_

#include <stdint.h>

#include <string>

#include "absl/status/statusor.h"
#include "tools/convert/ggml_file.h"
#include "tools/convert/gpt2_vocab.h"

namespace ggml_whisper::convert {

struct ConvertOptions {
  std::string model_dir;    // holds model.bin and vocabulary.json or vocabulary.txt
  std::string mel_filters;  // mel_filters.npz
  std::string out;          // the ggml file to write (through `<out>.partial`)
  // F16: ftype 1, matrices and conv weights F16 (whisper.cpp's default). F32: ftype 0, all F32.
  GgmlFileType weight_type = GgmlFileType::kF16;
  int n_vocab_stored = kWhisperFileVocabSize;
};

struct ConvertSummary {
  WhisperHparams hparams;
  int n_tensors = 0;
  uint64_t header_bytes = 0;       // magic through vocabulary (tiny.en: 586,235)
  uint64_t tensor_data_bytes = 0;  // tiny.en F16: 77,110,272
  uint64_t file_bytes = 0;         // tiny.en F16: 77,704,715
};

// Reads `<model_dir>/model.bin`, the vocabulary and the mel filters, then writes the model.
// Errors: those of Ct2Model::ReadFile, WhisperHparamsFromCt2, ReadCt2Vocabulary,
// GgmlVocabFromTokens, MelFiltersFromNpz, PlanWhisperTensors, MaterializeTensor and
// GgmlModelWriter, each naming the file and the field. On error no output file is left.
absl::StatusOr<ConvertSummary> ConvertCt2WhisperToGgml(const ConvertOptions& options);

}  // namespace ggml_whisper::convert

#endif  // GGML_WHISPER_TOOLS_CONVERT_CONVERT_H_
