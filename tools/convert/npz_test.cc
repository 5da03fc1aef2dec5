#include "tools/convert/npz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/convert/zip_test_util.h"

namespace ggml_whisper::convert {
namespace {

using ::testing::HasSubstr;

template <typename T>
std::string Msg(const absl::StatusOr<T>& s) {
  return std::string(s.status().message());
}

const char kDict23[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
const std::vector<float> kValues23 = {-0.0f, 1.5f, 2.0f, 3.25f, -4.0f, 1e-30f};

TEST(NpzTest, ParsesNpyHeaderAndData) {
  absl::StatusOr<NpyArrayF32> a = ParseNpyF32(Npy(kDict23, kValues23), "t.npy");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->shape, std::vector<int64_t>({2, 3}));
  ASSERT_EQ(a->data.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(memcmp(&a->data[i], &kValues23[i], 4), 0) << i;  // bit-exact, -0.0 included
  }
}

TEST(NpzTest, ParsesVersion2AndOneDimensionalShape) {
  absl::StatusOr<NpyArrayF32> a = ParseNpyF32(
      Npy("{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (3,)}", {1, 2, 3}, 2), "v2");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->shape, std::vector<int64_t>({3}));
  EXPECT_EQ(a->data, std::vector<float>({1, 2, 3}));
}

TEST(NpzTest, NpyErrors) {
  EXPECT_THAT(Msg(ParseNpyF32({'x', 'y'}, "a.npy")), HasSubstr("a.npy: truncated"));
  std::vector<uint8_t> bad_magic = Npy(kDict23, kValues23);
  bad_magic[1] = 'X';
  EXPECT_THAT(Msg(ParseNpyF32(bad_magic, "a.npy")), HasSubstr("not a .npy file"));
  EXPECT_THAT(Msg(ParseNpyF32(Npy(kDict23, kValues23, 7), "a.npy")), HasSubstr(".npy version 7.0"));
  EXPECT_THAT(Msg(ParseNpyF32(Npy("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
                                  {1, 2, 3, 4, 5, 6}),
                              "a.npy")),
              HasSubstr("a.npy: .npy descr '<f8', expected '<f4'"));
  EXPECT_THAT(
      Msg(ParseNpyF32(Npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", kValues23),
                      "a")),
      HasSubstr("fortran_order, expected C order"));
  EXPECT_THAT(
      Msg(ParseNpyF32(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }", kValues23),
                      "a")),
      HasSubstr(".npy data has 24 bytes, shape needs 32"));
  EXPECT_THAT(
      Msg(ParseNpyF32(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", kValues23),
                      "a")),
      HasSubstr("bad dimension 'x'"));
  EXPECT_THAT(Msg(ParseNpyF32(Npy("{'descr': '<f4', 'shape': (6,), }", kValues23), "a")),
              HasSubstr("no readable 'fortran_order' entry"));
}

TEST(NpzTest, ReadsStoredAndDeflatedMembers) {
  const std::vector<uint8_t> npy = Npy(kDict23, kValues23);
  // A local extra field as NumPy writes it (a ZIP64 record), which the reader must skip.
  const std::vector<uint8_t> zip64_extra = {1, 0, 16, 0, 0, 0, 0, 0, 0, 0,
                                            0, 0, 0,  0, 0, 0, 0, 0, 0, 0};
  const std::vector<uint8_t> zip = ZipBuilder()
                                       .Add("stored.npy", npy, false)
                                       .Add("deflated.npy", npy, true, zip64_extra)
                                       .Build();
  for (const char* name : {"stored.npy", "deflated.npy"}) {
    absl::StatusOr<std::vector<uint8_t>> member = ReadZipMember(zip, name, "a.npz");
    ASSERT_TRUE(member.ok()) << member.status();
    EXPECT_EQ(*member, npy) << name;
  }
  absl::StatusOr<std::vector<uint8_t>> missing = ReadZipMember(zip, "mel_80.npy", "a.npz");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Msg(missing),
              HasSubstr("a.npz: no member 'mel_80.npy' (members: stored.npy, deflated.npy)"));
}

TEST(NpzTest, DetectsCorruption) {
  const std::vector<uint8_t> npy = Npy(kDict23, kValues23);
  std::vector<uint8_t> zip = ZipBuilder().Add("m.npy", npy, false).Build();
  zip[30 + 5 + 100] ^= 1;  // a byte of the stored payload (local header 30 B + name)
  EXPECT_THAT(Msg(ReadZipMember(zip, "m.npy", "a.npz")), HasSubstr("a.npz:m.npy: CRC-32 0x"));

  std::vector<uint8_t> deflated = ZipBuilder().Add("m.npy", npy, true).Build();
  deflated[30 + 5] ^= 0xFF;  // the first byte of the deflate stream
  absl::StatusOr<std::vector<uint8_t>> r = ReadZipMember(deflated, "m.npy", "a.npz");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << r.status();

  EXPECT_THAT(Msg(ReadZipMember({1, 2, 3}, "m.npy", "junk")), HasSubstr("junk: not a zip archive"));
}

TEST(NpzTest, EveryTruncationIsAnError) {
  const std::vector<uint8_t> zip = ZipBuilder().Add("m.npy", Npy(kDict23, kValues23), true).Build();
  for (size_t n = 0; n < zip.size(); ++n) {
    std::vector<uint8_t> prefix(zip.begin(), zip.begin() + n);
    EXPECT_FALSE(ReadZipMember(prefix, "m.npy", "cut").ok()) << n;
  }
}

TEST(NpzTest, ReadNpzFromDisk) {
  const char* tmp = getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/npz_test.npz";
  const std::vector<uint8_t> zip = ZipBuilder()
                                       .Add("mel_80.npy", Npy(kDict23, kValues23), true)
                                       .Add("mel_128.npy", Npy(kDict23, kValues23), true)
                                       .Build();
  FILE* f = fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(fwrite(zip.data(), 1, zip.size(), f), zip.size());
  fclose(f);
  absl::StatusOr<NpyArrayF32> a = ReadNpzF32(path, "mel_80");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->shape, std::vector<int64_t>({2, 3}));
  EXPECT_EQ(a->data[3], 3.25f);
  EXPECT_EQ(ReadNpzF32(path, "mel_64").status().code(), absl::StatusCode::kNotFound);
  remove(path.c_str());
  EXPECT_EQ(ReadNpzF32(path, "mel_80").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace ggml_whisper::convert
