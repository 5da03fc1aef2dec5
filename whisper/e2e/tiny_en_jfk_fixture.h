// A gtest fixture for whisper_full tests on the real tiny.en model: one context and jfk.wav's
// samples for the whole suite, whisper's error log lines collected per test, and greedy params.
#ifndef GGML_WHISPER_WHISPER_E2E_TINY_EN_JFK_FIXTURE_H_
#define GGML_WHISPER_WHISPER_E2E_TINY_EN_JFK_FIXTURE_H_

#include <string>
#include <utility>
#include <vector>

#include "apps/common/audio.h"
#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "whisper/whisper.h"

namespace whisper_e2e {

class TinyEnJfkTest : public ::testing::Test {
 protected:
  // The error lines whisper logged since the test began (whisper_log_set's callback).
  struct ErrorLog {
    std::vector<std::string> errors;
  };

  static void SetUpTestSuite() {
    whisper_log_set(Capture, &log_);
    const std::string model = testdata::ModelPath("ggml-tiny.en.bin");
    ctx_ = whisper_init_from_file_with_params(model.c_str(), whisper_context_default_params());
    ASSERT_NE(ctx_, nullptr) << testdata::MissingModelHint(model);
    auto jfk = whisper::LoadAudio16kMono(testdata::SharedData("jfk.wav"));
    ASSERT_TRUE(jfk.ok()) << jfk.status();
    jfk_ = new std::vector<float>(std::move(*jfk));
  }
  static void TearDownTestSuite() {
    whisper_free(ctx_);
    ctx_ = nullptr;
    delete jfk_;
    jfk_ = nullptr;
    whisper_log_set(nullptr, nullptr);
  }
  void SetUp() override { log_.errors.clear(); }

  // whisper.cpp's greedy defaults on 2 threads, without progress lines.
  static whisper_full_params Greedy() {
    whisper_full_params p = whisper_full_default_params(WHISPER_SAMPLING_GREEDY);
    p.n_threads = 2;
    p.print_progress = false;
    return p;
  }

  static inline whisper_context* ctx_ = nullptr;
  static inline std::vector<float>* jfk_ = nullptr;  // jfk.wav, 16 kHz mono
  static inline ErrorLog log_;

 private:
  static void Capture(ggml_log_level level, const char* text, void* user) {
    if (level == GGML_LOG_LEVEL_ERROR) static_cast<ErrorLog*>(user)->errors.push_back(text);
  }
};

}  // namespace whisper_e2e

#endif  // GGML_WHISPER_WHISPER_E2E_TINY_EN_JFK_FIXTURE_H_
