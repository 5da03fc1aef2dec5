#include "whisper/segments.h"

#include <algorithm>

namespace whisper {

int AppendSegments(const SpecialTokens& s, const std::vector<Token>& tokens, int64_t seek, int seek_delta,
                   const std::function<const std::string&(Token)>& token_text, std::vector<Segment>* out) {
  const size_t before = out->size();
  if (tokens.empty()) return 0;
  int64_t t0 = seek + (s.IsTimestamp(tokens.front()) ? 2 * (tokens.front() - s.beg) : 0);
  Segment cur;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const Token t = tokens[i];
    if (s.IsText(t)) {
      cur.text += token_text(t);
      cur.tokens.push_back(t);
    }
    if (t > s.beg) {  // a timestamp other than <|0.00|> may close a segment
      const int64_t t1 = seek + 2 * (t - s.beg);
      if (!cur.text.empty()) {
        cur.t0 = t0;
        cur.t1 = t1;
        out->push_back(std::move(cur));
        cur = Segment();
        // Skip the timestamps that follow; the last of them starts the next segment.
        while (i + 1 < tokens.size() && tokens[i + 1] > s.beg) ++i;
        t0 = seek + 2 * (tokens[i] - s.beg);
      } else {
        t0 = t1;  // consecutive timestamps advance the start
      }
    }
  }
  if (!cur.text.empty()) {
    cur.t0 = t0;
    cur.t1 = seek + seek_delta;
    out->push_back(std::move(cur));
  }
  return static_cast<int>(out->size() - before);
}

int SeekAdvance(const SpecialTokens& s, const std::vector<Token>& tokens, int seek_delta, int frames_left) {
  const int full = std::min(3000, frames_left);
  const size_t n = tokens.size();
  const bool single_ending = n >= 2 && s.IsTimestamp(tokens[n - 1]) && !s.IsTimestamp(tokens[n - 2]);
  bool consecutive = false;
  for (size_t i = 1; i < n && !consecutive; ++i) {
    consecutive = s.IsTimestamp(tokens[i - 1]) && s.IsTimestamp(tokens[i]);
  }
  if (!consecutive || single_ending || seek_delta <= 0) return full;
  return std::min(seek_delta, full);
}

int Utf8Length(const std::string& s) {
  int n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::vector<Segment> WrapSegments(const std::vector<Segment>& segments, int max_len, bool split_on_word,
                                  const std::function<const std::string&(Token)>& token_text) {
  if (max_len <= 0) return segments;
  std::vector<Segment> out;
  for (const Segment& seg : segments) {
    int total = 0;
    for (Token t : seg.tokens) total += Utf8Length(token_text(t));
    Segment cur;
    cur.t0 = seg.t0;
    int acc = 0;    // characters in `cur`
    int before = 0;  // characters of `seg` before the current token
    for (size_t i = 0; i < seg.tokens.size(); ++i) {
      const std::string& txt = token_text(seg.tokens[i]);
      const int len = Utf8Length(txt);
      const bool boundary_ok = !split_on_word || (!txt.empty() && txt[0] == ' ');
      if (acc + len > max_len && acc > 0 && boundary_ok) {
        const int64_t t = total > 0 ? seg.t0 + (seg.t1 - seg.t0) * before / total : seg.t0;
        cur.t1 = t;
        out.push_back(std::move(cur));
        cur = Segment();
        cur.t0 = t;
        acc = 0;
      }
      cur.text += txt;
      cur.tokens.push_back(seg.tokens[i]);
      acc += len;
      before += len;
    }
    cur.t1 = seg.t1;
    if (!cur.tokens.empty() || out.empty() || out.back().t1 != seg.t1) out.push_back(std::move(cur));
  }
  return out;
}

}  // namespace whisper
