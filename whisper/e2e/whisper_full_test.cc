// whisper_full on the real tiny.en model: the return codes of failures (whisper.cpp 1.8.5's, by
// the step that failed, whatever the message says) and the time base of the results with VAD,
// on one state and split over two (whisper_full_parallel). Expected times are where the test
// placed the speech (jfk.wav's speech, 0.29 .. 10.52 s by Silero VAD, at known offsets). And
// the segment scores extension against their definitions (zlib called here directly).
#include <zlib.h>

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "apps/common/audio.h"
#include "whisper/e2e/tiny_en_jfk_fixture.h"
#include "whisper/whisper.h"

namespace whisper_e2e {
namespace {


class WhisperFullTest : public TinyEnJfkTest {};

// Aborts at the n-th check (1: before the encoder, 2: before the prompt's decoder pass, 3: before
// the first decoder step after it).
struct AbortAt {
  int n;
  int seen = 0;
};
bool AbortAtCheck(void* user) {
  auto* a = static_cast<AbortAt*>(user);
  return ++a->seen >= a->n;
}

int AbortedRun(whisper_context* ctx, const std::vector<float>& audio, int n, whisper_full_params p) {
  AbortAt a{n};
  p.abort_callback = AbortAtCheck;
  p.abort_callback_user_data = &a;
  return whisper_full(ctx, p, audio.data(), static_cast<int>(audio.size()));
}

// whisper.cpp returns -6 when whisper_encode_internal fails (an abort inside it included), -8 when
// the prompt's whisper_decode_internal does and -9 for a later step's. The logged message is the
// one the failure gave.
TEST_F(WhisperFullTest, AbortCodesAreWhisperCppsByStep) {
  EXPECT_EQ(AbortedRun(ctx_, *jfk_, 1, Greedy()), -6);
  ASSERT_EQ(log_.errors.size(), 1u);
  EXPECT_EQ(log_.errors[0], "whisper_full_with_state: aborted: aborted by abort_callback before the encoder\n");
  log_.errors.clear();
  EXPECT_EQ(AbortedRun(ctx_, *jfk_, 2, Greedy()), -8);
  ASSERT_EQ(log_.errors.size(), 1u);
  EXPECT_EQ(log_.errors[0], "whisper_full_with_state: aborted: aborted by abort_callback before the decoder step\n");
  log_.errors.clear();
  EXPECT_EQ(AbortedRun(ctx_, *jfk_, 3, Greedy()), -9);
  whisper_full_params beam = whisper_full_default_params(WHISPER_SAMPLING_BEAM_SEARCH);
  beam.n_threads = 2;
  EXPECT_EQ(AbortedRun(ctx_, *jfk_, 3, beam), -9);  // the batched step of 5 beams
}

// ggml_compression_ratio_thold (faster-whisper's compression_ratio_threshold): 2.4 by default; a
// negative or NaN value is -1 with one message naming the field, before anything is decoded.
TEST_F(WhisperFullTest, CompressionRatioThresholdIsChecked) {
  EXPECT_FLOAT_EQ(Greedy().ggml_compression_ratio_thold, 2.4f);
  for (float bad : {-1.0f, std::nanf("")}) {
    whisper_full_params p = Greedy();
    p.ggml_compression_ratio_thold = bad;
    log_.errors.clear();
    EXPECT_EQ(whisper_full(ctx_, p, jfk_->data(), static_cast<int>(jfk_->size())), -1);
    ASSERT_EQ(log_.errors.size(), 1u);
    EXPECT_NE(log_.errors[0].find("whisper_full_params.ggml_compression_ratio_thold"), std::string::npos)
        << log_.errors[0];
  }
}

// ggml_clip_timestamps / ggml_n_clip_timestamps (faster-whisper's clip_timestamps) and
// ggml_hallucination_silence_thold: off by default; a bad value is -1 with one message naming the
// field, before anything is decoded.
TEST_F(WhisperFullTest, ClipTimestampsAndHallucinationThresholdAreChecked) {
  const whisper_full_params d = Greedy();
  EXPECT_EQ(d.ggml_clip_timestamps, nullptr);
  EXPECT_EQ(d.ggml_n_clip_timestamps, 0);
  EXPECT_LT(d.ggml_hallucination_silence_thold, 0.0f);
  const float negative[] = {1.0f, -2.0f};
  const float nan[] = {std::nanf("")};
  const float inf[] = {INFINITY};
  const float fine[] = {1.0f, 2.0f};
  struct Case {
    const float* clips;
    int n;
    int offset_ms;
    float hallucination;
    const char* field;
  };
  const Case cases[] = {
      {negative, 2, 0, -1.0f, "ggml_clip_timestamps[1] = -2"},
      {nan, 1, 0, -1.0f, "ggml_clip_timestamps[0] = nan"},
      {inf, 1, 0, -1.0f, "ggml_clip_timestamps[0] = inf"},
      {nullptr, 2, 0, -1.0f, "ggml_n_clip_timestamps = 2 with NULL"},
      {fine, -1, 0, -1.0f, "ggml_n_clip_timestamps = -1"},
      {fine, 2, 500, -1.0f, "ggml_clip_timestamps with offset_ms 500"},
      {nullptr, 0, 0, std::nanf(""), "ggml_hallucination_silence_thold = nan"},
      {nullptr, 0, 0, INFINITY, "ggml_hallucination_silence_thold = inf"},
  };
  for (const Case& c : cases) {
    whisper_full_params p = Greedy();
    p.ggml_clip_timestamps = c.clips;
    p.ggml_n_clip_timestamps = c.n;
    p.offset_ms = c.offset_ms;
    p.ggml_hallucination_silence_thold = c.hallucination;
    log_.errors.clear();
    EXPECT_EQ(whisper_full(ctx_, p, jfk_->data(), static_cast<int>(jfk_->size())), -1) << c.field;
    ASSERT_EQ(log_.errors.size(), 1u) << c.field;
    EXPECT_NE(log_.errors[0].find(std::string("whisper_full_params.") + c.field), std::string::npos)
        << log_.errors[0];
  }
  whisper_full_params p = Greedy();
  p.ggml_clip_timestamps = fine;
  p.ggml_n_clip_timestamps = 2;
  log_.errors.clear();
  EXPECT_EQ(whisper_full_parallel(ctx_, p, jfk_->data(), static_cast<int>(jfk_->size()), 2), -1);
  ASSERT_EQ(log_.errors.size(), 1u);
  EXPECT_NE(log_.errors[0].find("ggml_clip_timestamps with n_processors = 2"), std::string::npos) << log_.errors[0];
}

// Clips of jfk.wav under both rule sets: only their text. OpenAI's rules: faster-whisper 1.2.1's
// clip_timestamps "1.5,5,7" gives " All Americans ask not." (1.5-4.34 s) and " For you, ask what
// you can do for your country." (7-11 s) (testdata/fw_clip_hallucination.json, clip_jfk; the CLI
// test compares tokens). whisper.cpp's rules read each clip as offset/duration: no segment starts
// before 1.5 s or in 5-7 s.
TEST_F(WhisperFullTest, ClipTimestampsTranscribeOnlyTheClips) {
  const float clips[] = {1.5f, 5.0f, 7.0f};
  for (whisper_ggml_decoding rules : {WHISPER_GGML_DECODING_OPENAI, WHISPER_GGML_DECODING_WHISPER_CPP}) {
    ASSERT_EQ(whisper_ggml_set_decoding(ctx_, rules), 0);
    whisper_full_params p = Greedy();
    p.ggml_clip_timestamps = clips;
    p.ggml_n_clip_timestamps = 3;
    p.suppress_nst = true;
    p.no_context = rules == WHISPER_GGML_DECODING_WHISPER_CPP;  // OpenAI's: condition_on_previous_text
    ASSERT_EQ(whisper_full(ctx_, p, jfk_->data(), static_cast<int>(jfk_->size())), 0);
    const int n = whisper_full_n_segments(ctx_);
    ASSERT_GE(n, 2) << rules;
    for (int i = 0; i < n; ++i) {
      const int64_t t0 = whisper_full_get_segment_t0(ctx_, i);
      EXPECT_GE(t0, 150) << rules << " segment " << i;
      EXPECT_FALSE(t0 >= 500 && t0 < 700) << rules << " segment " << i << " starts at " << t0;
    }
    if (rules == WHISPER_GGML_DECODING_OPENAI) {
      ASSERT_EQ(n, 2);
      EXPECT_STREQ(whisper_full_get_segment_text(ctx_, 0), " All Americans ask not.");
      EXPECT_EQ(whisper_full_get_segment_t1(ctx_, 0), 434);
      EXPECT_STREQ(whisper_full_get_segment_text(ctx_, 1), " For you, ask what you can do for your country.");
      EXPECT_EQ(whisper_full_get_segment_t0(ctx_, 1), 700);
    }
  }
  whisper_ggml_set_decoding(ctx_, WHISPER_GGML_DECODING_WHISPER_CPP);  // the fixture's default
}

// faster-whisper's options (beam_search.patience and the ggml_* extensions): defaults as
// faster-whisper's, and each bad value is -1 with one message naming its field, before decoding.
TEST_F(WhisperFullTest, FasterWhisperOptionsAreChecked) {
  const whisper_full_params d = Greedy();
  EXPECT_FLOAT_EQ(d.ggml_length_penalty, 1.0f);
  EXPECT_FLOAT_EQ(d.ggml_repetition_penalty, 1.0f);
  EXPECT_EQ(d.ggml_no_repeat_ngram_size, 0);
  EXPECT_EQ(d.ggml_max_new_tokens, 0);
  EXPECT_FLOAT_EQ(d.ggml_prompt_reset_on_temperature, 0.5f);
  struct Bad {
    const char* field;
    void (*set)(whisper_full_params*);
  };
  const Bad bad[] = {
      {"beam_search.patience", [](whisper_full_params* p) { p->beam_search.patience = 0.05f; }},
      {"beam_search.patience", [](whisper_full_params* p) { p->beam_search.patience = std::nanf(""); }},
      {"ggml_length_penalty", [](whisper_full_params* p) { p->ggml_length_penalty = INFINITY; }},
      {"ggml_repetition_penalty", [](whisper_full_params* p) { p->ggml_repetition_penalty = 0.0f; }},
      {"ggml_no_repeat_ngram_size", [](whisper_full_params* p) { p->ggml_no_repeat_ngram_size = -1; }},
      {"ggml_max_new_tokens", [](whisper_full_params* p) { p->ggml_max_new_tokens = -1; }},
      {"ggml_prompt_reset_on_temperature",
       [](whisper_full_params* p) { p->ggml_prompt_reset_on_temperature = std::nanf(""); }},
      // The prompt and window options (faster-whisper's suppress_tokens and chunk_length).
      {"ggml_chunk_length = 31", [](whisper_full_params* p) { p->ggml_chunk_length = 31; }},
      {"ggml_chunk_length = -1", [](whisper_full_params* p) { p->ggml_chunk_length = -1; }},
      {"ggml_n_suppress_tokens = 2 with ggml_suppress_tokens NULL",
       [](whisper_full_params* p) { p->ggml_n_suppress_tokens = 2; }},
      {"ggml_suppress_tokens[1] = -2",
       [](whisper_full_params* p) {
         static const whisper_token kIds[] = {11, -2};
         p->ggml_suppress_tokens = kIds;
         p->ggml_n_suppress_tokens = 2;
       }},
      // faster-whisper's prepend/append_punctuations must be UTF-8: a lone continuation byte, a
      // truncated 3-byte character (the first byte of "\u3002" only) and an overlong "/" (C0 AF).
      {"ggml_prepend_punctuations = \"(\\x80\": byte 1 (0x80) is not valid UTF-8",
       [](whisper_full_params* p) { p->ggml_prepend_punctuations = "(\x80"; }},
      {"ggml_append_punctuations = \".\\xe3\": byte 1 (0xe3)",
       [](whisper_full_params* p) { p->ggml_append_punctuations = ".\xE3"; }},
      {"ggml_append_punctuations = \"\\xc0\\xaf\": byte 0 (0xc0)",
       [](whisper_full_params* p) { p->ggml_append_punctuations = "\xC0\xAF"; }},
  };
  for (const Bad& b : bad) {
    whisper_full_params p = whisper_full_default_params(WHISPER_SAMPLING_BEAM_SEARCH);
    b.set(&p);
    log_.errors.clear();
    EXPECT_EQ(whisper_full(ctx_, p, jfk_->data(), static_cast<int>(jfk_->size())), -1) << b.field;
    ASSERT_EQ(log_.errors.size(), 1u) << b.field;
    EXPECT_NE(log_.errors[0].find(std::string("whisper_full_params.") + b.field), std::string::npos)
        << log_.errors[0];
  }
}

struct Times {
  int64_t t0, t1;
};

void RecordSegment(whisper_context* ctx, whisper_state*, int n_new, void* user) {
  auto* out = static_cast<std::vector<Times>*>(user);
  const int n = whisper_full_n_segments(ctx);
  for (int i = n - n_new; i < n; ++i) out->push_back({whisper_full_get_segment_t0(ctx, i), whisper_full_get_segment_t1(ctx, i)});
}

// 2 s of silence, jfk.wav, 8 s of silence, jfk.wav, 2 s of silence (34 s): the speech is at
// 2.29 .. 12.52 s and 21.29 .. 31.52 s. With VAD, on one state and on two (cut at 17 s, inside the
// silence), the first segment of each copy starts where its speech does and the last ends where
// the second copy's does (within 0.5 s), every segment and token time is inside a copy's speech
// (0.5 s margin), and the new-segment callback sees the times the getters give at the end.
TEST_F(WhisperFullTest, VadTimesAreTheInputsOnOneStateAndOnTwo) {
  const int64_t kRate = 16000;
  std::vector<float> audio(2 * kRate, 0.0f);
  audio.insert(audio.end(), jfk_->begin(), jfk_->end());
  ASSERT_EQ(jfk_->size(), 11u * kRate);
  audio.resize(audio.size() + 8 * kRate, 0.0f);
  audio.insert(audio.end(), jfk_->begin(), jfk_->end());
  audio.resize(audio.size() + 2 * kRate, 0.0f);
  const int64_t a0 = 229, a1 = 1252, b0 = 2129, b1 = 3152, tol = 50;  // centiseconds
  const std::string vad_model = testdata::ModelPath("ggml-silero-v6.bin");
  for (int n_processors : {1, 2}) {
    SCOPED_TRACE(n_processors);
    whisper_full_params p = Greedy();
    p.vad = true;
    p.vad_model_path = vad_model.c_str();
    p.token_timestamps = true;
    std::vector<Times> seen;
    p.new_segment_callback = RecordSegment;
    p.new_segment_callback_user_data = &seen;
    ASSERT_EQ(whisper_full_parallel(ctx_, p, audio.data(), static_cast<int>(audio.size()), n_processors), 0);
    const int n = whisper_full_n_segments(ctx_);
    ASSERT_GE(n, 2);
    ASSERT_EQ(static_cast<int>(seen.size()), n);
    int first_b = -1;
    for (int i = 0; i < n; ++i) {
      const int64_t t0 = whisper_full_get_segment_t0(ctx_, i), t1 = whisper_full_get_segment_t1(ctx_, i);
      EXPECT_EQ(seen[i].t0, t0) << i;
      EXPECT_EQ(seen[i].t1, t1) << i;
      const bool in_a = t0 >= a0 - tol && t1 <= a1 + tol, in_b = t0 >= b0 - tol && t1 <= b1 + tol;
      EXPECT_TRUE(in_a || in_b) << "segment " << i << " [" << t0 << ", " << t1 << "]: "
                                << whisper_full_get_segment_text(ctx_, i);
      if (in_b && first_b < 0) first_b = i;
      for (int j = 0; j < whisper_full_n_tokens(ctx_, i); ++j) {
        const whisper_token_data d = whisper_full_get_token_data(ctx_, i, j);
        if (d.t0 < 0) continue;
        const int64_t lo = in_b ? b0 : a0, hi = in_b ? b1 : a1;
        EXPECT_GE(d.t0, lo - tol) << i << "," << j;
        EXPECT_LE(d.t1, hi + tol) << i << "," << j;
      }
    }
    EXPECT_NEAR(whisper_full_get_segment_t0(ctx_, 0), a0, tol);
    ASSERT_GT(first_b, 0);
    EXPECT_NEAR(whisper_full_get_segment_t0(ctx_, first_b), b0, tol);
    EXPECT_NEAR(whisper_full_get_segment_t1(ctx_, n - 1), b1, tol);
  }
}

// The segment scores a server reports, read through the C API: avg_logprob is the mean plog of
// the text tokens the token getters give; compression_ratio is len / len(zlib.compress) of the
// trimmed text, computed here with zlib's compress2 at level 6 (Python's zlib.compress default).
TEST_F(WhisperFullTest, SegmentScoresMatchTheirDefinitions) {
  ASSERT_EQ(whisper_full(ctx_, Greedy(), jfk_->data(), static_cast<int>(jfk_->size())), 0);
  const int n = whisper_full_n_segments(ctx_);
  ASSERT_GE(n, 1);
  for (int i = 0; i < n; ++i) {
    double sum = 0;
    int n_text = 0;
    for (int j = 0; j < whisper_full_n_tokens(ctx_, i); ++j) {
      const whisper_token_data d = whisper_full_get_token_data(ctx_, i, j);
      if (d.id >= whisper_token_eot(ctx_)) continue;
      sum += d.plog;
      ++n_text;
    }
    ASSERT_GT(n_text, 0);
    EXPECT_NEAR(whisper_ggml_full_get_segment_avg_logprob(ctx_, i), sum / n_text, 1e-6);
    std::string text = whisper_full_get_segment_text(ctx_, i);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.erase(0, 1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
    std::vector<Bytef> out(compressBound(text.size()));
    uLongf n_out = out.size();
    ASSERT_EQ(compress2(out.data(), &n_out, reinterpret_cast<const Bytef*>(text.data()), text.size(), 6), Z_OK);
    EXPECT_NEAR(whisper_ggml_full_get_segment_compression_ratio(ctx_, i),
                static_cast<double>(text.size()) / static_cast<double>(n_out), 1e-6);
  }
  EXPECT_EQ(whisper_ggml_full_get_segment_avg_logprob(ctx_, n), 0.0f);
  EXPECT_EQ(whisper_ggml_full_get_segment_compression_ratio(ctx_, -1), 0.0f);
  EXPECT_EQ(whisper_ggml_full_get_segment_compression_ratio_from_state(nullptr, 0), 0.0f);
}

// whisper_ggml_full_get_segment_decoding on jfk.wav (one window): every segment reports the
// window's seek (0), temperature (0: greedy succeeded), avg_logprob and compression ratio -- that of
// the window's whole text, computed here from the segments' texts with zlib as in
// SegmentScoresMatchTheirDefinitions -- and each later segment the timestamp that opened it, the
// token of its start time (<|0.00|> + t0 / 2 cs, seek being 0). The Python test checks the same
// fields against faster-whisper 1.2.1 (test_segment_window_fields_are_faster_whispers).
TEST_F(WhisperFullTest, SegmentDecodingIsTheWindows) {
  ASSERT_EQ(whisper_full(ctx_, Greedy(), jfk_->data(), static_cast<int>(jfk_->size())), 0);
  const int n = whisper_full_n_segments(ctx_);
  ASSERT_GE(n, 2);
  std::string text;
  for (int i = 0; i < n; ++i) text += whisper_full_get_segment_text(ctx_, i);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.erase(0, 1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  std::vector<Bytef> out(compressBound(text.size()));
  uLongf n_out = out.size();
  ASSERT_EQ(compress2(out.data(), &n_out, reinterpret_cast<const Bytef*>(text.data()), text.size(), 6), Z_OK);
  whisper_ggml_segment_decoding first = {};
  ASSERT_EQ(whisper_ggml_full_get_segment_decoding(ctx_, 0, &first), 0);
  EXPECT_EQ(first.seek, 0);
  EXPECT_EQ(first.temperature, 0.0f);
  EXPECT_LT(first.avg_logprob, 0.0f);
  EXPECT_GT(first.avg_logprob, -1.0f);
  EXPECT_NEAR(first.compression_ratio, static_cast<double>(text.size()) / static_cast<double>(n_out), 1e-6);
  EXPECT_EQ(first.opening_timestamp, -1);  // segment 0's tokens start with its <|0.00|>
  EXPECT_EQ(whisper_full_get_token_id(ctx_, 0, 0), whisper_token_beg(ctx_));
  for (int i = 1; i < n; ++i) {
    whisper_ggml_segment_decoding d = {};
    ASSERT_EQ(whisper_ggml_full_get_segment_decoding(ctx_, i, &d), 0);
    EXPECT_EQ(d.seek, first.seek);
    EXPECT_EQ(d.temperature, first.temperature);
    EXPECT_EQ(d.avg_logprob, first.avg_logprob);
    EXPECT_EQ(d.compression_ratio, first.compression_ratio);
    EXPECT_EQ(d.opening_timestamp, whisper_token_beg(ctx_) + whisper_full_get_segment_t0(ctx_, i) / 2) << i;
  }
  whisper_ggml_segment_decoding d = {};
  EXPECT_EQ(whisper_ggml_full_get_segment_decoding(ctx_, n, &d), -1);
  EXPECT_EQ(whisper_ggml_full_get_segment_decoding(ctx_, 0, nullptr), -1);
  EXPECT_EQ(whisper_ggml_full_get_segment_decoding_from_state(nullptr, 0, &d), -1);
}

}  // namespace
}  // namespace whisper_e2e
