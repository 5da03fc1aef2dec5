// The C++ side of whisper/whisper.h: what whisper_context and whisper_state hold, and the
// helpers its implementation files share (whisper/whisper_context.cc: contexts, states,
// low-level calls, getters; whisper/whisper_full.cc: whisper_full; whisper/whisper_results.cc:
// its results; whisper/whisper_inference.cc, whisper/whisper_vad.cc). Not part of the public API.
#ifndef GGML_WHISPER_WHISPER_WHISPER_IMPL_H_
#define GGML_WHISPER_WHISPER_WHISPER_IMPL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "whisper/compression_ratio.h"
#include "whisper/grammar.h"
#include "whisper/mel.h"
#include "whisper/model.h"
#include "whisper/segments.h"
#include "whisper/state.h"
#include "whisper/token_timestamps.h"
#include "whisper/tokenizer.h"
#include "whisper/transcribe.h"
#include "whisper/vad_segments.h"
#include "whisper/whisper.h"
#include "whisper/word_timestamps.h"

namespace whisper {
// whisper_full's VAD (params.vad, whisper/whisper_vad.cc): the model (loaded at the first use and
// kept while vad_model_path stays the same), the speech stretches, the joined audio and the map
// from its times to the original audio's. Buffers keep their capacity between calls.
struct VadState {
  struct Point {
    int64_t processed;  // centiseconds in the joined audio
    int64_t original;   // centiseconds in the input
  };
  whisper_vad_context* ctx = nullptr;
  std::string model_path;
  std::vector<SpeechSpan> spans;
  int n_spans = 0;
  std::vector<float> filtered;
  std::vector<Point> map;
  // Between two stretches: [speech_end, next_start) of the joined audio holds the overlap and
  // the inserted silence; a segment starting there starts at the next stretch (next_original),
  // one ending there ends at the stretch's end (end_original).
  struct Join {
    int64_t speech_end, next_start, end_original, next_original;
  };
  std::vector<Join> joins;
  std::vector<int64_t> gaps;  // each join's speech_end, next_start (TranscribeParams::gaps)
  // The stretches joined (whisper.cpp 1.9.3's vad_segments: those not empty once clamped to the
  // audio), centiseconds of the input, in order: whisper_full_n_vad_segments. Emptied by every
  // whisper_full (so empty after one without VAD); whisper_full_parallel appends the other parts'
  // (shifted) to the default state's.
  struct Speech {
    int64_t t0, t1;  // centiseconds of the input
  };
  std::vector<Speech> speech;
  bool active = false;  // the last whisper_full used VAD: its results are mapped back
  VadState() = default;
  VadState(const VadState&) = delete;
  VadState& operator=(const VadState&) = delete;
  ~VadState() { whisper_vad_free(ctx); }
};
namespace api {
// whisper_full's batched mode (whisper/whisper_batched.cc): its InferenceState, scheduler and
// transcriber, kept between calls of the same batch size, decoders per window and thread count.
struct BatchedState;
struct BatchedStateDeleter {
  void operator()(BatchedState* b) const;
};
}  // namespace api
}  // namespace whisper

struct whisper_context {
  std::unique_ptr<whisper::WhisperModel> model;
  std::unique_ptr<whisper::Tokenizer> tokenizer;
  std::vector<whisper::Token> non_speech;         // suppress_nst's list, whisper.cpp's rules
  std::vector<whisper::Token> non_speech_openai;  // the same with OpenAI's rules (tokenizer.h)
  std::function<const std::string&(whisper::Token)> token_text;
  whisper_context_params params{};
  whisper_state* state = nullptr;  // the default state (NULL for the _no_state inits)
  int64_t t_load_us = 0;
  int64_t t_start_us = 0;
  whisper_timings timings{};  // filled by whisper_get_timings
  std::atomic<int> decoding{WHISPER_GGML_DECODING_WHISPER_CPP};  // whisper_ggml_set_decoding
  std::atomic<int> int8_attention{whisper::kInt8AttentionAuto};  // whisper_ggml_set_int8_attention
  // DTW timestamps (params.dtw_token_timestamps): the alignment heads, checked against the model
  // at init; every state's inference buffers get them.
  std::vector<whisper::AlignmentHead> aheads;
};

struct whisper_state {
  whisper_context* ctx = nullptr;  // the context this state was made for
  // Inference buffers, recreated only when a call needs more decoders or another thread count.
  std::unique_ptr<whisper::InferenceState> ws;
  std::unique_ptr<whisper::MelSpectrogram> mel;
  // The current log-mel: row-major [n_mels][mel_n_len] (ne = [mel_n_len, n_mels]), from `mel`
  // (whisper_pcm_to_mel) or `mel_own` (whisper_set_mel).
  std::vector<float> mel_own;
  const float* mel_data = nullptr;
  int mel_n_len = 0;       // frames in mel_data
  int mel_n_len_org = 0;   // whisper.cpp n_len_org: frames overlapping the audio
  int mel_n_frames_audio = 0;  // frames decoding may reach (n_samples / 160, OpenAI content_frames)
  int64_t mel_n_samples = 0;   // samples behind the mel (0 for set_mel)

  std::unique_ptr<whisper::Transcriber> transcriber;
  whisper::TokenTimestamps token_timestamps;
  std::unique_ptr<whisper::WordTimestamps> word_timestamps;  // with DTW timestamps (made with ws)
  bool dtw_enabled = true;  // whisper_ggml_state_set_dtw: align this state's windows
  whisper::VadState vad_state;
  std::unique_ptr<whisper::api::BatchedState, whisper::api::BatchedStateDeleter> batched;  // ggml_batch_size > 1
  whisper_ggml_batch* shared_batch = nullptr;  // whisper_ggml_state_set_batch (not owned)
  whisper::SegmentList results;
  // results[0, n_results_mapped) are in the input's time base (MapNewResults); the rest, while
  // whisper_full runs, may still be in the joined speech's.
  size_t n_results_mapped = 0;
  // whisper_ggml_full_get_segment_compression_ratio's deflate stream (made at its first call).
  std::unique_ptr<whisper::CompressionRatio> compression;
  int lang_id = 0;  // whisper.cpp's initial value
  // initial_prompt last tokenized, under which rules (OpenAI's: " " + stripped text, byte-pair
  // merged), and its tokens.
  std::string prompt_text;
  bool prompt_openai = false;
  std::vector<whisper::Token> prompt_ids;
  // whisper_full_params.ggml_clip_timestamps in frames (round(t * 100), faster-whisper's seek_clips),
  // start, end, ...; an odd count gets the audio's end.
  std::vector<int> clip_frames;
  // suppress_regex's ids (plus a non-speech list with suppress_nst), for the regex and the
  // non-speech list (null: none) they were made from: a call with the same two reuses them.
  std::string suppress_regex;
  const std::vector<whisper::Token>* suppress_regex_nst = nullptr;
  std::vector<whisper::Token> suppress_ids;
  // grammar_rules' grammar (whisper/whisper_grammar.cc PrepareGrammar), rebuilt only when the
  // rules' elements (grammar_elems, each rule with its END) or the start rule change; the
  // vocabulary's code points are decoded at the first grammar call.
  whisper::Grammar grammar;
  std::vector<whisper::GrammarElement> grammar_elems;
  std::vector<whisper::GrammarElement> grammar_elems_new;  // the call's, compared with grammar_elems
  size_t grammar_start = 0;
  whisper::GrammarVocab grammar_vocab;
  // ggml_suppress_tokens as the filter's list (-1 expanded to the non-speech set), made per call.
  std::vector<whisper::Token> suppress_list;
  // ggml_prefix and ggml_hotwords last tokenized (" " + stripped text), and their tokens.
  std::string prefix_text, hotwords_text;
  std::vector<whisper::Token> prefix_ids, hotwords_ids;

  // Abort check for the graph computes of the current call (whisper_full).
  ggml_abort_callback abort_callback = nullptr;
  void* abort_callback_user_data = nullptr;

  // Timings (microseconds) and counts, as whisper.cpp's state keeps them.
  int64_t t_mel_us = 0, t_sample_us = 0, t_encode_us = 0, t_decode_us = 0, t_batchd_us = 0, t_prompt_us = 0;
  int n_sample = 0, n_encode = 0, n_decode = 0, n_batchd = 0, n_prompt = 0;
  int n_fail_p = 0, n_fail_h = 0;
};

namespace whisper {
namespace api {

// Logs through the callback of whisper_log_set. `fmt` ends with '\n' as whisper.cpp's do.
void Log(ggml_log_level level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

int64_t NowUs();

// The GELU of a decoding rule set (whisper/encoder.h Gelu): whisper.cpp's rules keep its tanh
// form (results byte-equal to whisper-cli), OpenAI's (faster-whisper's) use the model's erf form.
inline Gelu GeluOfRules(bool whisper_cpp) { return whisper_cpp ? Gelu::kTanh : Gelu::kErf; }

// Makes sure state->ws has at least n_decoders decoders and exactly n_threads threads
// (recreating it otherwise), its GELU that of the context's decoding rules (GeluOfRules). false
// with a message on failure.
bool EnsureInference(whisper_state* state, int n_decoders, int n_threads, const char* func);

// Computes the log-mel of samples into the state (state->mel, recreated for another thread
// count). false with a message on failure.
bool ComputeMel(whisper_state* state, const float* samples, int n_samples, int n_threads, const char* func);

// The model backend of the window loop over a whisper_state: InferenceState plus the abort check
// before every graph compute and the state's timings.
class StateBackend : public ModelBackend {
 public:
  explicit StateBackend(whisper_state* state) : s_(state) {}
  absl::Status Encode(const float* mel, int n_frames, int seek, int audio_ctx, int n_frames_valid) override;
  absl::Status Decode(int decoder, const Token* tokens, int n_tokens, int n_past) override;
  absl::Status DecodeBatch(const int* decoders, const Token* tokens, int n, int n_past) override;
  const float* logits(int decoder) const override { return s_->ws->logits(decoder); }
  void CopyKv(int src, int dst, int begin, int end) override { s_->ws->CopyKvRange(src, dst, begin, end); }
  int n_decoders() const override { return s_->ws->n_decoders(); }
  void ParallelFor(int n, void (*fn)(void* arg, int i), void* arg) override { s_->ws->ParallelFor(n, fn, arg); }
  absl::StatusOr<AlignmentLogits> Align(const Token* tokens, int n_tokens, int logits_from = -1) override;

 private:
  absl::Status CheckAbort(const char* what) const;
  whisper_state* s_;
};

// VAD (whisper/whisper_vad.cc): probabilities of samples' 512-sample windows into vctx (the last
// one zero-padded), from a fresh LSTM state when `reset`; false with a message on failure.
bool DetectSpeech(whisper_vad_context* vctx, const float* samples, int n_samples, bool reset, const char* func);
// whisper_full's VAD: state->vad_state gets the speech stretches of samples (whisper.cpp's rules
// and params.vad_params), the joined audio (empty when there is no speech) and the time map.
// Errors: InvalidArgument without vad_model_path; the model's load errors; Internal.
absl::Status FilterSpeech(whisper_state* state, const whisper_full_params& params, const float* samples,
                          int n_samples);
// The batched pipeline's cut points (ggml_batch_size > 1 without params.vad): the middle of every
// pause between two speech stretches of samples (faster-whisper 1.2.1's rules, as its
// BatchedInferencePipeline runs VAD: min_silence_duration_ms 160, max_speech_duration_s
// max_speech_s, threshold params.vad_params.threshold), as mel frames (10 ms), increasing, in
// (0, n_samples / 160]. Uses and keeps the state's VAD model. Errors: those of FilterSpeech.
absl::Status SpeechCuts(whisper_state* state, const whisper_full_params& params, float max_speech_s,
                        const float* samples, int n_samples, std::vector<int>* cuts);
// A time (centiseconds) of the joined audio in the original audio; t itself without VAD.
// whisper.cpp's linear map, except across a join: a start there moves to the next stretch and an
// end to the end of the stretch before (whisper.cpp would put either inside the removed silence).
int64_t MapVadTime(const whisper_state* state, int64_t t, bool is_start);
// A token time (centiseconds) of the joined audio in the original audio; t itself without VAD.
// whisper.cpp 1.9.3's whisper_full_get_token_t0/t1 rule: inside a stretch, linear between its
// edges; in the overlap + silence between two stretches, the nearer of the first's end and the
// second's start (the first at the midpoint); before the first / after the last stretch, its edge.
int64_t MapVadTokenTime(const whisper_state* state, int64_t t);
// Maps state->results from n_results_mapped on back to the input's times (with VAD active;
// nothing to do otherwise) and marks them mapped: segment times by MapVadTime, ends at least 10 cs
// after starts; token t0/t1/t_dtw by MapVadTokenTime (-1 stays -1), then kept within the
// segment's mapped [t0, t1], t1 >= t0. whisper.cpp maps only in its getters (segment times; token
// times in 1.9.3's whisper_full_get_token_t0/t1, which also make t1 >= t0 + 1 and do not keep
// tokens in their segment); its token data stays in the joined audio's time.
void MapNewResults(whisper_state* state);

// whisper_full's grammar (whisper/whisper_grammar.cc): with params.grammar_rules set, dp gets the
// state's grammar (built or reused), its vocabulary and grammar_penalty. Errors (InvalidArgument,
// naming the field): n_grammar_rules = 0 with grammar_rules set, a non-finite grammar_penalty,
// i_start_rule out of range, rules Grammar::Init refuses.
absl::Status PrepareGrammar(whisper_context* ctx, whisper_state* state, const whisper_full_params& params,
                            DecodingParams* dp);

// whisper_full's faster-whisper options (whisper/whisper_full_options.cc).
// FillFasterWhisperOptions: beam_search.patience and ggml_length_penalty, ggml_repetition_penalty,
// ggml_no_repeat_ngram_size, ggml_max_new_tokens into dp (checked as CTranslate2's
// validate_decoding_options: patience <= 0 means 1 and round(beam_size * patience) >= 1; the
// length penalty finite; the repetition penalty finite and > 0; the n-gram size and
// max_new_tokens >= 0), and checks ggml_prompt_reset_on_temperature (not NaN) and
// ggml_chunk_length (0 .. 30). Errors (kSetup): InvalidArgument naming the field.
absl::Status FillFasterWhisperOptions(const whisper_full_params& params, DecodingParams* dp);
// SuppressList: the ids suppressed at every step before suppress_regex's into *list:
// ggml_suppress_tokens when set (faster-whisper 1.2.1 get_suppressed_tokens: the ids >= 0, and
// for -1 the non-speech set, in state->suppress_list), else with suppress_nst the non-speech set
// (whisper.cpp's list, or OpenAI's, faster-whisper's suppress_tokens=[-1], which adds the music
// signs' first token: tokenizer.h), else null. Errors (kSetup): a negative count, a NULL list with
// a positive count, an id outside [-1, n_vocab).
absl::Status SuppressList(whisper_context* ctx, whisper_state* state, const whisper_full_params& params,
                          bool whisper_cpp, const std::vector<Token>** list);
// SetPromptOptions: ggml_prefix and ggml_hotwords tokenized as faster-whisper's get_prompt does
// (SpaceAndStripped, then OpenAI's byte-pair merges: Tokenizer::EncodeOpenAi; cached in state while
// the text is the same; bytes no vocabulary entry holds are skipped with a warning) into
// tp->prefix and tp->hotwords, and ggml_chunk_length into tp->chunk_frames (checked by
// FillFasterWhisperOptions). SpaceAndStripped: " " + `text` (NUL-terminated) without its leading
// and trailing ASCII whitespace, faster-whisper's " " + text.strip().
std::string SpaceAndStripped(const char* text);
void SetPromptOptions(whisper_context* ctx, whisper_state* state, const whisper_full_params& params,
                      TranscribeParams* tp);

// whisper_full_params.ggml_batch_size (whisper/whisper_batched.cc). CheckBatchSize: 0 .. 64, and
// above 1 vad_model_path or clips set, and no offset or duration. Errors (kSetup): InvalidArgument
// naming the field. BatchedMaxSpeechSeconds: the VAD's max_speech_duration_s in batched mode (the chunk
// length less 1 s, or less). RunBatched: the batched transcription of the state's mel (of
// samples: tp's clips as they are, or the input cut at VAD's pauses, or with params.vad the VAD's
// joined speech, cut at its joins; tp's clips are not passed on) into
// state->results (with VAD, joined-speech times that MapNewResults maps), chunk by chunk through
// tp.hooks.new_segments. Errors: kSetup for too many decoders or a failed state; a
// chunk's failure (Cancelled on abort), with "failed: " / "aborted: " before its message.
absl::Status CheckBatchSize(const whisper_full_params& params);
float BatchedMaxSpeechSeconds(const whisper_full_params& params);
absl::Status RunBatched(whisper_state* state, const whisper_full_params& params, const TranscribeParams& tp,
                        const float* samples, int n_samples);

// Continuous batching (whisper/whisper_shared_batch.cc, whisper_ggml_state_set_batch).
// UsesSharedBatch: whether this call's window loop runs on the state's shared batch (one is
// attached, ggml_batch_size <= 1, and a slot has the decoders tp needs). RunShared: RunWindows's
// work (the window loop into state->results, the abort check before every graph, whisper.cpp's
// counters, "aborted: " / "failed: " before a failure's message) on a slot of that batch.
bool UsesSharedBatch(const whisper_state* state, const whisper_full_params& params, const TranscribeParams& tp);
absl::Status RunShared(whisper_state* state, const whisper_full_params& params, const TranscribeParams& tp);

// Whether `state` may be used with `ctx` (both non-null, state made for ctx); logs otherwise.
bool CheckPair(const whisper_context* ctx, const whisper_state* state, const char* func);

}  // namespace api
}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_WHISPER_IMPL_H_
