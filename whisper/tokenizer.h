// Text -> token ids for prompts, as whisper.cpp's whisper_tokenize does (src/whisper.cpp
// L3284-3333): split with GPT-2's pre-tokenizer pattern, then greedy longest-prefix matching of
// each piece against the vocabulary (no BPE merges). Also whisper.cpp's non-speech token list for
// --suppress-nst (OpenAI's tokenizer.non_speech_tokens).
#ifndef GGML_WHISPER_WHISPER_TOKENIZER_H_
#define GGML_WHISPER_WHISPER_TOKENIZER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "whisper/tokens.h"
#include "whisper/vocab.h"

namespace whisper {

class Tokenizer {
 public:
  // vocab[id] = the token's bytes, for the text ids stored in the model file. The tokenizer keeps
  // its own copy.
  explicit Tokenizer(std::vector<std::string> vocab);
  // The stored ids of `vocab`, without a copy: `vocab` must outlive the tokenizer.
  explicit Tokenizer(const WhisperVocab& vocab);

  // whisper.cpp's whisper_tokenize: pieces of GPT-2's pre-tokenizer split, each matched greedily
  // longest-prefix first; a byte no vocabulary entry starts is skipped (whisper.cpp logs
  // "unknown token" and skips it too), and counted in *n_skipped (may be null). Linear in the
  // text's length, no recursion (any length is safe).
  std::vector<Token> EncodeSkipping(const std::string& text, int* n_skipped) const;
  // The pre-tokenizer split alone: the pieces of `text` in order (they concatenate to `text`).
  static std::vector<std::string> Split(const std::string& text);
  // The same, but a skipped byte is an error. Errors: InvalidArgument with the count and the
  // text.
  absl::StatusOr<std::vector<Token>> Encode(const std::string& text) const;

  // Ids of non-speech symbols (and the same with a leading space) that are single tokens.
  std::vector<Token> NonSpeechTokens() const;

  // The id of a token whose bytes are exactly `piece`, or -1. When several ids hold those bytes,
  // the highest (whisper.cpp's token_to_id keeps the last one of the file).
  Token Find(absl::string_view piece) const;
  // The longest token that starts `text`, its length in *len (TokenIndex::LongestPrefix).
  Token LongestPrefix(absl::string_view text, size_t* len) const;

 private:
  std::vector<std::string> owned_;  // the first constructor's tokens
  TokenIndex owned_index_;
  const WhisperVocab* vocab_ = nullptr;  // the second constructor's
};

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_TOKENIZER_H_
