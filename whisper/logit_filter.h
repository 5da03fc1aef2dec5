// Whisper's logit filters: the rules that turn the decoder's raw logits for the next token into
// log-probabilities that respect the timestamp grammar. The rules and their order follow
// whisper.cpp's whisper_process_logits (src/whisper.cpp L6196-6420), which itself follows OpenAI's
// ApplyTimestampRules / SuppressBlank / SuppressTokens (whisper/decoding.py).
#ifndef GGML_WHISPER_WHISPER_LOGIT_FILTER_H_
#define GGML_WHISPER_WHISPER_LOGIT_FILTER_H_

#include <vector>

#include "whisper/tokens.h"

namespace whisper {

struct LogitFilterParams {
  float temperature = 0.0f;     // > 0: logits are divided by it first
  bool suppress_blank = true;   // on the first token, suppress eot and the blank token
  Token blank_token = 220;      // " " in GPT-2's vocabulary (what suppress_blank removes)
  bool no_timestamps = false;   // suppress every timestamp token
  float max_initial_ts = 1.0f;  // seconds: the first timestamp may be at most this
  // OpenAI's first-step rule as CTranslate2 4.x applies it for faster-whisper 1.2.1
  // (ApplyTimestampRules at step == sample_begin == 0; openai/whisper decoding.py): the first
  // sampled token is a timestamp (every id below <|0.00|>, <|endoftext|> included, is suppressed)
  // no later than max_initial_ts, whose index is max_initial_ts / 0.02 rounded half to even
  // (Python's round; 0 allows <|0.00|> only). false: whisper.cpp's rule (whisper_process_logits:
  // text may come first, and max_initial_ts <= 0 sets no limit).
  bool openai_initial_rule = false;
  // The window's first tokens were forced (faster-whisper's prefix, get_prompt): on the first
  // sampled token after them no timestamp rule applies, as CTranslate2 4.x's ApplyTimestampRules
  // does nothing at step == sample_begin > 0 (neither the initial rule nor the timestamp-probability
  // check); suppress_blank still does (SuppressTokensBegin). Later steps see only the sampled tokens.
  bool after_prefix = false;
  // > 0: once this many tokens are sampled, text is suppressed so a timestamp (or eot) follows
  // (whisper.cpp's max_tokens rule, ggml-org/whisper.cpp#3798). Ignored with no_timestamps.
  int max_text_tokens = 0;
  // tinydiarize (whisper_full_params.tdrz_enable): <|startoflm|>, the speaker-turn token of
  // tdrz models, is not suppressed (whisper.cpp [TDRZ]).
  bool tdrz = false;
  // Log-softmax sums in float as whisper.cpp does (whisper_compute_logprobs), instead of double.
  bool float_logsumexp = false;
  // When the timestamp rule suppresses text (step 10), log-softmax again over what is left, as
  // OpenAI's decoding.py (ApplyTimestampRules sets the logits to -inf, the decoder then takes
  // log_softmax) and CTranslate2 (logits processors before LogSoftMax) do; whisper.cpp keeps the
  // log-probabilities it had (the timestamps' then sum to less than 1).
  bool renormalize_timestamps = false;
  // Extra ids to suppress at every step (the non-speech symbol list of -sns, or a user list).
  const std::vector<Token>* suppress = nullptr;
  // Called after steps 1-4 of ApplyLogitFilters (temperature, blank, control and language
  // tokens) and before the suppression list and the timestamp rules, where whisper.cpp calls
  // whisper_full_params.logits_filter_callback (whisper_process_logits). It sees the tokens
  // sampled so far in this window and may change any of the n_vocab logits.
  void (*hook)(void* user, const TokenData* tokens, int n_tokens, float* logits) = nullptr;
  void* hook_user = nullptr;
};

// Filters `logits` (n_vocab floats, modified in place: suppressed entries become -inf) and writes
// log-softmax values into `logprobs` (n_vocab floats). `tokens` are the tokens sampled so far in
// this window (after the prompt), `n_tokens` of them. `seek_delta` is twice the last timestamp
// index seen in this window (centiseconds), for the monotonic-timestamp rule; `has_ts` says
// whether one was seen. `token_data` (n_tokens entries, may be null) is what params.hook sees.
// No allocation.
void ApplyLogitFilters(const SpecialTokens& special, const LogitFilterParams& params, const Token* tokens,
                       int n_tokens, bool has_ts, int seek_delta, float* logits, float* logprobs,
                       const TokenData* token_data = nullptr);

// log(sum(exp(x[i]))) over [begin, end), stable (max subtracted). -inf when all are -inf.
float LogSumExp(const float* x, int begin, int end);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_LOGIT_FILTER_H_
