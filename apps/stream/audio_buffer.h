// The audio between a capture thread and the transcription loop (whisper-stream's audio_async,
// examples/common-sdl.h): a fixed-capacity ring of 16 kHz mono float samples. The producer
// Push()es as audio arrives; the consumer Take()s what arrived since its last Take.
// When the consumer falls behind by more than the capacity, the buffer either
// - drops (Overflow::kDropOldest, a live source such as a microphone, which cannot wait): the
//   oldest samples are overwritten and counted as dropped; or
// - blocks (Overflow::kBlock, a pipe or a file, which can): Push waits until the consumer has
//   made room, so every sample pushed is taken, in order (back-pressure: a reader thread that
//   blocks here stops reading, and the writer of the pipe blocks in turn).
// No allocation after construction.
#ifndef GGML_WHISPER_APPS_STREAM_AUDIO_BUFFER_H_
#define GGML_WHISPER_APPS_STREAM_AUDIO_BUFFER_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

namespace whisper::stream {

class AudioBuffer {
 public:
  enum class Overflow { kDropOldest, kBlock };

  // capacity: samples held for the consumer (> 0; less is taken as 1).
  explicit AudioBuffer(int capacity, Overflow overflow = Overflow::kDropOldest);

  // Producer: appends n samples (n >= 0; x may be null when n == 0) and wakes the consumer.
  // kDropOldest: never waits. kBlock: waits for room as often as needed, storing x in pieces.
  // Returns the samples stored: n, or fewer when the buffer is (or, while waiting, gets) closed.
  int Push(const float* x, int n);
  // Producer or anyone: no more samples will come; wakes the consumer and a waiting producer.
  void Close();

  // Consumer: waits until at least min(min_samples, capacity) samples arrived since the last
  // Take, or the buffer is closed, then copies the oldest pending samples, at most max_samples
  // (<= 0 or > capacity: capacity), to out[0..) in arrival order and returns their count (out
  // must hold that many). kDropOldest: samples that were overwritten before they could be taken
  // are added to *dropped (may be null) and skipped. kBlock: *dropped is never changed.
  int Take(int min_samples, int max_samples, float* out, int64_t* dropped);

  bool closed() const;
  int pending() const;  // samples a Take with max_samples = capacity would return now
  int capacity() const { return static_cast<int>(ring_.size()); }
  Overflow overflow() const { return overflow_; }
  int64_t total_pushed() const;  // samples stored since construction (dropped ones included)

 private:
  const Overflow overflow_;
  mutable std::mutex mu_;
  std::condition_variable cv_;  // the consumer waits for samples, a kBlock producer for room
  std::vector<float> ring_;
  int64_t written_ = 0;  // samples ever stored
  int64_t taken_ = 0;    // samples ever consumed or dropped
  bool closed_ = false;
};

}  // namespace whisper::stream

#endif  // GGML_WHISPER_APPS_STREAM_AUDIO_BUFFER_H_
