// Whisper's special token ids, derived from n_vocab as whisper.cpp does (whisper.cpp L430-458,
// L1624-1639): English-only models (n_vocab 51864) have no language tokens; multilingual models
// (>= 51865) shift eot/sot by one and the rest by (num_languages - 98).
#ifndef GGML_WHISPER_WHISPER_TOKENS_H_
#define GGML_WHISPER_WHISPER_TOKENS_H_

#include <cstdint>

namespace whisper {

using Token = int32_t;

// Seconds per timestamp token step (timestamps run from `beg` to n_vocab - 1).
inline constexpr float kTimestampStepSeconds = 0.02f;
// Number of language ids in whisper.cpp's table (g_lang: en 0 ... yue 99).
inline constexpr int kMaxLanguages = 100;

struct SpecialTokens {
  int n_vocab = 0;
  bool multilingual = false;
  int num_languages = 0;  // 0 for English-only models
  Token eot = 0;          // <|endoftext|>
  Token sot = 0;          // <|startoftranscript|>
  Token translate = 0;
  Token transcribe = 0;
  Token solm = 0;    // <|startoflm|>
  Token prev = 0;    // <|startofprev|>
  Token nosp = 0;    // <|nospeech|> (a.k.a. nocaptions)
  Token not_ = 0;    // <|notimestamps|>
  Token beg = 0;     // <|0.00|>, the first timestamp token

  bool IsTimestamp(Token t) const { return t >= beg && t < n_vocab; }
  bool IsText(Token t) const { return t >= 0 && t < eot; }
  // The language token of whisper.cpp language id `lang_id` (0 = en): sot + 1 + lang_id.
  Token Language(int lang_id) const { return sot + 1 + lang_id; }
};

// One decoded token with its probabilities and times: the layout and meaning of whisper.cpp's
// whisper_token_data (include/whisper.h), so whisper/whisper.cc hands these out unchanged.
//   p, plog: probability and natural-log probability of `id` after the logit filters;
//   tid: the most probable timestamp token at that step (= id when id is a timestamp);
//   pt: that timestamp's probability divided by ptsum (= p when id is a timestamp);
//   ptsum: the summed probability of all timestamp tokens at that step;
//   t0, t1: token times in centiseconds (-1 until token timestamps are computed);
//   t_dtw: DTW time in centiseconds (-1: not computed); vlen: voice length heuristic.
struct TokenData {
  Token id = 0;
  Token tid = -1;
  float p = 0.0f;
  float plog = 0.0f;
  float pt = 0.0f;
  float ptsum = 0.0f;
  int64_t t0 = -1;
  int64_t t1 = -1;
  int64_t t_dtw = -1;
  float vlen = 0.0f;
};

// The special ids for a vocabulary of n_vocab entries (51864 .en, 51865 multilingual, 51866
// large-v3). n_vocab below 51864 yields the English-only layout.
inline SpecialTokens SpecialTokensForVocab(int n_vocab) {
  SpecialTokens s;
  s.n_vocab = n_vocab;
  s.multilingual = n_vocab >= 51865;
  s.eot = 50256;
  s.sot = 50257;
  s.translate = 50357;
  s.transcribe = 50358;
  s.solm = 50359;
  s.prev = 50360;
  s.nosp = 50361;
  s.not_ = 50362;
  s.beg = 50363;
  if (s.multilingual) {
    s.num_languages = n_vocab - 51765 - 1;
    const int dt = s.num_languages - 98;
    s.eot += 1;
    s.sot += 1;
    s.translate += dt;
    s.transcribe += dt;
    s.solm += dt;
    s.prev += dt;
    s.nosp += dt;
    s.not_ += dt;
    s.beg += dt;
  }
  return s;
}

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_TOKENS_H_
