#include "whisper/dtw.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_format.h"

namespace whisper {
namespace {

// whisper.cpp 1.8.5 src/whisper.cpp g_aheads_* (OpenAI whisper/__init__.py _ALIGNMENT_HEADS).
constexpr AlignmentHead kTinyEn[] = {{1, 0}, {2, 0}, {2, 5}, {3, 0}, {3, 1}, {3, 2}, {3, 3}, {3, 4}};
constexpr AlignmentHead kTiny[] = {{2, 2}, {3, 0}, {3, 2}, {3, 3}, {3, 4}, {3, 5}};
constexpr AlignmentHead kBaseEn[] = {{3, 3}, {4, 7}, {5, 1}, {5, 5}, {5, 7}};
constexpr AlignmentHead kBase[] = {{3, 1}, {4, 2}, {4, 3}, {4, 7}, {5, 1}, {5, 2}, {5, 4}, {5, 6}};
constexpr AlignmentHead kSmallEn[] = {{6, 6},  {7, 0},  {7, 3},  {7, 8},   {8, 2},   {8, 5},   {8, 7},
                                      {9, 0},  {9, 4},  {9, 8},  {9, 10},  {10, 0},  {10, 1},  {10, 2},
                                      {10, 3}, {10, 6}, {10, 11}, {11, 2}, {11, 4}};
constexpr AlignmentHead kSmall[] = {{5, 3}, {5, 9}, {8, 0}, {8, 4}, {8, 7}, {8, 8}, {9, 0}, {9, 7}, {9, 9}, {10, 5}};
constexpr AlignmentHead kMediumEn[] = {{11, 4},  {14, 1},  {14, 12}, {14, 14}, {15, 4}, {16, 0},
                                       {16, 4},  {16, 9},  {17, 12}, {17, 14}, {18, 7}, {18, 10},
                                       {18, 15}, {20, 0},  {20, 3},  {20, 9},  {20, 14}, {21, 12}};
constexpr AlignmentHead kMedium[] = {{13, 15}, {15, 4}, {15, 15}, {16, 1}, {20, 0}, {23, 4}};
constexpr AlignmentHead kLargeV1[] = {{9, 19},  {11, 2},  {11, 4}, {11, 17}, {22, 7},
                                      {22, 11}, {22, 17}, {23, 2}, {23, 15}};
constexpr AlignmentHead kLargeV2[] = {{10, 12}, {13, 17}, {16, 11}, {16, 12}, {16, 13}, {17, 15}, {17, 16}, {18, 4},
                                      {18, 11}, {18, 19}, {19, 11}, {21, 2},  {21, 3},  {22, 3},  {22, 9},  {22, 12},
                                      {23, 5},  {23, 7},  {23, 13}, {25, 5},  {26, 1},  {26, 12}, {27, 15}};
constexpr AlignmentHead kLargeV3[] = {{7, 0},  {10, 17}, {12, 18}, {13, 12}, {16, 1},
                                      {17, 14}, {19, 11}, {21, 4},  {24, 1},  {25, 6}};
constexpr AlignmentHead kLargeV3Turbo[] = {{2, 4}, {2, 11}, {3, 3}, {3, 6}, {3, 11}, {3, 14}};

struct Preset {
  AheadsPreset preset;
  const char* name;  // whisper-cli's -dtw name
  const AlignmentHead* heads;
  size_t n;
};

#define WHISPER_PRESET(p, name, list) {p, name, list, sizeof(list) / sizeof(list[0])}
constexpr Preset kPresets[] = {
    WHISPER_PRESET(AheadsPreset::kTinyEn, "tiny.en", kTinyEn),
    WHISPER_PRESET(AheadsPreset::kTiny, "tiny", kTiny),
    WHISPER_PRESET(AheadsPreset::kBaseEn, "base.en", kBaseEn),
    WHISPER_PRESET(AheadsPreset::kBase, "base", kBase),
    WHISPER_PRESET(AheadsPreset::kSmallEn, "small.en", kSmallEn),
    WHISPER_PRESET(AheadsPreset::kSmall, "small", kSmall),
    WHISPER_PRESET(AheadsPreset::kMediumEn, "medium.en", kMediumEn),
    WHISPER_PRESET(AheadsPreset::kMedium, "medium", kMedium),
    WHISPER_PRESET(AheadsPreset::kLargeV1, "large.v1", kLargeV1),
    WHISPER_PRESET(AheadsPreset::kLargeV2, "large.v2", kLargeV2),
    WHISPER_PRESET(AheadsPreset::kLargeV3, "large.v3", kLargeV3),
    WHISPER_PRESET(AheadsPreset::kLargeV3Turbo, "large.v3.turbo", kLargeV3Turbo),
};
#undef WHISPER_PRESET

// Median of the odd-sized window w[0 .. n) (reordered).
float Median(float* w, int n) {
  std::nth_element(w, w + n / 2, w + n);
  return w[n / 2];
}

}  // namespace

absl::StatusOr<std::vector<AlignmentHead>> AlignmentHeadsFor(AheadsPreset preset, int n_top,
                                                             const AlignmentHead* custom, size_t n_custom,
                                                             int n_text_layer, int n_text_head) {
  std::vector<AlignmentHead> heads;
  if (preset == AheadsPreset::kNTopMost) {
    if (n_top < 1 || n_top > n_text_layer) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "dtw_n_top = %d: must be in [1, %d] (the model's text layers)", n_top, n_text_layer));
    }
    for (int l = n_text_layer - n_top; l < n_text_layer; ++l) {
      for (int h = 0; h < n_text_head; ++h) heads.push_back({l, h});
    }
    return heads;
  }
  const AlignmentHead* list = nullptr;
  size_t n = 0;
  if (preset == AheadsPreset::kCustom) {
    if (custom == nullptr || n_custom == 0) {
      return absl::InvalidArgumentError("dtw_aheads: a custom preset needs n_heads > 0 and a heads array");
    }
    list = custom;
    n = n_custom;
  } else {
    for (const Preset& p : kPresets) {
      if (p.preset == preset) {
        list = p.heads;
        n = p.n;
      }
    }
    if (list == nullptr) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "dtw_aheads_preset = %d: not a preset with alignment heads (NONE cannot be used with "
          "dtw_token_timestamps)",
          static_cast<int>(preset)));
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (list[i].layer < 0 || list[i].layer >= n_text_layer || list[i].head < 0 || list[i].head >= n_text_head) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "dtw_aheads: head %zu is layer %d head %d, but the model has %d text layers of %d heads (wrong "
          "preset for this model?)",
          i, list[i].layer, list[i].head, n_text_layer, n_text_head));
    }
    heads.push_back(list[i]);
  }
  std::stable_sort(heads.begin(), heads.end(),
                   [](const AlignmentHead& a, const AlignmentHead& b) { return a.layer < b.layer; });
  return heads;
}

AheadsPreset AlignmentHeadsPresetByName(const char* name) {
  if (name == nullptr) return AheadsPreset::kNone;
  for (const Preset& p : kPresets) {
    if (std::strcmp(p.name, name) == 0) return p.preset;
  }
  return AheadsPreset::kNone;
}

AheadsPreset AlignmentHeadsPresetForDims(int n_vocab, int n_audio_layer, int n_text_layer) {
  struct Dims {
    int n_vocab, n_audio_layer, n_text_layer;
    AheadsPreset preset;
  };
  // The released checkpoints' shapes (openai/whisper __init__.py _MODELS and their dims).
  static constexpr Dims kDims[] = {
      {51864, 4, 4, AheadsPreset::kTinyEn},        {51864, 6, 6, AheadsPreset::kBaseEn},
      {51864, 12, 12, AheadsPreset::kSmallEn},     {51864, 24, 24, AheadsPreset::kMediumEn},
      {51865, 4, 4, AheadsPreset::kTiny},          {51865, 6, 6, AheadsPreset::kBase},
      {51865, 12, 12, AheadsPreset::kSmall},       {51865, 24, 24, AheadsPreset::kMedium},
      {51865, 32, 32, AheadsPreset::kLargeV2},     {51866, 32, 32, AheadsPreset::kLargeV3},
      {51866, 32, 4, AheadsPreset::kLargeV3Turbo},
  };
  for (const Dims& d : kDims) {
    if (d.n_vocab == n_vocab && d.n_audio_layer == n_audio_layer && d.n_text_layer == n_text_layer) return d.preset;
  }
  return AheadsPreset::kNone;
}

DtwAligner::DtwAligner(int max_tokens, int max_frames)
    : max_tokens_(std::max(1, max_tokens)), max_frames_(std::max(1, max_frames)) {
  const size_t cells = static_cast<size_t>(max_tokens_) * max_frames_;
  head_.reset(new float[cells]);
  matrix_.reset(new float[cells]);
  window_.resize(64);
  const size_t dtw_cells = static_cast<size_t>(max_tokens_ + 1) * (max_frames_ + 1);
  cost_.reset(new double[dtw_cells]);
  trace_.reset(new int8_t[dtw_cells]);
}

absl::Status DtwAligner::SoftmaxHead(const float* qk, int h, int T, int F, int row_stride, bool softmax_all) {
  // Softmax of each token's row over the first F positions (or all of them), keeping F.
  const int S = softmax_all ? row_stride : F;
  for (int r = 0; r < T; ++r) {
    const float* src = qk + (static_cast<size_t>(h) * T + r) * row_stride;
    float* dst = head_.get() + static_cast<size_t>(r) * F;
    float mx = -std::numeric_limits<float>::infinity();
    for (int f = 0; f < S; ++f) {
      if (!std::isfinite(src[f])) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "DTW: cross-attention logit of head %d, token %d, frame %d is not finite", h, r, f));
      }
      mx = std::max(mx, src[f]);
    }
    double sum = 0.0;
    for (int f = 0; f < S; ++f) sum += std::exp(src[f] - mx);
    const float inv = static_cast<float>(1.0 / sum);
    for (int f = 0; f < F; ++f) dst[f] = std::exp(src[f] - mx) * inv;
  }
  return absl::OkStatus();
}

void DtwAligner::StandardizeHead(int T, int F) {
  // Population std, as torch.std_mean(unbiased=False).
  for (int f = 0; f < F; ++f) {
    double mean = 0.0;
    for (int r = 0; r < T; ++r) mean += head_[static_cast<size_t>(r) * F + f];
    mean /= T;
    double var = 0.0;
    for (int r = 0; r < T; ++r) {
      const double d = head_[static_cast<size_t>(r) * F + f] - mean;
      var += d * d;
    }
    const double sd = std::sqrt(var / T);
    for (int r = 0; r < T; ++r) {
      float& v = head_[static_cast<size_t>(r) * F + f];
      // A position every token attends to equally has sd 0: torch gives NaN there, whisper.cpp's
      // ggml_norm (eps 1e-9) gives 0; 0 keeps the path defined.
      v = sd > 0.0 ? static_cast<float>((v - mean) / sd) : 0.0f;
    }
  }
}

void DtwAligner::AddMedianFiltered(int T, int F, int median_width, float scale) {
  // Reflect padding; none when the row is not longer than the padding, as timing.py's
  // median_filter returns its input then.
  const int pad = median_width / 2;
  for (int r = 0; r < T; ++r) {
    const float* row = head_.get() + static_cast<size_t>(r) * F;
    float* out = matrix_.get() + static_cast<size_t>(r) * F;
    if (F <= pad) {
      for (int f = 0; f < F; ++f) out[f] += row[f] * scale;
      continue;
    }
    for (int f = 0; f < F; ++f) {
      for (int o = -pad; o <= pad; ++o) {
        int idx = f + o;
        if (idx < 0) idx = -idx;
        if (idx >= F) idx = 2 * (F - 1) - idx;
        window_[o + pad] = row[idx];
      }
      out[f] += Median(window_.data(), median_width) * scale;
    }
  }
}

absl::Status DtwAligner::Align(const float* qk, int n_heads, int n_tokens, int row_stride, int n_frames,
                               int sot_len, int median_width, int* jumps, bool softmax_all) {
  const int n_text = n_tokens - sot_len - 2;
  if (qk == nullptr || jumps == nullptr) return absl::InvalidArgumentError("DTW: null qk or jumps");
  if (n_heads < 1 || sot_len < 1 || n_text < 1 || n_tokens > max_tokens_ || n_frames < 1 ||
      n_frames > row_stride || n_frames > max_frames_) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "DTW: %d heads, %d tokens (sot sequence %d, so %d text), %d frames of rows of %d: need >= 1 head, "
        ">= 1 text token, <= %d tokens and 1 <= frames <= min(row length, %d)",
        n_heads, n_tokens, sot_len, n_text, n_frames, row_stride, max_tokens_, max_frames_));
  }
  if (median_width < 1 || median_width % 2 == 0 || median_width > static_cast<int>(window_.size())) {
    return absl::InvalidArgumentError(absl::StrFormat("DTW: median filter width %d is not odd in [1, %zu]",
                                                      median_width, window_.size()));
  }
  const int T = n_tokens;
  const int F = n_frames;
  std::fill(matrix_.get(), matrix_.get() + static_cast<size_t>(T) * F, 0.0f);
  // Per head: softmax, standardised per position over the tokens, median-filtered along time and
  // summed into the mean.
  for (int h = 0; h < n_heads; ++h) {
    absl::Status st = SoftmaxHead(qk, h, T, F, row_stride, softmax_all);
    if (!st.ok()) return st;
    StandardizeHead(T, F);
    AddMedianFiltered(T, F, median_width, 1.0f / static_cast<float>(n_heads));
  }
  // Rows sot_len .. T - 2 of -matrix: reuse head_ for x.
  const int N = n_text + 1;
  float* x = head_.get();
  for (int r = 0; r < N; ++r) {
    const float* src = matrix_.get() + static_cast<size_t>(sot_len + r) * F;
    for (int f = 0; f < F; ++f) x[static_cast<size_t>(r) * F + f] = -src[f];
  }
  DtwPath(x, N, F, cost_.get(), trace_.get(), jumps);
  return absl::OkStatus();
}

void DtwPath(const float* x, int n, int m, double* cost, int8_t* trace, int* row_entry) {
  const int64_t W = static_cast<int64_t>(m) + 1;
  const double inf = std::numeric_limits<double>::infinity();
  std::fill(cost, cost + (static_cast<int64_t>(n) + 1) * W, inf);
  std::fill(trace, trace + (static_cast<int64_t>(n) + 1) * W, static_cast<int8_t>(-1));
  cost[0] = 0.0;
  for (int j = 1; j <= m; ++j) {
    for (int i = 1; i <= n; ++i) {
      const double c0 = cost[(i - 1) * W + j - 1];
      const double c1 = cost[(i - 1) * W + j];
      const double c2 = cost[i * W + j - 1];
      double c;
      int8_t t;
      if (c0 < c1 && c0 < c2) {
        c = c0;
        t = 0;
      } else if (c1 < c0 && c1 < c2) {
        c = c1;
        t = 1;
      } else {
        c = c2;
        t = 2;
      }
      cost[i * W + j] = static_cast<double>(x[static_cast<int64_t>(i - 1) * m + j - 1]) + c;
      trace[i * W + j] = t;
    }
  }
  for (int j = 0; j <= m; ++j) trace[j] = 2;
  for (int i = 0; i <= n; ++i) trace[i * W] = 1;
  // Walk back from (n, m); the last column seen in a row is where the path enters it.
  int i = n;
  int j = m;
  while (i > 0 || j > 0) {
    if (i >= 1) row_entry[i - 1] = j - 1;
    const int8_t t = trace[i * W + j];
    if (t == 0) {
      --i;
      --j;
    } else if (t == 1) {
      --i;
    } else {
      --j;
    }
  }
}

}  // namespace whisper
