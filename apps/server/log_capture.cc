#include "apps/server/log_capture.h"

#include <cstdio>
#include <cstring>

#include "whisper/whisper.h"

namespace whisper::server {

void Record(const char* text);

namespace {

thread_local ErrorCapture* t_capture = nullptr;
bool g_quiet = false;

void Callback(ggml_log_level level, const char* text, void*) {
  if (text == nullptr) return;
  if (level == GGML_LOG_LEVEL_ERROR) {
    if (t_capture != nullptr) {
      Record(text);
    } else {
      std::fputs(text, stderr);
    }
    return;
  }
  if (level == GGML_LOG_LEVEL_DEBUG || g_quiet) return;
  std::fputs(text, stderr);
}

}  // namespace

void Record(const char* text) {
  ErrorCapture* c = t_capture;
  const bool ggml = std::strncmp(text, "ggml: ", 6) == 0;
  if (c->first_.empty() || (c->from_ggml_ && !ggml)) {
    c->first_ = text;
    c->from_ggml_ = ggml;
    while (!c->first_.empty() && (c->first_.back() == '\n' || c->first_.back() == '\r')) c->first_.pop_back();
  }
}

void InstallLogCapture(bool quiet) {
  g_quiet = quiet;
  whisper_log_set(Callback, nullptr);
}

ErrorCapture::ErrorCapture() : outer_(t_capture) { t_capture = this; }
ErrorCapture::~ErrorCapture() { t_capture = outer_; }

std::string ErrorCapture::FirstOr(const std::string& fallback) const { return first_.empty() ? fallback : first_; }

}  // namespace whisper::server
