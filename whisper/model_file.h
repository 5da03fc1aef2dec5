// whisper.cpp's legacy ggml model file: parsing and validation of the header, mel filters,
// vocabulary and tensor records.
//
// Format (whisper.cpp src/whisper.cpp `whisper_model_load`, L1495-1960; little-endian, no
// alignment or padding anywhere):
//   uint32 magic 0x67676d6c ("ggml")
//   int32 x 11 hparams: n_vocab, n_audio_ctx, n_audio_state, n_audio_head, n_audio_layer,
//                       n_text_ctx, n_text_state, n_text_head, n_text_layer, n_mels, ftype
//                       (ftype = qntvr * 1000 + ggml_ftype)
//   int32 n_mel, int32 n_fft, then n_mel * n_fft float32 filters, row-major [n_mel][n_fft]
//   int32 n_tokens, then per token: uint32 len, len bytes (no NUL)
//   tensor records until EOF: int32 n_dims (1..4), int32 name_len, int32 ttype (ggml_type),
//                             int32 ne[n_dims] (ne0 first), name bytes, raw data
//
// Unlike whisper.cpp, a file with no tensor records is an error (whisper.cpp accepts it as an
// "empty model for testing" and then produces no output), and every check names the file, the
// field or tensor, the byte offset and the expected value.
#ifndef GGML_WHISPER_WHISPER_MODEL_FILE_H_
#define GGML_WHISPER_WHISPER_MODEL_FILE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ggml/types.h"

namespace whisper {

inline constexpr uint32_t kGgmlFileMagic = 0x67676d6c;  // "ggml" read as a little-endian uint32
inline constexpr int kQntVersionFactor = 1000;          // GGML_QNT_VERSION_FACTOR
inline constexpr float kLayerNormEps = 1e-5f;           // hard-coded in whisper.cpp (L602)

// The 11 int32 hyperparameters of the file, in file order, with ftype split as whisper.cpp does:
// ftype = stored % 1000 (a ggml_ftype), qntvr = stored / 1000 (2 for files written by
// whisper.cpp's quantize, 0 otherwise). Values of tiny.en: 51864, 1500, 384, 6, 4, 448, 384,
// 6, 4, 80, ftype 1, qntvr 0.
struct WhisperHparams {
  int32_t n_vocab = 0;
  int32_t n_audio_ctx = 0;    // encoder positions (1500 = 3000 mel frames / conv2 stride 2)
  int32_t n_audio_state = 0;  // encoder width
  int32_t n_audio_head = 0;
  int32_t n_audio_layer = 0;
  int32_t n_text_ctx = 0;  // decoder positions (448)
  int32_t n_text_state = 0;
  int32_t n_text_head = 0;
  int32_t n_text_layer = 0;
  int32_t n_mels = 0;
  int32_t ftype = 0;  // ggml_ftype: 0 F32, 1 F16, 2 Q4_0, 3 Q4_1, 7 Q8_0, 8 Q5_0, 9 Q5_1
  int32_t qntvr = 0;
};

// "f32", "f16", "q4_0", ... or "unknown".
const char* FtypeName(int32_t ftype);
// The type of the conv-stem kernels: F32 when ftype is 0, else F16 (whisper.cpp's `vtype`, L1678).
ggml_type FtypeConvType(int32_t ftype);

// Everything before the tensor records.
struct ModelFileHeader {
  WhisperHparams hparams;
  int32_t n_mel = 0;                // rows of the mel filterbank (== hparams.n_mels)
  int32_t n_fft = 0;                // columns: 201 power-spectrum bins
  std::vector<float> mel_filters;   // row-major [n_mel][n_fft], i.e. ne = [n_fft, n_mel]
  std::vector<std::string> tokens;  // the stored vocabulary, ids 0 .. tokens.size() - 1
  size_t tensors_offset = 0;        // file offset (bytes) of the first tensor record
};

// Parses and validates the header of the file image `data` (`size` bytes). `file` names it in
// errors. Errors: the wrong kind of file as CheckModelFileKind (model_kind.h) names it, without
// the file's bytes (DataLoss for an empty file; InvalidArgument for a Silero VAD model, GGUF,
// CTranslate2 or another magic); DataLoss "truncated" naming the field and offset; InvalidArgument
// for an invalid hparam (every one > 0; n_vocab 51864, 51865 or 51866; layer counts at most 128;
// n_mels 80 or 128; state divisible by heads; n_audio_state == n_text_state; ftype one of 0, 1, 2,
// 3, 7, 8, 9), n_mel != n_mels, n_fft != 201, a non-finite filter
// value, or more stored tokens than n_vocab.
absl::StatusOr<ModelFileHeader> ParseModelFileHeader(const uint8_t* data, size_t size,
                                                     absl::string_view file);

// What a tensor of the model must look like.
enum class TensorRole {
  kF32,     // vectors (biases, LayerNorm), conv biases, positional embeddings: F32 only
  kConv,    // conv-stem kernels: FtypeConvType(ftype)
  kMatrix,  // 2-D weights and the token embedding: F32, F16, Q4_0, Q4_1, Q5_0, Q5_1 or Q8_0
};

struct TensorSpec {
  std::string name;
  int64_t ne[4] = {1, 1, 1, 1};  // ggml order (ne0 = row length); trailing dims 1
  TensorRole role = TensorRole::kF32;
};

// The tensors a model with `hparams` has (whisper.cpp L1735-1835, names src/whisper-arch.h), with
// their shapes: 7 + 15 per encoder layer + 4 + 24 per decoder layer (167 for tiny). Example:
// "encoder.conv1.weight" ne = [3, n_mels, n_audio_state]; "decoder.token_embedding.weight"
// ne = [n_text_state, n_vocab].
std::vector<TensorSpec> ExpectedTensors(const WhisperHparams& hparams);

// One tensor record of the file.
struct TensorRecord {
  std::string name;
  ggml_type type = GGML_TYPE_F32;
  int n_dims = 0;
  int64_t ne[4] = {1, 1, 1, 1};
  size_t data_offset = 0;  // file offset (bytes) of the raw data
  size_t nbytes = 0;       // bytes of raw data
};

// Parses the tensor records from header.tensors_offset to the end of the image and checks each
// against ExpectedTensors(header.hparams). Returns the records in ExpectedTensors order (index i
// describes spec i). Errors (InvalidArgument unless noted), each naming `file`, the tensor and the
// record's offset: no records at all ("no tensors: file has header, mel filters and vocabulary
// only"); truncated record (DataLoss, naming the field); n_dims not 1..4; bad name length;
// unknown name; duplicate; type not allowed (expected vs got); shape differs (expected vs got);
// a row not a whole number of blocks; a tensor's byte size past the file's (computed with overflow
// checks); tensors missing at EOF (the first missing name and count).
absl::StatusOr<std::vector<TensorRecord>> ParseTensorRecords(const uint8_t* data, size_t size,
                                                             const ModelFileHeader& header,
                                                             absl::string_view file);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_MODEL_FILE_H_
