// The type traits table against ggml's block layouts (ggml/src/ggml-common.h): sizes are
// recomputed here from the fields of each block struct, not copied from types.cc.
#include "ggml/types.h"

#include <stdint.h>
#include <string.h>

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace {

// The block structs as ggml-common.h lays them out (fp16 scale d, optional fp16 m or s, the
// 5th-bit plane qh, packed quants). sizeof() of these is the reference type size.
struct BlockQ4_0 { ggml_fp16_t d; uint8_t qs[GGML_QK / 2]; };
struct BlockQ4_1 { ggml_fp16_t d, m; uint8_t qs[GGML_QK / 2]; };
struct BlockQ5_0 { ggml_fp16_t d; uint8_t qh[4]; uint8_t qs[GGML_QK / 2]; };
struct BlockQ5_1 { ggml_fp16_t d, m; uint8_t qh[4]; uint8_t qs[GGML_QK / 2]; };
struct BlockQ8_0 { ggml_fp16_t d; int8_t qs[GGML_QK]; };
struct BlockQ8_1 { ggml_fp16_t d, s; int8_t qs[GGML_QK]; };

struct Expected {
  ggml_type type;
  int id;  // the numeric id stored in model files (ggml.h's enum ggml_type)
  const char* name;
  int64_t blck;
  size_t size;
  bool quantized;
};

const Expected kExpected[] = {
    {GGML_TYPE_F32, 0, "f32", 1, sizeof(float), false},
    {GGML_TYPE_F16, 1, "f16", 1, sizeof(uint16_t), false},
    {GGML_TYPE_Q4_0, 2, "q4_0", 32, sizeof(BlockQ4_0), true},
    {GGML_TYPE_Q4_1, 3, "q4_1", 32, sizeof(BlockQ4_1), true},
    {GGML_TYPE_Q5_0, 6, "q5_0", 32, sizeof(BlockQ5_0), true},
    {GGML_TYPE_Q5_1, 7, "q5_1", 32, sizeof(BlockQ5_1), true},
    {GGML_TYPE_Q8_0, 8, "q8_0", 32, sizeof(BlockQ8_0), true},
    {GGML_TYPE_Q8_1, 9, "q8_1", 32, sizeof(BlockQ8_1), true},
    {GGML_TYPE_I8, 24, "i8", 1, sizeof(int8_t), false},
    {GGML_TYPE_I16, 25, "i16", 1, sizeof(int16_t), false},
    {GGML_TYPE_I32, 26, "i32", 1, sizeof(int32_t), false},
};

TEST(TypesTest, BlockStructsHaveGgmlSizes) {
  // The sizes whisper.cpp's files imply (whisper_cpp_facts.md section 9): a layout mistake in
  // the structs above would make every other check here meaningless.
  EXPECT_EQ(sizeof(BlockQ4_0), 18u);
  EXPECT_EQ(sizeof(BlockQ4_1), 20u);
  EXPECT_EQ(sizeof(BlockQ5_0), 22u);
  EXPECT_EQ(sizeof(BlockQ5_1), 24u);
  EXPECT_EQ(sizeof(BlockQ8_0), 34u);
  EXPECT_EQ(sizeof(BlockQ8_1), 36u);
}

TEST(TypesTest, TraitsOfEveryKnownType) {
  std::set<std::string> names;
  for (const Expected& e : kExpected) {
    SCOPED_TRACE(e.name);
    EXPECT_EQ(static_cast<int>(e.type), e.id);
    const ggml_type_traits* t = ggml_type_traits_of(e.type);
    ASSERT_NE(t, nullptr);
    EXPECT_STREQ(t->type_name, e.name);
    EXPECT_EQ(t->blck_size, e.blck);
    EXPECT_EQ(t->type_size, e.size);
    EXPECT_EQ(t->is_quantized, e.quantized);
    // The shorthands agree with the table.
    EXPECT_STREQ(ggml_type_name(e.type), e.name);
    EXPECT_EQ(ggml_blck_size(e.type), e.blck);
    EXPECT_EQ(ggml_type_size(e.type), e.size);
    EXPECT_EQ(ggml_is_quantized(e.type), e.quantized);
    EXPECT_TRUE(names.insert(t->type_name).second) << "duplicate name";
  }
}

TEST(TypesTest, UnknownIdsHaveNoTraits) {
  std::set<int> known;
  for (const Expected& e : kExpected) known.insert(e.id);
  int n_unknown = 0;
  for (int id = -3; id < GGML_TYPE_COUNT + 40; ++id) {
    if (known.count(id)) continue;
    SCOPED_TRACE(id);
    const ggml_type type = static_cast<ggml_type>(id);
    EXPECT_EQ(ggml_type_traits_of(type), nullptr);
    EXPECT_EQ(ggml_blck_size(type), 0);
    EXPECT_EQ(ggml_type_size(type), 0u);
    EXPECT_STREQ(ggml_type_name(type), "unknown");
    EXPECT_FALSE(ggml_is_quantized(type));
    EXPECT_FALSE(ggml_row_size_ok(type, 32));
    EXPECT_EQ(ggml_row_size(type, 32), 0u);
    ++n_unknown;
  }
  // -3..-1, the gaps 4, 5 and 10..23, and GGML_TYPE_COUNT.. +39.
  EXPECT_EQ(n_unknown, 3 + 2 + 14 + 40);
  EXPECT_EQ(ggml_type_traits_of(static_cast<ggml_type>(1 << 30)), nullptr);
}

TEST(TypesTest, RowSize) {
  for (const Expected& e : kExpected) {
    SCOPED_TRACE(e.name);
    for (int64_t n_blocks : {0, 1, 2, 12, 48, 1601}) {
      const int64_t ne = n_blocks * e.blck;
      EXPECT_TRUE(ggml_row_size_ok(e.type, ne));
      EXPECT_EQ(ggml_row_size(e.type, ne), static_cast<size_t>(n_blocks) * e.size);
    }
    EXPECT_FALSE(ggml_row_size_ok(e.type, -e.blck));
    if (e.blck > 1) {
      EXPECT_FALSE(ggml_row_size_ok(e.type, e.blck + 1));
      EXPECT_FALSE(ggml_row_size_ok(e.type, e.blck - 1));
    }
  }
  // Whisper tiny shapes: a 384-wide row, the 51864-entry token embedding's 384-wide rows.
  EXPECT_EQ(ggml_row_size(GGML_TYPE_F16, 384), 768u);
  EXPECT_EQ(ggml_row_size(GGML_TYPE_Q4_0, 384), 12u * 18u);
  EXPECT_EQ(ggml_row_size(GGML_TYPE_Q8_0, 1536), 48u * 34u);
}

}  // namespace
