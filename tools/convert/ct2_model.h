// Reader for CTranslate2's model.bin: the named variables (weights and scalars) of a converted
// model, as written by CTranslate2's Python converters (ctranslate2/specs/model_spec.py,
// ModelSpec._serialize, binary version 6).
//
// Layout (little-endian, no padding): uint32 binary version; string spec name; uint32 spec
// revision; uint32 variable count, then per variable: string name, uint8 rank, rank x uint32 dims
// (row-major, PyTorch order, outermost first), uint8 dtype, uint32 byte count, raw bytes; uint32
// alias count, then per alias: string alias, string target. A string is a uint16 length that
// counts a trailing NUL, then the bytes, then the NUL.
#ifndef GGML_WHISPER_TOOLS_CONVERT_CT2_MODEL_H_
#define GGML_WHISPER_TOOLS_CONVERT_CT2_MODEL_H_

#include <stddef.h>
#include <stdint.h>

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ggml_whisper::convert {

// CTranslate2's DataType ids as stored in model.bin.
enum class Ct2DType : uint8_t {
  kFloat32 = 0,
  kInt8 = 1,
  kInt16 = 2,
  kInt32 = 3,
  kFloat16 = 4,
  kBFloat16 = 5,
};

// Bytes per element of `dtype` (4, 1, 2, 4, 2, 2); 0 for an id outside the enum.
size_t Ct2DTypeSize(Ct2DType dtype);
// "float32", "int8", ...; "unknown" for an id outside the enum.
const char* Ct2DTypeName(Ct2DType dtype);

// One variable. `data` points into the owning Ct2Model's buffer (valid while the model lives,
// moves included).
struct Ct2Variable {
  std::string name;
  std::vector<int64_t> shape;  // PyTorch order (outermost first); empty for a scalar
  Ct2DType dtype = Ct2DType::kFloat32;
  const uint8_t* data = nullptr;
  size_t nbytes = 0;  // = product(shape) * Ct2DTypeSize(dtype), checked when parsing

  int64_t nelements() const;
};

class Ct2Model {
 public:
  // Reads and parses the whole file (tiny.en: 75.5 MB). Errors: NotFound or PermissionDenied
  // when the file cannot be opened, DataLoss when reading fails, and those of Parse.
  static absl::StatusOr<Ct2Model> ReadFile(const std::string& path);

  // Parses a model.bin image. `source` names it in error messages (usually the path).
  // Errors (all naming `source`, the field and the byte offset):
  //   - DataLoss: the image ends inside a field, or has bytes after the alias table;
  //   - Unimplemented: binary version other than 6 (this reader's layout);
  //   - InvalidArgument: a string without its NUL, an unknown dtype id, rank > 8, a byte count
  //     that disagrees with shape x dtype size, a duplicated name, an alias whose target is not a
  //     variable.
  static absl::StatusOr<Ct2Model> Parse(std::vector<uint8_t> bytes, std::string source);

  Ct2Model(Ct2Model&&) = default;
  Ct2Model& operator=(Ct2Model&&) = default;
  Ct2Model(const Ct2Model&) = delete;
  Ct2Model& operator=(const Ct2Model&) = delete;

  uint32_t binary_version() const { return binary_version_; }
  const std::string& spec_name() const { return spec_name_; }  // "WhisperSpec" for Whisper
  uint32_t spec_revision() const { return spec_revision_; }
  const std::string& source() const { return source_; }
  // In file order (CTranslate2 writes them sorted by name).
  const std::vector<Ct2Variable>& variables() const { return variables_; }
  // alias name -> target variable name.
  const std::map<std::string, std::string>& aliases() const { return aliases_; }

  // The variable called `name`, following an alias; NULL if there is none.
  const Ct2Variable* Find(absl::string_view name) const;

  // As Find, but NotFound (naming the file and the variable) when absent, and InvalidArgument
  // when its shape is not `shape` (both shapes in the message).
  absl::StatusOr<const Ct2Variable*> Get(absl::string_view name,
                                         const std::vector<int64_t>& shape) const;

  // The value of a rank-0 integer variable (int8, int16 or int32), e.g. `encoder/num_heads`.
  // NotFound when absent; InvalidArgument when not a scalar or not an integer type.
  absl::StatusOr<int64_t> GetIntScalar(absl::string_view name) const;

 private:
  Ct2Model() = default;

  std::vector<uint8_t> bytes_;  // the whole file; Ct2Variable::data points into it
  std::string source_;
  uint32_t binary_version_ = 0;
  std::string spec_name_;
  uint32_t spec_revision_ = 0;
  std::vector<Ct2Variable> variables_;
  std::map<std::string, size_t, std::less<>> index_;  // name -> variables_ index
  std::map<std::string, std::string> aliases_;
};

// Shape as "[3, 384]" for messages.
std::string ShapeToString(const std::vector<int64_t>& shape);

}  // namespace ggml_whisper::convert

#endif  // GGML_WHISPER_TOOLS_CONVERT_CT2_MODEL_H_
