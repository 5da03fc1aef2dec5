// kernels/conv's im2col against its definition, element by element (shapes with odd x strides,
// strides 1 and 2, time ranges split as threads would), against a hand-written ggml layout, and
// its argument checks.
#include "kernels/conv.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ggml_cpu {
namespace {

constexpr float kSentinel = -99.0f;

TEST(ConvIm2ColTest, MatchesDefinition) {
  const Conv1dShape shapes[] = {{1, 1, 1}, {3, 3, 2}, {7, 2, 1}, {31, 5, 2}, {33, 80, 2}, {60, 16, 1}};
  for (const Conv1dShape& s : shapes) {
    const size_t t_out = Conv1dPhOutLength(s), x_stride = s.t_in + 3, row = 3 * s.cin;
    ASSERT_EQ(t_out, (s.t_in + 2 - 3) / s.stride + 1);
    std::vector<float> x(s.cin * x_stride);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i + 1);  // distinct, nonzero
    std::vector<float> col(t_out * row + 1, kSentinel);
    const size_t ranges[3] = {0, t_out / 2, t_out};
    for (int part = 0; part < 2; ++part) {
      const size_t t0 = ranges[part], t1 = ranges[part + 1];
      const absl::Status st = Im2Col1dPh(s, x.data(), x_stride, t0, t1, col.data() + t0 * row);
      ASSERT_TRUE(st.ok()) << st.message();
    }
    for (size_t t = 0; t < t_out; ++t) {
      for (size_t ci = 0; ci < s.cin; ++ci) {
        for (size_t k = 0; k < 3; ++k) {
          const long pos = static_cast<long>(t * s.stride + k) - 1;
          const float want = pos < 0 || pos >= static_cast<long>(s.t_in) ? 0.0f : x[ci * x_stride + pos];
          ASSERT_EQ(col[t * row + 3 * ci + k], want)
              << "t_in=" << s.t_in << " cin=" << s.cin << " stride=" << s.stride << " t=" << t << " ci=" << ci
              << " k=" << k;
        }
      }
    }
    EXPECT_EQ(col.back(), kSentinel) << "wrote past the output";
  }
}

TEST(ConvIm2ColTest, MatchesGgmlLayout) {
  // x: 2 channels of 4 samples; stride 2 -> T_out = 2. Row t: [x0(2t-1) x0(2t) x0(2t+1) x1(...)].
  const Conv1dShape s = {4, 2, 2};
  const float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  float col[12];
  ASSERT_TRUE(Im2Col1dPh(s, x, 4, 0, 2, col).ok());
  const float want[12] = {0, 1, 2, 0, 5, 6, 2, 3, 4, 6, 7, 8};
  for (int i = 0; i < 12; ++i) EXPECT_EQ(col[i], want[i]) << i;
}

TEST(ConvIm2ColTest, InvalidArguments) {
  const Conv1dShape s = {8, 2, 2};
  std::vector<float> x(16), col(4 * 6);
  auto run = [&](const Conv1dShape& sh, size_t x_stride, size_t t0, size_t t1) {
    return Im2Col1dPh(sh, x.data(), x_stride, t0, t1, col.data()).code();
  };
  const auto kOk = absl::StatusCode::kOk, kInvalid = absl::StatusCode::kInvalidArgument;
  EXPECT_EQ(run(s, 8, 0, 4), kOk);
  EXPECT_EQ(run(Conv1dShape{8, 2, 3}, 8, 0, 3), kInvalid);  // stride 3
  EXPECT_EQ(run(s, 7, 0, 4), kInvalid);                     // x_stride < t_in
  EXPECT_EQ(run(s, 8, 0, 5), kInvalid);                     // t_end > T_out = 4
  EXPECT_EQ(run(s, 8, 3, 2), kInvalid);                     // reversed range
  EXPECT_EQ(run(Conv1dShape{0, 2, 1}, 8, 0, 0), kInvalid);  // empty input
  EXPECT_EQ(Im2Col1dPh(s, nullptr, 8, 0, 4, col.data()).code(), kInvalid);
  EXPECT_EQ(Im2Col1dPh(s, x.data(), 8, 0, 4, nullptr).code(), kInvalid);
  const absl::Status st = Im2Col1dPh(s, x.data(), 8, 0, 5, col.data());
  EXPECT_NE(st.message().find("T_out=4"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace ggml_cpu
