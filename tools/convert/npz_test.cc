#include "tools/convert/npz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ggml_whisper::convert {
namespace {

using ::testing::HasSubstr;

template <typename T>
std::string Msg(const absl::StatusOr<T>& s) {
  return std::string(s.status().message());
}

void Put16(std::vector<uint8_t>& out, uint32_t v) {
  out.push_back(v & 0xFF);
  out.push_back((v >> 8) & 0xFF);
}
void Put32(std::vector<uint8_t>& out, uint32_t v) {
  Put16(out, v & 0xFFFF);
  Put16(out, v >> 16);
}

std::vector<uint8_t> RawDeflate(const std::vector<uint8_t>& in) {
  z_stream zs;
  memset(&zs, 0, sizeof(zs));
  EXPECT_EQ(deflateInit2(&zs, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::vector<uint8_t> out(deflateBound(&zs, in.size()));
  zs.next_in = const_cast<Bytef*>(in.data());
  zs.avail_in = in.size();
  zs.next_out = out.data();
  zs.avail_out = out.size();
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// Builds a zip archive as APPNOTE.TXT lays it out, the way Python's zipfile writes NumPy's
// archives: local header + data per member, then the central directory and its end record.
class ZipBuilder {
 public:
  ZipBuilder& Add(const std::string& name, const std::vector<uint8_t>& data, bool deflate,
                  const std::vector<uint8_t>& local_extra = {}) {
    Member m;
    m.name = name;
    m.method = deflate ? 8 : 0;
    m.crc = crc32(0L, data.data(), data.size());
    m.size = data.size();
    m.payload = deflate ? RawDeflate(data) : data;
    m.local_extra = local_extra;
    members_.push_back(m);
    return *this;
  }

  std::vector<uint8_t> Build() const {
    std::vector<uint8_t> out;
    std::vector<uint32_t> offsets;
    for (const Member& m : members_) {
      offsets.push_back(out.size());
      Put32(out, 0x04034b50);
      Put16(out, 20);  // version needed
      Put16(out, 0);   // flags
      Put16(out, m.method);
      Put32(out, 0);  // time, date
      Put32(out, m.crc);
      Put32(out, m.payload.size());
      Put32(out, m.size);
      Put16(out, m.name.size());
      Put16(out, m.local_extra.size());
      out.insert(out.end(), m.name.begin(), m.name.end());
      out.insert(out.end(), m.local_extra.begin(), m.local_extra.end());
      out.insert(out.end(), m.payload.begin(), m.payload.end());
    }
    const uint32_t cd_offset = out.size();
    for (size_t i = 0; i < members_.size(); ++i) {
      const Member& m = members_[i];
      Put32(out, 0x02014b50);
      Put16(out, 20);  // version made by
      Put16(out, 20);  // version needed
      Put16(out, 0);   // flags
      Put16(out, m.method);
      Put32(out, 0);  // time, date
      Put32(out, m.crc);
      Put32(out, m.payload.size());
      Put32(out, m.size);
      Put16(out, m.name.size());
      Put16(out, 0);  // extra
      Put16(out, 0);  // comment
      Put16(out, 0);  // disk
      Put16(out, 0);  // internal attributes
      Put32(out, 0);  // external attributes
      Put32(out, offsets[i]);
      out.insert(out.end(), m.name.begin(), m.name.end());
    }
    const uint32_t cd_size = out.size() - cd_offset;
    Put32(out, 0x06054b50);
    Put16(out, 0);
    Put16(out, 0);
    Put16(out, members_.size());
    Put16(out, members_.size());
    Put32(out, cd_size);
    Put32(out, cd_offset);
    Put16(out, 0);  // comment length
    return out;
  }

 private:
  struct Member {
    std::string name;
    uint16_t method;
    uint32_t crc;
    uint32_t size;
    std::vector<uint8_t> payload;
    std::vector<uint8_t> local_extra;
  };
  std::vector<Member> members_;
};

// A .npy 1.0 image: magic, version, header padded with spaces to a multiple of 64 bytes, data.
std::vector<uint8_t> Npy(const std::string& dict, const std::vector<float>& values,
                         int major = 1) {
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), 0};
  const size_t prefix = out.size() + (major == 1 ? 2 : 4);
  std::string header = dict;
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  if (major == 1) {
    Put16(out, header.size());
  } else {
    Put32(out, header.size());
  }
  out.insert(out.end(), header.begin(), header.end());
  const uint8_t* p = reinterpret_cast<const uint8_t*>(values.data());
  out.insert(out.end(), p, p + 4 * values.size());
  return out;
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
  EXPECT_THAT(Msg(ParseNpyF32(Npy(kDict23, kValues23, 7), "a.npy")),
              HasSubstr(".npy version 7.0"));
  EXPECT_THAT(
      Msg(ParseNpyF32(Npy("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
                          {1, 2, 3, 4, 5, 6}),
                      "a.npy")),
      HasSubstr("a.npy: .npy descr '<f8', expected '<f4'"));
  EXPECT_THAT(
      Msg(ParseNpyF32(
          Npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", kValues23), "a")),
      HasSubstr("fortran_order, expected C order"));
  EXPECT_THAT(
      Msg(ParseNpyF32(
          Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }", kValues23), "a")),
      HasSubstr(".npy data has 24 bytes, shape needs 32"));
  EXPECT_THAT(
      Msg(ParseNpyF32(
          Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", kValues23), "a")),
      HasSubstr("bad dimension 'x'"));
  EXPECT_THAT(Msg(ParseNpyF32(Npy("{'descr': '<f4', 'shape': (6,), }", kValues23), "a")),
              HasSubstr("no readable 'fortran_order' entry"));
}

TEST(NpzTest, ReadsStoredAndDeflatedMembers) {
  const std::vector<uint8_t> npy = Npy(kDict23, kValues23);
  // A local extra field as NumPy writes it (a ZIP64 record), which the reader must skip.
  const std::vector<uint8_t> zip64_extra = {1, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                            0, 0, 0,  0, 0, 0, 0, 0};
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
  EXPECT_THAT(Msg(ReadZipMember(zip, "m.npy", "a.npz")),
              HasSubstr("a.npz:m.npy: CRC-32 0x"));

  std::vector<uint8_t> deflated = ZipBuilder().Add("m.npy", npy, true).Build();
  deflated[30 + 5] ^= 0xFF;  // the first byte of the deflate stream
  absl::StatusOr<std::vector<uint8_t>> r = ReadZipMember(deflated, "m.npy", "a.npz");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << r.status();

  EXPECT_THAT(Msg(ReadZipMember({1, 2, 3}, "m.npy", "junk")),
              HasSubstr("junk: not a zip archive"));
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
