#include "alloc/buffer.h"

#include <stdint.h>
#include <string.h>

#include <string>

#include "ggml/ggml.h"
#include "ggml/ops.h"
#include "gtest/gtest.h"

namespace {

ggml_context* NoAllocContext(int n_tensors) {
  ggml_init_params params = {static_cast<size_t>(n_tensors) * ggml_tensor_overhead(), nullptr, true};
  return ggml_init(params);
}

size_t Offset(ggml_backend_buffer_t buf, const ggml_tensor* t) {
  return static_cast<size_t>(static_cast<const char*>(t->data) -
                             static_cast<const char*>(ggml_backend_buffer_get_base(buf)));
}

TEST(BufferTest, NewIsAlignedAndSized) {
  for (size_t size : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{1000}, size_t{1} << 20}) {
    ggml_backend_buffer_t buf = ggml_backend_cpu_buffer_new(size);
    ASSERT_NE(buf, nullptr) << size;
    EXPECT_EQ(ggml_backend_buffer_get_size(buf), size);
    EXPECT_EQ(ggml_backend_buffer_get_alignment(buf), 64u);
    EXPECT_NE(ggml_backend_buffer_get_base(buf), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(ggml_backend_buffer_get_base(buf)) % 64, 0u);
    ggml_backend_buffer_clear(buf, 0xAB);
    const auto* bytes = static_cast<const uint8_t*>(ggml_backend_buffer_get_base(buf));
    for (size_t i = 0; i < size; i += 1 + size / 16) EXPECT_EQ(bytes[i], 0xAB);
    ggml_backend_buffer_free(buf);
  }
  ggml_backend_buffer_free(nullptr);  // no-op
}

TEST(BufferTest, NewFailsWithMessageForImpossibleSize) {
  ggml_log_set(nullptr, nullptr);
  EXPECT_EQ(ggml_backend_cpu_buffer_new(SIZE_MAX - 8), nullptr);
  EXPECT_NE(std::string(ggml_last_error()).find("cannot allocate"), std::string::npos) << ggml_last_error();
  ggml_backend_buffer_t buf = ggml_backend_cpu_buffer_new(128);
  EXPECT_FALSE(ggml_backend_cpu_buffer_realloc(buf, SIZE_MAX - 8));
  EXPECT_EQ(ggml_backend_buffer_get_size(buf), 128u);  // unchanged
  EXPECT_TRUE(ggml_backend_cpu_buffer_realloc(buf, 4096));
  EXPECT_EQ(ggml_backend_buffer_get_size(buf), 4096u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(ggml_backend_buffer_get_base(buf)) % 64, 0u);
  ggml_backend_buffer_free(buf);
  ggml_log_set(nullptr, nullptr);
}

TEST(BufferTest, AllocSizeIsNbytes) {
  ggml_context* ctx = NoAllocContext(4);
  ggml_tensor* f32 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 7, 3);
  ggml_tensor* q4 = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 64, 5);  // 2 blocks of 18 bytes per row
  ggml_tensor* tr = ggml_transpose(ctx, f32);
  EXPECT_EQ(ggml_backend_buffer_get_alloc_size(nullptr, f32), 7u * 3 * 4);
  EXPECT_EQ(ggml_backend_buffer_get_alloc_size(nullptr, q4), 5u * 2 * 18);
  EXPECT_EQ(ggml_backend_buffer_get_alloc_size(nullptr, tr), 7u * 3 * 4);
  ggml_free(ctx);
}

TEST(BufferTest, TensorAllocChecksBounds) {
  ggml_log_set(nullptr, nullptr);
  ggml_context* ctx = NoAllocContext(4);
  ggml_tensor* t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 16);  // 64 bytes
  ggml_tensor* v = ggml_view_1d(ctx, t, 4, 8);
  ggml_backend_buffer_t buf = ggml_backend_cpu_buffer_new(128);
  char* base = static_cast<char*>(ggml_backend_buffer_get_base(buf));

  EXPECT_FALSE(ggml_backend_tensor_alloc(buf, t, base + 65));  // 65 + 64 > 128
  EXPECT_NE(std::string(ggml_last_error()).find("64 bytes at offset 65"), std::string::npos) << ggml_last_error();
  EXPECT_EQ(t->data, nullptr);
  EXPECT_FALSE(ggml_backend_tensor_alloc(buf, t, base - 64));
  EXPECT_FALSE(ggml_backend_tensor_alloc(buf, v, base));  // a view
  EXPECT_NE(std::string(ggml_last_error()).find("view_init"), std::string::npos);
  EXPECT_FALSE(ggml_backend_view_init(v));  // its source has no data yet
  EXPECT_NE(std::string(ggml_last_error()).find("has no data"), std::string::npos);

  ASSERT_TRUE(ggml_backend_tensor_alloc(buf, t, base + 64));  // exactly fits
  EXPECT_EQ(t->data, base + 64);
  EXPECT_EQ(t->buffer, buf);
  ASSERT_TRUE(ggml_backend_tensor_alloc(buf, t, base));  // placing again in the same buffer
  EXPECT_EQ(t->data, base);
  ASSERT_TRUE(ggml_backend_view_init(v));
  EXPECT_EQ(v->data, base + 8);
  EXPECT_EQ(v->buffer, buf);

  ggml_backend_buffer_t other = ggml_backend_cpu_buffer_new(128);
  EXPECT_FALSE(ggml_backend_tensor_alloc(other, t, ggml_backend_buffer_get_base(other)));  // data elsewhere
  EXPECT_EQ(t->data, base);
  ggml_backend_buffer_free(other);
  ggml_backend_buffer_free(buf);
  ggml_free(ctx);
}

TEST(BufferTest, AllocCtxTensorsPacksExactly) {
  ggml_context* ctx = NoAllocContext(8);
  ggml_tensor* a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 10);        // 40 -> 64
  ggml_tensor* b = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 100, 2);    // 400 -> 448
  ggml_tensor* va = ggml_view_1d(ctx, a, 5, 20);                      // view: no bytes
  ggml_tensor* c = ggml_new_tensor_1d(ctx, GGML_TYPE_Q8_0, 32);       // 34 -> 64
  ggml_tensor* e = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 0);         // 0 -> 0
  float external[4] = {1, 2, 3, 4};
  ggml_tensor* x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
  x->data = external;  // already has data: left alone

  ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx);
  ASSERT_NE(buf, nullptr) << ggml_last_error();
  EXPECT_EQ(ggml_backend_buffer_get_size(buf), 64u + 448 + 64);
  EXPECT_EQ(Offset(buf, a), 0u);
  EXPECT_EQ(Offset(buf, b), 64u);
  EXPECT_EQ(Offset(buf, c), 512u);
  EXPECT_EQ(Offset(buf, e), 576u);
  EXPECT_EQ(static_cast<char*>(va->data), static_cast<char*>(a->data) + 20);
  EXPECT_EQ(va->buffer, buf);
  EXPECT_EQ(x->data, external);
  EXPECT_EQ(x->buffer, nullptr);
  for (ggml_tensor* t : {a, b, c, e}) EXPECT_EQ(t->buffer, buf);
  ggml_backend_buffer_free(buf);
  ggml_free(ctx);
}

TEST(BufferTest, AllocCtxTensorsErrors) {
  ggml_log_set(nullptr, nullptr);
  EXPECT_EQ(ggml_backend_alloc_ctx_tensors(nullptr), nullptr);

  ggml_init_params params = {1024, nullptr, false};
  ggml_context* arena = ggml_init(params);
  ggml_new_tensor_1d(arena, GGML_TYPE_F32, 4);
  EXPECT_EQ(ggml_backend_alloc_ctx_tensors(arena), nullptr);
  EXPECT_NE(std::string(ggml_last_error()).find("not no_alloc"), std::string::npos) << ggml_last_error();
  ggml_free(arena);

  ggml_context* empty = NoAllocContext(1);
  EXPECT_EQ(ggml_backend_alloc_ctx_tensors(empty), nullptr);
  EXPECT_NE(std::string(ggml_last_error()).find("no tensor"), std::string::npos) << ggml_last_error();
  ggml_free(empty);

  // A view of a tensor of another no_alloc context that never got data: the whole call fails and
  // nothing is left pointing into the freed buffer.
  ggml_context* other = NoAllocContext(1);
  ggml_tensor* far = ggml_new_tensor_1d(other, GGML_TYPE_F32, 8);
  ggml_context* ctx = NoAllocContext(2);
  ggml_tensor* t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
  ggml_tensor* v = ggml_view_1d(ctx, far, 2, 0);
  EXPECT_EQ(ggml_backend_alloc_ctx_tensors(ctx), nullptr);
  EXPECT_EQ(t->data, nullptr);
  EXPECT_EQ(t->buffer, nullptr);
  EXPECT_EQ(v->data, nullptr);
  ggml_free(ctx);
  ggml_free(other);
}

}  // namespace
