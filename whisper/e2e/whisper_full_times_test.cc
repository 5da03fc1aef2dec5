// whisper.cpp 1.9.3's result getters on the real tiny.en model: whisper_full_get_token_t0/t1
// (token times in the input's time, through VAD) and whisper_full_n_vad_segments /
// whisper_full_get_vad_segment_t0/t1 (the speech stretches whisper_full's VAD joined). The VAD
// stretches are checked against faster-whisper 1.2.1's get_speech_timestamps on onnxruntime's
// Silero probabilities (testdata/vad_onnxruntime.json, whisper.cpp's VAD defaults), placed where
// this test put jfk.wav in its clip; token times against their segments and the stretches.
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "apps/common/audio.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testdata/paths.h"
#include "whisper/e2e/tiny_en_jfk_fixture.h"
#include "whisper/whisper.h"

namespace whisper_e2e {
namespace {

constexpr int64_t kRate = 16000;

struct Span {
  int64_t t0, t1;  // centiseconds
};

class WhisperFullTimesTest : public TinyEnJfkTest {};

// faster-whisper's speech stretches of a clip of testdata/vad_onnxruntime.json under whisper.cpp's
// VAD defaults (samples), in centiseconds as whisper.cpp rounds them (samples_to_cs), shifted by
// `shift_cs`.
std::vector<Span> ReferenceSpeech(const std::string& clip, int64_t shift_cs) {
  std::ifstream f("testdata/vad_onnxruntime.json");
  const nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
  std::vector<Span> out;
  if (j.is_discarded()) return out;
  for (const auto& c : j["clips"]) {
    if (c["name"] != clip) continue;
    for (const auto& s : c["speech"]["whisper_cpp"]) {
      out.push_back({(s[0].get<int64_t>() + 80) / 160 + shift_cs, (s[1].get<int64_t>() + 80) / 160 + shift_cs});
    }
  }
  return out;
}

std::vector<Span> VadSegments(whisper_context* ctx) {
  std::vector<Span> out;
  for (int i = 0; i < whisper_full_n_vad_segments(ctx); ++i) {
    out.push_back({whisper_full_get_vad_segment_t0(ctx, i), whisper_full_get_vad_segment_t1(ctx, i)});
  }
  return out;
}

// whisper_vad_segments_from_samples on samples [begin, end) of `audio` with whisper.cpp's VAD
// defaults, shifted by `shift_cs`.
std::vector<Span> SpeechOf(const std::vector<float>& audio, size_t begin, size_t end, int64_t shift_cs) {
  std::vector<Span> out;
  const std::string model = testdata::ModelPath("ggml-silero-v6.bin");
  whisper_vad_context* vctx = whisper_vad_init_from_file_with_params(model.c_str(), whisper_vad_default_context_params());
  if (vctx == nullptr) return out;
  whisper_vad_segments* segs = whisper_vad_segments_from_samples(vctx, whisper_vad_default_params(),
                                                                 audio.data() + begin, static_cast<int>(end - begin));
  for (int i = 0; segs != nullptr && i < whisper_vad_segments_n_segments(segs); ++i) {
    out.push_back({static_cast<int64_t>(whisper_vad_segments_get_segment_t0(segs, i)) + shift_cs,
                   static_cast<int64_t>(whisper_vad_segments_get_segment_t1(segs, i)) + shift_cs});
  }
  whisper_vad_free_segments(segs);
  whisper_vad_free(vctx);
  return out;
}

void ExpectSpans(const std::vector<Span>& got, size_t from, const std::vector<Span>& want, const char* what) {
  ASSERT_GE(got.size(), from + want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[from + i].t0, want[i].t0) << what << " " << i;
    EXPECT_EQ(got[from + i].t1, want[i].t1) << what << " " << i;
  }
}

// Ordered, non-overlapping, not empty.
void ExpectOrdered(const std::vector<Span>& v) {
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_LT(v[i].t0, v[i].t1) << i;
    if (i > 0) {
      EXPECT_LE(v[i - 1].t1, v[i].t0) << i;
    }
  }
}

// Every token with a time: t0 <= t1, both inside its segment, each inside a speech stretch
// (never in removed silence); token data equal. Returns the number of tokens checked.
int CheckTokenTimes(whisper_context* ctx, const std::vector<Span>& speech) {
  auto in_speech = [&](int64_t t) {
    for (const Span& s : speech) {
      if (t >= s.t0 && t <= s.t1) return true;
    }
    return false;
  };
  int n_checked = 0;
  for (int i = 0; i < whisper_full_n_segments(ctx); ++i) {
    const int64_t s0 = whisper_full_get_segment_t0(ctx, i), s1 = whisper_full_get_segment_t1(ctx, i);
    for (int j = 0; j < whisper_full_n_tokens(ctx, i); ++j) {
      const int64_t t0 = whisper_full_get_token_t0(ctx, i, j), t1 = whisper_full_get_token_t1(ctx, i, j);
      const whisper_token_data d = whisper_full_get_token_data(ctx, i, j);
      SCOPED_TRACE(testing::Message() << "segment " << i << " [" << s0 << ", " << s1 << "] token " << j << " ["
                                      << t0 << ", " << t1 << "] " << whisper_full_get_token_text(ctx, i, j));
      EXPECT_EQ(t0, d.t0);
      EXPECT_EQ(t1, d.t1);
      EXPECT_GE(t0, 0);
      EXPECT_LE(t0, t1);
      EXPECT_GE(t0, s0);
      EXPECT_LE(t1, s1);
      EXPECT_TRUE(in_speech(t0));
      EXPECT_TRUE(in_speech(t1));
      ++n_checked;
    }
  }
  return n_checked;
}

// jfk.wav, 10 s of silence, jfk.wav (32 s), with VAD (whisper.cpp's defaults) and token times,
// on one state and split over two (cut at 16 s, in the silence). The first copy's VAD segments
// are faster-whisper's stretches of jfk.wav; the second copy's differ from them by up to 18 cs
// (Silero's LSTM state comes out of 10 s of silence, not zeros), so they are checked against
// whisper_vad_segments_from_samples on what the VAD saw (the clip; the part from 16 s, shifted).
// Token times lie in their segment and in speech.
TEST_F(WhisperFullTimesTest, VadSegmentsAndTokenTimesWithVad) {
  std::vector<float> audio(*jfk_);
  ASSERT_EQ(audio.size(), 176000u);
  audio.resize(audio.size() + 10 * kRate, 0.0f);
  audio.insert(audio.end(), jfk_->begin(), jfk_->end());
  const std::vector<Span> jfk_speech = ReferenceSpeech("jfk", 0);
  ASSERT_EQ(jfk_speech.size(), 5u) << "testdata/vad_onnxruntime.json";
  const std::string vad_model = testdata::ModelPath("ggml-silero-v6.bin");
  for (int n_processors : {1, 2}) {
    SCOPED_TRACE(n_processors);
    whisper_full_params p = Greedy();
    p.vad = true;
    p.vad_model_path = vad_model.c_str();
    p.token_timestamps = true;
    ASSERT_EQ(whisper_full_parallel(ctx_, p, audio.data(), static_cast<int>(audio.size()), n_processors), 0);
    const std::vector<Span> got = VadSegments(ctx_);
    ASSERT_EQ(got.size(), 10u);
    ExpectOrdered(got);
    ExpectSpans(got, 0, jfk_speech, "faster-whisper");
    if (n_processors == 1) {
      ExpectSpans(got, 0, SpeechOf(audio, 0, audio.size(), 0), "clip");
    } else {
      ExpectSpans(got, 5, SpeechOf(audio, 16 * kRate, audio.size(), 1600), "part 2");
    }
    EXPECT_GE(CheckTokenTimes(ctx_, got), 40);
  }
  // Out of range: -1 and a message each.
  log_.errors.clear();
  EXPECT_EQ(whisper_full_get_vad_segment_t0(ctx_, 10), -1);
  EXPECT_EQ(whisper_full_get_vad_segment_t1(ctx_, -1), -1);
  EXPECT_EQ(whisper_full_get_vad_segment_t0_from_state(nullptr, 0), -1);
  EXPECT_EQ(whisper_full_n_vad_segments_from_state(nullptr), 0);
  EXPECT_EQ(log_.errors.size(), 4u);
  // A call without VAD leaves none.
  ASSERT_EQ(whisper_full(ctx_, Greedy(), jfk_->data(), static_cast<int>(jfk_->size())), 0);
  EXPECT_EQ(whisper_full_n_vad_segments(ctx_), 0);
  EXPECT_EQ(whisper_full_get_vad_segment_t1(ctx_, 0), -1);
}

// tools/reference/vad_onnxruntime.py's "gap" clip (1 s of zeros, jfk.wav's first 3 s, 2 s of
// zeros, jfk.wav 3 .. 6 s): the VAD segments are faster-whisper's stretches, except that the
// last, which runs to the end, ends at whisper.cpp's end of the audio (283 windows of 512 samples
// = 144384 samples = 902 cs; faster-whisper: 144000). Token times as above, on another state.
TEST_F(WhisperFullTimesTest, VadSegmentsOfTheReferenceGapClip) {
  std::vector<float> gap(kRate, 0.0f);
  gap.insert(gap.end(), jfk_->begin(), jfk_->begin() + 3 * kRate);
  gap.insert(gap.end(), 2 * kRate, 0.0f);
  gap.insert(gap.end(), jfk_->begin() + 3 * kRate, jfk_->begin() + 6 * kRate);
  std::vector<Span> want = ReferenceSpeech("gap", 0);
  ASSERT_EQ(want.size(), 2u);
  ASSERT_EQ(want[1].t1, 900);
  want[1].t1 = 902;
  const std::string vad_model = testdata::ModelPath("ggml-silero-v6.bin");
  whisper_full_params p = Greedy();
  p.vad = true;
  p.vad_model_path = vad_model.c_str();
  whisper_state* state = whisper_init_state(ctx_);
  ASSERT_NE(state, nullptr);
  ASSERT_EQ(whisper_full_with_state(ctx_, state, p, gap.data(), static_cast<int>(gap.size())), 0);
  std::vector<Span> got;
  for (int i = 0; i < whisper_full_n_vad_segments_from_state(state); ++i) {
    got.push_back({whisper_full_get_vad_segment_t0_from_state(state, i), whisper_full_get_vad_segment_t1_from_state(state, i)});
  }
  ASSERT_EQ(got.size(), 2u);
  ExpectSpans(got, 0, want, "faster-whisper");
  int n_timed = 0;
  for (int i = 0; i < whisper_full_n_segments_from_state(state); ++i) {
    for (int j = 0; j < whisper_full_n_tokens_from_state(state, i); ++j) {
      const int64_t t0 = whisper_full_get_token_t0_from_state(state, i, j);
      const int64_t t1 = whisper_full_get_token_t1_from_state(state, i, j);
      EXPECT_EQ(t0, whisper_full_get_token_data_from_state(state, i, j).t0);
      EXPECT_EQ(t1, whisper_full_get_token_data_from_state(state, i, j).t1);
      if (t0 < 0) continue;
      ++n_timed;
      EXPECT_TRUE((t0 >= want[0].t0 && t1 <= want[0].t1) || (t0 >= want[1].t0 && t1 <= want[1].t1))
          << i << "," << j << " [" << t0 << ", " << t1 << "]";
    }
  }
  EXPECT_GT(n_timed, 0);  // 5.2 s removed: token times are computed to split there
  EXPECT_EQ(whisper_full_n_vad_segments(ctx_), 0);  // the default state's last call had no VAD
  whisper_free_state(state);
}

// Without VAD the token times are the token data's: with token_timestamps, inside their segment;
// without, -1 (no time), as whisper_full_get_token_data gives. Out of range: -1 and a message.
TEST_F(WhisperFullTimesTest, TokenTimesWithoutVadAreTheTokenData) {
  for (bool token_timestamps : {true, false}) {
    SCOPED_TRACE(token_timestamps);
    whisper_full_params p = Greedy();
    p.token_timestamps = token_timestamps;
    ASSERT_EQ(whisper_full(ctx_, p, jfk_->data(), static_cast<int>(jfk_->size())), 0);
    EXPECT_EQ(whisper_full_n_vad_segments(ctx_), 0);
    const int n = whisper_full_n_segments(ctx_);
    ASSERT_GE(n, 1);
    int n_timed = 0;
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < whisper_full_n_tokens(ctx_, i); ++j) {
        const whisper_token_data d = whisper_full_get_token_data(ctx_, i, j);
        EXPECT_EQ(whisper_full_get_token_t0(ctx_, i, j), d.t0) << i << "," << j;
        EXPECT_EQ(whisper_full_get_token_t1(ctx_, i, j), d.t1) << i << "," << j;
        if (d.t0 >= 0) ++n_timed;
      }
    }
    if (token_timestamps) {
      EXPECT_EQ(n_timed, [&] {
        int all = 0;
        for (int i = 0; i < n; ++i) all += whisper_full_n_tokens(ctx_, i);
        return all;
      }());
    } else {
      EXPECT_EQ(n_timed, 0);
    }
    log_.errors.clear();
    EXPECT_EQ(whisper_full_get_token_t0(ctx_, n, 0), -1);
    EXPECT_EQ(whisper_full_get_token_t1(ctx_, 0, whisper_full_n_tokens(ctx_, 0)), -1);
    EXPECT_EQ(whisper_full_get_token_t0(ctx_, 0, -1), -1);
    EXPECT_EQ(whisper_full_get_token_t1_from_state(nullptr, 0, 0), -1);
    EXPECT_EQ(log_.errors.size(), 4u);
  }
}

}  // namespace
}  // namespace whisper_e2e
