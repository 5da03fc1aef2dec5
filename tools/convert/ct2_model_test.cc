#include "tools/convert/ct2_model.h"

#include <stdio.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/convert/ct2_test_util.h"

namespace ggml_whisper::convert {
namespace {

using ::testing::HasSubstr;

// The error message of a StatusOr as std::string (gtest prints absl::string_view char by char).
template <typename T>
std::string Msg(const absl::StatusOr<T>& s) {
  return std::string(s.status().message());
}

// A model.bin spelled out byte by byte (independent of Ct2FileBuilder): version 6, spec "W",
// revision 3, one int16 scalar "h" = 6, one float16 [2] "b" = {1.0, -2.0}, alias "a" -> "b".
// clang-format off
const std::vector<uint8_t> kHandWritten = {
    6, 0, 0, 0,                    // binary version
    2, 0, 'W', 0,                  // spec name, length counts the NUL
    3, 0, 0, 0,                    // spec revision
    2, 0, 0, 0,                    // 2 variables
    2, 0, 'b', 0,                  // name "b"
    1,                             // rank 1
    2, 0, 0, 0,                    // dim 2
    4,                             // float16
    4, 0, 0, 0,                    // 4 bytes
    0x00, 0x3C, 0x00, 0xC0,        // 1.0, -2.0 as binary16
    2, 0, 'h', 0,                  // name "h"
    0,                             // rank 0
    2,                             // int16
    2, 0, 0, 0,                    // 2 bytes
    6, 0,                          // 6
    1, 0, 0, 0,                    // 1 alias
    2, 0, 'a', 0, 2, 0, 'b', 0,    // "a" -> "b"
};
// clang-format on

TEST(Ct2ModelTest, ParsesHandWrittenImage) {
  absl::StatusOr<Ct2Model> m = Ct2Model::Parse(kHandWritten, "hand");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->binary_version(), 6u);
  EXPECT_EQ(m->spec_name(), "W");
  EXPECT_EQ(m->spec_revision(), 3u);
  ASSERT_EQ(m->variables().size(), 2u);
  const Ct2Variable* b = m->Find("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->shape, std::vector<int64_t>({2}));
  EXPECT_EQ(b->dtype, Ct2DType::kFloat16);
  EXPECT_EQ(b->nbytes, 4u);
  EXPECT_EQ(b->nelements(), 2);
  EXPECT_EQ(std::vector<uint8_t>(b->data, b->data + 4),
            std::vector<uint8_t>({0x00, 0x3C, 0x00, 0xC0}));
  EXPECT_EQ(m->Find("a"), b);  // alias resolves to the same variable
  EXPECT_EQ(m->Find("c"), nullptr);
  EXPECT_EQ(*m->GetIntScalar("h"), 6);
  EXPECT_EQ(m->aliases().at("a"), "b");
}

TEST(Ct2ModelTest, BuilderRoundTripWithAllDtypes) {
  Ct2FileBuilder builder("WhisperSpec", 3);
  builder.AddTyped<float>("f32", {2, 3}, 0, {1, 2, 3, 4, 5, 6})
      .AddTyped<int8_t>("i8", {}, 1, {-5})
      .AddTyped<int16_t>("i16", {}, 2, {-300})
      .AddTyped<int32_t>("i32", {}, 3, {100000})
      .AddTyped<uint16_t>("f16", {1, 1, 3}, 4, {0x3C00, 0x4000, 0x4200})
      .AddTyped<uint16_t>("bf16", {2}, 5, {0x3F80, 0x4000})
      .Alias("tied", "f32");
  absl::StatusOr<Ct2Model> m = Ct2Model::Parse(builder.Build(), "synthetic");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(*m->GetIntScalar("i8"), -5);
  EXPECT_EQ(*m->GetIntScalar("i16"), -300);
  EXPECT_EQ(*m->GetIntScalar("i32"), 100000);
  absl::StatusOr<const Ct2Variable*> f32 = m->Get("tied", {2, 3});
  ASSERT_TRUE(f32.ok()) << f32.status();
  EXPECT_EQ((*f32)->name, "f32");
  float last;
  memcpy(&last, (*f32)->data + 20, 4);
  EXPECT_EQ(last, 6.0f);
  EXPECT_EQ(m->Find("f16")->shape, std::vector<int64_t>({1, 1, 3}));
  EXPECT_EQ(m->Find("bf16")->dtype, Ct2DType::kBFloat16);
}

TEST(Ct2ModelTest, DataSurvivesMove) {
  absl::StatusOr<Ct2Model> m = Ct2Model::Parse(kHandWritten, "hand");
  ASSERT_TRUE(m.ok());
  Ct2Model moved = std::move(*m);
  EXPECT_EQ(moved.Find("b")->data[1], 0x3C);
}

TEST(Ct2ModelTest, EveryTruncationIsAnError) {
  for (size_t n = 0; n < kHandWritten.size(); ++n) {
    std::vector<uint8_t> prefix(kHandWritten.begin(), kHandWritten.begin() + n);
    absl::StatusOr<Ct2Model> m = Ct2Model::Parse(prefix, "cut");
    ASSERT_FALSE(m.ok()) << "prefix of " << n << " bytes parsed";
    EXPECT_THAT(Msg(m), HasSubstr("cut")) << m.status();
  }
}

TEST(Ct2ModelTest, TrailingBytesAreAnError) {
  std::vector<uint8_t> bytes = kHandWritten;
  bytes.push_back(0);
  absl::StatusOr<Ct2Model> m = Ct2Model::Parse(bytes, "x");
  EXPECT_EQ(m.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(Msg(m), HasSubstr("1 unexpected bytes after the alias table"));
}

TEST(Ct2ModelTest, WrongVersion) {
  std::vector<uint8_t> bytes = kHandWritten;
  bytes[0] = 5;
  absl::StatusOr<Ct2Model> m = Ct2Model::Parse(bytes, "old.bin");
  EXPECT_EQ(m.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(Msg(m), HasSubstr("old.bin: CTranslate2 binary version 5"));
}

TEST(Ct2ModelTest, StringWithoutNul) {
  std::vector<uint8_t> bytes = kHandWritten;
  bytes[7] = 'X';  // spec name's NUL
  absl::StatusOr<Ct2Model> m = Ct2Model::Parse(bytes, "x");
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(m), HasSubstr("spec name at offset 4 does not end with a NUL"));
}

TEST(Ct2ModelTest, ByteCountMismatch) {
  Ct2FileBuilder builder;
  builder.Add("w", {2, 3}, 4, std::vector<uint8_t>(10));  // needs 12
  absl::StatusOr<Ct2Model> m = Ct2Model::Parse(builder.Build(), "x");
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(m), HasSubstr("variable 'w' (offset 26) has byte count 10 but shape [2, 3] of "
                                "float16 needs 12"));
}

TEST(Ct2ModelTest, UnknownDtype) {
  Ct2FileBuilder builder;
  builder.Add("w", {1}, 9, std::vector<uint8_t>(1));
  absl::StatusOr<Ct2Model> m = Ct2Model::Parse(builder.Build(), "x");
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(m), HasSubstr("has dtype id 9, expected 0..5"));
}

TEST(Ct2ModelTest, RankTooLarge) {
  Ct2FileBuilder builder;
  builder.Add("w", std::vector<uint32_t>(9, 1), 1, std::vector<uint8_t>(1));
  absl::StatusOr<Ct2Model> m = Ct2Model::Parse(builder.Build(), "x");
  EXPECT_THAT(Msg(m), HasSubstr("has rank 9, at most 8"));
}

TEST(Ct2ModelTest, HugeShapeDoesNotOverflow) {
  Ct2FileBuilder builder;
  builder.Add("w", {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}, 0, std::vector<uint8_t>(4));
  absl::StatusOr<Ct2Model> m = Ct2Model::Parse(builder.Build(), "x");
  EXPECT_THAT(Msg(m), HasSubstr("needs more than 2^64"));
}

TEST(Ct2ModelTest, DuplicateNamesAndBadAliases) {
  {
    Ct2FileBuilder builder;
    builder.AddTyped<int8_t>("w", {}, 1, {1}).AddTyped<int8_t>("w", {}, 1, {2});
    EXPECT_THAT(Msg(Ct2Model::Parse(builder.Build(), "x")),
                HasSubstr("variable 'w' appears twice"));
  }
  {
    Ct2FileBuilder builder;
    builder.AddTyped<int8_t>("w", {}, 1, {1}).Alias("p", "missing");
    EXPECT_THAT(Msg(Ct2Model::Parse(builder.Build(), "x")),
                HasSubstr("alias 'p' points to 'missing', which is not a variable"));
  }
  {
    Ct2FileBuilder builder;
    builder.AddTyped<int8_t>("w", {}, 1, {1}).Alias("w", "w");
    EXPECT_THAT(Msg(Ct2Model::Parse(builder.Build(), "x")),
                HasSubstr("alias 'w' is defined twice"));
  }
}

TEST(Ct2ModelTest, GetAndScalarErrors) {
  Ct2FileBuilder builder;
  builder.AddTyped<float>("m", {2}, 0, {1, 2}).AddTyped<float>("s", {}, 0, {1});
  absl::StatusOr<Ct2Model> m = Ct2Model::Parse(builder.Build(), "f.bin");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->Get("nope", {2}).status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Msg(m->Get("nope", {2})), HasSubstr("f.bin: no variable 'nope'"));
  EXPECT_THAT(Msg(m->Get("m", {3})), HasSubstr("f.bin: variable 'm' has shape [2], expected [3]"));
  EXPECT_THAT(Msg(m->GetIntScalar("m")), HasSubstr("expected a scalar"));
  EXPECT_THAT(Msg(m->GetIntScalar("s")), HasSubstr("is float32, expected an integer scalar"));
}

TEST(Ct2ModelTest, ReadFileFromDisk) {
  const char* tmp = getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/ct2_model_test.bin";
  FILE* f = fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(fwrite(kHandWritten.data(), 1, kHandWritten.size(), f), kHandWritten.size());
  fclose(f);
  absl::StatusOr<Ct2Model> m = Ct2Model::ReadFile(path);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->source(), path);
  EXPECT_EQ(*m->GetIntScalar("h"), 6);
  remove(path.c_str());

  absl::StatusOr<Ct2Model> missing = Ct2Model::ReadFile(path + ".missing");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Msg(missing), HasSubstr("cannot open " + path + ".missing"));
}

}  // namespace
}  // namespace ggml_whisper::convert
