#include "apps/stream/audio_buffer.h"

#include <algorithm>

namespace whisper::stream {

AudioBuffer::AudioBuffer(int capacity, Overflow overflow)
    : overflow_(overflow), ring_(static_cast<size_t>(std::max(1, capacity)), 0.0f) {}

int AudioBuffer::Push(const float* x, int n) {
  if (n <= 0) return 0;
  const int64_t cap = static_cast<int64_t>(ring_.size());
  std::unique_lock<std::mutex> lock(mu_);
  if (overflow_ == Overflow::kDropOldest) {
    if (closed_) return 0;
    // Only the last `cap` samples of x can survive.
    const int skip = n > cap ? static_cast<int>(n - cap) : 0;
    for (int i = skip; i < n; ++i) ring_[static_cast<size_t>((written_ + i) % cap)] = x[i];
    written_ += n;
    lock.unlock();
    cv_.notify_all();
    return n;
  }
  int stored = 0;
  while (stored < n) {
    cv_.wait(lock, [&] { return closed_ || written_ - taken_ < cap; });
    if (closed_) break;
    const int room = static_cast<int>(std::min<int64_t>(cap - (written_ - taken_), n - stored));
    for (int i = 0; i < room; ++i) ring_[static_cast<size_t>((written_ + i) % cap)] = x[stored + i];
    written_ += room;
    stored += room;
    // The consumer may be waiting for these samples (the only waiter while the ring has room).
    cv_.notify_all();
  }
  return stored;
}

void AudioBuffer::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

int AudioBuffer::Take(int min_samples, int max_samples, float* out, int64_t* dropped) {
  std::unique_lock<std::mutex> lock(mu_);
  const int64_t cap = static_cast<int64_t>(ring_.size());
  const int64_t want = std::min<int64_t>(std::max(0, min_samples), cap);
  const int64_t most = max_samples <= 0 ? cap : std::min<int64_t>(max_samples, cap);
  cv_.wait(lock, [&] { return closed_ || written_ - taken_ >= want; });
  if (written_ - taken_ > cap) {  // kDropOldest only: kBlock never holds more than cap
    if (dropped != nullptr) *dropped += written_ - taken_ - cap;
    taken_ = written_ - cap;
  }
  const int n = static_cast<int>(std::min<int64_t>(written_ - taken_, most));
  for (int i = 0; i < n; ++i) out[i] = ring_[static_cast<size_t>((taken_ + i) % cap)];
  taken_ += n;
  lock.unlock();
  if (overflow_ == Overflow::kBlock && n > 0) cv_.notify_all();  // room for a waiting producer
  return n;
}

bool AudioBuffer::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

int AudioBuffer::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(std::min<int64_t>(written_ - taken_, static_cast<int64_t>(ring_.size())));
}

int64_t AudioBuffer::total_pushed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return written_;
}

}  // namespace whisper::stream
