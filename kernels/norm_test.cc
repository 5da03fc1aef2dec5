// kernels/norm on every target against double-precision references, odd strides, in place,
// with and without the affine step, on rows with a large offset (mean >> spread) too.
#include "kernels/norm.h"

#include <math.h>

#include <vector>

#include "gtest/gtest.h"
#include "hwy/tests/hwy_gtest.h"
#include "kernels/test_util.h"

namespace ggml_cpu {
namespace {

HWY_BEFORE_TEST(NormTest);

constexpr float kEps = 1e-5f;
constexpr float kSentinel = -777.0f;

// Tolerance for a normalized value: the f32 mean/variance carry ~n/N * 2^-24 relative error
// (N >= 1 lanes); 64 ulps of the output magnitude plus a floor covers n = 4097 on SCALAR.
double Tol(double want, size_t n) { return (1e-5 + n * 0x1p-24) * (fabs(want) + 1.0); }

TEST_P(NormTest, LayerNorm) {
  test::ExpectDispatchedTo(GetParam());
  for (size_t n : test::Sizes()) {
    const size_t nrows = 3, stride = n + 5;
    for (float offset : {0.0f, 100.0f}) {
      std::vector<float> x = test::RandomRow(nrows * stride, static_cast<uint32_t>(n), -2.0f, 2.0f);
      for (float& v : x) v += offset;
      const std::vector<float> w = test::RandomRow(n, 1), b = test::RandomRow(n, 2);
      for (int affine = 0; affine < 2; ++affine) {
        std::vector<float> y(nrows * stride, kSentinel);
        LayerNormRowsF32(n, nrows, x.data(), stride, kEps, affine ? w.data() : nullptr,
                         affine ? b.data() : nullptr, y.data(), stride);
        for (size_t r = 0; r < nrows; ++r) {
          const float* xr = x.data() + r * stride;
          double mean = 0, var = 0;
          for (size_t i = 0; i < n; ++i) mean += xr[i];
          mean /= n;
          for (size_t i = 0; i < n; ++i) var += (xr[i] - mean) * (xr[i] - mean);
          var /= n;
          const double scale = 1.0 / sqrt(var + kEps);
          for (size_t i = 0; i < n; ++i) {
            double want = (xr[i] - mean) * scale;
            if (affine) want = want * w[i] + b[i];
            // An offset of 100 costs ~100 * 2^-24 absolute in x - mean, amplified by `scale`.
            const double tol = Tol(want, n) + offset * 0x1p-22 * scale;
            ASSERT_NEAR(y[r * stride + i], want, tol) << "n=" << n << " r=" << r << " i=" << i;
          }
          for (size_t i = n; i < stride; ++i) ASSERT_EQ(y[r * stride + i], kSentinel);
        }
      }
      // In place equals out of place exactly.
      std::vector<float> y(x.size()), z = x;
      LayerNormRowsF32(n, nrows, x.data(), stride, kEps, w.data(), b.data(), y.data(), stride);
      LayerNormRowsF32(n, nrows, z.data(), stride, kEps, w.data(), b.data(), z.data(), stride);
      for (size_t r = 0; r < nrows; ++r) {
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(z[r * stride + i], y[r * stride + i]);
      }
    }
  }
  // A constant row normalizes to 0 (var = 0, scale = 1/sqrt(eps)), then + b.
  std::vector<float> c(9, 3.5f), y(9), b(9, 0.25f);
  LayerNormRowsF32(9, 1, c.data(), 9, kEps, nullptr, b.data(), y.data(), 9);
  for (float v : y) EXPECT_EQ(v, 0.25f);
}

TEST_P(NormTest, RmsNorm) {
  test::ExpectDispatchedTo(GetParam());
  for (size_t n : test::Sizes()) {
    const size_t nrows = 2, stride = n + 1;
    const std::vector<float> x = test::RandomRow(nrows * stride, static_cast<uint32_t>(n + 9));
    const std::vector<float> w = test::RandomRow(n, 3);
    for (int affine = 0; affine < 2; ++affine) {
      std::vector<float> y(nrows * stride, kSentinel);
      RmsNormRowsF32(n, nrows, x.data(), stride, kEps, affine ? w.data() : nullptr, y.data(),
                     stride);
      for (size_t r = 0; r < nrows; ++r) {
        const float* xr = x.data() + r * stride;
        double ms = 0;
        for (size_t i = 0; i < n; ++i) ms += double(xr[i]) * xr[i];
        const double scale = 1.0 / sqrt(ms / n + kEps);
        for (size_t i = 0; i < n; ++i) {
          const double want = xr[i] * scale * (affine ? w[i] : 1.0f);
          ASSERT_NEAR(y[r * stride + i], want, Tol(want, n)) << "n=" << n << " i=" << i;
        }
        ASSERT_EQ(y[r * stride + n], kSentinel);
      }
    }
  }
}

}  // namespace
}  // namespace ggml_cpu
