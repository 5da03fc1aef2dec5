// WindowDecoder's per-step search: the logit filters on every live sequence, sampling and
// top-k, the per-token rules, beam search under both rule sets, and one decoding attempt
// (Attempt). The window-level rules and Run are in whisper/decoding.cc.
#include "whisper/decoding.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "kernels/vec.h"

namespace whisper {
namespace {

// whisper.cpp 1.8.5 ends a decoder once a timestamp reaches within its delta_min of 10 frames
// (100 ms) of the audio end. OpenAI's rules (decoding.py, CTranslate2's GreedySearch / BeamSearch)
// have no such stop: a sequence ends with <|endoftext|> (or the token cap), and that step's
// log-probability counts in the score and avg_logprob.
constexpr int kEndOfAudioMarginWhisperCpp = 10;
// Under OpenAI's rules, a sequence that ends (at the token cap) with no timestamp is kept when it
// is this close (1 s) to the audio end.
constexpr int kEndOfAudioMargin = 100;
constexpr int kWindowFrames = 3000;

}  // namespace

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
  if (n_prefix_ > 0 && (fp.repetition_penalty != 1.0f || fp.no_repeat_ngram_size > 0)) {
    // CTranslate2's repetition penalty and n-gram ban read the forced prefix as output too.
    lane.output.assign(prefix_.begin(), prefix_.end());
    lane.output.insert(lane.output.end(), seq.tokens.begin(), seq.tokens.end());
    fp.output = lane.output.data();
    fp.n_output = static_cast<int>(lane.output.size());
  }
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
  // k is small (<= 2 x kMaxDecodingWidth): insertion into a sorted run of k beats a heap. Ties keep
  // the lower id. The scan skips ahead (SIMD) to the next logprob above -inf, or above the k-th
  // best once there are k: after the first few hundred tokens almost none are.
  Candidate best[2 * kMaxDecodingWidth];
  k = std::min(k, 2 * kMaxDecodingWidth);
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
  const bool at_audio_end = params_.whisper_cpp && seq.has_ts && seek + seq.seek_delta + margin >= seek_end;
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
    if (params_.keep_unclosed_tail && seq.result_len > 0) {
      seq.result_len = static_cast<int>(seq.tokens.size()) - (token == special_.eot ? 1 : 0);
    }
    seq.completed = true;
    return;
  }
  // whisper.cpp's rules: a window that reaches the token cap is treated as stuck in a repetition
  // loop. OpenAI's have CTranslate2's max_length instead: Attempt ends the sequence at its last
  // step (MaxSteps).
  if (params_.whisper_cpp && i == params_.max_tokens_per_window - 1 &&
      (seq.result_len == 0 || seq.seek_delta < kWindowFrames / 2)) {
    seq.failed = true;
  }
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
                                   int seek, int seek_end, bool last, int* base) {
  // CTranslate2 4.x BeamSearch::search: the 2 x beam_size best candidates of the live beams (sum of
  // log-probabilities); of the first beam_size, each that ends (<|endoftext|>, or any at the last
  // step) is registered as finished and its place taken by the next candidate of the second half
  // that does not end; the others go on. Every beam stays live (a finished one is refilled).
  candidates_.clear();
  FilterLanes(backend, width, i, temperature, /*skip_idle=*/true, /*top_k=*/2 * width);
  for (int j = 0; j < width; ++j) {
    const Sequence& s = seqs_[j];
    if (s.completed || s.failed || s.idle) continue;
    for (Candidate c : lanes_[j].cands) {
      c.ts = lanes_[j].ts;
      candidates_.push_back(c);
    }
  }
  // Equal scores in beam then id order (std::stable_sort would allocate its buffer).
  std::sort(candidates_.begin(), candidates_.end(), [](const Candidate& a, const Candidate& b) {
    if (a.sum_logprobs_all != b.sum_logprobs_all) return a.sum_logprobs_all > b.sum_logprobs_all;
    return a.from != b.from ? a.from < b.from : a.token < b.token;
  });
  const size_t n_cands = std::min(candidates_.size(), static_cast<size_t>(2 * width));
  const int other = width - *base;
  size_t secondary = static_cast<size_t>(width);
  for (int k = 0; k < width; ++k) {
    Sequence& dst = next_seqs_[k];
    dst.idle = true;
    if (static_cast<size_t>(k) >= n_cands) continue;  // fewer candidates than beams: idle this step
    const Candidate& cand = candidates_[k];
    if (cand.token == special_.eot && n_prefix_ > 0 && i == 0 && k > 0) {
      // update_sample_with_prefix: on the first step after a forced prefix, <|endoftext|> in a
      // secondary beam is replaced by a dead candidate (score -1e10): nothing is registered.
      continue;
    }
    if (cand.token != special_.eot && !last) {
      Adopt(backend, cand, other + k, n_prompt, i, seek, seek_end, &dst);
      if (!dst.completed && !dst.failed) continue;
      // Completed by another rule (max_tokens): finished like an <|endoftext|>.
      if (n_set_aside_ < static_cast<int>(set_aside_.size())) std::swap(set_aside_[n_set_aside_++], dst);
      dst.idle = true;
    } else {
      Sequence& fin = set_aside_[std::min<size_t>(n_set_aside_, set_aside_.size() - 1)];
      Extend(cand, i, seek, seek_end, &fin);
      if (last && !fin.completed && !fin.failed) CompleteAtLastStep(fin);
      if (n_set_aside_ < static_cast<int>(set_aside_.size())) ++n_set_aside_;
    }
    if (k == 0) top_completed_ = true;  // CTranslate2's top_beam_finished
    if (last) continue;
    for (; secondary < n_cands; ++secondary) {  // the next candidate that does not end takes its place
      if (candidates_[secondary].token != special_.eot) break;
    }
    if (secondary < n_cands) Adopt(backend, candidates_[secondary++], other + k, n_prompt, i, seek, seek_end, &dst);
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
      StepBeamOpenAi(backend, width, i, temperature, n_prompt, seek, seek_end, /*last=*/i + 1 == n_max, &base);
    } else {
      StepSampled(backend, width, i, temperature, seek, seek_end);
    }
    // CTranslate2: done once round(beam_size * patience) sequences finished (more may finish in
    // the step that reaches it), or at once with early exit when the top beam finished.
    if (openai_beam && ((early_exit && top_completed_) || n_set_aside_ >= MaxCandidates())) break;
    if (i + 1 == n_max) break;  // the last step's tokens need no decoding (nor room in the context)
    int n_live = 0;
    absl::Status st = DecodeLive(backend, width, n_prompt, &n_live);
    if (!st.ok()) return st;
    if (n_live == 0) break;
  }
  for (int j = 0; j < width + n_set_aside_; ++j) {
    Sequence& s = AttemptSeq(width, j);
    const bool live = !s.completed && !s.failed && !s.idle;
    if (live && !params_.whisper_cpp && static_cast<int>(s.tokens.size()) == n_max) {
      CompleteAtLastStep(s);
    }
    // Ran out of tokens or context, or an idle beam. whisper.cpp scores a sequence that ran out
    // unless the repetition rule failed it.
    if (!s.completed && !params_.whisper_cpp) s.failed = true;
    if (!s.failed) Score(s);
  }
  return absl::OkStatus();
}

void WindowDecoder::CompleteAtLastStep(Sequence& seq) const {
  seq.completed = true;
  if (params_.filter.no_timestamps || params_.single_segment) {
    seq.result_len = static_cast<int>(seq.tokens.size());
    seq.seek_delta = kWindowFrames;
  } else if (seq.result_len == 0) {
    // faster-whisper's split_segments_by_timestamps without consecutive timestamps: every token in
    // one segment ending with the window, and seek moves past the window (Transcriber sets its
    // segment_size: the chunk, clip or audio left).
    seq.result_len = static_cast<int>(seq.tokens.size());
    seq.seek_delta = kWindowFrames;
  } else if (params_.keep_unclosed_tail) {
    seq.result_len = static_cast<int>(seq.tokens.size());  // the text after the last timestamp too
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

void WindowDecoder::Extend(const Candidate& cand, int i, int seek, int seek_end, Sequence* dst) {
  *dst = seqs_[cand.from];  // capacity is kept: every sequence reserved n_text_ctx
  dst->idle = false;
  StepRules(*dst, cand.token, cand.logprob, cand.ts, i, seek, seek_end);
}

void WindowDecoder::Adopt(DecoderBackend& backend, const Candidate& cand, int slot, int n_prompt, int i, int seek,
                          int seek_end, Sequence* dst) {
  const Sequence& src = seqs_[cand.from];
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
  Extend(cand, i, seek, seek_end, dst);
  dst->slot = slot;
}

}  // namespace whisper
