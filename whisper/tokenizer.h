// Text -> token ids for prompts, as whisper.cpp's whisper_tokenize does (src/whisper.cpp
// L3284-3333): split with GPT-2's pre-tokenizer pattern, then greedy longest-prefix matching of
// each piece against the vocabulary (no BPE merges). Also whisper.cpp's non-speech token list for
// --suppress-nst (OpenAI's tokenizer.non_speech_tokens).
#ifndef GGML_WHISPER_WHISPER_TOKENIZER_H_
#define GGML_WHISPER_WHISPER_TOKENIZER_H_

#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "whisper/tokens.h"

namespace whisper {

class Tokenizer {
 public:
  // vocab[id] = the token's bytes, for the text ids stored in the model file.
  explicit Tokenizer(const std::vector<std::string>& vocab);

  // Errors: InvalidArgument naming the first piece of `text` that no vocabulary entry starts.
  absl::StatusOr<std::vector<Token>> Encode(const std::string& text) const;

  // Ids of non-speech symbols (and the same with a leading space) that are single tokens.
  std::vector<Token> NonSpeechTokens() const;

  // The id of a token whose bytes are exactly `piece`, or -1.
  Token Find(const std::string& piece) const;

 private:
  std::unordered_map<std::string, Token> token_to_id_;
};

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_TOKENIZER_H_
