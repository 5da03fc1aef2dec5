// A loaded Whisper model: hparams, vocabulary, mel filterbank and the weight tensors, all
// weights in ONE CPU buffer.
//
// Loading (whisper.cpp whisper_model_load, L1495-1960, with the checks of whisper/model_file.h):
// the file is mapped read-only (mmap), parsed and validated; the weight tensors are created in a
// no_alloc ggml context (metadata only: ggml_tensor_overhead() per tensor), placed in one buffer
// by ggml_backend_alloc_ctx_tensors (alloc/buffer.h), and each record's bytes are copied from the
// mapping into its tensor's data. The mapping is released before Load returns.
#ifndef GGML_WHISPER_WHISPER_MODEL_H_
#define GGML_WHISPER_WHISPER_MODEL_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "alloc/buffer.h"
#include "ggml/ggml.h"
#include "whisper/model_file.h"
#include "whisper/vocab.h"

namespace whisper {

// One attention sub-block with its pre-LayerNorm ("attn" or "cross_attn" in the file). Shapes
// (ggml ne) for width S: ln_w, ln_b, q_b, v_b, o_b [S]; q_w, k_w, v_w, o_w [S, S]. The key
// projection has no bias.
struct AttentionWeights {
  ggml_tensor* ln_w = nullptr;
  ggml_tensor* ln_b = nullptr;
  ggml_tensor* q_w = nullptr;
  ggml_tensor* q_b = nullptr;
  ggml_tensor* k_w = nullptr;
  ggml_tensor* v_w = nullptr;
  ggml_tensor* v_b = nullptr;
  ggml_tensor* o_w = nullptr;
  ggml_tensor* o_b = nullptr;
};

// The MLP sub-block: ln [S]; fc1 ("mlp.0") w [S, 4S], b [4S]; fc2 ("mlp.2") w [4S, S], b [S].
struct MlpWeights {
  ggml_tensor* ln_w = nullptr;
  ggml_tensor* ln_b = nullptr;
  ggml_tensor* fc1_w = nullptr;
  ggml_tensor* fc1_b = nullptr;
  ggml_tensor* fc2_w = nullptr;
  ggml_tensor* fc2_b = nullptr;
};

struct EncoderLayerWeights {
  AttentionWeights attn;
  MlpWeights mlp;
};

struct DecoderLayerWeights {
  AttentionWeights attn;
  AttentionWeights cross;
  MlpWeights mlp;
};

struct WhisperWeights {
  // Encoder: positional embedding [S, n_audio_ctx] F32; conv1 [3, n_mels, S] and conv2
  // [3, S, S] F16 (F32 in ftype-0 files) with biases [1, S]; ln_post [S].
  ggml_tensor* e_pe = nullptr;
  ggml_tensor* conv1_w = nullptr;
  ggml_tensor* conv1_b = nullptr;
  ggml_tensor* conv2_w = nullptr;
  ggml_tensor* conv2_b = nullptr;
  ggml_tensor* e_ln_w = nullptr;
  ggml_tensor* e_ln_b = nullptr;
  std::vector<EncoderLayerWeights> encoder;
  // Decoder: positional embedding [S, n_text_ctx] F32; token embedding [S, n_vocab] (also the
  // output projection: logits = d_te x h); final LayerNorm [S].
  ggml_tensor* d_pe = nullptr;
  ggml_tensor* d_te = nullptr;
  ggml_tensor* d_ln_w = nullptr;
  ggml_tensor* d_ln_b = nullptr;
  std::vector<DecoderLayerWeights> decoder;
};

class WhisperModel {
 public:
  // Loads the whisper.cpp ggml model file at `path`. Errors: NotFound / PermissionDenied /
  // Internal when the file cannot be opened or mapped (naming path and errno text); the parse
  // and validation errors of whisper/model_file.h (DataLoss for a truncated file,
  // InvalidArgument otherwise, including the header-only file: "no tensors: ..."); Internal
  // when the weight buffer cannot be allocated.
  //
  // weight_type (faster-whisper's compute_type at load; whisper.h ggml_weight_type): when set,
  // the tensors //tools/quantize converts (whisper/weight_convert.h ShouldQuantize: the 2-D
  // matrices and the token embedding) whose ne0 is a multiple of the type's block size are
  // converted to it as they are read, with //tools/quantize's row conversion (ConvertRow), so a
  // model loaded as Q8_0 holds the bytes of the file `quantize ... q8_0` writes from the same
  // F32/F16 file. Tensors already of that type are read as they are; others (conv kernels,
  // biases, LayerNorms, positional embeddings) keep their stored type. A quantized source is
  // dequantized first. Memory: the buffer is allocated in the converted types, and the file's
  // bytes pass through one 4 MiB scratch buffer per loader thread (no second copy of the model).
  // Errors: InvalidArgument naming the value when weight_type is not a weight type
  // (IsWeightType: F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0).
  static absl::StatusOr<std::unique_ptr<WhisperModel>> Load(const std::string& path,
                                                            std::optional<ggml_type> weight_type = std::nullopt);
  // The same from a file image in memory (`size` bytes at `data`, copied: the caller may free
  // it after); `path` names it in messages and path(). Errors as Load's after the file is open.
  static absl::StatusOr<std::unique_ptr<WhisperModel>> LoadFromBuffer(
      const void* data, size_t size, const std::string& path, std::optional<ggml_type> weight_type = std::nullopt);

  ~WhisperModel();
  WhisperModel(const WhisperModel&) = delete;
  WhisperModel& operator=(const WhisperModel&) = delete;

  const std::string& path() const { return path_; }
  const WhisperHparams& hparams() const { return hparams_; }
  const WhisperVocab& vocab() const { return vocab_; }
  const SpecialTokens& special() const { return vocab_.special(); }
  // The mel filterbank: row-major [n_mels][n_fft] (ne = [n_fft, n_mels]), n_fft = 201.
  const std::vector<float>& mel_filters() const { return mel_filters_; }
  int n_fft() const { return n_fft_; }
  const WhisperWeights& weights() const { return weights_; }
  // Bytes of the weight buffer (tensor data, each tensor padded to the buffer alignment).
  size_t weights_buffer_size() const;
  // Bytes of tensor data as stored in the file (tiny.en F16: 77,110,272).
  size_t weights_file_bytes() const { return weights_file_bytes_; }
  int n_tensors() const { return n_tensors_; }
  // The weight tensor of this whisper.cpp name (e.g. "encoder.conv1.weight"), or nullptr.
  const ggml_tensor* tensor(const std::string& name) const;
  // Scans every weight tensor, in file order, for a NaN or an infinity (F16 and quantized
  // tensors widened row by row with RowToF32, whisper/weight_convert.h). OK when all are finite;
  // else DataLoss naming the first: "model 'PATH': tensor 'decoder.ln.weight' holds NaN at
  // element 17 (expected finite weights): the file is corrupt" (element: the flat index, ne0
  // fastest; "+Inf" / "-Inf" for an infinity). Not run at load (it costs ~10% of the load time):
  // InferenceState calls it when a computed value is not finite. Allocates one row of floats.
  absl::Status CheckWeightsFinite() const;
  // Tensors converted at load to the weight type (0 without one).
  int n_converted() const { return n_converted_; }
  // "tiny", "base", "small", "medium", "large" from n_audio_layer (whisper.cpp L1523-1547), or
  // "unknown".
  const char* type_name() const;

 private:
  WhisperModel() = default;

  // Called with byte ranges of the image the loader has finished reading (may be nullptr).
  using ReleaseFn = void (*)(void* arg, size_t offset, size_t n);
  // Parses the image at `data`; the tensors' bytes are read from `fd` with pread when fd >= 0
  // (a model file: the image is then only read for the header), else copied from the image.
  static absl::StatusOr<std::unique_ptr<WhisperModel>> LoadImage(const void* data, size_t size,
                                                                 const std::string& path,
                                                                 ReleaseFn release, void* release_arg,
                                                                 int fd, std::optional<ggml_type> weight_type);

  std::string path_;
  WhisperHparams hparams_;
  WhisperVocab vocab_;
  std::vector<float> mel_filters_;
  int n_fft_ = 0;
  WhisperWeights weights_;
  ggml_context* ctx_ = nullptr;              // weight metadata (no_alloc)
  ggml_backend_buffer_t buffer_ = nullptr;  // weight data
  size_t weights_file_bytes_ = 0;
  int n_tensors_ = 0;
  int n_converted_ = 0;
};

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_MODEL_H_
