// Rules every front end applies to a request in the same way: the CLI (apps/cli/cli.cc), the
// stream tool (apps/stream/main.cc), the server (apps/server/inference.cc) and the Python
// package (python/core_module.cc -> ggml_whisper.WhisperModel), so one request gets one answer
// whichever of them it goes through.
#ifndef GGML_WHISPER_APPS_COMMON_REQUEST_RULES_H_
#define GGML_WHISPER_APPS_COMMON_REQUEST_RULES_H_

#include <string>
#include <vector>

namespace whisper {

// Largest thread count a transcription takes: -t of the CLI and server, cpu_threads of Python,
// whisper_full_params.n_threads. ggml's GGML_THREADPOOL_MAX_THREADS (cpu/threadpool.h; checked
// equal in request_rules.cc), the bound whisper_full itself enforces.
inline constexpr int kMaxThreads = 512;

// The language and task a request is decoded with, and what to tell its sender about them.
struct LanguageDecision {
  enum class Level {
    kInfo,     // nothing the sender asked for was changed (CLI: "note: ..."; Python: logging.info)
    kWarning,  // the request was changed (CLI: "warning: ..."; Python: logging.warning; server:
               // the reply's warnings)
  };
  struct Note {
    Level level;
    std::string message;  // one line, no trailing newline or "warning:" prefix
  };
  std::string language;  // a language code, or "auto" (detect)
  bool translate = false;
  std::vector<Note> notes;
};

// faster-whisper 1.2.1's rule for English-only models (faster_whisper/transcribe.py,
// WhisperModel.transcribe, and tokenizer.py, Tokenizer), for a request that asks for `language`
// (a code or full name whisper_lang_id knows, or "auto"; callers refuse unknown codes first) and
// `translate`:
//  - a multilingual model: the request unchanged, no notes;
//  - language "auto" (faster-whisper's language=None): "en" without detection, and an info note
//    (faster-whisper says nothing);
//  - a language other than English: "en", and a warning with faster-whisper's exact text: "The
//    current model is English-only but the language parameter is set to 'de'; using 'en'
//    instead.";
//  - translate: transcribe, and a warning in the same words ("... the task parameter is set to
//    'translate'; using 'transcribe' instead."). faster-whisper's Tokenizer drops the task of an
//    English-only model without a word; here it is said, as for the language.
// Never fails.
LanguageDecision DecideLanguage(bool multilingual, const std::string& language, bool translate);

}  // namespace whisper

#endif  // GGML_WHISPER_APPS_COMMON_REQUEST_RULES_H_
