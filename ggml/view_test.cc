// Views, reshape, permute and transpose: each shares its source's bytes. Every element read
// through a view is compared with the source element that ggml's stride rule says it aliases
// (byte address = data + sum(i_k * nb_k)), computed here from the source's own indices.
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "ggml/ggml.h"
#include "ggml/ops.h"
#include "ggml/test_util.h"
#include "gtest/gtest.h"

namespace {

using ggml_test::ErrorMentions;
using ggml_test::LogCapture;

class ViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = ggml_init({1 << 20, nullptr, false});
    ASSERT_NE(ctx_, nullptr);
    // src: F32 [6, 4], element (i0, i1) = 100 * i1 + i0, written through the raw pointer.
    src_ = ggml_set_name(ggml_new_tensor_2d(ctx_, GGML_TYPE_F32, 6, 4), "src");
    ASSERT_NE(src_, nullptr);
    for (int i = 0; i < 24; ++i) Flat()[i] = static_cast<float>(100 * (i / 6) + i % 6);
  }
  void TearDown() override { ggml_free(ctx_); }

  float* Flat() { return static_cast<float*>(src_->data); }
  float Src(int64_t i0, int64_t i1) { return Flat()[i0 + 6 * i1]; }

  LogCapture log_;
  ggml_context* ctx_ = nullptr;
  ggml_tensor* src_ = nullptr;
};

// One past the last byte a strided F32/F16/I32 tensor reaches: the span rule, restated.
size_t Span(const ggml_tensor* t) {
  size_t span = ggml_type_size(t->type);
  for (int i = 0; i < GGML_MAX_DIMS; ++i) span += static_cast<size_t>(t->ne[i] - 1) * t->nb[i];
  return span;
}

// A 4-D F32 tensor whose elements are their own flat index.
ggml_tensor* Iota4d(ggml_context* ctx, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
  ggml_tensor* t = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, ne0, ne1, ne2, ne3);
  if (t == nullptr) return nullptr;
  for (int64_t i = 0; i < ggml_nelements(t); ++i) static_cast<float*>(t->data)[i] = static_cast<float>(i);
  return t;
}

TEST_F(ViewTest, View1dSharesBytesBothWays) {
  ggml_tensor* v = ggml_view_1d(ctx_, src_, 5, 3 * sizeof(float));
  ASSERT_NE(v, nullptr) << ggml_last_error();
  EXPECT_EQ(v->data, Flat() + 3);
  EXPECT_EQ(v->view_src, src_);
  EXPECT_EQ(v->view_offs, 12u);
  EXPECT_EQ(v->op, GGML_OP_VIEW);
  EXPECT_EQ(v->src[0], src_);
  size_t offset_param;
  memcpy(&offset_param, v->op_params, sizeof(offset_param));
  EXPECT_EQ(offset_param, 12u);
  EXPECT_STREQ(v->name, "src (view)");
  EXPECT_EQ(v->ne[0], 5);
  EXPECT_EQ(ggml_nbytes(v), 20u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(ggml_get_f32_nd(v, i, 0, 0, 0), Flat()[3 + i]);
  Flat()[5] = -1.5f;  // write through the source, read through the view
  EXPECT_EQ(ggml_get_f32_nd(v, 2, 0, 0, 0), -1.5f);
  ggml_set_f32_nd(v, 4, 0, 0, 0, 77.0f);  // and the other way
  EXPECT_EQ(Flat()[7], 77.0f);
}

TEST_F(ViewTest, View2dWithOffsetAndRowStride) {
  // A 3 x 2 window starting at (2, 1).
  const size_t offset = 1 * src_->nb[1] + 2 * sizeof(float);
  ggml_tensor* v = ggml_view_2d(ctx_, src_, 3, 2, src_->nb[1], offset);
  ASSERT_NE(v, nullptr) << ggml_last_error();
  EXPECT_EQ(v->nb[0], 4u);
  EXPECT_EQ(v->nb[1], 24u);
  EXPECT_EQ(v->nb[2], 48u);  // nb1 * ne1, as ggml_view_2d sets it
  EXPECT_EQ(v->nb[3], 48u);
  EXPECT_FALSE(ggml_is_contiguous(v));
  for (int i1 = 0; i1 < 2; ++i1) {
    for (int i0 = 0; i0 < 3; ++i0) EXPECT_EQ(ggml_get_f32_nd(v, i0, i1, 0, 0), Src(2 + i0, 1 + i1));
  }
  Flat()[2 + 6 * 2] = 4242.0f;  // source (2, 2) is view (0, 1)
  EXPECT_EQ(ggml_get_f32_nd(v, 0, 1, 0, 0), 4242.0f);
  ggml_set_f32_nd(v, 2, 0, 0, 0, -3.0f);  // view (2, 0) is source (4, 1)
  EXPECT_EQ(Src(4, 1), -3.0f);
  EXPECT_EQ(ggml_nbytes(v), Span(v));

  // Every other row.
  ggml_tensor* even_rows = ggml_view_2d(ctx_, src_, 6, 2, 2 * src_->nb[1], 0);
  ASSERT_NE(even_rows, nullptr);
  for (int i1 = 0; i1 < 2; ++i1) {
    for (int i0 = 0; i0 < 6; ++i0) EXPECT_EQ(ggml_get_f32_nd(even_rows, i0, i1, 0, 0), Src(i0, 2 * i1));
  }
  // Overlapping rows (a sliding window of 4 over the flat data, step 1 element).
  ggml_tensor* windows = ggml_view_2d(ctx_, src_, 4, 5, sizeof(float), 0);
  ASSERT_NE(windows, nullptr) << ggml_last_error();
  for (int i1 = 0; i1 < 5; ++i1) {
    for (int i0 = 0; i0 < 4; ++i0) EXPECT_EQ(ggml_get_f32_nd(windows, i0, i1, 0, 0), Flat()[i0 + i1]);
  }
}

TEST_F(ViewTest, View3dAnd4dStrides) {
  ggml_tensor* a = Iota4d(ctx_, 4, 3, 2, 2);  // nb = 4, 16, 48, 96
  ASSERT_NE(a, nullptr);
  // Columns 1..2 of every row of the first cube.
  ggml_tensor* v3 = ggml_view_3d(ctx_, a, 2, 3, 2, a->nb[1], a->nb[2], 1 * sizeof(float));
  ASSERT_NE(v3, nullptr) << ggml_last_error();
  EXPECT_EQ(v3->nb[3], a->nb[2] * 2);
  for (int i2 = 0; i2 < 2; ++i2)
    for (int i1 = 0; i1 < 3; ++i1)
      for (int i0 = 0; i0 < 2; ++i0)
        EXPECT_EQ(ggml_get_f32_nd(v3, i0, i1, i2, 0), ggml_get_f32_nd(a, 1 + i0, i1, i2, 0));
  // Row 2 of each matrix, as a 4-D view [4, 1, 2, 2] with a's strides.
  ggml_tensor* v4 = ggml_view_4d(ctx_, a, 4, 1, 2, 2, a->nb[1], a->nb[2], a->nb[3], 2 * a->nb[1]);
  ASSERT_NE(v4, nullptr) << ggml_last_error();
  for (int i3 = 0; i3 < 2; ++i3)
    for (int i2 = 0; i2 < 2; ++i2)
      for (int i0 = 0; i0 < 4; ++i0)
        EXPECT_EQ(ggml_get_f32_nd(v4, i0, 0, i2, i3), static_cast<float>(i0 + 4 * 2 + 12 * i2 + 24 * i3));
  EXPECT_EQ(ggml_nbytes(v4), Span(v4));
}

TEST_F(ViewTest, ViewChainsCollapseToTheFirstNonView) {
  ggml_tensor* rows12 = ggml_view_1d(ctx_, src_, 12, 6 * sizeof(float));  // flat 6..17
  ASSERT_NE(rows12, nullptr);
  ggml_tensor* v = ggml_view_2d(ctx_, rows12, 2, 2, src_->nb[1], 4 * sizeof(float));  // flat 10 + ...
  ASSERT_NE(v, nullptr) << ggml_last_error();
  EXPECT_EQ(v->view_src, src_);
  EXPECT_EQ(v->view_offs, 40u);
  EXPECT_EQ(v->src[0], rows12);
  EXPECT_EQ(v->data, Flat() + 10);
  EXPECT_STREQ(v->name, "src (view) (view)");
  for (int i1 = 0; i1 < 2; ++i1)
    for (int i0 = 0; i0 < 2; ++i0) EXPECT_EQ(ggml_get_f32_nd(v, i0, i1, 0, 0), Src(4 + i0, 1 + i1));
  // A view of a view is bounded by the base tensor's bytes (as in ggml), not by the inner view's:
  // flat 10..23 reaches past rows12 (6..17) but not past src.
  EXPECT_NE(ggml_view_1d(ctx_, rows12, 14, 4 * sizeof(float)), nullptr) << ggml_last_error();
  EXPECT_EQ(ggml_view_1d(ctx_, rows12, 14, 6 * sizeof(float)), nullptr);  // flat 12..25
  EXPECT_TRUE(ErrorMentions(log_, {"56 bytes at offset 48", "96 bytes of 'src'"}));
}

TEST_F(ViewTest, ViewOfATransposedTensor) {
  ggml_tensor* t = ggml_transpose(ctx_, src_);
  ASSERT_NE(t, nullptr);
  // Strided along ne0: the span is one element plus (ne - 1) * nb per dimension = all 96 bytes.
  EXPECT_EQ(ggml_nbytes(t), 96u);
  EXPECT_EQ(ggml_nbytes(t), Span(t));
  ggml_tensor* vt = ggml_view_tensor(ctx_, t);
  ASSERT_NE(vt, nullptr) << ggml_last_error();
  EXPECT_TRUE(ggml_are_same_layout(vt, t));
  EXPECT_EQ(vt->view_src, src_);
  for (int i1 = 0; i1 < 6; ++i1)
    for (int i0 = 0; i0 < 4; ++i0) EXPECT_EQ(ggml_get_f32_nd(vt, i0, i1, 0, 0), Src(i1, i0));
  // A transposed window: rows 1..2 of src, transposed, then viewed as a whole.
  ggml_tensor* rows = ggml_view_2d(ctx_, src_, 6, 2, src_->nb[1], 1 * src_->nb[1]);
  ggml_tensor* rows_t = ggml_transpose(ctx_, rows);
  ASSERT_NE(rows_t, nullptr);
  EXPECT_EQ(ggml_nbytes(rows_t), 48u);  // 4 + 1 * 24 + 5 * 4
  ggml_tensor* v = ggml_view_tensor(ctx_, rows_t);
  ASSERT_NE(v, nullptr) << ggml_last_error();
  EXPECT_EQ(v->view_offs, 24u);
  for (int i1 = 0; i1 < 6; ++i1)
    for (int i0 = 0; i0 < 2; ++i0) EXPECT_EQ(ggml_get_f32_nd(v, i0, i1, 0, 0), Src(i1, 1 + i0));
}

TEST_F(ViewTest, OutOfRangeViewsReturnNull) {
  const size_t used = ggml_used_mem(ctx_);
  EXPECT_EQ(ggml_view_1d(ctx_, src_, 25, 0), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"100 bytes", "96 bytes", "'src'"}));
  EXPECT_EQ(ggml_view_1d(ctx_, src_, 1, 24 * sizeof(float)), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"offset 96", "'src'"}));
  // Wrap-around offsets and strides.
  EXPECT_EQ(ggml_view_1d(ctx_, src_, 4, SIZE_MAX - 3), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"'src'"}));
  EXPECT_EQ(ggml_view_2d(ctx_, src_, 2, 2, SIZE_MAX / 2 + 1, 0), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"reads past the 96 bytes of 'src'"}));
  EXPECT_EQ(ggml_view_3d(ctx_, src_, 1, 2, 2, 8, SIZE_MAX / 4, 0), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"'src'"}));
  // Rows of 6 with a 28-byte stride: 4 + 5 * 4 + 3 * 28 = 108 > 96.
  EXPECT_EQ(ggml_view_2d(ctx_, src_, 6, 4, 28, 0), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"nb [4, 28, 112, 112]", "96 bytes of 'src'"}));
  EXPECT_EQ(ggml_view_1d(ctx_, nullptr, 1, 0), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"NULL"}));
  EXPECT_EQ(ggml_view_tensor(ctx_, nullptr), nullptr);

  // The exact edges fit.
  ggml_tensor* last = ggml_view_1d(ctx_, src_, 1, 23 * sizeof(float));
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(ggml_get_f32_nd(last, 0, 0, 0, 0), Src(5, 3));
  ggml_tensor* empty_at_end = ggml_view_1d(ctx_, src_, 0, 24 * sizeof(float));
  EXPECT_NE(empty_at_end, nullptr) << ggml_last_error();
  ggml_tensor* all_rows = ggml_view_2d(ctx_, src_, 6, 4, 24, 0);
  EXPECT_NE(all_rows, nullptr) << ggml_last_error();
  EXPECT_GT(ggml_used_mem(ctx_), used);  // still usable
}

TEST(ViewNoAllocTest, ViewsOfUnplacedTensorsHaveNullData) {
  ggml_context* ctx = ggml_init({16 * ggml_tensor_overhead(), nullptr, true});
  ASSERT_NE(ctx, nullptr);
  ggml_tensor* a = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 64, 8);
  ggml_tensor* v = ggml_view_2d(ctx, a, 32, 4, a->nb[1], 2 * a->nb[1]);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->data, nullptr);
  EXPECT_EQ(v->view_src, a);
  EXPECT_EQ(v->view_offs, 256u);
  EXPECT_EQ(ggml_used_mem(ctx), 2 * ggml_tensor_overhead());  // a view never has data of its own
  ggml_free(ctx);
}

TEST_F(ViewTest, ReshapeKeepsBytesAndPacksStrides) {
  ggml_tensor* a = Iota4d(ctx_, 2, 3, 4, 5);
  ASSERT_NE(a, nullptr);
  const std::vector<std::array<int64_t, 4>> shapes = {{120, 1, 1, 1}, {6, 20, 1, 1}, {4, 5, 6, 1}, {5, 4, 3, 2}};
  for (const auto& ne : shapes) {
    ggml_tensor* r = nullptr;
    if (ne[1] == 1) r = ggml_reshape_1d(ctx_, a, ne[0]);
    else if (ne[2] == 1) r = ggml_reshape_2d(ctx_, a, ne[0], ne[1]);
    else if (ne[3] == 1) r = ggml_reshape_3d(ctx_, a, ne[0], ne[1], ne[2]);
    else r = ggml_reshape_4d(ctx_, a, ne[0], ne[1], ne[2], ne[3]);
    ASSERT_NE(r, nullptr) << ggml_last_error();
    EXPECT_EQ(r->op, GGML_OP_RESHAPE);
    EXPECT_EQ(r->src[0], a);
    EXPECT_EQ(r->view_src, a);
    EXPECT_EQ(r->data, a->data);
    size_t nb = sizeof(float);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(r->ne[i], ne[i]);
      EXPECT_EQ(r->nb[i], nb);
      nb *= static_cast<size_t>(ne[i]);
    }
    // Element (i0, i1, i2, i3) of the reshape is flat index i0 + ne0 (i1 + ne1 (i2 + ne2 i3)).
    for (int64_t i3 = 0; i3 < ne[3]; ++i3)
      for (int64_t i2 = 0; i2 < ne[2]; ++i2)
        for (int64_t i1 = 0; i1 < ne[1]; ++i1)
          for (int64_t i0 = 0; i0 < ne[0]; ++i0)
            ASSERT_EQ(ggml_get_f32_nd(r, i0, i1, i2, i3),
                      static_cast<float>(i0 + ne[0] * (i1 + ne[1] * (i2 + ne[2] * i3))));
  }
  ggml_tensor* like = ggml_new_tensor_2d(ctx_, GGML_TYPE_F16, 12, 10);
  ggml_tensor* r = ggml_reshape(ctx_, a, like);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->type, GGML_TYPE_F32);  // only the shape of `like` is used
  EXPECT_TRUE(ggml_are_same_shape(r, like));

  EXPECT_EQ(ggml_reshape_2d(ctx_, a, 7, 17), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"[7, 17, 1, 1]", "[2, 3, 4, 5]"}));
  EXPECT_EQ(ggml_reshape_1d(ctx_, ggml_transpose(ctx_, a), 120), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"not contiguous"}));
  EXPECT_EQ(ggml_reshape_1d(ctx_, nullptr, 1), nullptr);
  EXPECT_EQ(ggml_reshape(ctx_, a, nullptr), nullptr);
}

TEST_F(ViewTest, PermuteMovesDimensionIToAxisI) {
  ggml_tensor* a = Iota4d(ctx_, 2, 3, 4, 5);
  ASSERT_NE(a, nullptr);
  std::array<int, 4> axes = {0, 1, 2, 3};
  int n_perms = 0;
  do {
    SCOPED_TRACE(::testing::Message() << axes[0] << axes[1] << axes[2] << axes[3]);
    ggml_tensor* p = ggml_permute(ctx_, a, axes[0], axes[1], axes[2], axes[3]);
    ASSERT_NE(p, nullptr) << ggml_last_error();
    EXPECT_EQ(p->op, GGML_OP_PERMUTE);
    EXPECT_EQ(p->view_src, a);
    EXPECT_EQ(p->data, a->data);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(p->ne[axes[i]], a->ne[i]);
      EXPECT_EQ(p->nb[axes[i]], a->nb[i]);
      EXPECT_EQ(p->op_params[i], axes[i]);
    }
    EXPECT_EQ(ggml_is_permuted(p), axes != (std::array<int, 4>{0, 1, 2, 3}));
    EXPECT_EQ(ggml_nbytes(p), ggml_nbytes(a));
    // Index j of p with j[axes[i]] = idx[i] reads element idx of a.
    int64_t idx[4];
    for (idx[3] = 0; idx[3] < 5; ++idx[3])
      for (idx[2] = 0; idx[2] < 4; ++idx[2])
        for (idx[1] = 0; idx[1] < 3; ++idx[1])
          for (idx[0] = 0; idx[0] < 2; ++idx[0]) {
            int64_t j[4];
            for (int i = 0; i < 4; ++i) j[axes[i]] = idx[i];
            ASSERT_EQ(ggml_get_f32_nd(p, j[0], j[1], j[2], j[3]),
                      static_cast<float>(idx[0] + 2 * (idx[1] + 3 * (idx[2] + 4 * idx[3]))));
          }
    ++n_perms;
  } while (std::next_permutation(axes.begin(), axes.end()));
  EXPECT_EQ(n_perms, 24);

  EXPECT_EQ(ggml_permute(ctx_, a, 0, 0, 1, 2), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"(0, 0, 1, 2)", "not a permutation"}));
  EXPECT_EQ(ggml_permute(ctx_, a, 0, 1, 2, 4), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"(0, 1, 2, 4)"}));
  EXPECT_EQ(ggml_permute(ctx_, a, -1, 1, 2, 3), nullptr);
  EXPECT_EQ(ggml_permute(ctx_, nullptr, 0, 1, 2, 3), nullptr);
}

TEST_F(ViewTest, TransposeSwapsNeAndNbOfTheFirstTwoDims) {
  ggml_tensor* t = ggml_transpose(ctx_, src_);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->op, GGML_OP_TRANSPOSE);
  EXPECT_EQ(t->ne[0], 4);
  EXPECT_EQ(t->ne[1], 6);
  EXPECT_EQ(t->nb[0], 24u);
  EXPECT_EQ(t->nb[1], 4u);
  EXPECT_EQ(t->nb[2], src_->nb[2]);
  EXPECT_TRUE(ggml_is_transposed(t));
  EXPECT_FALSE(ggml_is_contiguous(t));
  for (int i1 = 0; i1 < 6; ++i1)
    for (int i0 = 0; i0 < 4; ++i0) EXPECT_EQ(ggml_get_f32_nd(t, i0, i1, 0, 0), Src(i1, i0));
  ggml_tensor* tt = ggml_transpose(ctx_, t);
  ASSERT_NE(tt, nullptr);
  EXPECT_TRUE(ggml_are_same_layout(tt, src_));
  EXPECT_TRUE(ggml_is_contiguous(tt));
  EXPECT_EQ(tt->view_src, src_);
  EXPECT_EQ(ggml_transpose(ctx_, nullptr), nullptr);
}

// Transposing a permuted view keeps the view's own strides in dims 2 and 3 (it must not fall back
// to the contiguous strides of the new shape).
TEST_F(ViewTest, TransposeOfAPermutedViewKeepsItsOuterStrides) {
  ggml_tensor* a = ggml_new_tensor_3d(ctx_, GGML_TYPE_F32, 2, 3, 4);
  ASSERT_NE(a, nullptr);
  for (int i2 = 0; i2 < 4; ++i2)
    for (int i1 = 0; i1 < 3; ++i1)
      for (int i0 = 0; i0 < 2; ++i0) ggml_set_f32_nd(a, i0, i1, i2, 0, 100.0f * i2 + 10.0f * i1 + i0);
  ggml_tensor* p = ggml_permute(ctx_, a, 0, 2, 1, 3);  // ne [2, 4, 3]
  ggml_tensor* t = ggml_transpose(ctx_, p);          // ne [4, 2, 3]
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->nb[2], p->nb[2]);
  EXPECT_EQ(t->nb[3], p->nb[3]);
  for (int i2 = 0; i2 < 3; ++i2)
    for (int i1 = 0; i1 < 2; ++i1)
      for (int i0 = 0; i0 < 4; ++i0)
        EXPECT_EQ(ggml_get_f32_nd(t, i0, i1, i2, 0), 100.0f * i0 + 10.0f * i2 + i1) << i0 << i1 << i2;
}

}  // namespace
