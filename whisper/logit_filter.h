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
  // (Python's round; 0 allows <|0.00|> only); and its monotonic rule: after text, the next
  // timestamp is later than the last one (no zero-length segment). false: whisper.cpp's rules
  // (whisper_process_logits: text may come first, max_initial_ts <= 0 sets no limit, and a
  // timestamp is never earlier than the last one after <|0.00|>).
  bool openai_initial_rule = false;
  // The window's first tokens were forced (faster-whisper's prefix, get_prompt): on the first
  // sampled token after them no timestamp rule applies, as CTranslate2 4.x's ApplyTimestampRules
  // does nothing at step == sample_begin > 0 (neither the initial rule nor the timestamp-probability
  // check); suppress_blank still does (SuppressTokensBegin). Later steps see only the sampled tokens.
  bool after_prefix = false;
  // > 0: once this many tokens are sampled, text is suppressed so a timestamp (or eot) follows
  // (whisper.cpp's max_tokens rule, ggml-org/whisper.cpp#3798). Ignored with no_timestamps.
  int max_text_tokens = 0;
  // > 0: <|endoftext|> is suppressed after a timestamp while the last timestamp (seek_delta, frames
  // from the window's start) is below this frame: the batched pipeline's one window per chunk
  // decodes on to where VAD heard the chunk's speech end instead of leaving a tail for another
  // window. 0: off.
  int eot_before_frame = 0;
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
  // faster-whisper's repetition_penalty (CTranslate2 RepetitionPenalty, penalize_previous_tokens):
  // the logit x of every distinct token of the window's output so far (`output`: timestamps
  // included; the prompt not) becomes x * penalty if x < 0, else x / penalty, before any other
  // rule. 1: off.
  float repetition_penalty = 1.0f;
  // faster-whisper's no_repeat_ngram_size (CTranslate2 NoRepeatNgram): > 0 suppresses every token
  // that would complete an n-gram of this size already present in the window's output so far
  // (with n = 1, every token of it). 0: off.
  int no_repeat_ngram_size = 0;
  // The window's output so far as the two rules above read it, n_output tokens (not owned), when
  // it is more than the sampled `tokens`: after a forced prefix, the prefix (<|0.00|> and its
  // text) then the sampled tokens, as CTranslate2's decoding loop appends forced prefix tokens to
  // the sequence its logits processors see (decoding.cc update_sample_with_prefix, alive_seq).
  // Null: `tokens`.
  const Token* output = nullptr;
  int n_output = 0;
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
// No allocation. Returns false when step 10 left only timestamps (text suppressed because the
// timestamps together are more likely), true otherwise: where whisper.cpp goes on to its grammar
// penalty (whisper_process_logits, whisper_suppress_invalid_grammar).
// Order: repetition penalty (0), temperature (1), blank (2), control tokens (3-4), hook, n-gram
// ban and suppression list (5-6), timestamp rules (7-9), log-softmax (10): CTranslate2 runs its
// repetition penalty and n-gram ban before the suppression lists and Whisper's timestamp rules,
// whose text-vs-timestamp test sees the penalized logits.
bool ApplyLogitFilters(const SpecialTokens& special, const LogitFilterParams& params, const Token* tokens,
                       int n_tokens, bool has_ts, int seek_delta, float* logits, float* logprobs,
                       const TokenData* token_data = nullptr);

// logprobs[i] = logits[i] - log(sum(exp(logits))) over the n logits (-inf stays -inf): with
// float_sum, whisper.cpp's float accumulation (whisper_compute_logprobs), else LogSumExp's double.
void LogSoftmax(const float* logits, int n, bool float_sum, float* logprobs);

// CTranslate2's RepetitionPenalty (decoding_utils.cc; cpu primitives penalize_previous_tokens):
// for each distinct id among tokens[0, n_tokens) within [0, n_vocab), logits[id] = logits[id] *
// penalty when negative, else logits[id] / penalty. penalty must be > 0 (checked by callers).
void ApplyRepetitionPenalty(const Token* tokens, int n_tokens, float penalty, int n_vocab, float* logits);

// CTranslate2's NoRepeatNgram (decoding_utils.cc): for every earlier occurrence in tokens[0,
// n_tokens) of the last n - 1 tokens, the token that followed it there is set to -inf in logits
// (n_vocab floats), so no n-gram of size n repeats. n <= 0 or n > n_tokens: nothing.
void BanRepeatedNgrams(const Token* tokens, int n_tokens, int n, int n_vocab, float* logits);

// log(sum(exp(x[i]))) over [begin, end), stable (max subtracted). -inf when all are -inf.
float LogSumExp(const float* x, int begin, int end);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_LOGIT_FILTER_H_
