// Whisper's vocabulary as whisper.cpp's ggml file stores it, from CTranslate2's token strings.
//
// CTranslate2 (like Hugging Face) writes byte-level BPE tokens in GPT-2's printable alphabet:
// `bytes_to_unicode` in OpenAI's gpt-2 src/encoder.py maps each byte to one code point, so a
// token string spells its raw bytes (U+0120 'Ġ' is the space byte 0x20, U+010A 'Ċ' is '\n').
// whisper.cpp's file stores the raw bytes of the first 50,257 tokens (the BPE ranks: its
// models/convert-pt-to-ggml.py writes each tiktoken rank's base64-decoded bytes, or
// `bytes([byte_decoder[c] for c in token])` from a vocab.json, unchanged); the special and timestamp tokens after them are synthesized by its loader.
// Raw means a token may hold part of a multi-byte UTF-8 character (e.g. E7 9A, the first two of
// the three bytes of U+7684): only the concatenation of consecutive tokens is text, so replacing
// such bytes (as an old converter did, see ../shared/data/README.md) loses CJK characters.
#ifndef GGML_WHISPER_TOOLS_CONVERT_GPT2_VOCAB_H_
#define GGML_WHISPER_TOOLS_CONVERT_GPT2_VOCAB_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ggml_whisper::convert {

// Tokens whisper.cpp stores in the file: GPT-2's 50,256 BPE ranks plus <|endoftext|> (.en) or
// the last multilingual rank (whisper.cpp L1588-1620; both tiny.en and tiny store 50257).
inline constexpr int kWhisperFileVocabSize = 50257;

// GPT-2's bytes_to_unicode: bytes '!'..'~', 0xA1..0xAC and 0xAE..0xFF map to the code point of
// the same value; the other 68 bytes (0x00..0x20, 0x7F..0xA0, 0xAD) map in increasing order to
// U+0100..U+0143.
uint32_t Gpt2ByteToCodepoint(uint8_t byte);

// The raw bytes a byte-level token string spells (the inverse of Gpt2ByteToCodepoint applied
// to each code point). Errors: InvalidArgument naming the token when it is not valid UTF-8 or
// holds a code point outside the 256-character alphabet.
absl::StatusOr<std::string> Gpt2TokenToBytes(absl::string_view token);

// Token strings, by id, from a JSON list (CTranslate2's vocabulary.json). Errors:
// InvalidArgument naming `source` when the text is not JSON, not a list, or an element is not a
// string (with its index).
absl::StatusOr<std::vector<std::string>> ParseVocabularyJson(absl::string_view text,
                                                             absl::string_view source);

// Token strings, by id, one per line (CTranslate2's older vocabulary.txt; byte-level tokens
// never contain a raw '\n' or '\r'). A final newline does not add a token.
std::vector<std::string> ParseVocabularyTxt(absl::string_view text);

// The token strings of a CTranslate2 model directory: `vocabulary.json` if it exists, else
// `vocabulary.txt`. Errors: NotFound naming both paths when neither exists; those of reading
// and parsing, naming the file.
absl::StatusOr<std::vector<std::string>> ReadCt2Vocabulary(const std::string& model_dir);

// The first `n` tokens as the file stores them: each token's raw bytes (Gpt2TokenToBytes),
// unchanged whether or not they are valid UTF-8 on their own. Errors: InvalidArgument when there
// are fewer than `n` tokens, or from Gpt2TokenToBytes (with the token id).
absl::StatusOr<std::vector<std::string>> GgmlVocabFromTokens(const std::vector<std::string>& tokens,
                                                             int n);

}  // namespace ggml_whisper::convert

#endif  // GGML_WHISPER_TOOLS_CONVERT_GPT2_VOCAB_H_
