#include "tools/convert/npz.h"

#include <string.h>
#include <zlib.h>

#include <limits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tools/convert/byte_cursor.h"
#include "tools/convert/file_util.h"
#include "tools/convert/status_macros.h"

namespace ggml_whisper::convert {
namespace {

// Zip record signatures and sizes (APPNOTE.TXT 4.3.7, 4.3.12, 4.3.16).
constexpr uint32_t kLocalHeaderSig = 0x04034b50;
constexpr uint32_t kCentralHeaderSig = 0x02014b50;
constexpr uint32_t kEndOfCentralDirSig = 0x06054b50;
constexpr size_t kEndOfCentralDirSize = 22;
constexpr size_t kMaxZipComment = 0xFFFF;

struct CentralEntry {
  std::string name;
  uint16_t flags = 0;
  uint16_t method = 0;
  uint32_t crc32 = 0;
  uint32_t compressed_size = 0;
  uint32_t uncompressed_size = 0;
  uint32_t local_header_offset = 0;
};

// Finds the end-of-central-directory record by scanning back over a possible archive comment.
absl::StatusOr<size_t> FindEndOfCentralDir(const std::vector<uint8_t>& zip,
                                           absl::string_view source) {
  if (zip.size() >= kEndOfCentralDirSize) {
    const size_t last = zip.size() - kEndOfCentralDirSize;
    const size_t first = last > kMaxZipComment ? last - kMaxZipComment : 0;
    for (size_t pos = last + 1; pos-- > first;) {
      uint32_t sig;
      memcpy(&sig, zip.data() + pos, 4);
      if (sig == kEndOfCentralDirSig) return pos;
    }
  }
  return absl::DataLossError(
      absl::StrCat(source, ": not a zip archive (no end-of-central-directory record)"));
}

absl::StatusOr<std::vector<CentralEntry>> ReadCentralDirectory(const std::vector<uint8_t>& zip,
                                                               absl::string_view source) {
  CONVERT_ASSIGN_OR_RETURN(const size_t eocd, FindEndOfCentralDir(zip, source));
  ByteCursor in(zip.data(), zip.size(), source);
  CONVERT_RETURN_IF_ERROR(in.Seek(eocd + 10, "end of central directory"));
  CONVERT_ASSIGN_OR_RETURN(const uint16_t n_entries, in.Read<uint16_t>("zip entry count"));
  CONVERT_ASSIGN_OR_RETURN(const uint32_t cd_size, in.Read<uint32_t>("central directory size"));
  CONVERT_ASSIGN_OR_RETURN(const uint32_t cd_offset, in.Read<uint32_t>("central directory offset"));
  if (n_entries == 0xFFFF || cd_size == 0xFFFFFFFFu || cd_offset == 0xFFFFFFFFu) {
    return absl::UnimplementedError(absl::StrCat(source, ": ZIP64 archives are not supported"));
  }
  CONVERT_RETURN_IF_ERROR(in.Seek(cd_offset, "central directory"));
  std::vector<CentralEntry> entries;
  for (uint16_t i = 0; i < n_entries; ++i) {
    const size_t at = in.offset();
    CONVERT_ASSIGN_OR_RETURN(const uint32_t sig, in.Read<uint32_t>("central header signature"));
    if (sig != kCentralHeaderSig) {
      return absl::DataLossError(absl::StrCat(
          source, ": central directory entry ", i, " at offset ", at, " has signature 0x",
          absl::Hex(sig), ", expected 0x", absl::Hex(kCentralHeaderSig)));
    }
    CentralEntry e;
    CONVERT_RETURN_IF_ERROR(in.Bytes(4, "central header versions").status());
    CONVERT_ASSIGN_OR_RETURN(e.flags, in.Read<uint16_t>("flags"));
    CONVERT_ASSIGN_OR_RETURN(e.method, in.Read<uint16_t>("compression method"));
    CONVERT_RETURN_IF_ERROR(in.Bytes(4, "modification time").status());
    CONVERT_ASSIGN_OR_RETURN(e.crc32, in.Read<uint32_t>("crc-32"));
    CONVERT_ASSIGN_OR_RETURN(e.compressed_size, in.Read<uint32_t>("compressed size"));
    CONVERT_ASSIGN_OR_RETURN(e.uncompressed_size, in.Read<uint32_t>("uncompressed size"));
    CONVERT_ASSIGN_OR_RETURN(const uint16_t name_len, in.Read<uint16_t>("file name length"));
    CONVERT_ASSIGN_OR_RETURN(const uint16_t extra_len, in.Read<uint16_t>("extra field length"));
    CONVERT_ASSIGN_OR_RETURN(const uint16_t comment_len, in.Read<uint16_t>("comment length"));
    CONVERT_RETURN_IF_ERROR(in.Bytes(8, "disk number and attributes").status());
    CONVERT_ASSIGN_OR_RETURN(e.local_header_offset, in.Read<uint32_t>("local header offset"));
    CONVERT_ASSIGN_OR_RETURN(const uint8_t* name, in.Bytes(name_len, "file name"));
    e.name.assign(reinterpret_cast<const char*>(name), name_len);
    CONVERT_RETURN_IF_ERROR(in.Bytes(size_t{extra_len} + comment_len, "extra, comment").status());
    entries.push_back(std::move(e));
  }
  return entries;
}

absl::StatusOr<std::vector<uint8_t>> Inflate(const uint8_t* src, size_t src_size, size_t dst_size,
                                             const std::string& what) {
  std::vector<uint8_t> out(dst_size);
  z_stream zs;
  memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) {  // raw deflate, no zlib header
    return absl::InternalError(absl::StrCat(what, ": inflateInit2 failed"));
  }
  zs.next_in = const_cast<Bytef*>(src);
  zs.avail_in = static_cast<uInt>(src_size);
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(dst_size);
  const int rc = inflate(&zs, Z_FINISH);
  const uLong produced = zs.total_out;
  const std::string zmsg = zs.msg != nullptr ? zs.msg : "";
  inflateEnd(&zs);
  if (rc != Z_STREAM_END || produced != dst_size) {
    return absl::DataLossError(absl::StrCat(what, ": corrupt deflate data (zlib rc ", rc,
                                            zmsg.empty() ? "" : ", ", zmsg, "; ", produced, " of ",
                                            dst_size, " bytes produced)"));
  }
  return out;
}

// Splits the body of a .npy header dict "{'k': v, ...}" into its three known values. The
// values are Python literals: a quoted string, True/False, or a tuple of integers.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

absl::StatusOr<std::string> DictValue(absl::string_view dict, absl::string_view key,
                                      absl::string_view source) {
  for (const char quote : {'\'', '"'}) {
    const std::string needle = absl::StrCat(std::string(1, quote), key, std::string(1, quote));
    const size_t k = dict.find(needle);
    if (k == absl::string_view::npos) continue;
    size_t p = dict.find(':', k + needle.size());
    if (p == absl::string_view::npos) break;
    absl::string_view rest = absl::StripLeadingAsciiWhitespace(dict.substr(p + 1));
    size_t end;
    if (!rest.empty() && rest[0] == '(') {
      end = rest.find(')');
      if (end != absl::string_view::npos) ++end;
    } else if (!rest.empty() && (rest[0] == '\'' || rest[0] == '"')) {
      end = rest.find(rest[0], 1);
      if (end != absl::string_view::npos) ++end;
    } else {
      end = rest.find_first_of(",}");
    }
    if (end == absl::string_view::npos) break;
    return std::string(absl::StripAsciiWhitespace(rest.substr(0, end)));
  }
  return absl::InvalidArgumentError(
      absl::StrCat(source, ": .npy header has no readable '", key, "' entry: ", dict));
}

absl::StatusOr<NpyHeader> ParseNpyHeader(absl::string_view dict, absl::string_view source) {
  NpyHeader h;
  CONVERT_ASSIGN_OR_RETURN(std::string descr, DictValue(dict, "descr", source));
  h.descr = descr.size() >= 2 ? descr.substr(1, descr.size() - 2) : descr;  // unquote
  CONVERT_ASSIGN_OR_RETURN(const std::string fortran, DictValue(dict, "fortran_order", source));
  if (fortran != "True" && fortran != "False") {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": .npy fortran_order is '", fortran, "', expected True or False"));
  }
  h.fortran_order = fortran == "True";
  CONVERT_ASSIGN_OR_RETURN(const std::string shape, DictValue(dict, "shape", source));
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')') {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": .npy shape '", shape, "' is not a tuple"));
  }
  for (absl::string_view dim : absl::StrSplit(shape.substr(1, shape.size() - 2), ',')) {
    dim = absl::StripAsciiWhitespace(dim);
    if (dim.empty()) continue;  // "(80,)" has a trailing comma
    int64_t n;
    if (!absl::SimpleAtoi(dim, &n) || n < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": .npy shape '", shape, "' has a bad dimension '", dim, "'"));
    }
    h.shape.push_back(n);
  }
  return h;
}

}  // namespace

absl::StatusOr<std::vector<uint8_t>> ReadZipMember(const std::vector<uint8_t>& zip,
                                                   absl::string_view name,
                                                   absl::string_view source) {
  CONVERT_ASSIGN_OR_RETURN(const std::vector<CentralEntry> entries,
                           ReadCentralDirectory(zip, source));
  const CentralEntry* entry = nullptr;
  for (const CentralEntry& e : entries) {
    if (e.name == name) entry = &e;
  }
  if (entry == nullptr) {
    std::vector<std::string> names;
    for (const CentralEntry& e : entries) names.push_back(e.name);
    return absl::NotFoundError(absl::StrCat(source, ": no member '", name,
                                            "' (members: ", absl::StrJoin(names, ", "), ")"));
  }
  const std::string what = absl::StrCat(source, ":", name);
  if (entry->flags & 1) {
    return absl::UnimplementedError(absl::StrCat(what, " is encrypted"));
  }
  if (entry->compressed_size == 0xFFFFFFFFu || entry->uncompressed_size == 0xFFFFFFFFu) {
    return absl::UnimplementedError(absl::StrCat(what, " has ZIP64 sizes"));
  }
  // The local header repeats the name and may carry a different extra field (NumPy writes a
  // ZIP64 extra there); its own sizes may be zero (flag bit 3), so the central sizes are used.
  ByteCursor in(zip.data(), zip.size(), source);
  CONVERT_RETURN_IF_ERROR(in.Seek(entry->local_header_offset, what + " local header"));
  CONVERT_ASSIGN_OR_RETURN(const uint32_t sig, in.Read<uint32_t>(what + " local header"));
  if (sig != kLocalHeaderSig) {
    return absl::DataLossError(absl::StrCat(what, ": local header at offset ",
                                            entry->local_header_offset, " has signature 0x",
                                            absl::Hex(sig)));
  }
  CONVERT_RETURN_IF_ERROR(in.Bytes(22, what + " local header fields").status());
  CONVERT_ASSIGN_OR_RETURN(const uint16_t name_len, in.Read<uint16_t>("file name length"));
  CONVERT_ASSIGN_OR_RETURN(const uint16_t extra_len, in.Read<uint16_t>("extra field length"));
  CONVERT_RETURN_IF_ERROR(in.Bytes(size_t{name_len} + extra_len, what + " name, extra").status());
  CONVERT_ASSIGN_OR_RETURN(const uint8_t* data,
                           in.Bytes(entry->compressed_size, what + " compressed data"));

  std::vector<uint8_t> out;
  if (entry->method == 0) {
    if (entry->compressed_size != entry->uncompressed_size) {
      return absl::DataLossError(absl::StrCat(what, ": stored member with compressed size ",
                                              entry->compressed_size, " != size ",
                                              entry->uncompressed_size));
    }
    out.assign(data, data + entry->compressed_size);
  } else if (entry->method == 8) {
    CONVERT_ASSIGN_OR_RETURN(out,
                             Inflate(data, entry->compressed_size, entry->uncompressed_size, what));
  } else {
    return absl::UnimplementedError(absl::StrCat(what, ": compression method ", entry->method,
                                                 ", only 0 (stored) and 8 (deflate) are read"));
  }
  const uint32_t crc = static_cast<uint32_t>(crc32(0L, out.data(), static_cast<uInt>(out.size())));
  if (crc != entry->crc32) {
    return absl::DataLossError(absl::StrCat(what, ": CRC-32 0x", absl::Hex(crc),
                                            " does not match the directory's 0x",
                                            absl::Hex(entry->crc32)));
  }
  return out;
}

absl::StatusOr<NpyArrayF32> ParseNpyF32(const std::vector<uint8_t>& npy, absl::string_view source) {
  ByteCursor in(npy.data(), npy.size(), source);
  CONVERT_ASSIGN_OR_RETURN(const uint8_t* magic, in.Bytes(6, ".npy magic"));
  if (memcmp(magic, "\x93NUMPY", 6) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": not a .npy file (bad magic)"));
  }
  CONVERT_ASSIGN_OR_RETURN(const uint8_t major, in.Read<uint8_t>(".npy major version"));
  CONVERT_ASSIGN_OR_RETURN(const uint8_t minor, in.Read<uint8_t>(".npy minor version"));
  uint32_t header_len = 0;
  if (major == 1) {
    CONVERT_ASSIGN_OR_RETURN(header_len, in.Read<uint16_t>(".npy header length"));
  } else if (major == 2 || major == 3) {
    CONVERT_ASSIGN_OR_RETURN(header_len, in.Read<uint32_t>(".npy header length"));
  } else {
    return absl::InvalidArgumentError(absl::StrCat(source, ": .npy version ", int{major}, ".",
                                                   int{minor}, ", expected 1.x, 2.x or 3.x"));
  }
  CONVERT_ASSIGN_OR_RETURN(const uint8_t* header, in.Bytes(header_len, ".npy header"));
  CONVERT_ASSIGN_OR_RETURN(
      const NpyHeader h,
      ParseNpyHeader(absl::string_view(reinterpret_cast<const char*>(header), header_len), source));
  if (h.descr != "<f4") {
    return absl::InvalidArgumentError(absl::StrCat(source, ": .npy descr '", h.descr,
                                                   "', expected '<f4' (little-endian float32)"));
  }
  if (h.fortran_order) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": .npy is fortran_order, expected C order"));
  }
  uint64_t n = 1;
  for (int64_t d : h.shape) {
    if (d != 0 && n > std::numeric_limits<uint64_t>::max() / 4 / static_cast<uint64_t>(d)) {
      return absl::InvalidArgumentError(absl::StrCat(source, ": .npy shape is too large"));
    }
    n *= static_cast<uint64_t>(d);
  }
  if (in.remaining() != n * 4) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": .npy data has ", in.remaining(), " bytes, shape needs ", n * 4));
  }
  NpyArrayF32 a;
  a.shape = h.shape;
  a.data.resize(n);
  CONVERT_ASSIGN_OR_RETURN(const uint8_t* data, in.Bytes(n * 4, ".npy data"));
  if (n > 0) memcpy(a.data.data(), data, n * 4);
  return a;
}

absl::StatusOr<NpyArrayF32> ReadNpzF32(const std::string& path, absl::string_view key) {
  CONVERT_ASSIGN_OR_RETURN(const std::vector<uint8_t> zip, ReadFileBytes(path));
  CONVERT_ASSIGN_OR_RETURN(const std::vector<uint8_t> npy,
                           ReadZipMember(zip, absl::StrCat(key, ".npy"), path));
  return ParseNpyF32(npy, absl::StrCat(path, ":", key));
}

}  // namespace ggml_whisper::convert
