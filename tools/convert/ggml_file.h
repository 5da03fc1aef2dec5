// whisper.cpp's legacy ggml model file: serialization (for the converter) and a parser (for tests
// and inspection). Layout (little-endian, no alignment or padding; whisper.cpp src/whisper.cpp
// whisper_model_load, models/convert-pt-to-ggml.py):
//   uint32 magic 0x67676d6c ("ggml")
//   int32 x 11 hparams: n_vocab, n_audio_ctx, n_audio_state, n_audio_head, n_audio_layer,
//                       n_text_ctx, n_text_state, n_text_head, n_text_layer, n_mels, ftype
//   int32 n_mel, int32 n_fft, then n_mel x n_fft float32 mel filters ([mel][bin] order)
//   int32 n_tokens, then per token: uint32 length, the raw bytes (no NUL)
//   tensor records until EOF: int32 n_dims, int32 name length, int32 ggml_type,
//                             int32 ne[n_dims] (ne[0] = innermost = PyTorch's last dim),
//                             the name bytes, the data (row-major, ne[0] contiguous)
#ifndef GGML_WHISPER_TOOLS_CONVERT_GGML_FILE_H_
#define GGML_WHISPER_TOOLS_CONVERT_GGML_FILE_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/convert/file_util.h"

namespace ggml_whisper::convert {

inline constexpr uint32_t kGgmlFileMagic = 0x67676d6c;

// The ggml_type ids (ggml.h) the converter writes: GGML_TYPE_F32 and GGML_TYPE_F16.
enum class GgmlFileType : int32_t { kF32 = 0, kF16 = 1 };
// Bytes per element: 4 or 2; 0 for any other value.
size_t GgmlFileTypeSize(GgmlFileType type);
// "f32", "f16" (ggml's names); "unknown" otherwise.
const char* GgmlFileTypeName(GgmlFileType type);

// The 11 int32 hparams, in file order. ftype: 0 all F32, 1 mostly F16 (the converters' values).
struct WhisperHparams {
  int32_t n_vocab = 0;
  int32_t n_audio_ctx = 0;
  int32_t n_audio_state = 0;
  int32_t n_audio_head = 0;
  int32_t n_audio_layer = 0;
  int32_t n_text_ctx = 0;
  int32_t n_text_state = 0;
  int32_t n_text_head = 0;
  int32_t n_text_layer = 0;
  int32_t n_mels = 0;
  int32_t ftype = 0;

  bool operator==(const WhisperHparams& o) const;
};

// Mel filterbank, [n_mel][n_fft] row-major: tiny.en has n_mel 80, n_fft 201 (bins of a 400-point
// FFT), weights from OpenAI's librosa-based mel_filters.npz.
struct MelFilters {
  int32_t n_mel = 0;
  int32_t n_fft = 0;
  std::vector<float> data;  // n_mel * n_fft
};

// The bytes before the first tensor record: magic, hparams, mel filters, vocabulary (raw token
// bytes). tiny.en: 586,235 bytes. Errors: InvalidArgument when mel.data.size() is not
// n_mel * n_fft or a dimension is not positive.
absl::StatusOr<std::string> SerializeGgmlHeader(const WhisperHparams& hparams,
                                                const MelFilters& mel,
                                                const std::vector<std::string>& vocab);

// One tensor record's header: n_dims, name length, type, ne[], name (the data follows it).
// `ne` is in ggml order (ne[0] innermost), 1 to 4 entries, each in 1..INT32_MAX.
// Errors: InvalidArgument naming the tensor for a bad rank, dimension, name or type.
absl::StatusOr<std::string> SerializeTensorRecordHeader(absl::string_view name, GgmlFileType type,
                                                        const std::vector<int64_t>& ne);

// Streams a model file: the header first, then tensor records, then Finish(). The file appears
// under its final path only after Finish() succeeds (AtomicFileWriter).
class GgmlModelWriter {
 public:
  // Creates `path` and writes the header. Errors: those of AtomicFileWriter::Open and
  // SerializeGgmlHeader, and DataLoss on a failed write.
  static absl::StatusOr<GgmlModelWriter> Create(const std::string& path,
                                                const WhisperHparams& hparams,
                                                const MelFilters& mel,
                                                const std::vector<std::string>& vocab);

  // Appends one record. `data` holds product(ne) elements of `type`. Errors: InvalidArgument
  // when nbytes disagrees with ne and type (sizes in the message), those of
  // SerializeTensorRecordHeader, DataLoss on a failed write.
  absl::Status AddTensor(absl::string_view name, GgmlFileType type, const std::vector<int64_t>& ne,
                         const void* data, size_t nbytes);

  // Closes and renames the file into place. Errors: DataLoss.
  absl::Status Finish();

  int n_tensors() const { return n_tensors_; }
  uint64_t header_bytes() const { return header_bytes_; }
  uint64_t tensor_data_bytes() const { return tensor_data_bytes_; }
  uint64_t bytes_written() const { return file_.offset(); }

 private:
  explicit GgmlModelWriter(AtomicFileWriter file) : file_(std::move(file)) {}

  AtomicFileWriter file_;
  int n_tensors_ = 0;
  uint64_t header_bytes_ = 0;
  uint64_t tensor_data_bytes_ = 0;
};

// A parsed model file (for tests and inspection). Tensor data stays in the caller's image.
struct GgmlTensorRecord {
  std::string name;
  GgmlFileType type = GgmlFileType::kF32;
  std::vector<int64_t> ne;  // ggml order
  size_t data_offset = 0;   // into the file image
  size_t nbytes = 0;
};

struct GgmlModelFile {
  WhisperHparams hparams;
  MelFilters mel;
  std::vector<std::string> vocab;
  size_t header_bytes = 0;  // offset of the first tensor record
  std::vector<GgmlTensorRecord> tensors;
};

// Parses a whole file image. Errors (naming `source`, the field and the offset): DataLoss for a
// truncated image; InvalidArgument for a bad magic, negative counts, n_dims outside 1..4, an
// empty or over-long name, or a tensor type other than F32/F16 (this parser's scope: the
// converter's output, not quantized files).
absl::StatusOr<GgmlModelFile> ParseGgmlModelFile(const std::vector<uint8_t>& image,
                                                 absl::string_view source);

}  // namespace ggml_whisper::convert

#endif  // GGML_WHISPER_TOOLS_CONVERT_GGML_FILE_H_
