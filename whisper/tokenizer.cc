#include "whisper/tokenizer.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "whisper/unicode_classes.h"

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

namespace {

// The code point at text[p] and its length in *len: a well-formed UTF-8 sequence, else one byte
// read as U+FFFFFFFF (kOther), so any byte string splits.
char32_t CodePointAt(absl::string_view text, size_t p, size_t* len) {
  const auto* u = reinterpret_cast<const unsigned char*>(text.data());
  const unsigned char b = u[p];
  const size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
  *len = 1;
  if (n == 1) return b;
  if (n == 0 || p + n > text.size()) return 0xFFFFFFFF;
  char32_t cp = b & (0x7F >> n);
  for (size_t i = 1; i < n; ++i) {
    if ((u[p + i] & 0xC0) != 0x80) return 0xFFFFFFFF;
    cp = (cp << 6) | (u[p + i] & 0x3F);
  }
  *len = n;
  return cp;
}

UnicodeClass ClassAt(absl::string_view text, size_t p, size_t* len) {
  return ClassOf(CodePointAt(text, p, len));
}

// Length of the match of GPT-2's pattern over Unicode classes (OpenAI's tokenizer) at text[p]:
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
size_t PieceLengthOpenAi(absl::string_view text, size_t p) {
  const size_t n = text.size();
  if (text[p] == '\'') {
    for (absl::string_view c : {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"}) {
      if (text.substr(p, c.size()) == c) return c.size();
    }
  }
  size_t len = 0;
  for (UnicodeClass cls : {UnicodeClass::kLetter, UnicodeClass::kNumber, UnicodeClass::kOther}) {
    size_t q = p + (text[p] == ' ' ? 1 : 0);
    if (q < n && ClassAt(text, q, &len) == cls) {
      while (q < n && ClassAt(text, q, &len) == cls) q += len;
      return q - p;
    }
  }
  // \s+(?!\S): the run of spaces but its last code point when a non-space follows (and the run
  // has two or more), else \s+: the whole run.
  size_t r = p, last = p, count = 0;
  while (r < n && ClassAt(text, r, &len) == UnicodeClass::kSpace) {
    last = r;
    r += len;
    ++count;
  }
  if (count == 0) return len;  // unreachable: every code point is in one of the classes above
  return r == n || count == 1 ? r - p : last - p;
}

}  // namespace

std::vector<std::string> Tokenizer::SplitOpenAi(const std::string& text) {
  std::vector<std::string> out;
  for (size_t p = 0; p < text.size();) {
    const size_t len = PieceLengthOpenAi(text, p);
    out.push_back(text.substr(p, len));
    p += len;
  }
  return out;
}

void Tokenizer::BytePairMerge(absl::string_view piece, std::vector<Token>* out, int* n_skipped) const {
  const Token whole = Find(piece);
  if (whole >= 0) {  // tiktoken's shortcut (the merges would end there too)
    out->push_back(whole);
    return;
  }
  // Parts are named by their first byte; next[i] / prev[i] link the live ones (n: none).
  const size_t n = piece.size();
  std::vector<size_t> next(n), prev(n);
  std::vector<Token> rank(n, -1);
  std::vector<int> version(n, 0);
  struct Entry {
    Token rank;
    size_t at;
    int version;
    bool operator>(const Entry& o) const { return rank != o.rank ? rank > o.rank : at > o.at; }
  };
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;  // lowest rank, then leftmost
  auto pair_rank = [&](size_t i) -> Token {
    const size_t j = next[i];
    if (j == n) return -1;
    const size_t end = next[j];
    return Find(piece.substr(i, end - i));
  };
  auto update = [&](size_t i) {
    rank[i] = pair_rank(i);
    ++version[i];
    if (rank[i] >= 0) heap.push(Entry{rank[i], i, version[i]});
  };
  for (size_t i = 0; i < n; ++i) {
    next[i] = i + 1;
    prev[i] = i == 0 ? n : i - 1;
  }
  for (size_t i = 0; i < n; ++i) update(i);
  while (!heap.empty()) {
    const Entry e = heap.top();
    heap.pop();
    if (e.version != version[e.at]) continue;  // stale: the part changed since
    const size_t i = e.at, j = next[i];
    next[i] = next[j];
    if (next[j] != n) prev[next[j]] = i;
    ++version[j];  // j is gone: its entries are stale
    update(i);
    if (prev[i] != n) update(prev[i]);
  }
  for (size_t i = 0; i < n; i = next[i]) {
    const Token id = Find(piece.substr(i, next[i] - i));
    if (id >= 0) {
      out->push_back(id);
    } else {
      ++*n_skipped;  // a lone byte the vocabulary lacks (a vocabulary with U+FFFD for partial characters)
    }
  }
}

std::vector<Token> Tokenizer::EncodeOpenAi(const std::string& text, int* n_skipped) const {
  std::vector<Token> out;
  int skipped = 0;
  for (size_t p = 0; p < text.size();) {
    const size_t len = PieceLengthOpenAi(text, p);
    BytePairMerge(absl::string_view(text).substr(p, len), &out, &skipped);
    p += len;
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
