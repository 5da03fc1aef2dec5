// Token-level timestamps from the timestamp-token probabilities (whisper.cpp
// whisper_exp_compute_token_level_timestamps, src/whisper.cpp; enabled by
// whisper_full_params.token_timestamps). Per segment:
//   1. a token whose most probable timestamp `tid` is confident (pt > thold_pt and ptsum >
//      thold_ptsum), later than the last one used and not past the segment end starts at that
//      timestamp (t_beg + 2 (tid - beg) centiseconds, t_beg the time of the last <|0.00|>-led
//      segment) and ends the token before it;
//   2. the segment's last two tokens end at t1; runs of tokens still without times share their
//      interval in proportion to a "voice length" heuristic of their text (vowels and letters 1,
//      digits and . ! ? 3, comma 2, space 0.01);
//   3. each text token's edges move to where the signal energy (mean |x| over 65 samples)
//      crosses half the mean energy around it (+- 1/8 s), at absolute sample positions.
// The result is heuristic (the DTW method in OpenAI's timing.py is the accurate one).
#ifndef GGML_WHISPER_WHISPER_TOKEN_TIMESTAMPS_H_
#define GGML_WHISPER_WHISPER_TOKEN_TIMESTAMPS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "whisper/segments.h"
#include "whisper/tokens.h"

namespace whisper {

class TokenTimestamps {
 public:
  // Starts a transcription of `samples` (16 kHz, ne = [n_samples]): computes the signal energy
  // (whisper.cpp get_signal_energy, half window 32 samples) and resets the running times. The
  // energy buffer keeps its capacity: a later Begin on no more samples does not allocate.
  void Begin(const float* samples, int n_samples);

  // Sets t0/t1 (centiseconds) and vlen of every token of `segment`, which must come after the
  // segments already passed since Begin (the running state carries from one to the next).
  // No-op when Begin saw no samples.
  void Compute(const SpecialTokens& special, const std::function<const std::string&(Token)>& token_text,
               float thold_pt, float thold_ptsum, Segment* segment);

 private:
  // Token start/end times from the sampled timestamps whose probability passes the thresholds
  // (whisper.cpp whisper_exp_compute_token_level_timestamps, first pass); the segment's first and
  // last tokens take its t0 and t1; the other end times stay as they were (-1 when unset).
  void AnchorToTimestamps(const SpecialTokens& special, const std::function<const std::string&(Token)>& token_text,
                          float thold_pt, float thold_ptsum, Segment* segment);

  std::vector<float> energy_;
  int64_t t_beg_ = 0;
  int64_t t_last_ = 0;
  Token tid_last_ = 0;
};

// whisper.cpp's voice_length heuristic of a token's text (see above).
float VoiceLength(const std::string& text);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_TOKEN_TIMESTAMPS_H_
