// The window loop of a transcription: encode the 30 s window at `seek`, decode it with fallback,
// cut segments, move `seek` on, and carry the text as the next window's prompt (whisper.cpp
// whisper_full_with_state; OpenAI transcribe.py for condition_on_previous_text).
//
// Two rule sets (decoding.whisper_cpp). OpenAI's (transcribe.py, as faster-whisper): the window
// after the audio's last frame is 0.0 (pad_or_trim); a window starts while any frame is left
// (faster-whisper 1.2.1: while seek < the clip's end). whisper.cpp's (whisper_full_with_state):
// the window keeps the log-mel of the 30 s of zero padding after the audio; windows start while
// 100 ms are left; the past prompt is dropped when at most 5 s remain. Neither clamps segment ends
// to the audio. The previous text: OpenAI's rule drops it from the prompt after a window decoded
// at a temperature above prompt_reset_on_temperature (0.5); whisper.cpp's leaves it out of any
// attempt at temperature >= 0.5 (DecodingParams::whisper_cpp), and the next window's past is then
// that window's text alone.
#ifndef GGML_WHISPER_WHISPER_TRANSCRIBE_H_
#define GGML_WHISPER_WHISPER_TRANSCRIBE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "whisper/decoding.h"
#include "whisper/hallucination.h"
#include "whisper/segments.h"
#include "whisper/token_timestamps.h"
#include "whisper/tokens.h"
#include "whisper/word_timestamps.h"

namespace whisper {

// The model as the window loop sees it: an encoder plus the per-decoder KV caches.
class ModelBackend : public DecoderBackend {
 public:
  // Encodes the 3000-frame window of `mel` ([n_mels][n_frames] floats, ne = [n_frames, n_mels])
  // starting at frame `seek`; window frames at or past n_frames_valid are 0.0 (OpenAI's
  // pad_or_trim). audio_ctx 0 = the model's n_audio_ctx.
  virtual absl::Status Encode(const float* mel, int n_frames, int seek, int audio_ctx, int n_frames_valid) = 0;

  // DTW timestamps: the alignment pass over `tokens` against the last encoded window (see
  // InferenceState::Align): qk has ne = [n_audio_ctx, n_tokens, n_heads]. logits_from >= 0 also
  // gives the next-token logits of positions [logits_from, n_tokens) (ne = [n_vocab, n_tokens -
  // logits_from]), from which word probabilities come (CTranslate2's align text_token_probs). The
  // default has no alignment heads (FailedPrecondition).
  struct AlignmentLogits {
    const float* qk = nullptr;
    int n_heads = 0;
    int n_audio_ctx = 0;
    const float* logits = nullptr;  // null unless logits_from >= 0
    int n_vocab = 0;
  };
  virtual absl::StatusOr<AlignmentLogits> Align(const Token* tokens, int n_tokens, int logits_from = -1) {
    (void)tokens;
    (void)n_tokens;
    (void)logits_from;
    return absl::FailedPreconditionError("this backend has no alignment heads (DTW timestamps)");
  }
};

// Callbacks of a transcription, as plain function pointers and one user pointer so that a C API
// can pass its own without allocating. Each may be null.
struct TranscribeHooks {
  void* user = nullptr;
  // Before each window's encoder run; false stops the transcription there (not an error: the
  // segments so far stand), as whisper.cpp's encoder_begin_callback.
  bool (*encoder_begin)(void* user) = nullptr;
  // Progress in percent, non-decreasing in [0, 100]: at the start of each window and 100 at the
  // end.
  void (*progress)(void* user, int percent) = nullptr;
  // After each decoded segment (with its token times and -ml splits): the last n_new segments of
  // the list are new.
  void (*new_segments)(void* user, int n_new) = nullptr;
};

struct TranscribeParams {
  DecodingParams decoding;
  int offset_ms = 0;                     // start of the audio to transcribe
  int duration_ms = 0;                   // 0 = to the end
  int audio_ctx = 0;                     // 0 = n_audio_ctx
  // OpenAI's condition_on_previous_text: each window's text prompts the next. When false, only
  // the initial prompt prompts, and only the first window (transcribe.py's prompt_reset_since).
  // whisper.cpp's rules always condition (max_text_ctx = 0 turns it off) and ignore this.
  bool condition_on_previous_text = true;
  // faster-whisper's prompt_reset_on_temperature (OpenAI's rules): after a window decoded at a
  // temperature above this (transcribe.py generate_segments: `temperature >
  // options.prompt_reset_on_temperature`), the text so far leaves the prompt.
  float prompt_reset_on_temperature = 0.5f;
  // whisper.cpp's !no_context: start from the past text the previous Run of this Transcriber
  // ended with (whisper_full on the same state) instead of none; the initial prompt goes in
  // front of it (whisper.cpp's std::rotate), or, carried, replaces the carried one only if that
  // was empty.
  bool keep_past = false;
  // whisper_full_params.n_max_text_ctx: at most min(this, n_text_ctx / 2) - 1 past tokens in a
  // prompt; 0: none.
  int max_text_ctx = 16384;
  int language_id = 0;                   // whisper.cpp id (0 = en); multilingual models only
  // faster-whisper's multilingual=True (multilingual models only; ignored on English-only ones):
  // each window's language is detected from that window's encoder output (DetectLanguageOfEncoded,
  // the top language whatever its probability) and replaces language_id in its prompt
  // (<|sot|><|xx|><|task|>), its segments' language_id and its word splitting. The previous text in
  // the prompt is kept whatever language it is in (faster-whisper 1.2.1 transcribe.py
  // generate_segments: tokenizer.language is set per window, all_tokens are not reset).
  bool multilingual = false;
  bool translate = false;                // multilingual models only
  // --prompt, tokenized (not owned; must outlive Run).
  const Token* initial_prompt = nullptr;
  int n_initial_prompt = 0;
  // faster-whisper 1.2.1's prefix (transcribe.py get_prompt), tokenized (" " + the stripped text;
  // not owned): forced after the sot sequence of the window at frame 0 only (`prefix=options.prefix
  // if seek == 0`: not with an offset, nor after a first window skipped as silence), behind
  // <|0.00|> unless no_timestamps (see WindowDecoder::Run's n_prefix). At most n_text_ctx / 2 - 1
  // tokens are used (the first ones, as get_prompt cuts it).
  const Token* prefix = nullptr;
  int n_prefix = 0;
  // faster-whisper 1.2.1's hotwords, tokenized as the prefix: in every window's prompt right after
  // <|startofprev|>, before the previous text, except the window that has the prefix (get_prompt:
  // `if hotwords and not prefix`); at most n_text_ctx / 2 - 1 tokens (the first ones). They count
  // as past text (whisper.cpp's rules leave them out of an attempt at temperature >= 0.5).
  const Token* hotwords = nullptr;
  int n_hotwords = 0;
  // faster-whisper's chunk_length in frames (seconds * 100; 0 = 3000, 30 s): each window holds at
  // most this many frames of audio, the rest of the encoder's 30 s input is 0.0 (its
  // FeatureExtractor nb_max_frames, and pad_or_trim), and the window's segment_size (the seek after
  // a single timestamp ending or no timestamps) is that length. 1 .. 3000.
  int chunk_frames = 0;
  // whisper.cpp carry_initial_prompt: the initial prompt opens every window's prompt (ahead of
  // the previous text) instead of only the first.
  bool carry_initial_prompt = false;
  SegmentOptions segments;
  // Token-level timestamps (whisper.cpp token_timestamps): when set (Begin already called on the
  // audio), every new segment's tokens get times, then segments longer than max_len characters
  // are split (whisper.cpp max_len / split_on_word).
  TokenTimestamps* token_timestamps = nullptr;
  // DTW timestamps (whisper/word_timestamps.h): when set (Begin already called), each window's
  // segments are aligned (backend.Align) before they join the list: t_dtw for every text token,
  // and with OpenAI's rules word times (token t0/t1, Segment::word_begin), segment bounds moved
  // to the words, and the next window starting at the last word's end (transcribe.py).
  WordTimestamps* word_timestamps = nullptr;
  // VAD (whisper_full with vad): gaps [begin, end) of the joined audio (centiseconds; the overlap
  // and inserted silence between two speech stretches that stood 2 s or more apart). A segment
  // that spans one is split there (by its token times: token_timestamps must be set), so no
  // segment covers a long removed silence.
  const int64_t* gaps = nullptr;  // 2 * n_gaps values: begin, end, begin, end, ...
  int n_gaps = 0;
  // faster-whisper's clip_timestamps (transcribe.py generate_segments, seek_clips): n_clips
  // clips of frames [clip_frames[2k], clip_frames[2k + 1]) (an end past the audio is its end; not
  // owned), transcribed in order in place of [offset, offset + duration) (both must then be 0).
  // Each clip starts at its start (after the previous clip, even one that went past it) and
  // windows start while seek < its end (OpenAI's rules: no 1 s minimum; whisper.cpp's: while
  // 100 ms are left), each hearing nothing after the clip's end under OpenAI's rules.
  const int* clip_frames = nullptr;
  int n_clips = 0;
  // Windows hear nothing after their clip's end under whisper.cpp's rules too (OpenAI's always
  // cut there): the batched pipeline's chunks (whisper/batched_transcribe.h) then never hear the
  // next chunk's speech, which another window decodes.
  bool hear_only_clip = false;
  // The batched pipeline's chunks (faster-whisper 1.2.1's BatchedInferencePipeline decodes each
  // chunk once): a clip that fits one window (at most chunk_frames long) is decoded by exactly one
  // window and the clip ends there. Its segments are cut at its timestamps; text after the last
  // timestamp (decoding.keep_unclosed_tail should be set) is one more segment ending at the clip's
  // end; audio after a window that ended early is not decoded again. Longer clips seek as usual.
  // No segment ends after its clip's end (a timestamp past it is cut to it), so the segments of
  // consecutive chunks do not overlap (issue 38); the sequential clip loop, as faster-whisper's,
  // does not cut them.
  bool one_window_per_clip = false;
  // faster-whisper's hallucination_silence_threshold (seconds; negative: off): with word_timestamps under
  // OpenAI's rules, whisper/hallucination.h's rule after each window's words are timed (the
  // alignment pass then also computes the word probabilities it reads).
  double hallucination_silence_thold = -1.0;
  float thold_pt = 0.01f;
  float thold_ptsum = 0.01f;
  int max_len = 0;
  bool split_on_word = false;
  TranscribeHooks hooks;
};

struct TranscribeStats {
  int n_windows = 0;
  int n_fallbacks = 0;
  int n_no_speech = 0;  // windows skipped as silence
};

// Runs transcriptions with all per-window memory kept between runs: after a first Run, a second
// one with the same decoding shape (beam_size, best_of) whose segments fit the capacity the
// first left behind makes no heap allocation.
class Transcriber {
 public:
  // token_text maps any token id to its bytes; it must outlive the Transcriber.
  Transcriber(const SpecialTokens& special, int n_text_ctx, std::function<const std::string&(Token)> token_text);

  // Transcribes frames [offset, offset + duration) of `mel` (n_frames_audio frames of real
  // audio, possibly followed by padding up to n_frames_mel; use n_samples / 160, OpenAI's
  // content_frames) into `segments` (cleared first). Times are centiseconds from the start of the
  // audio. Errors: InvalidArgument for a negative offset/duration, an offset past the audio, a
  // prompt that does not fit n_text_ctx, clips with an offset or duration, a negative clip frame
  // or count; the backend's errors (e.g. Cancelled from an abort).
  absl::Status Run(ModelBackend& backend, const float* mel, int n_frames_mel, int n_frames_audio,
                   const TranscribeParams& params, SegmentList* segments, TranscribeStats* stats);

 private:
  SpecialTokens special_;
  int n_text_ctx_;
  // The frames [start, end) to transcribe.
  struct SeekRange {
    int start = 0;
    int end = 0;
  };
  // The frame range of params' offset and duration; the InvalidArgument errors of Run.
  absl::StatusOr<SeekRange> CheckParams(const TranscribeParams& params, int n_frames_audio) const;
  // clips_ from params (its clips, ends capped to the audio) or the one range of CheckParams.
  absl::Status MakeClips(const TranscribeParams& params, int n_frames_audio);
  // The windows of one clip from *seek (moved on). *stop: encoder_begin said stop.
  absl::Status RunClip(ModelBackend& backend, const float* mel, int n_frames_mel, int n_frames_audio,
                       const TranscribeParams& params, const SeekRange& clip, size_t max_past, int* seek,
                       SegmentList* segments, TranscribeStats* stats, bool* stop);
  // Progress (hooks.progress) at frame `seek` of `clip`; 100 at the end.
  void ReportProgress(const TranscribeParams& params, int pct);
  // The hallucination_silence_threshold rule on the window at `seek` whose audio ends at frame
  // window_end (its chunk or clip: faster-whisper's seek + segment_size), after AlignWindow:
  // returns false when the window is dropped (*advance moves to its first segment); otherwise
  // drops its last segments when one is a likely hallucination (window_segments_, result_.tokens
  // cut to match, last_speech as faster-whisper's get_end) and may move *advance.
  bool CheckHallucinations(const TranscribeParams& params, int seek, int window_end, int n_frames_audio,
                           double last_speech, int* advance);
  // Makes decoder_ for dp's beam size and best-of (reused when they did not change), then resets it.
  void ResetDecoder(const DecodingParams& dp);
  // past0_ / past_ at the start of a run: cleared unless keep_past, then the initial prompt
  // (carried in past0_, at most max_past tokens, or put before past_).
  void SeedPast(const TranscribeParams& params, size_t max_past);
  // prompt_ for one window: [<|startofprev|>, hotwords (unless prefixed), past0_, tail of past_]
  // if any of these, then sot, language and task (multilingual), <|notimestamps|>
  // (no_timestamps), then at seek 0 the prefix ([<|0.00|>,] its tokens: *n_prefix of them).
  // Returns the length of the history part; *n_past_used = tokens of past_ in it.
  int BuildPrompt(const TranscribeParams& params, size_t max_past, int seek, size_t* n_past_used, int* n_prefix);
  // Moves window_segments_ into `segments` (ends cut to seek_end, frames, with duration_ms under
  // OpenAI's rules and with one_window_per_clip), each timed (token timestamps)
  // and split (-ml, VAD gaps) while it is the list's last, with the window's Segment::Window
  // (its start `seek`, mel frames, and result_'s scores); calls hooks.new_segments.
  void AppendWindowSegments(const TranscribeParams& params, int seek, int seek_end, SegmentList* segments);
  // past_ after a window: OpenAI's condition_on_previous_text rule, or whisper.cpp's prompt_past1.
  void UpdatePast(const TranscribeParams& params, size_t max_past, size_t n_past_used, bool no_speech);
  // Moves the list's last segment through SplitLastSegmentAtGap (each of params.gaps) and
  // WrapLastSegment; returns the number of segments it became.
  int SplitAtGapsAndWrap(const TranscribeParams& params, SegmentList* segments);
  // window_language_ for the window just encoded: params.language_id, or with params.multilingual
  // (multilingual models) the window's detected language. Errors: the backend's.
  absl::Status ChooseWindowLanguage(ModelBackend& backend, const TranscribeParams& params);
  // DTW timestamps of window_segments_ (params.word_timestamps); may move *advance.
  absl::Status AlignWindow(ModelBackend& backend, const TranscribeParams& params, int seek, int seek_end,
                           int n_history, int* advance);

  std::vector<SeekRange> clips_;  // the clips of the current Run
  // Progress over the clips' frames: done before the current clip, of total.
  int64_t progress_done_ = 0;
  int64_t progress_total_ = 0;
  int last_progress_ = -1;
  std::vector<HalWord> hal_words_;  // the window's words for CheckHallucinations
  std::vector<HalSegment> hal_segments_;
  std::function<const std::string&(Token)> token_text_;
  std::unique_ptr<WindowDecoder> decoder_;
  int decoder_beam_size_ = -1;
  int decoder_best_of_ = -1;
  WindowResult result_;
  SegmentList window_segments_;  // one window's segments before they join the output
  SegmentList gap_pieces_;       // a segment split at VAD gaps, before the pieces join the list
  std::vector<Token> past0_;  // the carried initial prompt
  std::vector<Token> past_;   // previous text
  std::vector<Token> prompt_;
  int window_language_ = 0;  // the language id of the current window's prompt and segments
};

// One-shot form of Transcriber::Run into a vector (tests, tools).
absl::Status Transcribe(ModelBackend& backend, const SpecialTokens& special, int n_text_ctx,
                        const std::function<const std::string&(Token)>& token_text, const float* mel,
                        int n_frames_mel, int n_frames_audio, const TranscribeParams& params,
                        std::vector<Segment>* segments, TranscribeStats* stats);

// Language detection (whisper.cpp whisper_lang_auto_detect_with_state): encodes the window at
// frame `seek`, decodes [sot] on decoder 0 and softmaxes the logits of the model's language
// tokens (ids [0, min(num_languages, 100))). Writes probs[id] for those ids into `probs` (may be
// null; else kMaxLanguages floats, the rest 0) and returns the most probable id (0 = en).
// Errors: FailedPrecondition for an English-only model; the backend's errors.
absl::StatusOr<int> DetectLanguage(ModelBackend& backend, const SpecialTokens& special, const float* mel,
                                   int n_frames_mel, int n_frames_audio, int seek = 0, float* probs = nullptr);

// DetectLanguage on the window the backend encoded last (no new encoder run): decodes [sot] on
// decoder 0 (its KV cache position 0 is overwritten) and softmaxes the language tokens' logits, as
// CTranslate2's Whisper detect_language on an encoder output (what faster-whisper's
// multilingual=True calls per window). probs and the result as DetectLanguage's; same errors.
absl::StatusOr<int> DetectLanguageOfEncoded(ModelBackend& backend, const SpecialTokens& special, float* probs);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_TRANSCRIBE_H_
