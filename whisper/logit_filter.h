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
  // Extra ids to suppress at every step (the non-speech symbol list of -sns, or a user list).
  const std::vector<Token>* suppress = nullptr;
};

// Filters `logits` (n_vocab floats, modified in place: suppressed entries become -inf) and writes
// log-softmax values into `logprobs` (n_vocab floats). `tokens` are the tokens sampled so far in
// this window (after the prompt), `n_tokens` of them. `seek_delta` is twice the last timestamp
// index seen in this window (centiseconds), for the monotonic-timestamp rule; `has_ts` says
// whether one was seen. No allocation.
void ApplyLogitFilters(const SpecialTokens& special, const LogitFilterParams& params, const Token* tokens,
                       int n_tokens, bool has_ts, int seek_delta, float* logits, float* logprobs);

// log(sum(exp(x[i]))) over [begin, end), stable (max subtracted). -inf when all are -inf.
float LogSumExp(const float* x, int begin, int end);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_LOGIT_FILTER_H_
