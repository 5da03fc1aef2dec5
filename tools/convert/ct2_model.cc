#include "tools/convert/ct2_model.h"

#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/convert/byte_cursor.h"
#include "tools/convert/file_util.h"
#include "tools/convert/status_macros.h"

namespace ggml_whisper::convert {
namespace {

constexpr uint32_t kSupportedBinaryVersion = 6;
constexpr int kMaxRank = 8;

// A model.bin string: uint16 length counting the trailing NUL, the bytes, the NUL.
absl::StatusOr<std::string> ReadString(ByteCursor& in, absl::string_view field) {
  const size_t at = in.offset();
  CONVERT_ASSIGN_OR_RETURN(const uint16_t len, in.Read<uint16_t>(field));
  if (len == 0) {
    return absl::InvalidArgumentError(absl::StrCat(in.source(), ": ", field, " at offset ", at,
                                                   " has length 0 (the length counts a NUL)"));
  }
  CONVERT_ASSIGN_OR_RETURN(const uint8_t* p, in.Bytes(len, field));
  if (p[len - 1] != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(in.source(), ": ", field, " at offset ", at, " does not end with a NUL byte"));
  }
  return std::string(reinterpret_cast<const char*>(p), len - 1);
}

}  // namespace

size_t Ct2DTypeSize(Ct2DType dtype) {
  switch (dtype) {
    case Ct2DType::kFloat32: return 4;
    case Ct2DType::kInt8: return 1;
    case Ct2DType::kInt16: return 2;
    case Ct2DType::kInt32: return 4;
    case Ct2DType::kFloat16: return 2;
    case Ct2DType::kBFloat16: return 2;
  }
  return 0;
}

const char* Ct2DTypeName(Ct2DType dtype) {
  switch (dtype) {
    case Ct2DType::kFloat32: return "float32";
    case Ct2DType::kInt8: return "int8";
    case Ct2DType::kInt16: return "int16";
    case Ct2DType::kInt32: return "int32";
    case Ct2DType::kFloat16: return "float16";
    case Ct2DType::kBFloat16: return "bfloat16";
  }
  return "unknown";
}

int64_t Ct2Variable::nelements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ShapeToString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

absl::StatusOr<Ct2Model> Ct2Model::ReadFile(const std::string& path) {
  CONVERT_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, ReadFileBytes(path));
  return Parse(std::move(bytes), path);
}

absl::StatusOr<Ct2Model> Ct2Model::Parse(std::vector<uint8_t> bytes, std::string source) {
  Ct2Model m;
  m.bytes_ = std::move(bytes);
  m.source_ = std::move(source);
  ByteCursor in(m.bytes_.data(), m.bytes_.size(), m.source_);

  CONVERT_ASSIGN_OR_RETURN(m.binary_version_, in.Read<uint32_t>("binary version"));
  if (m.binary_version_ != kSupportedBinaryVersion) {
    return absl::UnimplementedError(absl::StrCat(
        m.source_, ": CTranslate2 binary version ", m.binary_version_, ", this reader handles ",
        kSupportedBinaryVersion, " (written by CTranslate2 3.x and 4.x converters)"));
  }
  CONVERT_ASSIGN_OR_RETURN(m.spec_name_, ReadString(in, "spec name"));
  CONVERT_ASSIGN_OR_RETURN(m.spec_revision_, in.Read<uint32_t>("spec revision"));

  CONVERT_ASSIGN_OR_RETURN(const uint32_t n_vars, in.Read<uint32_t>("variable count"));
  for (uint32_t i = 0; i < n_vars; ++i) {
    Ct2Variable v;
    const size_t at = in.offset();
    const std::string field = absl::StrCat("variable #", i);
    CONVERT_ASSIGN_OR_RETURN(v.name, ReadString(in, absl::StrCat(field, " name")));
    const std::string what = absl::StrCat("variable '", v.name, "' (offset ", at, ")");
    CONVERT_ASSIGN_OR_RETURN(const uint8_t rank, in.Read<uint8_t>(what + " rank"));
    if (rank > kMaxRank) {
      return absl::InvalidArgumentError(
          absl::StrCat(m.source_, ": ", what, " has rank ", int{rank}, ", at most ", kMaxRank));
    }
    // Element count, checked against overflow: every dim <= 2^32 and rank <= 8.
    uint64_t n = 1;
    bool overflow = false;
    for (int d = 0; d < rank; ++d) {
      CONVERT_ASSIGN_OR_RETURN(const uint32_t dim, in.Read<uint32_t>(what + " dims"));
      v.shape.push_back(dim);
      if (dim != 0 && n > std::numeric_limits<uint64_t>::max() / dim) overflow = true;
      n *= dim;
    }
    CONVERT_ASSIGN_OR_RETURN(const uint8_t dtype, in.Read<uint8_t>(what + " dtype"));
    v.dtype = static_cast<Ct2DType>(dtype);
    if (Ct2DTypeSize(v.dtype) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(m.source_, ": ", what, " has dtype id ", int{dtype}, ", expected 0..5"));
    }
    CONVERT_ASSIGN_OR_RETURN(const uint32_t nbytes, in.Read<uint32_t>(what + " byte count"));
    if (overflow || n > std::numeric_limits<uint64_t>::max() / Ct2DTypeSize(v.dtype) ||
        n * Ct2DTypeSize(v.dtype) != nbytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          m.source_, ": ", what, " has byte count ", nbytes, " but shape ", ShapeToString(v.shape),
          " of ", Ct2DTypeName(v.dtype), " needs ",
          overflow ? std::string("more than 2^64") : absl::StrCat(n * Ct2DTypeSize(v.dtype))));
    }
    CONVERT_ASSIGN_OR_RETURN(v.data, in.Bytes(nbytes, what + " data"));
    v.nbytes = nbytes;
    if (!m.index_.emplace(v.name, m.variables_.size()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(m.source_, ": variable '", v.name, "' appears twice"));
    }
    m.variables_.push_back(std::move(v));
  }

  CONVERT_ASSIGN_OR_RETURN(const uint32_t n_aliases, in.Read<uint32_t>("alias count"));
  for (uint32_t i = 0; i < n_aliases; ++i) {
    const std::string field = absl::StrCat("alias #", i);
    CONVERT_ASSIGN_OR_RETURN(std::string alias, ReadString(in, field + " name"));
    CONVERT_ASSIGN_OR_RETURN(std::string target, ReadString(in, field + " target"));
    if (m.index_.count(target) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(m.source_, ": alias '", alias, "' points to '",
                                                     target, "', which is not a variable"));
    }
    if (m.index_.count(alias) != 0 || !m.aliases_.emplace(alias, target).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(m.source_, ": alias '", alias, "' is defined twice"));
    }
  }
  if (in.remaining() != 0) {
    return absl::DataLossError(absl::StrCat(m.source_, ": ", in.remaining(),
                                            " unexpected bytes after the alias table at offset ",
                                            in.offset()));
  }
  return m;
}

const Ct2Variable* Ct2Model::Find(absl::string_view name) const {
  auto it = index_.find(name);
  if (it == index_.end()) {
    auto alias = aliases_.find(std::string(name));
    if (alias == aliases_.end()) return nullptr;
    it = index_.find(alias->second);  // Parse checked that the target exists
  }
  return &variables_[it->second];
}

absl::StatusOr<const Ct2Variable*> Ct2Model::Get(absl::string_view name,
                                                 const std::vector<int64_t>& shape) const {
  const Ct2Variable* v = Find(name);
  if (v == nullptr) {
    return absl::NotFoundError(absl::StrCat(source_, ": no variable '", name, "'"));
  }
  if (v->shape != shape) {
    return absl::InvalidArgumentError(absl::StrCat(source_, ": variable '", name, "' has shape ",
                                                   ShapeToString(v->shape), ", expected ",
                                                   ShapeToString(shape)));
  }
  return v;
}

absl::StatusOr<int64_t> Ct2Model::GetIntScalar(absl::string_view name) const {
  const Ct2Variable* v = Find(name);
  if (v == nullptr) {
    return absl::NotFoundError(absl::StrCat(source_, ": no variable '", name, "'"));
  }
  if (!v->shape.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(source_, ": variable '", name, "' has shape ",
                                                   ShapeToString(v->shape), ", expected a scalar"));
  }
  switch (v->dtype) {
    case Ct2DType::kInt8: return static_cast<int8_t>(v->data[0]);
    case Ct2DType::kInt16: {
      int16_t x;
      memcpy(&x, v->data, 2);
      return x;
    }
    case Ct2DType::kInt32: {
      int32_t x;
      memcpy(&x, v->data, 4);
      return x;
    }
    default:
      return absl::InvalidArgumentError(absl::StrCat(source_, ": variable '", name, "' is ",
                                                     Ct2DTypeName(v->dtype),
                                                     ", expected an integer scalar"));
  }
}

}  // namespace ggml_whisper::convert
