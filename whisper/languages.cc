#include "whisper/languages.h"

namespace whisper {
namespace {

constexpr const char* kCodes[kNumLanguageIds] = {
    "en", "zh", "de", "es", "ru", "ko", "fr", "ja", "pt", "tr", "pl", "ca", "nl", "ar", "sv", "it", "id",
    "hi", "fi", "vi", "he", "uk", "el", "ms", "cs", "ro", "da", "hu", "ta", "no", "th", "ur", "hr", "bg",
    "lt", "la", "mi", "ml", "cy", "sk", "te", "fa", "lv", "bn", "sr", "az", "sl", "kn", "et", "mk", "br",
    "eu", "is", "hy", "ne", "mn", "bs", "kk", "sq", "sw", "gl", "mr", "pa", "si", "km", "sn", "yo", "so",
    "af", "oc", "ka", "be", "tg", "sd", "gu", "am", "yi", "lo", "uz", "fo", "ht", "ps", "tk", "nn", "mt",
    "sa", "lb", "my", "bo", "tl", "mg", "as", "tt", "haw", "ln", "ha", "ba", "jw", "su", "yue",
};

}  // namespace

int LanguageId(const std::string& code) {
  for (int i = 0; i < kNumLanguageIds; ++i) {
    if (code == kCodes[i]) return i;
  }
  return -1;
}

const char* LanguageCode(int id) { return id >= 0 && id < kNumLanguageIds ? kCodes[id] : ""; }

}  // namespace whisper
