#include "alloc/tallocr.h"

#include <string>

#include "alloc/buffer.h"
#include "ggml/ggml.h"
#include "gtest/gtest.h"

namespace {

class TallocrTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ggml_log_set(nullptr, nullptr);
    ggml_init_params params = {16 * ggml_tensor_overhead(), nullptr, true};
    ctx_ = ggml_init(params);
  }
  void TearDown() override {
    ggml_free(ctx_);
    ggml_backend_buffer_free(buf_);
  }
  size_t Offset(const ggml_tensor* t) const {
    return static_cast<size_t>(static_cast<const char*>(t->data) -
                               static_cast<const char*>(ggml_backend_buffer_get_base(buf_)));
  }
  ggml_context* ctx_ = nullptr;
  ggml_backend_buffer_t buf_ = nullptr;
};

TEST_F(TallocrTest, PlacesAtAlignedOffsets) {
  buf_ = ggml_backend_cpu_buffer_new(1024);
  ggml_tallocr talloc = ggml_tallocr_new(buf_);
  EXPECT_EQ(talloc.buffer, buf_);
  EXPECT_EQ(talloc.base, ggml_backend_buffer_get_base(buf_));
  EXPECT_EQ(talloc.alignment, 64u);
  EXPECT_EQ(talloc.offset, 0u);

  ggml_tensor* a = ggml_new_tensor_1d(ctx_, GGML_TYPE_F32, 3);     // 12 -> 64
  ggml_tensor* b = ggml_new_tensor_1d(ctx_, GGML_TYPE_F32, 16);    // 64 -> 64
  ggml_tensor* c = ggml_new_tensor_1d(ctx_, GGML_TYPE_F16, 33);    // 66 -> 128
  ggml_tensor* d = ggml_new_tensor_1d(ctx_, GGML_TYPE_Q4_0, 32);   // 18 -> 64
  ASSERT_TRUE(ggml_tallocr_alloc(&talloc, a));
  ASSERT_TRUE(ggml_tallocr_alloc(&talloc, b));
  ASSERT_TRUE(ggml_tallocr_alloc(&talloc, c));
  ASSERT_TRUE(ggml_tallocr_alloc(&talloc, d));
  EXPECT_EQ(Offset(a), 0u);
  EXPECT_EQ(Offset(b), 64u);
  EXPECT_EQ(Offset(c), 128u);
  EXPECT_EQ(Offset(d), 256u);
  EXPECT_EQ(talloc.offset, 320u);
  EXPECT_EQ(a->buffer, buf_);
}

TEST_F(TallocrTest, OutOfSpaceNamesTensorAndSizes) {
  buf_ = ggml_backend_cpu_buffer_new(200);
  ggml_tallocr talloc = ggml_tallocr_new(buf_);
  ggml_tensor* a = ggml_new_tensor_1d(ctx_, GGML_TYPE_F32, 32);  // 128
  ggml_tensor* b = ggml_set_name(ggml_new_tensor_1d(ctx_, GGML_TYPE_F32, 17), "big");  // 68 -> 128
  ggml_tensor* c = ggml_new_tensor_1d(ctx_, GGML_TYPE_F32, 16);  // 64: fits in the 72 left
  ASSERT_TRUE(ggml_tallocr_alloc(&talloc, a));
  EXPECT_FALSE(ggml_tallocr_alloc(&talloc, b));
  const std::string msg = ggml_last_error();
  EXPECT_NE(msg.find("'big'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("needed 128 bytes, 72 bytes left of 200"), std::string::npos) << msg;
  EXPECT_EQ(b->data, nullptr);
  EXPECT_EQ(talloc.offset, 128u);  // unchanged
  ASSERT_TRUE(ggml_tallocr_alloc(&talloc, c));
  EXPECT_EQ(Offset(c), 128u);
}

TEST_F(TallocrTest, RejectsViewsAndForeignData) {
  buf_ = ggml_backend_cpu_buffer_new(1024);
  ggml_tallocr talloc = ggml_tallocr_new(buf_);
  ggml_tensor* a = ggml_new_tensor_1d(ctx_, GGML_TYPE_F32, 8);
  ggml_tensor* v = ggml_view_1d(ctx_, a, 4, 0);
  EXPECT_FALSE(ggml_tallocr_alloc(&talloc, v));
  EXPECT_NE(std::string(ggml_last_error()).find("is a view"), std::string::npos);
  float storage[8];
  a->data = storage;
  EXPECT_FALSE(ggml_tallocr_alloc(&talloc, a));
  EXPECT_EQ(a->data, storage);
  EXPECT_EQ(talloc.offset, 0u);
  EXPECT_FALSE(ggml_tallocr_alloc(&talloc, nullptr));
  EXPECT_FALSE(ggml_tallocr_alloc(nullptr, a));
}

}  // namespace
