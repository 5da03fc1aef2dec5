// Test helpers for ggml/: capture the log callback, check the last error.
#ifndef GGML_WHISPER_GGML_TEST_UTIL_H_
#define GGML_WHISPER_GGML_TEST_UTIL_H_

#include <string>
#include <vector>

#include "ggml/ggml.h"
#include "gtest/gtest.h"

namespace ggml_test {

// Collects every message passed to the ggml log callback while alive (and silences stderr).
class LogCapture {
 public:
  LogCapture() {
    ggml_clear_error();
    ggml_log_set(&LogCapture::Append, this);
  }
  ~LogCapture() { ggml_log_set(nullptr, nullptr); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  const std::vector<std::string>& messages() const { return messages_; }
  void clear() { messages_.clear(); }

 private:
  static void Append(ggml_log_level, const char* message, void* self) {
    static_cast<LogCapture*>(self)->messages_.push_back(message);
  }
  std::vector<std::string> messages_;
};

// The last error contains every one of `parts` (and was logged once since `log` was cleared).
inline ::testing::AssertionResult ErrorMentions(const LogCapture& log, std::vector<std::string> parts) {
  const std::string error = ggml_last_error();
  if (error.empty()) return ::testing::AssertionFailure() << "ggml_last_error() is empty";
  for (const std::string& part : parts) {
    if (error.find(part) == std::string::npos) {
      return ::testing::AssertionFailure() << "error \"" << error << "\" does not mention \"" << part << "\"";
    }
  }
  if (log.messages().empty() || log.messages().back() != error) {
    return ::testing::AssertionFailure() << "error \"" << error << "\" was not passed to the log callback";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace ggml_test

#endif  // GGML_WHISPER_GGML_TEST_UTIL_H_
