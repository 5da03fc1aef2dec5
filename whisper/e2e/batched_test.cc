// whisper_full with ggml_batch_size > 1 on the real tiny.en model (OpenAI's decoding rules):
//   - jfk.wav (one chunk): faster-whisper's segments (testdata/jfk_faster_whisper_tokens.json), and the
//     same segments, token times and DTW word times as the sequential loop;
//   - the first 80 s of long_speech.flac: one encoder run per chunk, each chunk's segments starting
//     with those of the sequential loop's first window on that chunk (a whisper_full with that
//     chunk as its clip, stopped after one window), the chunks derived here from the public VAD
//     API (whisper_ggml_vad_speech_faster_whisper with faster-whisper's batched VAD options) and
//     PlanChunks; nothing after the last chunk is lost (the last segment ends in the last 10 s);
//   - the batched state's windows: min(batch size, chunks), so a short file builds one;
//   - a batch past the decoder limit: as many windows as fit, the rest in later rounds;
//   - clip_timestamps as the chunks: faster-whisper's batched segments for them (fw_batched_clips.json);
//   - errors: bad batch sizes, no VAD model, offsets, abort.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "apps/common/audio.h"
#include "whisper/batched_transcribe.h"
#include "whisper/e2e/reference.h"
#include "whisper/e2e/tiny_en_jfk_fixture.h"
#include "whisper/whisper.h"

namespace whisper_e2e {
namespace {

struct Seg {
  int64_t t0, t1;
  std::string text;
  std::vector<int> tokens;
  std::vector<int64_t> tok_t0, tok_t1, tok_dtw;
  std::vector<int> word_start;
  bool operator==(const Seg& o) const {
    return t0 == o.t0 && t1 == o.t1 && text == o.text && tokens == o.tokens && tok_t0 == o.tok_t0 &&
           tok_t1 == o.tok_t1 && tok_dtw == o.tok_dtw && word_start == o.word_start;
  }
};

std::vector<Seg> Segments(whisper_context* ctx) {
  std::vector<Seg> out;
  for (int i = 0; i < whisper_full_n_segments(ctx); ++i) {
    Seg s{whisper_full_get_segment_t0(ctx, i), whisper_full_get_segment_t1(ctx, i),
          whisper_full_get_segment_text(ctx, i), {}, {}, {}, {}, {}};
    for (int k = 0; k < whisper_full_n_tokens(ctx, i); ++k) {
      const whisper_token_data d = whisper_full_get_token_data(ctx, i, k);
      s.tokens.push_back(d.id);
      s.tok_t0.push_back(d.t0);
      s.tok_t1.push_back(d.t1);
      s.tok_dtw.push_back(d.t_dtw);
    }
    out.push_back(s);
  }
  return out;
}

class BatchedTest : public TinyEnJfkTest {
 protected:
  static void SetUpTestSuite() {
    TinyEnJfkTest::SetUpTestSuite();
    ASSERT_EQ(whisper_ggml_set_decoding(ctx_, WHISPER_GGML_DECODING_OPENAI), 0);
  }
  // faster-whisper's options of testdata/jfk_faster_whisper_tokens.json: greedy, suppress_tokens
  // [-1] (the non-speech set).
  static whisper_full_params Fw() {
    whisper_full_params p = Greedy();
    p.suppress_nst = true;
    return p;
  }
  static whisper_full_params Batched(int b) {
    whisper_full_params p = Fw();
    p.ggml_batch_size = b;
    // Set once: params made earlier keep pointing at this string (reassigning it freed their
    // vad_model_path under ASan).
    if (vad_path_.empty()) vad_path_ = testdata::ModelPath("ggml-silero-v6.bin");
    p.vad_model_path = vad_path_.c_str();
    return p;
  }
  static inline std::string vad_path_;
};

TEST_F(BatchedTest, DefaultIsSequential) { EXPECT_EQ(Greedy().ggml_batch_size, 0); }

TEST_F(BatchedTest, JfkIsFasterWhispersTextAndTheSequentialSegments) {
  const int n = static_cast<int>(jfk_->size());
  ASSERT_EQ(whisper_full(ctx_, Fw(), jfk_->data(), n), 0);
  const std::vector<Seg> seq = Segments(ctx_);
  ASSERT_EQ(whisper_full(ctx_, Batched(2), jfk_->data(), n), 0);
  const std::vector<Seg> bat = Segments(ctx_);
  // testdata/jfk_faster_whisper_tokens.json: faster-whisper 1.2.1's two segments, 0.00 .. 7.74 s
  // and 7.74 .. 10.74 s.
  ASSERT_EQ(bat.size(), 2u);
  EXPECT_EQ(bat[0].text, " And so my fellow Americans ask not what your country can do for you");
  EXPECT_EQ(bat[1].text, " ask what you can do for your country");
  EXPECT_EQ(bat[0].t0, 0);
  EXPECT_EQ(bat[0].t1, 774);
  EXPECT_EQ(bat[1].t0, 774);
  EXPECT_EQ(bat[1].t1, 1074);
  EXPECT_TRUE(seq == bat);
  EXPECT_TRUE(log_.errors.empty());
}

TEST_F(BatchedTest, JfkWordTimesAreTheSequentialOnes) {
  whisper_context_params cp = whisper_context_default_params();
  cp.dtw_token_timestamps = true;
  cp.dtw_aheads_preset = WHISPER_AHEADS_TINY_EN;
  const std::string model = testdata::ModelPath("ggml-tiny.en.bin");
  whisper_context* ctx = whisper_init_from_file_with_params(model.c_str(), cp);
  ASSERT_NE(ctx, nullptr);
  ASSERT_EQ(whisper_ggml_set_decoding(ctx, WHISPER_GGML_DECODING_OPENAI), 0);
  const int n = static_cast<int>(jfk_->size());
  auto run = [&](const whisper_full_params& p) {
    EXPECT_EQ(whisper_full(ctx, p, jfk_->data(), n), 0);
    std::vector<Seg> s = Segments(ctx);
    for (size_t i = 0; i < s.size(); ++i) {
      for (size_t k = 0; k < s[i].tokens.size(); ++k) {
        s[i].word_start.push_back(
            whisper_ggml_full_get_token_word_start(ctx, static_cast<int>(i), static_cast<int>(k)));
      }
    }
    return s;
  };
  whisper_full_params p = Fw();
  p.token_timestamps = true;
  const std::vector<Seg> seq = run(p);
  whisper_full_params b = Batched(3);
  b.token_timestamps = true;
  const std::vector<Seg> bat = run(b);
  whisper_free(ctx);
  ASSERT_EQ(bat.size(), 2u);
  int n_words = 0;
  for (const Seg& s : bat) {
    for (int w : s.word_start) n_words += w == 1;
  }
  EXPECT_EQ(n_words, 22);  // "And so my fellow Americans ask not ... for your country"
  for (int64_t t : bat[0].tok_dtw) EXPECT_GE(t, -1);
  EXPECT_TRUE(seq == bat);
}

// The chunks the batched pipeline cuts, derived from the public VAD API: faster-whisper 1.2.1's
// batched VAD options (VadOptions(max_speech_duration_s=chunk_length, min_silence_duration_ms=160),
// its other defaults; max_speech 29 s here, the chunk less 1 s), a cut in the middle of each pause,
// and PlanChunks over 30 s.
std::vector<whisper::FrameRange> Chunks(const std::vector<float>& audio) {
  const std::string path = testdata::ModelPath("ggml-silero-v6.bin");
  whisper_vad_context* vad = whisper_vad_init_from_file_with_params(path.c_str(), whisper_vad_default_context_params());
  EXPECT_NE(vad, nullptr);
  if (vad == nullptr) return {};
  whisper_vad_params vp = whisper_vad_default_params();
  vp.threshold = 0.5f;
  vp.min_speech_duration_ms = 0;
  vp.min_silence_duration_ms = 160;
  vp.max_speech_duration_s = 29.0f;
  vp.speech_pad_ms = 400;
  std::vector<int64_t> spans(2 * 256);
  const int n = whisper_ggml_vad_speech_faster_whisper(vad, vp, -1.0f, audio.data(), static_cast<int>(audio.size()),
                                                       spans.data(), 256);
  whisper_vad_free(vad);
  EXPECT_GT(n, 1);
  EXPECT_LE(n, 256);
  std::vector<int> cuts;
  for (int i = 0; i + 1 < n; ++i) cuts.push_back(static_cast<int>((spans[2 * i + 1] + spans[2 * i + 2]) / 2 / 160));
  return whisper::PlanChunks(cuts, static_cast<int>(audio.size() / 160), 3000);
}

// encoder_begin_callback that lets one window run: the sequential loop's first window of a clip.
bool FirstWindowOnly(whisper_context*, whisper_state*, void* user) { return (*static_cast<int*>(user))++ == 0; }

// One window per chunk (faster-whisper's BatchedInferencePipeline encodes each chunk once): as
// many encoder runs as chunks (each at most 30 s), as many windows in the batched state as chunks
// (fewer than 8). Each chunk's segments start with those of the sequential loop's first window on
// that chunk (the same decoding up to where that window stopped: fallback off, so both take the
// first attempt); after them come the segments of the text the sequential loop would have left to
// a second window (an unclosed last segment, or the speech after an early <|endoftext|>), and
// nothing of the next chunk. No segment ends after its chunk's end (issue 38: the segments of
// consecutive chunks do not overlap), where the sequential loop's may.
TEST_F(BatchedTest, LongExcerptIsOneWindowPerChunk) {
  auto audio = whisper::LoadAudio16kMono(testdata::SharedData("long_speech.flac"));
  ASSERT_TRUE(audio.ok()) << audio.status();
  audio->resize(80 * 16000);
  const std::vector<whisper::FrameRange> chunks = Chunks(*audio);
  ASSERT_GE(chunks.size(), 3u);
  ASSERT_LT(chunks.size(), 8u);
  for (const whisper::FrameRange& c : chunks) ASSERT_LE(c.end - c.start, 3000);
  const int n = static_cast<int>(audio->size());
  std::vector<std::vector<Seg>> first(chunks.size());
  for (size_t c = 0; c < chunks.size(); ++c) {
    const float clip[2] = {chunks[c].start / 100.0f, chunks[c].end / 100.0f};
    whisper_full_params p = Fw();
    p.temperature_inc = 0.0f;
    p.ggml_clip_timestamps = clip;
    p.ggml_n_clip_timestamps = 2;
    int windows = 0;
    p.encoder_begin_callback = FirstWindowOnly;
    p.encoder_begin_callback_user_data = &windows;
    ASSERT_EQ(whisper_full(ctx_, p, audio->data(), n), 0);
    first[c] = Segments(ctx_);
    ASSERT_FALSE(first[c].empty()) << c;
  }
  log_.errors.clear();  // whisper.cpp's "encoder_begin_callback returned false" of the stops above
  whisper_full_params b = Batched(8);
  b.temperature_inc = 0.0f;
  ASSERT_EQ(whisper_full(ctx_, b, audio->data(), n), 0);
  const std::vector<Seg> bat = Segments(ctx_);
  int n_chunks = -1, n_windows = -1, n_encoder_runs = -1;
  ASSERT_EQ(whisper_ggml_batched_stats(ctx_, &n_chunks, &n_windows, &n_encoder_runs), 0);
  EXPECT_EQ(n_chunks, static_cast<int>(chunks.size()));
  EXPECT_EQ(n_encoder_runs, static_cast<int>(chunks.size()));
  EXPECT_EQ(n_windows, static_cast<int>(chunks.size()));
  size_t pos = 0;
  int n_more = 0;  // segments past the sequential first windows'
  int n_cut = 0;   // sequential segments that end past their chunk
  for (size_t c = 0; c < chunks.size(); ++c) {
    for (Seg f : first[c]) {
      // The sequential clip loop keeps a timestamp past the clip's end (faster-whisper's rule); a
      // batched chunk's segment ends by the chunk's end, where the next chunk starts (issue 38).
      n_cut += f.t1 > chunks[c].end;
      f.t1 = std::min<int64_t>(f.t1, chunks[c].end);
      f.t0 = std::min(f.t0, f.t1);
      ASSERT_LT(pos, bat.size()) << c;
      EXPECT_TRUE(bat[pos] == f) << c << ": " << bat[pos].t0 << " " << bat[pos].text << " | " << f.t0 << " " << f.text;
      ++pos;
    }
    const int64_t next = c + 1 < chunks.size() ? chunks[c + 1].start : INT64_MAX;
    for (; pos < bat.size() && bat[pos].t0 < next; ++pos, ++n_more) {
      EXPECT_GE(bat[pos].t0, bat[pos - 1].t1) << pos;
      EXPECT_LE(bat[pos].t1, chunks[c].end) << pos;
    }
  }
  EXPECT_EQ(pos, bat.size());
  EXPECT_GT(n_more, 0);  // tiny.en leaves text after its first window on this excerpt
  // and names a time past a chunk's end (measured: 76.04-80.08 s in the last, 59.36-80 s).
  EXPECT_GT(n_cut, 0);
  for (size_t i = 1; i < bat.size(); ++i) EXPECT_GE(bat[i].t0, bat[i - 1].t1) << i << ": segments overlap";
  for (const Seg& s : bat) EXPECT_LE(s.t1 - s.t0, 3000);
  EXPECT_GT(bat.back().t1, 7000);  // the speech goes on to the end of the excerpt
  EXPECT_TRUE(log_.errors.empty());
}

// ggml_clip_timestamps with ggml_batch_size: the clips are the chunks, no VAD model needed.
// long_speech.flac, four clips of 22-28 s (the last before the third), without timestamps:
// faster-whisper 1.2.1's BatchedInferencePipeline segments (testdata/fw_batched_clips.json, run
// long_no_timestamps: one per clip, [start, end], its tokens), one encoder run per clip, all four
// in one batch; the sequential loop over the same clips without context gives the same segments.
TEST_F(BatchedTest, ClipsAreTheChunks) {
  auto audio = whisper::LoadAudio16kMono(testdata::SharedData("long_speech.flac"));
  ASSERT_TRUE(audio.ok()) << audio.status();
  const float clips[] = {2.5f, 30.8f, 30.8f, 53.0f, 98.8f, 123.0f, 56.0f, 83.5f};
  const std::vector<ReferenceSegment> want = LoadReferenceRun("testdata/fw_batched_clips.json", "long_no_timestamps");
  ASSERT_EQ(want.size(), 4u);
  whisper_full_params p = Fw();
  p.temperature_inc = 0.0f;  // faster-whisper's batched mode: temperature[0] only
  p.no_timestamps = true;
  p.no_context = true;
  p.ggml_clip_timestamps = clips;
  p.ggml_n_clip_timestamps = 8;
  const int n = static_cast<int>(audio->size());
  ASSERT_EQ(whisper_full(ctx_, p, audio->data(), n), 0);
  const std::vector<Seg> seq = Segments(ctx_);
  p.ggml_batch_size = 8;  // no vad_model_path: the clips say where the chunks are
  ASSERT_EQ(whisper_full(ctx_, p, audio->data(), n), 0);
  const std::vector<Seg> bat = Segments(ctx_);
  int n_chunks = -1, n_windows = -1, n_encoder_runs = -1;
  ASSERT_EQ(whisper_ggml_batched_stats(ctx_, &n_chunks, &n_windows, &n_encoder_runs), 0);
  EXPECT_EQ(n_chunks, 4);
  EXPECT_EQ(n_windows, 4);
  EXPECT_EQ(n_encoder_runs, 4);
  ASSERT_EQ(bat.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    std::vector<int> text_tokens;
    for (int t : bat[i].tokens) {
      if (t < 50256) text_tokens.push_back(t);
    }
    EXPECT_EQ(text_tokens, want[i].text_tokens) << i;
    EXPECT_EQ(bat[i].text, want[i].text) << i;
    EXPECT_EQ(bat[i].t0 * 10, want[i].t0_ms) << i;
    EXPECT_EQ(bat[i].t1 * 10, want[i].t1_ms) << i;
  }
  EXPECT_TRUE(seq == bat);
  EXPECT_TRUE(log_.errors.empty());
}

// A file shorter than one chunk builds a one-window state whatever the batch size (jfk.wav is
// 11 s: one chunk); a longer file (45 s: two chunks or more) rebuilds it to min(8, its chunks); a
// short file after it reuses that; another batch size rebuilds it for its own chunks.
TEST_F(BatchedTest, StateHoldsMinOfBatchAndChunksWindows) {
  const std::string model = testdata::ModelPath("ggml-tiny.en.bin");
  whisper_context* ctx = whisper_init_from_file_with_params(model.c_str(), whisper_context_default_params());
  ASSERT_NE(ctx, nullptr);
  ASSERT_EQ(whisper_ggml_set_decoding(ctx, WHISPER_GGML_DECODING_OPENAI), 0);
  auto audio = whisper::LoadAudio16kMono(testdata::SharedData("long_speech.flac"));
  ASSERT_TRUE(audio.ok()) << audio.status();
  audio->resize(45 * 16000);
  const size_t n_long = Chunks(*audio).size();
  ASSERT_GE(n_long, 2u);
  struct Step {
    const std::vector<float>* audio;
    int batch, chunks, windows;
  };
  const Step steps[] = {{jfk_, 8, 1, 1},
                        {&*audio, 8, static_cast<int>(n_long), static_cast<int>(std::min<size_t>(8, n_long))},
                        {jfk_, 8, 1, static_cast<int>(std::min<size_t>(8, n_long))},
                        {jfk_, 2, 1, 1}};
  int i = 0;
  for (const Step& st : steps) {
    EXPECT_EQ(whisper_full(ctx, Batched(st.batch), st.audio->data(), static_cast<int>(st.audio->size())), 0) << i;
    int n_chunks = -1, n_windows = -1, n_encoder_runs = -1;
    EXPECT_EQ(whisper_ggml_batched_stats(ctx, &n_chunks, &n_windows, &n_encoder_runs), 0) << i;
    EXPECT_EQ(n_chunks, st.chunks) << i;
    EXPECT_EQ(n_windows, st.windows) << i;
    EXPECT_EQ(n_encoder_runs, st.chunks) << i;
    ++i;
  }
  whisper_free(ctx);
  EXPECT_EQ(whisper_ggml_batched_stats(nullptr, nullptr, nullptr, nullptr), -1);
}

// A batch whose windows would need more than the state's 128 decoders runs as many windows as fit
// and the other chunks in later rounds. jfk.wav (one chunk) at batch 13, beam 5 (10 decoders per
// window, 130 for 13): one window. 80 s of long_speech.flac (3 to 7 chunks) at batch 64, beam 22
// (44 decoders per window): 128 / 44 = 2 windows, and the segments of batch 2 (whose windows fit),
// since a chunk's decoding does not depend on the chunks beside it.
TEST_F(BatchedTest, WindowsPastTheDecoderLimitRunInRounds) {
  auto run = [&](const std::vector<float>& audio, int batch, int beam, int* n_chunks, int* n_windows) {
    whisper_full_params p = Batched(batch);
    p.strategy = WHISPER_SAMPLING_BEAM_SEARCH;
    p.beam_search.beam_size = beam;
    p.temperature_inc = 0.0f;
    EXPECT_EQ(whisper_full(ctx_, p, audio.data(), static_cast<int>(audio.size())), 0) << batch << " " << beam;
    int n_encoder_runs = -1;
    EXPECT_EQ(whisper_ggml_batched_stats(ctx_, n_chunks, n_windows, &n_encoder_runs), 0);
    EXPECT_EQ(n_encoder_runs, *n_chunks);
    return Segments(ctx_);
  };
  int n_chunks = -1, n_windows = -1;
  EXPECT_EQ(run(*jfk_, 13, 5, &n_chunks, &n_windows).size(), 2u);
  EXPECT_EQ(n_chunks, 1);
  EXPECT_EQ(n_windows, 1);
  auto audio = whisper::LoadAudio16kMono(testdata::SharedData("long_speech.flac"));
  ASSERT_TRUE(audio.ok()) << audio.status();
  audio->resize(80 * 16000);
  const std::vector<Seg> capped = run(*audio, 64, 22, &n_chunks, &n_windows);
  ASSERT_GE(n_chunks, 3);
  EXPECT_EQ(n_windows, 2);
  const std::vector<Seg> two = run(*audio, 2, 22, &n_chunks, &n_windows);
  EXPECT_EQ(n_windows, 2);
  ASSERT_FALSE(capped.empty());
  EXPECT_TRUE(capped == two);
  EXPECT_TRUE(log_.errors.empty()) << (log_.errors.empty() ? "" : log_.errors[0]);
}

// A bad ggml_batch_size, batching without a VAD model nor clips, or with an offset: -1 and one
// message naming the field, nothing decoded.
TEST_F(BatchedTest, Errors) {
  const int n = static_cast<int>(jfk_->size());
  struct Case {
    const char* what;
    whisper_full_params p;
    const char* needle;
  };
  std::vector<Case> cases;
  cases.push_back({"-1", Batched(-1), "ggml_batch_size = -1"});
  cases.push_back({"65", Batched(65), "ggml_batch_size = 65"});
  whisper_full_params no_vad = Batched(2);
  no_vad.vad_model_path = nullptr;
  cases.push_back({"no VAD model", no_vad, "needs vad_model_path"});
  whisper_full_params offset = Batched(2);
  offset.offset_ms = 1000;
  cases.push_back({"offset", offset, "offset_ms (1000)"});
  for (const Case& c : cases) {
    log_.errors.clear();
    EXPECT_EQ(whisper_full(ctx_, c.p, jfk_->data(), n), -1) << c.what;
    ASSERT_EQ(log_.errors.size(), 1u) << c.what;
    EXPECT_NE(log_.errors[0].find(c.needle), std::string::npos) << c.what << ": " << log_.errors[0];
    EXPECT_EQ(whisper_full_n_segments(ctx_), 0) << c.what;
  }
}

bool AbortNow(void*) { return true; }

TEST_F(BatchedTest, AbortStopsWithAnError) {
  whisper_full_params p = Batched(2);
  p.abort_callback = AbortNow;
  EXPECT_LT(whisper_full(ctx_, p, jfk_->data(), static_cast<int>(jfk_->size())), 0);
  ASSERT_EQ(log_.errors.size(), 1u);
  EXPECT_NE(log_.errors[0].find("aborted"), std::string::npos) << log_.errors[0];
}

}  // namespace
}  // namespace whisper_e2e
