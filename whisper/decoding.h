// Decoding of one 30 s window: greedy, best-of sampling and beam search over a decoder backend,
// with whisper.cpp's per-step rules (timestamps, completion, repetition cap), sequence scoring and
// entropy check, and temperature fallback (whisper.cpp whisper_full_with_state, src/whisper.cpp
// L6889-7640; OpenAI whisper/decoding.py for beam search).
//
// Deliberate difference from whisper.cpp: beam search keeps the top-k candidates by log-probability
// per beam, as OpenAI's BeamSearchDecoder does; whisper.cpp samples k ids instead.
#ifndef GGML_WHISPER_WHISPER_DECODING_H_
#define GGML_WHISPER_WHISPER_DECODING_H_

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "whisper/compression_ratio.h"
#include "whisper/grammar.h"
#include "whisper/logit_filter.h"
#include "whisper/tokens.h"

namespace whisper {

// What decoding needs from the model: per-decoder KV caches that tokens are appended to, and the
// logits of the last token. InferenceState implements it; tests use a scripted fake.
class DecoderBackend {
 public:
  virtual ~DecoderBackend() = default;
  // Appends tokens[0..n_tokens) to decoder `decoder`'s KV cache at positions n_past.. and computes
  // the logits (n_vocab floats) of the last of them.
  virtual absl::Status Decode(int decoder, const Token* tokens, int n_tokens, int n_past) = 0;
  // One token for each of decoders[0..n) (distinct), all at position n_past: what n calls of
  // Decode(decoders[b], &tokens[b], 1, n_past) give, in one pass where the backend batches them
  // (InferenceState::DecodeBatch). The default makes the n calls.
  virtual absl::Status DecodeBatch(const int* decoders, const Token* tokens, int n, int n_past) {
    for (int b = 0; b < n; ++b) {
      absl::Status s = Decode(decoders[b], &tokens[b], 1, n_past);
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }
  virtual const float* logits(int decoder) const = 0;
  // Copies positions [begin, end) of src's KV cache to dst, whose positions [0, begin) already
  // hold what src's do (the decoder tracks which tokens each decoder's cache holds, so a beam
  // that adopts a sibling's sequence copies only where they differ). Logits are not copied: a
  // decoder's logits are read only after its own Decode.
  virtual void CopyKv(int src, int dst, int begin, int end) = 0;
  virtual int n_decoders() const = 0;
  // Calls fn(arg, i) once for every i in [0, n), possibly several at a time on the backend's
  // threads (InferenceState::ParallelFor), and returns when all have returned. The decoder runs
  // each live sequence's logit filters and candidate search this way; calls with distinct i touch
  // distinct data. The default calls them in order on this thread. Allocates nothing.
  virtual void ParallelFor(int n, void (*fn)(void* arg, int i), void* arg) {
    for (int i = 0; i < n; ++i) fn(arg, i);
  }
};

// The largest beam_size and best_of (whisper.h's WHISPER_GGML_MAX_DECODERS): a beam search keeps
// 2 x beam_size backend decoders, and InferenceState has at most 64.
constexpr int kMaxDecodingWidth = 32;

struct DecodingParams {
  int beam_size = 1;                // > 1: beam search at temperature 0
  int best_of = 5;                  // decoders sampled at temperature > 0
  float temperature = 0.0f;         // the first temperature tried
  float temperature_inc = 0.2f;     // 0 disables fallback
  // faster-whisper's temperature as a sequence (whisper_full_params.ggml_temperatures): with
  // n_temperatures > 0 the attempts run at temperatures[0], [1], ... in that order, whatever the
  // values (faster-whisper generate_with_fallback: a temperature <= 0 decodes as 0, beam search or
  // greedy, one above samples best_of sequences), instead of temperature, temperature +
  // temperature_inc, ... up to 1.0. Not owned: the array must stay valid while Run runs.
  const float* temperatures = nullptr;
  int n_temperatures = 0;
  float entropy_thold = 2.4f;       // whisper.cpp's rules: a decoder whose last 32 tokens have lower entropy fails
  float logprob_thold = -1.0f;      // fallback when the average log-probability is below
  float no_speech_thold = 0.6f;     // with logprob_thold: the window is silence
  // whisper.cpp's length_penalty (whisper_full_params.length_penalty; OpenAI decoding.py's
  // MaximumLikelihoodRanker): > 0: score = sum logprob / ((5 + length) / 6) ^ length_penalty; <= 0:
  // sum logprob / length^fw_length_penalty under OpenAI's rules, / length under whisper.cpp's.
  float length_penalty = -1.0f;
  // faster-whisper's length_penalty (CTranslate2 finalize_hypothesis_score: score / length ^ lp),
  // under OpenAI's rules when length_penalty <= 0. 1: sum / length (the default); 0: the sum, and
  // beam search then stops once the best candidate of a step completes (CTranslate2 BeamSearch's
  // allow_early_exit), whatever patience.
  float fw_length_penalty = 1.0f;
  // faster-whisper's patience (OpenAI decoding.py BeamSearchDecoder, CTranslate2 BeamSearch):
  // under OpenAI's rules beam search ends once round(beam_size * patience) sequences finished
  // (>= 1; the step that reaches it may finish more, all ranked), each finished beam refilled from
  // the step's next best candidates, as CTranslate2 does. whisper.cpp's rules ignore it
  // (whisper.cpp: "not implemented").
  float patience = 1.0f;
  // faster-whisper's max_new_tokens (transcribe.py generate_with_fallback, CTranslate2
  // WhisperReplica::generate): > 0 and OpenAI's rules: with the window's prompt of n tokens, p of
  // them a forced prefix (Run's n_prefix), at most min((n + max_new_tokens) / 2, max_new_tokens +
  // p + 1) - p decoding steps (CTranslate2's max_length = min(total / 2, total - (n - p - 1)) for
  // total = n + max_new_tokens, whose first p steps force the prefix), the last one ending the
  // sequence as complete (not failed; with no timestamp after <|0.00|>, the whole window is one
  // segment). Run returns InvalidArgument when n + max_new_tokens > n_text_ctx (faster-whisper's
  // ValueError). 0: unset (faster-whisper's None): under OpenAI's rules the same with total =
  // n_text_ctx (CTranslate2's max_length 448: 224 steps, the prefix's included).
  int max_new_tokens = 0;
  // whisper.cpp's rules: at most this many tokens per window (n_text_ctx / 2 - 4), and a sequence
  // that reaches it with no timestamp past the window's middle fails (a repetition loop).
  int max_tokens_per_window = 220;
  // whisper_full_params.max_tokens: > 0 ends a window's decoding after this many tokens (and,
  // with timestamps, forces a timestamp once it is reached: filter.max_text_tokens).
  int max_tokens = 0;
  // whisper_full_params.single_segment: a completed window covers the whole 30 s (no seek by
  // timestamps) and keeps every token up to its end.
  bool single_segment = false;
  // The batched pipeline's one window per chunk (TranscribeParams::one_window_per_clip): a
  // completed sequence with timestamps keeps the text after its last timestamp (an unclosed last
  // segment) instead of leaving it for the next window (OpenAI's and whisper.cpp's seek rules).
  bool keep_unclosed_tail = false;
  // whisper.cpp's decoding instead of OpenAI's (whisper.cpp src/whisper.cpp
  // whisper_sample_token_topk, whisper_full_with_state): beam search samples beam_size candidates
  // per beam from its distribution (libstdc++ std::discrete_distribution with the decoder's
  // mt19937), all beams active from the first step, duplicates skipped only after it; sampling
  // at temperature > 0 draws the same way; a timestamp within 10 frames of the audio end
  // completes a sequence (under OpenAI's rules only <|endoftext|> does, and its log-probability
  // is in the score), and a sequence that reached the token cap without failing is scored.
  bool whisper_cpp = false;
  // OpenAI's repetition rule (openai/whisper transcribe.py decode_with_fallback, faster-whisper
  // generate_with_fallback): an attempt whose stripped text has a zlib compression ratio above
  // this (see CompressionRatio) falls back to the next temperature, unless the window is silence
  // (no_speech_prob > no_speech_thold with avg_logprob < logprob_thold). Needs the decoder's
  // token_text; <= 0 disables it. whisper.cpp has no such rule (its entropy_thold plays the part).
  float compression_ratio_thold = 0.0f;
  LogitFilterParams filter;         // temperature inside is set per attempt
  // whisper_full_params.strategy is WHISPER_SAMPLING_BEAM_SEARCH. Under whisper.cpp's rules every
  // attempt is then its beam search (whisper_full_with_state switches on the strategy, not the
  // temperature): beam_size beams at temperature 0 (1 too: one candidate sampled per step, as
  // whisper_sample_token_topk), best_of beams at a fallback temperature, each sampling beam_size
  // candidates. OpenAI's rules sample best_of independent sequences there.
  bool beam_search = false;
  // Grammar-constrained sampling (whisper_full_params.grammar_rules; null: none): each sequence
  // tracks `grammar`'s state from the start of each attempt (whisper.cpp re-initialises every
  // decoder's grammar per window and temperature); at a step where text may follow (not forced to
  // a timestamp), the candidates the grammar rejects get grammar_penalty subtracted from their
  // logits and the log-probabilities are recomputed (whisper.cpp whisper_process_logits); each
  // sampled token then advances the state (whisper_grammar_accept_token), which a beam adopting
  // another's sequence copies. Both must outlive the decoder's runs.
  const Grammar* grammar = nullptr;
  const GrammarVocab* grammar_vocab = nullptr;
  float grammar_penalty = 100.0f;
};

// The number of backend decoders WindowDecoder::Run needs for `params` (beam search double-buffers).
int DecodersNeeded(const DecodingParams& params);

struct WindowResult {
  std::vector<Token> tokens;  // the accepted tokens (up to and including the last timestamp)
  std::vector<float> token_logprobs;
  std::vector<TokenData> token_data;  // per token: p, plog, tid, pt, ptsum (times -1)
  // whisper.cpp's rules: the sum over `tokens` (the accepted ones). OpenAI's: over every sampled
  // token, <|endoftext|> included (CTranslate2's cumulative score: faster-whisper's cum_logprob).
  float sum_logprob = 0.0f;
  // whisper.cpp's rules: sum_logprob / tokens.size(). OpenAI's (decoding.py, faster-whisper):
  // the sum over every sampled token, <|endoftext|> included, / (tokens before it + 1).
  float avg_logprob = 0.0f;
  float no_speech_prob = 0.0f;  // softmax of the first logits at <|nospeech|>
  // The temperature the result was decoded at; when every temperature failed under OpenAI's
  // rules, the last one tried (faster-whisper passes it on for prompt_reset_on_temperature).
  float temperature = 0.0f;
  int seek_delta = 0;           // centiseconds (= mel frames) covered by the timestamps
  // No sequence of the result's attempt completed without failing (its sequence 0 is the
  // result). When every temperature fails, whisper.cpp's rules keep the last attempt; OpenAI's
  // keep faster-whisper's choice: the highest avg_logprob among the attempts whose compression
  // ratio is at most compression_ratio_thold, or among all if none is -- among the attempts that
  // are not `failed`, if any (faster-whisper's engine has no such failure).
  bool failed = false;
  int n_fallbacks = 0;
  float compression_ratio = 0.0f;  // of the result's text (0 without the decoder's token_text)
  // whisper.cpp's rules: the accepted attempt ran at temperature >= 0.5, so without the prompt's
  // past text (Run's n_history tokens).
  bool history_dropped = false;
};

// Decodes one window. All memory is sized once in the constructor from n_vocab, n_text_ctx and
// the params: Run() does no heap allocation once `result` has been used once (capacity reused).
class WindowDecoder {
 public:
  // token_text (the bytes of a token id; it must outlive the decoder) is needed for
  // params.compression_ratio_thold > 0 and WindowResult::compression_ratio.
  WindowDecoder(const SpecialTokens& special, int n_text_ctx, const DecodingParams& params,
                std::function<const std::string&(Token)> token_text = nullptr);

  // Starts a new transcription: takes `params` (whose beam_size and best_of must equal the
  // constructor's: the sizing depends on them) and re-seeds the samplers (decoder j with j, as
  // whisper.cpp does per whisper_full). No allocation.
  void Reset(const DecodingParams& params);

  // prompt: the full prompt ([prev, past..., sot, ...]); seek and seek_end in mel frames (10 ms)
  // of the window start and of the audio end. n_history: how many of the prompt's first tokens
  // are past text ([prev, past...]; 0 = none). Under whisper.cpp's rules an attempt at
  // temperature >= 0.5 is prompted without them (whisper.cpp's
  // WHISPER_HISTORY_CONDITIONING_TEMP_CUTOFF): the prompt pass, and with it no_speech_prob, is
  // redone on the rest. Attempts run at temperature, temperature + temperature_inc, ... up to 1.0
  // (or at params.temperatures) until one passes the checks (see WindowResult::failed for which
  // is kept when none does).
  // n_prefix: how many of the prompt's last tokens are a forced prefix (faster-whisper 1.2.1's
  // prefix, transcribe.py get_prompt: [<|0.00|>,] then its text after the sot sequence; 0 =
  // none). They are decoded with the prompt and every sequence starts after them, as CTranslate2
  // 4.x forces a prefix (decoding.cc update_sample_with_prefix: the prefix scores 0): the first
  // sampled token has no timestamp rule (LogitFilterParams::after_prefix), the result's tokens
  // begin with the prefix (token data p = 1, plog = 0), a sequence that ends without a timestamp
  // after it is one segment (faster-whisper's split: no consecutive timestamps), and the prefix
  // counts in the length of avg_logprob, the beam score and the compression ratio's text.
  // Errors: InvalidArgument for a prompt that does not fit n_text_ctx, an n_history outside
  // [0, prompt size), an n_prefix outside [0, prompt size - n_history - 1), or too few backend
  // decoders; those of the backend.
  absl::Status Run(DecoderBackend& backend, const std::vector<Token>& prompt, int seek, int seek_end,
                   WindowResult* result, int n_history = 0, int n_prefix = 0);

 private:
  // The most probable timestamp after the filters, and the timestamps' summed probability
  // (whisper.cpp whisper_sample_token).
  struct TsStats {
    Token tid = -1;
    float pt = 0.0f;
    float ptsum = 0.0f;
  };
  struct Sequence {
    std::vector<Token> tokens;
    std::vector<TokenData> data;  // parallel to tokens
    double sum_logprobs_all = 0.0;
    int result_len = 0;
    int seek_delta = 0;
    bool has_ts = false;
    bool completed = false;
    bool failed = false;
    bool idle = false;  // a beam left without a distinct candidate; refilled at a later step
    GrammarState grammar;  // with DecodingParams::grammar
    double score = 0.0;
    double sum_logprobs = 0.0;
    int slot = 0;  // backend decoder index
  };
  struct Candidate {
    int from;  // sequence index
    Token token;
    float logprob;
    double sum_logprobs_all;
    TsStats ts;
  };

  // Run's argument checks (its InvalidArgument errors).
  absl::Status CheckRunArgs(const DecoderBackend& backend, const std::vector<Token>& prompt, int n_history,
                            int n_prefix) const;
  // Decodes `n` prompt tokens into decoder 0 from position 0; keeps their logits in
  // prompt_logits_ and sets result->no_speech_prob: under whisper.cpp's rules from the logits after
  // the last prompt token (whisper.cpp 1.8.5 whisper_full_with_state), under OpenAI's from those
  // after <|startoftranscript|> at tokens[sot_index] (OpenAI decoding.py: logits[:, sot_index] at
  // no_speech; CTranslate2's return_no_speech_prob), which differ on multilingual models, whose
  // prompt goes on with the language and task: the prompt is then decoded in two passes. Errors:
  // the backend's.
  absl::Status PromptPass(DecoderBackend& backend, const Token* tokens, int n, int sot_index, WindowResult* result);
  // The best unfailed sequence of the last attempt (else sequence 0, marked failed) into
  // *result, with its compression ratio. Returns whether OpenAI's fallback rules ask for a retry
  // at a higher temperature (failed, low log-probability with speech, or repetitive).
  bool TakeBest(float temperature, WindowResult* result);
  // Whether an attempt at `temperature` is a beam search (see DecodingParams::beam_search).
  bool BeamAt(float temperature) const;
  // Attempt k's temperature (k = 0, 1, ...; `previous` is attempt k - 1's), and whether it is the
  // last of the fallback sequence.
  float TemperatureAt(int k, float previous, bool* last) const;
  // Grows set_aside_ to MaxCandidates() + beam_size sequences under OpenAI's beam search, which
  // holds the finished ones there (allocates only when that grows).
  void ReserveSetAside();
  // max_new_tokens under OpenAI's rules: a sequence still going after the attempt's last step ends
  // there complete (CTranslate2 is_last_step); without a timestamp after <|0.00|> it covers the
  // window (faster-whisper: one segment, seek += segment_size).
  void CompleteAtLastStep(Sequence& seq) const;
  // Decoding steps of an attempt with a prompt of n_prompt tokens (max_new_tokens, the token cap
  // and the context).
  int MaxSteps(int n_prompt) const;
  // round(beam_size * patience) under OpenAI's rules (CTranslate2 get_max_candidates), else beam_size.
  int MaxCandidates() const;
  // Sequences decoded at once at `temperature`: beam_size (beam search at 0), best_of (sampling), or 1.
  int AttemptWidth(float temperature) const;
  // One decoding attempt of up to n_text_ctx - n_prompt tokens, all sequences scored at the end.
  absl::Status Attempt(DecoderBackend& backend, int n_prompt, float temperature, int seek, int seek_end);
  // Resets seqs_[0, width) and copies the prompt's KV from decoder 0 into decoders [1, width).
  void StartSequences(DecoderBackend& backend, int width, int n_prompt, bool beam);
  // One beam-search step the way faster-whisper's CTranslate2 takes it (BeamSearch::search): of
  // the 2 x width best candidates of the live beams, the first width that end are set aside as
  // finished (every one at the `last` step) and the rest refill the beams in the other slot bank
  // (*base flips).
  void StepBeamOpenAi(DecoderBackend& backend, int width, int i, float temperature, int n_prompt, int seek,
                      int seek_end, bool last, int* base);
  // One greedy (argmax) or sampling step of every live sequence.
  void StepSampled(DecoderBackend& backend, int width, int i, float temperature, int seek, int seek_end);
  // Decodes the last token of every live sequence (batched when they share a position); sets
  // *n_live to their number (0: the attempt is over). Errors: the backend's.
  absl::Status DecodeLive(DecoderBackend& backend, int width, int n_prompt, int* n_live);
  // One beam-search step the way whisper.cpp takes it (see DecodingParams::whisper_cpp).
  void StepBeamWhisperCpp(DecoderBackend& backend, int width, int i, float temperature, int n_prompt, int seek,
                          int seek_end, int* base);
  // *dst becomes candidate `cand`'s source sequence plus its token, with the step rules applied.
  void Extend(const Candidate& cand, int i, int seek, int seek_end, Sequence* dst);
  // Beam search: Extend, in backend decoder `slot` (the source's KV copied there).
  void Adopt(DecoderBackend& backend, const Candidate& cand, int slot, int n_prompt, int i, int seek, int seek_end,
             Sequence* dst);
  // One sequence's scratch for a step: its filtered logits and log-probabilities, its best
  // candidates (beam search) and timestamp statistics. One per sequence, so that the live
  // sequences are filtered in parallel (FilterLanes).
  struct Lane {
    std::vector<float> logits;    // n_vocab
    std::vector<float> logprobs;  // n_vocab
    std::vector<Candidate> cands;  // reserved width (TopK)
    GrammarScratch grammar;        // the grammar penalty's search
    std::vector<Token> output;     // prefix_ + the sequence's tokens (reserved n_text_ctx), see FilterInto
    TsStats ts;
    Token argmax = 0;
  };
  // For every sequence j < width that is neither completed nor failed (nor idle, with
  // skip_idle): lanes_[j] gets its filtered log-probabilities at step i, its TsStats, and with
  // top_k > 0 its top_k candidates, else at temperature 0 its argmax; sequences run in parallel on
  // the backend's threads (DecoderBackend::ParallelFor).
  void FilterLanes(DecoderBackend& backend, int width, int i, float temperature, bool skip_idle, int top_k);
  static void FilterLane(void* job, int k);
  void StepRules(Sequence& seq, Token token, float logprob, const TsStats& ts, int i, int seek, int seek_end);
  TsStats ComputeTsStats(const Lane& lane) const;
  void Score(Sequence& seq) const;
  void FilterInto(const float* raw_logits, const Sequence& seq, float temperature, Lane& lane) const;
  // OpenAI's sampling at temperature > 0 (decoding.py GreedyDecoder: Categorical(logits /
  // temperature)) from the lane's untempered log-probabilities.
  Token SampleFromLogprobs(const Lane& lane, float temperature, std::mt19937& rng);
  // std::discrete_distribution<int>(probs)(rng) of libstdc++, without its allocation: probs are
  // whisper.cpp's floats expf(logprob) (0 for suppressed tokens).
  Token SampleWhisperCpp(const Lane& lane, std::mt19937& rng);
  void TopK(int k, Lane& lane, int from, const Sequence& seq) const;
  bool SameTokens(const Sequence& a, Token ta, const Sequence& b, Token tb) const;
  // CompressionRatio of the text tokens of `seq` (< eot), their bytes joined and stripped of
  // ASCII whitespace as Python's str.strip does for it.
  double TextCompressionRatio(const Sequence& seq);

  SpecialTokens special_;
  int n_text_ctx_;
  DecodingParams params_;
  // Run's forced prefix (the prompt's last n_prefix_ tokens), copied (reserved n_text_ctx).
  std::vector<Token> prefix_;
  int n_prefix_ = 0;
  // TakeBest's result = prefix_ + the sequence's tokens (tokens, token data, log-probabilities).
  void AssignResult(const Sequence& s, WindowResult* result) const;
  std::vector<Lane> lanes_;            // [width]
  std::vector<int> lane_seq_;          // FilterLanes' sequences, [width]
  struct LaneJob {
    WindowDecoder* self;
    DecoderBackend* backend;
    int i;
    float temperature;
    int top_k;
  };
  std::vector<float> prompt_logits_;  // logits after the prompt pass, reused by every attempt
  std::vector<double> probs_;
  std::vector<double> cdf_;  // SampleWhisperCpp's cumulative probabilities
  std::vector<Sequence> seqs_;
  std::vector<Sequence> next_seqs_;
  // Beam search under OpenAI's rules: the finished sequences (the first n_set_aside_), set aside
  // while their beams went on, each reserved n_text_ctx.
  std::vector<Sequence> set_aside_;
  int n_set_aside_ = 0;
  bool top_completed_ = false;  // the best candidate of a beam step so far finished a sequence
  // The attempt's sequence j: seqs_[j] for j < width, then set_aside_[j - width].
  Sequence& AttemptSeq(int width, int j) { return j < width ? seqs_[j] : set_aside_[j - width]; }
  // Per backend decoder: the tokens whose K/V its cache holds at positions 0.. (kPromptToken for
  // the current attempt's prompt, kUnknownToken where unknown), so Adopt copies only the
  // positions after the common prefix. [2 x width], each reserved n_text_ctx.
  static constexpr Token kPromptToken = -1;
  static constexpr Token kUnknownToken = -2;
  std::vector<std::vector<Token>> slot_kv_;
  // Records that decoder `slot` now holds `token` at position n_past.
  void NoteDecoded(int slot, int n_past, Token token);
  std::vector<Candidate> candidates_;
  // A step's live sequences: their index in seqs_, slot and last token ([width], sized once).
  std::vector<int> batch_seq_;
  std::vector<int> batch_slots_;
  std::vector<Token> batch_tokens_;
  std::vector<std::mt19937> rngs_;
  GrammarScratch grammar_scratch_;  // StepRules' grammar advance
  std::function<const std::string&(Token)> token_text_;
  CompressionRatio compression_;
  std::string text_;  // TextCompressionRatio's buffer, reserved once
  // OpenAI's rules: the best attempt of the current window so far (faster-whisper 1.2.1
  // transcribe.py generate_with_fallback), its vectors reserved n_text_ctx in the constructor.
  WindowResult kept_;
  bool kept_below_ = false;  // kept_'s compression ratio is at most compression_ratio_thold
  bool kept_complete_ = false;  // kept_ is not `failed`
  // Makes `attempt` the kept one if it is the first of the window or better: not failed where
  // kept_ is, else under the compression-ratio threshold where kept_ is not, else a strictly
  // higher avg_logprob. No allocation.
  void KeepIfBetter(const WindowResult& attempt, bool first);
  // *result = kept_, at the final `temperature`, keeping result's n_fallbacks and history_dropped.
  void RestoreKept(float temperature, WindowResult* result) const;
};

// Entropy (natural log) of the token frequency distribution of the last `n` tokens (whisper.cpp
// whisper_sequence_score uses n = 32).
double TokenEntropy(const Token* tokens, int n_tokens, int n);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_DECODING_H_
