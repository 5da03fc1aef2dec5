// Op constructors: the result's shape, type, op, src[] and op_params for each op (shapes from
// ggml's definitions, restated per test), a NULL plus message for each kind of bad input, and
// NULL propagation through a chain of constructors.
#include "ggml/ops.h"

#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "ggml/ggml.h"
#include "ggml/graph.h"
#include "ggml/test_util.h"
#include "gtest/gtest.h"

namespace {

using ggml_test::ErrorMentions;
using ggml_test::LogCapture;

class OpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = ggml_init({1 << 20, nullptr, /*no_alloc=*/true});  // shapes only: no data needed
    ASSERT_NE(ctx_, nullptr);
  }
  void TearDown() override { ggml_free(ctx_); }

  ggml_tensor* New(ggml_type type, int64_t ne0, int64_t ne1 = 1, int64_t ne2 = 1, int64_t ne3 = 1,
                   const char* name = "") {
    return ggml_set_name(ggml_new_tensor_4d(ctx_, type, ne0, ne1, ne2, ne3), name);
  }
  ggml_tensor* F32(int64_t ne0, int64_t ne1 = 1, int64_t ne2 = 1, int64_t ne3 = 1, const char* name = "") {
    return New(GGML_TYPE_F32, ne0, ne1, ne2, ne3, name);
  }

  LogCapture log_;
  ggml_context* ctx_ = nullptr;
};

::testing::AssertionResult HasShape(const ggml_tensor* t, ggml_type type, std::vector<int64_t> ne) {
  if (t == nullptr) return ::testing::AssertionFailure() << "NULL: " << ggml_last_error();
  ne.resize(4, 1);
  if (t->type != type) {
    return ::testing::AssertionFailure() << "type " << ggml_type_name(t->type) << ", want " << ggml_type_name(type);
  }
  for (int i = 0; i < 4; ++i) {
    if (t->ne[i] != ne[i]) {
      return ::testing::AssertionFailure() << "ne[" << i << "] = " << t->ne[i] << ", want " << ne[i];
    }
  }
  // Results of computing ops are new contiguous tensors.
  if (t->view_src == nullptr && !ggml_is_contiguous(t)) return ::testing::AssertionFailure() << "not contiguous";
  return ::testing::AssertionSuccess();
}

float ParamF32(const ggml_tensor* t, int i) {
  float v;
  memcpy(&v, reinterpret_cast<const char*>(t->op_params) + 4 * i, 4);
  return v;
}

TEST_F(OpsTest, AddAndMulBroadcastTheSecondSource) {
  ggml_tensor* a = F32(4, 3, 2, 1, "a");
  for (auto op : {std::make_pair(&ggml_add, GGML_OP_ADD), std::make_pair(&ggml_mul, GGML_OP_MUL)}) {
    ggml_tensor* b = F32(4, 1, 2);
    ggml_tensor* r = op.first(ctx_, a, b);
    EXPECT_TRUE(HasShape(r, GGML_TYPE_F32, {4, 3, 2}));
    EXPECT_EQ(r->op, op.second);
    EXPECT_EQ(r->src[0], a);
    EXPECT_EQ(r->src[1], b);
    EXPECT_EQ(r->src[2], nullptr);
    EXPECT_TRUE(HasShape(op.first(ctx_, a, F32(1)), GGML_TYPE_F32, {4, 3, 2}));     // a scalar
    EXPECT_TRUE(HasShape(op.first(ctx_, a, F32(4, 3, 2)), GGML_TYPE_F32, {4, 3, 2}));  // same shape

    EXPECT_EQ(op.first(ctx_, a, F32(3, 1, 1, 1, "b")), nullptr);
    EXPECT_TRUE(ErrorMentions(log_, {"'b' f32 [3, 1, 1, 1] cannot be broadcast to 'a' f32 [4, 3, 2, 1]"}));
    EXPECT_EQ(op.first(ctx_, F32(4), a), nullptr);  // only b is broadcast
    EXPECT_EQ(op.first(ctx_, a, New(GGML_TYPE_F16, 4)), nullptr);
    EXPECT_TRUE(ErrorMentions(log_, {"needs F32", "f16"}));
    EXPECT_EQ(op.first(ctx_, a, nullptr), nullptr);
    EXPECT_TRUE(ErrorMentions(log_, {"a source tensor is NULL"}));
  }
}

TEST_F(OpsTest, ScaleNormAndMaskStoreTheirParameters) {
  ggml_tensor* a = F32(384, 1500);
  ggml_tensor* s = ggml_scale(ctx_, a, 0.125f);
  EXPECT_TRUE(HasShape(s, GGML_TYPE_F32, {384, 1500}));
  EXPECT_EQ(s->op, GGML_OP_SCALE);
  EXPECT_EQ(ParamF32(s, 0), 0.125f);
  EXPECT_EQ(ggml_get_op_params_f32(s, 0), 0.125f);

  ggml_tensor* n = ggml_norm(ctx_, a, 1e-5f);
  EXPECT_TRUE(HasShape(n, GGML_TYPE_F32, {384, 1500}));
  EXPECT_EQ(n->op, GGML_OP_NORM);
  EXPECT_EQ(ParamF32(n, 0), 1e-5f);
  ggml_tensor* rms = ggml_rms_norm(ctx_, a, 1e-6f);
  EXPECT_EQ(rms->op, GGML_OP_RMS_NORM);
  EXPECT_EQ(ParamF32(rms, 0), 1e-6f);

  ggml_tensor* m = ggml_diag_mask_inf(ctx_, F32(7, 3), 4);
  EXPECT_TRUE(HasShape(m, GGML_TYPE_F32, {7, 3}));
  EXPECT_EQ(m->op, GGML_OP_DIAG_MASK_INF);
  EXPECT_EQ(ggml_get_op_params_i32(m, 0), 4);
  EXPECT_EQ(m->op_params[0], 4);

  ggml_tensor* h = New(GGML_TYPE_F16, 8, 0, 1, 1, "h");
  EXPECT_EQ(ggml_scale(ctx_, h, 2.0f), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"ggml_scale", "needs an F32 source", "'h' f16 [8, 0, 1, 1]"}));
  EXPECT_EQ(ggml_norm(ctx_, h, 1e-5f), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"ggml_norm"}));
  EXPECT_EQ(ggml_rms_norm(ctx_, nullptr, 1e-5f), nullptr);
  EXPECT_EQ(ggml_diag_mask_inf(ctx_, h, 0), nullptr);
}

TEST_F(OpsTest, UnaryOpsRecordWhichOne) {
  ggml_tensor* a = F32(10, 2);
  const struct {
    ggml_tensor* (*fn)(ggml_context*, ggml_tensor*);
    ggml_unary_op op;
    const char* name;
  } kCases[] = {{ggml_gelu, GGML_UNARY_OP_GELU, "GELU"},
                {ggml_gelu_erf, GGML_UNARY_OP_GELU_ERF, "GELU_ERF"},
                {ggml_silu, GGML_UNARY_OP_SILU, "SILU"},
                {ggml_relu, GGML_UNARY_OP_RELU, "RELU"},
                {ggml_sigmoid, GGML_UNARY_OP_SIGMOID, "SIGMOID"},
                {ggml_tanh, GGML_UNARY_OP_TANH, "TANH"},
                {ggml_sqr, GGML_UNARY_OP_SQR, "SQR"},
                {ggml_sqrt, GGML_UNARY_OP_SQRT, "SQRT"}};
  for (const auto& c : kCases) {
    ggml_tensor* r = c.fn(ctx_, a);
    EXPECT_TRUE(HasShape(r, GGML_TYPE_F32, {10, 2}));
    EXPECT_EQ(r->op, GGML_OP_UNARY);
    EXPECT_EQ(r->op_params[0], static_cast<int32_t>(c.op));
    EXPECT_EQ(ggml_get_unary_op(r), c.op);
    EXPECT_STREQ(ggml_unary_op_name(c.op), c.name);
    EXPECT_EQ(ggml_unary(ctx_, a, c.op)->op_params[0], static_cast<int32_t>(c.op));
  }
  EXPECT_EQ(ggml_unary(ctx_, a, static_cast<ggml_unary_op>(GGML_UNARY_OP_COUNT)), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"unknown unary op 8"}));
  EXPECT_EQ(ggml_unary(ctx_, a, static_cast<ggml_unary_op>(-1)), nullptr);
  EXPECT_STREQ(ggml_unary_op_name(GGML_UNARY_OP_COUNT), "UNKNOWN");
  EXPECT_EQ(ggml_gelu(ctx_, New(GGML_TYPE_I32, 4)), nullptr);
}

TEST_F(OpsTest, MulMatShapesAndBroadcast) {
  // a [K, M, ne2, ne3] x b [K, N, ne12, ne13] -> [M, N, ne12, ne13].
  ggml_tensor* a = New(GGML_TYPE_F16, 64, 8, 2, 3, "a");
  ggml_tensor* b = F32(64, 5, 4, 3);
  ggml_tensor* r = ggml_mul_mat(ctx_, a, b);
  EXPECT_TRUE(HasShape(r, GGML_TYPE_F32, {8, 5, 4, 3}));
  EXPECT_EQ(r->op, GGML_OP_MUL_MAT);
  EXPECT_EQ(r->src[0], a);
  EXPECT_EQ(r->src[1], b);
  // Whisper shapes: the logits are token_embedding [384, 51864] x hidden [384, n_tokens].
  EXPECT_TRUE(HasShape(ggml_mul_mat(ctx_, New(GGML_TYPE_Q4_0, 384, 51864), F32(384, 3)), GGML_TYPE_F32,
                       {51864, 3}));
  EXPECT_TRUE(HasShape(ggml_mul_mat(ctx_, New(GGML_TYPE_Q8_0, 384, 384), New(GGML_TYPE_F16, 384, 1500)),
                       GGML_TYPE_F32, {384, 1500}));
  // b may be strided (a permuted K cache); a's rows must be contiguous.
  ggml_tensor* bp = ggml_permute(ctx_, F32(64, 4, 6), 0, 2, 1, 3);  // [64, 6, 4]
  EXPECT_TRUE(HasShape(ggml_mul_mat(ctx_, F32(64, 7), bp), GGML_TYPE_F32, {7, 6, 4}));

  EXPECT_EQ(ggml_mul_mat(ctx_, a, F32(63, 5, 4, 3, "b")), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"K differs", "'a' f16 [64, 8, 2, 3]", "'b' f32 [63, 5, 4, 3]"}));
  EXPECT_EQ(ggml_mul_mat(ctx_, a, F32(64, 5, 3, 3)), nullptr);  // 3 % 2 != 0
  EXPECT_TRUE(ErrorMentions(log_, {"cannot be broadcast"}));
  EXPECT_EQ(ggml_mul_mat(ctx_, a, F32(64, 5, 4, 2)), nullptr);  // 2 % 3 != 0
  EXPECT_EQ(ggml_mul_mat(ctx_, ggml_transpose(ctx_, F32(8, 64)), F32(64, 5)), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"not contiguous"}));
  EXPECT_EQ(ggml_mul_mat(ctx_, New(GGML_TYPE_I32, 64, 8), F32(64, 5)), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"not supported"}));
  EXPECT_EQ(ggml_mul_mat(ctx_, F32(64, 8), New(GGML_TYPE_Q8_0, 64, 5)), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"must be F32 or F16"}));
  EXPECT_EQ(ggml_mul_mat(ctx_, nullptr, b), nullptr);
  EXPECT_EQ(ggml_mul_mat(ctx_, a, nullptr), nullptr);
}

TEST_F(OpsTest, CpyIsAViewOfTheDestination) {
  ggml_tensor* a = F32(6, 4, 1, 1, "k");
  ggml_tensor* cache = New(GGML_TYPE_F16, 24, 1, 1, 1, "cache");
  ggml_tensor* r = ggml_cpy(ctx_, a, cache);
  ASSERT_NE(r, nullptr) << ggml_last_error();
  EXPECT_EQ(r->op, GGML_OP_CPY);
  EXPECT_EQ(r->src[0], a);
  EXPECT_EQ(r->src[1], cache);
  EXPECT_EQ(r->view_src, cache);
  EXPECT_TRUE(ggml_are_same_layout(r, cache));
  EXPECT_STREQ(r->name, "cache (copy of k)");
  for (int i = 0; i < GGML_MAX_OP_PARAMS / 4; ++i) EXPECT_EQ(r->op_params[i], 0);
  // Into a strided destination (a transposed V cache).
  ggml_tensor* vt = ggml_transpose(ctx_, New(GGML_TYPE_F16, 4, 6));
  ggml_tensor* rt = ggml_cpy(ctx_, a, vt);
  ASSERT_NE(rt, nullptr) << ggml_last_error();
  EXPECT_TRUE(ggml_are_same_layout(rt, vt));

  EXPECT_EQ(ggml_cpy(ctx_, a, New(GGML_TYPE_F32, 23)), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"element counts differ"}));
  EXPECT_EQ(ggml_cpy(ctx_, a, New(GGML_TYPE_I32, 24)), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"F32 or F16"}));
  EXPECT_EQ(ggml_cpy(ctx_, nullptr, cache), nullptr);
}

TEST_F(OpsTest, ContMakesAContiguousTensorOfTheSameShape) {
  ggml_tensor* a = New(GGML_TYPE_F16, 6, 4, 1, 1, "v");
  ggml_tensor* t = ggml_transpose(ctx_, a);
  ggml_tensor* c = ggml_cont(ctx_, t);
  EXPECT_TRUE(HasShape(c, GGML_TYPE_F16, {4, 6}));
  EXPECT_EQ(c->op, GGML_OP_CONT);
  EXPECT_EQ(c->view_src, nullptr);
  EXPECT_EQ(c->src[0], t);
  EXPECT_STREQ(c->name, "v (transposed) (cont)");
  ggml_tensor* c2 = ggml_cont_2d(ctx_, t, 12, 2);
  EXPECT_TRUE(HasShape(c2, GGML_TYPE_F16, {12, 2}));
  EXPECT_EQ(ggml_cont_2d(ctx_, t, 5, 5), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"[5, 5]", "'v (transposed)'"}));
  EXPECT_EQ(ggml_cont(ctx_, New(GGML_TYPE_Q4_0, 32)), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"not F32/F16"}));
}

TEST_F(OpsTest, CastIsANodeOfTheNewTypeAndTheSameShape) {
  ggml_tensor* a = New(GGML_TYPE_F32, 6, 4, 1, 1, "k");
  ggml_tensor* t = ggml_transpose(ctx_, a);
  ggml_tensor* c = ggml_cast(ctx_, t, GGML_TYPE_F16);
  EXPECT_TRUE(HasShape(c, GGML_TYPE_F16, {4, 6}));
  EXPECT_EQ(c->op, GGML_OP_CONT);  // one source, so the allocator sees a plain node
  EXPECT_EQ(c->view_src, nullptr);
  EXPECT_EQ(c->data, nullptr);
  EXPECT_EQ(c->src[0], t);
  EXPECT_EQ(c->src[1], nullptr);
  EXPECT_STREQ(c->name, "k (transposed) (f16)");
  EXPECT_TRUE(HasShape(ggml_cast(ctx_, c, GGML_TYPE_F32), GGML_TYPE_F32, {4, 6}));
  EXPECT_EQ(ggml_cast(ctx_, a, GGML_TYPE_Q8_0), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"F32 or F16", "q8_0"}));
  EXPECT_EQ(ggml_cast(ctx_, New(GGML_TYPE_I32, 4), GGML_TYPE_F16), nullptr);
  EXPECT_EQ(ggml_cast(ctx_, nullptr, GGML_TYPE_F16), nullptr);
}

TEST_F(OpsTest, GetRowsSelectsRowsPerBatch) {
  ggml_tensor* emb = New(GGML_TYPE_F16, 384, 51864, 1, 1, "token_embedding");
  ggml_tensor* ids = New(GGML_TYPE_I32, 3);
  ggml_tensor* r = ggml_get_rows(ctx_, emb, ids);
  EXPECT_TRUE(HasShape(r, GGML_TYPE_F32, {384, 3}));
  EXPECT_EQ(r->op, GGML_OP_GET_ROWS);
  EXPECT_EQ(r->src[0], emb);
  EXPECT_EQ(r->src[1], ids);
  EXPECT_TRUE(HasShape(ggml_get_rows(ctx_, F32(16, 10, 2), New(GGML_TYPE_I32, 3, 2)), GGML_TYPE_F32, {16, 3, 2}));
  EXPECT_TRUE(HasShape(ggml_get_rows(ctx_, New(GGML_TYPE_Q5_1, 64, 10), ids), GGML_TYPE_F32, {64, 3}));

  EXPECT_EQ(ggml_get_rows(ctx_, emb, F32(3)), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"must be I32"}));
  EXPECT_EQ(ggml_get_rows(ctx_, F32(16, 10, 2), New(GGML_TYPE_I32, 3, 3)), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"do not fit"}));
  EXPECT_EQ(ggml_get_rows(ctx_, nullptr, ids), nullptr);
}

TEST_F(OpsTest, SoftMaxWithAndWithoutMask) {
  ggml_tensor* kq = F32(8, 4, 6, 1, "kq");
  ggml_tensor* s = ggml_soft_max(ctx_, kq);
  EXPECT_TRUE(HasShape(s, GGML_TYPE_F32, {8, 4, 6}));
  EXPECT_EQ(s->op, GGML_OP_SOFT_MAX);
  EXPECT_EQ(s->src[1], nullptr);
  EXPECT_EQ(ParamF32(s, 0), 1.0f);
  EXPECT_EQ(ParamF32(s, 1), 0.0f);
  ggml_tensor* mask = F32(8, 5, 1, 1, "mask");  // more rows than kq: padded masks are allowed
  ggml_tensor* m = ggml_soft_max_ext(ctx_, kq, mask, 0.125f, 0.0f);
  EXPECT_TRUE(HasShape(m, GGML_TYPE_F32, {8, 4, 6}));
  EXPECT_EQ(m->src[0], kq);
  EXPECT_EQ(m->src[1], mask);
  EXPECT_EQ(ParamF32(m, 0), 0.125f);

  EXPECT_EQ(ggml_soft_max_ext(ctx_, kq, F32(7, 4, 1, 1, "m7"), 1.0f, 0.0f), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"'m7' f32 [7, 4, 1, 1] does not fit 'kq'"}));
  EXPECT_EQ(ggml_soft_max_ext(ctx_, kq, F32(8, 3), 1.0f, 0.0f), nullptr);
  EXPECT_EQ(ggml_soft_max_ext(ctx_, kq, New(GGML_TYPE_F16, 8, 4), 1.0f, 0.0f), nullptr);
  EXPECT_EQ(ggml_soft_max_ext(ctx_, kq, nullptr, 1.0f, 8.0f), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"max_bias 8", "ALiBi", "needs a mask"}));
  ggml_tensor* alibi = ggml_soft_max_ext(ctx_, kq, mask, 1.0f, 8.0f);
  ASSERT_NE(alibi, nullptr);
  EXPECT_EQ(ParamF32(alibi, 1), 8.0f);
  EXPECT_EQ(ggml_soft_max_ext(ctx_, kq, mask, NAN, 0.0f), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"must be finite"}));
  EXPECT_EQ(ggml_soft_max_ext(ctx_, nullptr, mask, 1.0f, 0.0f), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"a source tensor is NULL"}));
  EXPECT_EQ(ggml_soft_max(ctx_, nullptr), nullptr);
}

TEST_F(OpsTest, FlashAttnExtResultIsPermutedAndChecksItsSources) {
  // Whisper tiny's encoder head shape, 2 query heads per K/V head (grouped).
  ggml_tensor* q = F32(64, 30, 6, 1, "q");
  ggml_tensor* k = New(GGML_TYPE_F16, 64, 50, 3, 1, "k");
  ggml_tensor* v = New(GGML_TYPE_F16, 40, 50, 3, 1, "v");
  ggml_tensor* r = ggml_flash_attn_ext(ctx_, q, k, v, nullptr, 0.125f, 0.0f, 0.0f);
  EXPECT_TRUE(HasShape(r, GGML_TYPE_F32, {40, 6, 30}));  // [d_v, n_head, n_q]
  EXPECT_EQ(r->op, GGML_OP_FLASH_ATTN_EXT);
  EXPECT_EQ(r->src[0], q);
  EXPECT_EQ(r->src[1], k);
  EXPECT_EQ(r->src[2], v);
  EXPECT_EQ(r->src[3], nullptr);
  EXPECT_EQ(ParamF32(r, 0), 0.125f);
  EXPECT_EQ(ggml_op_n_src(GGML_OP_FLASH_ATTN_EXT), 3);
  ggml_tensor* mask = New(GGML_TYPE_F16, 50, 32, 1, 1, "mask");  // padded rows, as ggml pads
  EXPECT_EQ(ggml_flash_attn_ext(ctx_, q, k, v, mask, 1.0f, 0.0f, 0.0f)->src[3], mask);
  EXPECT_NE(ggml_flash_attn_ext(ctx_, q, F32(64, 50, 3), F32(40, 50, 3), F32(50, 30), 1.0f, 0.0f, 0.0f), nullptr);

  EXPECT_EQ(ggml_flash_attn_ext(ctx_, q, k, v, F32(50, 29, 1, 1, "short"), 1.0f, 0.0f, 0.0f), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"mask 'short' f32 [50, 29, 1, 1] does not fit", ">= n_q = 30"}));
  EXPECT_EQ(ggml_flash_attn_ext(ctx_, q, New(GGML_TYPE_F16, 63, 50, 3), v, nullptr, 1.0f, 0.0f, 0.0f), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"differ in head width"}));
  EXPECT_EQ(ggml_flash_attn_ext(ctx_, q, k, New(GGML_TYPE_F16, 40, 49, 3), nullptr, 1.0f, 0.0f, 0.0f), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"keys and heads"}));
  EXPECT_EQ(ggml_flash_attn_ext(ctx_, q, New(GGML_TYPE_F16, 64, 50, 4), New(GGML_TYPE_F16, 40, 50, 4), nullptr, 1.0f,
                                0.0f, 0.0f),
            nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"not a multiple"}));
  EXPECT_EQ(ggml_flash_attn_ext(ctx_, q, k, F32(40, 50, 3), nullptr, 1.0f, 0.0f, 0.0f), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"both be F16 or both F32"}));
  EXPECT_EQ(ggml_flash_attn_ext(ctx_, New(GGML_TYPE_F16, 64, 30, 6), k, v, nullptr, 1.0f, 0.0f, 0.0f), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"q '' f16 [64, 30, 6, 1] must be F32"}));
  EXPECT_EQ(ggml_flash_attn_ext(ctx_, q, k, v, nullptr, 1.0f, 8.0f, 0.0f), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"ALiBi", "needs a mask"}));
  ggml_tensor* capped = ggml_flash_attn_ext(ctx_, q, k, v, mask, 1.0f, 8.0f, 30.0f);
  ASSERT_NE(capped, nullptr);
  EXPECT_EQ(ParamF32(capped, 1), 8.0f);
  EXPECT_EQ(ParamF32(capped, 2), 30.0f);
  EXPECT_EQ(ggml_flash_attn_ext(ctx_, q, k, v, nullptr, 1.0f, 0.0f, INFINITY), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"logit_softcap inf must be finite"}));
  EXPECT_EQ(ggml_flash_attn_ext(ctx_, q, nullptr, v, nullptr, 1.0f, 0.0f, 0.0f), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"a source tensor is NULL"}));
}

TEST_F(OpsTest, FlashAttnExtInt8FlagSitsInOpParam4) {
  ggml_tensor* q = F32(64, 30, 6, 1, "q");
  ggml_tensor* k = New(GGML_TYPE_F16, 64, 50, 6, 1, "k");
  ggml_tensor* v = New(GGML_TYPE_F16, 64, 50, 6, 1, "v");
  ggml_tensor* r = ggml_flash_attn_ext(ctx_, q, k, v, nullptr, 0.125f, 0.0f, 0.0f);
  ASSERT_NE(r, nullptr);
  EXPECT_FALSE(ggml_flash_attn_ext_get_int8(r));
  EXPECT_EQ(ggml_flash_attn_ext_set_int8(r, true), r);
  EXPECT_TRUE(ggml_flash_attn_ext_get_int8(r));
  EXPECT_EQ(r->op_params[4], 1);
  EXPECT_EQ(ParamF32(r, 0), 0.125f);  // scale untouched
  EXPECT_EQ(ggml_flash_attn_ext_set_int8(r, false), r);
  EXPECT_FALSE(ggml_flash_attn_ext_get_int8(r));
  EXPECT_EQ(ggml_flash_attn_ext_set_int8(q, true), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"ggml_flash_attn_ext_set_int8: 'q' f32 [64, 30, 6, 1] is not FLASH_ATTN_EXT"}));
  EXPECT_FALSE(ggml_flash_attn_ext_get_int8(q));
  EXPECT_EQ(ggml_flash_attn_ext_set_int8(nullptr, true), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"a source tensor is NULL"}));
}

TEST_F(OpsTest, MulMatMatVecFlagSitsInOpParam1) {
  ggml_tensor* a = New(GGML_TYPE_F16, 64, 30, 1, 1, "w");
  ggml_tensor* b = F32(64, 40, 1, 1, "x");
  ggml_tensor* r = ggml_mul_mat(ctx_, a, b);
  ASSERT_NE(r, nullptr);
  EXPECT_FALSE(ggml_mul_mat_get_matvec(r));
  EXPECT_EQ(ggml_mul_mat_set_matvec(r, true), r);
  EXPECT_TRUE(ggml_mul_mat_get_matvec(r));
  EXPECT_EQ(r->op_params[1], 1);
  EXPECT_EQ(r->op_params[0], 0);  // ggml's precision slot untouched
  EXPECT_EQ(ggml_mul_mat_set_matvec(r, false), r);
  EXPECT_FALSE(ggml_mul_mat_get_matvec(r));
  EXPECT_EQ(ggml_mul_mat_set_matvec(b, true), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"ggml_mul_mat_set_matvec: 'x' f32 [64, 40, 1, 1] is not MUL_MAT"}));
  EXPECT_FALSE(ggml_mul_mat_get_matvec(b));
  EXPECT_EQ(ggml_mul_mat_set_matvec(nullptr, true), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"a source tensor is NULL"}));
  EXPECT_FALSE(ggml_mul_mat_get_matvec(nullptr));
}

// ALiBi slopes by hand: 8 heads, max_bias 8: m0 = 2^-1, slopes 2^-1 .. 2^-8; 6 heads: n = 4,
// m0 = 2^-2 (heads 0-3: 2^-2, 2^-4, 2^-6, 2^-8), m1 = 2^-1 (heads 4, 5: 2^-1, 2^-3).
TEST_F(OpsTest, AlibiSlopesFollowTheDefinition) {
  for (int h = 0; h < 8; ++h) EXPECT_EQ(ggml_alibi_slope(8.0f, 8, h), std::ldexp(1.0f, -(h + 1))) << h;
  const int want6[6] = {-2, -4, -6, -8, -1, -3};
  for (int h = 0; h < 6; ++h) EXPECT_EQ(ggml_alibi_slope(8.0f, 6, h), std::ldexp(1.0f, want6[h])) << h;
  EXPECT_EQ(ggml_alibi_slope(0.0f, 6, 3), 1.0f);
  EXPECT_EQ(ggml_alibi_slope(8.0f, 0, 0), 1.0f);
}

TEST_F(OpsTest, Im2colAndConv1dFollowTheOutputLengthFormula) {
  // Whisper's stem: conv1 kernel [3, 80, 384], mel [3000, 80]; conv2 kernel [3, 384, 384], stride 2.
  ggml_tensor* k1 = New(GGML_TYPE_F16, 3, 80, 384, 1, "conv1");
  ggml_tensor* mel = F32(3000, 80, 1, 1, "mel");
  ggml_tensor* cols = ggml_im2col_1d(ctx_, k1, mel, 1, 1, 1, GGML_TYPE_F16);
  EXPECT_TRUE(HasShape(cols, GGML_TYPE_F16, {80 * 3, 3000, 1}));
  EXPECT_EQ(cols->op, GGML_OP_IM2COL);
  EXPECT_EQ(cols->src[0], k1);
  EXPECT_EQ(cols->src[1], mel);
  EXPECT_EQ(cols->op_params[0], 1);
  EXPECT_EQ(cols->op_params[1], 1);
  EXPECT_EQ(cols->op_params[2], 1);
  // OL = (IL + 2 p0 - d0 (K - 1) - 1) / s0 + 1 for a few settings, with a batch of 2.
  const struct { int64_t il; int s0, p0, d0; } kCases[] = {
      {3000, 2, 1, 1}, {10, 1, 0, 1}, {10, 3, 2, 2}, {7, 1, 0, 3}, {3, 1, 0, 1}};
  for (const auto& c : kCases) {
    const int64_t ol = (c.il + 2 * c.p0 - c.d0 * (3 - 1) - 1) / c.s0 + 1;
    ggml_tensor* r = ggml_im2col_1d(ctx_, New(GGML_TYPE_F16, 3, 5, 2), F32(c.il, 5, 2), c.s0, c.p0, c.d0,
                                    GGML_TYPE_F32);
    EXPECT_TRUE(HasShape(r, GGML_TYPE_F32, {15, ol, 2})) << c.il << " " << c.s0 << " " << c.p0 << " " << c.d0;
    EXPECT_EQ(r->op_params[0], c.s0);
    EXPECT_EQ(r->op_params[1], c.p0);
    EXPECT_EQ(r->op_params[2], c.d0);
  }
  ggml_tensor* conv1 = ggml_conv_1d_ph(ctx_, k1, mel, 1, 1);
  ASSERT_NE(conv1, nullptr) << ggml_last_error();
  EXPECT_EQ(conv1->ne[0], 3000);  // [OL, OC, N]
  EXPECT_EQ(conv1->ne[1], 384);
  EXPECT_EQ(conv1->ne[2], 1);
  EXPECT_EQ(conv1->type, GGML_TYPE_F32);
  ggml_tensor* conv2 = ggml_conv_1d_ph(ctx_, New(GGML_TYPE_F16, 3, 384, 384), F32(3000, 384), 2, 1);
  ASSERT_NE(conv2, nullptr) << ggml_last_error();
  EXPECT_EQ(conv2->ne[0], 1500);
  EXPECT_EQ(conv2->ne[1], 384);
  // conv_1d is im2col + mul_mat: the graph has both ops.
  ggml_cgraph* g = ggml_new_graph(ctx_);
  ASSERT_TRUE(ggml_build_forward_expand(g, conv1));
  bool has_im2col = false, has_mul_mat = false;
  for (int i = 0; i < g->n_nodes; ++i) {
    has_im2col |= g->nodes[i]->op == GGML_OP_IM2COL;
    has_mul_mat |= g->nodes[i]->op == GGML_OP_MUL_MAT;
  }
  EXPECT_TRUE(has_im2col && has_mul_mat);

  EXPECT_EQ(ggml_im2col_1d(ctx_, k1, F32(3000, 81), 1, 1, 1, GGML_TYPE_F32), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"differ in channels", "'conv1'"}));
  EXPECT_EQ(ggml_conv_1d_ph(ctx_, k1, F32(3000, 81), 1, 1), nullptr);  // propagated from im2col
  EXPECT_TRUE(ErrorMentions(log_, {"differ in channels"}));
  EXPECT_EQ(ggml_im2col_1d(ctx_, k1, mel, 0, 1, 1, GGML_TYPE_F32), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"stride 0"}));
  EXPECT_EQ(ggml_im2col_1d(ctx_, k1, mel, 1, -1, 1, GGML_TYPE_F32), nullptr);
  EXPECT_EQ(ggml_im2col_1d(ctx_, k1, mel, 1, 1, 0, GGML_TYPE_F32), nullptr);
  EXPECT_EQ(ggml_im2col_1d(ctx_, k1, mel, 1, 1, 1, GGML_TYPE_Q8_0), nullptr);
  EXPECT_EQ(ggml_im2col_1d(ctx_, k1, New(GGML_TYPE_F16, 3000, 80), 1, 1, 1, GGML_TYPE_F32), nullptr);
  EXPECT_EQ(ggml_im2col_1d(ctx_, New(GGML_TYPE_F16, 5, 80), F32(2, 80), 1, 0, 1, GGML_TYPE_F32), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"shorter than the kernel"}));
}

TEST_F(OpsTest, ConcatPadRepeatArgmax) {
  ggml_tensor* a = F32(4, 3, 2, 1, "a");
  for (int dim = 0; dim < 4; ++dim) {
    int64_t ne_b[4] = {4, 3, 2, 1};
    ne_b[dim] = 5;
    ggml_tensor* b = F32(ne_b[0], ne_b[1], ne_b[2], ne_b[3]);
    ggml_tensor* r = ggml_concat(ctx_, a, b, dim);
    std::vector<int64_t> want = {4, 3, 2, 1};
    want[dim] += 5;
    EXPECT_TRUE(HasShape(r, GGML_TYPE_F32, want)) << dim;
    EXPECT_EQ(r->op, GGML_OP_CONCAT);
    EXPECT_EQ(r->op_params[0], dim);
  }
  EXPECT_EQ(ggml_concat(ctx_, a, F32(4, 4, 3), 2), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"differ in dim 1"}));
  EXPECT_EQ(ggml_concat(ctx_, a, a, 4), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"dim 4"}));
  EXPECT_EQ(ggml_concat(ctx_, a, New(GGML_TYPE_F16, 4, 3, 2), 0), nullptr);

  ggml_tensor* p = ggml_pad(ctx_, a, 1, 2, 0, 3);
  EXPECT_TRUE(HasShape(p, GGML_TYPE_F32, {5, 5, 2, 4}));
  EXPECT_EQ(p->op, GGML_OP_PAD);
  EXPECT_EQ(ggml_pad(ctx_, a, 0, -1, 0, 0), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"negative padding"}));

  ggml_tensor* big = F32(4, 3, 2, 2);
  ggml_tensor* rep = ggml_repeat(ctx_, F32(4, 1, 2), big);
  EXPECT_TRUE(HasShape(rep, GGML_TYPE_F32, {4, 3, 2, 2}));
  EXPECT_EQ(rep->op, GGML_OP_REPEAT);
  EXPECT_EQ(ggml_repeat(ctx_, F32(3), big), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"cannot be tiled"}));

  ggml_tensor* am = ggml_argmax(ctx_, F32(51864, 5));
  EXPECT_TRUE(HasShape(am, GGML_TYPE_I32, {5}));
  EXPECT_EQ(am->op, GGML_OP_ARGMAX);
  EXPECT_EQ(ggml_argmax(ctx_, a), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"must be F32 2-D"}));
}

TEST_F(OpsTest, EveryConstructorPropagatesNull) {
  ggml_tensor* x = F32(32, 4);
  const std::vector<std::pair<const char*, std::function<ggml_tensor*(ggml_tensor*)>>> kOps = {
      {"ggml_add", [&](ggml_tensor* t) { return ggml_add(ctx_, t, x); }},
      {"ggml_mul", [&](ggml_tensor* t) { return ggml_mul(ctx_, t, x); }},
      {"ggml_scale", [&](ggml_tensor* t) { return ggml_scale(ctx_, t, 2.0f); }},
      {"ggml_norm", [&](ggml_tensor* t) { return ggml_norm(ctx_, t, 1e-5f); }},
      {"ggml_rms_norm", [&](ggml_tensor* t) { return ggml_rms_norm(ctx_, t, 1e-5f); }},
      {"ggml_unary", [&](ggml_tensor* t) { return ggml_gelu(ctx_, t); }},
      {"ggml_mul_mat", [&](ggml_tensor* t) { return ggml_mul_mat(ctx_, x, t); }},
      {"ggml_cpy", [&](ggml_tensor* t) { return ggml_cpy(ctx_, t, x); }},
      {"ggml_cont", [&](ggml_tensor* t) { return ggml_cont(ctx_, t); }},
      {"ggml_cont_2d", [&](ggml_tensor* t) { return ggml_cont_2d(ctx_, t, 4, 32); }},
      {"ggml_reshape", [&](ggml_tensor* t) { return ggml_reshape_2d(ctx_, t, 4, 32); }},
      {"ggml_permute", [&](ggml_tensor* t) { return ggml_permute(ctx_, t, 1, 0, 2, 3); }},
      {"ggml_transpose", [&](ggml_tensor* t) { return ggml_transpose(ctx_, t); }},
      {"ggml_get_rows", [&](ggml_tensor* t) { return ggml_get_rows(ctx_, t, New(GGML_TYPE_I32, 2)); }},
      {"ggml_diag_mask_inf", [&](ggml_tensor* t) { return ggml_diag_mask_inf(ctx_, t, 0); }},
      {"ggml_soft_max_ext", [&](ggml_tensor* t) { return ggml_soft_max(ctx_, t); }},
      {"ggml_im2col_1d", [&](ggml_tensor* t) { return ggml_im2col_1d(ctx_, x, t, 1, 0, 1, GGML_TYPE_F32); }},
      {"ggml_conv_1d_ph", [&](ggml_tensor* t) { return ggml_conv_1d_ph(ctx_, t, x, 1, 1); }},
      {"ggml_concat", [&](ggml_tensor* t) { return ggml_concat(ctx_, x, t, 0); }},
      {"ggml_pad", [&](ggml_tensor* t) { return ggml_pad(ctx_, t, 1, 0, 0, 0); }},
      {"ggml_repeat", [&](ggml_tensor* t) { return ggml_repeat(ctx_, t, x); }},
      {"ggml_argmax", [&](ggml_tensor* t) { return ggml_argmax(ctx_, t); }},
      {"ggml_view", [&](ggml_tensor* t) { return ggml_view_1d(ctx_, t, 4, 0); }},
  };
  for (const auto& op : kOps) {
    SCOPED_TRACE(op.first);
    // Each accepts a valid source...
    EXPECT_NE(op.second(x), nullptr) << ggml_last_error();
    // ...and turns a NULL one into NULL with a message naming the constructor.
    ggml_clear_error();
    log_.clear();
    EXPECT_EQ(op.second(nullptr), nullptr);
    EXPECT_TRUE(ErrorMentions(log_, {op.first, "NULL"}));
  }
  // A chain built without checks fails as a whole at the end, and the first error is the cause.
  ggml_tensor* bad = ggml_mul_mat(ctx_, F32(31, 8), x);  // K mismatch
  const std::string cause = ggml_last_error();
  ggml_tensor* y = ggml_gelu(ctx_, ggml_add(ctx_, ggml_scale(ctx_, bad, 0.5f), x));
  EXPECT_EQ(y, nullptr);
  EXPECT_NE(cause.find("K differs"), std::string::npos);
  ggml_cgraph* g = ggml_new_graph(ctx_);
  EXPECT_FALSE(ggml_build_forward_expand(g, y));
  EXPECT_TRUE(ErrorMentions(log_, {"tensor is NULL"}));
}

TEST_F(OpsTest, FullContextMakesConstructorsReturnNull) {
  ggml_context* small = ggml_init({3 * ggml_tensor_overhead(), nullptr, true});
  ASSERT_NE(small, nullptr);
  ggml_tensor* a = ggml_new_tensor_1d(small, GGML_TYPE_F32, 8);
  ggml_tensor* b = ggml_add(small, a, a);
  ASSERT_NE(b, nullptr);
  ggml_tensor* c = ggml_transpose(small, b);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(ggml_mul(small, a, a), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"not enough space", "needed 368 bytes", "0 bytes left"}));
  EXPECT_EQ(ggml_permute(small, a, 1, 0, 2, 3), nullptr);
  ggml_free(small);
}

TEST(OpNamesTest, EveryOpHasADistinctName) {
  std::vector<std::string> names;
  for (int op = 0; op < GGML_OP_COUNT; ++op) {
    const std::string name = ggml_op_name(static_cast<ggml_op>(op));
    EXPECT_NE(name, "UNKNOWN") << op;
    EXPECT_EQ(std::count(names.begin(), names.end(), name), 0) << name;
    names.push_back(name);
  }
  EXPECT_STREQ(ggml_op_name(GGML_OP_NONE), "NONE");
  EXPECT_STREQ(ggml_op_name(GGML_OP_MUL_MAT), "MUL_MAT");
  EXPECT_STREQ(ggml_op_name(GGML_OP_UNARY), "UNARY");
  EXPECT_STREQ(ggml_op_name(GGML_OP_COUNT), "UNKNOWN");
  EXPECT_STREQ(ggml_op_name(static_cast<ggml_op>(-1)), "UNKNOWN");
}

}  // namespace
