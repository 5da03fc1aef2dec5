// The library's log messages for a multi-threaded program: whisper_log_set takes one process-wide
// callback, but each request must report its own error. InstallLogCapture routes ERROR messages
// to the ErrorCapture active on the calling thread (whisper.h logs an API call's errors on the
// thread that made the call) and writes the others to stderr.
#ifndef GGML_WHISPER_APPS_SERVER_LOG_CAPTURE_H_
#define GGML_WHISPER_APPS_SERVER_LOG_CAPTURE_H_

#include <string>

namespace whisper::server {

// Installs the callback (whisper_log_set). quiet = true drops INFO and WARN messages; DEBUG
// messages are always dropped; an ERROR with no capture active on its thread goes to stderr.
void InstallLogCapture(bool quiet);

// While alive, records the ERROR messages logged on this thread. Captures nest: the innermost
// records.
class ErrorCapture {
 public:
  ErrorCapture();
  ~ErrorCapture();
  ErrorCapture(const ErrorCapture&) = delete;
  ErrorCapture& operator=(const ErrorCapture&) = delete;

  // The first message from the whisper layer (it names the call and the input), else the first
  // from ggml ("ggml: ..."), without trailing newlines; `fallback` when nothing was logged.
  std::string FirstOr(const std::string& fallback) const;

 private:
  friend void Record(const char* text);
  ErrorCapture* outer_;
  std::string first_;
  bool from_ggml_ = false;
};

}  // namespace whisper::server

#endif  // GGML_WHISPER_APPS_SERVER_LOG_CAPTURE_H_
