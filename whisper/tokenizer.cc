#include "whisper/tokenizer.h"

#include <regex>

#include "absl/strings/str_cat.h"

namespace whisper {

Tokenizer::Tokenizer(const std::vector<std::string>& vocab) {
  token_to_id_.reserve(vocab.size());
  for (size_t i = 0; i < vocab.size(); ++i) token_to_id_.emplace(vocab[i], static_cast<Token>(i));
}

Token Tokenizer::Find(const std::string& piece) const {
  auto it = token_to_id_.find(piece);
  return it == token_to_id_.end() ? -1 : it->second;
}

absl::StatusOr<std::vector<Token>> Tokenizer::Encode(const std::string& text) const {
  // GPT-2's pre-tokenizer pattern, with POSIX classes for \p{L} / \p{N} as whisper.cpp uses.
  static const std::regex kPattern(
      R"('s|'t|'re|'ve|'m|'ll|'d| ?[[:alpha:]]+| ?[[:digit:]]+| ?[^\s[:alpha:][:digit:]]+|\s+(?!\S)|\s+)");
  std::vector<Token> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kPattern); it != std::sregex_iterator(); ++it) {
    const std::string word = it->str();
    size_t i = 0;
    while (i < word.size()) {
      size_t j = word.size();
      Token id = -1;
      for (; j > i; --j) {
        id = Find(word.substr(i, j - i));
        if (id >= 0) break;
      }
      if (id < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("tokenizer: no vocabulary entry starts '", word.substr(i), "' (in \"", text, "\")"));
      }
      out.push_back(id);
      i = j;
    }
  }
  return out;
}

std::vector<Token> Tokenizer::NonSpeechTokens() const {
  // OpenAI whisper/tokenizer.py non_speech_tokens: symbols, multi-character symbols, music signs.
  static const char* const kSymbols[] = {
      "\"", "#", "(", ")", "*", "+", "/", ":", ";", "<", "=", ">", "@", "[", "\\", "]", "^", "_", "`", "{",
      "|", "}", "~", "「", "」", "『", "』", "<<", ">>", "<<<", ">>>", "--", "---", "-(", "-[", "('", "(\"",
      "((", "))", "(((", ")))", "[[", "]]", "{{", "}}", "♪♪", "♪♪♪", "♩", "♪", "♫", "♬", "♭", "♮", "♯"};
  std::vector<Token> out;
  for (const char* s : kSymbols) {
    for (const std::string& piece : {std::string(s), std::string(" ") + s}) {
      const Token id = Find(piece);
      if (id >= 0) out.push_back(id);
    }
  }
  for (const char* s : {" -", " '"}) {
    const Token id = Find(s);
    if (id >= 0) out.push_back(id);
  }
  return out;
}

}  // namespace whisper
