#include "whisper/token_timestamps.h"

#include <algorithm>
#include <cmath>

namespace whisper {
namespace {

constexpr int kSampleRate = 16000;

int TimestampToSample(int64_t t, int64_t segment_t0, int n_samples) {
  const int64_t sample = (t - segment_t0) * kSampleRate / 100;
  return static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(n_samples - 1, sample)));
}

int64_t SampleToTimestamp(int i_sample, int64_t segment_t0) { return 100LL * i_sample / kSampleRate + segment_t0; }

}  // namespace

float VoiceLength(const std::string& text) {
  float res = 0.0f;
  for (char c : text) {
    if (c == ' ') {
      res += 0.01f;
    } else if (c == ',') {
      res += 2.00f;
    } else if (c == '.' || c == '!' || c == '?' || (c >= '0' && c <= '9')) {
      res += 3.00f;
    } else {
      res += 1.00f;
    }
  }
  return res;
}

void TokenTimestamps::Begin(const float* samples, int n_samples) {
  constexpr int hw = 32;
  energy_.resize(static_cast<size_t>(std::max(n_samples, 0)));
  // Running sum over the window [i - hw, i + hw], clipped to the signal; the mean divides by the
  // full window width as whisper.cpp does.
  double sum = 0.0;
  for (int j = 0; j <= hw && j < n_samples; ++j) sum += std::fabs(samples[j]);
  for (int i = 0; i < n_samples; ++i) {
    energy_[i] = static_cast<float>(sum / (2 * hw + 1));
    if (i + hw + 1 < n_samples) sum += std::fabs(samples[i + hw + 1]);
    if (i - hw >= 0) sum -= std::fabs(samples[i - hw]);
  }
  t_beg_ = 0;
  t_last_ = 0;
  tid_last_ = 0;
}

namespace {

// Runs of tokens without an end time share their interval by voice length; then each token
// starts no earlier than the previous one ends.
void ShareByVoiceLength(std::vector<TokenData>& tokens) {
  const int n = static_cast<int>(tokens.size());
  for (int p0 = 0, p1 = 0; p1 < n;) {
    while (p1 < n && tokens[p1].t1 < 0) ++p1;
    if (p1 >= n) p1 = n - 1;
    if (p1 > p0) {
      double psum = 0.0;
      for (int j = p0; j <= p1; ++j) psum += tokens[j].vlen;
      const double dt = static_cast<double>(tokens[p1].t1 - tokens[p0].t0);
      for (int j = p0 + 1; j <= p1; ++j) {
        const int64_t ct = psum > 0.0 ? static_cast<int64_t>(tokens[j - 1].t0 + dt * tokens[j - 1].vlen / psum)
                                      : tokens[j - 1].t0;
        tokens[j - 1].t1 = ct;
        tokens[j].t0 = ct;
      }
    }
    ++p1;
    p0 = p1;
  }
  for (int j = 0; j < n - 1; ++j) {
    if (tokens[j].t1 < 0) tokens[j + 1].t0 = tokens[j].t1;
    if (j > 0 && tokens[j - 1].t1 > tokens[j].t0) {
      tokens[j].t0 = tokens[j - 1].t1;
      tokens[j].t1 = std::max(tokens[j].t0, tokens[j].t1);
    }
  }
}

// Moves each text token's edges to where `energy` (the signal's smoothed magnitude, one value
// per sample) crosses half its local mean. Token times are absolute, so they index the energy of
// the whole signal directly (whisper.cpp 1.8.5 makes them relative to the segment start first,
// which reads the wrong samples after the first segment).
void SnapToEnergy(const SpecialTokens& special, const std::vector<float>& energy, std::vector<TokenData>& tokens) {
  const int n = static_cast<int>(tokens.size());
  const int n_samples = static_cast<int>(energy.size());
  constexpr int hw = kSampleRate / 8;
  for (int j = 0; j < n; ++j) {
    if (tokens[j].id >= special.eot) continue;
    int s0 = TimestampToSample(tokens[j].t0, 0, n_samples);
    int s1 = TimestampToSample(tokens[j].t1, 0, n_samples);
    const int ss0 = std::max(s0 - hw, 0);
    const int ss1 = std::min(s1 + hw, n_samples);
    const int ns = ss1 - ss0;
    if (ns <= 0) continue;
    float sum = 0.0f;
    for (int k = ss0; k < ss1; ++k) sum += energy[k];
    const float thold = 0.5f * sum / ns;
    int k = s0;
    if (energy[k] > thold && j > 0) {
      while (k > 0 && energy[k] > thold) --k;
      tokens[j].t0 = SampleToTimestamp(k, 0);
      if (tokens[j].t0 < tokens[j - 1].t1) {
        tokens[j].t0 = tokens[j - 1].t1;
      } else {
        s0 = k;
      }
    } else {
      while (energy[k] < thold && k < s1) ++k;
      s0 = k;
      tokens[j].t0 = SampleToTimestamp(k, 0);
    }
    k = s1;
    if (energy[k] > thold) {
      while (k < n_samples - 1 && energy[k] > thold) ++k;
      tokens[j].t1 = SampleToTimestamp(k, 0);
      if (j < n - 1 && tokens[j].t1 > tokens[j + 1].t0) {
        tokens[j].t1 = tokens[j + 1].t0;
      } else {
        s1 = k;
      }
    } else {
      while (energy[k] < thold && k > s0) --k;
      s1 = k;
      tokens[j].t1 = SampleToTimestamp(k, 0);
    }
  }
}

}  // namespace

void TokenTimestamps::AnchorToTimestamps(const SpecialTokens& special,
                                         const std::function<const std::string&(Token)>& token_text,
                                         float thold_pt, float thold_ptsum, Segment* segment) {
  std::vector<TokenData>& tokens = segment->tokens;
  const int n = static_cast<int>(tokens.size());
  const int64_t t0 = segment->t0;
  const int64_t t1 = segment->t1;
  for (int j = 0; j < n; ++j) {
    TokenData& token = tokens[j];
    if (j == 0) {
      if (token.id == special.beg) {
        tokens[0].t0 = t0;
        tokens[0].t1 = t0;
        tokens[1].t0 = t0;
        t_beg_ = t0;
        t_last_ = t0;
        tid_last_ = special.beg;
      } else {
        tokens[0].t0 = t_last_;
      }
    }
    const int64_t tt = t_beg_ + 2 * (token.tid - special.beg);
    token.vlen = VoiceLength(token_text(token.id));
    if (token.pt > thold_pt && token.ptsum > thold_ptsum && token.tid > tid_last_ && tt <= t1) {
      if (j > 0) tokens[j - 1].t1 = tt;
      token.t0 = tt;
      tid_last_ = token.tid;
    }
  }
  tokens[n - 2].t1 = t1;
  tokens[n - 1].t0 = t1;
  tokens[n - 1].t1 = t1;
  t_last_ = t1;
}

void TokenTimestamps::Compute(const SpecialTokens& special,
                              const std::function<const std::string&(Token)>& token_text, float thold_pt,
                              float thold_ptsum, Segment* segment) {
  std::vector<TokenData>& tokens = segment->tokens;
  const int n_samples = static_cast<int>(energy_.size());
  const int n = static_cast<int>(tokens.size());
  if (n_samples == 0 || n == 0) return;
  if (n == 1) {
    tokens[0].t0 = segment->t0;
    tokens[0].t1 = segment->t1;
    return;
  }
  AnchorToTimestamps(special, token_text, thold_pt, thold_ptsum, segment);
  ShareByVoiceLength(tokens);
  SnapToEnergy(special, energy_, tokens);
}

}  // namespace whisper
