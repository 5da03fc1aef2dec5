#include "whisper/mel.h"

#include <kiss_fftr.h>

#include <algorithm>
#include <cmath>
#include <system_error>
#include <utility>

#include "absl/strings/str_format.h"

namespace whisper {
namespace {

// log10 of whisper.cpp's power floor: the value of every frame with no signal.
float SilenceLevel() { return static_cast<float>(std::log10(1e-10)); }

}  // namespace

int64_t MelFrameCount(int64_t n_samples) {
  // padded = 200 + n + 480000 + 200; (padded - 400) / 160.
  return (n_samples + kMelChunkSamples) / kMelHop;
}

int64_t MelFrameCountOrg(int64_t n_samples) {
  return 1 + (n_samples + kMelPadFront - kMelNFft) / kMelHop;
}

MelSpectrogram::MelSpectrogram(int n_mels, int n_threads)
    : n_mels_(n_mels), n_threads_(n_threads) {}

absl::StatusOr<std::unique_ptr<MelSpectrogram>> MelSpectrogram::Create(const float* filters,
                                                                       int n_mels, int n_bins,
                                                                       int n_threads,
                                                                       int64_t max_samples) {
  if (filters == nullptr) return absl::InvalidArgumentError("mel filters: null pointer");
  if (n_mels < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("mel filters: n_mels = %d, expected >= 1", n_mels));
  }
  if (n_bins != kMelNBins) {
    return absl::InvalidArgumentError(
        absl::StrFormat("mel filters: n_fft = %d bins, expected %d (1 + N_FFT/2 for N_FFT = %d)",
                        n_bins, kMelNBins, kMelNFft));
  }
  if (n_threads < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("mel: n_threads = %d, expected >= 1", n_threads));
  }
  if (max_samples < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("mel: max_samples = %d, expected >= 0", max_samples));
  }
  for (int64_t i = 0; i < int64_t{n_mels} * n_bins; ++i) {
    if (!std::isfinite(filters[i])) {
      return absl::InvalidArgumentError(
          absl::StrFormat("mel filters: value at [mel %d][bin %d] is %f, expected a finite number",
                          i / n_bins, i % n_bins, filters[i]));
    }
  }

  std::unique_ptr<MelSpectrogram> mel(new MelSpectrogram(n_mels, n_threads));
  mel->filters_.assign(filters, filters + int64_t{n_mels} * n_bins);
  mel->bin_begin_.assign(n_mels, 0);
  mel->bin_end_.assign(n_mels, 0);
  for (int m = 0; m < n_mels; ++m) {
    const float* row = filters + int64_t{m} * n_bins;
    int begin = 0, end = n_bins;
    while (begin < end && row[begin] == 0.0f) ++begin;
    while (end > begin && row[end - 1] == 0.0f) --end;
    mel->bin_begin_[m] = begin;
    mel->bin_end_[m] = end;
  }
  mel->hann_.resize(kMelNFft);
  for (int j = 0; j < kMelNFft; ++j) {
    // Periodic Hann (torch.hann_window(400)); whisper.cpp takes cosf of the angle rounded to
    // float and does the rest in double. Same here.
    const float angle = static_cast<float>(2.0 * M_PI * j / kMelNFft);
    mel->hann_[j] = static_cast<float>(0.5 * (1.0 - std::cos(angle)));
  }
  mel->workers_.resize(n_threads);
  for (Worker& w : mel->workers_) {
    w.fft = kiss_fftr_alloc(kMelNFft, /*inverse_fft=*/0, nullptr, nullptr);
    if (w.fft == nullptr) {
      return absl::ResourceExhaustedError("mel: kiss_fftr_alloc(400) failed");
    }
    w.frame.assign(kMelNFft, 0.0f);
    w.spectrum.assign(2 * kMelNBins, 0.0f);
    w.power.assign(kMelNBins, 0.0f);
  }
  mel->capacity_samples_ = max_samples;
  mel->out_.assign(static_cast<size_t>(n_mels) * MelFrameCount(max_samples), 0.0f);

  MelSpectrogram* self = mel.get();
  try {
    for (int ith = 1; ith < n_threads; ++ith) {
      mel->threads_.emplace_back([self, ith] { self->WorkerLoop(ith); });
    }
  } catch (const std::system_error& e) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("mel: could not start worker thread %d of %d: %s", mel->threads_.size() + 1,
                        n_threads, e.what()));
  }
  return mel;
}

MelSpectrogram::~MelSpectrogram() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
  for (Worker& w : workers_) kiss_fftr_free(w.fft);
}

absl::StatusOr<MelView> MelSpectrogram::Compute(const float* samples, int64_t n_samples) {
  if (samples == nullptr) return absl::InvalidArgumentError("mel: samples is null");
  if (n_samples <= kMelPadFront) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "mel: %d samples, expected at least %d (the front reflect padding reads samples[1..%d])",
        n_samples, kMelPadFront + 1, kMelPadFront));
  }
  const int64_t n_len = MelFrameCount(n_samples);
  const size_t needed = static_cast<size_t>(n_mels_) * n_len;
  if (out_.size() < needed) {
    out_.resize(needed);  // the one allocation: input longer than any before
    capacity_samples_ = n_samples;
  }
  samples_ = samples;
  n_samples_ = n_samples;
  n_len_ = n_len;
  // Frame i starts at audio index 160 i - 200; it touches the audio iff that is < n_samples.
  n_fft_frames_ = std::min(n_len, (n_samples + kMelPadFront + kMelHop - 1) / kMelHop);

  RunAllThreads(Pass::kFrames);
  // Every value is >= log10(1e-10), so the silence level is a valid starting maximum.
  double mmax = SilenceLevel();
  for (const Worker& w : workers_) mmax = std::max(mmax, w.max);
  mmax_ = mmax - 8.0;
  RunAllThreads(Pass::kNormalize);

  MelView view;
  view.data = out_.data();
  view.n_mels = n_mels_;
  view.n_len = n_len;
  view.n_len_org = MelFrameCountOrg(n_samples);
  return view;
}

void MelSpectrogram::ComputeFrame(Worker& w, int64_t i) {
  const float* x = samples_;
  const int64_t n = n_samples_;
  const int64_t start = i * kMelHop - kMelPadFront;  // audio index of window position 0
  float* frame = w.frame.data();
  if (start >= 0 && start + kMelNFft <= n) {
    for (int j = 0; j < kMelNFft; ++j) frame[j] = hann_[j] * x[start + j];
  } else {
    for (int j = 0; j < kMelNFft; ++j) {
      const int64_t idx = start + j;
      // Reflect (without repeating samples[0]) in front, zeros after the end.
      const float v = idx < 0 ? x[-idx] : (idx < n ? x[idx] : 0.0f);
      frame[j] = hann_[j] * v;
    }
  }
  kiss_fft_cpx* spectrum = reinterpret_cast<kiss_fft_cpx*>(w.spectrum.data());
  kiss_fftr(w.fft, frame, spectrum);
  float* power = w.power.data();
  for (int k = 0; k < kMelNBins; ++k) {
    power[k] = spectrum[k].r * spectrum[k].r + spectrum[k].i * spectrum[k].i;
  }
  float* out = out_.data();
  double local_max = w.max;
  for (int m = 0; m < n_mels_; ++m) {
    const float* filter = filters_.data() + static_cast<size_t>(m) * kMelNBins;
    double sum = 0.0;
    for (int k = bin_begin_[m]; k < bin_end_[m]; ++k) {
      sum += static_cast<double>(power[k]) * static_cast<double>(filter[k]);
    }
    const float value = static_cast<float>(std::log10(std::max(sum, 1e-10)));
    out[m * n_len_ + i] = value;
    local_max = std::max(local_max, static_cast<double>(value));
  }
  w.max = local_max;
}

void MelSpectrogram::RunPass(int ith, Pass pass) {
  Worker& w = workers_[ith];
  if (pass == Pass::kFrames) {
    w.max = SilenceLevel();
    // FFT frames: contiguous range per thread.
    const int64_t f0 = n_fft_frames_ * ith / n_threads_;
    const int64_t f1 = n_fft_frames_ * (ith + 1) / n_threads_;
    for (int64_t i = f0; i < f1; ++i) ComputeFrame(w, i);
    // Frames entirely in the zero padding: split the same way.
    const int64_t n_silent = n_len_ - n_fft_frames_;
    const int64_t s0 = n_fft_frames_ + n_silent * ith / n_threads_;
    const int64_t s1 = n_fft_frames_ + n_silent * (ith + 1) / n_threads_;
    const float silence = SilenceLevel();
    for (int m = 0; m < n_mels_; ++m) {
      float* row = out_.data() + m * n_len_;
      std::fill(row + s0, row + s1, silence);
    }
    return;
  }
  // Normalization: contiguous range of the flattened [n_mels][n_len] output per thread.
  const int64_t total = int64_t{n_mels_} * n_len_;
  const int64_t e0 = total * ith / n_threads_;
  const int64_t e1 = total * (ith + 1) / n_threads_;
  float* out = out_.data();
  const double mmax = mmax_;
  const float mmax_f = static_cast<float>(mmax);
  for (int64_t e = e0; e < e1; ++e) {
    // Exactly whisper.cpp: compare in double, clamp to (float)mmax, then (x + 4) / 4 in double.
    float v = out[e];
    if (v < mmax) v = mmax_f;
    out[e] = static_cast<float>((v + 4.0) / 4.0);
  }
}

void MelSpectrogram::RunAllThreads(Pass pass) {
  if (n_threads_ == 1) {
    RunPass(0, pass);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    pass_ = pass;
    pending_ = n_threads_ - 1;
    ++generation_;
  }
  start_cv_.notify_all();
  RunPass(0, pass);
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [this] { return pending_ == 0; });
}

void MelSpectrogram::WorkerLoop(int ith) {
  uint64_t seen = 0;
  for (;;) {
    Pass pass;
    {
      std::unique_lock<std::mutex> lock(mu_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      pass = pass_;
    }
    RunPass(ith, pass);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }
}

}  // namespace whisper
