// The C API (whisper/whisper.h) on the real tiny.en model: results against faster-whisper's
// tokens, callbacks, concurrency of states on one context, abort, zero allocation after warm-up,
// and misuse that must fail cleanly.
#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include <fstream>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testdata/paths.h"
#include "testing/alloc_counter.h"
#include "apps/common/audio.h"
#include "whisper/e2e/reference.h"
#include "whisper/whisper.h"

namespace whisper_e2e {
namespace {

void Silent(ggml_log_level, const char*, void*) {}

struct SegmentOut {
  int64_t t0, t1;
  std::string text;
  std::vector<int> ids;
  bool operator==(const SegmentOut& o) const { return t0 == o.t0 && t1 == o.t1 && text == o.text && ids == o.ids; }
};

std::vector<SegmentOut> Segments(whisper_state* st) {
  std::vector<SegmentOut> out;
  for (int i = 0; i < whisper_full_n_segments_from_state(st); ++i) {
    SegmentOut s{whisper_full_get_segment_t0_from_state(st, i), whisper_full_get_segment_t1_from_state(st, i),
                 whisper_full_get_segment_text_from_state(st, i), {}};
    for (int j = 0; j < whisper_full_n_tokens_from_state(st, i); ++j) {
      s.ids.push_back(whisper_full_get_token_id_from_state(st, i, j));
    }
    out.push_back(s);
  }
  return out;
}

class WhisperApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    whisper_log_set(Silent, nullptr);
    const std::string model = testdata::ModelPath("ggml-tiny.en.bin");
    ctx_ = whisper_init_from_file_with_params(model.c_str(), whisper_context_default_params());
    ASSERT_NE(ctx_, nullptr) << testdata::MissingModelHint(model);
    auto jfk = whisper::LoadAudio16kMono(testdata::SharedData("jfk.wav"));
    ASSERT_TRUE(jfk.ok()) << jfk.status();
    jfk_ = new std::vector<float>(std::move(*jfk));
  }
  static void TearDownTestSuite() {
    whisper_free(ctx_);
    delete jfk_;
  }
  static whisper_full_params Greedy() {
    whisper_full_params p = whisper_full_default_params(WHISPER_SAMPLING_GREEDY);
    p.n_threads = 2;
    return p;
  }
  static whisper_context* ctx_;
  static std::vector<float>* jfk_;
};
whisper_context* WhisperApiTest::ctx_ = nullptr;
std::vector<float>* WhisperApiTest::jfk_ = nullptr;

// Greedy through the API with OpenAI's rules (whisper_ggml_set_decoding): the window's tokens,
// timestamps included, are faster-whisper's. (whisper.cpp's rules, the default, are checked
// against whisper.cpp itself by tools/whisper_cpp/test_compat.sh.)
TEST_F(WhisperApiTest, GreedyTokensEqualFasterWhisper) {
  ASSERT_EQ(whisper_ggml_set_decoding(ctx_, WHISPER_GGML_DECODING_OPENAI), 0);
  const int ret = whisper_full(ctx_, Greedy(), jfk_->data(), static_cast<int>(jfk_->size()));
  ASSERT_EQ(whisper_ggml_set_decoding(ctx_, WHISPER_GGML_DECODING_WHISPER_CPP), 0);
  ASSERT_EQ(ret, 0);
  std::vector<int> got;
  for (int i = 0; i < whisper_full_n_segments(ctx_); ++i) {
    for (int j = 0; j < whisper_full_n_tokens(ctx_, i); ++j) got.push_back(whisper_full_get_token_id(ctx_, i, j));
  }
  const std::vector<std::vector<int>> ref = LoadReferenceWindows("testdata/jfk_faster_whisper_tokens.json");
  ASSERT_EQ(ref.size(), 1u);
  // The segments hold every decoded token but the second of each consecutive timestamp pair.
  std::vector<int> want;
  const int beg = whisper_token_beg(ctx_);
  for (size_t i = 0; i < ref[0].size(); ++i) {
    if (i > 0 && ref[0][i] > beg && ref[0][i - 1] > beg) continue;
    want.push_back(ref[0][i]);
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(whisper_full_lang_id(ctx_), 0);
  // faster-whisper's greedy text for these tokens (tools/reference/faster_whisper_tiny_en.py).
  EXPECT_STREQ(whisper_full_get_segment_text(ctx_, 0),
               " And so my fellow Americans ask not what your country can do for you");
}

// Probabilities and times are real and consistent: p in (0, 1], plog = log p, token times inside
// their segment, no_speech_prob in [0, 1].
TEST_F(WhisperApiTest, TokenDataIsConsistent) {
  whisper_full_params p = Greedy();
  p.token_timestamps = true;
  ASSERT_EQ(whisper_full(ctx_, p, jfk_->data(), static_cast<int>(jfk_->size())), 0);
  ASSERT_GT(whisper_full_n_segments(ctx_), 0);
  for (int i = 0; i < whisper_full_n_segments(ctx_); ++i) {
    const int64_t t0 = whisper_full_get_segment_t0(ctx_, i), t1 = whisper_full_get_segment_t1(ctx_, i);
    const float nsp = whisper_full_get_segment_no_speech_prob(ctx_, i);
    EXPECT_GE(nsp, 0.0f);
    EXPECT_LE(nsp, 1.0f);
    for (int j = 0; j < whisper_full_n_tokens(ctx_, i); ++j) {
      const whisper_token_data d = whisper_full_get_token_data(ctx_, i, j);
      EXPECT_GT(d.p, 0.0f) << i << "/" << j;
      EXPECT_LE(d.p, 1.0f);
      EXPECT_NEAR(std::log(d.p), d.plog, 1e-4);
      EXPECT_FLOAT_EQ(whisper_full_get_token_p(ctx_, i, j), d.p);
      EXPECT_GE(d.ptsum, 0.0f);
      EXPECT_LE(d.ptsum, 1.0001f);
      // The most probable timestamp, or 0 (whisper.cpp) when the rules suppressed them all.
      EXPECT_TRUE(d.tid == 0 || d.tid >= whisper_token_beg(ctx_)) << d.tid;
      EXPECT_LE(d.t0, d.t1) << i << "/" << j;
      EXPECT_GE(d.t0, t0) << i << "/" << j;
      EXPECT_LE(d.t1, t1) << i << "/" << j;
      EXPECT_EQ(d.t_dtw, -1);  // no dtw_token_timestamps
    }
  }
  // Without token_timestamps, token times stay -1 as in whisper.cpp.
  ASSERT_EQ(whisper_full(ctx_, Greedy(), jfk_->data(), static_cast<int>(jfk_->size())), 0);
  EXPECT_EQ(whisper_full_get_token_data(ctx_, 0, 1).t0, -1);
}

struct CallbackLog {
  std::vector<int> progress;
  int n_new_total = 0;
  int calls = 0;
  bool contiguous = true;
};

void OnSegment(whisper_context* ctx, whisper_state* st, int n_new, void* user) {
  auto* log = static_cast<CallbackLog*>(user);
  log->calls++;
  if (whisper_full_n_segments_from_state(st) != log->n_new_total + n_new) log->contiguous = false;
  log->n_new_total += n_new;
  (void)ctx;
}

void OnProgress(whisper_context*, whisper_state*, int progress, void* user) {
  static_cast<CallbackLog*>(user)->progress.push_back(progress);
}

// On jfk + 20 s of silence + jfk (two windows and more): every segment reported once, in order;
// progress non-decreasing in [0, 100], ending at 100.
TEST_F(WhisperApiTest, CallbacksSeeEverySegmentOnceAndMonotonicProgress) {
  std::vector<float> audio(*jfk_);
  audio.resize(audio.size() + 20 * 16000, 0.0f);
  audio.insert(audio.end(), jfk_->begin(), jfk_->end());
  CallbackLog log;
  whisper_full_params p = Greedy();
  p.new_segment_callback = OnSegment;
  p.new_segment_callback_user_data = &log;
  p.progress_callback = OnProgress;
  p.progress_callback_user_data = &log;
  ASSERT_EQ(whisper_full(ctx_, p, audio.data(), static_cast<int>(audio.size())), 0);
  const int n = whisper_full_n_segments(ctx_);
  EXPECT_GE(n, 3);
  EXPECT_EQ(log.n_new_total, n);
  EXPECT_TRUE(log.contiguous);
  ASSERT_GE(log.progress.size(), 2u);
  EXPECT_EQ(log.progress.front(), 0);
  EXPECT_EQ(log.progress.back(), 100);
  for (size_t i = 1; i < log.progress.size(); ++i) EXPECT_LE(log.progress[i - 1], log.progress[i]);
  for (int v : log.progress) {
    EXPECT_GE(v, 0);
    EXPECT_LE(v, 100);
  }
}

struct AbortLog {
  std::atomic<bool> stop{false};
  int checks_after_stop = 0;
  int encoder_runs = 0;
};

bool AbortWhenAsked(void* user) {
  auto* a = static_cast<AbortLog*>(user);
  if (a->stop) a->checks_after_stop++;
  return a->stop;
}

void StopAtFirstSegment(whisper_context*, whisper_state*, int, void* user) { static_cast<AbortLog*>(user)->stop = true; }

bool CountEncoder(whisper_context*, whisper_state*, void* user) {
  static_cast<AbortLog*>(user)->encoder_runs++;
  return true;
}

// Abort during the first window of 6 windows of speech: whisper_full returns non-zero at the
// next graph compute, and no further window is encoded.
TEST_F(WhisperApiTest, AbortStopsWithinOneStep) {
  std::vector<float> audio;
  for (int k = 0; k < 15; ++k) audio.insert(audio.end(), jfk_->begin(), jfk_->end());  // 165 s
  AbortLog a;
  whisper_full_params p = Greedy();
  p.abort_callback = AbortWhenAsked;
  p.abort_callback_user_data = &a;
  p.new_segment_callback = StopAtFirstSegment;
  p.new_segment_callback_user_data = &a;
  p.encoder_begin_callback = CountEncoder;
  p.encoder_begin_callback_user_data = &a;
  EXPECT_NE(whisper_full(ctx_, p, audio.data(), static_cast<int>(audio.size())), 0);
  EXPECT_EQ(a.checks_after_stop, 1);  // the first check after the flag stops the run
  EXPECT_LE(a.encoder_runs, 2);       // the window of the first segment, at most the next one's
  // encoder_begin returning false ends the run early without an error.
  whisper_full_params q = Greedy();
  q.encoder_begin_callback = [](whisper_context*, whisper_state*, void*) { return false; };
  EXPECT_EQ(whisper_full(ctx_, q, audio.data(), static_cast<int>(audio.size())), 0);
  EXPECT_EQ(whisper_full_n_segments(ctx_), 0);
}

// Four states on one context, four threads at once: each gives the segments one state gives
// alone (greedy and beam search alternate between the threads).
TEST_F(WhisperApiTest, FourStatesOnFourThreadsEqualOneAtATime) {
  auto run = [&](whisper_state* st, bool beam) {
    whisper_full_params p = whisper_full_default_params(beam ? WHISPER_SAMPLING_BEAM_SEARCH : WHISPER_SAMPLING_GREEDY);
    p.n_threads = 1;
    EXPECT_EQ(whisper_full_with_state(ctx_, st, p, jfk_->data(), static_cast<int>(jfk_->size())), 0);
    return Segments(st);
  };
  whisper_state* solo = whisper_init_state(ctx_);
  ASSERT_NE(solo, nullptr);
  const std::vector<SegmentOut> want_greedy = run(solo, false);
  const std::vector<SegmentOut> want_beam = run(solo, true);
  whisper_free_state(solo);
  ASSERT_FALSE(want_greedy.empty());
  std::vector<whisper_state*> states;
  for (int i = 0; i < 4; ++i) states.push_back(whisper_init_state(ctx_));
  std::vector<std::vector<SegmentOut>> got(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&, i] { got[i] = run(states[i], i % 2 == 1); });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(got[i] == (i % 2 == 1 ? want_beam : want_greedy)) << "state " << i;
    whisper_free_state(states[i]);
  }
}

// After a first whisper_full on a state, a second one on another file (jfk.mp3) makes no heap
// allocation: mel, encoder, decoder, sampling, segments and results all reuse their memory.
TEST_F(WhisperApiTest, SecondFullMakesNoHeapAllocation) {
  if (!ggml_testing::AllocCounter::Supported()) GTEST_SKIP() << "allocation counting unsupported in this build";
  auto mp3 = whisper::LoadAudio16kMono(testdata::SharedData("jfk.mp3"));
  ASSERT_TRUE(mp3.ok()) << mp3.status();
  whisper_state* st = whisper_init_state(ctx_);
  ASSERT_NE(st, nullptr);
  for (int mode = 0; mode < 4; ++mode) {
    const bool beam = mode % 2 == 1;
    ASSERT_EQ(whisper_ggml_set_decoding(ctx_, mode < 2 ? WHISPER_GGML_DECODING_WHISPER_CPP
                                                       : WHISPER_GGML_DECODING_OPENAI),
              0);
    whisper_full_params p = whisper_full_default_params(beam ? WHISPER_SAMPLING_BEAM_SEARCH : WHISPER_SAMPLING_GREEDY);
    p.n_threads = 2;
    ASSERT_EQ(whisper_full_with_state(ctx_, st, p, jfk_->data(), static_cast<int>(jfk_->size())), 0);
    ASSERT_LE(mp3->size(), jfk_->size());
    ggml_testing::AllocCounter::Start();
    const int ret = whisper_full_with_state(ctx_, st, p, mp3->data(), static_cast<int>(mp3->size()));
    const int64_t n = ggml_testing::AllocCounter::Stop();
    ASSERT_EQ(ret, 0);
    EXPECT_EQ(n, 0) << (beam ? "beam search" : "greedy") << (mode < 2 ? ", whisper.cpp rules" : ", OpenAI rules");
    EXPECT_GE(whisper_full_n_segments_from_state(st), 1);
  }
  ASSERT_EQ(whisper_ggml_set_decoding(ctx_, WHISPER_GGML_DECODING_WHISPER_CPP), 0);
  whisper_free_state(st);
}

// whisper.cpp's VAD API on the Silero v6 model: jfk.wav's window probabilities equal
// onnxruntime's (testdata/vad_onnxruntime.json, within 1e-4; the last window zero-padded as
// whisper.cpp pads it), the segments are in centiseconds, ordered and inside the audio; bad
// arguments and files are NULL / false with a message, never a crash.
TEST_F(WhisperApiTest, VadApi) {
  const std::string path = testdata::ModelPath("ggml-silero-v6.bin");
  whisper_vad_context* vctx = whisper_vad_init_from_file_with_params(path.c_str(), whisper_vad_default_context_params());
  ASSERT_NE(vctx, nullptr) << path << " (tools/setup.sh converts it)";
  const int n = static_cast<int>(jfk_->size());
  ASSERT_TRUE(whisper_vad_detect_speech(vctx, jfk_->data(), n));
  ASSERT_EQ(whisper_vad_n_probs(vctx), (n + 511) / 512);
  std::ifstream f("testdata/vad_onnxruntime.json");
  const nlohmann::json ref = nlohmann::json::parse(f, nullptr, false);
  const std::vector<float> want = ref["clips"][0]["probs"].get<std::vector<float>>();
  ASSERT_EQ(ref["clips"][0]["name"], "jfk");
  ASSERT_EQ(static_cast<int>(want.size()), whisper_vad_n_probs(vctx));
  for (int i = 0; i < whisper_vad_n_probs(vctx); ++i) EXPECT_NEAR(whisper_vad_probs(vctx)[i], want[i], 1e-4) << i;
  whisper_vad_segments* segs = whisper_vad_segments_from_probs(vctx, whisper_vad_default_params());
  ASSERT_NE(segs, nullptr);
  ASSERT_GE(whisper_vad_segments_n_segments(segs), 1);
  float last = 0.0f;
  for (int i = 0; i < whisper_vad_segments_n_segments(segs); ++i) {
    const float t0 = whisper_vad_segments_get_segment_t0(segs, i), t1 = whisper_vad_segments_get_segment_t1(segs, i);
    EXPECT_LE(last, t0);
    EXPECT_LT(t0, t1);
    EXPECT_LE(t1, 1101.0f);  // centiseconds: 11 s of audio (+ the padded window)
    last = t1;
  }
  whisper_vad_free_segments(segs);
  segs = whisper_vad_segments_from_samples(vctx, whisper_vad_default_params(), jfk_->data(), n);
  ASSERT_NE(segs, nullptr);
  EXPECT_GE(whisper_vad_segments_n_segments(segs), 1);
  whisper_vad_free_segments(segs);
  EXPECT_FALSE(whisper_vad_detect_speech(nullptr, jfk_->data(), n));
  EXPECT_FALSE(whisper_vad_detect_speech(vctx, nullptr, 16));
  EXPECT_EQ(whisper_vad_segments_from_probs(nullptr, whisper_vad_default_params()), nullptr);
  EXPECT_EQ(whisper_vad_segments_n_segments(nullptr), 0);
  whisper_vad_free(vctx);
  EXPECT_EQ(whisper_vad_init_from_file_with_params(nullptr, whisper_vad_default_context_params()), nullptr);
  EXPECT_EQ(whisper_vad_init_from_file_with_params(testdata::ModelPath("ggml-tiny.en.bin").c_str(),
                                                   whisper_vad_default_context_params()),
            nullptr);  // a Whisper model is not a VAD model
  // whisper_full with vad and a missing model: an error.
  whisper_full_params p = Greedy();
  p.vad = true;
  p.vad_model_path = "/nonexistent/vad.bin";
  EXPECT_EQ(whisper_full(ctx_, p, jfk_->data(), n), -1);
}

// whisper_full with VAD, twice: the second call (another file of the same length) makes no heap
// allocation, VAD included, and the segments' times are inside the audio.
TEST_F(WhisperApiTest, VadFullSecondCallMakesNoHeapAllocation) {
  if (!ggml_testing::AllocCounter::Supported()) GTEST_SKIP() << "allocation counting unsupported in this build";
  auto mp3 = whisper::LoadAudio16kMono(testdata::SharedData("jfk.mp3"));
  ASSERT_TRUE(mp3.ok()) << mp3.status();
  const std::string vad_model = testdata::ModelPath("ggml-silero-v6.bin");
  whisper_state* st = whisper_init_state(ctx_);
  ASSERT_NE(st, nullptr);
  whisper_full_params p = Greedy();
  p.vad = true;
  p.vad_model_path = vad_model.c_str();
  ASSERT_EQ(whisper_full_with_state(ctx_, st, p, jfk_->data(), static_cast<int>(jfk_->size())), 0);
  ggml_testing::AllocCounter::Start();
  const int ret = whisper_full_with_state(ctx_, st, p, mp3->data(), static_cast<int>(mp3->size()));
  const int64_t allocations = ggml_testing::AllocCounter::Stop();
  ASSERT_EQ(ret, 0);
  EXPECT_EQ(allocations, 0);
  ASSERT_GE(whisper_full_n_segments_from_state(st), 1);
  for (int i = 0; i < whisper_full_n_segments_from_state(st); ++i) {
    EXPECT_GE(whisper_full_get_segment_t0_from_state(st, i), 0);
    EXPECT_LE(whisper_full_get_segment_t1_from_state(st, i), 1100);
  }
  whisper_free_state(st);
}

// whisper_full_parallel on jfk + 20 s of silence + jfk with 2 processors: the audio is cut at
// 21 s (whisper.cpp's equal split), each half on its own state and thread; the second half's
// segments come after the first's with times shifted by 21 s, in order and not overlapping, and
// every segment is announced once.
TEST_F(WhisperApiTest, ParallelSplitsAndJoinsTheHalves) {
  std::vector<float> audio(*jfk_);
  audio.resize(audio.size() + 20 * 16000, 0.0f);
  audio.insert(audio.end(), jfk_->begin(), jfk_->end());
  CallbackLog log;
  whisper_full_params p = Greedy();
  p.n_threads = 1;
  p.new_segment_callback = OnSegment;
  p.new_segment_callback_user_data = &log;
  ASSERT_EQ(whisper_full_parallel(ctx_, p, audio.data(), static_cast<int>(audio.size()), 2), 0);
  const int n = whisper_full_n_segments(ctx_);
  ASSERT_GE(n, 2);
  EXPECT_EQ(log.n_new_total, n);
  std::string first, second;
  for (int i = 0; i < n; ++i) {
    const int64_t t0 = whisper_full_get_segment_t0(ctx_, i), t1 = whisper_full_get_segment_t1(ctx_, i);
    EXPECT_LE(t0, t1) << i;
    if (i > 0) {
      EXPECT_GE(t0, whisper_full_get_segment_t1(ctx_, i - 1)) << i;
    }
    (t0 < 2100 ? first : second) += whisper_full_get_segment_text(ctx_, i);
  }
  // Each half holds one copy of the speech, the second half's times shifted past the cut (the
  // model may open its first segment at the start of its silence, as whisper.cpp's does).
  EXPECT_NE(first.find("ask not what your country can do for you"), std::string::npos) << first;
  EXPECT_NE(second.find("ask not what your country can do for you"), std::string::npos) << second;
  EXPECT_LE(whisper_full_get_segment_t1(ctx_, n - 1), 4200 + 100);
}

// DTW token timestamps through the C API (dtw_token_timestamps, tiny.en's preset): under
// whisper.cpp's rules every text token gets a t_dtw, non-decreasing and inside the audio, and no
// word marks (whisper.cpp's -dtw); under OpenAI's rules the tokens also start 22 words (faster-
// whisper's count for jfk.wav greedy, testdata/word_timestamps_faster_whisper.json), each with
// t0 <= t1 inside its segment and the probability faster-whisper 1.2.1 gives the word
// (whisper_ggml_full_get_token_word_probability: the alignment pass's; within 1e-2 of
// testdata/fw_word_probability.json, 2.3e-3 when it was written), the same at each of its tokens.
// A preset that does not fit the model fails at init.
TEST_F(WhisperApiTest, DtwTimestamps) {
  const std::string model = testdata::ModelPath("ggml-tiny.en.bin");
  whisper_context_params cp = whisper_context_default_params();
  cp.dtw_token_timestamps = true;
  cp.dtw_aheads_preset = WHISPER_AHEADS_TINY_EN;
  whisper_context* ctx = whisper_init_from_file_with_params_no_state(model.c_str(), cp);
  ASSERT_NE(ctx, nullptr);
  whisper_state* st = whisper_init_state(ctx);
  ASSERT_NE(st, nullptr);
  const int n = static_cast<int>(jfk_->size());
  std::ifstream f("testdata/fw_word_probability.json");
  const nlohmann::json ref = nlohmann::json::parse(f, nullptr, false);
  std::vector<double> want;  // faster-whisper's, tiny.en greedy on jfk.wav (the file's first run)
  ASSERT_TRUE(!ref.is_discarded() && ref["runs"][0]["audio"] == "jfk.wav" && ref["runs"][0]["options"]["beam_size"] == 1);
  for (const auto& s : ref["runs"][0]["segments"]) {
    for (const auto& w : s["words"]) want.push_back(w["probability"].get<double>());
  }
  ASSERT_EQ(want.size(), 22u);
  for (whisper_ggml_decoding rules : {WHISPER_GGML_DECODING_WHISPER_CPP, WHISPER_GGML_DECODING_OPENAI}) {
    SCOPED_TRACE(rules == WHISPER_GGML_DECODING_OPENAI ? "OpenAI's rules" : "whisper.cpp's rules");
    std::vector<float> got;  // each word's, at its first token
    float word_p = -1.0f;
    ASSERT_EQ(whisper_ggml_set_decoding(ctx, rules), 0);
    ASSERT_EQ(whisper_full_with_state(ctx, st, Greedy(), jfk_->data(), n), 0);
    int64_t last = 0;
    int n_text = 0, n_words = 0;
    for (int i = 0; i < whisper_full_n_segments_from_state(st); ++i) {
      const int64_t s0 = whisper_full_get_segment_t0_from_state(st, i);
      const int64_t s1 = whisper_full_get_segment_t1_from_state(st, i);
      for (int j = 0; j < whisper_full_n_tokens_from_state(st, i); ++j) {
        const whisper_token_data d = whisper_full_get_token_data_from_state(st, i, j);
        const int w = whisper_ggml_full_get_token_word_start_from_state(st, i, j);
        const float p = whisper_ggml_full_get_token_word_probability_from_state(st, i, j);
        if (d.id >= whisper_token_eot(ctx)) {
          EXPECT_EQ(p, -1.0f);  // timestamps belong to no word
          continue;
        }
        ++n_text;
        EXPECT_GE(d.t_dtw, last) << "segment " << i << " token " << j;
        EXPECT_LE(d.t_dtw, 1100);
        last = d.t_dtw;
        if (rules == WHISPER_GGML_DECODING_WHISPER_CPP) {
          EXPECT_EQ(w, -1);
          EXPECT_EQ(p, -1.0f);
        } else {
          ASSERT_GE(w, 0);
          n_words += w;
          if (w == 1) got.push_back(p);
          if (w == 0) {
            EXPECT_EQ(p, word_p) << "segment " << i << " token " << j;
          }
          word_p = p;
          EXPECT_LE(s0, d.t0);
          EXPECT_LE(d.t0, d.t1);
          EXPECT_LE(d.t1, s1);
        }
      }
    }
    EXPECT_GT(n_text, 20);
    if (rules == WHISPER_GGML_DECODING_OPENAI) {
      EXPECT_EQ(n_words, 22);
      ASSERT_EQ(got.size(), want.size());
      for (size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], want[k], 1e-2) << "word " << k;
    }
  }
  EXPECT_EQ(whisper_ggml_full_get_token_word_probability_from_state(st, 0, 9999), -1.0f);
  EXPECT_EQ(whisper_ggml_full_get_token_word_probability_from_state(nullptr, 0, 0), -1.0f);
  whisper_free_state(st);
  whisper_free(ctx);

  cp.dtw_aheads_preset = WHISPER_AHEADS_BASE_EN;  // layers 3..5: tiny.en has 4
  EXPECT_EQ(whisper_init_from_file_with_params_no_state(model.c_str(), cp), nullptr);
  cp.dtw_aheads_preset = WHISPER_AHEADS_N_TOP_MOST;
  cp.dtw_n_top = 0;
  EXPECT_EQ(whisper_init_from_file_with_params_no_state(model.c_str(), cp), nullptr);
  cp.dtw_aheads_preset = WHISPER_AHEADS_CUSTOM;
  cp.dtw_aheads = {2, nullptr};
  EXPECT_EQ(whisper_init_from_file_with_params_no_state(model.c_str(), cp), nullptr);
  cp.dtw_aheads_preset = WHISPER_AHEADS_NONE;
  EXPECT_EQ(whisper_init_from_file_with_params_no_state(model.c_str(), cp), nullptr);
}

// Misuse gives errors, never a crash.
TEST_F(WhisperApiTest, MisuseFailsCleanly) {
  whisper_full_params p = Greedy();
  EXPECT_EQ(whisper_full(nullptr, p, jfk_->data(), 16000), -1);
  EXPECT_EQ(whisper_full_with_state(ctx_, nullptr, p, jfk_->data(), 16000), -1);
  EXPECT_EQ(whisper_full_n_segments(nullptr), 0);
  EXPECT_EQ(whisper_full_get_segment_text(ctx_, 1000), nullptr);
  EXPECT_EQ(whisper_full_get_segment_text(ctx_, -1), nullptr);
  EXPECT_EQ(whisper_full_get_token_id(ctx_, 0, 100000), -1);
  EXPECT_EQ(whisper_token_to_str(ctx_, -5), nullptr);
  EXPECT_EQ(whisper_token_to_str(ctx_, whisper_n_vocab(ctx_)), nullptr);
  EXPECT_EQ(whisper_n_vocab(nullptr), -1);
  // A state of another context.
  whisper_context* other = whisper_init_from_file_with_params_no_state(
      testdata::ModelPath("ggml-tiny.en.bin").c_str(), whisper_context_default_params());
  ASSERT_NE(other, nullptr);
  whisper_state* foreign = whisper_init_state(other);
  EXPECT_EQ(whisper_full_with_state(ctx_, foreign, p, jfk_->data(), static_cast<int>(jfk_->size())), -1);
  EXPECT_EQ(whisper_full(other, p, jfk_->data(), static_cast<int>(jfk_->size())), -1);  // no default state
  whisper_free_state(foreign);
  whisper_free(other);
  // Bad parameters and not-yet-implemented features.
  p.vad = true;
  EXPECT_EQ(whisper_full(ctx_, p, jfk_->data(), static_cast<int>(jfk_->size())), -1);
  p = Greedy();
  p.suppress_regex = "(";  // not a regular expression: an error, not std::regex_error escaping
  EXPECT_EQ(whisper_full(ctx_, p, jfk_->data(), static_cast<int>(jfk_->size())), -1);
  p = Greedy();
  p.audio_ctx = 100000;
  EXPECT_EQ(whisper_full(ctx_, p, jfk_->data(), static_cast<int>(jfk_->size())), -5);
  p = whisper_full_default_params(WHISPER_SAMPLING_BEAM_SEARCH);
  p.beam_search.beam_size = WHISPER_GGML_MAX_DECODERS + 1;  // 33: over the limit
  EXPECT_EQ(whisper_full(ctx_, p, jfk_->data(), static_cast<int>(jfk_->size())), -4);
  std::vector<float> nan(*jfk_);
  nan[1234] = NAN;
  EXPECT_EQ(whisper_full(ctx_, Greedy(), nan.data(), static_cast<int>(nan.size())), -2);
  EXPECT_EQ(whisper_full(ctx_, Greedy(), jfk_->data(), 100), 0);  // < 100 ms: nothing, as whisper.cpp
  // Past the end: whisper.cpp's "input is too short" warning, success, no segments.
  p = Greedy();
  p.offset_ms = 20000;
  EXPECT_EQ(whisper_full(ctx_, p, jfk_->data(), static_cast<int>(jfk_->size())), 0);
  EXPECT_EQ(whisper_full_n_segments(ctx_), 0);
  p = Greedy();
  p.n_threads = 100000;  // rejected before any thread is started
  EXPECT_EQ(whisper_full(ctx_, p, jfk_->data(), static_cast<int>(jfk_->size())), -1);
  EXPECT_EQ(whisper_pcm_to_mel(ctx_, jfk_->data(), static_cast<int>(jfk_->size()), 100000), -1);
  // A failed whisper_pcm_to_mel never leaves a dangling mel: the state's mel is either the old one
  // or none (then whisper_full without samples is an error).
  ASSERT_EQ(whisper_pcm_to_mel(ctx_, jfk_->data(), static_cast<int>(jfk_->size()), 2), 0);
  EXPECT_EQ(whisper_pcm_to_mel(ctx_, nan.data(), static_cast<int>(nan.size()), 2), -1);
  const int again = whisper_full(ctx_, Greedy(), nullptr, 0);
  EXPECT_TRUE(again == 0 || again == -1) << again;
  // whisper_full_parallel with parts shorter than the decoding minimum, and too many parts.
  const int n15 = 24000;  // 1.5 s
  EXPECT_EQ(whisper_full_parallel(ctx_, Greedy(), jfk_->data(), n15, 3), 0);
  for (int i = 0; i < whisper_full_n_segments(ctx_); ++i) {
    EXPECT_LE(whisper_full_get_segment_t0(ctx_, i), whisper_full_get_segment_t1(ctx_, i)) << i;
  }
  EXPECT_EQ(whisper_full_parallel(ctx_, Greedy(), jfk_->data(), static_cast<int>(jfk_->size()), 1000), -1);
  // A fresh state reports language 0 ("en") as whisper.cpp does.
  whisper_state* fresh = whisper_init_state(ctx_);
  EXPECT_EQ(whisper_full_lang_id_from_state(fresh), 0);
  whisper_free_state(fresh);
  EXPECT_EQ(whisper_ggml_set_decoding(ctx_, static_cast<whisper_ggml_decoding>(7)), -1);
  EXPECT_EQ(whisper_ggml_set_decoding(nullptr, WHISPER_GGML_DECODING_OPENAI), -1);
  EXPECT_EQ(whisper_full(ctx_, Greedy(), jfk_->data(), 100), 0);
  EXPECT_EQ(whisper_full_n_segments(ctx_), 0);
  EXPECT_EQ(whisper_init_from_file_with_params("/nonexistent/model.bin", whisper_context_default_params()), nullptr);
  const char junk[] = "ggml but not a model";
  EXPECT_EQ(whisper_init_from_buffer_with_params(const_cast<char*>(junk), sizeof(junk),
                                                 whisper_context_default_params()),
            nullptr);
}

// Getters and the tokenizer against whisper.cpp's values for tiny.en.
TEST_F(WhisperApiTest, GettersAndTokenizer) {
  EXPECT_EQ(whisper_n_vocab(ctx_), 51864);
  EXPECT_EQ(whisper_n_text_ctx(ctx_), 448);
  EXPECT_EQ(whisper_n_audio_ctx(ctx_), 1500);
  EXPECT_EQ(whisper_is_multilingual(ctx_), 0);
  EXPECT_EQ(whisper_model_type(ctx_), 1);
  EXPECT_STREQ(whisper_model_type_readable(ctx_), "tiny");
  EXPECT_EQ(whisper_token_eot(ctx_), 50256);
  EXPECT_EQ(whisper_token_sot(ctx_), 50257);
  EXPECT_EQ(whisper_token_beg(ctx_), 50363);
  EXPECT_EQ(whisper_lang_id("de"), 2);
  EXPECT_EQ(whisper_lang_id("german"), 2);
  EXPECT_EQ(whisper_lang_id("xx"), -1);
  EXPECT_STREQ(whisper_lang_str(2), "de");
  EXPECT_STREQ(whisper_lang_str_full(99), "cantonese");
  EXPECT_EQ(whisper_lang_max_id(), 99);
  whisper_token ids[8];
  const int n = whisper_tokenize(ctx_, " hello world", ids, 8);
  ASSERT_EQ(n, 2);
  EXPECT_STREQ(whisper_token_to_str(ctx_, ids[0]), " hello");
  EXPECT_STREQ(whisper_token_to_str(ctx_, ids[1]), " world");
  EXPECT_EQ(whisper_tokenize(ctx_, " hello world", ids, 1), -2);
  EXPECT_EQ(whisper_token_count(ctx_, " hello world"), 2);
  // Every byte has a token of its own (GPT-2's 256 byte-level tokens, stored raw: 0xFE is id
  // 186, 0xFF id 187), so text that is not UTF-8 still tokenizes without skipping (bytes no token
  // starts are skipped as whisper.cpp does: //whisper:tokenizer_test); long text is linear,
  // without recursion. " h\xff\xfello" splits into " h", "\xff\xfe", "llo".
  ASSERT_EQ(whisper_tokenize(ctx_, " h\xff\xfello", ids, 8), 4);
  EXPECT_EQ(std::vector<whisper_token>(ids, ids + 4), (std::vector<whisper_token>{289, 187, 186, 18798}));
  const std::string long_text(60000, 'a');
  EXPECT_GT(whisper_token_count(ctx_, long_text.c_str()), 0);
  // Low level: mel, encode, decode [sot] gives logits whose best timestamp-free start is a
  // timestamp or text token, and whisper_n_len counts the audio's frames.
  ASSERT_EQ(whisper_pcm_to_mel(ctx_, jfk_->data(), static_cast<int>(jfk_->size()), 2), 0);
  EXPECT_EQ(whisper_n_len(ctx_), 1099);  // 1 + (176000 + 200 - 400) / 160
  ASSERT_EQ(whisper_encode(ctx_, 0, 2), 0);
  const whisper_token sot = whisper_token_sot(ctx_);
  ASSERT_EQ(whisper_decode(ctx_, &sot, 1, 0, 2), 0);
  const float* logits = whisper_get_logits(ctx_);
  ASSERT_NE(logits, nullptr);
  int best = 0;
  for (int i = 1; i < whisper_n_vocab(ctx_); ++i) best = logits[i] > logits[best] ? i : best;
  // Raw logits (no filters): tiny.en's top token after [sot] is <|notimestamps|> (50362) here;
  // whisper_full suppresses it, which is why transcripts open with <|0.00|>.
  EXPECT_EQ(best, whisper_token_not(ctx_));
  EXPECT_EQ(whisper_decode(ctx_, &sot, 1, 448, 2), 1);  // past n_text_ctx
}

}  // namespace
}  // namespace whisper_e2e
