// kernels/activations on every target against double-precision references (libm tanh, erf,
// exp), over the size sweep and the whole useful input range, cut-offs included.
#include "kernels/activations.h"

#include <math.h>

#include <vector>

#include "gtest/gtest.h"
#include "hwy/tests/hwy_gtest.h"
#include "kernels/test_util.h"

namespace ggml_cpu {
namespace {

HWY_BEFORE_TEST(ActivationsTest);

double RefGeluTanh(double x) {
  if (x <= -10.0) return 0.0;
  if (x >= 10.0) return x;
  // 0.5 x (1 + tanh(u)) == x / (1 + exp(-2u)); the latter keeps double precision for x < 0.
  const double u = sqrt(2.0 / M_PI) * x * (1.0 + 0.044715 * x * x);
  return x / (1.0 + exp(-2.0 * u));
}
double RefGeluErf(double x) { return 0.5 * x * erfc(-x / sqrt(2.0)); }
double RefSilu(double x) { return x / (1.0 + exp(-x)); }

// Inputs: a dense ramp over [-12, 12] (both cut-offs and the transition region), the cut-off
// points themselves, and random values; then the size sweep for tails.
std::vector<float> Inputs() {
  std::vector<float> x;
  for (int i = -24000; i <= 24000; ++i) x.push_back(i * 0.0005f);
  for (float v : {-10.0f, 10.0f, -9.9999f, 9.9999f, 0.0f, -0.0f, 1e-20f, -1e-20f, -30.0f, 50.0f}) {
    x.push_back(v);
  }
  const std::vector<float> r = test::RandomRow(1001, 3, -6.0f, 6.0f);
  x.insert(x.end(), r.begin(), r.end());
  return x;
}

// |y - ref| <= (rel + rel_x2 * x^2) * |ref| + abs_tol. The rel_x2 term is the function's own
// conditioning where it decays like exp(-c x^2) or faster: rounding the exponent to f32 alone
// costs up to 2^-24 * x^2 relative error there.
template <class Kernel>
void CheckAgainst(Kernel kernel, double (*ref)(double), double rel, double abs_tol,
                  const char* what, double rel_x2 = 0.0) {
  const std::vector<float> x = Inputs();
  std::vector<float> y(x.size());
  kernel(x.size(), x.data(), y.data());
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = ref(x[i]);
    const double tol = (rel + rel_x2 * double(x[i]) * x[i]) * fabs(want) + abs_tol;
    ASSERT_NEAR(y[i], want, tol) << what << " x=" << x[i];
  }
  for (size_t n : test::Sizes()) {  // tails, in place
    std::vector<float> v = test::RandomRow(n, static_cast<uint32_t>(n), -4.0f, 4.0f);
    const std::vector<float> orig = v;
    kernel(n, v.data(), v.data());
    for (size_t i = 0; i < n; ++i) {
      const double tol = (rel + rel_x2 * double(orig[i]) * orig[i]) * fabs(ref(orig[i])) + abs_tol;
      ASSERT_NEAR(v[i], ref(orig[i]), tol) << what << " n=" << n;
    }
  }
}

TEST_P(ActivationsTest, GeluTanh) {
  test::ExpectDispatchedTo(GetParam());
  CheckAgainst([](size_t n, const float* x, float* y) { GeluF32(n, x, y, GeluMode::kTanh); },
               RefGeluTanh, 2e-6, 1e-37, "gelu_tanh", 0x1p-22);
  const float cut[4] = {-10.0f, -10.5f, 10.0f, 12.5f};
  float out[4];
  GeluF32(4, cut, out);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[2], 10.0f);
  EXPECT_EQ(out[3], 12.5f);
}

TEST_P(ActivationsTest, GeluErf) {
  test::ExpectDispatchedTo(GetParam());
  CheckAgainst([](size_t n, const float* x, float* y) { GeluF32(n, x, y, GeluMode::kErf); },
               RefGeluErf, 2e-6, 1e-37, "gelu_erf", 0x1p-23);
}

TEST_P(ActivationsTest, Silu) {
  test::ExpectDispatchedTo(GetParam());
  CheckAgainst([](size_t n, const float* x, float* y) { SiluF32(n, x, y); }, RefSilu, 2e-6,
               1e-30, "silu");
}

}  // namespace
}  // namespace ggml_cpu
