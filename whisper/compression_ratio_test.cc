#include "whisper/compression_ratio.h"

#include <string>

#include "gtest/gtest.h"
#include "testing/alloc_counter.h"

namespace whisper {
namespace {

// Expected values: Python 3.11's len(b) / len(zlib.compress(b)) for the same bytes (zlib 1.2.13),
// computed when the test was written: 109 / 80, 220 / 22, 0 / 8, 1 / 9, 45 / 26.
TEST(CompressionRatioTest, EqualsPythonZlib) {
  CompressionRatio cr;
  std::string rep;
  for (int i = 0; i < 20; ++i) rep += " I'm sorry.";
  std::string accents;
  for (int i = 0; i < 3; ++i) accents += " h\xC3\xA9llo w\xC3\xB6rld ";
  EXPECT_DOUBLE_EQ(cr.Of(" And so, my fellow Americans, ask not what your country can do for you, ask what you "
                         "can do for your country."),
                   109.0 / 80);
  EXPECT_DOUBLE_EQ(cr.Of(rep), 220.0 / 22);  // 10.0: far above OpenAI's 2.4
  EXPECT_DOUBLE_EQ(cr.Of(""), 0.0);
  EXPECT_DOUBLE_EQ(cr.Of("a"), 1.0 / 9);
  EXPECT_DOUBLE_EQ(cr.Of(accents), 45.0 / 26);
  // The stream is reset between calls: the same text gives the same ratio again.
  EXPECT_DOUBLE_EQ(cr.Of(rep), 10.0);
}

// Longer than the 4 KB output chunk, so deflate loops: 20000 bytes of a short cycle.
TEST(CompressionRatioTest, LongTextSpansOutputChunks) {
  CompressionRatio cr;
  std::string s;
  uint32_t x = 1;
  for (int i = 0; i < 20000; ++i) {
    x = x * 1103515245u + 12345u;
    s += static_cast<char>('a' + (x >> 16) % 26);  // incompressible-ish letters
  }
  const double r = cr.Of(s);
  EXPECT_GT(r, 1.0);  // 26 letters carry 4.7 of 8 bits: Huffman coding alone gives ~1.6
  EXPECT_LT(r, 2.0);
  EXPECT_DOUBLE_EQ(cr.Of(s), r);
}

TEST(CompressionRatioTest, NoHeapAllocationPerCall) {
  if (!ggml_testing::AllocCounter::Supported()) GTEST_SKIP() << "allocation counting unsupported here";
  CompressionRatio cr;
  const std::string text = " ask not what your country can do for you, ask what you can do for your country.";
  ggml_testing::AllocCounter::Start();
  const double r = cr.Of(text);
  const int64_t n = ggml_testing::AllocCounter::Stop();
  EXPECT_EQ(n, 0);
  EXPECT_GT(r, 1.0);
}

}  // namespace
}  // namespace whisper
