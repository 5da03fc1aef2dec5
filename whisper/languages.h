// Whisper's language table: whisper.cpp's g_lang ids (src/whisper.cpp L280-381), which follow
// OpenAI's LANGUAGES order (whisper/tokenizer.py): id 0 "en" ... id 99 "yue". A language's token
// is sot + 1 + id.
#ifndef GGML_WHISPER_WHISPER_LANGUAGES_H_
#define GGML_WHISPER_WHISPER_LANGUAGES_H_

#include <string>

namespace whisper {

inline constexpr int kNumLanguageIds = 100;

// The id of a language code ("en", "de", ...), or -1 when unknown.
int LanguageId(const std::string& code);
// The code of id 0..99, or "" when out of range.
const char* LanguageCode(int id);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_LANGUAGES_H_
