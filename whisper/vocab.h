// Whisper's vocabulary: token text <-> id, the special token ids, and the language table.
//
// The model file stores the byte-level BPE tokens (50257 for tiny and tiny.en); ids from there up
// to n_vocab - 1 are special and get synthesized names as whisper.cpp gives them (src/whisper.cpp
// L1641-1666): "[_EOT_]", "[_SOT_]", "[_LANG_en]", "[_TRANSLATE_]", "[_TRANSCRIBE_]",
// "[_SOLM_]", "[_PREV_]", "[_NOSP_]", "[_NOT_]", "[_BEG_]", then "[_TT_1]" ... for the timestamp
// tokens after beg, and "[_extra_token_<id>]" for any other id.
#ifndef GGML_WHISPER_WHISPER_VOCAB_H_
#define GGML_WHISPER_WHISPER_VOCAB_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "whisper/tokens.h"

namespace whisper {

// whisper.cpp's language code of id `lang_id` (g_lang, L280-381: 0 "en", 1 "zh", ...,
// 98 "su", 99 "yue"), or nullptr when lang_id is not in [0, kMaxLanguages).
const char* LanguageCode(int lang_id);
// The id of a language code ("en" -> 0), or -1 when unknown.
int LanguageId(absl::string_view code);
// Whether language `lang_id` is written without spaces between words, so that a transcript's
// words are its Unicode characters (token pieces that decode to whole UTF-8 characters) rather
// than space-separated runs: zh, ja, th, lo, my, yue, the set of faster-whisper 1.2.1's
// tokenizer.py split_to_word_tokens (and OpenAI whisper's). False for ids out of range.
bool SplitsWordsOnUnicode(int lang_id);

// Token text -> id by binary search over the ids sorted by their bytes: 4 bytes per token where a
// hash map of strings costs about 60 (tiny.en's 50257 tokens: 0.2 MB instead of about 3 MB, which
// every process paid whether or not it ever tokenized text). When two ids hold the same text (7
// texts in tiny.en, pieces of U+FFFD), the higher id wins, as in whisper.cpp's token_to_id (filled
// in file order, src/whisper.cpp whisper_model_load). The index keeps no pointer to the tokens:
// each Find is given the same vector it was built from.
class TokenIndex {
 public:
  TokenIndex() = default;
  // Indexes tokens[0, n) (n <= tokens.size()); ids are their positions.
  TokenIndex(const std::vector<std::string>& tokens, int n);
  // The id of `text` among tokens[0, n) of the vector the index was built from, or -1.
  // O(log n) comparisons.
  Token Find(const std::vector<std::string>& tokens, absl::string_view text) const;
  // The longest token that is a prefix of `text` (whisper.cpp's whisper_tokenize matches greedily
  // that way): its id, and its length in *len; -1 and *len = 0 when no token starts `text`.
  // One binary search per byte of the match over a shrinking range.
  Token LongestPrefix(const std::vector<std::string>& tokens, absl::string_view text, size_t* len) const;

 private:
  std::vector<Token> sorted_;  // ids by (bytes ascending, id descending)
};

class WhisperVocab {
 public:
  WhisperVocab() = default;
  // `stored`: the tokens of the model file (ids 0 .. stored.size() - 1); n_vocab: hparams.n_vocab
  // (>= stored.size(), 51864..51866). Names of the remaining ids are synthesized (see above).
  WhisperVocab(std::vector<std::string> stored, int n_vocab);

  int n_vocab() const { return static_cast<int>(id_to_token_.size()); }
  int n_stored() const { return n_stored_; }
  const SpecialTokens& special() const { return special_; }
  bool is_multilingual() const { return special_.multilingual; }

  // The bytes of token `id` (raw BPE bytes, not necessarily valid UTF-8), or the synthesized
  // name of a special id. "" when id is outside [0, n_vocab).
  const std::string& token(Token id) const;
  // The id whose stored text equals `text` exactly, or -1. When the file stores the same text
  // twice, the higher id wins (whisper.cpp fills its map in file order).
  Token id(absl::string_view text) const;
  // TokenIndex::LongestPrefix over the stored texts.
  Token LongestPrefix(absl::string_view text, size_t* len) const { return index_.LongestPrefix(id_to_token_, text, len); }

 private:
  std::vector<std::string> id_to_token_;
  TokenIndex index_;  // over the stored ids [0, n_stored)
  int n_stored_ = 0;
  SpecialTokens special_;
};

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_VOCAB_H_
