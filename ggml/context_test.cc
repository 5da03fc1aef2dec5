// The context arena: exact byte accounting, no_alloc, caller buffers, running out of space,
// names and iteration. Expected sizes are recomputed here from ggml's layout rule (each object is
// a GGML_OBJECT_SIZE header followed by its payload padded to GGML_MEM_ALIGN; a tensor's payload
// is the struct followed by its data), not read back from the library.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <thread>
#include <vector>

#include "ggml/ggml.h"
#include "ggml/graph.h"
#include "ggml/test_util.h"
#include "gtest/gtest.h"

// Under AddressSanitizer an impossible allocation must return NULL (as glibc does) rather than
// abort the process, so that ggml_init's error path can be tested.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }

namespace {

using ggml_test::ErrorMentions;
using ggml_test::LogCapture;

size_t Pad16(size_t n) { return (n + 15) / 16 * 16; }

struct Shape {
  ggml_type type;
  std::vector<int64_t> ne;
};

// Data bytes of a contiguous tensor, from the block layouts (ggml-common.h) rather than the
// traits table: bytes per block and elements per block.
size_t ExpectedDataBytes(const Shape& s) {
  size_t block_bytes = 0;
  int64_t block_elems = 1;
  switch (s.type) {
    case GGML_TYPE_F32: case GGML_TYPE_I32: block_bytes = 4; break;
    case GGML_TYPE_F16: case GGML_TYPE_I16: block_bytes = 2; break;
    case GGML_TYPE_I8: block_bytes = 1; break;
    case GGML_TYPE_Q4_0: block_bytes = 2 + 16; block_elems = 32; break;
    case GGML_TYPE_Q5_1: block_bytes = 2 + 2 + 4 + 16; block_elems = 32; break;
    case GGML_TYPE_Q8_0: block_bytes = 2 + 32; block_elems = 32; break;
    default: ADD_FAILURE() << "type not covered by the test"; break;
  }
  size_t n = 1;
  for (size_t i = 0; i < s.ne.size(); ++i) n *= static_cast<size_t>(i == 0 ? s.ne[0] / block_elems : s.ne[i]);
  return n * block_bytes;
}

ggml_tensor* NewTensor(ggml_context* ctx, const Shape& s) {
  return ggml_new_tensor(ctx, s.type, static_cast<int>(s.ne.size()), s.ne.data());
}

const std::vector<Shape>& MixedShapes() {
  static const std::vector<Shape> kShapes = {
      {GGML_TYPE_F32, {7}},          {GGML_TYPE_F16, {3, 5}},        {GGML_TYPE_Q4_0, {64, 3}},
      {GGML_TYPE_Q8_0, {32, 2, 2}},  {GGML_TYPE_I32, {1}},           {GGML_TYPE_F32, {5, 4, 3, 2}},
      {GGML_TYPE_F16, {0}},          {GGML_TYPE_I8, {13, 1, 1, 3}},  {GGML_TYPE_Q5_1, {96, 1}},
      {GGML_TYPE_I16, {9, 9}},       {GGML_TYPE_F32, {384, 6}},      {GGML_TYPE_F16, {1, 1, 1, 1}},
  };
  return kShapes;
}

class ContextTest : public ::testing::Test {
 protected:
  LogCapture log_;
};

TEST_F(ContextTest, TensorOverheadIsGgmlsOnLp64) {
  // ggml's ggml_tensor_overhead() is 368 on LP64 (whisper_cpp_facts.md section 10); whisper.cpp
  // sizes no_alloc contexts as n_tensors * ggml_tensor_overhead().
  static_assert(sizeof(void*) == 8, "the 368 below is the LP64 value");
  EXPECT_EQ(ggml_tensor_overhead(), 368u);
  EXPECT_EQ(ggml_tensor_overhead(), GGML_OBJECT_SIZE + sizeof(ggml_tensor));
  EXPECT_EQ(sizeof(ggml_tensor) % GGML_MEM_ALIGN, 0u);
}

TEST_F(ContextTest, UsedMemIsTheExactSumOfObjects) {
  ggml_context* ctx = ggml_init({1 << 20, nullptr, false});
  ASSERT_NE(ctx, nullptr);
  EXPECT_EQ(ggml_used_mem(ctx), 0u);
  EXPECT_EQ(ggml_get_mem_size(ctx), size_t{1} << 20);
  const char* base = static_cast<const char*>(ggml_get_mem_buffer(ctx));
  size_t expected_used = 0;
  std::vector<ggml_tensor*> tensors;
  for (const Shape& s : MixedShapes()) {
    ggml_tensor* t = NewTensor(ctx, s);
    ASSERT_NE(t, nullptr) << ggml_last_error();
    const size_t nbytes = ExpectedDataBytes(s);
    // Header, then the struct at a 16-aligned offset, then the data right after the struct.
    EXPECT_EQ(reinterpret_cast<const char*>(t), base + expected_used + GGML_OBJECT_SIZE);
    EXPECT_EQ(static_cast<char*>(t->data), reinterpret_cast<char*>(t) + sizeof(ggml_tensor));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data) % GGML_MEM_ALIGN, 0u);
    expected_used += GGML_OBJECT_SIZE + Pad16(sizeof(ggml_tensor) + nbytes);
    EXPECT_EQ(ggml_used_mem(ctx), expected_used);
    EXPECT_EQ(ggml_nbytes(t), nbytes);
    EXPECT_EQ(t->type, s.type);
    EXPECT_EQ(t->op, GGML_OP_NONE);
    EXPECT_EQ(t->view_src, nullptr);
    for (int i = 0; i < GGML_MAX_DIMS; ++i) {
      EXPECT_EQ(t->ne[i], i < static_cast<int>(s.ne.size()) ? s.ne[i] : 1);
    }
    EXPECT_TRUE(ggml_is_contiguous(t));
    tensors.push_back(t);
  }
  // Fill every tensor with its own byte, then check none was overwritten by a later one.
  for (size_t i = 0; i < tensors.size(); ++i) memset(tensors[i]->data, static_cast<int>(i + 1), ggml_nbytes(tensors[i]));
  for (size_t i = 0; i < tensors.size(); ++i) {
    const unsigned char* p = static_cast<const unsigned char*>(tensors[i]->data);
    for (size_t j = 0; j < ggml_nbytes(tensors[i]); ++j) ASSERT_EQ(p[j], i + 1) << "tensor " << i;
    EXPECT_EQ(tensors[i]->type, MixedShapes()[i].type) << "struct " << i << " overwritten";
  }
  EXPECT_LE(expected_used, ggml_get_mem_size(ctx));
  EXPECT_TRUE(log_.messages().empty());
  ggml_free(ctx);
}

TEST_F(ContextTest, NoAllocUsesOnlyMetadata) {
  constexpr int kN = 9;
  // Exactly the metadata of kN tensors, as whisper.cpp sizes its weight contexts.
  ggml_context* ctx = ggml_init({kN * ggml_tensor_overhead(), nullptr, true});
  ASSERT_NE(ctx, nullptr);
  EXPECT_TRUE(ggml_get_no_alloc(ctx));
  for (int i = 0; i < kN; ++i) {
    // Big shapes: with data these would need gigabytes.
    ggml_tensor* t = ggml_new_tensor_2d(ctx, i % 2 ? GGML_TYPE_F16 : GGML_TYPE_Q4_0, 4096 * (i + 1), 8192);
    ASSERT_NE(t, nullptr) << "tensor " << i << ": " << ggml_last_error();
    EXPECT_EQ(t->data, nullptr);
    EXPECT_EQ(ggml_used_mem(ctx), (i + 1) * ggml_tensor_overhead());
  }
  EXPECT_EQ(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"needed 368 bytes", "0 bytes left"}));
  ggml_free(ctx);
}

TEST_F(ContextTest, SetNoAllocSwitchesPerTensor) {
  ggml_context* ctx = ggml_init({4096, nullptr, true});
  ASSERT_NE(ctx, nullptr);
  ggml_tensor* meta = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 100);
  ASSERT_NE(meta, nullptr);
  EXPECT_EQ(meta->data, nullptr);
  ggml_set_no_alloc(ctx, false);
  EXPECT_FALSE(ggml_get_no_alloc(ctx));
  ggml_tensor* with_data = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 100);
  ASSERT_NE(with_data, nullptr);
  EXPECT_NE(with_data->data, nullptr);
  EXPECT_EQ(ggml_used_mem(ctx), ggml_tensor_overhead() + ggml_tensor_overhead() + Pad16(400));
  ggml_free(ctx);
}

TEST_F(ContextTest, CallerBufferIsUsedAndNeverFreed) {
  constexpr size_t kSize = 64 * 1024;
  char* buffer = static_cast<char*>(aligned_alloc(64, kSize));
  ASSERT_NE(buffer, nullptr);
  memset(buffer, 0xAB, kSize);
  ggml_context* ctx = ggml_init({kSize, buffer, false});
  ASSERT_NE(ctx, nullptr);
  EXPECT_EQ(ggml_get_mem_buffer(ctx), buffer);
  EXPECT_EQ(ggml_get_mem_size(ctx), kSize);
  for (const Shape& s : MixedShapes()) {
    ggml_tensor* t = NewTensor(ctx, s);
    ASSERT_NE(t, nullptr);
    const char* tp = reinterpret_cast<const char*>(t);
    EXPECT_GE(tp, buffer);
    EXPECT_LE(tp + sizeof(ggml_tensor), buffer + kSize);
    const char* data = static_cast<const char*>(t->data);
    EXPECT_GE(data, buffer);
    EXPECT_LE(data + ggml_nbytes(t), buffer + ggml_used_mem(ctx));
  }
  const size_t used = ggml_used_mem(ctx);
  for (size_t i = used; i < kSize; ++i) ASSERT_EQ(static_cast<unsigned char>(buffer[i]), 0xAB) << "wrote past used_mem at " << i;
  ggml_free(ctx);
  // Still ours: writing and reading it after ggml_free would be a use-after-free (and the free()
  // below a double free) under AddressSanitizer if ggml_free had released it.
  memset(buffer, 0x5A, kSize);
  EXPECT_EQ(buffer[used], 0x5A);
  free(buffer);
}

TEST_F(ContextTest, CallerBufferMustBeAligned) {
  alignas(64) static char buffer[1024];
  EXPECT_EQ(ggml_init({512, buffer + 8, false}), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"not aligned to 16 bytes"}));
  EXPECT_EQ(ggml_init({500, buffer, false}), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"mem_size 500", "multiple of 16"}));
  ggml_context* ctx = ggml_init({512, buffer + 16, false});
  ASSERT_NE(ctx, nullptr);
  ggml_free(ctx);
}

TEST_F(ContextTest, OutOfSpaceReturnsNullAndStaysUsable) {
  ggml_context* ctx = ggml_init({4096, nullptr, false});
  ASSERT_NE(ctx, nullptr);
  ggml_tensor* first = ggml_set_name(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 512), "first");
  ASSERT_NE(first, nullptr);
  const size_t first_size = GGML_OBJECT_SIZE + sizeof(ggml_tensor) + 512 * 4;  // 2416
  ASSERT_EQ(ggml_used_mem(ctx), first_size);
  const size_t left = 4096 - first_size;  // 1680

  EXPECT_EQ(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 512), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"needed " + std::to_string(first_size) + " bytes",
                                   std::to_string(left) + " bytes left", "4096"}));
  EXPECT_EQ(ggml_used_mem(ctx), first_size);

  // A smaller tensor still fits: 32 + 336 + 1200 = 1568 <= 1680.
  ggml_tensor* second = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 300);
  ASSERT_NE(second, nullptr) << ggml_last_error();
  ggml_set_name(second, "second");
  EXPECT_EQ(ggml_used_mem(ctx), first_size + 1568);
  // 112 bytes are left: not even the metadata of one tensor.
  EXPECT_EQ(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 0), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"needed 368 bytes", "112 bytes left"}));
  EXPECT_EQ(ggml_get_tensor(ctx, "first"), first);
  EXPECT_EQ(ggml_get_tensor(ctx, "second"), second);
  ggml_free(ctx);
}

TEST_F(ContextTest, ImpossibleSizesFailWithAMessage) {
  EXPECT_EQ(ggml_init({SIZE_MAX, nullptr, false}), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"ggml_init", std::to_string(SIZE_MAX)}));
  // Passes the sanity check, but no machine has 4 EiB.
  EXPECT_EQ(ggml_init({size_t{1} << 62, nullptr, false}), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"cannot allocate", std::to_string(size_t{1} << 62)}));
}

TEST_F(ContextTest, ZeroSizeContextHoldsNothing) {
  ggml_context* ctx = ggml_init({0, nullptr, false});
  ASSERT_NE(ctx, nullptr);
  EXPECT_EQ(ggml_get_mem_size(ctx), size_t{GGML_MEM_ALIGN});
  EXPECT_EQ(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"16 bytes left"}));
  ggml_free(ctx);
  ggml_free(nullptr);  // a no-op
}

TEST_F(ContextTest, BadShapesFailWithoutUsingSpace) {
  ggml_context* ctx = ggml_init({1 << 16, nullptr, false});
  ASSERT_NE(ctx, nullptr);
  const int64_t ne4[4] = {4, 4, 4, 4};
  EXPECT_EQ(ggml_new_tensor(ctx, static_cast<ggml_type>(5), 1, ne4), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"unknown ggml_type 5"}));
  EXPECT_EQ(ggml_new_tensor(ctx, GGML_TYPE_F32, 0, ne4), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"n_dims 0"}));
  EXPECT_EQ(ggml_new_tensor(ctx, GGML_TYPE_F32, 5, ne4), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"n_dims 5"}));
  EXPECT_EQ(ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, -2), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"ne[1] = -2"}));
  EXPECT_EQ(ggml_new_tensor_1d(ctx, GGML_TYPE_Q4_0, 33), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"ne[0] = 33", "q4_0", "32"}));
  // 2^64 elements of 4 bytes overflow size_t instead of wrapping to a small allocation.
  EXPECT_EQ(ggml_new_tensor_4d(ctx, GGML_TYPE_F32, int64_t{1} << 16, int64_t{1} << 16, int64_t{1} << 16,
                               int64_t{1} << 16),
            nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"overflows"}));
  EXPECT_EQ(ggml_new_tensor_1d(nullptr, GGML_TYPE_F32, 1), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"context is NULL"}));
  EXPECT_EQ(ggml_used_mem(ctx), 0u);
  ggml_free(ctx);
}

TEST_F(ContextTest, ResetDropsEveryObject) {
  ggml_context* ctx = ggml_init({1 << 16, nullptr, false});
  ASSERT_NE(ctx, nullptr);
  ggml_tensor* a = ggml_set_name(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 100), "a");
  ASSERT_NE(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 100), nullptr);
  ggml_reset(ctx);
  EXPECT_EQ(ggml_used_mem(ctx), 0u);
  EXPECT_EQ(ggml_get_first_tensor(ctx), nullptr);
  EXPECT_EQ(ggml_get_tensor(ctx, "a"), nullptr);
  // The arena is reused from its start.
  EXPECT_EQ(ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 8), a);
  EXPECT_EQ(ggml_used_mem(ctx), ggml_tensor_overhead() + 16);
  ggml_free(ctx);
}

TEST_F(ContextTest, TensorsByNameAndInCreationOrder) {
  ggml_context* ctx = ggml_init({1 << 20, nullptr, false});
  ASSERT_NE(ctx, nullptr);
  std::vector<ggml_tensor*> created;
  for (int layer = 0; layer < 4; ++layer) {
    ggml_tensor* w = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 64, 64);
    ASSERT_EQ(ggml_format_name(w, "encoder.blocks.%d.attn.query.weight", layer), w);
    created.push_back(w);
    // A graph between tensors: iteration must skip it.
    ASSERT_NE(ggml_new_graph_custom(ctx, 8), nullptr);
  }
  EXPECT_STREQ(ggml_get_name(created[2]), "encoder.blocks.2.attn.query.weight");
  for (int layer = 0; layer < 4; ++layer) {
    const std::string name = "encoder.blocks." + std::to_string(layer) + ".attn.query.weight";
    EXPECT_EQ(ggml_get_tensor(ctx, name.c_str()), created[layer]);
  }
  ggml_clear_error();
  EXPECT_EQ(ggml_get_tensor(ctx, "encoder.blocks.4.attn.query.weight"), nullptr);
  EXPECT_EQ(ggml_get_tensor(ctx, "encoder.blocks.1"), nullptr);  // a prefix is not a match
  EXPECT_STREQ(ggml_last_error(), "") << "absence is not an error";

  std::vector<ggml_tensor*> iterated;
  for (ggml_tensor* t = ggml_get_first_tensor(ctx); t != nullptr; t = ggml_get_next_tensor(ctx, t)) {
    iterated.push_back(t);
  }
  EXPECT_EQ(iterated, created);
  ggml_free(ctx);
}

TEST_F(ContextTest, NamesAreTruncatedNotOverflowed) {
  ggml_context* ctx = ggml_init({1 << 12, nullptr, false});
  ASSERT_NE(ctx, nullptr);
  ggml_tensor* t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
  const std::string long_name(100, 'x');
  ggml_set_name(t, long_name.c_str());
  EXPECT_EQ(std::string(ggml_get_name(t)), long_name.substr(0, GGML_MAX_NAME - 1));
  ggml_format_name(t, "%s/%d/%s", "prefix", 12345, long_name.c_str());
  EXPECT_EQ(std::string(ggml_get_name(t)), ("prefix/12345/" + long_name).substr(0, GGML_MAX_NAME - 1));
  ggml_format_name(t, "%05.1f|%c|%x", 3.14159, 'z', 255u);
  EXPECT_STREQ(ggml_get_name(t), "003.1|z|ff");
  EXPECT_EQ(ggml_set_name(nullptr, "x"), nullptr);
  EXPECT_EQ(ggml_format_name(nullptr, "%d", 1), nullptr);
  ggml_free(ctx);
}

TEST_F(ContextTest, ElementAccessByType) {
  ggml_context* ctx = ggml_init({1 << 14, nullptr, false});
  ASSERT_NE(ctx, nullptr);
  ggml_tensor* f32 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3, 4, 2);
  ggml_tensor* f16 = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 5, 2);
  ggml_tensor* i32 = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 6);
  ggml_set_f32_nd(f32, 2, 3, 1, 0, 1.25f);
  float stored;
  memcpy(&stored, static_cast<char*>(f32->data) + (2 + 3 * 3 + 1 * 12) * 4, 4);
  EXPECT_EQ(stored, 1.25f);
  EXPECT_EQ(ggml_get_f32_nd(f32, 2, 3, 1, 0), 1.25f);
  ggml_set_f32_nd(f16, 4, 1, 0, 0, 0.1f);  // rounds to the nearest half: 0x2E66
  uint16_t half;
  memcpy(&half, static_cast<char*>(f16->data) + (4 + 5) * 2, 2);
  EXPECT_EQ(half, 0x2E66);
  EXPECT_EQ(ggml_get_f32_nd(f16, 4, 1, 0, 0), 0.0999755859375f);
  ggml_set_i32_1d(i32, 5, -7);
  EXPECT_EQ(ggml_get_i32_1d(i32, 5), -7);
  EXPECT_EQ(static_cast<const int32_t*>(i32->data)[5], -7);
  EXPECT_EQ(ggml_get_f32_nd(i32, 5, 0, 0, 0), -7.0f);
  // 2^24 + 1 has no float: only the I32 accessors keep it.
  ggml_tensor* i32_2d = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 3, 2);
  ggml_set_i32_nd(i32_2d, 2, 1, 0, 0, 16777217);
  EXPECT_EQ(static_cast<const int32_t*>(i32_2d->data)[2 + 3], 16777217);
  EXPECT_EQ(ggml_get_i32_nd(i32_2d, 2, 1, 0, 0), 16777217);
  EXPECT_EQ(ggml_get_f32_nd(i32_2d, 2, 1, 0, 0), 16777216.0f);
  EXPECT_EQ(ggml_get_i32_nd(f32, 0, 0, 0, 0), 0);
  EXPECT_NE(std::string(ggml_last_error()).find("ggml_get_i32_nd: type f32 is not supported"), std::string::npos)
      << ggml_last_error();
  ggml_free(ctx);
}

TEST_F(ContextTest, LastErrorIsPerThread) {
  ggml_set_error("main thread error %d", 1);
  std::string seen_in_thread = "unset";
  std::thread([&] {
    seen_in_thread = ggml_last_error();
    ggml_set_error("worker error");
  }).join();
  EXPECT_EQ(seen_in_thread, "");
  EXPECT_STREQ(ggml_last_error(), "main thread error 1");
  ASSERT_EQ(log_.messages().size(), 2u);
  EXPECT_EQ(log_.messages()[1], "worker error");
  ggml_clear_error();
  EXPECT_STREQ(ggml_last_error(), "");
}

TEST_F(ContextTest, DupTensorCopiesShapeNotData) {
  ggml_context* ctx = ggml_init({1 << 14, nullptr, false});
  ASSERT_NE(ctx, nullptr);
  ggml_tensor* a = ggml_new_tensor_3d(ctx, GGML_TYPE_Q8_0, 64, 3, 2);
  ggml_tensor* b = ggml_dup_tensor(ctx, a);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(ggml_are_same_layout(a, b));
  EXPECT_NE(a->data, b->data);
  EXPECT_EQ(ggml_nbytes(b), 2u * 34 * 3 * 2);
  EXPECT_EQ(ggml_dup_tensor(ctx, nullptr), nullptr);
  EXPECT_TRUE(ErrorMentions(log_, {"NULL"}));
  ggml_free(ctx);
}

}  // namespace
