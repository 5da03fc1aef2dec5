// Test helper: serializes a synthetic CTranslate2 model.bin (binary version 6 layout, see
// ct2_model.h), so reader and converter tests need no real model.
#ifndef GGML_WHISPER_TOOLS_CONVERT_CT2_TEST_UTIL_H_
#define GGML_WHISPER_TOOLS_CONVERT_CT2_TEST_UTIL_H_

#include <stdint.h>
#include <string.h>

#include <string>
#include <utility>
#include <vector>

namespace ggml_whisper::convert {

class Ct2FileBuilder {
 public:
  explicit Ct2FileBuilder(std::string spec = "WhisperSpec", uint32_t revision = 3,
                          uint32_t version = 6)
      : spec_(std::move(spec)), revision_(revision), version_(version) {}

  // Adds a variable with raw little-endian `data` (its size must match shape x dtype size for a
  // valid file; tests break that on purpose).
  Ct2FileBuilder& Add(const std::string& name, std::vector<uint32_t> shape, uint8_t dtype,
                      std::vector<uint8_t> data) {
    vars_.push_back({name, std::move(shape), dtype, std::move(data)});
    return *this;
  }
  template <typename T>
  Ct2FileBuilder& AddTyped(const std::string& name, std::vector<uint32_t> shape, uint8_t dtype,
                           const std::vector<T>& values) {
    std::vector<uint8_t> data(values.size() * sizeof(T));
    if (!values.empty()) memcpy(data.data(), values.data(), data.size());
    return Add(name, std::move(shape), dtype, std::move(data));
  }
  Ct2FileBuilder& Alias(const std::string& alias, const std::string& target) {
    aliases_.emplace_back(alias, target);
    return *this;
  }

  std::vector<uint8_t> Build() const {
    std::vector<uint8_t> out;
    U32(out, version_);
    Str(out, spec_);
    U32(out, revision_);
    U32(out, static_cast<uint32_t>(vars_.size()));
    for (const Var& v : vars_) {
      Str(out, v.name);
      out.push_back(static_cast<uint8_t>(v.shape.size()));
      for (uint32_t d : v.shape) U32(out, d);
      out.push_back(v.dtype);
      U32(out, static_cast<uint32_t>(v.data.size()));
      out.insert(out.end(), v.data.begin(), v.data.end());
    }
    U32(out, static_cast<uint32_t>(aliases_.size()));
    for (const auto& [alias, target] : aliases_) {
      Str(out, alias);
      Str(out, target);
    }
    return out;
  }

 private:
  struct Var {
    std::string name;
    std::vector<uint32_t> shape;
    uint8_t dtype;
    std::vector<uint8_t> data;
  };
  static void U32(std::vector<uint8_t>& out, uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  static void Str(std::vector<uint8_t>& out, const std::string& s) {
    const uint16_t len = static_cast<uint16_t>(s.size() + 1);
    out.push_back(static_cast<uint8_t>(len));
    out.push_back(static_cast<uint8_t>(len >> 8));
    out.insert(out.end(), s.begin(), s.end());
    out.push_back(0);
  }

  std::string spec_;
  uint32_t revision_;
  uint32_t version_;
  std::vector<Var> vars_;
  std::vector<std::pair<std::string, std::string>> aliases_;
};

}  // namespace ggml_whisper::convert

#endif  // GGML_WHISPER_TOOLS_CONVERT_CT2_TEST_UTIL_H_
