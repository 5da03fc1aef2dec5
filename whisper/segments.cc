#include "whisper/segments.h"

#include <algorithm>

namespace whisper {

Segment& SegmentList::Append() {
  if (size_ == items_.size()) {
    items_.emplace_back();
    items_.back().text.reserve(kReserveTextBytes);
    items_.back().tokens.reserve(kReserveTokens);
  }
  Segment& s = items_[size_++];
  s.t0 = s.t1 = 0;
  s.text.clear();
  s.tokens.clear();
  s.word_begin.clear();
  s.word_probability.clear();
  s.no_speech_prob = 0.0f;
  s.speaker_turn_next = false;
  s.language_id = 0;
  s.opening_timestamp = -1;
  s.window = Segment::Window();
  s.speaker.clear();
  return s;
}

int AppendSegments(const SpecialTokens& s, const std::vector<TokenData>& tokens, int64_t seek, int seek_delta,
                   const std::function<const std::string&(Token)>& token_text, const SegmentOptions& options,
                   float no_speech_prob, SegmentList* out) {
  const size_t before = out->size();
  if (tokens.empty()) return 0;
  const size_t n = tokens.size();
  int64_t t0 = seek + (s.IsTimestamp(tokens.front().id) ? 2 * (tokens.front().id - s.beg) : 0);
  size_t i0 = 0;  // first token of the current segment
  // The text of the segment being built lives in `text` until the segment is emitted; it is a
  // reused member of this function's caller's list only once emitted, so build it in place in a
  // fresh element and drop the element when no text arrives.
  Segment* cur = &out->Append();
  auto add_text = [&](Token t) {
    if (options.print_special || s.IsText(t)) cur->text += token_text(t);
  };
  bool turn = false;  // <|startoflm|> seen since the last timestamp (tinydiarize)
  auto emit = [&](int64_t a, int64_t b, size_t last) {
    cur->t0 = a;
    cur->t1 = b;
    cur->no_speech_prob = no_speech_prob;
    cur->speaker_turn_next = turn;
    cur->tokens.assign(tokens.begin() + i0, tokens.begin() + last + 1);
    cur->opening_timestamp = i0 > 0 && s.IsTimestamp(tokens[i0 - 1].id) ? tokens[i0 - 1].id : -1;
    cur = &out->Append();
  };
  for (size_t i = 0; i < n; ++i) {
    const Token t = tokens[i].id;
    add_text(t);
    if (options.tdrz && t == s.solm) turn = true;
    if (t > s.beg && !options.single_segment) {  // a timestamp other than <|0.00|> closes text
      const int64_t t1 = seek + 2 * (t - s.beg);
      if (!cur->text.empty()) emit(t0, t1, i);
      cur->text.clear();
      turn = false;  // whisper.cpp: at every closing timestamp, emitted or not
      t0 = t1;
      // The timestamps that follow belong to no segment; the last of them starts the next one.
      while (i + 1 < n && tokens[i + 1].id > s.beg) {
        ++i;
        if (options.print_special) cur->text += token_text(tokens[i].id);
        t0 = seek + 2 * (tokens[i].id - s.beg);
      }
      i0 = i + 1;
    }
  }
  if (!cur->text.empty()) {
    emit(t0, seek + seek_delta, n - 1);
  }
  out->Truncate(out->size() - 1);  // the element `cur` points at was never emitted
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

bool SplitLastSegmentAtGap(const SpecialTokens& s, int64_t gap_begin, int64_t gap_end,
                           const std::function<const std::string&(Token)>& token_text, SegmentList* list) {
  if (list->empty()) return false;
  {
    const Segment& seg = list->back();
    if (!(seg.t0 < gap_begin && seg.t1 > gap_end)) return false;
  }
  size_t cut = 0;
  bool seen_text = false;
  const std::vector<TokenData>& toks = list->back().tokens;
  for (size_t k = 0; k < toks.size(); ++k) {
    if (toks[k].id >= s.eot) continue;
    if (toks[k].t0 >= gap_begin) {
      if (!seen_text) return false;  // all the text is after the gap
      cut = k;
      break;
    }
    seen_text = true;
  }
  if (cut == 0) return false;
  Segment& next = list->Append();
  Segment& head = (*list)[list->size() - 2];  // Append may have moved the elements
  const auto at = static_cast<std::ptrdiff_t>(cut);
  next.t0 = gap_end;
  next.t1 = head.t1;
  next.no_speech_prob = head.no_speech_prob;
  next.speaker_turn_next = head.speaker_turn_next;
  next.language_id = head.language_id;
  next.window = head.window;
  next.tokens.assign(head.tokens.begin() + at, head.tokens.end());
  if (head.word_begin.size() == head.tokens.size()) {
    next.word_begin.assign(head.word_begin.begin() + at, head.word_begin.end());
    next.word_begin[0] = 1;
    head.word_begin.resize(cut);
  }
  if (head.word_probability.size() == head.tokens.size()) {
    next.word_probability.assign(head.word_probability.begin() + at, head.word_probability.end());
    head.word_probability.resize(cut);
  }
  head.tokens.resize(cut);
  head.t1 = gap_begin;
  head.speaker_turn_next = false;
  for (Segment* p : {&head, &next}) {
    p->text.clear();
    for (const TokenData& t : p->tokens) {
      if (t.id < s.eot) p->text += token_text(t.id);
    }
  }
  return true;
}

int Utf8Length(const std::string& s) {
  int n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool EndsInsideUtf8Character(const std::string& s) {
  const size_t n = s.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    const unsigned char c = static_cast<unsigned char>(s[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation: look further back
    int need = 0;
    if (c >= 0xC2 && c <= 0xDF) need = 1;
    else if (c >= 0xE0 && c <= 0xEF) need = 2;
    else if (c >= 0xF0 && c <= 0xF4) need = 3;
    return need >= static_cast<int>(back);
  }
  return false;
}

int WrapLastSegment(const SpecialTokens& s, int max_len, bool split_on_word,
                    const std::function<const std::string&(Token)>& token_text, SegmentList* list,
                    bool words_are_characters) {
  if (max_len <= 0 || list->empty()) return 1;
  int pieces = 1;
  size_t i = 0;
  int acc = 0;
  std::string text;
  while (i < (*list)[list->size() - 1].tokens.size()) {
    Segment& seg = (*list)[list->size() - 1];
    const TokenData tok = seg.tokens[i];
    if (tok.id >= s.eot) {
      ++i;
      continue;
    }
    const std::string& txt = token_text(tok.id);
    const int len = Utf8Length(txt);
    // With word timestamps a word starts where they say (merged punctuation included).
    const bool words = seg.word_begin.size() == seg.tokens.size();
    const bool word_start = words                  ? seg.word_begin[i] != 0
                            : words_are_characters ? !EndsInsideUtf8Character(text)
                                                   : (!txt.empty() && txt[0] == ' ');
    const bool boundary_ok = !split_on_word || word_start;
    if (acc + len > max_len && acc > 0 && boundary_ok) {
      // seg becomes tokens [0, i); a new last segment takes [i, end) from tok.t0 to seg.t1.
      Segment& next = list->Append();
      Segment& head = (*list)[list->size() - 2];  // Append may have moved the elements
      next.t0 = tok.t0;
      next.t1 = head.t1;
      next.no_speech_prob = head.no_speech_prob;
      next.speaker_turn_next = head.speaker_turn_next;
      next.language_id = head.language_id;
      next.window = head.window;
  next.window = head.window;
      const auto cut = static_cast<std::ptrdiff_t>(i);
      next.tokens.assign(head.tokens.begin() + cut, head.tokens.end());
      int64_t head_end = tok.t0;
      if (words) {
        // The piece ends where its last word ends; the tail starts a word even if cut inside one.
        next.word_begin.assign(head.word_begin.begin() + cut, head.word_begin.end());
        next.word_begin[0] = 1;
        head.word_begin.resize(i);
        if (head.word_probability.size() == head.tokens.size()) {
          next.word_probability.assign(head.word_probability.begin() + cut, head.word_probability.end());
          head.word_probability.resize(i);
        }
        for (size_t k = i; k-- > 0;) {
          if (head.tokens[k].id < s.eot) {
            head_end = std::min(head.tokens[k].t1, tok.t0);
            break;
          }
        }
      }
      head.tokens.resize(i);
      head.t1 = head_end;
      head.speaker_turn_next = false;
      head.text.swap(text);
      text.clear();
      acc = 0;
      i = 0;
      ++pieces;
      continue;
    }
    acc += len;
    text += txt;
    ++i;
  }
  (*list)[list->size() - 1].text.swap(text);
  return pieces;
}

}  // namespace whisper
