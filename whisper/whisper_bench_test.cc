// whisper_bench_memcpy / whisper_bench_ggml_mul_mat: the lines whisper.cpp 1.8.5 prints (its
// src/whisper.cpp format strings), the run counts its stopping rule implies, and the errors.
// Sizes are small here; whisper.h's functions use whisper.cpp's (2 x 1 GB, N up to 4096).
#include "whisper/whisper_bench.h"

#include <cmath>
#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "whisper/whisper.h"

// The 2^62-byte request below must return NULL under ASan too, as it does under glibc.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }

namespace whisper {
namespace {

std::vector<std::string> Lines(const std::string& s) {
  EXPECT_FALSE(s.empty());
  EXPECT_EQ(s.back(), '\n');
  std::vector<std::string> lines = absl::StrSplit(s, '\n');
  lines.pop_back();  // after the last '\n'
  return lines;
}

TEST(BenchMemcpy, PrintsWhisperCppLinesPerStageAndThreadCount) {
  std::string out;
  ASSERT_TRUE(BenchMemcpy(3, 1 << 20, 4, &out)) << out;
  const std::vector<std::string> lines = Lines(out);
  // heat-up, 1 thread, then k = 1, 2, 3, then the sum.
  const std::vector<std::string> stages = {"heat-up", " 1 thread", " 1 thread", " 2 thread", " 3 thread"};
  ASSERT_EQ(lines.size(), stages.size() + 1) << out;
  const std::regex memcpy_line(R"(memcpy: +([0-9]+\.[0-9]{2}) GB/s \((.*)\))");
  for (size_t i = 0; i < stages.size(); ++i) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(lines[i], m, memcpy_line)) << lines[i];
    EXPECT_EQ(m[2].str(), stages[i]);
    const double gbs = std::stod(m[1].str());
    EXPECT_GT(gbs, 0.0) << lines[i];
    EXPECT_TRUE(std::isfinite(gbs));
    // "%7.2f": at least 7 characters wide.
    EXPECT_GE(lines[i].find(" GB/s") - std::string("memcpy: ").size(), 7u) << lines[i];
  }
  EXPECT_TRUE(std::regex_match(lines.back(), std::regex(R"(sum:    -?[0-9]+\.[0-9]{6})"))) << lines.back();
}

TEST(BenchMulMat, ThreeLinesPerSizeAndEveryTypeRunsMaxRunsAtSmallSizes) {
  std::string out;
  // At 64 and 96 no 3 runs reach 1 s, so whisper.cpp's rule runs each type exactly max_runs times.
  ASSERT_TRUE(BenchMulMat(2, {64, 96}, 5, &out)) << out;
  const std::vector<std::string> lines = Lines(out);
  ASSERT_EQ(lines.size(), 6u) << out;
  const std::string g = R"( +([0-9]+\.[0-9]) GFLOPS \(  5 runs\))";
  const std::vector<std::regex> shapes = {
      std::regex(R"(  (\d\d) x   \d\d: Q4_0)" + g + R"( \| Q4_1)" + g),
      std::regex(R"(  (\d\d) x   \d\d: Q5_0)" + g + R"( \| Q5_1)" + g + R"( \| Q8_0)" + g),
      std::regex(R"(  (\d\d) x   \d\d: F16 )" + g + R"( \| F32 )" + g),
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(lines[i], m, shapes[i % 3])) << lines[i];
    EXPECT_EQ(m[1].str(), i < 3 ? "64" : "96");
    for (size_t k = 2; k < m.size(); ++k) EXPECT_GT(std::stod(m[k].str()), 0.0) << lines[i];
  }
}

TEST(BenchMulMat, WhisperCppSizes) {
  EXPECT_EQ(BenchMulMatSizes(), (std::vector<size_t>{64, 128, 256, 512, 1024, 2048, 4096}));
}

TEST(BenchErrors, BadArgumentsAreMessagesNotCrashes) {
  std::string out;
  for (int n : {0, -1, 513}) {
    EXPECT_FALSE(BenchMemcpy(n, 1024, 1, &out));
    EXPECT_EQ(out, "whisper_bench_memcpy: n_threads = " + std::to_string(n) + ", expected 1 .. 512\n");
    EXPECT_FALSE(BenchMulMat(n, {64}, 3, &out));
    EXPECT_EQ(out, "whisper_bench_ggml_mul_mat: n_threads = " + std::to_string(n) + ", expected 1 .. 512\n");
  }
  EXPECT_FALSE(BenchMemcpy(1, 0, 1, &out));
  EXPECT_FALSE(BenchMemcpy(1, 1024, 0, &out));
  EXPECT_FALSE(BenchMulMat(1, {100}, 3, &out));
  EXPECT_EQ(out, "whisper_bench_ggml_mul_mat: size 100, expected a multiple of 32 in 32 .. 65536\n");
  EXPECT_FALSE(BenchMulMat(1, {64}, 2, &out));
  // A memcpy array that cannot exist is an error, not an abort.
  EXPECT_FALSE(BenchMemcpy(1, static_cast<size_t>(1) << 62, 1, &out));
  EXPECT_EQ(out, "whisper_bench_memcpy: cannot allocate two arrays of 4611686018427387904 bytes\n");
}

TEST(BenchCApi, ErrorsGoToTheLogAndTheReturnValue) {
  static std::string logged;
  whisper_log_set([](enum ggml_log_level, const char* text, void*) { logged += text; }, nullptr);
  EXPECT_STREQ(whisper_bench_memcpy_str(0), "whisper_bench_memcpy: n_threads = 0, expected 1 .. 512\n");
  EXPECT_EQ(whisper_bench_memcpy(-3), -1);
  EXPECT_STREQ(whisper_bench_ggml_mul_mat_str(600), "whisper_bench_ggml_mul_mat: n_threads = 600, expected 1 .. 512\n");
  EXPECT_EQ(whisper_bench_ggml_mul_mat(0), -1);
  EXPECT_NE(logged.find("whisper_bench_memcpy: n_threads = -3, expected 1 .. 512"), std::string::npos) << logged;
  EXPECT_NE(logged.find("whisper_bench_ggml_mul_mat: n_threads = 0"), std::string::npos) << logged;
  whisper_log_set(nullptr, nullptr);
}

}  // namespace
}  // namespace whisper
