// Text -> token ids for prompts: as whisper.cpp's whisper_tokenize does (src/whisper.cpp
// L3284-3333: GPT-2's pre-tokenizer pattern over ASCII classes, then greedy longest-prefix
// matching of each piece, no BPE merges), and as OpenAI's tokenizer (tiktoken; faster-whisper's
// tokenizer.json) does (the pattern over Unicode classes, then byte-pair merges). Also the
// non-speech token lists of --suppress-nst (whisper.cpp's) and of OpenAI's non_speech_tokens.
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

  // OpenAI's tokenization (tiktoken Encoding.encode_ordinary, as faster-whisper's
  // hf_tokenizer.encode): the pieces of SplitOpenAi, each byte-pair merged with a token's id as
  // its rank (tiktoken _byte_pair_merge: the adjacent pair whose bytes are the lowest id merges
  // first, the leftmost among equals, until no pair is a token). A byte left that no entry holds
  // alone is skipped and counted in *n_skipped (may be null): only in a vocabulary whose partial
  // characters were replaced by U+FFFD. O(n log n) per piece, no recursion (any length is safe).
  std::vector<Token> EncodeOpenAi(const std::string& text, int* n_skipped) const;
  // GPT-2's pre-tokenizer pattern over Unicode classes (whisper/unicode_classes.h), OpenAI's:
  //   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  // the pieces of `text` in order (they concatenate to `text`; a byte of ill-formed UTF-8 is a
  // code point of class "other").
  static std::vector<std::string> SplitOpenAi(const std::string& text);

  // whisper.cpp's suppress_nst list (src/whisper.cpp whisper_process_logits): the ids whose bytes
  // are exactly one of OpenAI's non-speech symbols, or that symbol after a space, plus " -" and
  // " '". Ascending is not guaranteed; ids are unique per symbol.
  std::vector<Token> NonSpeechTokens() const;
  // OpenAI whisper/tokenizer.py's non_speech_tokens (faster-whisper's suppress_tokens=[-1]):
  // NonSpeechTokens() plus, for the music signs U+2669..U+266F (three UTF-8 bytes whose first
  // two, E2 99, they share), the first token of their encoding with and without a leading space,
  // even when that token is part of a character: E2 99 and " " E2 99 (ids 3268 and 873 in the
  // multilingual vocabulary, 17992 and 20724 in the English one; both in config.json's
  // suppress_ids). Found only in a vocabulary that stores raw token bytes (tools/convert); one
  // whose partial characters were replaced by U+FFFD gives NonSpeechTokens() alone.
  std::vector<Token> OpenAiNonSpeechTokens() const;

  // The id of a token whose bytes are exactly `piece`, or -1. When several ids hold those bytes,
  // the highest (whisper.cpp's token_to_id keeps the last one of the file).
  Token Find(absl::string_view piece) const;
  // The longest token that starts `text`, its length in *len (TokenIndex::LongestPrefix).
  Token LongestPrefix(absl::string_view text, size_t* len) const;

 private:
  // EncodeOpenAi's merges of one piece, appended to *out.
  void BytePairMerge(absl::string_view piece, std::vector<Token>* out, int* n_skipped) const;

  std::vector<std::string> owned_;  // the first constructor's tokens
  TokenIndex owned_index_;
  const WhisperVocab* vocab_ = nullptr;  // the second constructor's
};

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_TOKENIZER_H_
