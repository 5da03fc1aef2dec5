// WindowDecoder's set-up, its window-level rules (fallback, scoring, the result) and Run;
// whisper/decoding_step.cc has the per-step search.
#include "whisper/decoding.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/string_view.h"
#include "kernels/vec.h"

namespace whisper {
namespace {

constexpr int kEntropyWindow = 32;
// whisper.cpp's WHISPER_HISTORY_CONDITIONING_TEMP_CUTOFF: attempts at or above it get no past text.
constexpr float kHistoryTemperatureCutoff = 0.5f;

}  // namespace

double TokenEntropy(const Token* tokens, int n_tokens, int n) {
  const int m = std::min(n, n_tokens);
  if (m <= 0) return 0.0;
  Token window[64];
  const int w = std::min(m, 64);
  std::copy(tokens + n_tokens - w, tokens + n_tokens, window);
  std::sort(window, window + w);
  double entropy = 0.0;
  for (int i = 0; i < w;) {
    int j = i;
    while (j < w && window[j] == window[i]) ++j;
    const double p = static_cast<double>(j - i) / w;
    entropy -= p * std::log(p);
    i = j;
  }
  return entropy;
}

int DecodersNeeded(const DecodingParams& p) {
  const bool cpp_beam = p.whisper_cpp && p.beam_search;  // a beam search at every temperature
  const int beams = p.beam_size > 1 || cpp_beam ? 2 * std::max(p.beam_size, 1) : 1;
  bool sampling = p.n_temperatures > 0 ? false : p.temperature_inc > 0.0f || p.temperature > 0.0f;
  for (int k = 0; k < p.n_temperatures; ++k) sampling = sampling || p.temperatures[k] > 0.0f;
  const int sampled = sampling ? std::max(p.best_of, 1) : 1;
  return std::max(beams, cpp_beam ? 2 * sampled : sampled);
}

WindowDecoder::WindowDecoder(const SpecialTokens& special, int n_text_ctx, const DecodingParams& params,
                             std::function<const std::string&(Token)> token_text)
    : special_(special), n_text_ctx_(n_text_ctx), params_(params), token_text_(std::move(token_text)) {
  text_.reserve(static_cast<size_t>(n_text_ctx) * 64);
  prompt_logits_.resize(special.n_vocab);
  probs_.resize(special.n_vocab);
  cdf_.resize(special.n_vocab);
  const int n = DecodersNeeded(params);
  const int width = std::max(params.beam_size, std::max(params.best_of, 1));
  seqs_.resize(width);
  next_seqs_.resize(width);
  lanes_.resize(width);
  for (Lane& lane : lanes_) {
    lane.logits.resize(special.n_vocab);
    lane.logprobs.resize(special.n_vocab);
    lane.cands.reserve(2 * static_cast<size_t>(width));  // TopK's k <= 2 x width
    lane.output.reserve(n_text_ctx);
  }
  lane_seq_.resize(width);
  for (auto* v : {&seqs_, &next_seqs_}) {
    for (Sequence& s : *v) {
      s.tokens.reserve(n_text_ctx);
      s.data.reserve(n_text_ctx);
    }
  }
  candidates_.reserve(2 * static_cast<size_t>(width) * width);
  batch_seq_.resize(width);
  batch_slots_.resize(width);
  batch_tokens_.resize(width);
  // whisper.cpp seeds decoder j with j; one per sequence of any attempt (a later Reset may turn
  // temperature fallback on without a new decoder).
  for (int j = 0; j < std::max(n, width); ++j) rngs_.emplace_back(j);
  slot_kv_.resize(2 * static_cast<size_t>(std::max(width, 1)));  // >= DecodersNeeded for any temperature
  for (std::vector<Token>& v : slot_kv_) v.reserve(n_text_ctx);
  kept_.tokens.reserve(n_text_ctx);
  kept_.token_logprobs.reserve(n_text_ctx);
  kept_.token_data.reserve(n_text_ctx);
  prefix_.reserve(n_text_ctx);
  ReserveSetAside();
}

void WindowDecoder::ReserveSetAside() {
  // A step registers at most beam_size, and the search stops once MaxCandidates() have finished.
  const bool openai_beam = !params_.whisper_cpp && params_.beam_size > 1;
  const size_t n = openai_beam ? static_cast<size_t>(MaxCandidates()) + params_.beam_size : 0;
  while (set_aside_.size() < n) {
    set_aside_.emplace_back();
    set_aside_.back().tokens.reserve(n_text_ctx_);
    set_aside_.back().data.reserve(n_text_ctx_);
  }
}

int WindowDecoder::MaxCandidates() const {
  if (params_.whisper_cpp || params_.beam_size <= 1) return params_.beam_size;
  // CTranslate2 get_max_candidates: std::round(float(beam_size) * patience). A window completes at
  // most beam_size sequences per step and has fewer than n_text_ctx steps, so more candidates than
  // that can never be reached: the cap keeps the result and bounds set_aside_ (patience 1e9 once
  // reserved gigabytes) and the conversion (1e30 overflows int).
  const double n = std::round(static_cast<double>(static_cast<float>(params_.beam_size) * params_.patience));
  const double most = static_cast<double>(params_.beam_size) * std::max(n_text_ctx_, 1);
  return static_cast<int>(std::min(n, most));
}

int WindowDecoder::MaxSteps(int n_prompt) const {
  if (!params_.whisper_cpp) {
    // CTranslate2 WhisperReplica::generate: max_length = min(total / 2, total - start_step), where
    // total = len(prompt) + max_new_tokens (faster-whisper's prompt, prefix included), or the
    // model's max_length 448 (n_text_ctx) without max_new_tokens, and start_step = the prompt
    // before the prefix, less 1. The forced prefix's steps count in max_length (return_prefix:
    // decoding.cc get_max_step), so fewer are left to sample: 224 - prefix by default.
    const int64_t total = params_.max_new_tokens > 0 ? static_cast<int64_t>(n_prompt) + params_.max_new_tokens
                                                     : static_cast<int64_t>(n_text_ctx_);
    const int64_t max_length = std::min(total / 2, total - (n_prompt - n_prefix_ - 1));
    return static_cast<int>(std::min<int64_t>(std::max<int64_t>(0, max_length - n_prefix_), n_text_ctx_));
  }
  return std::min(params_.max_tokens_per_window, n_text_ctx_ - n_prompt);
}

void WindowDecoder::NoteDecoded(int slot, int n_past, Token token) {
  std::vector<Token>& kv = slot_kv_[slot];
  kv.resize(std::max(n_past, 0), kUnknownToken);  // a gap (never expected) matches nothing
  kv.push_back(token);
}

void WindowDecoder::Reset(const DecodingParams& params) {
  params_ = params;
  ReserveSetAside();
  // whisper.cpp re-seeds decoders 1.. per whisper_full; decoder 0's generator lives with the state.
  for (size_t j = params.whisper_cpp ? 1 : 0; j < rngs_.size(); ++j) {
    rngs_[j].seed(static_cast<std::mt19937::result_type>(j));
  }
}

void WindowDecoder::Score(Sequence& seq) const {
  // whisper.cpp's rules (and length_penalty > 0): the accepted tokens' log-probabilities (to the
  // last timestamp) over their length. OpenAI's: CTranslate2's finalize_hypothesis_score, the sum
  // over every step, <|endoftext|>'s included, over the hypothesis' length without it (the prefix
  // included) to the power fw_length_penalty.
  double sum = 0.0;
  for (int i = 0; i < seq.result_len; ++i) sum += seq.data[i].plog;
  seq.sum_logprobs = sum;
  double len = std::max(seq.result_len + n_prefix_, 1);
  if (params_.length_penalty > 0.0f) {
    seq.score = sum / std::pow((5.0 + len) / 6.0, params_.length_penalty);  // whisper.cpp, OpenAI decoding.py
  } else if (!params_.whisper_cpp) {
    const bool eot = !seq.tokens.empty() && seq.tokens.back() == special_.eot;
    len = std::max(static_cast<int>(seq.tokens.size()) - (eot ? 1 : 0) + n_prefix_, 1);
    seq.score = seq.sum_logprobs_all / std::pow(len, static_cast<double>(params_.fw_length_penalty));
  } else {
    seq.score = sum / len;
  }
  // whisper.cpp's repetition rule; OpenAI's (faster-whisper's) has the compression ratio instead.
  if (params_.whisper_cpp && seq.result_len > kEntropyWindow &&
      TokenEntropy(seq.tokens.data(), seq.result_len, kEntropyWindow) < params_.entropy_thold) {
    seq.failed = true;
  }
}

double WindowDecoder::TextCompressionRatio(const Sequence& seq) {
  text_.clear();
  for (Token t : prefix_) {
    if (t < special_.eot) text_ += token_text_(t);
  }
  for (Token t : seq.tokens) {
    if (t < special_.eot) text_ += token_text_(t);
  }
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; };
  size_t b = 0, e = text_.size();
  while (b < e && space(text_[b])) ++b;
  while (e > b && space(text_[e - 1])) --e;
  return compression_.Of(absl::string_view(text_).substr(b, e - b));
}

bool WindowDecoder::BeamAt(float temperature) const {
  return (temperature == 0.0f && params_.beam_size > 1) || (params_.whisper_cpp && params_.beam_search);
}

int WindowDecoder::AttemptWidth(float temperature) const {
  if (temperature > 0.0f) return std::max(params_.best_of, 1);  // whisper.cpp's beams too: best_of of them
  return BeamAt(temperature) ? params_.beam_size : 1;
}

absl::Status WindowDecoder::CheckRunArgs(const DecoderBackend& backend, const std::vector<Token>& prompt,
                                         int n_history, int n_prefix) const {
  if (static_cast<int>(prompt.size()) >= n_text_ctx_) {
    return absl::InvalidArgumentError("decoding: prompt of " + std::to_string(prompt.size()) +
                                      " tokens does not fit n_text_ctx " + std::to_string(n_text_ctx_));
  }
  if (backend.n_decoders() < DecodersNeeded(params_)) {
    return absl::InvalidArgumentError("decoding: backend has " + std::to_string(backend.n_decoders()) +
                                      " decoders, the params need " + std::to_string(DecodersNeeded(params_)));
  }
  if (n_history < 0 || n_history >= static_cast<int>(prompt.size())) {
    return absl::InvalidArgumentError("decoding: n_history " + std::to_string(n_history) + " outside [0, " +
                                      std::to_string(prompt.size()) + ")");
  }
  const int64_t total = static_cast<int64_t>(prompt.size()) + params_.max_new_tokens;  // INT_MAX: no overflow
  if (params_.max_new_tokens > 0 && !params_.whisper_cpp && total > n_text_ctx_) {
    // faster-whisper 1.2.1 generate_with_fallback's ValueError, with its figures.
    return absl::InvalidArgumentError(
        "decoding: the length of the prompt is " + std::to_string(prompt.size()) + ", and the max_new_tokens " +
        std::to_string(params_.max_new_tokens) + ". Thus, the combined length of the prompt and max_new_tokens is: " +
        std::to_string(total) + ". This exceeds the max_length of the Whisper model: " + std::to_string(n_text_ctx_) +
        ". Reduce the prompt (max_text_ctx) or max_new_tokens");
  }
  if (n_prefix < 0 || n_prefix >= static_cast<int>(prompt.size()) - n_history) {
    return absl::InvalidArgumentError("decoding: n_prefix " + std::to_string(n_prefix) + " outside [0, " +
                                      std::to_string(static_cast<int>(prompt.size()) - n_history) + ")");
  }
  return absl::OkStatus();
}

absl::Status WindowDecoder::PromptPass(DecoderBackend& backend, const Token* tokens, int n, int sot_index,
                                       WindowResult* result) {
  const int n_head = params_.whisper_cpp || sot_index < 0 || sot_index >= n - 1 ? n : sot_index + 1;
  absl::Status s = backend.Decode(0, tokens, n_head, 0);
  if (!s.ok()) return s;
  const float* raw = backend.logits(0);
  const float lse = LogSumExp(raw, 0, special_.n_vocab);
  result->no_speech_prob = std::exp(raw[special_.nosp] - lse);
  if (n_head < n) {
    s = backend.Decode(0, tokens + n_head, n - n_head, n_head);
    if (!s.ok()) return s;
    raw = backend.logits(0);
  }
  std::copy(raw, raw + special_.n_vocab, prompt_logits_.begin());
  return absl::OkStatus();
}

void WindowDecoder::AssignResult(const Sequence& s, WindowResult* result) const {
  const size_t n = std::min<size_t>(s.result_len, s.tokens.size());
  result->tokens.assign(prefix_.begin(), prefix_.end());
  result->tokens.insert(result->tokens.end(), s.tokens.begin(), s.tokens.begin() + n);
  result->token_data.clear();
  for (Token t : prefix_) {  // forced: probability 1, as CTranslate2 scores them 0
    TokenData d;
    d.id = t;
    d.p = 1.0f;
    d.tid = t >= special_.beg ? t : -1;
    d.pt = t >= special_.beg ? 1.0f : 0.0f;
    result->token_data.push_back(d);
  }
  result->token_data.insert(result->token_data.end(), s.data.begin(), s.data.begin() + n);
  result->token_logprobs.resize(result->tokens.size());
  for (size_t k = 0; k < result->tokens.size(); ++k) result->token_logprobs[k] = result->token_data[k].plog;
}

bool WindowDecoder::TakeBest(float temperature, WindowResult* result) {
  const int width = AttemptWidth(temperature);
  int best = -1;
  for (int j = 0; j < width + n_set_aside_; ++j) {
    const Sequence& c = AttemptSeq(width, j);
    if (!c.failed && (best < 0 || c.score > AttemptSeq(width, best).score)) best = j;
  }
  const bool failed = best < 0;
  if (best < 0) best = 0;
  const Sequence& s = AttemptSeq(width, best);
  AssignResult(s, result);
  // whisper.cpp's rules: the accepted tokens' sum; OpenAI's: every sampled token's, eot's included
  // (CTranslate2's cumulative score, faster-whisper's cum_logprob).
  result->sum_logprob = static_cast<float>(params_.whisper_cpp ? s.sum_logprobs : s.sum_logprobs_all);
  if (params_.whisper_cpp) {
    result->avg_logprob = s.result_len > 0 ? static_cast<float>(s.sum_logprobs / s.result_len) : -INFINITY;
  } else {
    // OpenAI decoding.py (avg_logprob = sum_logprob / (len(tokens) + 1)) and faster-whisper's
    // generate_with_fallback (cum_logprob / (seq_len + 1)): every sampled token's log-probability,
    // <|endoftext|>'s included (sum_logprob), over the number of tokens before it plus one.
    size_t n = s.tokens.size() + static_cast<size_t>(n_prefix_);  // faster-whisper's seq_len
    if (!s.tokens.empty() && s.tokens.back() == special_.eot) --n;
    result->avg_logprob = static_cast<float>(s.sum_logprobs_all / static_cast<double>(n + 1));
  }
  result->temperature = temperature;
  result->seek_delta = s.seek_delta;
  result->failed = failed;
  const bool low_logprob = result->avg_logprob < params_.logprob_thold;
  const bool silence = result->no_speech_prob > params_.no_speech_thold && low_logprob;
  bool repetitive = false;
  // Computed whenever the text is known (faster-whisper reports it with or without its threshold).
  result->compression_ratio = token_text_ ? static_cast<float>(TextCompressionRatio(s)) : 0.0f;
  if (params_.compression_ratio_thold > 0.0f && token_text_) {
    repetitive = result->compression_ratio > params_.compression_ratio_thold;
  }
  return failed || (low_logprob && result->no_speech_prob < params_.no_speech_thold) || (repetitive && !silence);
}

absl::Status WindowDecoder::Run(DecoderBackend& backend, const std::vector<Token>& prompt, int seek, int seek_end,
                                WindowResult* result, int n_history, int n_prefix) {
  absl::Status st = CheckRunArgs(backend, prompt, n_history, n_prefix);
  if (!st.ok()) return st;
  n_prefix_ = n_prefix;
  prefix_.assign(prompt.end() - n_prefix, prompt.end());
  int n_prompt = static_cast<int>(prompt.size());
  // A window has at most n_text_ctx tokens: size the result once, so a later window (or
  // transcription) with more tokens than an earlier one does not allocate.
  result->tokens.reserve(n_text_ctx_);
  result->token_logprobs.reserve(n_text_ctx_);
  result->token_data.reserve(n_text_ctx_);
  // The prompt pass: its logits give the first token and the no-speech probability.
  int sot_index = -1;  // the no-speech position under OpenAI's rules (-1: the prompt's last)
  for (int i = n_history; i < n_prompt && sot_index < 0; ++i) {
    if (prompt[i] == special_.sot) sot_index = i;
  }
  st = PromptPass(backend, prompt.data(), n_prompt, sot_index, result);
  if (!st.ok()) return st;
  result->n_fallbacks = 0;
  result->history_dropped = false;
  float t = 0.0f;
  for (int k = 0;; ++k) {
    bool last_temperature = false;
    t = TemperatureAt(k, t, &last_temperature);
    if (params_.whisper_cpp && n_history > 0 && !result->history_dropped && t >= kHistoryTemperatureCutoff) {
      // whisper.cpp re-prompts every attempt; past text only below the cutoff.
      n_prompt -= n_history;
      st = PromptPass(backend, prompt.data() + n_history, n_prompt, 0, result);
      if (!st.ok()) return st;
      result->history_dropped = true;
    }
    // On a retry, every slot still holds the prompt's KV in positions [0, n_prompt): later
    // positions are overwritten as the new attempt decodes, and the first step reads the saved
    // prompt logits. A temperature below 0 decodes as 0 (faster-whisper: `if temperature > 0`
    // samples, else beam search) and is reported as given.
    if (k > 0) ++result->n_fallbacks;
    const float t_decode = std::max(t, 0.0f);
    st = Attempt(backend, n_prompt, t_decode, seek, seek_end);
    if (!st.ok()) return st;
    const bool retry = TakeBest(t_decode, result);
    result->temperature = t;
    if (!params_.whisper_cpp) KeepIfBetter(*result, k == 0);
    if (!retry) break;
    if (last_temperature) {
      // Every temperature failed. whisper.cpp (and openai-whisper) keep the last attempt;
      // faster-whisper keeps the best one, reported at the final temperature.
      if (!params_.whisper_cpp) RestoreKept(t, result);
      break;
    }
  }
  return absl::OkStatus();
}

float WindowDecoder::TemperatureAt(int k, float previous, bool* last) const {
  if (params_.n_temperatures > 0) {
    *last = k + 1 >= params_.n_temperatures;
    return params_.temperatures[std::min(k, params_.n_temperatures - 1)];
  }
  // whisper.cpp's list: for (t = temperature; t < 1.0f + 1e-6f; t += temperature_inc), in float.
  const float t = k == 0 ? params_.temperature : previous + params_.temperature_inc;
  *last = params_.temperature_inc <= 0.0f || t + params_.temperature_inc >= 1.0f + 1e-6f;
  return t;
}

void WindowDecoder::KeepIfBetter(const WindowResult& attempt, bool first) {
  const bool below = params_.compression_ratio_thold > 0.0f && token_text_ &&
                     attempt.compression_ratio <= params_.compression_ratio_thold;
  // max(below_cr_threshold_results or all_results, key=avg_logprob): an attempt under the
  // threshold beats any above it; among equals the strictly higher average wins, so the first of
  // equal maxima stays (Python's max).
  // An attempt none of whose sequences completed (a segment without timestamps, timestamps going
  // back: rules CTranslate2 does not have, whose sequences run on to max_length) holds at most a
  // cut of its text: any attempt that completed beats it.
  const bool complete = !attempt.failed;
  bool better = first || (complete && !kept_complete_);
  if (!better && complete == kept_complete_) {
    better = (below && !kept_below_) || (below == kept_below_ && attempt.avg_logprob > kept_.avg_logprob);
  }
  if (!better) return;
  kept_ = attempt;  // capacity reserved in the constructor: no allocation
  kept_below_ = below;
  kept_complete_ = complete;
}

void WindowDecoder::RestoreKept(float temperature, WindowResult* result) const {
  const int n_fallbacks = result->n_fallbacks;
  const bool history_dropped = result->history_dropped;
  *result = kept_;
  result->temperature = temperature;  // "to pass final temperature for prompt_reset_on_temperature"
  result->n_fallbacks = n_fallbacks;
  result->history_dropped = history_dropped;
}

}  // namespace whisper
