// Test helpers: builds zip archives (stored or deflated members) and .npy images, so the npz
// reader and the converter can be tested without NumPy or the real mel_filters.npz.
#ifndef GGML_WHISPER_TOOLS_CONVERT_ZIP_TEST_UTIL_H_
#define GGML_WHISPER_TOOLS_CONVERT_ZIP_TEST_UTIL_H_

#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ggml_whisper::convert {

inline void Put16(std::vector<uint8_t>& out, uint32_t v) {
  out.push_back(v & 0xFF);
  out.push_back((v >> 8) & 0xFF);
}
inline void Put32(std::vector<uint8_t>& out, uint32_t v) {
  Put16(out, v & 0xFFFF);
  Put16(out, v >> 16);
}

inline std::vector<uint8_t> RawDeflate(const std::vector<uint8_t>& in) {
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
inline std::vector<uint8_t> Npy(const std::string& dict, const std::vector<float>& values,
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

}  // namespace ggml_whisper::convert

#endif  // GGML_WHISPER_TOOLS_CONVERT_ZIP_TEST_UTIL_H_
