// Word-level timestamps of one window's segments from DTW over the cross-attention (whisper/dtw.h),
// as faster-whisper 1.2.1 computes them for word_timestamps=True (transcribe.py
// add_word_timestamps and find_alignment; OpenAI whisper/timing.py add_word_timestamps):
//   1. the window's text tokens, plus <|endoftext|>, are split into words: pieces that decode to
//      whole UTF-8 characters (split_tokens_on_unicode), each a word in zh, ja, th, lo, my and yue,
//      else joined unless a piece starts with a space, is punctuation (Python's
//      string.punctuation) or is special (split_tokens_on_spaces);
//   2. a word spans from the DTW jump of its first token to the jump after its last one;
//   3. the median non-zero word duration (at most 0.7 s) bounds words: a sentence mark longer than
//      twice the median is cut, and so is the word after one;
//   4. punctuation merges into its neighbour (merge_punctuations): a word that starts with a space
//      and whose stripped text is a substring of the prepended set (default "'“¿([{-) into the
//      next word, a word that is a substring of the appended set (default "'.。,，!！?？:：”)]}、)
//      into the previous one unless that ends with a space (Begin sets the two sets);
//   5. per segment: the first word after a pause and the segment's first and last words are
//      bounded by the median, then the segment's start and end move to its first word's start and
//      last word's end (unless the word is much longer: then the word is cut to the segment).
// Times are rounded to 10 ms like faster-whisper's round(t, 2).
//
// Results go into the segments: each text token gets t0/t1 (a word's first token starts at the
// word's start, its last token ends at the word's end, tokens inside keep their DTW times within
// the word), t_dtw (whisper.cpp's meaning: the DTW time at which the token ends), and
// Segment::word_begin marks each word's first token. With whisper.cpp's rules (`openai` false)
// only t_dtw is set, as whisper.cpp 1.8.5's -dtw does (with its softmax over the whole window).
#ifndef GGML_WHISPER_WHISPER_WORD_TIMESTAMPS_H_
#define GGML_WHISPER_WHISPER_WORD_TIMESTAMPS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "whisper/dtw.h"
#include "whisper/segments.h"
#include "whisper/tokens.h"

namespace whisper {

class WordTimestamps {
 public:
  // Scratch for sequences of up to max_tokens tokens and windows of up to max_frames audio
  // positions (n_audio_ctx); Compute makes no heap allocation within those and within the word
  // and token counts seen before.
  WordTimestamps(int max_tokens, int max_frames);

  // faster-whisper 1.2.1's prepend_punctuations and append_punctuations defaults (UTF-8).
  static constexpr absl::string_view kDefaultPrepended = "\"'\xE2\x80\x9C\xC2\xBF([{-";  // "'“¿([{-
  static constexpr absl::string_view kDefaultAppended =
      "\"'.\xE3\x80\x82,\xEF\xBC\x8C!\xEF\xBC\x81?\xEF\xBC\x9F:\xEF\xBC\x9A\xE2\x80\x9D)]}\xE3\x80\x81";  // "'.。,，!！?？:：”)]}、

  // Starts a transcription (faster-whisper's last_speech_timestamp = 0) with the punctuation sets
  // of step 4 (faster-whisper's prepend_punctuations and append_punctuations), copied. They must be
  // valid UTF-8 (the caller checks): Python's `in` is a code-point substring test, which equals
  // the byte substring test only then. No heap allocation for sets of up to 64 bytes.
  void Begin(absl::string_view prepended = kDefaultPrepended, absl::string_view appended = kDefaultAppended) {
    last_speech_s_ = 0.0;
    prepended_.assign(prepended.data(), prepended.size());
    appended_.assign(appended.data(), appended.size());
  }
  const std::string& prepended() const { return prepended_; }
  const std::string& appended() const { return appended_; }

  // The sequence to align segments[first, first + n): sot_sequence, <|notimestamps|>, their text
  // tokens (id < eot), <|endoftext|>. Empty when the segments hold no text token. Valid until the
  // next call. The language token of sot_sequence (its second token on multilingual models)
  // chooses how the next Compute splits words: at every whole character for the languages of
  // SplitsWordsOnUnicode (whisper/vocab.h), else at spaces and punctuation.
  const std::vector<Token>& Sequence(const SpecialTokens& special, const Token* sot_sequence, int sot_len,
                                     const SegmentList& segments, size_t first, size_t n);

  // Times segments[first, first + n) (the window starting at `seek` centiseconds) from the
  // alignment logits of the last Sequence(): qk as DtwAligner::Align takes them (n_heads,
  // row_stride), n_frames = the window's content frames / 2. openai: the full word rules above,
  // else t_dtw only. text_logits (optional, openai only): the alignment pass's next-token logits
  // from the <|notimestamps|> position on, n_vocab floats per position (row k predicts the k-th
  // text token): each word's probability is then the mean over its tokens of their softmax
  // probability over the text vocabulary [0, eot) (CTranslate2's Whisper align text_token_probs,
  // faster-whisper's find_alignment word_probabilities; a word keeps its own when punctuation
  // merges into it); without them it is -1. Errors: those of DtwAligner::Align.
  absl::Status Compute(const SpecialTokens& special, const std::function<const std::string&(Token)>& token_text,
                       const float* qk, int n_heads, int row_stride, int n_frames, int sot_len, int64_t seek,
                       bool openai, SegmentList* segments, size_t first, size_t n,
                       const float* text_logits = nullptr, int n_vocab = 0);

  // faster-whisper's get_end after the last Compute: the end of the last word of those segments
  // (centiseconds), or the last segment's end if none has words; -1 when there were no segments.
  int64_t last_end() const { return last_end_; }

  // faster-whisper's last_speech_timestamp (seconds): where the speech before the next window
  // ended, which bounds its first word (step 5). Compute moves it; set_last_speech restores it
  // when the caller drops a window or its last segments (hallucination_silence_threshold).
  double last_speech() const { return last_speech_s_; }
  void set_last_speech(double seconds) { last_speech_s_ = seconds; }

  // A timed word of the last Compute (openai), as faster-whisper's word dict.
  struct Word {
    std::string text;     // with its leading space and merged punctuation
    int token_begin = 0;  // text-token index range [token_begin, token_end) of the window
    int token_end = 0;
    double start = 0.0;   // seconds from the window start; from the audio start (rounded to
    double end = 0.0;     // 10 ms) once assigned to a segment
    double probability = -1.0;  // mean alignment-pass probability of its own tokens; -1 unknown
  };
  // The words of segments[first + i] of the last Compute (openai; none for a segment without
  // text, and none after a Sequence without text), in order: faster-whisper's segment["words"].
  size_t n_segment_words(size_t i) const {
    return i + 1 < seg_word_begin_.size() ? seg_word_begin_[i + 1] - seg_word_begin_[i] : 0;
  }
  const Word& segment_word(size_t i, size_t k) const { return words_[seg_words_[seg_word_begin_[i] + k]]; }

 private:
  Word& NewWord();
  // Word probabilities from the text tokens' probabilities (text_logits rows, see Compute).
  void SetWordProbabilities(const SpecialTokens& special, const float* text_logits, int n_vocab, size_t n_words);

  // The median word duration (at most 0.7 s) and twice it, in seconds (steps 3 and 5).
  struct DurationBounds {
    double median = 0.0;
    double max_duration = 0.0;
  };
  // text_ and text_segment_ from the text tokens of segments[first, last); clears their
  // word_begin. Returns the number of text tokens.
  int CollectTextTokens(const SpecialTokens& special, SegmentList* segments, size_t first, size_t last);
  // Step 1: words_[0, n) from the n_text tokens of text_ plus <|endoftext|>; returns the number
  // of timed words (those before the <|endoftext|> word).
  size_t SplitWords(const std::function<const std::string&(Token)>& token_text, int n_text);
  // Steps 2 and 3: word times from jumps_ (seconds from the window start), then sentence marks
  // cut to twice the median duration, which is returned.
  DurationBounds TimeWordsAndBoundMarks(size_t n_words);
  // Step 4: punctuation joins its neighbour; the emptied word keeps an empty token range.
  void MergePunctuation(size_t n_words);
  // Step 5 for the window's segments: words move to absolute seconds (rounded to 10 ms), each
  // segment's first and last words bound it (BoundSegment). Returns the end of the last timed
  // word (seconds) or -1 when no segment has a word.
  double AssignWordsToSegments(const SpecialTokens& special, int64_t seek, const DurationBounds& bounds,
                               size_t n_words, SegmentList* segments, size_t first, size_t last);
  // Step 5 for one segment with words w0 (first), second_word (or null) and wl (last).
  void BoundSegment(const DurationBounds& bounds, Word& w0, Word* second_word, Word& wl, Segment* seg);
  // Token t0/t1 (centiseconds) and Segment::word_begin from the words; timestamp tokens get the
  // time they name.
  void WriteTokenTimes(const SpecialTokens& special, int64_t seek, size_t n_words, SegmentList* segments,
                       size_t first, size_t last);

  DtwAligner aligner_;
  std::vector<Token> sequence_;
  std::vector<int> jumps_;
  std::vector<TokenData*> text_;     // the window's text tokens, in order
  std::vector<int> text_segment_;    // segment index (from `first`) of each text token
  std::vector<Word> words_;          // a pool: elements keep their string capacity
  size_t n_words_ = 0;
  bool split_on_unicode_ = false;  // each whole-character piece is a word (zh, ja, th, lo, my, yue)
  std::string piece_;
  std::vector<double> durations_;
  double last_speech_s_ = 0.0;
  std::string prepended_{kDefaultPrepended};  // step 4's sets (Begin)
  std::string appended_{kDefaultAppended};
  int64_t last_end_ = -1;
  std::vector<double> token_probs_;      // the text tokens' alignment-pass probabilities
  std::vector<size_t> seg_words_;        // indices into words_ of each segment's words, in order
  std::vector<size_t> seg_word_begin_;   // segment i's words: seg_words_[begin[i], begin[i + 1])
};

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_WORD_TIMESTAMPS_H_
