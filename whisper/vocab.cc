#include "whisper/vocab.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace whisper {
namespace {

// whisper.cpp's g_lang order (ids 0..99), the order of OpenAI's tokenizer.LANGUAGES.
constexpr const char* kLanguageCodes[] = {
    "en", "zh", "de", "es", "ru", "ko", "fr", "ja", "pt", "tr",  "pl", "ca", "nl", "ar", "sv",
    "it", "id", "hi", "fi", "vi", "he", "uk", "el", "ms", "cs",  "ro", "da", "hu", "ta", "no",
    "th", "ur", "hr", "bg", "lt", "la", "mi", "ml", "cy", "sk",  "te", "fa", "lv", "bn", "sr",
    "az", "sl", "kn", "et", "mk", "br", "eu", "is", "hy", "ne",  "mn", "bs", "kk", "sq", "sw",
    "gl", "mr", "pa", "si", "km", "sn", "yo", "so", "af", "oc",  "ka", "be", "tg", "sd", "gu",
    "am", "yi", "lo", "uz", "fo", "ht", "ps", "tk", "nn", "mt",  "sa", "lb", "my", "bo", "tl",
    "mg", "as", "tt", "haw", "ln", "ha", "ba", "jw", "su", "yue",
};
static_assert(sizeof(kLanguageCodes) / sizeof(kLanguageCodes[0]) == kMaxLanguages,
              "whisper.cpp's language table has 100 entries");

const std::string& EmptyString() {
  static const std::string* empty = new std::string();
  return *empty;
}

std::string SpecialName(const SpecialTokens& s, Token i) {
  if (i > s.beg) return absl::StrCat("[_TT_", i - s.beg, "]");
  if (i == s.eot) return "[_EOT_]";
  if (i == s.sot) return "[_SOT_]";
  if (i == s.translate) return "[_TRANSLATE_]";
  if (i == s.transcribe) return "[_TRANSCRIBE_]";
  if (i == s.solm) return "[_SOLM_]";
  if (i == s.prev) return "[_PREV_]";
  if (i == s.nosp) return "[_NOSP_]";
  if (i == s.not_) return "[_NOT_]";
  if (i == s.beg) return "[_BEG_]";
  if (i > s.sot && i <= s.sot + s.num_languages) {
    return absl::StrCat("[_LANG_", LanguageCode(i - s.sot - 1), "]");
  }
  return absl::StrCat("[_extra_token_", i, "]");
}

}  // namespace

const char* LanguageCode(int lang_id) {
  if (lang_id < 0 || lang_id >= kMaxLanguages) return nullptr;
  return kLanguageCodes[lang_id];
}

bool SplitsWordsOnUnicode(int lang_id) {
  const char* code = LanguageCode(lang_id);
  if (code == nullptr) return false;
  for (const char* c : {"zh", "ja", "th", "lo", "my", "yue"}) {
    if (absl::string_view(code) == c) return true;
  }
  return false;
}

int LanguageId(absl::string_view code) {
  for (int i = 0; i < kMaxLanguages; ++i) {
    if (code == kLanguageCodes[i]) return i;
  }
  return -1;
}

TokenIndex::TokenIndex(const std::vector<std::string>& tokens, int n) {
  n = std::max(0, std::min(n, static_cast<int>(tokens.size())));
  sorted_.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) sorted_[i] = i;
  std::sort(sorted_.begin(), sorted_.end(), [&tokens](Token a, Token b) {
    const int c = tokens[a].compare(tokens[b]);
    return c != 0 ? c < 0 : a > b;  // equal text: the higher id first (it wins)
  });
}

Token TokenIndex::Find(const std::vector<std::string>& tokens, absl::string_view text) const {
  auto it = std::lower_bound(sorted_.begin(), sorted_.end(), text,
                             [&tokens](Token id, absl::string_view t) { return absl::string_view(tokens[id]) < t; });
  return it != sorted_.end() && tokens[*it] == text ? *it : -1;
}

Token TokenIndex::LongestPrefix(const std::vector<std::string>& tokens, absl::string_view text, size_t* len) const {
  // [lo, hi): the tokens that start with text[0, k); sorted by bytes, so those of length k come
  // first, then the rest by their byte k.
  auto lo = sorted_.begin(), hi = sorted_.end();
  Token best = -1;
  *len = 0;
  for (size_t k = 0; k < text.size() && lo != hi; ++k) {
    const unsigned char c = static_cast<unsigned char>(text[k]);
    auto byte = [&tokens, k](Token id) { return static_cast<unsigned char>(tokens[id][k]); };
    lo = std::lower_bound(lo, hi, c, [&](Token id, unsigned char v) { return tokens[id].size() <= k || byte(id) < v; });
    hi = std::upper_bound(lo, hi, c, [&](unsigned char v, Token id) { return v < byte(id); });
    if (lo != hi && tokens[*lo].size() == k + 1) {  // text[0, k + 1) itself (the highest id of equals)
      best = *lo;
      *len = k + 1;
    }
  }
  return best;
}

WhisperVocab::WhisperVocab(std::vector<std::string> stored, int n_vocab)
    : id_to_token_(std::move(stored)), special_(SpecialTokensForVocab(n_vocab)) {
  n_stored_ = static_cast<int>(id_to_token_.size());
  index_ = TokenIndex(id_to_token_, n_stored_);
  id_to_token_.reserve(n_vocab);
  for (Token i = n_stored_; i < n_vocab; ++i) id_to_token_.push_back(SpecialName(special_, i));
}

const std::string& WhisperVocab::token(Token id) const {
  if (id < 0 || id >= n_vocab()) return EmptyString();
  return id_to_token_[id];
}

Token WhisperVocab::id(absl::string_view text) const { return index_.Find(id_to_token_, text); }

}  // namespace whisper
