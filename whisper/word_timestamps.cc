#include "whisper/word_timestamps.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/string_view.h"
#include "whisper/vocab.h"

namespace whisper {
namespace {

constexpr double kTokensPerSecond = 50.0;  // audio positions per second (20 ms each)
constexpr absl::string_view kPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";  // string.punctuation
constexpr absl::string_view kSentenceEnd = ".\xE3\x80\x82!\xEF\xBC\x81?\xEF\xBC\x9F";  // .。!！?？

// Python's `a in b` for strings: a is a substring of b (the empty string always is). Byte
// substrings of valid UTF-8 match whole characters, so this equals the code-point test.
bool In(absl::string_view a, absl::string_view b) { return b.find(a) != absl::string_view::npos; }

absl::string_view Strip(absl::string_view s) {
  const char* ws = " \t\n\r\v\f";
  const size_t b = s.find_first_not_of(ws);
  if (b == absl::string_view::npos) return {};
  const size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

double Round2(double x) { return std::nearbyint(x * 100.0) / 100.0; }
int64_t ToCs(double seconds) { return static_cast<int64_t>(std::llround(seconds * 100.0)); }

double Median(std::vector<double>* v) {
  std::sort(v->begin(), v->end());
  const size_t n = v->size();
  return n % 2 ? (*v)[n / 2] : 0.5 * ((*v)[n / 2 - 1] + (*v)[n / 2]);
}

}  // namespace

WordTimestamps::WordTimestamps(int max_tokens, int max_frames)
    : aligner_(max_tokens, max_frames) {
  sequence_.reserve(max_tokens);
  jumps_.resize(max_tokens + 1);
  text_.reserve(max_tokens);
  text_segment_.reserve(max_tokens);
  words_.resize(max_tokens + 1);
  for (Word& w : words_) w.text.reserve(32);
  piece_.reserve(64);
  prepended_.reserve(64);
  appended_.reserve(64);
  durations_.reserve(max_tokens);
  token_probs_.reserve(max_tokens);
  seg_words_.reserve(max_tokens + 1);
  seg_word_begin_.reserve(max_tokens + 2);
}

WordTimestamps::Word& WordTimestamps::NewWord() {
  if (n_words_ == words_.size()) words_.emplace_back();
  Word& w = words_[n_words_++];
  w.text.clear();
  w.token_begin = w.token_end = 0;
  w.start = w.end = 0.0;
  w.probability = -1.0;
  return w;
}

const std::vector<Token>& WordTimestamps::Sequence(const SpecialTokens& special, const Token* sot_sequence,
                                                   int sot_len, const SegmentList& segments, size_t first,
                                                   size_t n) {
  sequence_.clear();
  seg_words_.clear();  // no words until Compute (none at all when the segments hold no text)
  seg_word_begin_.clear();
  split_on_unicode_ = special.multilingual && sot_len >= 2 && SplitsWordsOnUnicode(sot_sequence[1] - special.sot - 1);
  sequence_.insert(sequence_.end(), sot_sequence, sot_sequence + sot_len);
  sequence_.push_back(special.not_);
  const size_t before = sequence_.size();
  for (size_t s = first; s < first + n && s < segments.size(); ++s) {
    for (const TokenData& t : segments[s].tokens) {
      if (special.IsText(t.id)) sequence_.push_back(t.id);
    }
  }
  if (sequence_.size() == before) {
    sequence_.clear();
    return sequence_;
  }
  sequence_.push_back(special.eot);
  return sequence_;
}

int WordTimestamps::CollectTextTokens(const SpecialTokens& special, SegmentList* segments, size_t first,
                                      size_t last) {
  text_.clear();
  text_segment_.clear();
  for (size_t s = first; s < last; ++s) {
    Segment& seg = (*segments)[s];
    seg.word_begin.clear();
    seg.word_probability.clear();
    for (TokenData& t : seg.tokens) {
      if (special.IsText(t.id)) {
        text_.push_back(&t);
        text_segment_.push_back(static_cast<int>(s - first));
      }
    }
  }
  return static_cast<int>(text_.size());
}

size_t WordTimestamps::SplitWords(const std::function<const std::string&(Token)>& token_text, int n_text) {
  n_words_ = 0;
  piece_.clear();
  int piece_begin = 0;
  auto add_piece = [&](int end) {
    const absl::string_view strip = Strip(piece_);
    const bool starts_word =
        n_words_ == 0 || split_on_unicode_ || (!piece_.empty() && piece_[0] == ' ') || In(strip, kPunctuation);
    Word& w = starts_word ? NewWord() : words_[n_words_ - 1];
    if (starts_word) w.token_begin = piece_begin;
    w.text += piece_;
    w.token_end = end;
    piece_.clear();
    piece_begin = end;
  };
  for (int k = 0; k < n_text; ++k) {
    piece_ += token_text(text_[k]->id);
    if (!EndsInsideUtf8Character(piece_)) add_piece(k + 1);
  }
  if (piece_begin < n_text) add_piece(n_text);  // an unfinished character before <|endoftext|>
  return n_words_;                                // the <|endoftext|> word is not timed
}

void WordTimestamps::SetWordProbabilities(const SpecialTokens& special, const float* text_logits, int n_vocab,
                                          size_t n_words) {
  // CTranslate2 WhisperReplica::align: SoftMax over the first eot logits of each position, then
  // the probability of the token that follows; faster-whisper: a word's is the mean of its tokens'.
  const int n_text = static_cast<int>(text_.size());
  const int n_soft = std::min(special.eot, n_vocab);
  token_probs_.resize(n_text);
  for (int k = 0; k < n_text; ++k) {
    const float* row = text_logits + static_cast<size_t>(k) * n_vocab;
    const float mx = *std::max_element(row, row + n_soft);
    double sum = 0.0;
    for (int v = 0; v < n_soft; ++v) sum += std::exp(static_cast<double>(row[v] - mx));
    const Token id = text_[k]->id;
    token_probs_[k] = id < n_soft ? std::exp(static_cast<double>(row[id] - mx)) / sum : 0.0;
  }
  for (size_t i = 0; i < n_words; ++i) {
    Word& w = words_[i];
    if (w.token_end <= w.token_begin) continue;
    double total = 0.0;
    for (int k = w.token_begin; k < w.token_end; ++k) total += token_probs_[k];
    w.probability = total / (w.token_end - w.token_begin);
  }
}

WordTimestamps::DurationBounds WordTimestamps::TimeWordsAndBoundMarks(size_t n_words) {
  // 2. Times from the jumps.
  for (size_t i = 0; i < n_words; ++i) {
    Word& w = words_[i];
    w.start = jumps_[w.token_begin] / kTokensPerSecond;
    w.end = jumps_[w.token_end] / kTokensPerSecond;
  }

  // 3. Median duration; sentence marks not longer than twice it.
  std::vector<double>& durations = durations_;
  durations.clear();
  for (size_t i = 0; i < n_words; ++i) {
    const double d = words_[i].end - words_[i].start;
    if (d != 0.0) durations.push_back(d);
  }
  DurationBounds bounds;
  bounds.median = durations.empty() ? 0.0 : std::min(0.7, Median(&durations));
  bounds.max_duration = 2.0 * bounds.median;
  if (!durations.empty()) {
    for (size_t i = 1; i < n_words; ++i) {
      Word& w = words_[i];
      if (w.end - w.start > bounds.max_duration) {
        if (In(w.text, kSentenceEnd)) {
          w.end = w.start + bounds.max_duration;
        } else if (In(words_[i - 1].text, kSentenceEnd)) {
          w.start = w.end - bounds.max_duration;
        }
      }
    }
  }
  return bounds;
}

void WordTimestamps::MergePunctuation(size_t n_words) {
  if (n_words < 2) return;
  for (size_t i = n_words - 1, j = n_words - 1; i-- > 0;) {
    Word& prev = words_[i];
    Word& next = words_[j];
    const absl::string_view strip = Strip(prev.text);
    if (!prev.text.empty() && prev.text[0] == ' ' && In(strip, prepended_)) {
      next.text.insert(0, prev.text);
      next.token_begin = prev.token_begin;
      prev.text.clear();
      prev.token_end = prev.token_begin;
    } else {
      j = i;
    }
  }
  for (size_t i = 0, j = 1; j < n_words; ++j) {
    Word& prev = words_[i];
    Word& next = words_[j];
    if ((prev.text.empty() || prev.text.back() != ' ') && In(next.text, appended_)) {
      prev.text += next.text;
      prev.token_end = next.token_end;
      next.text.clear();
      next.token_begin = next.token_end;
    } else {
      i = j;
    }
  }
}

void WordTimestamps::BoundSegment(const DurationBounds& bounds, Word& w0, Word* second_word, Word& wl,
                                  Segment* seg) {
  const double median = bounds.median;
  const double max_duration = bounds.max_duration;
  double seg_start = seg->t0 / 100.0;
  double seg_end = seg->t1 / 100.0;
  if (w0.end - last_speech_s_ > median * 4 &&
      (w0.end - w0.start > max_duration ||
       (second_word != nullptr && second_word->end - w0.start > max_duration * 2))) {
    if (second_word != nullptr && second_word->end - second_word->start > max_duration) {
      const double boundary = std::max(second_word->end / 2, second_word->end - max_duration);
      w0.end = second_word->start = boundary;
    }
    w0.start = std::max(0.0, w0.end - max_duration);
  }
  if (seg_start < w0.end && seg_start - 0.5 > w0.start) {
    w0.start = std::max(0.0, std::min(w0.end - median, seg_start));
  } else {
    seg_start = w0.start;
  }
  if (seg_end > wl.start && seg_end + 0.5 < wl.end) {
    wl.end = std::max(wl.start + median, seg_end);
  } else {
    seg_end = wl.end;
  }
  last_speech_s_ = seg_end;
  seg->t0 = ToCs(seg_start);
  seg->t1 = ToCs(seg_end);
}

double WordTimestamps::AssignWordsToSegments(const SpecialTokens& special, int64_t seek,
                                             const DurationBounds& bounds, size_t n_words, SegmentList* segments,
                                             size_t first, size_t last) {
  const double offset = static_cast<double>(seek) / 100.0;
  size_t wi = 0;
  double last_word_end = -1.0;
  seg_words_.clear();
  seg_word_begin_.assign(1, 0);
  for (size_t s = first; s < last; ++s) {
    Segment& seg = (*segments)[s];
    int seg_text = 0;
    for (const TokenData& t : seg.tokens) seg_text += special.IsText(t.id);
    size_t w_first = wi;  // the segment's words: non-empty ones among [w_first, wi)
    int saved = 0;
    while (wi < n_words && saved < seg_text) {
      Word& w = words_[wi];
      if (!w.text.empty()) {
        w.start = Round2(offset + w.start);
        w.end = Round2(offset + w.end);
      }
      saved += w.token_end - w.token_begin;
      ++wi;
    }
    Word* first_word = nullptr;
    Word* second_word = nullptr;
    Word* last_word = nullptr;
    for (size_t i = w_first; i < wi; ++i) {
      if (words_[i].text.empty()) continue;
      seg_words_.push_back(i);
      if (first_word == nullptr) {
        first_word = &words_[i];
      } else if (second_word == nullptr) {
        second_word = &words_[i];
      }
      last_word = &words_[i];
    }
    seg_word_begin_.push_back(seg_words_.size());
    if (first_word == nullptr) continue;
    BoundSegment(bounds, *first_word, second_word, *last_word, &seg);
    last_word_end = last_word->end;
  }
  return last_word_end;
}

void WordTimestamps::WriteTokenTimes(const SpecialTokens& special, int64_t seek, size_t n_words,
                                     SegmentList* segments, size_t first, size_t last) {
  // Token times and word starts from the words (in whichever segment each token is).
  for (size_t i = 0; i < n_words; ++i) {
    const Word& w = words_[i];
    if (w.text.empty() || w.token_end <= w.token_begin) continue;
    const int64_t ws = ToCs(w.start);
    const int64_t we = std::max(ws, ToCs(w.end));
    for (int k = w.token_begin; k < w.token_end; ++k) {
      TokenData& t = *text_[k];
      t.t0 = k == w.token_begin ? ws : std::clamp<int64_t>(seek + 2 * int64_t{jumps_[k]}, ws, we);
      t.t1 = k + 1 == w.token_end ? we : std::clamp<int64_t>(seek + 2 * int64_t{jumps_[k + 1]}, ws, we);
    }
    Segment& seg = (*segments)[first + text_segment_[w.token_begin]];
    if (seg.word_begin.size() != seg.tokens.size()) seg.word_begin.assign(seg.tokens.size(), 0);
    seg.word_begin[text_[w.token_begin] - seg.tokens.data()] = 1;
    if (w.probability < 0.0) continue;  // no alignment-pass logits
    for (int k = w.token_begin; k < w.token_end; ++k) {
      Segment& ks = (*segments)[first + text_segment_[k]];
      if (ks.word_probability.size() != ks.tokens.size()) ks.word_probability.assign(ks.tokens.size(), -1.0f);
      ks.word_probability[text_[k] - ks.tokens.data()] = static_cast<float>(w.probability);
    }
  }
  // Timestamp tokens: the time they name.
  for (size_t s = first; s < last; ++s) {
    for (TokenData& t : (*segments)[s].tokens) {
      if (special.IsTimestamp(t.id)) t.t0 = t.t1 = seek + 2 * int64_t{t.id - special.beg};
    }
  }
}

absl::Status WordTimestamps::Compute(const SpecialTokens& special,
                                     const std::function<const std::string&(Token)>& token_text, const float* qk,
                                     int n_heads, int row_stride, int n_frames, int sot_len, int64_t seek,
                                     bool openai, SegmentList* segments, size_t first, size_t n,
                                     const float* text_logits, int n_vocab) {
  last_end_ = -1;
  seg_words_.clear();
  seg_word_begin_.clear();
  const size_t last = std::min(first + n, segments->size());
  const int n_text = CollectTextTokens(special, segments, first, last);
  if (last > first) last_end_ = (*segments)[last - 1].t1;
  if (n_text == 0) return absl::OkStatus();
  if (static_cast<size_t>(n_text) + 1 > jumps_.size()) {
    return absl::InvalidArgumentError("word timestamps: more text tokens than the sequence limit");
  }
  absl::Status st = aligner_.Align(qk, n_heads, sot_len + n_text + 2, row_stride, n_frames, sot_len,
                                   DtwAligner::kMedianFilterWidth, jumps_.data(), /*softmax_all=*/!openai);
  if (!st.ok()) return st;
  // whisper.cpp's t_dtw: the time at which the path leaves the token's row.
  for (int k = 0; k < n_text; ++k) text_[k]->t_dtw = seek + 2 * static_cast<int64_t>(jumps_[k + 1]);
  if (!openai) return absl::OkStatus();

  // Steps 1-5 of the header comment, then the token times from the words.
  const size_t n_words = SplitWords(token_text, n_text);
  if (text_logits != nullptr) SetWordProbabilities(special, text_logits, n_vocab, n_words);
  const DurationBounds bounds = TimeWordsAndBoundMarks(n_words);
  MergePunctuation(n_words);
  const double last_word_end = AssignWordsToSegments(special, seek, bounds, n_words, segments, first, last);
  WriteTokenTimes(special, seek, n_words, segments, first, last);
  if (last_word_end >= 0.0) {
    last_end_ = ToCs(last_word_end);
    last_speech_s_ = last_word_end;
  } else if (last > first) {
    last_speech_s_ = (*segments)[last - 1].t1 / 100.0;
  }
  return absl::OkStatus();
}

}  // namespace whisper
