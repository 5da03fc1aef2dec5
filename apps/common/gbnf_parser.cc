#include "apps/common/gbnf_parser.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace whisper {
namespace {

// A syntax error at a byte offset of the text.
struct ParseError {
  const char* at;
  std::string what;
};

// whisper.cpp's grammar_parser, step for step, on a NUL-terminated copy of the text (every read
// stops at the NUL, as whisper.cpp's do), throwing ParseError where whisper.cpp throws.
class Parser {
 public:
  explicit Parser(const char* src) : src_(src) {}

  void ParseAll() {
    const char* pos = ParseSpace(src_, true);
    while (*pos) pos = ParseRule(pos);
  }

  GbnfGrammar grammar;
  std::map<uint32_t, const char*> first_use;  // symbol id -> where it was first mentioned
  std::vector<bool> defined;

  // Groups nest at most this deep: each level is two frames of this recursive parser, and 20000
  // levels (a 40 KB file) overflowed the stack. whisper.cpp's parser has no limit (and crashes).
  static constexpr int kMaxGroupDepth = 1000;

 private:
  int depth_ = 0;  // groups open at the current position
  static bool IsWordChar(char c) {
    return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || c == '-' || ('0' <= c && c <= '9');
  }

  uint32_t SymbolId(const char* src, size_t len) {
    const uint32_t next = static_cast<uint32_t>(grammar.symbol_ids.size());
    const auto r = grammar.symbol_ids.insert(std::make_pair(std::string(src, len), next));
    if (r.second) first_use[next] = src;
    return r.first->second;
  }

  uint32_t GenerateSymbolId(const std::string& base) {
    const uint32_t next = static_cast<uint32_t>(grammar.symbol_ids.size());
    grammar.symbol_ids[base + '_' + std::to_string(next)] = next;
    return next;
  }

  void AddRule(uint32_t id, const std::vector<whisper_grammar_element>& rule) {
    if (grammar.rules.size() <= id) {
      grammar.rules.resize(id + 1);
      defined.resize(id + 1, false);
    }
    grammar.rules[id] = rule;
    defined[id] = true;
  }

  // UTF-8 as whisper.cpp's parser decodes it (no validation; stops at the NUL).
  static std::pair<uint32_t, const char*> DecodeUtf8(const char* src) {
    static const int kLookup[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    const uint8_t first = static_cast<uint8_t>(*src);
    const int len = kLookup[first >> 4];
    uint32_t value = first & ((1 << (8 - len)) - 1);
    const char* end = src + len;
    const char* pos = src + 1;
    for (; pos < end && *pos; ++pos) value = (value << 6) + (static_cast<uint8_t>(*pos) & 0x3F);
    return {value, pos};
  }

  static std::pair<uint32_t, const char*> ParseHex(const char* src, int size, char kind) {
    const char* pos = src;
    uint32_t value = 0;
    for (; pos < src + size && *pos; ++pos) {
      const char c = *pos;
      value <<= 4;
      if ('a' <= c && c <= 'f') {
        value += c - 'a' + 10;
      } else if ('A' <= c && c <= 'F') {
        value += c - 'A' + 10;
      } else if ('0' <= c && c <= '9') {
        value += c - '0';
      } else {
        break;
      }
    }
    if (pos != src + size) throw ParseError{pos, absl::StrFormat("expected %d hex digits after \\%c", size, kind)};
    return {value, pos};
  }

  static const char* ParseSpace(const char* src, bool newline_ok) {
    const char* pos = src;
    while (*pos == ' ' || *pos == '\t' || *pos == '#' || (newline_ok && (*pos == '\r' || *pos == '\n'))) {
      if (*pos == '#') {
        while (*pos && *pos != '\r' && *pos != '\n') ++pos;
      } else {
        ++pos;
      }
    }
    return pos;
  }

  static const char* ParseName(const char* src) {
    const char* pos = src;
    while (IsWordChar(*pos)) ++pos;
    if (pos == src) throw ParseError{src, "expected a rule name (letters, digits and '-')"};
    return pos;
  }

  static std::pair<uint32_t, const char*> ParseChar(const char* src, const char* in) {
    if (*src == '\\') {
      switch (src[1]) {
        case 'x': return ParseHex(src + 2, 2, 'x');
        case 'u': return ParseHex(src + 2, 4, 'u');
        case 'U': return ParseHex(src + 2, 8, 'U');
        case 't': return {'\t', src + 2};
        case 'r': return {'\r', src + 2};
        case 'n': return {'\n', src + 2};
        case '\\':
        case '"':
        case '[':
        case ']': return {static_cast<uint8_t>(src[1]), src + 2};
        default:
          throw ParseError{src, "expected an escape: \\x, \\u, \\U, \\t, \\r, \\n, \\\\, \\\", \\[ or \\]"};
      }
    }
    if (*src) return DecodeUtf8(src);
    throw ParseError{src, absl::StrCat("expected the end of the ", in, " before the end of the grammar")};
  }

  const char* ParseLiteral(const char* pos, std::vector<whisper_grammar_element>* out) {
    const char* open = pos;
    ++pos;
    while (*pos != '"') {
      if (*pos == 0) throw ParseError{open, "expected a closing '\"' for this string"};
      const auto c = ParseChar(pos, "string");
      pos = c.second;
      out->push_back({WHISPER_GRETYPE_CHAR, c.first});
    }
    return pos + 1;
  }

  const char* ParseClass(const char* pos, std::vector<whisper_grammar_element>* out) {
    const char* open = pos;
    ++pos;
    whisper_gretype start_type = WHISPER_GRETYPE_CHAR;
    if (*pos == '^') {
      ++pos;
      start_type = WHISPER_GRETYPE_CHAR_NOT;
    }
    const size_t first = out->size();
    while (*pos != ']') {
      if (*pos == 0) throw ParseError{open, "expected a closing ']' for this character class"};
      const auto c = ParseChar(pos, "character class");
      pos = c.second;
      out->push_back({first < out->size() ? WHISPER_GRETYPE_CHAR_ALT : start_type, c.first});
      if (pos[0] == '-' && pos[1] != ']') {
        if (pos[1] == 0) throw ParseError{open, "expected a closing ']' for this character class"};
        const auto hi = ParseChar(pos + 1, "character class");
        pos = hi.second;
        out->push_back({WHISPER_GRETYPE_CHAR_RNG_UPPER, hi.first});
      }
    }
    return pos + 1;
  }

  // S* -> S' ::= S S' |;  S+ -> S' ::= S S' | S;  S? -> S' ::= S |  (whisper.cpp's rewrite).
  void Repeat(char op, const std::string& rule_name, size_t last_sym_start, std::vector<whisper_grammar_element>* out) {
    const uint32_t sub_id = GenerateSymbolId(rule_name);
    std::vector<whisper_grammar_element> sub(out->begin() + last_sym_start, out->end());
    if (op == '*' || op == '+') sub.push_back({WHISPER_GRETYPE_RULE_REF, sub_id});
    sub.push_back({WHISPER_GRETYPE_ALT, 0});
    if (op == '+') sub.insert(sub.end(), out->begin() + last_sym_start, out->end());
    sub.push_back({WHISPER_GRETYPE_END, 0});
    AddRule(sub_id, sub);
    out->resize(last_sym_start);
    out->push_back({WHISPER_GRETYPE_RULE_REF, sub_id});
  }

  const char* ParseSequence(const char* src, const std::string& rule_name, std::vector<whisper_grammar_element>* out,
                            bool nested) {
    size_t last_sym_start = out->size();
    const char* pos = src;
    while (*pos) {
      if (*pos == '"') {
        last_sym_start = out->size();
        pos = ParseSpace(ParseLiteral(pos, out), nested);
      } else if (*pos == '[') {
        last_sym_start = out->size();
        pos = ParseSpace(ParseClass(pos, out), nested);
      } else if (IsWordChar(*pos)) {
        const char* name_end = ParseName(pos);
        const uint32_t ref = SymbolId(pos, name_end - pos);
        pos = ParseSpace(name_end, nested);
        last_sym_start = out->size();
        out->push_back({WHISPER_GRETYPE_RULE_REF, ref});
      } else if (*pos == '(') {
        const char* open = pos;
        if (++depth_ > kMaxGroupDepth) {
          throw ParseError{open, absl::StrCat("groups nested more than ", kMaxGroupDepth, " deep")};
        }
        pos = ParseSpace(pos + 1, true);
        const uint32_t sub_id = GenerateSymbolId(rule_name);
        pos = ParseAlternates(pos, rule_name, sub_id, true);
        --depth_;
        last_sym_start = out->size();
        out->push_back({WHISPER_GRETYPE_RULE_REF, sub_id});
        if (*pos != ')') {
          throw ParseError{pos, absl::StrCat("expected ')' to close the group at ", Where(open))};
        }
        pos = ParseSpace(pos + 1, nested);
      } else if (*pos == '*' || *pos == '+' || *pos == '?') {
        if (last_sym_start == out->size()) {
          throw ParseError{pos, absl::StrCat("expected an item before '", std::string(1, *pos), "'")};
        }
        Repeat(*pos, rule_name, last_sym_start, out);
        pos = ParseSpace(pos + 1, nested);
      } else {
        break;
      }
    }
    return pos;
  }

  const char* ParseAlternates(const char* src, const std::string& rule_name, uint32_t rule_id, bool nested) {
    std::vector<whisper_grammar_element> rule;
    const char* pos = ParseSequence(src, rule_name, &rule, nested);
    while (*pos == '|') {
      rule.push_back({WHISPER_GRETYPE_ALT, 0});
      pos = ParseSpace(pos + 1, true);
      pos = ParseSequence(pos, rule_name, &rule, nested);
    }
    rule.push_back({WHISPER_GRETYPE_END, 0});
    AddRule(rule_id, rule);
    return pos;
  }

  const char* ParseRule(const char* src) {
    const char* name_end = ParseName(src);
    const char* pos = ParseSpace(name_end, false);
    const std::string name(src, name_end - src);
    const uint32_t id = SymbolId(src, name.size());
    if (!(pos[0] == ':' && pos[1] == ':' && pos[2] == '=')) {
      throw ParseError{pos, absl::StrCat("expected '::=' after the rule name '", name, "'")};
    }
    pos = ParseSpace(pos + 3, true);
    pos = ParseAlternates(pos, name, id, false);
    if (*pos == '\r') {
      pos += pos[1] == '\n' ? 2 : 1;
    } else if (*pos == '\n') {
      ++pos;
    } else if (*pos) {
      throw ParseError{pos, "expected an item, '|', or the end of the line"};
    }
    return ParseSpace(pos, true);
  }

 public:
  // "line L, column C" of a position in the text.
  std::string Where(const char* at) const {
    int line = 1;
    const char* line_start = src_;
    for (const char* p = src_; p < at; ++p) {
      if (*p == '\n') {
        ++line;
        line_start = p + 1;
      }
    }
    return absl::StrFormat("line %d, column %d", line, static_cast<int>(at - line_start) + 1);
  }

 private:
  const char* src_;
};

// What is at `at`, for an error message: "found 'x'" or "found the end".
std::string Found(const char* at) {
  if (*at == 0) return "found the end of the grammar";
  if (*at == '\n' || *at == '\r') return "found the end of the line";
  const char* end = at;
  while (*end && *end != '\n' && *end != '\r' && end - at < 20) ++end;
  return absl::StrCat("found '", std::string(at, end - at), "'");
}

}  // namespace

std::vector<const whisper_grammar_element*> GbnfGrammar::CRules() const {
  std::vector<const whisper_grammar_element*> out;
  for (const auto& r : rules) out.push_back(r.data());
  return out;
}

int64_t GbnfGrammar::RuleId(const std::string& name) const {
  const auto it = symbol_ids.find(name);
  return it == symbol_ids.end() ? -1 : static_cast<int64_t>(it->second);
}

namespace {

void AppendChar(uint32_t c, std::string* out) {
  if (0x20 <= c && c <= 0x7f) {
    out->push_back(static_cast<char>(c));
  } else {
    absl::StrAppendFormat(out, "<U+%04X>", c);  // whisper.cpp does not encode UTF-8 here either
  }
}

bool IsCharType(whisper_gretype t) {
  return t == WHISPER_GRETYPE_CHAR || t == WHISPER_GRETYPE_CHAR_NOT || t == WHISPER_GRETYPE_CHAR_ALT ||
         t == WHISPER_GRETYPE_CHAR_RNG_UPPER;
}

}  // namespace

std::string FormatGbnf(const GbnfGrammar& grammar) {
  std::vector<std::string> names(grammar.rules.size());
  for (const auto& [name, id] : grammar.symbol_ids) {
    if (id < names.size()) names[id] = name;
  }
  std::string out;
  for (size_t i = 0; i < grammar.rules.size(); ++i) {
    const std::vector<whisper_grammar_element>& rule = grammar.rules[i];
    absl::StrAppend(&out, names[i], " ::= ");
    for (size_t j = 0; j + 1 < rule.size(); ++j) {
      const whisper_grammar_element e = rule[j];
      switch (e.type) {
        case WHISPER_GRETYPE_ALT: out += "| "; break;
        case WHISPER_GRETYPE_RULE_REF: absl::StrAppend(&out, e.value < names.size() ? names[e.value] : "?", " "); break;
        case WHISPER_GRETYPE_CHAR: out += "["; break;
        case WHISPER_GRETYPE_CHAR_NOT: out += "[^"; break;
        case WHISPER_GRETYPE_CHAR_RNG_UPPER: out += "-"; break;
        default: break;
      }
      if (IsCharType(e.type)) {
        AppendChar(e.value, &out);
        const whisper_gretype next = rule[j + 1].type;
        if (next != WHISPER_GRETYPE_CHAR_ALT && next != WHISPER_GRETYPE_CHAR_RNG_UPPER) out += "] ";
      }
    }
    out += "\n";
  }
  return out;
}

absl::StatusOr<GbnfGrammar> ParseGbnf(absl::string_view text) {
  const std::string src(text.substr(0, std::min(text.size(), text.find('\0'))));
  Parser parser(src.c_str());
  if (src.size() < text.size()) {
    // whisper-cli parses the text as a C string and so drops everything after a NUL byte without a
    // word; a NUL in a text grammar is a mistake (a binary file, a bad encoding): say where.
    return absl::InvalidArgumentError(absl::StrCat(parser.Where(src.c_str() + src.size()),
                                                   ": a NUL byte (0x00); expected GBNF text"));
  }
  try {
    parser.ParseAll();
  } catch (const ParseError& e) {
    return absl::InvalidArgumentError(absl::StrCat(parser.Where(e.at), ": ", e.what, " (", Found(e.at), ")"));
  }
  if (parser.grammar.rules.empty()) return absl::InvalidArgumentError("no rules (expected a line 'name ::= ...')");
  parser.defined.resize(parser.grammar.symbol_ids.size(), false);
  parser.grammar.rules.resize(parser.grammar.symbol_ids.size());
  for (const auto& [name, id] : parser.grammar.symbol_ids) {
    if (!parser.defined[id]) {
      return absl::InvalidArgumentError(absl::StrCat("rule '", name, "' (first used at ",
                                                     parser.Where(parser.first_use[id]), ") is not defined"));
    }
  }
  return std::move(parser.grammar);
}

}  // namespace whisper
