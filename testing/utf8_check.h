// Test-only: is a byte string well-formed UTF-8 (RFC 3629)?
#ifndef GGML_WHISPER_TESTING_UTF8_CHECK_H_
#define GGML_WHISPER_TESTING_UTF8_CHECK_H_

#include <string>

namespace ggml_testing {

// True when `s` is well-formed UTF-8. Written independently of whisper/utf8 (it decodes each
// code point, then rejects overlong forms, surrogates U+D800..DFFF and values past U+10FFFF), so
// tests of that code can use it as their oracle. Returns the byte offset of the first bad
// sequence in *bad_at when given.
bool IsValidUtf8(const std::string& s, size_t* bad_at = nullptr);

}  // namespace ggml_testing

#endif  // GGML_WHISPER_TESTING_UTF8_CHECK_H_
