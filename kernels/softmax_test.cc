// kernels/softmax on every target against a double-precision reference: scale, mask (per row
// and broadcast, with -inf entries), causal diagonal with n_past and split row ranges, large
// logits (max subtraction), in place.
#include "kernels/softmax.h"

#include <math.h>

#include <cmath>

#include <vector>

#include "gtest/gtest.h"
#include "hwy/tests/hwy_gtest.h"
#include "kernels/test_util.h"

namespace ggml_cpu {
namespace {

HWY_BEFORE_TEST(SoftmaxTest);

// Reference row r, following softmax.h's definition, in double.
std::vector<double> RefRow(size_t n, size_t r, const float* x, const SoftmaxParams& p) {
  std::vector<double> v(n);
  double mx = -INFINITY;
  for (size_t i = 0; i < n; ++i) {
    v[i] = double(p.scale) * x[i];
    if (p.mask != nullptr) v[i] += p.mask[r * p.mask_stride + i];
    if (p.causal && i > p.n_past + r) v[i] = -INFINITY;
    mx = fmax(mx, v[i]);
  }
  if (mx == -INFINITY) return std::vector<double>(n, 0.0);  // all masked: zeros by definition
  double sum = 0;
  for (double& e : v) {
    e = exp(e - mx);
    sum += e;
  }
  for (double& e : v) e /= sum;
  return v;
}

// exp is accurate to a few ulps; the f32 sum adds ~n/N ulps relative to each output.
void ExpectRowsNear(size_t n, size_t nrows, const std::vector<float>& x, size_t stride,
                    const std::vector<float>& y, const SoftmaxParams& p, const char* what) {
  for (size_t r = 0; r < nrows; ++r) {
    const std::vector<double> want = RefRow(n, r, x.data() + r * stride, p);
    for (size_t i = 0; i < n; ++i) {
      const double tol = (8e-6 + n * 0x1p-24) * want[i] + 1e-30;
      ASSERT_NEAR(y[r * stride + i], want[i], tol) << what << " n=" << n << " r=" << r << " i=" << i;
      if (want[i] == 0.0) {
        ASSERT_EQ(y[r * stride + i], 0.0f) << what << " must be exactly 0";
      }
    }
  }
}

TEST_P(SoftmaxTest, ScaleMaskCausal) {
  test::ExpectDispatchedTo(GetParam());
  for (size_t n : test::Sizes()) {
    const size_t nrows = 5, stride = n + 3;
    // Logits up to +-40 after scaling: exp without the max subtraction would overflow f32.
    const std::vector<float> x = test::RandomRow(nrows * stride, static_cast<uint32_t>(n), -80.0f, 80.0f);
    std::vector<float> mask = test::RandomRow(nrows * n, 7, -3.0f, 3.0f);
    for (size_t i = 0; i < mask.size(); i += 5) mask[i] = -INFINITY;  // padded keys
    mask[1] = 0.0f;  // row 0 keeps a finite entry
    for (int variant = 0; variant < 4; ++variant) {
      SoftmaxParams p;
      p.scale = 0.5f;
      const char* what = "plain";
      if (variant == 1) {
        p.mask = mask.data();
        p.mask_stride = n;
        what = "mask";
      } else if (variant == 2) {
        p.mask = mask.data() + 2 * n;  // one row broadcast over all rows
        p.mask_stride = 0;
        what = "broadcast mask";
        if (n == 1) continue;  // that mask row is all -inf for n == 1 (covered below)
      } else if (variant == 3) {
        p.causal = true;
        p.n_past = n > 2 ? 1 : 0;
        what = "causal";
      }
      std::vector<float> y(nrows * stride, -1.0f);
      // Two calls, as two threads would split the rows.
      SoftmaxRowsF32(n, 0, 2, x.data(), stride, y.data(), stride, p);
      SoftmaxRowsF32(n, 2, nrows, x.data(), stride, y.data(), stride, p);
      ExpectRowsNear(n, nrows, x, stride, y, p, what);
      for (size_t r = 0; r < nrows; ++r) {
        for (size_t i = n; i < stride; ++i) ASSERT_EQ(y[r * stride + i], -1.0f) << "gap written";
      }
      std::vector<float> z = x;  // in place
      SoftmaxRowsF32(n, 0, nrows, z.data(), stride, z.data(), stride, p);
      for (size_t r = 0; r < nrows; ++r) {
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(z[r * stride + i], y[r * stride + i]);
      }
    }
  }
}

TEST_P(SoftmaxTest, AllMaskedRowIsZero) {
  test::ExpectDispatchedTo(GetParam());
  const float x[3] = {1.0f, 2.0f, 3.0f};
  const float mask[3] = {-INFINITY, -INFINITY, -INFINITY};
  float y[3] = {9, 9, 9};
  SoftmaxParams p;
  p.mask = mask;
  SoftmaxRowsF32(3, 0, 1, x, 3, y, 3, p);
  for (float v : y) EXPECT_EQ(v, 0.0f);
}

// A NaN anywhere in a row (in the vector loop or the tail, alone or among -inf) makes the row NaN
// (its first n_past + r + 1 columns when causal; zeros past them); it came out all 0 as a masked
// row, and a NaN attention query weight then gave finite, wrong outputs no check could see.
// The other rows are unchanged.
TEST_P(SoftmaxTest, NanRowIsNan) {
  test::ExpectDispatchedTo(GetParam());
  for (size_t n : {size_t{3}, size_t{37}}) {
    for (size_t at : {size_t{1}, n - 1}) {
      std::vector<float> x = test::RandomRow(2 * n, 3, -5.0f, 5.0f), y(2 * n, 9.0f);
      std::vector<float> all_nan(n, NAN);
      x[n + at] = NAN;  // row 1
      SoftmaxParams p;
      SoftmaxRowsF32(n, 0, 2, x.data(), n, y.data(), n, p);
      ExpectRowsNear(n, 1, x, n, y, p, "row 0");
      for (size_t i = 0; i < n; ++i) EXPECT_TRUE(std::isnan(y[n + i])) << n << " " << at << " " << i;
      SoftmaxRowsF32(n, 0, 1, all_nan.data(), n, y.data(), n, p);  // all NaN: not a masked row
      for (size_t i = 0; i < n; ++i) EXPECT_TRUE(std::isnan(y[i])) << n << " " << i;
      p.causal = true;  // row 1 sees columns 0 and 1; the NaN at 1 is seen, past them zeros
      x[n + 1] = NAN;
      SoftmaxRowsF32(n, 0, 2, x.data(), n, y.data(), n, p);
      for (size_t i = 0; i < n; ++i) EXPECT_EQ(std::isnan(y[n + i]), i <= 1) << n << " " << at << " " << i;
    }
  }
}

// SumExpShifted against the scalar f64 definition (std::exp of the f32 difference): every length
// around the vector widths, logits-like rows with -inf entries and a 51864-entry vocabulary row;
// Highway's f64 Exp is within 1 ulp and partial sums per lane reorder the additions, so the sums
// agree within the sequential sum's error bound, and the f32 log-sum-exp is the same.
TEST_P(SoftmaxTest, SumExpShiftedMatchesScalarF64) {
  test::ExpectDispatchedTo(GetParam());
  for (size_t n : {size_t{0}, size_t{1}, size_t{3}, size_t{7}, size_t{8}, size_t{9}, size_t{17}, size_t{255},
                   size_t{51864}}) {
    std::vector<float> x = test::RandomRow(n, static_cast<uint32_t>(n + 5), -30.0f, 12.0f);
    for (size_t i = 3; i < n; i += 7) x[i] = -INFINITY;  // suppressed tokens
    if (n > 4) x[n / 2] = -800.0f;                        // below exp's f64 range after the shift
    float mx = -INFINITY;
    for (float v : x) mx = fmaxf(mx, v);
    double want = 0.0;
    for (float v : x) want += exp(static_cast<double>(v - mx));
    const double got = SumExpShifted(x.data(), n, mx);
    if (n == 0) {
      EXPECT_EQ(got, 0.0);
      continue;
    }
    EXPECT_NEAR(got, want, (n + 8) * 0x1p-53 * want) << "n=" << n;  // the sequential sum's own bound
    // The log-sum-exp as Whisper's log-softmax rounds it to f32 is the same.
    EXPECT_EQ(mx + static_cast<float>(log(got)), mx + static_cast<float>(log(want))) << "n=" << n;
  }
  for (size_t at : {size_t{2}, size_t{35}}) {  // in the vector loop and in the tail
    std::vector<float> nan_row(37, 1.0f);
    nan_row[at] = NAN;
    EXPECT_TRUE(std::isnan(SumExpShifted(nan_row.data(), nan_row.size(), 1.0f))) << at;
  }
  const float all_masked[9] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY,
                               -INFINITY, -INFINITY, -INFINITY, 0.0f};
  EXPECT_EQ(SumExpShifted(all_masked, 9, 0.0f), 1.0);
}

}  // namespace
}  // namespace ggml_cpu
