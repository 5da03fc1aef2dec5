#include "testing/utf8_check.h"

#include <cstdint>

namespace ggml_testing {

bool IsValidUtf8(const std::string& s, size_t* bad_at) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char b = static_cast<unsigned char>(s[i]);
    const int len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    bool ok = len > 0 && i + len <= s.size();
    uint32_t cp = len == 1 ? b : b & (0x7F >> len);
    for (int k = 1; ok && k < len; ++k) {
      const unsigned char c = static_cast<unsigned char>(s[i + k]);
      ok = (c >> 6) == 2;
      cp = cp << 6 | (c & 0x3F);
    }
    const uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
    ok = ok && cp >= min_cp[len] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    if (!ok) {
      if (bad_at != nullptr) *bad_at = i;
      return false;
    }
    i += len;
  }
  return true;
}

}  // namespace ggml_testing
