// kernels/conv on every target against a direct double-precision convolution: both weight
// types, both output layouts, strides 1 and 2, odd x strides, time ranges split as threads would.
#include "kernels/conv.h"

#include <math.h>

#include <vector>

#include "ggml/fp16.h"
#include "gtest/gtest.h"
#include "hwy/tests/hwy_gtest.h"
#include "kernels/test_util.h"

namespace ggml_cpu {
namespace {

HWY_BEFORE_TEST(ConvTest);

constexpr float kSentinel = -99.0f;

TEST_P(ConvTest, MatchesDirectConvolution) {
  test::ExpectDispatchedTo(GetParam());
  const Conv1dShape shapes[] = {{1, 1, 1, 1},   {3, 3, 5, 2},    {7, 2, 17, 1},
                                {31, 5, 3, 2},  {33, 80, 24, 2}, {60, 16, 40, 1}};
  for (const Conv1dShape& s : shapes) {
    const size_t t_out = Conv1dPhOutLength(s), x_stride = s.t_in + 3, K = 3 * s.cin;
    ASSERT_EQ(t_out, (s.t_in + 2 - 3) / s.stride + 1);
    const std::vector<float> x = test::RandomRow(s.cin * x_stride, static_cast<uint32_t>(s.t_in));
    std::vector<float> w = test::RandomRow(s.cout * K, static_cast<uint32_t>(s.cout));
    std::vector<ggml_fp16_t> w16(w.size());
    for (size_t i = 0; i < w.size(); ++i) {
      w16[i] = ggml_fp32_to_fp16(w[i]);
      w[i] = ggml_fp16_to_fp32(w16[i]);  // same values for both weight types
    }
    // Direct reference, y[co][t], and the magnitude sum for the tolerance.
    std::vector<double> ref(s.cout * t_out), mag(s.cout * t_out);
    for (size_t co = 0; co < s.cout; ++co) {
      for (size_t t = 0; t < t_out; ++t) {
        double acc = 0, g = 0;
        for (size_t ci = 0; ci < s.cin; ++ci) {
          for (size_t k = 0; k < 3; ++k) {
            const long pos = static_cast<long>(t * s.stride + k) - 1;
            if (pos < 0 || pos >= static_cast<long>(s.t_in)) continue;
            const double p = double(w[co * K + ci * 3 + k]) * x[ci * x_stride + pos];
            acc += p;
            g += fabs(p);
          }
        }
        ref[co * t_out + t] = acc;
        mag[co * t_out + t] = g;
      }
    }
    for (Conv1dLayout layout : {Conv1dLayout::kTimeContiguous, Conv1dLayout::kChannelContiguous}) {
      for (bool f16 : {false, true}) {
        std::vector<float> y(s.cout * t_out + 1, kSentinel);
        const size_t ranges[3] = {0, t_out / 2, t_out};
        for (int part = 0; part < 2; ++part) {
          const size_t t0 = ranges[part], t1 = ranges[part + 1];
          std::vector<char> work(Conv1dPhWorkSize(s, t1 - t0, f16, layout));
          const absl::Status st =
              f16 ? Conv1dPhF16(s, x.data(), x_stride, w16.data(), layout, y.data(), t0, t1,
                                work.data(), work.size())
                  : Conv1dPhF32(s, x.data(), x_stride, w.data(), layout, y.data(), t0, t1,
                                work.data(), work.size());
          ASSERT_TRUE(st.ok()) << st.message();
        }
        for (size_t co = 0; co < s.cout; ++co) {
          for (size_t t = 0; t < t_out; ++t) {
            const size_t at = layout == Conv1dLayout::kTimeContiguous ? co * t_out + t
                                                                      : t * s.cout + co;
            const double tol = (K + 16) * 0x1p-24 * mag[co * t_out + t];
            ASSERT_NEAR(y[at], ref[co * t_out + t], tol)
                << "t_in=" << s.t_in << " cin=" << s.cin << " cout=" << s.cout << " stride="
                << s.stride << " f16=" << f16 << " co=" << co << " t=" << t;
          }
        }
        EXPECT_EQ(y.back(), kSentinel) << "wrote past the output";
      }
    }
  }
}

TEST(ConvErrorTest, InvalidArguments) {
  const Conv1dShape s = {8, 2, 3, 2};
  std::vector<float> x(16), w(18), y(12);
  std::vector<char> work(Conv1dPhWorkSize(s, 4, false, Conv1dLayout::kTimeContiguous));
  auto run = [&](const Conv1dShape& sh, size_t x_stride, size_t t0, size_t t1, size_t ws) {
    return Conv1dPhF32(sh, x.data(), x_stride, w.data(), Conv1dLayout::kTimeContiguous, y.data(),
                       t0, t1, work.data(), ws)
        .code();
  };
  const auto kOk = absl::StatusCode::kOk, kInvalid = absl::StatusCode::kInvalidArgument;
  EXPECT_EQ(run(s, 8, 0, 4, work.size()), kOk);
  EXPECT_EQ(run(Conv1dShape{8, 2, 3, 3}, 8, 0, 3, work.size()), kInvalid);  // stride 3
  EXPECT_EQ(run(s, 7, 0, 4, work.size()), kInvalid);                        // x_stride < t_in
  EXPECT_EQ(run(s, 8, 0, 5, work.size()), kInvalid);                        // t_end > T_out = 4
  EXPECT_EQ(run(s, 8, 3, 2, work.size()), kInvalid);                        // reversed range
  EXPECT_EQ(run(s, 8, 0, 4, work.size() - 1), kInvalid);                    // scratch too small
  EXPECT_EQ(run(Conv1dShape{0, 2, 3, 1}, 8, 0, 0, work.size()), kInvalid);  // empty input
  const absl::Status st = Conv1dPhF32(s, x.data(), 8, w.data(), Conv1dLayout::kTimeContiguous,
                                      y.data(), 0, 5, work.data(), work.size());
  EXPECT_NE(st.message().find("T_out=4"), std::string::npos) << st.message();
}

TEST(ConvIm2ColTest, MatchesGgmlLayout) {
  // x: 2 channels of 4 samples; stride 2 -> T_out = 2. Row t: [x0(2t-1) x0(2t) x0(2t+1) x1(...)].
  const Conv1dShape s = {4, 2, 1, 2};
  const float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  float col[12];
  ASSERT_TRUE(Im2Col1dPh(s, x, 4, 0, 2, col).ok());
  const float want[12] = {0, 1, 2, 0, 5, 6, 2, 3, 4, 6, 7, 8};
  for (int i = 0; i < 12; ++i) EXPECT_EQ(col[i], want[i]) << i;
}

}  // namespace
}  // namespace ggml_cpu
