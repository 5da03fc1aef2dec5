#include "whisper/tokenizer.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace whisper {

Tokenizer::Tokenizer(std::vector<std::string> vocab)
    : owned_(std::move(vocab)), owned_index_(owned_, static_cast<int>(owned_.size())) {}

Tokenizer::Tokenizer(const WhisperVocab& vocab) : vocab_(&vocab) {}

Token Tokenizer::LongestPrefix(absl::string_view text, size_t* len) const {
  return vocab_ != nullptr ? vocab_->LongestPrefix(text, len) : owned_index_.LongestPrefix(owned_, text, len);
}

Token Tokenizer::Find(absl::string_view piece) const {
  return vocab_ != nullptr ? vocab_->id(piece) : owned_index_.Find(owned_, piece);
}

namespace {

// Character classes of std::regex's [[:space:]], [[:alpha:]], [[:digit:]] in the "C" locale
// (bytes >= 0x80 are none of them), which whisper.cpp's pattern uses.
bool IsSpace(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
bool IsAlpha(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }
bool IsOther(unsigned char c) { return !IsSpace(c) && !IsAlpha(c) && !IsDigit(c); }

// Length of the match of whisper.cpp's GPT-2 pre-tokenizer pattern at text[p] (ECMAScript
// alternation: the first alternative that matches wins):
//   's|'t|'re|'ve|'m|'ll|'d| ?[[:alpha:]]+| ?[[:digit:]]+| ?[^\s[:alpha:][:digit:]]+|\s+(?!\S)|\s+
// Written as a scanner: std::regex recurses per character and overflows the stack on long text.
size_t PieceLength(const std::string& text, size_t p) {
  const size_t n = text.size();
  auto at = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  if (at(p) == '\'') {
    for (const char* c : {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"}) {
      const size_t len = std::char_traits<char>::length(c);
      if (text.compare(p, len, c) == 0) return len;
    }
  }
  for (bool (*cls)(unsigned char) : {IsAlpha, IsDigit, IsOther}) {
    size_t q = p + (at(p) == ' ' ? 1 : 0);
    if (q < n && cls(at(q))) {
      while (q < n && cls(at(q))) ++q;
      return q - p;
    }
  }
  if (IsSpace(at(p))) {
    size_t r = p;
    while (r < n && IsSpace(at(r))) ++r;
    // \s+(?!\S): the longest run not followed by a non-space, else \s+ (the whole run).
    if (r == n) return r - p;
    return r - p >= 2 ? r - p - 1 : r - p;
  }
  return 1;  // unreachable: every byte is in one of the classes above
}

}  // namespace

std::vector<std::string> Tokenizer::Split(const std::string& text) {
  std::vector<std::string> out;
  for (size_t p = 0; p < text.size();) {
    const size_t len = PieceLength(text, p);
    out.push_back(text.substr(p, len));
    p += len;
  }
  return out;
}

std::vector<Token> Tokenizer::EncodeSkipping(const std::string& text, int* n_skipped) const {
  std::vector<Token> out;
  int skipped = 0;
  for (size_t p = 0; p < text.size();) {
    const size_t len = PieceLength(text, p);
    const absl::string_view word = absl::string_view(text).substr(p, len);
    p += len;
    for (size_t i = 0; i < word.size();) {
      size_t n = 0;
      const Token id = LongestPrefix(word.substr(i), &n);
      if (id < 0) {  // whisper.cpp: "unknown token", skip one byte
        ++skipped;
        ++i;
        continue;
      }
      out.push_back(id);
      i += n;
    }
  }
  if (n_skipped != nullptr) *n_skipped = skipped;
  return out;
}

absl::StatusOr<std::vector<Token>> Tokenizer::Encode(const std::string& text) const {
  int skipped = 0;
  std::vector<Token> out = EncodeSkipping(text, &skipped);
  if (skipped > 0) {
    return absl::InvalidArgumentError(absl::StrCat("tokenizer: ", skipped, " byte(s) of \"", text,
                                                   "\" start no vocabulary entry"));
  }
  return out;
}

namespace {

// The music signs of OpenAI's non_speech_tokens ("miscellaneous"): U+2669..U+266F.
constexpr const char* kMusicSigns[] = {"♩", "♪", "♫", "♬", "♭", "♮", "♯"};

}  // namespace

std::vector<Token> Tokenizer::OpenAiNonSpeechTokens() const {
  std::vector<Token> out = NonSpeechTokens();
  // tokenizer.py: "In case they're multiple tokens, suppress the first token" (whisper.cpp's
  // greedy longest-prefix match gives the same first token as the BPE: no token holds all three
  // bytes of a sign, or it would be the single-token case).
  for (const char* s : kMusicSigns) {
    for (const std::string& piece : {std::string(s), std::string(" ") + s}) {
      size_t len = 0;
      const Token id = LongestPrefix(piece, &len);
      // Only a token holding the sign's first byte: in a vocabulary without E2 99 (partial
      // characters replaced by U+FFFD) the longest prefix of " ♪" is " ", which is speech.
      const size_t sign_at = piece[0] == ' ' ? 1 : 0;
      if (id >= 0 && len > sign_at && std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
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
