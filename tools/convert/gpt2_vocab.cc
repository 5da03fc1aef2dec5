#include "tools/convert/gpt2_vocab.h"

#include <sys/stat.h>

#include <array>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "tools/convert/file_util.h"
#include "tools/convert/status_macros.h"

namespace ggml_whisper::convert {
namespace {

bool IsPrintableGpt2Byte(int b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

// Code point -> byte for the 256 code points of the alphabet; -1 elsewhere. Code points are all
// below U+0144, so a table of 0x144 entries covers them.
constexpr uint32_t kAlphabetEnd = 0x144;

const std::array<int16_t, kAlphabetEnd>& CodepointToByte() {
  static const std::array<int16_t, kAlphabetEnd> table = [] {
    std::array<int16_t, kAlphabetEnd> t;
    t.fill(-1);
    for (int b = 0; b < 256; ++b) t[Gpt2ByteToCodepoint(static_cast<uint8_t>(b))] = b;
    return t;
  }();
  return table;
}

// Decodes one well-formed UTF-8 character at s[*i], advancing *i; false if ill-formed.
bool NextCodepoint(absl::string_view s, size_t* i, uint32_t* cp) {
  const uint8_t b = static_cast<uint8_t>(s[*i]);
  int need;
  uint32_t c;
  uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b < 0x80) {
    *cp = b;
    ++*i;
    return true;
  } else if (b >= 0xC2 && b <= 0xDF) {
    need = 1, c = b & 0x1F;
  } else if (b >= 0xE0 && b <= 0xEF) {
    need = 2, c = b & 0x0F;
    if (b == 0xE0) lo = 0xA0;  // no overlong forms
    if (b == 0xED) hi = 0x9F;  // no surrogates
  } else if (b >= 0xF0 && b <= 0xF4) {
    need = 3, c = b & 0x07;
    if (b == 0xF0) lo = 0x90;  // no overlong forms
    if (b == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return false;
  }
  size_t j = *i + 1;
  for (int k = 0; k < need; ++k, ++j) {
    if (j >= s.size()) return false;
    const uint8_t cb = static_cast<uint8_t>(s[j]);
    if (cb < lo || cb > hi) return false;
    lo = 0x80, hi = 0xBF;
    c = (c << 6) | (cb & 0x3F);
  }
  *i = j;
  *cp = c;
  return true;
}

}  // namespace

uint32_t Gpt2ByteToCodepoint(uint8_t byte) {
  if (IsPrintableGpt2Byte(byte)) return byte;
  uint32_t n = 0;  // rank of `byte` among the non-printable bytes
  for (int b = 0; b < byte; ++b) n += IsPrintableGpt2Byte(b) ? 0 : 1;
  return 0x100 + n;
}

absl::StatusOr<std::string> Gpt2TokenToBytes(absl::string_view token) {
  const std::array<int16_t, kAlphabetEnd>& table = CodepointToByte();
  std::string out;
  out.reserve(token.size());
  for (size_t i = 0; i < token.size();) {
    const size_t at = i;
    uint32_t cp;
    if (!NextCodepoint(token, &i, &cp)) {
      return absl::InvalidArgumentError(
          absl::StrCat("token '", absl::CHexEscape(token), "' is not valid UTF-8 at byte ", at));
    }
    if (cp >= kAlphabetEnd || table[cp] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("token '", token, "' has U+", absl::Hex(cp, absl::kZeroPad4),
                       ", which is not in GPT-2's byte-level alphabet"));
    }
    out.push_back(static_cast<char>(table[cp]));
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> ParseVocabularyJson(absl::string_view text,
                                                             absl::string_view source) {
  const nlohmann::json j =
      nlohmann::json::parse(text.begin(), text.end(), /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": not valid JSON"));
  }
  if (!j.is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": expected a JSON list of token strings, found a ", j.type_name()));
  }
  std::vector<std::string> tokens;
  tokens.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": element ", i, " is a ", j[i].type_name(), ", expected a string"));
    }
    tokens.push_back(j[i].get_ref<const std::string&>());
  }
  return tokens;
}

std::vector<std::string> ParseVocabularyTxt(absl::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  std::vector<std::string> tokens;
  if (text.empty()) return tokens;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    tokens.emplace_back(line);
  }
  return tokens;
}

absl::StatusOr<std::vector<std::string>> ReadCt2Vocabulary(const std::string& model_dir) {
  const std::string json_path = model_dir + "/vocabulary.json";
  const std::string txt_path = model_dir + "/vocabulary.txt";
  struct stat st;
  const bool has_json = stat(json_path.c_str(), &st) == 0;
  const std::string& path = has_json ? json_path : txt_path;
  if (!has_json && stat(txt_path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat("no vocabulary in ", model_dir, ": neither ", json_path,
                                            " nor ", txt_path, " exists"));
  }
  CONVERT_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, ReadFileBytes(path));
  const absl::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (has_json) return ParseVocabularyJson(text, path);
  return ParseVocabularyTxt(text);
}

absl::StatusOr<std::vector<std::string>> GgmlVocabFromTokens(const std::vector<std::string>& tokens,
                                                             int n) {
  if (n < 0 || tokens.size() < static_cast<size_t>(n)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the vocabulary has ", tokens.size(), " tokens, the ggml file stores ", n));
  }
  std::vector<std::string> out;
  out.reserve(n);
  for (int id = 0; id < n; ++id) {
    absl::StatusOr<std::string> bytes = Gpt2TokenToBytes(tokens[id]);
    if (!bytes.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("vocabulary id ", id, ": ", bytes.status().message()));
    }
    out.push_back(std::move(*bytes));
  }
  return out;
}

}  // namespace ggml_whisper::convert
