#include "whisper/decoding.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace whisper {
namespace {

constexpr int kEntropyWindow = 32;
// whisper.cpp ends a decoder once a timestamp reaches within 1 s (100 frames) of the audio end.
constexpr int kEndOfAudioMargin = 100;
constexpr int kWindowFrames = 3000;

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
  const int beams = p.beam_size > 1 ? 2 * p.beam_size : 1;
  const int sampled = p.temperature_inc > 0.0f || p.temperature > 0.0f ? std::max(p.best_of, 1) : 1;
  return std::max(beams, sampled);
}

WindowDecoder::WindowDecoder(const SpecialTokens& special, int n_text_ctx, const DecodingParams& params)
    : special_(special), n_text_ctx_(n_text_ctx), params_(params) {
  logits_.resize(special.n_vocab);
  logprobs_.resize(special.n_vocab);
  prompt_logits_.resize(special.n_vocab);
  probs_.resize(special.n_vocab);
  const int n = DecodersNeeded(params);
  const int width = std::max(params.beam_size, std::max(params.best_of, 1));
  seqs_.resize(width);
  next_seqs_.resize(width);
  for (auto* v : {&seqs_, &next_seqs_}) {
    for (Sequence& s : *v) {
      s.tokens.reserve(n_text_ctx);
      s.logprobs.reserve(n_text_ctx);
    }
  }
  candidates_.reserve(static_cast<size_t>(width) * width);
  for (int j = 0; j < n; ++j) rngs_.emplace_back(j);  // whisper.cpp seeds decoder j with j
}

void WindowDecoder::FilterInto(const float* raw_logits, const Sequence& seq, float temperature) {
  std::copy(raw_logits, raw_logits + special_.n_vocab, logits_.begin());
  LogitFilterParams fp = params_.filter;
  fp.temperature = temperature;
  ApplyLogitFilters(special_, fp, seq.tokens.data(), static_cast<int>(seq.tokens.size()), seq.has_ts,
                    seq.seek_delta, logits_.data(), logprobs_.data());
}

Token WindowDecoder::SampleFromLogprobs(std::mt19937& rng) {
  double total = 0.0;
  for (int i = 0; i < special_.n_vocab; ++i) {
    probs_[i] = std::exp(static_cast<double>(logprobs_[i]));
    total += probs_[i];
  }
  const double r = std::uniform_real_distribution<double>(0.0, total)(rng);
  double acc = 0.0;
  Token last = 0;
  for (int i = 0; i < special_.n_vocab; ++i) {
    if (probs_[i] <= 0.0) continue;
    acc += probs_[i];
    last = i;
    if (r < acc) return i;
  }
  return last;
}

void WindowDecoder::TopK(int k, std::vector<Candidate>* out, int from, const Sequence& seq) {
  // k is small (<= 8): insertion into a sorted run of k beats a heap. Ties keep the lower id.
  Candidate best[16];
  int n = 0;
  for (int i = 0; i < special_.n_vocab; ++i) {
    const float lp = logprobs_[i];
    if (lp == -std::numeric_limits<float>::infinity()) continue;
    if (n == k && lp <= best[n - 1].logprob) continue;
    int pos = n < k ? n++ : k - 1;
    while (pos > 0 && best[pos - 1].logprob < lp) {
      best[pos] = best[pos - 1];
      --pos;
    }
    best[pos] = Candidate{from, i, lp, seq.sum_logprobs_all + lp};
  }
  for (int i = 0; i < n; ++i) out->push_back(best[i]);
}

bool WindowDecoder::SameTokens(const Sequence& a, Token ta, const Sequence& b, Token tb) const {
  return ta == tb && a.tokens == b.tokens;
}

void WindowDecoder::StepRules(Sequence& seq, Token token, float logprob, int i, int seek, int seek_end) {
  seq.tokens.push_back(token);
  seq.logprobs.push_back(logprob);
  seq.sum_logprobs_all += logprob;
  if (token > special_.beg) {
    const int new_delta = 2 * (token - special_.beg);
    if (seq.has_ts && seq.seek_delta > new_delta && seq.result_len < i) {  // back in time
      seq.failed = true;
      return;
    }
    seq.seek_delta = new_delta;
    seq.result_len = i + 1;
    seq.has_ts = true;
  }
  const bool at_audio_end = seq.has_ts && seek + seq.seek_delta + kEndOfAudioMargin >= seek_end;
  if (token == special_.eot || at_audio_end) {
    if (seq.result_len == 0 && !params_.filter.no_timestamps) {
      if (seek + seq.seek_delta + kEndOfAudioMargin >= seek_end) {
        seq.result_len = i + 1;
      } else {
        seq.failed = true;
        return;
      }
    }
    if (params_.filter.no_timestamps) {
      seq.result_len = token == special_.eot ? i : i + 1;
      seq.seek_delta = kWindowFrames;
    }
    seq.completed = true;
    return;
  }
  // A window that reaches the token cap is treated as stuck in a repetition loop.
  if (i == params_.max_tokens_per_window - 1 && (seq.result_len == 0 || seq.seek_delta < kWindowFrames / 2)) {
    seq.failed = true;
  }
}

void WindowDecoder::Score(Sequence& seq) const {
  double sum = 0.0;
  for (int i = 0; i < seq.result_len; ++i) sum += seq.logprobs[i];
  seq.sum_logprobs = sum;
  const double len = std::max(seq.result_len, 1);
  const double penalty =
      params_.length_penalty > 0.0f ? std::pow((5.0 + len) / 6.0, params_.length_penalty) : len;
  seq.score = sum / penalty;
  if (seq.result_len > kEntropyWindow &&
      TokenEntropy(seq.tokens.data(), seq.result_len, kEntropyWindow) < params_.entropy_thold) {
    seq.failed = true;
  }
}

absl::Status WindowDecoder::Attempt(DecoderBackend& backend, int n_prompt, float temperature, int seek,
                                    int seek_end) {
  const bool beam = temperature == 0.0f && params_.beam_size > 1;
  const int width = beam ? params_.beam_size : (temperature > 0.0f ? std::max(params_.best_of, 1) : 1);
  const int n_max = std::min(params_.max_tokens_per_window, n_text_ctx_ - n_prompt);
  // Beam search double-buffers its KV caches: slots [0, width) and [width, 2 width) alternate.
  int base = 0;
  for (int j = 0; j < width; ++j) {
    Sequence& s = seqs_[j];
    s.tokens.clear();
    s.logprobs.clear();
    s.sum_logprobs_all = 0.0;
    s.result_len = 0;
    s.seek_delta = 0;
    s.has_ts = false;
    s.completed = false;
    s.failed = false;
    s.idle = beam && j > 0;  // beams start as one sequence and fan out from its candidates
    s.score = 0.0;
    s.slot = j;
    if (j > 0) backend.CopyKv(0, j, n_prompt);
  }
  for (int i = 0; i < n_max; ++i) {
    if (beam) {
      candidates_.clear();
      for (int j = 0; j < width; ++j) {
        Sequence& s = seqs_[j];
        if (s.completed || s.failed || s.idle) continue;
        FilterInto(i == 0 ? prompt_logits_.data() : backend.logits(s.slot), s, temperature);
        TopK(width, &candidates_, j, s);
      }
      std::sort(candidates_.begin(), candidates_.end(), [](const Candidate& a, const Candidate& b) {
        return a.sum_logprobs_all > b.sum_logprobs_all;
      });
      // Refill the active beams from the best distinct candidates into the other slot bank.
      const int other = width - base;
      size_t c = 0;
      for (int j = 0; j < width; ++j) {
        Sequence& dst = next_seqs_[j];
        const Sequence& old = seqs_[j];
        if (old.completed || old.failed) {
          dst = old;
          continue;
        }
        for (; c < candidates_.size(); ++c) {
          const Candidate& cand = candidates_[c];
          bool dup = false;
          for (int k = 0; k < j && !dup; ++k) {
            const Sequence& prev = next_seqs_[k];
            if (prev.idle || seqs_[k].completed || seqs_[k].failed) continue;
            dup = prev.tokens.size() == seqs_[cand.from].tokens.size() + 1 && prev.tokens.back() == cand.token &&
                  std::equal(prev.tokens.begin(), prev.tokens.end() - 1, seqs_[cand.from].tokens.begin());
          }
          if (!dup) break;
        }
        if (c >= candidates_.size()) {
          dst = old;
          dst.idle = true;
          continue;
        }
        const Candidate& cand = candidates_[c++];
        const Sequence& src = seqs_[cand.from];
        dst = src;  // capacity is kept: both banks reserved n_text_ctx
        dst.idle = false;
        dst.slot = other + j;
        backend.CopyKv(src.slot, dst.slot, n_prompt + static_cast<int>(src.tokens.size()));
        StepRules(dst, cand.token, cand.logprob, i, seek, seek_end);
      }
      std::swap(seqs_, next_seqs_);
      base = other;
    } else {
      for (int j = 0; j < width; ++j) {
        Sequence& s = seqs_[j];
        if (s.completed || s.failed) continue;
        FilterInto(i == 0 ? prompt_logits_.data() : backend.logits(s.slot), s, temperature);
        Token t;
        if (temperature == 0.0f) {
          t = static_cast<Token>(std::max_element(logprobs_.begin(), logprobs_.end()) - logprobs_.begin());
        } else {
          t = SampleFromLogprobs(rngs_[j]);
        }
        StepRules(s, t, logprobs_[t], i, seek, seek_end);
      }
    }
    bool all_done = true;
    for (int j = 0; j < width; ++j) {
      Sequence& s = seqs_[j];
      if (s.completed || s.failed || s.idle) continue;
      all_done = false;
      const Token last = s.tokens.back();
      absl::Status st = backend.Decode(s.slot, &last, 1, n_prompt + static_cast<int>(s.tokens.size()) - 1);
      if (!st.ok()) return st;
    }
    if (all_done) break;
  }
  for (int j = 0; j < width; ++j) {
    Sequence& s = seqs_[j];
    if (!s.completed) s.failed = true;  // ran out of context, or an idle beam
    if (!s.failed) Score(s);
  }
  return absl::OkStatus();
}

absl::Status WindowDecoder::Run(DecoderBackend& backend, const std::vector<Token>& prompt, int seek, int seek_end,
                                WindowResult* result) {
  if (static_cast<int>(prompt.size()) >= n_text_ctx_) {
    return absl::InvalidArgumentError("decoding: prompt of " + std::to_string(prompt.size()) +
                                      " tokens does not fit n_text_ctx " + std::to_string(n_text_ctx_));
  }
  if (backend.n_decoders() < DecodersNeeded(params_)) {
    return absl::InvalidArgumentError("decoding: backend has " + std::to_string(backend.n_decoders()) +
                                      " decoders, the params need " + std::to_string(DecodersNeeded(params_)));
  }
  const int n_prompt = static_cast<int>(prompt.size());
  // The prompt pass: its logits give the first token and the no-speech probability.
  absl::Status st = backend.Decode(0, prompt.data(), n_prompt, 0);
  if (!st.ok()) return st;
  {
    const float* raw = backend.logits(0);
    std::copy(raw, raw + special_.n_vocab, prompt_logits_.begin());
    const float lse = LogSumExp(raw, 0, special_.n_vocab);
    result->no_speech_prob = std::exp(raw[special_.nosp] - lse);
  }
  result->n_fallbacks = 0;
  float t = params_.temperature;
  for (;;) {
    const bool last_temperature = params_.temperature_inc <= 0.0f || t + params_.temperature_inc >= 1.0f + 1e-6f;
    // On a retry, every slot still holds the prompt's KV in positions [0, n_prompt): later
    // positions are overwritten as the new attempt decodes, and the first step reads the saved
    // prompt logits.
    if (t != params_.temperature) ++result->n_fallbacks;
    st = Attempt(backend, n_prompt, t, seek, seek_end);
    if (!st.ok()) return st;
    const int width = (t == 0.0f && params_.beam_size > 1) ? params_.beam_size
                                                            : (t > 0.0f ? std::max(params_.best_of, 1) : 1);
    int best = -1;
    for (int j = 0; j < width; ++j) {
      if (!seqs_[j].failed && (best < 0 || seqs_[j].score > seqs_[best].score)) best = j;
    }
    const bool failed = best < 0;
    if (best < 0) best = 0;
    const Sequence& s = seqs_[best];
    result->tokens.assign(s.tokens.begin(), s.tokens.begin() + std::min<size_t>(s.result_len, s.tokens.size()));
    result->token_logprobs.assign(s.logprobs.begin(), s.logprobs.begin() + result->tokens.size());
    result->sum_logprob = static_cast<float>(s.sum_logprobs);
    result->avg_logprob = s.result_len > 0 ? static_cast<float>(s.sum_logprobs / s.result_len) : -INFINITY;
    result->temperature = t;
    result->seek_delta = s.seek_delta;
    result->failed = failed;
    const bool retry = failed || (result->avg_logprob < params_.logprob_thold &&
                                  result->no_speech_prob < params_.no_speech_thold);
    if (!retry || last_temperature) break;
    t += params_.temperature_inc;
  }
  return absl::OkStatus();
}

}  // namespace whisper
