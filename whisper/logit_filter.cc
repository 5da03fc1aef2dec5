#include "whisper/logit_filter.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/softmax.h"
#include "kernels/vec.h"

namespace whisper {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

void Suppress(float* logits, int begin, int end) {
  for (int i = std::max(begin, 0); i < end; ++i) logits[i] = kNegInf;
}

// whisper.cpp's float accumulation (whisper_compute_logprobs and the timestamp rule).
float LogSumExpFloat(const float* x, int begin, int end) {
  float mx = kNegInf;
  for (int i = begin; i < end; ++i) mx = std::max(mx, x[i]);
  if (mx == kNegInf) return kNegInf;
  float sum = 0.0f;
  for (int i = begin; i < end; ++i) {
    if (x[i] > kNegInf) sum += std::exp(x[i] - mx);
  }
  return std::log(sum) + mx;
}

}  // namespace

void ApplyRepetitionPenalty(const Token* tokens, int n_tokens, float penalty, int n_vocab, float* logits) {
  // A token sampled twice is penalized once: CTranslate2 gathers every previous token's logit
  // before writing any, so repeated writes store the same value. Here the second visit sees the
  // already penalized logit, so visits after the first are skipped.
  for (int j = 0; j < n_tokens; ++j) {
    const Token t = tokens[j];
    if (t < 0 || t >= n_vocab || std::find(tokens, tokens + j, t) != tokens + j) continue;
    logits[t] = logits[t] < 0.0f ? logits[t] * penalty : logits[t] / penalty;
  }
}

void BanRepeatedNgrams(const Token* tokens, int n_tokens, int n, int n_vocab, float* logits) {
  if (n <= 0 || n_tokens < n) return;
  // The n - 1 tokens that end the sequence; every earlier place they occur, the token after them.
  const Token* end = tokens + n_tokens;
  const Token* tail = end - (n - 1);
  for (const Token* at = tokens;; ++at) {
    at = std::search(at, end, tail, end);
    if (at + n > end) break;
    const Token banned = at[n - 1];
    if (banned >= 0 && banned < n_vocab) logits[banned] = kNegInf;
  }
}

float LogSumExp(const float* x, int begin, int end) {
  if (end <= begin) return kNegInf;
  // SIMD max: a scalar std::max loop is a chain of dependent maxss (about 0.06 ms for 51864).
  const float mx = ggml_cpu::MaxF32(static_cast<size_t>(end - begin), x + begin);
  if (mx == kNegInf) return kNegInf;
  // The f64 sum of exp(x - max), vectorized (0.05 ms instead of 0.8 ms for tiny.en's 51864
  // logits, once per sampled token and beam).
  const double sum = ggml_cpu::SumExpShifted(x + begin, static_cast<size_t>(end - begin), mx);
  return mx + static_cast<float>(std::log(sum));
}

void LogSoftmax(const float* logits, int n, bool float_sum, float* logprobs) {
  const float lse = float_sum ? LogSumExpFloat(logits, 0, n) : LogSumExp(logits, 0, n);
  for (int i = 0; i < n; ++i) logprobs[i] = logits[i] - lse;
}

namespace {

// Steps 7-9 of ApplyLogitFilters (the timestamp rules: pairs, the initial timestamp, monotonic
// times) on the n_vocab logits: OpenAI decoding.py ApplyTimestampRules, whisper.cpp
// whisper_process_logits.
void SuppressByTimestampRules(const SpecialTokens& s, const LogitFilterParams& p, const Token* tokens, int n_tokens,
                              bool has_ts, int seek_delta, float* logits) {
  const int n_vocab = s.n_vocab;
  // 7. Timestamps come in pairs: after "ts ts" (or a lone ts at the start) text must follow;
  // after "text ts" another ts or eot must follow.
  const bool last_was_ts = n_tokens > 0 && tokens[n_tokens - 1] >= s.beg;
  const bool penultimate_was_ts = n_tokens < 2 || tokens[n_tokens - 2] >= s.beg;
  if (last_was_ts) {
    if (penultimate_was_ts) {
      Suppress(logits, s.beg, n_vocab);
    } else {
      Suppress(logits, 0, s.eot);
    }
  }
  // 8. The first timestamp may not be later than max_initial_ts; under OpenAI's rule the first
  // token is a timestamp.
  if (n_tokens == 0 && p.openai_initial_rule) {
    Suppress(logits, 0, s.beg);
    // faster-whisper: int(round(max_initial_timestamp / 0.02)), in double, half to even.
    const double index = std::nearbyint(static_cast<double>(p.max_initial_ts) / 0.02);
    if (index >= 0.0 && index < static_cast<double>(n_vocab)) {
      Suppress(logits, s.beg + static_cast<int>(index) + 1, n_vocab);
    }
  } else if (n_tokens == 0 && p.max_initial_ts > 0.0f) {
    const int tid0 = static_cast<int>(std::round(p.max_initial_ts / kTimestampStepSeconds));
    Suppress(logits, s.beg + tid0 + 1, n_vocab);
  }
  // 9. Timestamps never go back in time. OpenAI's rule (CTranslate2 ApplyTimestampRules,
  // decoding.py): after text, the next one is later than the last timestamp of the sequence
  // (<|0.00|> too), after "text ts" not earlier (the next segment opens where this one closed).
  // whisper.cpp's: not earlier than the last one after <|0.00|> (seek_delta).
  if (p.openai_initial_rule) {
    for (int k = n_tokens - 1; k >= 0; --k) {
      if (tokens[k] >= s.beg) {
        Suppress(logits, s.beg, std::min(tokens[k] + (last_was_ts ? 0 : 1), n_vocab));
        break;
      }
    }
  } else if (has_ts) {
    Suppress(logits, s.beg, s.beg + seek_delta / 2);
  }
}

}  // namespace

bool ApplyLogitFilters(const SpecialTokens& s, const LogitFilterParams& p, const Token* tokens, int n_tokens,
                       bool has_ts, int seek_delta, float* logits, float* logprobs,
                       const TokenData* token_data) {
  const int n_vocab = s.n_vocab;
  // The output so far as CTranslate2's repetition penalty and n-gram ban see it.
  const Token* output = p.output != nullptr ? p.output : tokens;
  const int n_output = p.output != nullptr ? p.n_output : n_tokens;
  // 0. faster-whisper's repetition penalty, on the raw logits (CTranslate2 applies it first).
  if (p.repetition_penalty != 1.0f) ApplyRepetitionPenalty(output, n_output, p.repetition_penalty, n_vocab, logits);
  // 1. Temperature.
  if (p.temperature > 0.0f) {
    const float inv = 1.0f / p.temperature;
    for (int i = 0; i < n_vocab; ++i) logits[i] *= inv;
  }
  // 2. Blank suppression on the first sampled token.
  if (p.suppress_blank && n_tokens == 0) {
    logits[s.eot] = kNegInf;
    if (p.blank_token >= 0 && p.blank_token < n_vocab) logits[p.blank_token] = kNegInf;
  }
  // 3. <|notimestamps|>, and every timestamp when timestamps are off.
  logits[s.not_] = kNegInf;
  if (p.no_timestamps) Suppress(logits, s.beg, n_vocab);
  // 3b. A segment at its token cap must end with a timestamp.
  if (!p.no_timestamps && p.max_text_tokens > 0 && n_tokens >= p.max_text_tokens) Suppress(logits, 0, s.eot);
  // 3c. The batched pipeline's chunk is not done before its speech is (eot_before_frame).
  if (p.eot_before_frame > 0 && has_ts && seek_delta < p.eot_before_frame) logits[s.eot] = kNegInf;
  // 4. Task and control tokens never appear in the output; nor do language tokens (all 100 of
  // whisper.cpp's table, as it does, which on English-only models covers the unused slots).
  logits[s.sot] = kNegInf;
  logits[s.nosp] = kNegInf;
  if (!p.tdrz) logits[s.solm] = kNegInf;
  logits[s.translate] = kNegInf;
  logits[s.transcribe] = kNegInf;
  logits[s.prev] = kNegInf;
  Suppress(logits, s.sot + 1, std::min(s.sot + 1 + kMaxLanguages, s.translate));
  // The caller's hook (whisper.cpp's logits_filter_callback), at whisper.cpp's place.
  if (p.hook != nullptr) p.hook(p.hook_user, token_data, n_tokens, logits);
  // 5. faster-whisper's n-gram ban (CTranslate2 NoRepeatNgram, before its suppression lists).
  if (p.no_repeat_ngram_size > 0) BanRepeatedNgrams(output, n_output, p.no_repeat_ngram_size, n_vocab, logits);
  // 5./6. User / non-speech suppression list.
  if (p.suppress != nullptr) {
    for (Token t : *p.suppress) {
      if (t >= 0 && t < n_vocab) logits[t] = kNegInf;
    }
  }
  // With a forced prefix, the first sampled token has no timestamp rule (CTranslate2).
  const bool ts_rules = !p.no_timestamps && !(p.after_prefix && n_tokens == 0);
  if (ts_rules) {
    SuppressByTimestampRules(s, p, tokens, n_tokens, has_ts, seek_delta, logits);
  }
  // 10. Log-softmax; if the timestamps together are more likely than any single text token, a
  // timestamp must be sampled.
  const float lse = p.float_logsumexp ? LogSumExpFloat(logits, 0, n_vocab) : LogSumExp(logits, 0, n_vocab);
  for (int i = 0; i < n_vocab; ++i) logprobs[i] = logits[i] - lse;
  if (ts_rules) {
    const float ts_logprob =
        p.float_logsumexp ? LogSumExpFloat(logprobs, s.beg, n_vocab) : LogSumExp(logprobs, s.beg, n_vocab);
    const float max_text = s.beg > 0 ? ggml_cpu::MaxF32(static_cast<size_t>(s.beg), logprobs) : kNegInf;
    if (ts_logprob > max_text) {
      Suppress(logits, 0, s.beg);
      Suppress(logprobs, 0, s.beg);
      if (p.renormalize_timestamps) {
        const float ts_lse = LogSumExp(logits, s.beg, n_vocab);
        for (int i = s.beg; i < n_vocab; ++i) logprobs[i] = logits[i] - ts_lse;
      }
      return false;
    }
  }
  return true;
}

}  // namespace whisper
