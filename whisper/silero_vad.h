// The Silero VAD v6 model (faster-whisper 1.2.1's faster_whisper/assets/silero_vad_v6.onnx,
// converted by tools/convert/convert_vad.py into whisper.cpp's Silero file layout) as a ggml graph on this
// runtime's kernels: speech probabilities of 512-sample windows of 16 kHz audio.
//
// Per window (faster-whisper vad.py SileroVADModel.__call__, and the ONNX graph):
//   input  = the previous window's last 64 samples (zeros for the first) + the window's 512
//   padded = input reflect-padded by 128 on each side (832 samples; done on the host)
//   stft   = conv1d(padded, basis [256, 1, 258], stride 128): 5 frames, of which frames 1 .. 4
//            (only those are computed: the conv1d of padded[128 ..])
//   mag    = sqrt(real^2 + imag^2)                                     [4 frames, 129 bins]
//   x      = relu(conv1d(x, w_i, pad 1, stride 1, 2, 2, 1) + b_i), i = 0..3 ->     [1, 128]
//   LSTM   (PyTorch's gates i, f, g, o; h and c carried from window to window):
//            gates = W_ih x + b_ih + W_hh h + b_hh; c = f c + i g; h = o tanh(c)
//   prob   = sigmoid(w . relu(h) + b)
// Everything up to and including W_ih x + b_ih has no state from window to window: Run computes it
// for up to kBlock windows in one graph (weights read once per block, not per window), on
// SetThreads' threads, then the LSTM cell and the output window by window on the calling thread
// (the kernels those ops run, called directly: SileroVad::Cell).
// Ops of the front end: ggml_im2col_1d + ggml_mul_mat (the convolutions; ggml_conv_1d's final
// reshape holds only for one window), views, ggml_permute + ggml_cont, ggml_sqr / ggml_sqrt /
// ggml_relu, ggml_add, ggml_mul_mat; of the cell, the kernels of ggml_mul_mat, ggml_add,
// ggml_sigmoid, ggml_tanh, ggml_mul and ggml_relu (kernels/matmul.h, vec.h, activations.h).
#ifndef GGML_WHISPER_WHISPER_SILERO_VAD_H_
#define GGML_WHISPER_WHISPER_SILERO_VAD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ggml/ggml.h"
#include "ggml/graph.h"
#include "cpu/threadpool.h"

namespace whisper {

class SileroVad {
 public:
  static constexpr int kWindow = 512;   // samples per window (32 ms at 16 kHz)
  static constexpr int kContext = 64;   // samples of the previous window in front of each
  static constexpr int kHidden = 128;   // LSTM state
  static constexpr int kBlock = 64;     // windows per front-end graph in Run

  // Reads a Silero file (layout in tools/convert/convert_vad.py): every size is checked against v6's
  // architecture before anything is allocated. Errors: NotFound / DataLoss (truncated or empty) /
  // the wrong kind of file as CheckModelFileKind (model_kind.h) names it (a Whisper model, GGUF,
  // CTranslate2, another magic; its bytes are not shown) /
  // InvalidArgument naming the file, the field and what was expected (model type,
  // version major != 6, other shapes, an unknown or duplicate tensor, F16 data); ResourceExhausted
  // when memory cannot be had.
  static absl::StatusOr<std::unique_ptr<SileroVad>> Load(const std::string& path);
  // The same from the file's bytes; `name` names it in errors.
  static absl::StatusOr<std::unique_ptr<SileroVad>> LoadFromBytes(const std::string& name, const std::string& bytes);
  ~SileroVad();
  SileroVad(const SileroVad&) = delete;
  SileroVad& operator=(const SileroVad&) = delete;

  // Clears the LSTM state and the context samples (a new stream).
  void Reset();

  // Threads (the caller included) that compute Run's blocked front end from now on; 1 (the
  // default) keeps it on the calling thread. The probabilities do not change with it (bit for bit:
  // every output element is computed by one thread with the same kernel, cpu/graph_compute_matmul.cc
  // splits the products at whole 64-row blocks). Allocates the pool (n_threads - 1 threads, idle
  // between calls) and the larger scratch here, not in Run. Errors: InvalidArgument for n_threads
  // not in [1, 64]; ResourceExhausted when the threads cannot be started.
  absl::Status SetThreads(int n_threads);
  int n_threads() const { return n_threads_; }

  // Speech probability of the next window: samples[0 .. 512) (16 kHz mono), the context and the
  // LSTM state carried from the previous call. No heap allocation. Errors: InvalidArgument for a
  // null pointer; Internal when the graph cannot be computed.
  absl::StatusOr<float> Next(const float* samples);

  // Speech probabilities of n_windows consecutive windows, samples[0 .. 512 n_windows) (16 kHz
  // mono), into probs[0 .. n_windows): the same as n_windows calls of Next (equal within float
  // rounding: the convolutions' products are summed in blocks), the context and the LSTM state
  // carried in and out. The front end runs up to kBlock windows per graph (a short remainder one
  // at a time).
  // No heap allocation. Errors: InvalidArgument for a null pointer or n_windows < 0; Internal
  // when a graph cannot be computed.
  absl::Status Run(const float* samples, int n_windows, float* probs);

 private:
  // The stateless front end for n windows: in [832, n] reflect-padded inputs -> pre [512, n]
  // = W_ih x + b_ih.
  struct FrontEnd {
    int n = 0;
    ggml_context* ctx = nullptr;  // its tensors' data included
    ggml_cgraph* graph = nullptr;
    ggml_tensor* in = nullptr;
    ggml_tensor* pre = nullptr;
  };
  SileroVad() = default;
  absl::Status BuildGraphs();
  absl::Status BuildFrontEnd(int n, FrontEnd* fe);
  // The LSTM step of one window from its pre-activations W_ih x + b_ih ([512]): h_ and c_ move on,
  // *prob is the window's speech probability. Internal if a kernel rejects its arguments.
  absl::Status Cell(const float* pre, float* prob);
  // Front end of count <= fe.n windows starting at samples, then the LSTM step of each into probs.
  absl::Status RunBlock(FrontEnd& fe, const float* samples, int count, float* probs);
  // On n_threads threads of pool_ (1: the calling thread).
  absl::Status Compute(ggml_cgraph* graph, int n_threads = 1);

  ggml_context* weights_ = nullptr;  // the file's tensors (F32)
  ggml_tensor* basis_ = nullptr;     // ne [256, 1, 258]
  ggml_tensor* conv_w_[4] = {};      // ne [3, in, out]
  ggml_tensor* conv_b_[4] = {};      // ne [out]
  ggml_tensor* w_ih_ = nullptr;      // ne [128, 512]
  ggml_tensor* w_hh_ = nullptr;
  ggml_tensor* b_ih_ = nullptr;      // ne [512]
  ggml_tensor* b_hh_ = nullptr;
  ggml_tensor* out_w_ = nullptr;     // ne [128]
  ggml_tensor* out_b_ = nullptr;     // ne [1]

  FrontEnd one_;                       // 1 window (Next, and the windows after the last block)
  FrontEnd block_;                     // kBlock windows
  float h_[kHidden] = {};              // LSTM state
  float c_[kHidden] = {};
  float cell_[10 * kHidden] = {};      // Cell's scratch
  std::vector<uint8_t> work_;
  int n_threads_ = 1;
  ggml_threadpool* pool_ = nullptr;  // n_threads_ > 1 only
  float context_[kContext] = {};
};

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_SILERO_VAD_H_
