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
double RefSigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
double RefTanh(double x) { return tanh(x); }

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

TEST_P(ActivationsTest, Sigmoid) {
  test::ExpectDispatchedTo(GetParam());
  CheckAgainst([](size_t n, const float* x, float* y) { SigmoidF32(n, x, y); }, RefSigmoid, 2e-6, 1e-37,
               "sigmoid");
  const float far[3] = {-100.0f, 100.0f, 0.0f};
  float out[3];
  SigmoidF32(3, far, out);
  EXPECT_LT(out[0], 1e-37f);
  EXPECT_EQ(out[1], 1.0f);
  EXPECT_EQ(out[2], 0.5f);
}

// Highway documents Tanh to 4 ULP: |y - tanh| <= 4 * 2^-23 * |tanh| (plus the denormal floor).
TEST_P(ActivationsTest, Tanh) {
  test::ExpectDispatchedTo(GetParam());
  CheckAgainst([](size_t n, const float* x, float* y) { TanhF32(n, x, y); }, RefTanh, 4 * 0x1p-23, 1e-37,
               "tanh");
}

// ReLU, x^2 and sqrt are exact in f32 (x * x and sqrt are correctly rounded): equal to the scalar
// float results bit for bit, NaN and signed zeros included.
TEST_P(ActivationsTest, ReluSqrSqrtExact) {
  test::ExpectDispatchedTo(GetParam());
  std::vector<float> x = Inputs();
  for (float v : {NAN, INFINITY, -INFINITY, 3.4e38f, 1e-45f, -1e-45f}) x.push_back(v);
  std::vector<float> y(x.size());
  ReluF32(x.size(), x.data(), y.data());
  for (size_t i = 0; i < x.size(); ++i) {
    if (isnan(x[i])) {
      EXPECT_TRUE(isnan(y[i])) << "relu(NaN)";
    } else {
      ASSERT_EQ(y[i], x[i] > 0.0f ? x[i] : 0.0f) << "relu x=" << x[i];
    }
  }
  SqrF32(x.size(), x.data(), y.data());
  for (size_t i = 0; i < x.size(); ++i) {
    if (!isnan(x[i])) {
      ASSERT_EQ(y[i], x[i] * x[i]) << "sqr x=" << x[i];
    }
  }
  SqrtF32(x.size(), x.data(), y.data());
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] < 0.0f || isnan(x[i])) {
      EXPECT_TRUE(isnan(y[i])) << "sqrt x=" << x[i];
    } else {
      ASSERT_EQ(y[i], sqrtf(x[i])) << "sqrt x=" << x[i];
    }
  }
  for (size_t n : test::Sizes()) {  // tails, in place
    std::vector<float> v = test::RandomRow(n, static_cast<uint32_t>(n), 0.0f, 4.0f);
    const std::vector<float> orig = v;
    SqrtF32(n, v.data(), v.data());
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(v[i], sqrtf(orig[i])) << "n=" << n;
  }
}

}  // namespace
}  // namespace ggml_cpu
