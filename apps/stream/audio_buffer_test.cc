// AudioBuffer in both overflow modes. Exact counts and sample values (each sample is its own
// index, exact in float below 2^24), so an order mix-up, a lost or a repeated sample shows.
// Runs under ThreadSanitizer in tools/test.sh (producer and consumer on two threads).
#include "apps/stream/audio_buffer.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace whisper::stream {
namespace {

TEST(AudioBuffer, DropOldestTakesWhatArrivedAndCountsWhatWasOverwritten) {
  AudioBuffer b(5);
  EXPECT_EQ(b.overflow(), AudioBuffer::Overflow::kDropOldest);
  const float x[] = {1, 2, 3, 4, 5, 6, 7};
  float out[5];
  int64_t dropped = 0;
  EXPECT_EQ(b.Push(x, 3), 3);
  EXPECT_EQ(b.pending(), 3);
  ASSERT_EQ(b.Take(1, 0, out, &dropped), 3);
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[2], 3);
  EXPECT_EQ(dropped, 0);
  EXPECT_EQ(b.Push(x, 7), 7);  // 7 into a ring of 5: the first 2 are lost
  ASSERT_EQ(b.Take(5, 0, out, &dropped), 5);
  EXPECT_EQ(dropped, 2);
  EXPECT_EQ(out[0], 3);
  EXPECT_EQ(out[4], 7);
  EXPECT_EQ(b.total_pushed(), 10);
  // max_samples: the oldest pending first, the rest stays for the next Take.
  b.Push(x, 4);
  ASSERT_EQ(b.Take(1, 3, out, &dropped), 3);
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[2], 3);
  EXPECT_EQ(b.pending(), 1);
  ASSERT_EQ(b.Take(1, 3, out, &dropped), 1);
  EXPECT_EQ(out[0], 4);
  EXPECT_EQ(dropped, 2);
  // Take waits for min_samples; Close from another thread ends the wait with what there is.
  b.Push(x, 1);
  std::thread closer([&b] { b.Close(); });
  EXPECT_EQ(b.Take(4, 0, out, &dropped), 1);
  closer.join();
  EXPECT_TRUE(b.closed());
  EXPECT_EQ(b.Push(x, 3), 0);  // ignored once closed
  EXPECT_EQ(b.Take(1, 0, out, &dropped), 0);
}

// A producer far faster than the consumer (the pipe of `sox file ... | stream`): with kBlock,
// every sample arrives once, in order, whatever the chunk sizes (some larger than the ring).
TEST(AudioBuffer, BlockLosesNothingToAFastProducer) {
  constexpr int kCapacity = 1000;
  constexpr int kTotal = 200003;
  AudioBuffer b(kCapacity, AudioBuffer::Overflow::kBlock);
  std::vector<float> x(kTotal);
  for (int i = 0; i < kTotal; ++i) x[i] = static_cast<float>(i);
  int pushed = 0;
  std::thread producer([&] {
    for (int pos = 0, k = 0; pos < kTotal; ++k) {
      const int n = std::min(kTotal - pos, 1 + (k * 389) % 2500);  // 1 .. 2500 samples
      pushed += b.Push(x.data() + pos, n);
      pos += n;
    }
    b.Close();
  });
  std::vector<float> out(kCapacity);
  int64_t dropped = 0;
  int64_t got = 0;
  bool in_order = true;
  for (int k = 0;; ++k) {
    // Small and large requests alike, --step-sized (max = min) ones included.
    const int min = 1 + (k * 131) % 1200, max = (k % 3 == 0) ? 0 : min;
    const int n = b.Take(min, max, out.data(), &dropped);
    if (n == 0 && b.closed() && b.pending() == 0) break;
    ASSERT_LE(n, kCapacity);
    if (max > 0) ASSERT_LE(n, std::min(max, kCapacity));
    for (int i = 0; i < n; ++i) in_order = in_order && out[i] == static_cast<float>(got + i);
    got += n;
  }
  producer.join();
  EXPECT_TRUE(in_order);
  EXPECT_EQ(got, kTotal);
  EXPECT_EQ(pushed, kTotal);
  EXPECT_EQ(b.total_pushed(), kTotal);
  EXPECT_EQ(dropped, 0);
}

TEST(AudioBuffer, BlockPushWaitsForRoomAndCloseEndsTheWait) {
  AudioBuffer b(5, AudioBuffer::Overflow::kBlock);
  float x[12];
  for (int i = 0; i < 12; ++i) x[i] = static_cast<float>(i);
  float out[5];
  int64_t dropped = 0;
  // 12 samples into a ring of 5: Push returns once the consumer has taken 7 of them.
  int stored = -1;
  std::thread producer([&] { stored = b.Push(x, 12); });
  while (b.pending() < 5) std::this_thread::yield();  // full: the producer waits
  ASSERT_EQ(b.Take(5, 5, out, &dropped), 5);
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[4], 4);
  ASSERT_EQ(b.Take(5, 5, out, &dropped), 5);
  EXPECT_EQ(out[0], 5);
  ASSERT_EQ(b.Take(2, 0, out, &dropped), 2);  // the last 2
  EXPECT_EQ(out[1], 11);
  producer.join();
  EXPECT_EQ(stored, 12);
  // Close wakes a producer waiting for room: it returns what it stored; that stays takeable.
  std::thread producer2([&] { stored = b.Push(x, 8); });
  while (b.pending() < 5) std::this_thread::yield();
  b.Close();
  producer2.join();
  EXPECT_EQ(stored, 5);
  // min_samples above the capacity waits for a full ring (or the close), not forever.
  ASSERT_EQ(b.Take(100, 0, out, &dropped), 5);
  EXPECT_EQ(out[4], 4);
  EXPECT_EQ(b.Take(1, 0, out, &dropped), 0);
  EXPECT_EQ(b.Push(x, 1), 0);
  EXPECT_EQ(b.total_pushed(), 17);
  EXPECT_EQ(dropped, 0);
}

TEST(AudioBuffer, BlockMinAboveCapacityWaitsForAFullRing) {
  AudioBuffer b(4, AudioBuffer::Overflow::kBlock);
  const float x[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::thread producer([&] {
    b.Push(x, 10);
    b.Close();
  });
  float out[4];
  int64_t got = 0;
  for (;;) {
    const int n = b.Take(100, 0, out, nullptr);
    if (n == 0) break;
    for (int i = 0; i < n; ++i) EXPECT_EQ(out[i], static_cast<float>(got + i));
    got += n;
  }
  producer.join();
  EXPECT_EQ(got, 10);
}

}  // namespace
}  // namespace whisper::stream
