// Whisper's log-mel spectrogram front end.
//
// Algorithm (whisper.cpp src/whisper.cpp `log_mel_spectrogram`, L3005-3272; equal to OpenAI
// whisper/audio.py `log_mel_spectrogram` after `pad_or_trim`-style padding):
//   1. Pad the n_samples input: 200 reflected samples in front (samples[200], ..., samples[1]),
//      then the audio, then 480000 + 200 zeros (30 s of silence plus half a window; not
//      reflected). Frame i covers padded[160 i, 160 i + 400).
//   2. n_len = (padded_len - 400) / 160 = (n_samples + 480000) / 160 frames (the STFT's last
//      frame is dropped, as `stft[..., :-1]` does in OpenAI's code).
//   3. Per frame: multiply by the periodic Hann window 0.5 (1 - cos(2 pi j / 400)), real FFT
//      (kissfft `kiss_fftr`, n = 400 = 2 * 200, mixed radix 4*2*5*5), power re^2 + im^2 of
//      bins 0..200.
//   4. mel[m][i] = log10(max(sum_k filters[m][k] * power[k], 1e-10)), with the sum in double
//      (whisper.cpp also sums in double). Frames that lie entirely in the zero padding are
//      exactly log10(1e-10) without an FFT.
//   5. Global normalization: mmax = max(mel) - 8; mel = (max(mel, mmax) + 4) / 4, computed in
//      double and stored as float (whisper.cpp L3241-3256).
//
// Differences from whisper.cpp, all below float rounding of the result's inputs: kissfft instead
// of whisper.cpp's own radix-2/naive-DFT FFT, and products formed in double before summing
// (whisper.cpp adds four float products in float, then to a double). Filter entries that are
// exactly 0 are skipped (they add +0.0: no change unless a power is inf/NaN).
#ifndef WHISPER_MEL_H_
#define WHISPER_MEL_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct kiss_fftr_state;

namespace whisper {

inline constexpr int kMelNFft = 400;      // WHISPER_N_FFT: samples per frame (25 ms)
inline constexpr int kMelHop = 160;       // WHISPER_HOP_LENGTH: samples between frames (10 ms)
inline constexpr int kMelNBins = 201;     // 1 + kMelNFft / 2 power-spectrum bins (0..8 kHz)
inline constexpr int kMelPadFront = 200;  // reflected samples before the audio (kMelNFft / 2)
inline constexpr int64_t kMelChunkSamples = 480000;  // 30 s of zeros appended to the audio

// Number of frames (whisper.cpp `mel.n_len`) for `n_samples` of 16 kHz audio:
// (n_samples + 480000) / 160. Example: 176000 samples (11 s) -> 4100 frames.
int64_t MelFrameCount(int64_t n_samples);

// Frames that overlap real audio (whisper.cpp `mel.n_len_org`, the decoder's seek end):
// 1 + (n_samples + 200 - 400) / 160. Example: 176000 samples -> 1099.
int64_t MelFrameCountOrg(int64_t n_samples);

// A computed log-mel spectrogram. `data` is row-major [n_mels][n_len] float:
// data[mel * n_len + frame], i.e. ggml ne = [n_len, n_mels] (ne0 = time), the layout whisper.cpp
// copies into the encoder's input tensor. Values are normalized (step 5 above).
struct MelView {
  const float* data = nullptr;
  int n_mels = 0;
  int64_t n_len = 0;      // MelFrameCount(n_samples)
  int64_t n_len_org = 0;  // MelFrameCountOrg(n_samples)

  float at(int mel, int64_t frame) const { return data[mel * n_len + frame]; }
};

// Computes log-mel spectrograms with all buffers allocated up front.
//
// Memory: Create() allocates the filters, per-thread FFT state and scratch, the n_threads - 1
// worker threads (started once and reused), and the output for `max_samples` samples
// (4 * n_mels * MelFrameCount(max_samples) bytes). Compute() on at most that many samples
// performs no heap allocation, for any thread count. A longer input grows the output buffer
// once (the only allocation Compute can make); later calls up to the new size are again
// allocation-free.
//
// Threading: frames are split into n_threads contiguous ranges; each frame is computed
// independently by the same code, so the output is bit-identical for every n_threads.
// Compute() is not reentrant: one call at a time per object.
class MelSpectrogram {
 public:
  // `filters` is the mel filterbank, row-major [n_mels][n_bins] float (ggml ne = [n_bins,
  // n_mels]) as stored in the ggml model file (80 x 201 for all released Whisper models except
  // large-v3's 128); it is copied. `max_samples` (16 kHz samples) sizes the output buffer; 0
  // defers that to the first Compute().
  // Errors: InvalidArgument if filters is null, n_mels < 1, n_bins != 201, a filter value is
  // not finite, n_threads < 1, or max_samples < 0; ResourceExhausted if a thread or the FFT
  // state cannot be created.
  static absl::StatusOr<std::unique_ptr<MelSpectrogram>> Create(const float* filters, int n_mels,
                                                                int n_bins, int n_threads,
                                                                int64_t max_samples);

  ~MelSpectrogram();
  MelSpectrogram(const MelSpectrogram&) = delete;
  MelSpectrogram& operator=(const MelSpectrogram&) = delete;

  // Computes the normalized log-mel of `n_samples` 16 kHz mono samples (ne = [n_samples]).
  // The returned view points into this object and stays valid until the next Compute() or
  // destruction. Non-finite samples are not checked and propagate into the output.
  // Errors: InvalidArgument if samples is null or n_samples < 201 (the front reflect padding
  // reads samples[1..200]; whisper.cpp reads out of bounds instead, and rejects input shorter
  // than 1600 samples later anyway).
  absl::StatusOr<MelView> Compute(const float* samples, int64_t n_samples);

  int n_mels() const { return n_mels_; }
  int n_threads() const { return n_threads_; }
  // Largest n_samples that Compute() handles without allocating.
  int64_t capacity_samples() const { return capacity_samples_; }

 private:
  // Per-thread FFT state and scratch; never shared between threads (kiss_fftr writes to
  // its cfg's internal buffer).
  struct Worker {
    kiss_fftr_state* fft = nullptr;
    std::vector<float> frame;     // [kMelNFft] windowed samples
    std::vector<float> spectrum;  // [2 * kMelNBins] interleaved re, im (kiss_fft_cpx)
    std::vector<float> power;     // [kMelNBins]
    double max = 0.0;             // pass-1 maximum of this thread's frames
  };

  enum class Pass { kFrames, kNormalize };

  MelSpectrogram(int n_mels, int n_threads);
  void ComputeFrame(Worker& w, int64_t frame);
  void RunPass(int ith, Pass pass);
  void RunAllThreads(Pass pass);
  void WorkerLoop(int ith);

  const int n_mels_;
  const int n_threads_;
  std::vector<float> filters_;  // [n_mels][kMelNBins]
  std::vector<int> bin_begin_;  // [n_mels] first nonzero filter bin of each row
  std::vector<int> bin_end_;    // [n_mels] one past the last nonzero filter bin
  std::vector<float> hann_;     // [kMelNFft] periodic Hann window
  std::vector<Worker> workers_;
  std::vector<float> out_;  // [n_mels][n_len] for capacity_samples_
  int64_t capacity_samples_ = 0;

  // Arguments of the current Compute(), read by the workers.
  const float* samples_ = nullptr;
  int64_t n_samples_ = 0;
  int64_t n_len_ = 0;
  int64_t n_fft_frames_ = 0;  // frames [0, n_fft_frames_) overlap the audio or its reflection
  double mmax_ = 0.0;         // global max - 8, for the normalization pass

  // Persistent worker threads 1..n_threads-1 (thread 0 is the caller). A pass is published by
  // bumping generation_ under mu_; the caller waits until pending_ drops to 0.
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable start_cv_;
  std::condition_variable done_cv_;
  uint64_t generation_ = 0;
  int pending_ = 0;
  Pass pass_ = Pass::kFrames;
  bool stop_ = false;
};

}  // namespace whisper

#endif  // WHISPER_MEL_H_
