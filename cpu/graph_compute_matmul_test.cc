// MUL_MAT through ggml_graph_compute against the reference evaluator, on every Highway target:
// F32/F16/quantized a, F32/F16 b (contiguous, transposed, permuted), odd K, M, N, batch
// broadcasting, and 1/2/3/8 threads agreeing bit for bit (RunAndReference); the matvec mode
// (ggml_mul_mat_set_matvec) against each column alone.
//
// Each result element is checked against a bound derived for it (not a fixed tolerance):
//   f32 accumulation:  2 gamma_K sum_k |a_k b_k|, gamma_K = K u / (1 - K u), u = 2^-24;
//   quantized a, N < kMulMatPackedMinN: b is quantized to Q8_0/Q8_1 per block of 32 with scale
//   d = max|b| / 127, so |b - b_q| <= d / 2 + 127 d 2^-11 (half a step plus the fp16 rounding of
//   d): add 0.57 d sum_k |a_k| per block; Q4_1/Q5_1 also use the fp16 block sum s = d sum q,
//   adding max|a_block| sum_block |b| 2^-10;
//   quantized a, larger N: a is dequantized exactly and b stays f32, so the f32 bound applies
//   (on the dequantized a, which is also what the reference reads); except Q8_0, Q4_0 and Q5_0
//   on targets with the int8 GEMM (QuantGemmFast: AVX3_DL), where b is quantized as for small N
//   (and Int8PathEqualsReferenceBits checks those results bit for bit).
#include <math.h>
#include <string.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cpu/graph_compute.h"
#include "cpu/graph_compute_test_util.h"
#include "ggml/ggml.h"
#include "ggml/ops.h"
#include "gtest/gtest.h"
#include "hwy/tests/hwy_gtest.h"
#include "kernels/dispatch.h"
#include "kernels/matmul.h"
#include "kernels/quant_gemm.h"
#include "kernels/quant_ref.h"
#include "kernels/quant_traits.h"
#include "kernels/quant_types.h"
#include "kernels/test_util.h"

namespace ggml_cpu {
namespace {

using test::RandomTensor;
using test::RunAndReference;

HWY_BEFORE_TEST(GraphComputeMatMulTest);

struct Ctx {
  ggml_context* ctx = ggml_init({256u << 20, nullptr, false});
  ~Ctx() { ggml_free(ctx); }
};

test::Executor& Exec() {
  static test::Executor* ex = new test::Executor();
  return *ex;
}

// Element (i0, i1, i2, i3) of a as float, dequantizing quantized rows.
class Reader {
 public:
  explicit Reader(const ggml_tensor* t) : t_(t) {
    if (t->type == GGML_TYPE_F32 || t->type == GGML_TYPE_F16) {
      values_ = test::Values(t);
      return;
    }
    const QuantTypeTraits* q = GetQuantTypeTraits(t->type);
    values_.resize(static_cast<size_t>(ggml_nelements(t)));
    for (int64_t r = 0; r < ggml_nrows(t); ++r) {
      const int64_t i1 = r % t->ne[1], i2 = (r / t->ne[1]) % t->ne[2], i3 = r / (t->ne[1] * t->ne[2]);
      q->to_float(static_cast<const char*>(t->data) + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3],
                  values_.data() + r * t->ne[0], t->ne[0]);
    }
  }
  float at(int64_t i0, int64_t i1, int64_t i2, int64_t i3) const {
    return values_[static_cast<size_t>(((i3 * t_->ne[2] + i2) * t_->ne[1] + i1) * t_->ne[0] + i0)];
  }

 private:
  const ggml_tensor* t_;
  std::vector<float> values_;
};

// Per-element error bounds of mul_mat(a, b) (see the top of the file).
// small_n: the bound of the small-N paths whatever N (ggml_mul_mat_set_matvec).
std::vector<double> Bounds(const ggml_tensor* a, const ggml_tensor* b, bool small_n = false) {
  const Reader ar(a), br(b);
  const int64_t K = a->ne[0], M = a->ne[1], N = b->ne[1];
  const int64_t r2 = b->ne[2] / a->ne[2], r3 = b->ne[3] / a->ne[3];
  const bool quant = ggml_is_quantized(a->type) && (small_n || N < static_cast<int64_t>(kMulMatPackedMinN) ||
                                                    (QuantGemmSupports(a->type) && QuantGemmFast()));
  const bool with_sum = a->type == GGML_TYPE_Q4_1 || a->type == GGML_TYPE_Q5_1;
  const double u = ldexp(1.0, -24), gamma = K * u / (1.0 - K * u);
  std::vector<double> bounds;
  for (int64_t i3 = 0; i3 < b->ne[3]; ++i3)
    for (int64_t i2 = 0; i2 < b->ne[2]; ++i2)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t m = 0; m < M; ++m) {
          double abs_sum = 0.0, quant_err = 0.0;
          for (int64_t k0 = 0; k0 < K; k0 += 32) {
            double amax_b = 0.0, sum_abs_a = 0.0, amax_a = 0.0, sum_abs_b = 0.0;
            for (int64_t k = k0; k < std::min(K, k0 + 32); ++k) {
              const double x = fabs(ar.at(k, m, i2 / r2, i3 / r3)), y = fabs(br.at(k, n, i2, i3));
              abs_sum += x * y;
              amax_b = std::max(amax_b, y);
              amax_a = std::max(amax_a, x);
              sum_abs_a += x;
              sum_abs_b += y;
            }
            if (quant) quant_err += 0.57 * amax_b / 127.0 * sum_abs_a + (with_sum ? amax_a * sum_abs_b * ldexp(1.0, -10) : 0.0);
          }
          bounds.push_back(2.0 * gamma * abs_sum * (quant ? 1.1 : 1.0) + quant_err + 1e-30);
        }
  return bounds;
}

// Runs mul_mat(a, b) and checks every element against its bound.
void CheckMulMat(ggml_context* ctx, ggml_tensor* a, ggml_tensor* b, const std::string& what) {
  ggml_tensor* out = ggml_mul_mat(ctx, a, b);
  ASSERT_NE(out, nullptr) << what << ": " << ggml_last_error();
  const test::Outcome o = RunAndReference(&Exec(), ctx, out, what);
  const std::vector<double> bound = Bounds(a, b);
  ASSERT_EQ(o.exec.size(), bound.size()) << what;
  int failures = 0;
  for (size_t i = 0; i < bound.size(); ++i) {
    const double err = fabs(static_cast<double>(o.exec[i]) - o.ref[i]);
    if (!(err <= bound[i]) && failures++ < 5) {
      ADD_FAILURE() << what << " [" << i << "]: exec " << o.exec[i] << " ref " << o.ref[i] << " err " << err
                    << " > bound " << bound[i];
    }
  }
  EXPECT_EQ(failures, 0) << what;
}

struct Shape {
  int64_t m, n;
};

TEST_P(GraphComputeMatMulTest, FloatAOddSizes) {
  test::ExpectDispatchedTo(GetParam());
  // N >= 16 takes the packed kernel path, smaller N the dot-product path; (70, 300) also splits
  // N across threads.
  const Shape shapes[] = {{1, 1}, {3, 7}, {33, 17}, {255, 3}, {7, 33}, {70, 300}};
  for (size_t uk : test::Sizes()) {
    const int64_t K = static_cast<int64_t>(uk);
    for (const Shape& s : shapes) {
      if (K * s.m * s.n > 4097 * 33 * 17) continue;  // keep the reference's triple loop short
      for (ggml_type at : {GGML_TYPE_F32, GGML_TYPE_F16}) {
        Ctx c;
        ggml_tensor* a = RandomTensor(c.ctx, at, {K, s.m}, 60);
        const std::string what = absl::StrCat(ggml_type_name(at), " K=", K, " M=", s.m, " N=", s.n);
        CheckMulMat(c.ctx, a, RandomTensor(c.ctx, GGML_TYPE_F32, {K, s.n}, 61), what + " b f32");
        CheckMulMat(c.ctx, a, RandomTensor(c.ctx, GGML_TYPE_F16, {K, s.n}, 62), what + " b f16");
        ggml_tensor* bt = ggml_transpose(c.ctx, RandomTensor(c.ctx, GGML_TYPE_F32, {s.n, K}, 63));
        CheckMulMat(c.ctx, a, bt, what + " b transposed");
      }
    }
  }
}

TEST_P(GraphComputeMatMulTest, BroadcastBatchesAndPermutedB) {
  test::ExpectDispatchedTo(GetParam());
  for (ggml_type at : {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_Q4_0}) {
    Ctx c;
    // a: 2 x 1 batches; b: 6 x 2 batches -> a batch (i2 / 3, i3 / 2).
    ggml_tensor* a = RandomTensor(c.ctx, at, {64, 33, 2, 1}, 70);
    CheckMulMat(c.ctx, a, RandomTensor(c.ctx, GGML_TYPE_F32, {64, 19, 6, 2}, 71), "broadcast f32 b");
    // b as attention uses it: [d, heads, tokens] permuted to [d, tokens, heads] (strided rows).
    ggml_tensor* q = RandomTensor(c.ctx, GGML_TYPE_F32, {64, 6, 19}, 72);
    ggml_tensor* a6 = RandomTensor(c.ctx, at, {64, 33, 2}, 73);
    CheckMulMat(c.ctx, a6, ggml_permute(c.ctx, q, 0, 2, 1, 3), absl::StrCat(ggml_type_name(at), " permuted b"));
    ggml_tensor* qh = RandomTensor(c.ctx, GGML_TYPE_F16, {64, 6, 19}, 74);
    CheckMulMat(c.ctx, a6, ggml_permute(c.ctx, qh, 0, 2, 1, 3), absl::StrCat(ggml_type_name(at), " permuted f16 b"));
  }
}

TEST_P(GraphComputeMatMulTest, QuantizedA) {
  test::ExpectDispatchedTo(GetParam());
  // N = 33 and 40 take the dequantizing path (40 split across threads on N too).
  const Shape shapes[] = {{1, 1}, {3, 7}, {33, 33}, {255, 3}, {130, 40}};
  for (ggml_type at : {GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0}) {
    for (int64_t K : {32, 64, 256, 4096}) {
      for (const Shape& s : shapes) {
        if (K * s.m * s.n > 4096 * 33 * 17) continue;
        Ctx c;
        ggml_tensor* a = RandomTensor(c.ctx, at, {K, s.m}, 80);
        const std::string what = absl::StrCat(ggml_type_name(at), " K=", K, " M=", s.m, " N=", s.n);
        CheckMulMat(c.ctx, a, RandomTensor(c.ctx, GGML_TYPE_F32, {K, s.n}, 81), what + " b f32");
        CheckMulMat(c.ctx, a, RandomTensor(c.ctx, GGML_TYPE_F16, {K, s.n}, 82), what + " b f16");
        ggml_tensor* bt = ggml_transpose(c.ctx, RandomTensor(c.ctx, GGML_TYPE_F32, {s.n, K}, 83));
        CheckMulMat(c.ctx, a, bt, what + " b transposed");
      }
    }
  }
}

// The int8 GEMM path (Q8_0/Q4_0/Q5_0 a, N >= 16, targets with QuantGemmFast): every element
// bit-identical to ggml's scalar reference, vec_dot_*_q8_0_ref of the a row with the b row
// quantized by quantize_row_q8_0_ref, for M and N off the 16-row panels and 6-column tiles, a
// batch broadcast over b, with 1, 2, 3 and 8 threads (RunAndReference asserts they agree).
template <class Block>
void CheckInt8Path(ggml_type type, float (*ref)(int64_t, const Block*, const block_q8_0*)) {
  const int64_t kShapes[][3] = {{64, 33, 17}, {96, 70, 40}, {384, 130, 101}, {32, 16, 16}};
  for (const auto& sh : kShapes) {
    const int64_t K = sh[0], M = sh[1], N = sh[2];
    Ctx c;
    ggml_tensor* a = RandomTensor(c.ctx, type, {K, M, 2}, 90);
    ggml_tensor* b = RandomTensor(c.ctx, GGML_TYPE_F32, {K, N, 4}, 91);
    const std::string what = absl::StrCat(ggml_type_name(type), " K=", K, " M=", M, " N=", N);
    // Quantized b rows, computed before the graph runs (the reference evaluator overwrites nodes,
    // not leaves, but take no chances).
    std::vector<block_q8_0> yq(static_cast<size_t>(N * 4 * K / 32));
    for (int64_t r = 0; r < N * 4; ++r) {
      quantize_row_q8_0_ref(reinterpret_cast<const float*>(static_cast<const char*>(b->data) + r * b->nb[1]),
                            yq.data() + r * (K / 32), K);
    }
    const test::Outcome o = RunAndReference(&Exec(), c.ctx, ggml_mul_mat(c.ctx, a, b), what);
    ASSERT_EQ(o.exec.size(), static_cast<size_t>(M * N * 4)) << what;
    for (int64_t i2 = 0; i2 < 4; ++i2) {
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t m = 0; m < M; ++m) {
          const auto* row = reinterpret_cast<const Block*>(static_cast<const char*>(a->data) + m * a->nb[1] +
                                                           (i2 / 2) * a->nb[2]);
          const float want = ref(K, row, yq.data() + (i2 * N + n) * (K / 32));
          const float got = o.exec[static_cast<size_t>((i2 * N + n) * M + m)];
          ASSERT_TRUE(memcmp(&want, &got, 4) == 0 || (isnan(want) && isnan(got)))
              << what << " m=" << m << " n=" << n << " i2=" << i2 << ": " << got << " vs " << want;
        }
      }
    }
  }
}

TEST_P(GraphComputeMatMulTest, Int8PathEqualsReferenceBits) {
  test::ExpectDispatchedTo(GetParam());
  if (!QuantGemmFast()) GTEST_SKIP() << "no int8 GEMM on " << ggml_cpu_target_name() << ": dequantizing path";
  CheckInt8Path<block_q8_0>(GGML_TYPE_Q8_0, vec_dot_q8_0_q8_0_ref);
  CheckInt8Path<block_q4_0>(GGML_TYPE_Q4_0, vec_dot_q4_0_q8_0_ref);
  CheckInt8Path<block_q5_0>(GGML_TYPE_Q5_0, vec_dot_q5_0_q8_0_ref);
}

// ggml_mul_mat_set_matvec: for every type of a and N from 16 (the packed path's first) to 129,
// each result column has the bytes of the same product on that column alone (N = 1: the
// matrix-vector / vec_dot paths), with 1, 2, 3 and 8 threads (RunAndReference), and is within the
// small-N bound of the reference. The plan shows which path ran: no per-thread packing scratch
// for F32/F16 a; for quantized a vec_dot, or from 32 columns the int8 GEMM where it runs (its
// outputs have vec_dot's bits, Int8PathEqualsReferenceBits, so only its packed panels in the work
// buffer tell it apart), never the dequantizing path.
TEST_P(GraphComputeMatMulTest, MatVecModeComputesEachColumnAlone) {
  test::ExpectDispatchedTo(GetParam());
  const int64_t K = 256, M = 130;
  for (ggml_type at : {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_Q8_0, GGML_TYPE_Q4_0, GGML_TYPE_Q5_1}) {
    for (int64_t N : {16, 40, 129}) {
      Ctx c;
      ggml_tensor* a = RandomTensor(c.ctx, at, {K, M}, 70);
      ggml_tensor* b = RandomTensor(c.ctx, GGML_TYPE_F32, {K, N}, 71);
      const std::string what = absl::StrCat(ggml_type_name(at), " N=", N);
      ggml_tensor* plain = ggml_mul_mat(c.ctx, a, b);
      ggml_tensor* out = ggml_mul_mat_set_matvec(ggml_mul_mat(c.ctx, a, b), true);
      ASSERT_TRUE(plain != nullptr && out != nullptr && ggml_mul_mat_get_matvec(out)) << ggml_last_error();
      ASSERT_FALSE(ggml_mul_mat_get_matvec(plain));
      ggml_cgraph* g_out = ggml_new_graph(c.ctx);
      ggml_cgraph* g_plain = ggml_new_graph(c.ctx);
      ASSERT_TRUE(ggml_build_forward_expand(g_out, out) && ggml_build_forward_expand(g_plain, plain));
      const size_t work = ggml_graph_plan(g_out, 2, Exec().pool()).work_size;
      const size_t work_plain = ggml_graph_plan(g_plain, 2, Exec().pool()).work_size;
      if (!ggml_is_quantized(at)) {
        EXPECT_EQ(work, 0u) << what;  // contiguous F32 b: nothing to convert, no scratch
        EXPECT_GE(work_plain, 2 * MulMatWorkSize()) << what;
      } else if (QuantGemmSupports(at) && QuantGemmFast() && N >= 32) {
        // The int8 GEMM, whose outputs have vec_dot's bits: allowed in the mode too.
        EXPECT_GE(work, QuantGemmPackedBytesA(K, M)) << what;
        EXPECT_GE(work_plain, QuantGemmPackedBytesA(K, M)) << what;
      } else {
        EXPECT_LT(work, QuantGemmPackedBytesA(K, M)) << what;  // vec_dot, never dequantizing
      }
      const test::Outcome o = RunAndReference(&Exec(), c.ctx, out, what);
      ASSERT_EQ(o.exec.size(), static_cast<size_t>(M * N)) << what;
      for (int64_t n = 0; n < N; ++n) {
        ggml_tensor* col = ggml_view_2d(c.ctx, b, K, 1, b->nb[1], static_cast<size_t>(n) * b->nb[1]);
        ggml_tensor* one = ggml_mul_mat(c.ctx, a, col);
        ggml_cgraph* g = ggml_new_graph(c.ctx);
        ASSERT_TRUE(one != nullptr && g != nullptr && ggml_build_forward_expand(g, one)) << ggml_last_error();
        ASSERT_EQ(Exec().Run(g, 2), GGML_STATUS_SUCCESS) << ggml_last_error();
        ASSERT_EQ(0, memcmp(o.exec.data() + n * M, one->data, static_cast<size_t>(M) * sizeof(float)))
            << what << " column " << n;
      }
      const std::vector<double> bound = Bounds(a, b, /*small_n=*/true);
      for (size_t i = 0; i < bound.size(); ++i) {
        ASSERT_LE(fabs(static_cast<double>(o.exec[i]) - o.ref[i]), bound[i]) << what << " [" << i << "]";
      }
    }
  }
}

}  // namespace
}  // namespace ggml_cpu
