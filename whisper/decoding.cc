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
// whisper.cpp ends a decoder once a timestamp reaches within 1 s (100 frames) of the audio end.
constexpr int kEndOfAudioMargin = 100;
// whisper.cpp 1.8.5 uses its delta_min of 10 frames (100 ms) there.
constexpr int kEndOfAudioMarginWhisperCpp = 10;
constexpr int kWindowFrames = 3000;
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
  const int sampled = p.temperature_inc > 0.0f || p.temperature > 0.0f ? std::max(p.best_of, 1) : 1;
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
    lane.cands.reserve(16);
  }
  lane_seq_.resize(width);
  for (auto* v : {&seqs_, &next_seqs_}) {
    for (Sequence& s : *v) {
      s.tokens.reserve(n_text_ctx);
      s.data.reserve(n_text_ctx);
    }
  }
  candidates_.reserve(static_cast<size_t>(width) * width);
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
  const size_t n = static_cast<size_t>(std::max(0, MaxCandidates() - params_.beam_size));
  while (set_aside_.size() < n) {
    set_aside_.emplace_back();
    set_aside_.back().tokens.reserve(n_text_ctx_);
    set_aside_.back().data.reserve(n_text_ctx_);
  }
}

int WindowDecoder::MaxCandidates() const {
  if (params_.whisper_cpp || params_.beam_size <= 1) return params_.beam_size;
  // CTranslate2 get_max_candidates: std::round(float(beam_size) * patience).
  return static_cast<int>(std::round(static_cast<float>(params_.beam_size) * params_.patience));
}

int WindowDecoder::MaxSteps(int n_prompt) const {
  if (params_.max_new_tokens > 0 && !params_.whisper_cpp) {
    // CTranslate2 WhisperReplica::generate: max_length = min(total / 2, total - start_step), where
    // total = len(prompt) + max_new_tokens (faster-whisper) and start_step = len(prompt) - 1.
    const int total = n_prompt + params_.max_new_tokens;
    return std::min(total / 2, total - (n_prompt - 1));
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

void WindowDecoder::FilterInto(const float* raw_logits, const Sequence& seq, float temperature, Lane& lane) const {
  std::copy(raw_logits, raw_logits + special_.n_vocab, lane.logits.begin());
  LogitFilterParams fp = params_.filter;
  // whisper.cpp divides the logits by the temperature before its rules and log-softmax, so its
  // log-probabilities are the tempered ones. OpenAI's decoding.py (and CTranslate2's
  // RandomSampler) apply the rules to the raw logits, sample from softmax(logits / T), and score
  // with log_softmax(logits): SampleFromLogprobs applies the temperature there.
  fp.temperature = params_.whisper_cpp ? temperature : 0.0f;
  fp.max_text_tokens = params_.single_segment ? 0 : params_.max_tokens;
  fp.float_logsumexp = params_.whisper_cpp;
  fp.renormalize_timestamps = !params_.whisper_cpp;
  fp.after_prefix = n_prefix_ > 0;
  const bool text = ApplyLogitFilters(special_, fp, seq.tokens.data(), static_cast<int>(seq.tokens.size()),
                                      seq.has_ts, seq.seek_delta, lane.logits.data(), lane.logprobs.data(),
                                      seq.data.data());
  if (text && params_.grammar != nullptr && !seq.grammar.stacks.empty()) {
    // whisper.cpp: the grammar's penalty only where text may follow, then log-softmax again.
    params_.grammar->Penalize(seq.grammar, *params_.grammar_vocab, params_.grammar_penalty, lane.logits.data(),
                              &lane.grammar);
    LogSoftmax(lane.logits.data(), special_.n_vocab, params_.whisper_cpp, lane.logprobs.data());
  }
}

void WindowDecoder::FilterLane(void* job, int k) {
  const LaneJob& b = *static_cast<const LaneJob*>(job);
  WindowDecoder& self = *b.self;
  const int j = self.lane_seq_[k];
  const Sequence& s = self.seqs_[j];
  Lane& lane = self.lanes_[j];
  self.FilterInto(b.i == 0 ? self.prompt_logits_.data() : b.backend->logits(s.slot), s, b.temperature, lane);
  lane.ts = self.ComputeTsStats(lane);
  if (b.top_k == 0 && b.temperature == 0.0f) {
    // The first maximum, as std::max_element; SIMD (a scalar max_element over 51864 logprobs is a
    // 7-cycle load-compare-cmov chain per element: 0.15 ms per token).
    lane.argmax = static_cast<Token>(ggml_cpu::ArgmaxF32(lane.logprobs.size(), lane.logprobs.data()));
  }
  lane.cands.clear();
  if (b.top_k > 0) self.TopK(b.top_k, lane, j, s);
}

void WindowDecoder::FilterLanes(DecoderBackend& backend, int width, int i, float temperature, bool skip_idle,
                                int top_k) {
  int n = 0;
  for (int j = 0; j < width; ++j) {
    const Sequence& s = seqs_[j];
    if (s.completed || s.failed || (skip_idle && s.idle)) continue;
    lane_seq_[n++] = j;
  }
  LaneJob job{this, &backend, i, temperature, top_k};
  backend.ParallelFor(n, &WindowDecoder::FilterLane, &job);
}

WindowDecoder::TsStats WindowDecoder::ComputeTsStats(const Lane& lane) const {
  TsStats ts;
  ts.tid = 0;  // whisper.cpp's value when every timestamp is suppressed
  double sum = 0.0, max = 0.0;
  for (int i = special_.beg; i < special_.n_vocab; ++i) {
    const double p = std::exp(static_cast<double>(lane.logprobs[i]));
    sum += p;
    if (p > max) {
      max = p;
      ts.tid = i;
    }
  }
  ts.pt = static_cast<float>(max / (sum + 1e-10));
  ts.ptsum = static_cast<float>(sum);
  return ts;
}

Token WindowDecoder::SampleFromLogprobs(const Lane& lane, float temperature, std::mt19937& rng) {
  // exp((logprob - max) / T) is proportional to exp(logit / T) (logprob = logit - logsumexp);
  // shifted by the maximum, the most probable token weighs 1 at any temperature.
  const double inv_t = 1.0 / static_cast<double>(temperature);
  const double mx = ggml_cpu::MaxF32(lane.logprobs.size(), lane.logprobs.data());
  double total = 0.0;
  for (int i = 0; i < special_.n_vocab; ++i) {
    probs_[i] = std::exp((static_cast<double>(lane.logprobs[i]) - mx) * inv_t);
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

Token WindowDecoder::SampleWhisperCpp(const Lane& lane, std::mt19937& rng) {
  const int n = special_.n_vocab;
  double sum = 0.0;
  for (int i = 0; i < n; ++i) {
    const float lp = lane.logprobs[i];
    probs_[i] = lp == -std::numeric_limits<float>::infinity() ? 0.0 : static_cast<double>(std::exp(lp));
    sum += probs_[i];
  }
  if (!(sum > 0.0)) return 0;
  double acc = 0.0;
  for (int i = 0; i < n; ++i) {
    acc += probs_[i] / sum;
    cdf_[i] = acc;
  }
  cdf_[n - 1] = 1.0;
  const double p = std::generate_canonical<double, std::numeric_limits<double>::digits>(rng);
  return static_cast<Token>(std::lower_bound(cdf_.begin(), cdf_.end() - 1, p) - cdf_.begin());
}

void WindowDecoder::TopK(int k, Lane& lane, int from, const Sequence& seq) const {
  // k is small (<= 8): insertion into a sorted run of k beats a heap. Ties keep the lower id.
  // The scan skips ahead (SIMD) to the next logprob above -inf, or above the k-th best once there
  // are k: after the first few hundred tokens almost none are.
  Candidate best[16];
  int n = 0;
  const float* logprobs = lane.logprobs.data();
  const size_t n_vocab = static_cast<size_t>(special_.n_vocab);
  for (size_t i = 0;; ++i) {
    const float floor = n == k ? best[n - 1].logprob : -std::numeric_limits<float>::infinity();
    i += ggml_cpu::FindGreaterF32(n_vocab - i, logprobs + i, floor);
    if (i >= n_vocab) break;
    const float lp = logprobs[i];
    int pos = n < k ? n++ : k - 1;
    while (pos > 0 && best[pos - 1].logprob < lp) {
      best[pos] = best[pos - 1];
      --pos;
    }
    best[pos] = Candidate{from, static_cast<Token>(i), lp, seq.sum_logprobs_all + lp, TsStats()};
  }
  for (int i = 0; i < n; ++i) lane.cands.push_back(best[i]);
}

bool WindowDecoder::SameTokens(const Sequence& a, Token ta, const Sequence& b, Token tb) const {
  return ta == tb && a.tokens == b.tokens;
}

void WindowDecoder::StepRules(Sequence& seq, Token token, float logprob, const TsStats& ts, int i, int seek,
                              int seek_end) {
  TokenData d;
  d.id = token;
  d.p = std::exp(logprob);
  d.plog = logprob;
  d.tid = ts.tid;
  d.pt = ts.pt;
  d.ptsum = ts.ptsum;
  if (token >= special_.beg) {
    d.tid = token;
    d.pt = d.p;
  }
  seq.tokens.push_back(token);
  seq.data.push_back(d);
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
  if (params_.grammar != nullptr) {
    params_.grammar->AcceptToken(*params_.grammar_vocab, token, &seq.grammar, &grammar_scratch_);
  }
  const int margin = params_.whisper_cpp ? kEndOfAudioMarginWhisperCpp : kEndOfAudioMargin;
  const bool at_audio_end = seq.has_ts && seek + seq.seek_delta + margin >= seek_end;
  const bool at_max_tokens = params_.max_tokens > 0 && i >= params_.max_tokens;
  if (token == special_.eot || at_audio_end || at_max_tokens) {
    // OpenAI's rules: a sequence that ends with no timestamp after <|0.00|> (a forced prefix, or
    // text after the initial timestamp) is one segment over the window, as faster-whisper 1.2.1's
    // _split_segments_by_timestamps makes it (no consecutive timestamps: end = the window's end,
    // seek += segment_size); whisper.cpp's rules fail it. The no-timestamp completion below.
    const bool untimed = !params_.whisper_cpp && seq.result_len == 0 && token == special_.eot;
    if (seq.result_len == 0 && !params_.filter.no_timestamps && !untimed) {
      if (seek + seq.seek_delta + margin >= seek_end) {
        seq.result_len = i + 1;
      } else {
        seq.failed = true;
        return;
      }
    }
    if (params_.filter.no_timestamps || params_.single_segment || untimed) {
      seq.result_len = token == special_.eot ? i : i + 1;
      seq.seek_delta = kWindowFrames;
    }
    seq.completed = true;
    return;
  }
  // A window that reaches the token cap is treated as stuck in a repetition loop (not with
  // max_new_tokens under OpenAI's rules: Attempt ends the sequence at its last step).
  const bool capped = params_.max_new_tokens > 0 && !params_.whisper_cpp;
  if (!capped && i == params_.max_tokens_per_window - 1 &&
      (seq.result_len == 0 || seq.seek_delta < kWindowFrames / 2)) {
    seq.failed = true;
  }
}

void WindowDecoder::Score(Sequence& seq) const {
  double sum = 0.0;
  for (int i = 0; i < seq.result_len; ++i) sum += seq.data[i].plog;
  seq.sum_logprobs = sum;
  const double len = std::max(seq.result_len + n_prefix_, 1);  // CTranslate2: the hypothesis, prefix included
  double penalty = len;  // whisper.cpp's rules without length_penalty
  if (params_.length_penalty > 0.0f) {
    penalty = std::pow((5.0 + len) / 6.0, params_.length_penalty);  // whisper.cpp, OpenAI decoding.py
  } else if (!params_.whisper_cpp) {
    penalty = std::pow(len, static_cast<double>(params_.fw_length_penalty));  // CTranslate2 (pow(x, 1) = x)
  }
  seq.score = sum / penalty;
  if (seq.result_len > kEntropyWindow &&
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

void WindowDecoder::StartSequences(DecoderBackend& backend, int width, int n_prompt, bool beam) {
  for (int j = 0; j < width; ++j) {
    Sequence& s = seqs_[j];
    s.tokens.clear();
    s.data.clear();
    s.sum_logprobs_all = 0.0;
    s.result_len = 0;
    s.seek_delta = params_.whisper_cpp ? kWindowFrames : 0;  // whisper.cpp starts at 100 * 30
    s.has_ts = false;
    s.completed = false;
    s.failed = false;
    // OpenAI's beams start as one sequence and fan out from its candidates; whisper.cpp's all
    // start active (copies of the prompt) and each samples its own candidates.
    s.idle = beam && j > 0 && !params_.whisper_cpp;
    s.score = 0.0;
    s.slot = j;
    if (params_.grammar != nullptr) params_.grammar->Start(&s.grammar);
  }
  // Slot 0 holds this attempt's prompt (the prompt pass); the others get it copied, and every
  // other slot's content is unknown.
  for (std::vector<Token>& kv : slot_kv_) kv.clear();
  slot_kv_[0].assign(n_prompt, kPromptToken);
  for (int j = 1; j < width; ++j) {
    backend.CopyKv(0, j, 0, n_prompt);
    slot_kv_[j] = slot_kv_[0];
  }
}

void WindowDecoder::StepBeamOpenAi(DecoderBackend& backend, int width, int i, float temperature, int n_prompt,
                                   int seek, int seek_end, int* base) {
  candidates_.clear();
  FilterLanes(backend, width, i, temperature, /*skip_idle=*/true, /*top_k=*/width);
  for (int j = 0; j < width; ++j) {
    const Sequence& s = seqs_[j];
    if (s.completed || s.failed || s.idle) continue;
    for (Candidate c : lanes_[j].cands) {
      c.ts = lanes_[j].ts;
      candidates_.push_back(c);
    }
  }
  std::sort(candidates_.begin(), candidates_.end(), [](const Candidate& a, const Candidate& b) {
    return a.sum_logprobs_all > b.sum_logprobs_all;
  });
  // Refill the active beams from the best distinct candidates into the other slot bank.
  const int other = width - *base;
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
    const bool top = c == 0;
    Adopt(backend, candidates_[c++], other + j, n_prompt, i, seek, seek_end, &dst);
    if (top && dst.completed && !dst.failed) top_completed_ = true;
    if (dst.completed && !dst.failed && n_set_aside_ < static_cast<int>(set_aside_.size()) &&
        n_set_aside_ < MaxCandidates() - params_.beam_size) {
      // patience > 1: the completed sequence is set aside and this beam goes on with the next
      // best candidate (CTranslate2 moves the next non-EOS candidate into a finished beam's place).
      std::swap(set_aside_[n_set_aside_++], dst);
      --j;  // refill slot j from candidate c on
    }
  }
  std::swap(seqs_, next_seqs_);
  *base = other;
}

void WindowDecoder::StepSampled(DecoderBackend& backend, int width, int i, float temperature, int seek,
                                int seek_end) {
  FilterLanes(backend, width, i, temperature, /*skip_idle=*/false, /*top_k=*/0);
  for (int j = 0; j < width; ++j) {
    Sequence& s = seqs_[j];
    if (s.completed || s.failed) continue;
    const Lane& lane = lanes_[j];
    Token t;
    if (temperature == 0.0f) {
      t = lane.argmax;
    } else {
      t = params_.whisper_cpp ? SampleWhisperCpp(lane, rngs_[j]) : SampleFromLogprobs(lane, temperature, rngs_[j]);
    }
    StepRules(s, t, lane.logprobs[t], lane.ts, i, seek, seek_end);
  }
}

absl::Status WindowDecoder::DecodeLive(DecoderBackend& backend, int width, int n_prompt, int* n_live_out) {
  // The live sequences' next tokens, one batched step when they share a position (they do:
  // each step appends one token to every live sequence).
  int n_live = 0;
  bool same_pos = true;
  for (int j = 0; j < width; ++j) {
    const Sequence& s = seqs_[j];
    if (s.completed || s.failed || s.idle) continue;
    same_pos = same_pos && (n_live == 0 || s.tokens.size() == seqs_[batch_seq_[0]].tokens.size());
    batch_seq_[n_live] = j;
    batch_slots_[n_live] = s.slot;
    batch_tokens_[n_live] = s.tokens.back();
    ++n_live;
  }
  *n_live_out = n_live;
  if (n_live == 0) return absl::OkStatus();
  if (same_pos) {
    const int n_past = n_prompt + static_cast<int>(seqs_[batch_seq_[0]].tokens.size()) - 1;
    absl::Status st = backend.DecodeBatch(batch_slots_.data(), batch_tokens_.data(), n_live, n_past);
    if (!st.ok()) return st;
    for (int b = 0; b < n_live; ++b) NoteDecoded(batch_slots_[b], n_past, batch_tokens_[b]);
  } else {
    for (int b = 0; b < n_live; ++b) {
      const int n_past = n_prompt + static_cast<int>(seqs_[batch_seq_[b]].tokens.size()) - 1;
      absl::Status st = backend.Decode(batch_slots_[b], &batch_tokens_[b], 1, n_past);
      if (!st.ok()) return st;
      NoteDecoded(batch_slots_[b], n_past, batch_tokens_[b]);
    }
  }
  return absl::OkStatus();
}

absl::Status WindowDecoder::Attempt(DecoderBackend& backend, int n_prompt, float temperature, int seek,
                                    int seek_end) {
  const bool beam = BeamAt(temperature);
  const int width = AttemptWidth(temperature);
  const int n_max = MaxSteps(n_prompt);
  // Beam search double-buffers its KV caches: slots [0, width) and [width, 2 width) alternate.
  int base = 0;
  StartSequences(backend, width, n_prompt, beam);
  n_set_aside_ = 0;
  top_completed_ = false;
  const bool openai_beam = beam && !params_.whisper_cpp;
  // CTranslate2 BeamSearch: without a length penalty, the search ends once the best candidate of a
  // step completes (allow_early_exit); else once round(beam_size * patience) completed.
  const bool early_exit = openai_beam && params_.length_penalty <= 0.0f && params_.fw_length_penalty == 0.0f;
  for (int i = 0; i < n_max; ++i) {
    if (beam && params_.whisper_cpp) {
      StepBeamWhisperCpp(backend, width, i, temperature, n_prompt, seek, seek_end, &base);
    } else if (beam) {
      StepBeamOpenAi(backend, width, i, temperature, n_prompt, seek, seek_end, &base);
    } else {
      StepSampled(backend, width, i, temperature, seek, seek_end);
    }
    if (openai_beam) {
      int n_completed = n_set_aside_;
      for (int j = 0; j < width; ++j) n_completed += seqs_[j].completed && !seqs_[j].failed;
      if ((early_exit && top_completed_) || n_completed >= MaxCandidates()) break;
    }
    if (i + 1 == n_max) break;  // the last step's tokens need no decoding (nor room in the context)
    int n_live = 0;
    absl::Status st = DecodeLive(backend, width, n_prompt, &n_live);
    if (!st.ok()) return st;
    if (n_live == 0) break;
  }
  for (int j = 0; j < width + n_set_aside_; ++j) {
    Sequence& s = AttemptSeq(width, j);
    const bool live = !s.completed && !s.failed && !s.idle;
    if (live && params_.max_new_tokens > 0 && !params_.whisper_cpp && static_cast<int>(s.tokens.size()) == n_max) {
      CompleteAtLastStep(s, seek, seek_end);
    }
    // Ran out of tokens or context, or an idle beam. whisper.cpp scores a sequence that ran out
    // unless the repetition rule failed it.
    if (!s.completed && !params_.whisper_cpp) s.failed = true;
    if (!s.failed) Score(s);
  }
  return absl::OkStatus();
}

void WindowDecoder::CompleteAtLastStep(Sequence& seq, int seek, int seek_end) const {
  seq.completed = true;
  if (params_.filter.no_timestamps || params_.single_segment) {
    seq.result_len = static_cast<int>(seq.tokens.size());
    seq.seek_delta = kWindowFrames;
  } else if (seq.result_len == 0) {
    // faster-whisper's split_segments_by_timestamps without consecutive timestamps: every token in
    // one segment ending with the window (segment_size frames), and seek moves past the window.
    seq.result_len = static_cast<int>(seq.tokens.size());
    seq.seek_delta = std::min(kWindowFrames, seek_end - seek);
  }
}

void WindowDecoder::StepBeamWhisperCpp(DecoderBackend& backend, int width, int i, float temperature, int n_prompt,
                                       int seek, int seek_end, int* base) {
  candidates_.clear();
  FilterLanes(backend, width, i, temperature, /*skip_idle=*/false, /*top_k=*/0);
  for (int j = 0; j < width; ++j) {
    const Sequence& s = seqs_[j];
    if (s.completed || s.failed) continue;
    const Lane& lane = lanes_[j];
    TsStats ts = lane.ts;
    if (ts.ptsum <= 0.0f) ts.tid = special_.beg;  // whisper_sample_token_topk's initial tid
    for (int r = 0; r < params_.beam_size; ++r) {
      const Token id = SampleWhisperCpp(lane, rngs_[j]);
      candidates_.push_back(Candidate{j, id, lane.logprobs[id], s.sum_logprobs_all + lane.logprobs[id], ts});
    }
  }
  std::sort(candidates_.begin(), candidates_.end(), [](const Candidate& a, const Candidate& b) {
    if (a.sum_logprobs_all != b.sum_logprobs_all) return a.sum_logprobs_all > b.sum_logprobs_all;
    return a.from < b.from;
  });
  const int other = width - *base;
  size_t c = 0;
  for (int j = 0; j < width; ++j) {
    Sequence& dst = next_seqs_[j];
    const Sequence& old = seqs_[j];
    if (old.completed || old.failed || candidates_.empty()) {
      dst = old;
      continue;
    }
    if (c >= candidates_.size()) c = 0;
    const Candidate& cand = candidates_[c++];
    while (i > 0 && c < candidates_.size() &&
           SameTokens(seqs_[candidates_[c].from], candidates_[c].token, seqs_[cand.from], cand.token)) {
      ++c;
    }
    Adopt(backend, cand, other + j, n_prompt, i, seek, seek_end, &dst);
  }
  std::swap(seqs_, next_seqs_);
  *base = other;
}

void WindowDecoder::Adopt(DecoderBackend& backend, const Candidate& cand, int slot, int n_prompt, int i, int seek,
                          int seek_end, Sequence* dst) {
  const Sequence& src = seqs_[cand.from];
  *dst = src;  // capacity is kept: both banks reserved n_text_ctx
  dst->idle = false;
  dst->slot = slot;
  // src's cache holds positions [0, n); copy those after the prefix the two caches share.
  const int n = n_prompt + static_cast<int>(src.tokens.size());
  const std::vector<Token>& from = slot_kv_[src.slot];
  std::vector<Token>& to = slot_kv_[slot];
  const int common_max = std::min({n, static_cast<int>(from.size()), static_cast<int>(to.size())});
  int common = 0;
  while (common < common_max && from[common] == to[common] && from[common] != kUnknownToken) ++common;
  backend.CopyKv(src.slot, slot, common, n);
  to.assign(from.begin(), from.begin() + std::min(n, static_cast<int>(from.size())));
  to.resize(n, kUnknownToken);
  StepRules(*dst, cand.token, cand.logprob, cand.ts, i, seek, seek_end);
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
  const int total = static_cast<int>(prompt.size()) + params_.max_new_tokens;
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
  result->sum_logprob = static_cast<float>(s.sum_logprobs);
  if (params_.whisper_cpp) {
    result->avg_logprob = s.result_len > 0 ? static_cast<float>(s.sum_logprobs / s.result_len) : -INFINITY;
  } else {
    // OpenAI decoding.py (avg_logprob = sum_logprob / (len(tokens) + 1)) and faster-whisper's
    // generate_with_fallback (cum_logprob / (seq_len + 1)): every sampled token's log-probability,
    // <|endoftext|>'s included, over the number of tokens before it plus one.
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
  float t = params_.temperature;
  int n_attempts = 0;
  for (;;) {
    if (params_.whisper_cpp && n_history > 0 && !result->history_dropped && t >= kHistoryTemperatureCutoff) {
      // whisper.cpp re-prompts every attempt; past text only below the cutoff.
      n_prompt -= n_history;
      st = PromptPass(backend, prompt.data() + n_history, n_prompt, 0, result);
      if (!st.ok()) return st;
      result->history_dropped = true;
    }
    const bool last_temperature = params_.temperature_inc <= 0.0f || t + params_.temperature_inc >= 1.0f + 1e-6f;
    // On a retry, every slot still holds the prompt's KV in positions [0, n_prompt): later
    // positions are overwritten as the new attempt decodes, and the first step reads the saved
    // prompt logits.
    if (t != params_.temperature) ++result->n_fallbacks;
    st = Attempt(backend, n_prompt, t, seek, seek_end);
    if (!st.ok()) return st;
    const bool retry = TakeBest(t, result);
    if (!params_.whisper_cpp) KeepIfBetter(*result, n_attempts++ == 0);
    if (!retry) break;
    if (last_temperature) {
      // Every temperature failed. whisper.cpp (and openai-whisper) keep the last attempt;
      // faster-whisper keeps the best one, reported at the final temperature.
      if (!params_.whisper_cpp) RestoreKept(t, result);
      break;
    }
    t += params_.temperature_inc;
  }
  return absl::OkStatus();
}

void WindowDecoder::KeepIfBetter(const WindowResult& attempt, bool first) {
  const bool below = params_.compression_ratio_thold > 0.0f && token_text_ &&
                     attempt.compression_ratio <= params_.compression_ratio_thold;
  // max(below_cr_threshold_results or all_results, key=avg_logprob): an attempt under the
  // threshold beats any above it; among equals the strictly higher average wins, so the first of
  // equal maxima stays (Python's max).
  // An attempt none of whose sequences completed (our token cap, the entropy rule, a segment
  // without timestamps: rules CTranslate2 does not have, whose sequences run on to max_length)
  // holds at most a cut of its text: any attempt that completed beats it.
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
