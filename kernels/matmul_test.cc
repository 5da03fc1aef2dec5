// kernels/matmul on every target this CPU supports, against a double-precision reference:
// both paths (packed, dot tiles), odd strides, blocks split as threads would split them, the
// plug-in row-ops hook, and argument errors.
#include "kernels/matmul.h"

#include <math.h>
#include <string.h>

#include <vector>

#include "ggml/fp16.h"
#include "gtest/gtest.h"
#include "hwy/tests/hwy_gtest.h"
#include "kernels/asan_ranges.h"
#include "kernels/test_util.h"

namespace ggml_cpu {
namespace {

HWY_BEFORE_TEST(MatMulTest);

constexpr float kSentinel = -12345.0f;

struct Shape {
  size_t m, n;
};

// M x N pairs: one row/column, remainders of every micro-tile, more than one 128-row a block,
// and N on both sides of kMulMatPackedMinN (and not a multiple of 6 or 12).
const Shape kShapes[] = {{1, 1}, {5, 3}, {33, 17}, {129, 40}, {64, 15}};

// Reference c and sum |a b| per output, in double. a rows are given as floats (f16 widened).
void Reference(size_t k, const std::vector<float>& a, size_t lda, const std::vector<float>& b,
               size_t ldb, size_t m, size_t n, std::vector<double>* ref, std::vector<double>* mag) {
  ref->assign(m * n, 0.0);
  mag->assign(m * n, 0.0);
  for (size_t j = 0; j < n; ++j) {
    for (size_t i = 0; i < m; ++i) {
      double s = 0, g = 0;
      for (size_t kk = 0; kk < k; ++kk) {
        const double p = double(a[i * lda + kk]) * b[j * ldb + kk];
        s += p;
        g += fabs(p);
      }
      (*ref)[j * m + i] = s;
      (*mag)[j * m + i] = g;
    }
  }
}

// Inputs for one case; `integers` makes every partial sum exact (then c must equal ref).
struct Case {
  size_t k, m, n, lda, ldb, ldc;
  std::vector<float> a, b;        // a already rounded to f16 values when testing F16
  std::vector<ggml_fp16_t> a16;
  std::vector<double> ref, mag;

  Case(size_t k_, Shape s, bool integers, uint32_t seed)
      : k(k_), m(s.m), n(s.n), lda(k_ + 3), ldb(k_ + 5), ldc(s.m + 1) {
    a = integers ? test::IntegerRow(m * lda, seed) : test::RandomRow(m * lda, seed);
    b = integers ? test::IntegerRow(n * ldb, seed + 1) : test::RandomRow(n * ldb, seed + 1);
    a16.resize(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      a16[i] = ggml_fp32_to_fp16(a[i]);
      a[i] = ggml_fp16_to_fp32(a16[i]);  // both types then have the same exact reference
    }
    Reference(k, a, lda, b, ldb, m, n, &ref, &mag);
  }

  // Every output within the error bound (exact for integers); the ldc gap untouched.
  void Check(const std::vector<float>& c, bool integers, const char* what) const {
    for (size_t j = 0; j < n; ++j) {
      for (size_t i = 0; i < m; ++i) {
        const double want = ref[j * m + i];
        const double tol = integers ? 0.0 : (k + 16) * 0x1p-24 * mag[j * m + i];
        ASSERT_NEAR(c[j * ldc + i], want, tol)
            << what << " k=" << k << " m=" << m << " n=" << n << " at m=" << i << " n=" << j;
      }
      ASSERT_EQ(c[j * ldc + m], kSentinel) << what << " wrote past m_end";
    }
  }
};

// Splits [0, M) x [0, N) into 3 x 2 blocks, as three threads on M and two on N would.
template <class Fn>
void ForEachBlock(size_t m, size_t n, const Fn& fn) {
  const size_t ms[4] = {0, m / 3, 2 * m / 3, m};
  const size_t ns[3] = {0, n / 2, n};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 2; ++j) fn(ms[i], ms[i + 1], ns[j], ns[j + 1]);
  }
}

TEST_P(MatMulTest, DenseF32AndF16) {
  test::ExpectDispatchedTo(GetParam());
  std::vector<char> work(MulMatWorkSize() + 1);
  void* w = work.data() + 1;  // deliberately misaligned: the kernel aligns it
  for (bool integers : {true, false}) {
    for (size_t k : test::Sizes()) {
      for (const Shape& s : kShapes) {
        const Case t(k, s, integers, static_cast<uint32_t>(k * 131 + s.m * 7 + s.n));
        std::vector<float> c(t.n * t.ldc, kSentinel);
        ForEachBlock(t.m, t.n, [&](size_t m0, size_t m1, size_t n0, size_t n1) {
          ASSERT_TRUE(MulMatF32(k, t.a.data(), t.lda, t.b.data(), t.ldb, c.data(), t.ldc, m0, m1,
                                n0, n1, w, work.size() - 1)
                          .ok());
        });
        t.Check(c, integers, "F32");
        std::fill(c.begin(), c.end(), kSentinel);
        ForEachBlock(t.m, t.n, [&](size_t m0, size_t m1, size_t n0, size_t n1) {
          ASSERT_TRUE(MulMatF16(k, t.a16.data(), t.lda, t.b.data(), t.ldb, c.data(), t.ldc, m0,
                                m1, n0, n1, w, work.size() - 1)
                          .ok());
        });
        t.Check(c, integers, "F16");
      }
    }
  }
}

// The dot path for any number of b rows (MulMatF32Dots / MulMatF16Dots): every column of a block
// of 16 to 129 columns, split over rows as threads would split it, has the bytes of that column
// computed alone by MulMatF32 / MulMatF16 (one b row: their dot path), and the reference's bound.
// (MulMatF32 over the same blocks takes its packed path from 16 columns on, whose sums are in
// another order.)
TEST_P(MatMulTest, DotsPathEqualsEachColumnAlone) {
  test::ExpectDispatchedTo(GetParam());
  std::vector<char> work(MulMatWorkSize());
  const Shape shapes[] = {{33, 16}, {129, 40}, {7, 129}};
  for (size_t k : test::Sizes()) {
    for (const Shape& s : shapes) {
      const Case t(k, s, false, static_cast<uint32_t>(k * 17 + s.m * 5 + s.n));
      const size_t ms[4] = {0, t.m / 3, 2 * t.m / 3, t.m};
      for (bool f16 : {false, true}) {
        std::vector<float> c(t.n * t.ldc, kSentinel), one(t.n * t.ldc, kSentinel);
        for (int i = 0; i < 3; ++i) {
          ASSERT_TRUE((f16 ? MulMatF16Dots(k, t.a16.data(), t.lda, t.b.data(), t.ldb, c.data(), t.ldc, ms[i],
                                           ms[i + 1], 0, t.n)
                           : MulMatF32Dots(k, t.a.data(), t.lda, t.b.data(), t.ldb, c.data(), t.ldc, ms[i],
                                           ms[i + 1], 0, t.n))
                          .ok());
        }
        for (size_t j = 0; j < t.n; ++j) {
          ASSERT_TRUE((f16 ? MulMatF16(k, t.a16.data(), t.lda, t.b.data(), t.ldb, one.data(), t.ldc, 0, t.m, j,
                                       j + 1, work.data(), work.size())
                           : MulMatF32(k, t.a.data(), t.lda, t.b.data(), t.ldb, one.data(), t.ldc, 0, t.m, j,
                                       j + 1, work.data(), work.size()))
                          .ok());
        }
        ASSERT_EQ(0, memcmp(c.data(), one.data(), c.size() * sizeof(float)))
            << (f16 ? "F16" : "F32") << " k=" << k << " m=" << t.m << " n=" << t.n;
        t.Check(c, false, f16 ? "F16 dots" : "F32 dots");
      }
    }
  }
}

// A test-only plug-in type: a is f32, b rows are converted to f16 in blocks of 4 (8 bytes), so
// the row-bytes arithmetic differs from the built-in types. Reference uses the rounded b.
void ToF16Blocks(const float* x, void* y, int64_t k) {
  for (int64_t i = 0; i < k; ++i) static_cast<ggml_fp16_t*>(y)[i] = ggml_fp32_to_fp16(x[i]);
}
void DotF32F16Rows(int64_t n, int64_t nrows, const void* a, size_t a_nb1, const void* y,
                   float* s) {
  for (int64_t r = 0; r < nrows; ++r) {
    const float* ar = reinterpret_cast<const float*>(static_cast<const char*>(a) + r * a_nb1);
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += double(ar[i]) * ggml_fp16_to_fp32(static_cast<const ggml_fp16_t*>(y)[i]);
    s[r] = static_cast<float>(sum);
  }
}
const MulMatRowOps kTestOps = {"test_f16b", 4, 8, &ToF16Blocks, &DotF32F16Rows};

TEST_P(MatMulTest, RowOpsHook) {
  test::ExpectDispatchedTo(GetParam());
  // The hook's two phases with the test type over every shape: b converted in two halves, c in
  // 3 x 2 blocks. K a multiple of 4; b rounded to f16 first, so compare with that reference.
  for (size_t k : {size_t{4}, size_t{36}, size_t{256}, size_t{4100}}) {
    for (const Shape& s : kShapes) {
      Case t(k, s, false, static_cast<uint32_t>(k * 17 + s.m + s.n));
      std::vector<float> b16 = t.b;
      for (float& v : b16) v = ggml_fp16_to_fp32(ggml_fp32_to_fp16(v));
      Reference(k, t.a, t.lda, b16, t.ldb, t.m, t.n, &t.ref, &t.mag);
      ASSERT_EQ(MulMatConvertedRowBytes(kTestOps, k), 2 * k);
      std::vector<char> wdata(MulMatConvertedWorkSize(kTestOps, k, t.n));
      ASSERT_TRUE(MulMatConvertB(kTestOps, k, t.b.data(), t.ldb, 0, t.n / 2, wdata.data(), wdata.size()).ok());
      ASSERT_TRUE(MulMatConvertB(kTestOps, k, t.b.data(), t.ldb, t.n / 2, t.n, wdata.data(), wdata.size()).ok());
      std::vector<float> c(t.n * t.ldc, kSentinel);
      ForEachBlock(t.m, t.n, [&](size_t m0, size_t m1, size_t n0, size_t n1) {
        ASSERT_TRUE(MulMatConverted(kTestOps, k, t.a.data(), t.lda * 4, wdata.data(), wdata.size(), c.data(),
                                    t.ldc, m0, m1, n0, n1).ok());
      });
      t.Check(c, false, "test_f16b");
    }
  }
}

// A test-only block type for MulMatDequant: 32 int8 values after an f32 scale (36 bytes), so
// the block bytes are not those of any ggml type. A row of k floats that are multiples of a
// power of two dequantizes exactly; the reference uses the dequantized values.
constexpr int64_t kTestBlck = 32;
constexpr size_t kTestBlockBytes = 36;
void DequantTestBlocks(const void* x, float* y, int64_t k) {
  const char* p = static_cast<const char*>(x);
  for (int64_t b = 0; b < k / kTestBlck; ++b, p += kTestBlockBytes) {
    float d;
    memcpy(&d, p, sizeof(d));
    for (int64_t i = 0; i < kTestBlck; ++i) y[b * kTestBlck + i] = d * static_cast<int8_t>(p[4 + i]);
  }
}
const MulMatDequantOps kTestDequantOps = {"test_i8x32", kTestBlck, kTestBlockBytes, &DequantTestBlocks};

// Quantizes rows of `a` (k floats, stride lda) into test blocks (row stride a_nb1 bytes) and
// replaces `a` by the dequantized values, so that Reference() is exact for them.
std::vector<char> QuantizeTestRows(size_t k, size_t m, size_t lda, size_t a_nb1, std::vector<float>* a) {
  std::vector<char> q(m * a_nb1, 0);
  for (size_t i = 0; i < m; ++i) {
    for (size_t b = 0; b < k / kTestBlck; ++b) {
      float* x = a->data() + i * lda + b * kTestBlck;
      float amax = 0;
      for (int64_t j = 0; j < kTestBlck; ++j) amax = fmaxf(amax, fabsf(x[j]));
      const float d = amax == 0 ? 1.0f : ldexpf(1.0f, static_cast<int>(ceilf(log2f(amax / 127))));
      char* p = q.data() + i * a_nb1 + b * kTestBlockBytes;
      memcpy(p, &d, sizeof(d));
      for (int64_t j = 0; j < kTestBlck; ++j) {
        const int v = static_cast<int>(lrintf(x[j] / d));
        p[4 + j] = static_cast<char>(v);
        x[j] = d * static_cast<float>(v);
      }
    }
  }
  return q;
}

TEST_P(MatMulTest, DequantizedA) {
  test::ExpectDispatchedTo(GetParam());
  std::vector<char> work(MulMatWorkSize() + 1);
  void* w = work.data() + 1;
  // 544 and 1056 are cut into K blocks that are not multiples of 32 unless rounded (272, 352).
  for (bool integers : {true, false}) {
    for (size_t k : {size_t{32}, size_t{96}, size_t{544}, size_t{1056}}) {
      for (const Shape& s : kShapes) {
        Case t(k, s, integers, static_cast<uint32_t>(k * 7 + s.m * 3 + s.n));
        const size_t a_nb1 = k / kTestBlck * kTestBlockBytes + 8;  // padded rows
        const std::vector<char> q = QuantizeTestRows(k, t.m, t.lda, a_nb1, &t.a);
        Reference(k, t.a, t.lda, t.b, t.ldb, t.m, t.n, &t.ref, &t.mag);
        std::vector<float> c(t.n * t.ldc, kSentinel);
        ForEachBlock(t.m, t.n, [&](size_t m0, size_t m1, size_t n0, size_t n1) {
          const absl::Status st = MulMatDequant(kTestDequantOps, k, q.data(), a_nb1, t.b.data(), t.ldb, c.data(),
                                                t.ldc, m0, m1, n0, n1, w, work.size() - 1);
          ASSERT_TRUE(st.ok()) << st;
        });
        t.Check(c, integers, "dequant");
      }
    }
  }
}

TEST_P(MatMulTest, ZeroKWritesZeros) {
  test::ExpectDispatchedTo(GetParam());
  std::vector<char> work(MulMatWorkSize());
  std::vector<float> c(4 * 3, kSentinel);
  const float a = 1, b = 1;
  ASSERT_TRUE(MulMatF32(0, &a, 0, &b, 0, c.data(), 3, 0, 3, 0, 4, work.data(), work.size()).ok());
  for (float v : c) EXPECT_EQ(v, 0.0f);
}

TEST(MatMulErrorTest, InvalidArgumentsAreErrors) {
  std::vector<char> work(MulMatWorkSize());
  std::vector<float> a(64, 1.0f), b(64, 1.0f), c(64, 0.0f);
  const size_t ws = work.size();
  void* w = work.data();
  auto code = [](const absl::Status& s) { return s.code(); };
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  EXPECT_EQ(code(MulMatF32(8, a.data(), 7, b.data(), 8, c.data(), 4, 0, 4, 0, 2, w, ws)), kInvalid);
  EXPECT_EQ(code(MulMatF32(8, a.data(), 8, b.data(), 7, c.data(), 4, 0, 4, 0, 2, w, ws)), kInvalid);
  EXPECT_EQ(code(MulMatF32(8, a.data(), 8, b.data(), 8, c.data(), 3, 0, 4, 0, 2, w, ws)), kInvalid);
  EXPECT_EQ(code(MulMatF32(8, a.data(), 8, b.data(), 8, c.data(), 4, 3, 2, 0, 2, w, ws)), kInvalid);
  EXPECT_EQ(code(MulMatF32(8, a.data(), 8, b.data(), 8, c.data(), 4, 0, 4, 0, 2, w, ws - 1)), kInvalid);
  EXPECT_EQ(code(MulMatF32(8, a.data(), 8, b.data(), 8, c.data(), 4, 0, 4, 0, 2, nullptr, ws)), kInvalid);
  EXPECT_EQ(code(MulMatF32(8, nullptr, 8, b.data(), 8, c.data(), 4, 0, 4, 0, 2, w, ws)), kInvalid);
  EXPECT_EQ(code(MulMatF32(8, a.data(), 8, b.data(), 8, nullptr, 4, 0, 4, 0, 2, w, ws)), kInvalid);
  // The dot path: the same operand checks, and no scratch.
  EXPECT_TRUE(MulMatF32Dots(8, a.data(), 8, b.data(), 8, c.data(), 4, 0, 4, 0, 2).ok());
  EXPECT_EQ(code(MulMatF32Dots(8, a.data(), 7, b.data(), 8, c.data(), 4, 0, 4, 0, 2)), kInvalid);
  EXPECT_EQ(code(MulMatF32Dots(8, a.data(), 8, b.data(), 8, c.data(), 3, 0, 4, 0, 2)), kInvalid);
  EXPECT_EQ(code(MulMatF16Dots(8, nullptr, 8, b.data(), 8, c.data(), 4, 0, 4, 0, 2)), kInvalid);
  EXPECT_EQ(code(MulMatF16Dots(8, reinterpret_cast<const ggml_fp16_t*>(a.data()), 8, b.data(), 8, c.data(), 4, 0,
                               4, 3, 2)),
            kInvalid);
  // Empty blocks are fine even without buffers.
  EXPECT_TRUE(MulMatF32(8, nullptr, 0, nullptr, 0, nullptr, 0, 2, 2, 0, 5, nullptr, 0).ok());
  // The hook: K must be a multiple of the block size; wdata must hold n_end rows.
  std::vector<char> wd(MulMatConvertedWorkSize(kTestOps, 8, 2));
  EXPECT_EQ(code(MulMatConvertB(kTestOps, 6, b.data(), 8, 0, 2, wd.data(), wd.size())), kInvalid);
  EXPECT_EQ(code(MulMatConvertB(kTestOps, 8, b.data(), 8, 0, 3, wd.data(), wd.size())), kInvalid);
  EXPECT_EQ(code(MulMatConverted(kTestOps, 8, a.data(), 32, wd.data(), wd.size(), c.data(), 4, 0,
                                 4, 0, 3)),
            kInvalid);
  MulMatRowOps broken = kTestOps;
  broken.vec_dot = nullptr;
  EXPECT_EQ(code(MulMatConvertB(broken, 8, b.data(), 8, 0, 2, wd.data(), wd.size())), kInvalid);
  const absl::Status s = MulMatF32(8, a.data(), 7, b.data(), 8, c.data(), 4, 0, 4, 0, 2, w, ws);
  EXPECT_NE(s.message().find("lda=7 < k=8"), std::string::npos) << s.message();
  // Dequantized a: K a multiple of the block, block sizes that divide 512, rows of a whole.
  std::vector<char> qa(4 * 2 * kTestBlockBytes);
  std::vector<float> b64(2 * 64, 1.0f);
  const size_t qnb1 = 2 * kTestBlockBytes;
  EXPECT_TRUE(MulMatDequant(kTestDequantOps, 64, qa.data(), qnb1, b64.data(), 64, c.data(), 4, 0, 4, 0, 2, w, ws).ok());
  EXPECT_EQ(code(MulMatDequant(kTestDequantOps, 48, qa.data(), qnb1, b64.data(), 64, c.data(), 4, 0, 4, 0, 2, w, ws)),
            kInvalid);
  EXPECT_EQ(code(MulMatDequant(kTestDequantOps, 64, qa.data(), qnb1 - 1, b64.data(), 64, c.data(), 4, 0, 4, 0, 2, w,
                               ws)),
            kInvalid);
  EXPECT_EQ(code(MulMatDequant(kTestDequantOps, 64, qa.data(), qnb1, b64.data(), 63, c.data(), 4, 0, 4, 0, 2, w, ws)),
            kInvalid);
  EXPECT_EQ(code(MulMatDequant(kTestDequantOps, 64, qa.data(), qnb1, b64.data(), 64, c.data(), 4, 0, 4, 0, 2, w,
                               ws - 1)),
            kInvalid);
  MulMatDequantOps odd = kTestDequantOps;
  odd.blck_size = 48;  // does not divide 512: a K block could not hold whole blocks
  const absl::Status so = MulMatDequant(odd, 96, qa.data(), qnb1, b64.data(), 96, c.data(), 4, 0, 4, 0, 2, w, ws);
  EXPECT_NE(so.message().find("does not divide 512"), std::string::npos) << so.message();
}

// Under ASan (kernels/asan_ranges.h): a b operand one float short of its last row is reported
// at the entry point, before any kernel access, whether or not matmul.cc is instrumented.
TEST(MatMulAsanTest, ShortOperandIsReportedAtTheEntry) {
  if (!AsanRuntimePresent()) GTEST_SKIP() << "needs the ASan runtime (--config=asan)";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::vector<char> work(MulMatWorkSize());
  std::vector<float> a(8 * 4, 1.0f), c(4 * 2, 0.0f);
  EXPECT_DEATH(
      {
        std::vector<float> b(8 * 2 - 1, 1.0f);  // row 1 lacks its last element
        (void)MulMatF32(8, a.data(), 8, b.data(), 8, c.data(), 4, 0, 4, 0, 2, work.data(),
                        work.size());
      },
      "kernel operand check\\): MulMatF32: b row 1 of 2");
  std::vector<ggml_fp16_t> ah(8 * 3);  // 3 of the 4 a rows
  std::vector<float> b(8 * 2, 1.0f);
  EXPECT_DEATH((void)MulMatF16(8, ah.data(), 8, b.data(), 8, c.data(), 4, 0, 4, 0, 2, work.data(),
                               work.size()),
               "MulMatF16: a row 3 of 4");
}

}  // namespace
}  // namespace ggml_cpu
