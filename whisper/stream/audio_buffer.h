// The audio between a capture thread and the transcription loop (whisper-stream's audio_async,
// examples/common-sdl.h): a fixed-capacity ring of 16 kHz mono float samples. The producer
// Push()es as audio arrives; the consumer Take()s everything that arrived since its last Take.
// When the consumer falls behind by more than the capacity, the oldest samples are overwritten
// and counted as dropped (live audio cannot wait). No allocation after construction.
#ifndef GGML_WHISPER_WHISPER_STREAM_AUDIO_BUFFER_H_
#define GGML_WHISPER_WHISPER_STREAM_AUDIO_BUFFER_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

namespace whisper::stream {

class AudioBuffer {
 public:
  // capacity: samples held for the consumer (> 0).
  explicit AudioBuffer(int capacity);

  // Producer: appends n samples (n >= 0; x may be null when n == 0) and wakes the consumer.
  // Ignored after Close().
  void Push(const float* x, int n);
  // Producer or anyone: no more samples will come; wakes the consumer.
  void Close();

  // Consumer: waits until at least min_samples samples arrived since the last Take, or the
  // buffer is closed, then copies the pending samples (at most capacity, the newest, in arrival
  // order) to out[0..) and returns their count (out must hold capacity samples). Samples that were
  // overwritten before they could be taken are added to *dropped.
  int Take(int min_samples, float* out, int64_t* dropped);

  bool closed() const;
  int pending() const;  // samples a Take would return now
  int capacity() const { return static_cast<int>(ring_.size()); }
  int64_t total_pushed() const;  // samples pushed since construction

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<float> ring_;
  int64_t written_ = 0;  // samples ever pushed
  int64_t taken_ = 0;    // samples ever consumed or dropped
  bool closed_ = false;
};

}  // namespace whisper::stream

#endif  // GGML_WHISPER_WHISPER_STREAM_AUDIO_BUFFER_H_
