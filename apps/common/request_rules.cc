#include "apps/common/request_rules.h"

#include "cpu/threadpool.h"
#include "whisper/whisper.h"

namespace whisper {

static_assert(kMaxThreads == GGML_THREADPOOL_MAX_THREADS, "kMaxThreads is ggml's thread pool limit");

LanguageDecision DecideLanguage(bool multilingual, const std::string& language, bool translate) {
  LanguageDecision d;
  d.language = language;
  d.translate = translate;
  if (multilingual) return d;
  using Level = LanguageDecision::Level;
  d.language = "en";
  d.translate = false;
  if (language == "auto" || language.empty()) {
    d.notes.push_back({Level::kInfo, "the model is English-only: transcribing in English ('en') without "
                                     "language detection"});
  } else if (whisper_lang_id(language.c_str()) != 0) {  // 0 is "en" (also "english")
    d.notes.push_back({Level::kWarning, "The current model is English-only but the language parameter is set to '" +
                                            language + "'; using 'en' instead."});
  }
  if (translate) {
    d.notes.push_back({Level::kWarning, "The current model is English-only but the task parameter is set to "
                                        "'translate'; using 'transcribe' instead."});
  }
  return d;
}

}  // namespace whisper
