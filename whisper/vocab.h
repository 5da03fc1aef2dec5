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
#include <unordered_map>
#include <vector>

#include "absl/strings/string_view.h"
#include "whisper/tokens.h"

namespace whisper {

// whisper.cpp's language code of id `lang_id` (g_lang, L280-381: 0 "en", 1 "zh", ...,
// 98 "su", 99 "yue"), or nullptr when lang_id is not in [0, kMaxLanguages).
const char* LanguageCode(int lang_id);
// The id of a language code ("en" -> 0), or -1 when unknown.
int LanguageId(absl::string_view code);

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

 private:
  std::vector<std::string> id_to_token_;
  std::unordered_map<std::string, Token> token_to_id_;
  int n_stored_ = 0;
  SpecialTokens special_;
};

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_VOCAB_H_
