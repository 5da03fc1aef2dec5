// Writes whisper.cpp ggml model files with random weights (small hparams for tests, the real
// shapes for tools/make_model), and records where every field starts, so that tests can truncate
// or corrupt a file at a chosen field and check the loader's message. The byte layout is the one
// whisper/model_file.h parses (whisper.cpp L1495-1960).
#ifndef GGML_WHISPER_WHISPER_SYNTHETIC_MODEL_H_
#define GGML_WHISPER_WHISPER_SYNTHETIC_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ggml/types.h"
#include "whisper/model_file.h"

namespace whisper {

struct SyntheticModelOptions {
  // Small defaults: 2 heads of 16, 1 encoder and 1 decoder layer, 16 audio positions (a 32-frame
  // mel window), 12 text positions. n_vocab is the smallest the loader accepts (tiny.en's).
  WhisperHparams hparams = {/*n_vocab=*/51864, /*n_audio_ctx=*/16, /*n_audio_state=*/32,
                            /*n_audio_head=*/2, /*n_audio_layer=*/1, /*n_text_ctx=*/12,
                            /*n_text_state=*/32, /*n_text_head=*/2, /*n_text_layer=*/1,
                            /*n_mels=*/80, /*ftype=*/1, /*qntvr=*/0};
  // Type of the kMatrix tensors; the conv kernels follow FtypeConvType(hparams.ftype).
  ggml_type matrix_type = GGML_TYPE_F16;
  int n_stored_tokens = 6;      // vocabulary entries written ("tok0", "tok1", ...) when `tokens` is empty
  std::vector<std::string> tokens;  // the stored vocabulary (ids 0, 1, ...); empty: the "tok<i>" names
  // The filterbank to write, [n_mels][201] row-major; empty: random U(0, 0.01).
  std::vector<float> mel_filters;
  bool write_tensors = true;    // false: a header-only file
  uint32_t seed = 1;
};

// One field of the written file: its first byte and a name like "hparams.n_mels" or
// "tensor 'encoder.conv1.weight' ne[1]".
struct FieldMark {
  size_t offset;
  std::string name;
};

struct SyntheticModel {
  std::vector<uint8_t> bytes;
  std::vector<FieldMark> fields;  // in file order
  size_t tensors_offset = 0;
};

// Writes the file image. Weights: matrices ~ U(-1, 1) / sqrt(ne0), biases and embeddings
// ~ U(-0.1, 0.1), LayerNorm weights ~ 1 + U(-0.1, 0.1); quantized with the reference quantizers
// (kernels/quant_ref.h). Mel filters are options.mel_filters, or U(0, 0.01) when that is empty
// (the caller makes sure a given one has n_mels * 201 values). Deterministic for a given seed.
SyntheticModel MakeSyntheticModel(const SyntheticModelOptions& options);

// Writes `bytes` to a new file under TEST_TMPDIR (or /tmp) named `name`; returns its path.
std::string WriteTempFile(const std::string& name, const std::vector<uint8_t>& bytes);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_SYNTHETIC_MODEL_H_
