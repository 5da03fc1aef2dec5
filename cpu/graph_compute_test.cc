// ggml_graph_compute, op by op, against the reference evaluator (cpu/ref_ops.h) on every
// Highway target this CPU supports: odd row lengths, permuted/transposed (strided) sources,
// broadcast shapes. Every graph also runs with 1, 2, 3 and 8 threads, which must agree bit for
// bit (RunAndReference).
//
// Tolerances: ops without a rounding choice (ADD, MUL, SCALE, copies and F16 conversion,
// GET_ROWS, IM2COL, CONCAT, PAD, REPEAT, ARGMAX, DIAG_MASK_INF) must equal the reference
// exactly. NORM / RMS_NORM: float mean and scale vs double: 1e-5 abs + 1e-5 rel. SOFT_MAX:
// expf and a float scale: 1e-6 abs + 1e-5 rel. UNARY: tanhf/erff/expf: 1e-6 abs + 1e-5 rel; relu
// exact, sqr and sqrt to rounding. FLASH_ATTN_EXT: f32 products, expf and the online rescaling:
// 2e-6 abs + 1e-5 rel.
// MUL_MAT: the f32 summation bound gamma_K * sum_k |a b| (gamma_K = K u / (1 - K u), u = 2^-24),
// plus, for quantized a, the error of quantizing b to Q8 (half a step of each block's scale,
// with the fp16 rounding of the scale) times |a|.
#include "cpu/graph_compute.h"

#include <math.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cpu/graph_compute_test_util.h"
#include "ggml/ggml.h"
#include "ggml/ops.h"
#include "gtest/gtest.h"
#include "hwy/tests/hwy_gtest.h"
#include "kernels/quant_gemm.h"
#include "kernels/quant_traits.h"
#include "kernels/test_util.h"

namespace ggml_cpu {
namespace {

using test::ExpectClose;
using test::ExpectExact;
using test::RandomTensor;
using test::RunAndReference;
using test::Sizes;

HWY_BEFORE_TEST(GraphComputeTest);

// One context per test body, large enough for the biggest case (4097-long rows).
struct Ctx {
  ggml_context* ctx = ggml_init({256u << 20, nullptr, false});
  ~Ctx() { ggml_free(ctx); }
};

test::Executor& Exec() {
  static test::Executor* ex = new test::Executor();
  return *ex;
}

// x with its dims 0 and 1 swapped in memory: shape [ne0, ne1, ne2] but nb0 = ne1 * 4.
ggml_tensor* TransposedRandom(ggml_context* ctx, int64_t ne0, int64_t ne1, int64_t ne2, uint32_t seed,
                              float lo = -1.0f, float hi = 1.0f) {
  return ggml_transpose(ctx, RandomTensor(ctx, GGML_TYPE_F32, {ne1, ne0, ne2}, seed, lo, hi));
}

TEST_P(GraphComputeTest, AddMulScaleBroadcastExact) {
  test::ExpectDispatchedTo(GetParam());
  for (size_t un : Sizes()) {
    const int64_t n = static_cast<int64_t>(un);
    Ctx c;
    ggml_tensor* a = RandomTensor(c.ctx, GGML_TYPE_F32, {n, 5, 2}, 1);
    ggml_tensor* at = TransposedRandom(c.ctx, n, 5, 2, 2);
    const std::vector<std::vector<int64_t>> b_shapes = {{n, 5, 2}, {n, 1, 1}, {1, 5, 1}, {n, 1, 2}, {1, 1, 1}};
    uint32_t seed = 10;
    for (const auto& bs : b_shapes) {
      ggml_tensor* b = RandomTensor(c.ctx, GGML_TYPE_F32, bs, seed++);
      const std::string what = absl::StrCat("n=", n, " b=[", bs[0], ",", bs[1], ",", bs[2], "]");
      ExpectExact(RunAndReference(&Exec(), c.ctx, ggml_add(c.ctx, a, b), what), "add " + what);
      ExpectExact(RunAndReference(&Exec(), c.ctx, ggml_mul(c.ctx, at, b), what), "mul transposed " + what);
    }
    ExpectExact(RunAndReference(&Exec(), c.ctx, ggml_scale(c.ctx, at, -0.37f), "scale"), absl::StrCat("scale ", n));
  }
}

TEST_P(GraphComputeTest, NormRmsNormUnary) {
  test::ExpectDispatchedTo(GetParam());
  for (size_t un : Sizes()) {
    const int64_t n = static_cast<int64_t>(un);
    Ctx c;
    ggml_tensor* a = RandomTensor(c.ctx, GGML_TYPE_F32, {n, 3, 2}, 3, -2.0f, 3.0f);
    ggml_tensor* at = TransposedRandom(c.ctx, n, 3, 2, 4, -2.0f, 3.0f);
    for (ggml_tensor* x : {a, at}) {
      const std::string what = absl::StrCat("n=", n, x == at ? " transposed" : "");
      ExpectClose(RunAndReference(&Exec(), c.ctx, ggml_norm(c.ctx, x, 1e-5f), what), 1e-5, 1e-5, "norm " + what);
      ExpectClose(RunAndReference(&Exec(), c.ctx, ggml_rms_norm(c.ctx, x, 1e-6f), what), 1e-5, 1e-5, "rms " + what);
    }
    ggml_tensor* u = RandomTensor(c.ctx, GGML_TYPE_F32, {n, 3}, 5, -12.0f, 12.0f);
    ggml_tensor* ut = TransposedRandom(c.ctx, n, 3, 1, 6, -12.0f, 12.0f);
    for (ggml_tensor* x : {u, ut}) {
      const std::string what = absl::StrCat("n=", n, x == ut ? " transposed" : "");
      ExpectClose(RunAndReference(&Exec(), c.ctx, ggml_gelu(c.ctx, x), what), 1e-6, 1e-5, "gelu " + what);
      ExpectClose(RunAndReference(&Exec(), c.ctx, ggml_gelu_erf(c.ctx, x), what), 1e-6, 1e-5, "gelu_erf " + what);
      ExpectClose(RunAndReference(&Exec(), c.ctx, ggml_silu(c.ctx, x), what), 1e-6, 1e-5, "silu " + what);
      ExpectClose(RunAndReference(&Exec(), c.ctx, ggml_relu(c.ctx, x), what), 0.0, 0.0, "relu " + what);
      ExpectClose(RunAndReference(&Exec(), c.ctx, ggml_sigmoid(c.ctx, x), what), 1e-6, 1e-5, "sigmoid " + what);
      ExpectClose(RunAndReference(&Exec(), c.ctx, ggml_tanh(c.ctx, x), what), 1e-6, 1e-5, "tanh " + what);
      ExpectClose(RunAndReference(&Exec(), c.ctx, ggml_sqr(c.ctx, x), what), 0.0, 1e-7, "sqr " + what);
      ExpectClose(RunAndReference(&Exec(), c.ctx, ggml_sqrt(c.ctx, ggml_sqr(c.ctx, x)), what), 1e-6, 1e-6,
                  "sqrt " + what);
    }
  }
}

TEST_P(GraphComputeTest, SoftMaxScaleMaskAndDiagMask) {
  test::ExpectDispatchedTo(GetParam());
  for (size_t un : Sizes()) {
    const int64_t n = static_cast<int64_t>(un);
    Ctx c;
    ggml_tensor* a = RandomTensor(c.ctx, GGML_TYPE_F32, {n, 7, 3}, 7, -4.0f, 4.0f);
    ggml_tensor* at = TransposedRandom(c.ctx, n, 7, 3, 8, -4.0f, 4.0f);
    // Mask with more rows than a (ggml pads the KV mask) and -inf cells, but never a full row.
    ggml_tensor* mask = RandomTensor(c.ctx, GGML_TYPE_F32, {n, 9}, 9, -1.0f, 1.0f);
    for (int64_t r = 0; r < 9; ++r) {
      for (int64_t i = 1; i < n; i += 3) ggml_set_f32_nd(mask, i, r, 0, 0, -INFINITY);
    }
    // Row 4 fully masked: all 0 out (kernels/softmax.h's rule, followed by ref_ops).
    for (int64_t i = 0; i < n; ++i) ggml_set_f32_nd(mask, i, 4, 0, 0, -INFINITY);
    for (ggml_tensor* x : {a, at}) {
      const std::string what = absl::StrCat("n=", n, x == at ? " transposed" : "");
      ExpectClose(RunAndReference(&Exec(), c.ctx, ggml_soft_max(c.ctx, x), what), 1e-6, 1e-5, "soft_max " + what);
      const test::Outcome masked = RunAndReference(&Exec(), c.ctx, ggml_soft_max_ext(c.ctx, x, mask, 0.125f, 0.0f), what);
      ExpectClose(masked, 1e-6, 1e-5, "soft_max_ext " + what);
      // ALiBi over a's 3 heads (slopes 2^-4, 2^-8, then 2^-2: ref_ops derives them in double).
      ExpectClose(RunAndReference(&Exec(), c.ctx, ggml_soft_max_ext(c.ctx, x, mask, 0.125f, 8.0f), what), 1e-6, 1e-5,
                  "soft_max_ext alibi " + what);
      ASSERT_EQ(masked.exec.size(), static_cast<size_t>(n * 7 * 3));
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(masked.exec[4 * n + i], 0.0f) << "fully masked row, " << what;
      for (int n_past : {0, 2}) {
        ExpectExact(RunAndReference(&Exec(), c.ctx, ggml_diag_mask_inf(c.ctx, x, n_past), what),
                    absl::StrCat("diag_mask_inf n_past ", n_past, " ", what));
      }
    }
  }
}

TEST_P(GraphComputeTest, FlashAttnExtOnWhisperShapedViews) {
  test::ExpectDispatchedTo(GetParam());
  // As the encoder builds it: q, k, v are permuted views of [d * n_head, n] projections (rows of
  // one head are d elements apart, heads d elements apart), k and v cast to F16; plus grouped
  // heads (6 query heads over 3 K/V heads), an F16 and an F32 mask with -inf cells and one fully
  // masked query (zeros), and F32 K/V.
  const int64_t d = 40, n_head = 6, n_q = 37, n_kv = 53;
  Ctx c;
  auto heads = [&](ggml_tensor* x, int64_t h, int64_t n) {  // [d * h, n] -> [d, n, h]
    return ggml_permute(c.ctx, ggml_reshape_3d(c.ctx, x, d, h, n), 0, 2, 1, 3);
  };
  ggml_tensor* q = heads(RandomTensor(c.ctx, GGML_TYPE_F32, {d * n_head, n_q}, 21, -1.0f, 1.0f), n_head, n_q);
  for (int64_t h_kv : {n_head, n_head / 2}) {
    ggml_tensor* k32 = heads(RandomTensor(c.ctx, GGML_TYPE_F32, {d * h_kv, n_kv}, 22, -1.0f, 1.0f), h_kv, n_kv);
    ggml_tensor* v32 = heads(RandomTensor(c.ctx, GGML_TYPE_F32, {d * h_kv, n_kv}, 23, -1.0f, 1.0f), h_kv, n_kv);
    ggml_tensor* k16 = ggml_cast(c.ctx, k32, GGML_TYPE_F16);
    ggml_tensor* v16 = ggml_cast(c.ctx, v32, GGML_TYPE_F16);
    for (ggml_type mt : {GGML_TYPE_F32, GGML_TYPE_F16}) {
      ggml_tensor* m32 = RandomTensor(c.ctx, GGML_TYPE_F32, {n_kv, n_q + 3}, 24, -2.0f, 2.0f);
      for (int64_t r = 0; r < n_q + 3; ++r) {
        for (int64_t j = r % 4; j < n_kv; j += 4) ggml_set_f32_nd(m32, j, r, 0, 0, -INFINITY);
      }
      for (int64_t j = 0; j < n_kv; ++j) ggml_set_f32_nd(m32, j, 5, 0, 0, -INFINITY);
      ggml_tensor* mask = mt == GGML_TYPE_F32 ? m32 : ggml_cast(c.ctx, m32, GGML_TYPE_F16);
      const std::string what = absl::StrCat("n_head_kv=", h_kv, " mask ", ggml_type_name(mt));
      const test::Outcome o = RunAndReference(
          &Exec(), c.ctx, ggml_flash_attn_ext(c.ctx, q, k16, v16, mask, 1.0f / sqrtf(float(d)), 0.0f, 0.0f), what);
      ExpectClose(o, 2e-6, 1e-5, "flash_attn_ext " + what);
      ASSERT_EQ(o.exec.size(), static_cast<size_t>(d * n_head * n_q));
      for (int64_t i = 0; i < d * n_head; ++i) EXPECT_EQ(o.exec[5 * d * n_head + i], 0.0f) << "masked query, " << what;
    }
    ExpectClose(RunAndReference(&Exec(), c.ctx, ggml_flash_attn_ext(c.ctx, q, k32, v32, nullptr, 0.3f, 0.0f, 0.0f),
                                "f32 k/v"),
                2e-6, 1e-5, "flash_attn_ext f32 k/v");
    // ALiBi (6 heads: slopes 2^-2, 2^-4, 2^-6, 2^-8, then 2^-1, 2^-3) and a logit softcap of 2.
    ggml_tensor* m32 = RandomTensor(c.ctx, GGML_TYPE_F32, {n_kv, n_q}, 25, -3.0f, 0.0f);
    for (float max_bias : {0.0f, 8.0f}) {
      for (float softcap : {0.0f, 2.0f}) {
        if (max_bias == 0.0f && softcap == 0.0f) continue;
        const std::string what = absl::StrCat("n_head_kv=", h_kv, " max_bias ", max_bias, " softcap ", softcap);
        ExpectClose(RunAndReference(&Exec(), c.ctx,
                                    ggml_flash_attn_ext(c.ctx, q, k16, v16, m32, 3.0f, max_bias, softcap), what),
                    2e-6, 2e-5, "flash_attn_ext " + what);
      }
    }
  }
}

// ggml_flash_attn_ext_set_int8: on a target whose QuantGemm has the int8 instruction (AVX3_DL), the
// node runs the int8 kernel: close to the f32 reference (the quantization error, well under 0.02
// for v in [-1, 1] at these logits) but not equal to it; elsewhere, and for d_k = 40 (not a
// multiple of 32), the f32 kernel's bits. Threads agree bit for bit either way.
TEST_P(GraphComputeTest, FlashAttnExtInt8Flag) {
  test::ExpectDispatchedTo(GetParam());
  for (int64_t d : {64, 40}) {
    const int64_t n_head = 3, n_q = 45, n_kv = 150;
    Ctx c;
    auto heads = [&](ggml_tensor* x, int64_t n) {
      return ggml_permute(c.ctx, ggml_reshape_3d(c.ctx, x, d, n_head, n), 0, 2, 1, 3);
    };
    auto random_f16 = [&](uint32_t seed) {
      return ggml_cast(c.ctx, heads(RandomTensor(c.ctx, GGML_TYPE_F32, {d * n_head, n_kv}, seed, -1.0f, 1.0f), n_kv),
                       GGML_TYPE_F16);
    };
    ggml_tensor* q = heads(RandomTensor(c.ctx, GGML_TYPE_F32, {d * n_head, n_q}, 31, -1.0f, 1.0f), n_q);
    ggml_tensor* k = random_f16(32);
    ggml_tensor* v = random_f16(33);
    const float scale = 1.0f / sqrtf(float(d));
    const test::Outcome f32 =
        RunAndReference(&Exec(), c.ctx, ggml_flash_attn_ext(c.ctx, q, k, v, nullptr, scale, 0.0f, 0.0f), "f32");
    ggml_tensor* fa8 =
        ggml_flash_attn_ext_set_int8(ggml_flash_attn_ext(c.ctx, q, k, v, nullptr, scale, 0.0f, 0.0f), true);
    const test::Outcome int8 = RunAndReference(&Exec(), c.ctx, fa8, "int8");
    ASSERT_EQ(int8.exec.size(), f32.exec.size());
    const bool expect_int8 = d % 32 == 0 && QuantGemmFast();
    double worst = 0;
    for (size_t i = 0; i < f32.exec.size(); ++i) worst = fmax(worst, fabs(double(int8.exec[i]) - f32.exec[i]));
    if (expect_int8) {
      EXPECT_GT(worst, 0.0) << "d=" << d << ": the int8 kernel did not run";
      EXPECT_LT(worst, 0.02) << "d=" << d;
    } else {
      EXPECT_EQ(worst, 0.0) << "d=" << d << ": expected the f32 kernel";
    }
  }
}

TEST_P(GraphComputeTest, ArgmaxWithTies) {
  test::ExpectDispatchedTo(GetParam());
  for (size_t un : Sizes()) {
    const int64_t n = static_cast<int64_t>(un);
    Ctx c;
    ggml_tensor* a = RandomTensor(c.ctx, GGML_TYPE_F32, {n, 6}, 11);
    for (int64_t r = 0; r < 6; ++r) {  // plant a tie for the maximum at n/3 and n-1
      ggml_set_f32_nd(a, n / 3, r, 0, 0, 2.0f);
      ggml_set_f32_nd(a, n - 1, r, 0, 0, 2.0f);
    }
    const test::Outcome o = RunAndReference(&Exec(), c.ctx, ggml_argmax(c.ctx, a), "argmax");
    ExpectExact(o, absl::StrCat("argmax ", n));
    ASSERT_EQ(o.exec.size(), 6u);
    EXPECT_EQ(o.exec[0], static_cast<float>(n / 3));
    ggml_tensor* at = TransposedRandom(c.ctx, n, 6, 1, 12);
    ExpectExact(RunAndReference(&Exec(), c.ctx, ggml_argmax(c.ctx, at), "argmax"), absl::StrCat("argmax T ", n));
  }
}

TEST_P(GraphComputeTest, CopiesBetweenF32AndF16AnyStrides) {
  test::ExpectDispatchedTo(GetParam());
  for (size_t un : Sizes()) {
    const int64_t n = static_cast<int64_t>(un);
    Ctx c;
    for (ggml_type st : {GGML_TYPE_F32, GGML_TYPE_F16}) {
      for (ggml_type dt : {GGML_TYPE_F32, GGML_TYPE_F16}) {
        const std::string what = absl::StrCat("n=", n, " ", ggml_type_name(st), "->", ggml_type_name(dt));
        ggml_tensor* src = RandomTensor(c.ctx, st, {n, 4, 3}, 20, -70000.0f, 70000.0f);  // F16 overflow too
        ggml_tensor* src_t = ggml_transpose(c.ctx, RandomTensor(c.ctx, st, {4, n, 3}, 21));
        // Same shape, contiguous and strided on either side.
        ExpectExact(RunAndReference(&Exec(), c.ctx, ggml_cpy(c.ctx, src, ggml_new_tensor_3d(c.ctx, dt, n, 4, 3)), what),
                    "cpy " + what);
        ExpectExact(
            RunAndReference(&Exec(), c.ctx, ggml_cpy(c.ctx, src_t, ggml_new_tensor_3d(c.ctx, dt, n, 4, 3)), what),
            "cpy from transposed " + what);
        // More rows than one tile of CopyTransposedF32 (16 rows; the last tile partial).
        ggml_tensor* src_t37 = ggml_transpose(c.ctx, RandomTensor(c.ctx, st, {37, n, 2}, 23));
        ExpectExact(
            RunAndReference(&Exec(), c.ctx, ggml_cpy(c.ctx, src_t37, ggml_new_tensor_3d(c.ctx, dt, n, 37, 2)), what),
            "cpy from transposed, 37 rows " + what);
        ggml_tensor* dst_t = ggml_transpose(c.ctx, ggml_new_tensor_3d(c.ctx, dt, 4, n, 3));
        ExpectExact(RunAndReference(&Exec(), c.ctx, ggml_cpy(c.ctx, src, dst_t), what), "cpy into transposed " + what);
        // KV-cache write: a [n, 4] block into a 1-D slice of a larger cache, at an offset.
        ggml_tensor* cache = ggml_new_tensor_1d(c.ctx, dt, n * 4 * 3 + 5 * n);
        ggml_tensor* slot = ggml_view_1d(c.ctx, cache, n * 4 * 3, 5 * n * ggml_type_size(dt));
        ExpectExact(RunAndReference(&Exec(), c.ctx, ggml_cpy(c.ctx, src, slot), what), "cpy into cache " + what);
        ExpectExact(RunAndReference(&Exec(), c.ctx, ggml_cpy(c.ctx, src_t, slot), what),
                    "cpy transposed into cache " + what);
        // Different shape into a strided 2-D view [4n, 3] (rows 4n + 2 apart): from a contiguous
        // source (dst rows are runs of the source) and from a transposed one (element walk).
        ggml_tensor* wide = ggml_new_tensor_2d(c.ctx, dt, 4 * n + 2, 3);
        ggml_tensor* rows = ggml_view_2d(c.ctx, wide, 4 * n, 3, wide->nb[1], ggml_type_size(dt));
        ExpectExact(RunAndReference(&Exec(), c.ctx, ggml_cpy(c.ctx, src, rows), what), "cpy into rows " + what);
        ExpectExact(RunAndReference(&Exec(), c.ctx, ggml_cpy(c.ctx, src_t, rows), what),
                    "cpy transposed into rows " + what);
      }
      // CONT of a 4-D permutation and cont_2d of a transposed view (different shape).
      ggml_tensor* x = RandomTensor(c.ctx, st, {n, 3, 2, 2}, 22);
      ExpectExact(RunAndReference(&Exec(), c.ctx, ggml_cont(c.ctx, ggml_permute(c.ctx, x, 2, 0, 3, 1)), "cont"),
                  absl::StrCat("cont permuted ", n));
      ExpectExact(RunAndReference(&Exec(), c.ctx, ggml_cont_2d(c.ctx, ggml_transpose(c.ctx, x), 3 * n, 4), "cont_2d"),
                  absl::StrCat("cont_2d transposed ", n));
    }
  }
}

TEST_P(GraphComputeTest, ConcatPadRepeat) {
  test::ExpectDispatchedTo(GetParam());
  for (size_t un : Sizes()) {
    const int64_t n = static_cast<int64_t>(un);
    Ctx c;
    ggml_tensor* a = TransposedRandom(c.ctx, n, 3, 2, 30);
    for (int dim = 0; dim < 4; ++dim) {
      std::vector<int64_t> ne = {n, 3, 2, 1};
      ne[dim] = 2;
      ggml_tensor* b = RandomTensor(c.ctx, GGML_TYPE_F32, ne, 31 + dim);  // a's shape but 2 along dim
      ggml_tensor* ab = ggml_concat(c.ctx, a, b, dim);
      ExpectExact(RunAndReference(&Exec(), c.ctx, ab, "concat"), absl::StrCat("concat dim ", dim, " n ", n));
    }
    ExpectExact(RunAndReference(&Exec(), c.ctx, ggml_pad(c.ctx, a, 3, 1, 0, 2), "pad"), absl::StrCat("pad ", n));
    ggml_tensor* target = ggml_new_tensor_4d(c.ctx, GGML_TYPE_F32, n * 3, 6, 2, 2);
    ExpectExact(RunAndReference(&Exec(), c.ctx, ggml_repeat(c.ctx, a, target), "repeat"), absl::StrCat("repeat ", n));
  }
}

TEST_P(GraphComputeTest, GetRowsAllTypes) {
  test::ExpectDispatchedTo(GetParam());
  for (ggml_type type : {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0,
                         GGML_TYPE_Q5_1, GGML_TYPE_Q8_0}) {
    for (int64_t n0 : {32, 96, 4096}) {
      Ctx c;
      ggml_tensor* a = RandomTensor(c.ctx, type, {n0, 7, 2}, 40);
      ggml_tensor* idx = ggml_new_tensor_2d(c.ctx, GGML_TYPE_I32, 5, 2);
      const int32_t rows[10] = {6, 0, 3, 3, 1, 2, 6, 6, 0, 5};
      memcpy(idx->data, rows, sizeof(rows));
      ExpectExact(RunAndReference(&Exec(), c.ctx, ggml_get_rows(c.ctx, a, idx), "get_rows"),
                  absl::StrCat("get_rows ", ggml_type_name(type), " ", n0));
    }
  }
}

TEST_P(GraphComputeTest, Im2ColF32AndF16) {
  test::ExpectDispatchedTo(GetParam());
  struct Conv {
    int64_t il, ic, n, k;
    int s, p, d;
  };
  const Conv convs[] = {{31, 3, 2, 3, 1, 1, 1}, {33, 5, 1, 3, 2, 1, 1}, {255, 2, 2, 5, 3, 2, 2}, {7, 1, 1, 1, 1, 0, 1}};
  for (const Conv& cv : convs) {
    for (ggml_type dt : {GGML_TYPE_F32, GGML_TYPE_F16}) {
      Ctx c;
      ggml_tensor* kernel = ggml_new_tensor_3d(c.ctx, GGML_TYPE_F16, cv.k, cv.ic, 4);
      ggml_tensor* in = RandomTensor(c.ctx, GGML_TYPE_F32, {cv.il, cv.ic, cv.n}, 50);
      const std::string what = absl::StrCat("im2col il ", cv.il, " s ", cv.s, " ", ggml_type_name(dt));
      ExpectExact(RunAndReference(&Exec(), c.ctx, ggml_im2col_1d(c.ctx, kernel, in, cv.s, cv.p, cv.d, dt), what), what);
    }
  }
}

}  // namespace
}  // namespace ggml_cpu
