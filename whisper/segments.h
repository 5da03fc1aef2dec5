// Segments from a window's tokens, and where the next window starts. Segment rules follow
// whisper.cpp (src/whisper.cpp L7644-7781): a timestamp token after text closes a segment;
// consecutive timestamps advance the start. The seek rule follows OpenAI's transcribe.py: a window
// whose tokens end in "text, timestamp" (single timestamp ending) advances by the whole window,
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
  std::vector<Token> tokens;
};

// Appends the segments of one window's tokens to `out`. seek: window start (centiseconds = mel
// frames); seek_delta: the window's last timestamp in centiseconds (for trailing text);
// token_text maps a text token id to its bytes. Returns the number of segments added.
int AppendSegments(const SpecialTokens& special, const std::vector<Token>& tokens, int64_t seek, int seek_delta,
                   const std::function<const std::string&(Token)>& token_text, std::vector<Segment>* out);

// Frames (10 ms) to advance after a window: the full window (min(3000, frames left)) on a single
// timestamp ending or when there are no two consecutive timestamps; otherwise seek_delta.
int SeekAdvance(const SpecialTokens& special, const std::vector<Token>& tokens, int seek_delta, int frames_left);

// Splits segments longer than max_len UTF-8 characters (whisper-cli -ml, whisper.cpp
// whisper_wrap_segment L6096): a new segment starts before the token that would pass max_len
// (with split_on_word, only before a token that starts with a space). Token times are not
// decoded: each token's start is interpolated within its segment in proportion to the characters
// before it (whisper.cpp's token timestamps use the timestamp-token probabilities; this is the
// interpolation it falls back to). max_len <= 0 returns the segments unchanged.
std::vector<Segment> WrapSegments(const std::vector<Segment>& segments, int max_len, bool split_on_word,
                                  const std::function<const std::string&(Token)>& token_text);

// Characters (UTF-8 code points) in `s`: bytes that are not continuation bytes.
int Utf8Length(const std::string& s);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_SEGMENTS_H_
