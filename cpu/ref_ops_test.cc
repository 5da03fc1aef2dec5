// The reference evaluator checked against values worked out by hand (small shapes) and against
// identities (a quantized mul_mat equals the mul_mat of its dequantized weights).
#include "cpu/ref_ops.h"

#include <math.h>

#include <string>
#include <vector>

#include "ggml/ggml.h"
#include "ggml/graph.h"
#include "ggml/ops.h"
#include "gtest/gtest.h"
#include "kernels/quant_traits.h"

namespace {

class RefOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = ggml_init({8 << 20, nullptr, false});
    ASSERT_NE(ctx_, nullptr);
  }
  void TearDown() override { ggml_free(ctx_); }

  // A 2-D F32 tensor [ne0, ne1] with the given values, row by row.
  ggml_tensor* F32(int64_t ne0, int64_t ne1, const std::vector<float>& v) {
    ggml_tensor* t = ggml_new_tensor_2d(ctx_, GGML_TYPE_F32, ne0, ne1);
    EXPECT_EQ(static_cast<int64_t>(v.size()), ne0 * ne1);
    for (int64_t i = 0; i < ne0 * ne1; ++i) static_cast<float*>(t->data)[i] = v[i];
    return t;
  }

  // Runs the graph of `out` through the reference evaluator.
  void Compute(ggml_tensor* out) {
    ASSERT_NE(out, nullptr) << ggml_last_error();
    ggml_cgraph* g = ggml_new_graph(ctx_);
    ASSERT_TRUE(ggml_build_forward_expand(g, out));
    ASSERT_TRUE(ggml_ref_graph_compute(g)) << ggml_last_error();
  }

  static std::vector<float> Values(const ggml_tensor* t) {
    std::vector<float> v;
    for (int64_t i3 = 0; i3 < t->ne[3]; ++i3)
      for (int64_t i2 = 0; i2 < t->ne[2]; ++i2)
        for (int64_t i1 = 0; i1 < t->ne[1]; ++i1)
          for (int64_t i0 = 0; i0 < t->ne[0]; ++i0) v.push_back(ggml_get_f32_nd(t, i0, i1, i2, i3));
    return v;
  }

  ggml_context* ctx_ = nullptr;
};

TEST_F(RefOpsTest, MulMatByHand) {
  // a: 2 rows of K = 3; b: 2 rows of K = 3. result[n][m] = a_m . b_n.
  ggml_tensor* a = F32(3, 2, {1, 2, 3, 4, 5, 6});
  ggml_tensor* b = F32(3, 2, {1, 0, -1, 2, 1, 0.5f});
  ggml_tensor* c = ggml_mul_mat(ctx_, a, b);
  Compute(c);
  ASSERT_EQ(c->ne[0], 2);
  ASSERT_EQ(c->ne[1], 2);
  EXPECT_EQ(Values(c), (std::vector<float>{1 - 3, 4 - 6, 2 + 2 + 1.5f, 8 + 5 + 3}));
}

TEST_F(RefOpsTest, MulMatBroadcastsAOverBatchAndReadsTransposedB) {
  // a: [K=2, M=1, 2 batches]; b: [K=2, N=1, 4 batches]: batches 0,1 use a batch 0; 2,3 use 1.
  ggml_tensor* a = ggml_new_tensor_3d(ctx_, GGML_TYPE_F32, 2, 1, 2);
  const float av[] = {1, 1, 10, -10};
  memcpy(a->data, av, sizeof(av));
  ggml_tensor* bt = F32(4, 2, {1, 2, 3, 4, 5, 6, 7, 8});  // transposed below: b[k][n] = bt[n][k]
  ggml_tensor* b = ggml_reshape_3d(ctx_, ggml_cont(ctx_, ggml_transpose(ctx_, bt)), 2, 1, 4);
  ggml_tensor* c = ggml_mul_mat(ctx_, a, b);
  Compute(c);
  // b batches: (1,5), (2,6), (3,7), (4,8).
  EXPECT_EQ(Values(c), (std::vector<float>{6, 8, 10 * 3 - 10 * 7, 10 * 4 - 10 * 8}));
}

TEST_F(RefOpsTest, QuantizedMulMatEqualsMulMatOfDequantizedWeights) {
  const ggml_type types[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0};
  for (ggml_type type : types) {
    const ggml_cpu::QuantTypeTraits* traits = ggml_cpu::GetQuantTypeTraits(type);
    ASSERT_NE(traits, nullptr);
    constexpr int64_t K = 64, M = 3, N = 2;
    ggml_tensor* aq = ggml_new_tensor_2d(ctx_, type, K, M);
    ggml_tensor* af = ggml_new_tensor_2d(ctx_, GGML_TYPE_F32, K, M);
    std::vector<float> w(K);
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t k = 0; k < K; ++k) w[k] = 0.1f + 2.0f * cosf(static_cast<float>(k + 7 * m));
      traits->from_float(w.data(), static_cast<char*>(aq->data) + m * aq->nb[1], K);
      traits->to_float(static_cast<char*>(aq->data) + m * aq->nb[1], static_cast<float*>(af->data) + m * K, K);
    }
    std::vector<float> bv(K * N);
    for (int64_t i = 0; i < K * N; ++i) bv[i] = sinf(static_cast<float>(i));
    ggml_tensor* b = F32(K, N, bv);
    ggml_tensor* cq = ggml_mul_mat(ctx_, aq, b);
    ggml_tensor* cf = ggml_mul_mat(ctx_, af, b);
    Compute(cq);
    Compute(cf);
    EXPECT_EQ(Values(cq), Values(cf)) << ggml_type_name(type);
  }
}

TEST_F(RefOpsTest, GetRowsF16AndOutOfRangeIndex) {
  ggml_tensor* a = ggml_new_tensor_2d(ctx_, GGML_TYPE_F16, 2, 3);
  for (int i = 0; i < 6; ++i) static_cast<ggml_fp16_t*>(a->data)[i] = ggml_fp32_to_fp16(0.5f * i);
  ggml_tensor* idx = ggml_new_tensor_1d(ctx_, GGML_TYPE_I32, 3);
  const int32_t iv[] = {2, 0, 2};
  memcpy(idx->data, iv, sizeof(iv));
  ggml_tensor* r = ggml_get_rows(ctx_, a, idx);
  Compute(r);
  EXPECT_EQ(Values(r), (std::vector<float>{2.0f, 2.5f, 0.0f, 0.5f, 2.0f, 2.5f}));

  static_cast<int32_t*>(idx->data)[1] = 3;
  EXPECT_FALSE(ggml_ref_compute_forward(r));
  EXPECT_NE(std::string(ggml_last_error()).find("index 3 at [1, 0] is outside [0, 3)"), std::string::npos)
      << ggml_last_error();
}

TEST_F(RefOpsTest, SoftMaxWithScaleAndMask) {
  ggml_tensor* a = F32(3, 2, {0, 1, 2, 1, 1, 1});
  ggml_tensor* mask = F32(3, 2, {0, 0, -INFINITY, 0, 0, 0});
  ggml_tensor* s = ggml_soft_max_ext(ctx_, a, mask, 2.0f, 0.0f);
  Compute(s);
  const std::vector<float> v = Values(s);
  // Row 0: exp(0), exp(2), masked -> 1/(1+e^2), e^2/(1+e^2), 0. Row 1: uniform.
  const double e2 = exp(2.0);
  EXPECT_FLOAT_EQ(v[0], static_cast<float>(1.0 / (1.0 + e2)));
  EXPECT_FLOAT_EQ(v[1], static_cast<float>(e2 / (1.0 + e2)));
  EXPECT_EQ(v[2], 0.0f);
  for (int i = 3; i < 6; ++i) EXPECT_FLOAT_EQ(v[i], 1.0f / 3.0f);

  // A fully masked row gives 0 (see ref_ops.h), not NaN.
  ggml_tensor* all_masked = F32(3, 1, {-INFINITY, -INFINITY, -INFINITY});
  ggml_tensor* z = ggml_soft_max_ext(ctx_, F32(3, 1, {1, 2, 3}), all_masked, 1.0f, 0.0f);
  Compute(z);
  EXPECT_EQ(Values(z), (std::vector<float>{0, 0, 0}));
}

TEST_F(RefOpsTest, NormAndRmsNorm) {
  ggml_tensor* a = F32(4, 1, {1, 2, 3, 4});
  ggml_tensor* n = ggml_norm(ctx_, a, 0.0f);
  ggml_tensor* r = ggml_rms_norm(ctx_, a, 0.0f);
  Compute(n);
  Compute(r);
  const double sd = sqrt(1.25);  // var of 1..4 = 1.25
  EXPECT_EQ(Values(n), (std::vector<float>{static_cast<float>(-1.5 / sd), static_cast<float>(-0.5 / sd),
                                           static_cast<float>(0.5 / sd), static_cast<float>(1.5 / sd)}));
  const double rms = sqrt(30.0 / 4);
  EXPECT_EQ(Values(r), (std::vector<float>{static_cast<float>(1 / rms), static_cast<float>(2 / rms),
                                           static_cast<float>(3 / rms), static_cast<float>(4 / rms)}));
}

TEST_F(RefOpsTest, UnaryFormulas) {
  ggml_tensor* a = F32(3, 1, {-1, 0, 1});
  ggml_tensor* g = ggml_gelu(ctx_, a);
  ggml_tensor* ge = ggml_gelu_erf(ctx_, a);
  ggml_tensor* si = ggml_silu(ctx_, a);
  Compute(g);
  Compute(ge);
  Compute(si);
  // Published values: gelu_tanh(1) = 0.841191990607..., gelu(1) = 0.841344746068...,
  // silu(1) = 0.731058578630...
  EXPECT_NEAR(Values(g)[2], 0.8411919906082768, 1e-7);
  EXPECT_NEAR(Values(g)[0], 0.8411919906082768 - 1, 1e-7);  // gelu(-x) = gelu(x) - x
  EXPECT_NEAR(Values(ge)[2], 0.8413447460685429, 1e-7);
  EXPECT_NEAR(Values(si)[2], 0.7310585786300049, 1e-7);
  EXPECT_EQ(Values(g)[1], 0.0f);
}

TEST_F(RefOpsTest, AddMulBroadcastAndScale) {
  ggml_tensor* a = F32(3, 2, {1, 2, 3, 4, 5, 6});
  ggml_tensor* b = F32(3, 1, {10, 20, 30});
  ggml_tensor* c = F32(1, 2, {2, 3});
  ggml_tensor* s = ggml_add(ctx_, a, b);
  ggml_tensor* m = ggml_mul(ctx_, a, c);
  ggml_tensor* sc = ggml_scale(ctx_, a, 0.5f);
  Compute(s);
  Compute(m);
  Compute(sc);
  EXPECT_EQ(Values(s), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(Values(m), (std::vector<float>{2, 4, 6, 12, 15, 18}));
  EXPECT_EQ(Values(sc), (std::vector<float>{0.5f, 1, 1.5f, 2, 2.5f, 3}));
}

TEST_F(RefOpsTest, CpyIntoTransposedF16ViewAndCont) {
  ggml_tensor* a = F32(3, 2, {1, 2, 3, 4, 5, 6});
  ggml_tensor* dst = ggml_new_tensor_2d(ctx_, GGML_TYPE_F16, 2, 3);
  ggml_tensor* dst_t = ggml_transpose(ctx_, dst);  // [3, 2] view with swapped strides
  ggml_tensor* cp = ggml_cpy(ctx_, a, dst_t);
  Compute(cp);
  // dst_t[i0][i1] = a[i0][i1]  =>  dst[i1 + 2 * i0] = a row i1, column i0.
  EXPECT_EQ(Values(dst), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  ggml_tensor* cont = ggml_cont(ctx_, ggml_transpose(ctx_, a));
  Compute(cont);
  EXPECT_EQ(Values(cont), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST_F(RefOpsTest, Im2ColByHand) {
  // Input IL = 4, IC = 2: channel 0 = 1..4, channel 1 = 10..40. Kernel K = 3, s 1, p 1, d 1.
  ggml_tensor* kernel = ggml_new_tensor_3d(ctx_, GGML_TYPE_F16, 3, 2, 5);
  ggml_tensor* b = F32(4, 2, {1, 2, 3, 4, 10, 20, 30, 40});
  ggml_tensor* col = ggml_im2col_1d(ctx_, kernel, b, 1, 1, 1, GGML_TYPE_F32);
  Compute(col);
  ASSERT_EQ(col->ne[0], 6);
  ASSERT_EQ(col->ne[1], 4);
  EXPECT_EQ(Values(col), (std::vector<float>{0, 1, 2, 0, 10, 20,  //
                                             1, 2, 3, 10, 20, 30,  //
                                             2, 3, 4, 20, 30, 40,  //
                                             3, 4, 0, 30, 40, 0}));
  // Stride 2, dilation 2, no padding, F16 result: OL = (4 - 4 - 1) / 2 + 1 = 0 -> rejected by the
  // constructor; use K = 2: OL = (4 - 2 - 1) / 2 + 1 = 1, taps at 0 and 2.
  ggml_tensor* k2 = ggml_new_tensor_3d(ctx_, GGML_TYPE_F16, 2, 2, 1);
  ggml_tensor* col2 = ggml_im2col_1d(ctx_, k2, b, 2, 0, 2, GGML_TYPE_F16);
  Compute(col2);
  EXPECT_EQ(Values(col2), (std::vector<float>{1, 3, 10, 30}));
}

TEST_F(RefOpsTest, ConcatPadRepeatArgmaxDiagMask) {
  ggml_tensor* a = F32(2, 2, {1, 2, 3, 4});
  ggml_tensor* b = F32(1, 2, {5, 6});
  ggml_tensor* c0 = ggml_concat(ctx_, a, b, 0);
  ggml_tensor* p = ggml_pad(ctx_, b, 1, 1, 0, 0);
  ggml_tensor* r = ggml_repeat(ctx_, b, a);
  ggml_tensor* am = ggml_argmax(ctx_, F32(3, 2, {1, 7, 7, -1, -2, -1}));
  ggml_tensor* dm = ggml_diag_mask_inf(ctx_, F32(3, 2, {1, 2, 3, 4, 5, 6}), 0);
  for (ggml_tensor* t : {c0, p, r, am, dm}) Compute(t);
  EXPECT_EQ(Values(c0), (std::vector<float>{1, 2, 5, 3, 4, 6}));
  EXPECT_EQ(Values(p), (std::vector<float>{5, 0, 6, 0, 0, 0}));
  EXPECT_EQ(Values(r), (std::vector<float>{5, 5, 6, 6}));
  EXPECT_EQ(ggml_get_i32_1d(am, 0), 1);  // tie between 1 and 2: lowest index
  EXPECT_EQ(ggml_get_i32_1d(am, 1), 0);
  EXPECT_EQ(Values(dm), (std::vector<float>{1, -INFINITY, -INFINITY, 4, 5, -INFINITY}));
}

TEST_F(RefOpsTest, ErrorsNameTheNode) {
  ggml_tensor* a = F32(2, 1, {1, 2});
  ggml_tensor* s = ggml_scale(ctx_, a, 2.0f);
  ggml_set_name(s, "scaled");
  void* data = a->data;
  a->data = nullptr;
  EXPECT_FALSE(ggml_ref_compute_forward(s));
  EXPECT_NE(std::string(ggml_last_error()).find("node 'scaled' (SCALE): src[0] is NULL or has no data"),
            std::string::npos)
      << ggml_last_error();
  a->data = data;
  s->op = GGML_OP_COUNT;
  EXPECT_FALSE(ggml_ref_compute_forward(s));
  EXPECT_NE(std::string(ggml_last_error()).find("unknown op"), std::string::npos) << ggml_last_error();
  EXPECT_FALSE(ggml_ref_compute_forward(nullptr));
  EXPECT_FALSE(ggml_ref_graph_compute(nullptr));
}

}  // namespace
