#include "whisper/transcribe.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "whisper/vocab.h"

namespace whisper {
namespace {

// whisper.cpp 1.8.5 starts no window with its delta_min (10 frames, 100 ms) or less left; OpenAI's
// rules (faster-whisper 1.2.1 generate_segments: `if seek >= seek_clip_end` ends the clip) start
// one while any frame is left.
constexpr int kMinFramesLeftWhisperCpp = 10;
constexpr int kWindowFrames = 3000;
// whisper.cpp clears the past prompt when at most 5 s (500 frames) remain.
constexpr int kClearPastFrames = 500;

// faster-whisper 1.2.1's _split_segments_by_timestamps without consecutive timestamps: when the
// window's last timestamp is <|0.00|> or it has none, its one segment lasts segment_duration.
bool Untimed(const SpecialTokens& special, const std::vector<Token>& tokens) {
  for (size_t i = tokens.size(); i-- > 0;) {
    if (special.IsTimestamp(tokens[i])) return tokens[i] == special.beg;
  }
  return true;
}

// *dst = src, reusing dst's string and vector capacity.
void CopySegment(const Segment& src, Segment* dst) {
  dst->t0 = src.t0;
  dst->t1 = src.t1;
  dst->text.assign(src.text);
  dst->tokens.assign(src.tokens.begin(), src.tokens.end());
  dst->word_begin.assign(src.word_begin.begin(), src.word_begin.end());
  dst->word_probability.assign(src.word_probability.begin(), src.word_probability.end());
  dst->no_speech_prob = src.no_speech_prob;
  dst->speaker_turn_next = src.speaker_turn_next;
  dst->language_id = src.language_id;
  dst->window = src.window;
  dst->opening_timestamp = src.opening_timestamp;
}

// Whether -sow splits a window's text at whole characters: the window's language (language_id)
// is written without spaces (zh, ja, th, lo, my, yue) under OpenAI's rules, as faster-whisper
// splits its words; whisper.cpp's rules split at spaces in every language, as whisper-cli does.
bool CharacterWords(const SpecialTokens& special, const TranscribeParams& p, int language_id) {
  return special.multilingual && !p.decoding.whisper_cpp && SplitsWordsOnUnicode(language_id);
}

// Whether the text of tokens [begin, end) (ids below eot) is blank: Python's str.strip() would
// leave nothing (ASCII whitespace; the tokenizer's text of other specials is empty).
bool BlankText(const SpecialTokens& special, const std::vector<Token>& tokens, size_t begin, size_t end,
               const std::function<const std::string&(Token)>& token_text) {
  for (size_t i = begin; i < end; ++i) {
    if (tokens[i] >= special.eot) continue;
    for (const char c : token_text(tokens[i])) {
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') return false;
    }
  }
  return true;
}

// OpenAI's previous text after a window (faster-whisper 1.2.1 transcribe.py generate_segments:
// all_tokens.extend(segment["tokens"]) for each segment it yields): the window's tokens cut as
// _split_segments_by_timestamps cuts them -- at each consecutive timestamp pair, plus the end on
// a single timestamp ending, and the tokens after the last pair (an unfinished segment) left out;
// or the whole window when there is no pair -- without the segments that are instantaneous
// (first timestamp == last) or have blank text, which it skips.
void AppendSegmentTokens(const SpecialTokens& special, const std::vector<Token>& t,
                         const std::function<const std::string&(Token)>& token_text, std::vector<Token>* past) {
  const size_t n = t.size();
  const auto ts = [&](size_t i) { return special.IsTimestamp(t[i]); };
  const bool single_ending = n >= 2 && !ts(n - 2) && ts(n - 1);
  size_t last = 0;
  bool any_pair = false;
  for (size_t i = 1; i <= n; ++i) {
    const bool cut = i < n ? ts(i) && ts(i - 1) : any_pair && single_ending;
    if (!cut) continue;
    any_pair = true;
    // A slice starts at a timestamp (the window's first token, or the second of a pair).
    const bool instant = ts(last) && ts(i - 1) && t[last] == t[i - 1];
    if (!instant && !BlankText(special, t, last, i, token_text)) past->insert(past->end(), t.begin() + last, t.begin() + i);
    last = i;
  }
  if (!any_pair && !BlankText(special, t, 0, n, token_text)) past->insert(past->end(), t.begin(), t.end());
}

}  // namespace

Transcriber::Transcriber(const SpecialTokens& special, int n_text_ctx,
                         std::function<const std::string&(Token)> token_text)
    : special_(special), n_text_ctx_(n_text_ctx), token_text_(std::move(token_text)) {
  past0_.reserve(n_text_ctx);
  past_.reserve(2 * n_text_ctx);
  prompt_.reserve(n_text_ctx);
}

absl::StatusOr<Transcriber::SeekRange> Transcriber::CheckParams(const TranscribeParams& params,
                                                                int n_frames_audio) const {
  if (params.offset_ms < 0 || params.duration_ms < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("transcribe: offset ", params.offset_ms, " ms and duration ", params.duration_ms,
                     " ms must not be negative"));
  }
  SeekRange range;
  range.start = params.offset_ms / 10;
  range.end = n_frames_audio;
  if (params.duration_ms > 0) range.end = std::min(range.end, range.start + params.duration_ms / 10);
  if (range.start > n_frames_audio) {
    return absl::InvalidArgumentError(absl::StrCat("transcribe: offset ", params.offset_ms,
                                                   " ms is past the end of the audio (", n_frames_audio * 10,
                                                   " ms)"));
  }
  if (params.n_initial_prompt < 0 || (params.n_initial_prompt > 0 && params.initial_prompt == nullptr)) {
    return absl::InvalidArgumentError(absl::StrCat("transcribe: initial prompt of ", params.n_initial_prompt,
                                                   " tokens with no data"));
  }
  for (int i = 0; i < params.n_initial_prompt; ++i) {
    if (params.initial_prompt[i] < 0 || params.initial_prompt[i] >= special_.n_vocab) {
      return absl::InvalidArgumentError(absl::StrCat("transcribe: initial prompt token ", i, " is ",
                                                     params.initial_prompt[i], ", not in [0, n_vocab ",
                                                     special_.n_vocab, ")"));
    }
  }
  return range;
}

void Transcriber::ResetDecoder(const DecodingParams& dp) {
  if (decoder_ == nullptr || decoder_beam_size_ != dp.beam_size || decoder_best_of_ != dp.best_of) {
    decoder_ = std::make_unique<WindowDecoder>(special_, n_text_ctx_, dp, token_text_);
    decoder_beam_size_ = dp.beam_size;
    decoder_best_of_ = dp.best_of;
  }
  decoder_->Reset(dp);
}

void Transcriber::SeedPast(const TranscribeParams& params, size_t max_past) {
  if (!params.keep_past) {
    past0_.clear();
    past_.clear();
  }
  if (params.n_initial_prompt > 0) {
    const size_t n = static_cast<size_t>(params.n_initial_prompt);
    if (params.carry_initial_prompt) {
      const size_t keep = std::min(n, std::max<size_t>(1, max_past));
      if (past0_.empty()) past0_.assign(params.initial_prompt + (n - keep), params.initial_prompt + n);
    } else {
      past_.insert(past_.begin(), params.initial_prompt, params.initial_prompt + n);
    }
  }
}

int Transcriber::BuildPrompt(const TranscribeParams& params, size_t max_past, int seek, size_t* n_past_used,
                             int* n_prefix) {
  prompt_.clear();
  *n_past_used = 0;
  *n_prefix = 0;
  // faster-whisper 1.2.1 get_prompt: hotwords and the prefix are cut to max_length // 2 - 1 tokens.
  const int max_part = n_text_ctx_ / 2 - 1;
  const bool prefixed = seek == 0 && params.n_prefix > 0;
  const int n_hot = prefixed ? 0 : std::min(params.n_hotwords, max_part);
  const bool has_past = max_past > 0 && (!past0_.empty() || !past_.empty());
  if (has_past || n_hot > 0) {
    prompt_.push_back(special_.prev);
    prompt_.insert(prompt_.end(), params.hotwords, params.hotwords + n_hot);
  }
  if (has_past) {
    prompt_.insert(prompt_.end(), past0_.begin(), past0_.end());
    const size_t room = max_past > past0_.size() ? max_past - past0_.size() : 0;
    *n_past_used = std::min(past_.size(), room);
    prompt_.insert(prompt_.end(), past_.end() - *n_past_used, past_.end());
  }
  const int n_history = static_cast<int>(prompt_.size());  // [prev, hotwords, past...]
  prompt_.push_back(special_.sot);
  if (special_.multilingual) {
    prompt_.push_back(special_.Language(window_language_));
    prompt_.push_back(params.translate ? special_.translate : special_.transcribe);
  }
  if (params.decoding.filter.no_timestamps) prompt_.push_back(special_.not_);
  if (prefixed) {
    const size_t before = prompt_.size();
    if (!params.decoding.filter.no_timestamps) prompt_.push_back(special_.beg);
    prompt_.insert(prompt_.end(), params.prefix, params.prefix + std::min(params.n_prefix, max_part));
    *n_prefix = static_cast<int>(prompt_.size() - before);
  }
  return n_history;
}

void Transcriber::AppendWindowSegments(const TranscribeParams& params, int seek, int seek_end, SegmentList* segments) {
  const TranscribeHooks& hooks = params.hooks;
  // A timestamp may name a time past the end of the audio: neither whisper.cpp nor faster-whisper
  // 1.2.1 clamps it (on jfk.wav cut at 10.3 s both end the last segment at 10.34; a clip_timestamps
  // clip's last segment may end past the clip). Only duration_ms (whisper.cpp's, under OpenAI's
  // rules) clamps to the end of the stretch decoded, and so do the batched pipeline's chunks
  // (one_window_per_clip): issue 38 wants no segment of a chunk to overlap the next chunk's.
  const bool clamp = params.one_window_per_clip || (params.duration_ms > 0 && !params.decoding.whisper_cpp);
  const int64_t end_cs = clamp ? seek_end : INT64_MAX;
  // Each segment is appended, timed and split while it is the list's last, as whisper.cpp
  // does (the copies reuse the list's capacity).
  for (size_t k = 0; k < window_segments_.size(); ++k) {
    const Segment& w = window_segments_[k];
    Segment& s = segments->Append();
    CopySegment(w, &s);
    s.language_id = window_language_;
    s.window = {seek, result_.temperature, result_.avg_logprob, result_.compression_ratio};
    s.t1 = std::min<int64_t>(w.t1, end_cs);
    s.t0 = std::min<int64_t>(w.t0, s.t1);
    int pieces = 1;
    if (params.token_timestamps != nullptr) {
      // Word timestamps already timed the tokens (OpenAI's rules); else the heuristic does.
      if (s.word_begin.empty()) {
        params.token_timestamps->Compute(special_, token_text_, params.thold_pt, params.thold_ptsum, &s);
      }
      pieces = params.n_gaps > 0 ? SplitAtGapsAndWrap(params, segments)
                                 : WrapLastSegment(special_, params.max_len, params.split_on_word, token_text_,
                                                   segments, CharacterWords(special_, params, window_language_));
    }
    // One call per decoded segment (n_new > 1 when -ml split it), as whisper.cpp calls
    // new_segment_callback.
    if (hooks.new_segments != nullptr) hooks.new_segments(hooks.user, pieces);
  }
}

void Transcriber::UpdatePast(const TranscribeParams& params, size_t max_past, size_t n_past_used, bool no_speech) {
  if (!params.decoding.whisper_cpp) {
    if (no_speech) return;
    if (params.condition_on_previous_text && !(result_.temperature > params.prompt_reset_on_temperature)) {
      AppendSegmentTokens(special_, result_.tokens, token_text_, &past_);
      if (past_.size() > max_past) past_.erase(past_.begin(), past_.end() - max_past);
    } else {
      past_.clear();
    }
    return;
  }
  // whisper.cpp's prompt_past1: the past text the accepted attempt was prompted with (none if
  // it ran without, and none when the initial prompt is carried), then this window's text
  // unless it was silence.
  if (result_.history_dropped || params.carry_initial_prompt) {
    past_.clear();
  } else if (past_.size() > n_past_used) {
    past_.erase(past_.begin(), past_.end() - n_past_used);
  }
  if (!no_speech) past_.insert(past_.end(), result_.tokens.begin(), result_.tokens.end());
}

absl::Status Transcriber::MakeClips(const TranscribeParams& params, int n_frames_audio) {
  clips_.clear();
  if (params.n_clips < 0 || (params.n_clips > 0 && params.clip_frames == nullptr)) {
    return absl::InvalidArgumentError(absl::StrCat("transcribe: ", params.n_clips, " clips with no data"));
  }
  if (params.n_clips == 0) {
    absl::StatusOr<SeekRange> range = CheckParams(params, n_frames_audio);
    if (!range.ok()) return range.status();
    clips_.push_back(*range);
    return absl::OkStatus();
  }
  if (params.offset_ms != 0 || params.duration_ms != 0) {
    return absl::InvalidArgumentError(absl::StrCat("transcribe: clips with offset ", params.offset_ms,
                                                   " ms and duration ", params.duration_ms, " ms (need 0 and 0)"));
  }
  absl::StatusOr<SeekRange> checked = CheckParams(params, n_frames_audio);  // the prompt's checks
  if (!checked.ok()) return checked.status();
  for (int k = 0; k < params.n_clips; ++k) {
    SeekRange r;
    r.start = params.clip_frames[2 * k];
    r.end = std::min(params.clip_frames[2 * k + 1], n_frames_audio);  // faster-whisper: min(end, content_frames)
    if (params.clip_frames[2 * k] < 0 || params.clip_frames[2 * k + 1] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("transcribe: clip ", k, " is frames [", r.start, ", ",
                                                     params.clip_frames[2 * k + 1], "): must not be negative"));
    }
    clips_.push_back(r);
  }
  return absl::OkStatus();
}

void Transcriber::ReportProgress(const TranscribeParams& params, int pct) {
  pct = std::max(last_progress_, std::min(100, std::max(0, pct)));
  if (params.hooks.progress != nullptr && pct != last_progress_) params.hooks.progress(params.hooks.user, pct);
  last_progress_ = pct;
}

absl::Status Transcriber::Run(ModelBackend& backend, const float* mel, int n_frames_mel, int n_frames_audio,
                              const TranscribeParams& params, SegmentList* segments, TranscribeStats* stats) {
  segments->Clear();
  *stats = TranscribeStats();
  absl::Status st = MakeClips(params, n_frames_audio);
  if (!st.ok()) return st;
  ResetDecoder(params.decoding);

  // Past text budget: whisper.cpp's min(n_max_text_ctx, n_text_ctx / 2) including <|startofprev|>.
  const int max_prompt_ctx = std::min(params.max_text_ctx, n_text_ctx_ / 2);
  const size_t max_past = static_cast<size_t>(std::max(0, max_prompt_ctx - 1));
  SeedPast(params, max_past);
  last_progress_ = -1;
  progress_done_ = 0;
  progress_total_ = 0;
  for (const SeekRange& c : clips_) progress_total_ += std::max(0, c.end - c.start);

  // faster-whisper's seek_clips loop: each clip from its start (seek = seek_clips[clip_idx][0]).
  int seek = 0;
  for (const SeekRange& clip : clips_) {
    seek = clip.start;
    bool stop = false;
    st = RunClip(backend, mel, n_frames_mel, n_frames_audio, params, clip, max_past, &seek, segments, stats, &stop);
    if (!st.ok()) return st;
    if (stop) break;
    progress_done_ += std::max(0, clip.end - clip.start);
  }
  ReportProgress(params, 100);
  return absl::OkStatus();
}

absl::Status Transcriber::RunClip(ModelBackend& backend, const float* mel, int n_frames_mel, int n_frames_audio,
                                  const TranscribeParams& params, const SeekRange& clip, size_t max_past, int* seek_io,
                                  SegmentList* segments, TranscribeStats* stats, bool* stop) {
  const DecodingParams& dp = params.decoding;
  const bool wcpp = dp.whisper_cpp;
  const TranscribeHooks& hooks = params.hooks;
  // Windows start while this many frames are left: whisper.cpp's 10 (delta_min); OpenAI's rules
  // while any frame is (faster-whisper 1.2.1 generate_segments: `if seek >= seek_clip_end` ends
  // the clip).
  const int min_frames_left = wcpp ? kMinFramesLeftWhisperCpp : 0;
  const int chunk = params.chunk_frames > 0 ? std::min(params.chunk_frames, kWindowFrames) : kWindowFrames;
  const int seek_start = clip.start;
  const int seek_end = clip.end;
  int& seek = *seek_io;
  const bool one_window = params.one_window_per_clip && seek_end - seek_start <= chunk;
  while (seek + min_frames_left < seek_end) {
    // The window's audio: chunk_length (faster-whisper's nb_max_frames) or to the clip's end.
    const int window_end = std::min(seek_end, seek + chunk);
    ReportProgress(params, static_cast<int>(100 * (progress_done_ + seek - seek_start) /
                                            std::max<int64_t>(1, progress_total_)));
    if (hooks.encoder_begin != nullptr && !hooks.encoder_begin(hooks.user)) {
      *stop = true;
      break;
    }
    // Frames past window_end (the audio's end, the end of -d, of the clip or of chunk_length) are
    // 0.0 in the window, so nothing after the requested range is heard (faster-whisper cuts the
    // mel the same way).
    const int n_valid = wcpp && chunk == kWindowFrames && !params.hear_only_clip ? n_frames_mel : window_end;
    absl::Status st = backend.Encode(mel, n_frames_mel, seek, params.audio_ctx, n_valid);
    if (!st.ok()) return st;
    st = ChooseWindowLanguage(backend, params);
    if (!st.ok()) return st;

    // whisper.cpp's rule only: OpenAI's transcribe.py and faster-whisper keep the previous text to
    // the end (a window that starts 4 s before the end is prompted with it).
    if (wcpp && seek > seek_start && seek_end - seek <= kClearPastFrames) {
      past0_.clear();
      past_.clear();
    }
    size_t n_past_used = 0;  // tokens of past_ in this prompt (its tail)
    int n_prefix = 0;
    const int n_history = BuildPrompt(params, max_past, seek, &n_past_used, &n_prefix);

    st = decoder_->Run(backend, prompt_, seek, seek_end, &result_, n_history, n_prefix);
    if (!st.ok()) return st;
    stats->n_windows++;
    stats->n_fallbacks += result_.n_fallbacks;

    // A window without a timestamp after <|0.00|> is one segment over the window's audio (its
    // chunk, clip or what is left; faster-whisper: end = segment_duration, not clamped further).
    if (wcpp ? chunk < kWindowFrames && result_.seek_delta >= kWindowFrames : Untimed(special_, result_.tokens)) {
      result_.seek_delta = window_end - seek;
    }
    if (one_window && !result_.tokens.empty() && !special_.IsTimestamp(result_.tokens.back())) {
      result_.seek_delta = window_end - seek;  // one window per clip: trailing text ends with the clip
    }
    int advance = SeekAdvance(special_, result_.tokens, result_.seek_delta, window_end - seek);
    const bool no_speech = result_.no_speech_prob > dp.no_speech_thold && result_.avg_logprob < dp.logprob_thold;
    if (no_speech) {
      stats->n_no_speech++;
    } else {
      window_segments_.Clear();
      AppendSegments(special_, result_.token_data, seek, result_.seek_delta, token_text_, params.segments,
                     result_.no_speech_prob, &window_segments_);
      if (params.word_timestamps != nullptr) {
        const double last_speech = params.word_timestamps->last_speech();
        st = AlignWindow(backend, params, seek, window_end, n_history, &advance);
        if (!st.ok()) return st;
        if (!CheckHallucinations(params, seek, window_end, n_frames_audio, last_speech, &advance)) {
          seek = one_window ? seek_end : seek + advance;  // faster-whisper's `continue`
          continue;
        }
      }
      AppendWindowSegments(params, seek, seek_end, segments);
    }
    UpdatePast(params, max_past, n_past_used, no_speech);
    seek = one_window ? seek_end : seek + advance;
  }
  return absl::OkStatus();
}

absl::Status Transcriber::ChooseWindowLanguage(ModelBackend& backend, const TranscribeParams& params) {
  window_language_ = params.language_id;
  if (!params.multilingual || !special_.multilingual) return absl::OkStatus();
  // faster-whisper 1.2.1 transcribe.py generate_segments, `if options.multilingual:` -- the top
  // language of model.detect_language(encoder_output) on the window about to be decoded, whatever
  // its probability (no language_detection_threshold), becomes tokenizer.language for this
  // window's prompt (get_prompt's sot_sequence) and its word splitting (language_code).
  absl::StatusOr<int> id = DetectLanguageOfEncoded(backend, special_, nullptr);
  if (!id.ok()) return id.status();
  window_language_ = *id;
  return absl::OkStatus();
}

int Transcriber::SplitAtGapsAndWrap(const TranscribeParams& params, SegmentList* segments) {
  // The last segment moves to gap_pieces_, splits there at each gap it spans, and each piece
  // comes back through WrapLastSegment (-ml).
  gap_pieces_.Clear();
  CopySegment(segments->back(), &gap_pieces_.Append());
  segments->Truncate(segments->size() - 1);
  for (int g = 0; g < params.n_gaps; ++g) {
    SplitLastSegmentAtGap(special_, params.gaps[2 * g], params.gaps[2 * g + 1], token_text_, &gap_pieces_);
  }
  int pieces = 0;
  for (size_t i = 0; i < gap_pieces_.size(); ++i) {
    CopySegment(gap_pieces_[i], &segments->Append());
    pieces += WrapLastSegment(special_, params.max_len, params.split_on_word, token_text_, segments,
                              CharacterWords(special_, params, window_language_));
  }
  return pieces;
}

absl::Status Transcriber::AlignWindow(ModelBackend& backend, const TranscribeParams& params, int seek, int seek_end,
                                      int n_history, int* advance) {
  const bool wcpp = params.decoding.whisper_cpp;
  WordTimestamps& words = *params.word_timestamps;
  const int sot_len = special_.multilingual ? 3 : 1;  // sot (language, task): prompt_[n_history ..]
  const std::vector<Token>& seq =
      words.Sequence(special_, prompt_.data() + n_history, sot_len, window_segments_, 0, window_segments_.size());
  if (seq.empty()) return absl::OkStatus();
  // Word probabilities (Segment::word_probability, read by the hallucination rule): the alignment
  // pass's logits from the <|notimestamps|> position (sot_len) on, as faster-whisper's
  // find_alignment always computes them.
  const bool probs = !wcpp;
  absl::StatusOr<ModelBackend::AlignmentLogits> qk =
      backend.Align(seq.data(), static_cast<int>(seq.size()), probs ? sot_len : -1);
  if (!qk.ok()) return qk.status();
  if (probs && qk->logits == nullptr) return absl::InternalError("word probabilities: the backend gave no logits");
  // The window's content frames (faster-whisper's segment_size; whisper.cpp also stops at the
  // window's last timestamp), halved by the encoder's stride-2 convolution.
  int n_frames = std::min(3000, seek_end - seek);
  if (wcpp) n_frames = std::min(n_frames, result_.seek_delta);
  n_frames = std::min(qk->n_audio_ctx, std::max(1, n_frames / 2));
  absl::Status st = words.Compute(special_, token_text_, qk->qk, qk->n_heads, qk->n_audio_ctx, n_frames, sot_len,
                                  seek, !wcpp, &window_segments_, 0, window_segments_.size(),
                                  probs ? qk->logits : nullptr, qk->n_vocab);
  if (!st.ok()) return st;
  // transcribe.py: unless the window ended on a single timestamp, the next starts at the last
  // word's end.
  const std::vector<Token>& t = result_.tokens;
  const size_t n = t.size();
  const bool single_ending = n >= 2 && special_.IsTimestamp(t[n - 1]) && !special_.IsTimestamp(t[n - 2]);
  if (!wcpp && !single_ending && words.last_end() > seek) *advance = static_cast<int>(words.last_end() - seek);
  return absl::OkStatus();
}

bool Transcriber::CheckHallucinations(const TranscribeParams& params, int seek, int window_end, int n_frames_audio,
                                      double last_speech, int* advance) {
  if (params.decoding.whisper_cpp || !(params.hallucination_silence_thold >= 0.0)) return true;
  WordTimestamps& words = *params.word_timestamps;
  // The window's segments and their words as faster-whisper's current_segments.
  hal_words_.clear();
  hal_segments_.clear();
  for (size_t i = 0; i < window_segments_.size(); ++i) {
    for (size_t k = 0; k < words.n_segment_words(i); ++k) {
      const WordTimestamps::Word& w = words.segment_word(i, k);
      hal_words_.push_back(HalWord{w.text, w.start, w.end, w.probability});
    }
  }
  size_t next_word = 0;
  for (size_t i = 0; i < window_segments_.size(); ++i) {
    HalSegment h;
    h.start = window_segments_[i].t0 / 100.0;
    h.end = window_segments_[i].t1 / 100.0;
    h.n_words = words.n_segment_words(i);
    h.words = h.n_words > 0 ? &hal_words_[next_word] : nullptr;
    next_word += h.n_words;
    hal_segments_.push_back(h);
  }
  HalWindow w;
  w.seek = seek;
  w.segment_size = std::min(3000, window_end - seek);  // min(nb_max_frames, content - seek, clip end - seek)
  w.content_frames = n_frames_audio;
  w.threshold = params.hallucination_silence_thold;
  w.last_speech = last_speech;
  const HalDecision d = whisper::CheckHallucinations(hal_segments_.data(), hal_segments_.size(), w);
  if (d.action == HalDecision::kKeep) return true;
  // At least one frame on, whatever the times (faster-whisper would decode the same window again).
  *advance = std::max(1, d.seek - seek);
  if (d.action == HalDecision::kSkipWindow) {
    words.set_last_speech(last_speech);  // faster-whisper `continue`s before updating it
    return false;
  }
  // Drop segments [first_dropped, ...): the past keeps the tokens through the last kept text
  // token's closing timestamp (faster-whisper's slices of the kept segments); last_speech is
  // get_end of the kept segments (unchanged when none is kept).
  size_t n_text = 0;
  for (size_t i = 0; i < d.first_dropped; ++i) {
    for (const TokenData& t : window_segments_[i].tokens) n_text += special_.IsText(t.id);
  }
  size_t cut = 0;
  for (size_t i = 0, seen = 0; i < result_.tokens.size() && seen < n_text; ++i) {
    if (special_.IsText(result_.tokens[i]) && ++seen == n_text) {
      cut = i + 1;
      while (cut < result_.tokens.size() && !special_.IsTimestamp(result_.tokens[cut - 1])) ++cut;
    }
  }
  result_.tokens.resize(cut);
  window_segments_.Truncate(d.first_dropped);
  double end = d.first_dropped > 0 ? hal_segments_[d.first_dropped - 1].end : last_speech;
  for (size_t i = d.first_dropped; i-- > 0;) {
    if (hal_segments_[i].n_words == 0) continue;
    end = hal_segments_[i].words[hal_segments_[i].n_words - 1].end;
    break;
  }
  words.set_last_speech(end);
  return true;
}

absl::Status Transcribe(ModelBackend& backend, const SpecialTokens& special, int n_text_ctx,
                        const std::function<const std::string&(Token)>& token_text, const float* mel,
                        int n_frames_mel, int n_frames_audio, const TranscribeParams& params,
                        std::vector<Segment>* segments, TranscribeStats* stats) {
  Transcriber t(special, n_text_ctx, token_text);
  SegmentList list;
  absl::Status st = t.Run(backend, mel, n_frames_mel, n_frames_audio, params, &list, stats);
  *segments = list.ToVector();
  return st;
}

absl::StatusOr<int> DetectLanguage(ModelBackend& backend, const SpecialTokens& special, const float* mel,
                                   int n_frames_mel, int n_frames_audio, int seek, float* probs) {
  if (!special.multilingual || special.num_languages <= 0) {
    return absl::FailedPreconditionError("language detection needs a multilingual model");
  }
  absl::Status st = backend.Encode(mel, n_frames_mel, seek, 0, n_frames_audio);
  if (!st.ok()) return st;
  return DetectLanguageOfEncoded(backend, special, probs);
}

absl::StatusOr<int> DetectLanguageOfEncoded(ModelBackend& backend, const SpecialTokens& special, float* probs) {
  if (!special.multilingual || special.num_languages <= 0) {
    return absl::FailedPreconditionError("language detection needs a multilingual model");
  }
  absl::Status st = backend.Decode(0, &special.sot, 1, 0);
  if (!st.ok()) return st;
  const float* logits = backend.logits(0);
  const int n = std::min(special.num_languages, kMaxLanguages);
  int best = 0;
  for (int i = 1; i < n; ++i) {
    if (logits[special.Language(i)] > logits[special.Language(best)]) best = i;
  }
  if (probs != nullptr) {
    std::fill(probs, probs + kMaxLanguages, 0.0f);
    const double mx = logits[special.Language(best)];
    double sum = 0.0;
    for (int i = 0; i < n; ++i) sum += std::exp(logits[special.Language(i)] - mx);
    for (int i = 0; i < n; ++i) probs[i] = static_cast<float>(std::exp(logits[special.Language(i)] - mx) / sum);
  }
  return best;
}

}  // namespace whisper
