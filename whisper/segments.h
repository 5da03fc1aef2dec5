// Segments from a window's tokens, and where the next window starts. Segment rules follow
// whisper.cpp (src/whisper.cpp whisper_full_with_state, "output results through a user-provided
// callback"): a timestamp token after text closes a segment; consecutive timestamps advance the
// start; a segment's tokens are those from just after the previous segment's closing timestamps
// through its own closing timestamp (so the first segment of a window starts with its opening
// timestamp, <|0.00|> usually). The seek rule follows OpenAI's transcribe.py: a window whose
// tokens end in "text, timestamp" (single timestamp ending) advances by the whole window,
// otherwise seek moves to the last timestamp.
#ifndef GGML_WHISPER_WHISPER_SEGMENTS_H_
#define GGML_WHISPER_WHISPER_SEGMENTS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "whisper/tokens.h"

namespace whisper {

struct Segment {
  int64_t t0 = 0;  // centiseconds from the start of the audio
  int64_t t1 = 0;  // centiseconds
  std::string text;  // UTF-8, as the tokens spell it (usually starts with a space)
  std::vector<TokenData> tokens;  // text tokens and the timestamp tokens among them (see above)
  // The timestamp token just before tokens[0] that opened the segment ("<|t|>" of "... <|t|><|t|>
  // text"), which whisper.cpp's rule leaves out of both segments and OpenAI's slicing
  // (faster-whisper's Segment.tokens) puts first in this one; -1 when tokens[0] opens it.
  Token opening_timestamp = -1;
  float no_speech_prob = 0.0f;    // of the window the segment came from
  bool speaker_turn_next = false;  // tinydiarize: the model predicts a speaker turn after it
  // whisper.cpp language id (0 = en) of the prompt the segment's window was decoded with: the
  // transcription's language, or its window's detected one (TranscribeParams::multilingual).
  int language_id = 0;
  // The decoding attempt of the segment's window (faster-whisper 1.2.1's Segment.seek,
  // temperature, avg_logprob and compression_ratio, which describe the window, not the segment):
  // its start in mel frames (10 ms) of the decoded audio, the temperature of the kept attempt (the
  // last one tried when every temperature failed under OpenAI's rules), WindowResult::avg_logprob
  // and the zlib compression ratio of the attempt's text. Set by the Transcriber.
  struct Window {
    int64_t seek = 0;
    float temperature = 0.0f;
    float avg_logprob = 0.0f;
    float compression_ratio = 0.0f;
  } window;
  // whisper-cli -di: "0", "1" or "?" (EstimateSpeaker in apps/common/output.h), set by the CLI; empty
  // when not diarized. The writers label the segment with it.
  std::string speaker;
  // Word timestamps (whisper/word_timestamps.h): 1 at each token that starts a word, 0 elsewhere,
  // as long as `tokens`; empty when words were not computed.
  std::vector<uint8_t> word_begin;
  // With word_begin under OpenAI's rules: at each text token, the probability of the word it is
  // part of (the mean of the word's own tokens' alignment-pass probabilities: faster-whisper's
  // Word.probability), -1 at other tokens; as long as `tokens`, or empty.
  std::vector<float> word_probability;
};

// An append-only list of segments whose elements keep their string and vector capacity across
// Clear(). Each new element reserves kReserveTextBytes of text and kReserveTokens tokens (a
// window decodes at most n_text_ctx / 2 tokens, 224 for every released model, and segments
// are usually much shorter), so a transcription that yields no more segments than an earlier one
// on the same list, none of them past those sizes, makes no heap allocation here.
class SegmentList {
 public:
  static constexpr size_t kReserveTextBytes = 512;
  static constexpr size_t kReserveTokens = 128;

  void Clear() { size_ = 0; }
  // A new, empty segment at the end (a reused element, cleared).
  Segment& Append();
  // Drops every segment from index n on (n <= size()).
  void Truncate(size_t n) { size_ = n < size_ ? n : size_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Segment& operator[](size_t i) { return items_[i]; }
  const Segment& operator[](size_t i) const { return items_[i]; }
  const Segment& back() const { return items_[size_ - 1]; }
  std::vector<Segment> ToVector() const { return {items_.begin(), items_.begin() + size_}; }

 private:
  std::vector<Segment> items_;
  size_t size_ = 0;
};

struct SegmentOptions {
  bool print_special = false;   // special tokens' names are part of the text (whisper-cli -ps)
  bool single_segment = false;  // timestamps do not split: one segment per window
  // tinydiarize (whisper_full_params.tdrz_enable): a segment in which <|startoflm|> was sampled
  // gets speaker_turn_next, as whisper.cpp marks the turn its tdrz models predict.
  bool tdrz = false;
};

// Appends the segments of one window's tokens to `out`. seek: window start (centiseconds = mel
// frames); seek_delta: the window's last timestamp in centiseconds (for trailing text);
// token_text maps a token id to its bytes; no_speech_prob is stored in each segment. Returns
// the number of segments added.
int AppendSegments(const SpecialTokens& special, const std::vector<TokenData>& tokens, int64_t seek, int seek_delta,
                   const std::function<const std::string&(Token)>& token_text, const SegmentOptions& options,
                   float no_speech_prob, SegmentList* out);

// Frames (10 ms) to advance after a window: the full window (min(3000, frames left)) on a single
// timestamp ending or when there are no two consecutive timestamps; otherwise seek_delta.
int SeekAdvance(const SpecialTokens& special, const std::vector<Token>& tokens, int seek_delta, int frames_left);

// Splits the LAST segment of `list` so that no piece has more than max_len UTF-8 characters of
// text (whisper.cpp whisper_wrap_segment, used for -ml with token timestamps): a new segment
// starts before the text token that would pass max_len (with split_on_word, only before a token
// whose text starts with a space), at that token's t0, so token times must be set (see
// whisper/token_timestamps.h). Special tokens (>= eot) carry no text and never split. A token
// alone longer than max_len stays whole. words_are_characters (languages written without spaces,
// SplitsWordsOnUnicode in whisper/vocab.h, under OpenAI's rules): with split_on_word a word
// starts at every whole character instead, as faster-whisper splits them. Returns the number of
// segments the last one became (1 when unchanged, and for max_len <= 0).
int WrapLastSegment(const SpecialTokens& special, int max_len, bool split_on_word,
                    const std::function<const std::string&(Token)>& token_text, SegmentList* list,
                    bool words_are_characters = false);

// Splits the LAST segment of `list` when it spans the gap [gap_begin, gap_end) (centiseconds;
// VAD's removed silence): before the first text token (not the segment's first) whose t0 is at
// or after gap_begin, the head ending at gap_begin and the tail starting at gap_end, each with the
// text of its own text tokens (word starts and token times kept). Needs token times (t0 >= 0).
// Returns true when it split.
bool SplitLastSegmentAtGap(const SpecialTokens& special, int64_t gap_begin, int64_t gap_end,
                           const std::function<const std::string&(Token)>& token_text, SegmentList* list);

// Characters (UTF-8 code points) in `s`: bytes that are not continuation bytes.
int Utf8Length(const std::string& s);
// True when `s` ends inside a UTF-8 character that later bytes could complete: a lead byte
// followed by fewer continuation bytes than it announces (a byte-level BPE token often holds part
// of a CJK character). Tokens are split into characters this way by faster-whisper's
// split_tokens_on_unicode (a piece is whole when it decodes without U+FFFD at its end).
bool EndsInsideUtf8Character(const std::string& s);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_SEGMENTS_H_
