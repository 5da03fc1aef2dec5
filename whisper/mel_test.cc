#include "whisper/mel.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "apps/common/audio.h"

namespace whisper {
namespace {

using ::testing::HasSubstr;

constexpr int kNMels = 80;

// ---- Reference: the spec of mel.h computed independently, in double, with an O(N^2) DFT. ----

// Builds the padded signal literally: samples[200..1] reversed, the audio, 480200 zeros.
std::vector<double> PadLikeWhisper(const std::vector<float>& x) {
  std::vector<double> padded;
  for (int j = 200; j >= 1; --j) padded.push_back(x[j]);
  padded.insert(padded.end(), x.begin(), x.end());
  padded.resize(padded.size() + 480000 + 200, 0.0);
  return padded;
}

// Unnormalized log10 mel, [n_mels][n_len].
std::vector<double> ReferenceRawLogMel(const std::vector<float>& x,
                                       const std::vector<float>& filters, int n_mels) {
  const std::vector<double> padded = PadLikeWhisper(x);
  const int64_t n_len = (static_cast<int64_t>(padded.size()) - 400) / 160;
  std::vector<double> cos_table(400), sin_table(400), hann(400);
  for (int j = 0; j < 400; ++j) {
    cos_table[j] = std::cos(2.0 * M_PI * j / 400.0);
    sin_table[j] = std::sin(2.0 * M_PI * j / 400.0);
    hann[j] = 0.5 - 0.5 * std::cos(2.0 * M_PI * j / 400.0);
  }
  std::vector<double> out(static_cast<size_t>(n_mels) * n_len);
  std::vector<double> frame(400), power(201);
  for (int64_t i = 0; i < n_len; ++i) {
    bool all_zero = true;
    for (int j = 0; j < 400; ++j) {
      frame[j] = hann[j] * padded[i * 160 + j];
      all_zero &= frame[j] == 0.0;
    }
    for (int k = 0; k < 201; ++k) {
      double re = 0, im = 0;
      if (!all_zero) {
        for (int j = 0; j < 400; ++j) {
          re += frame[j] * cos_table[(k * j) % 400];
          im -= frame[j] * sin_table[(k * j) % 400];
        }
      }
      power[k] = re * re + im * im;
    }
    for (int m = 0; m < n_mels; ++m) {
      double sum = 0;
      for (int k = 0; k < 201; ++k) sum += filters[m * 201 + k] * power[k];
      out[m * n_len + i] = std::log10(std::max(sum, 1e-10));
    }
  }
  return out;
}

std::vector<double> Normalize(std::vector<double> mel) {
  const double mmax = *std::max_element(mel.begin(), mel.end()) - 8.0;
  for (double& v : mel) v = (std::max(v, mmax) + 4.0) / 4.0;
  return mel;
}

double MaxAbsDiff(const MelView& view, const std::vector<double>& ref) {
  double diff = 0;
  for (size_t e = 0; e < ref.size(); ++e) diff = std::max(diff, std::fabs(view.data[e] - ref[e]));
  return diff;
}

// ---- Signals and filterbanks. ----

// Sines at 220, 1375 and 5100 Hz plus uniform noise, amplitude < 1.
std::vector<float> SinesPlusNoise(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> noise(-0.05f, 0.05f);
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) / kSampleRate;
    x[i] = static_cast<float>(0.4 * std::sin(2 * M_PI * 220 * t) +
                              0.2 * std::sin(2 * M_PI * 1375 * t + 0.3) +
                              0.1 * std::sin(2 * M_PI * 5100 * t + 1.1)) +
           noise(rng);
  }
  return x;
}

// Dense filters: every entry uniform in [0, 0.05).
std::vector<float> RandomFilters(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 0.05f);
  std::vector<float> f(kNMels * kMelNBins);
  for (float& v : f) v = u(rng);
  return f;
}

// Sparse triangular filters with centers spread over bins 1..199 (half-width 4 bins).
std::vector<float> TriangularFilters() {
  std::vector<float> f(kNMels * kMelNBins, 0.0f);
  for (int m = 0; m < kNMels; ++m) {
    const double center = 1.0 + 198.0 * m / (kNMels - 1);
    for (int k = 0; k < kMelNBins; ++k) {
      f[m * kMelNBins + k] = static_cast<float>(std::max(0.0, 1.0 - std::fabs(k - center) / 4.0));
    }
  }
  return f;
}

// The tiny.en filterbank: 80 x 201 float after the 4-byte magic and 11 int32 hparams.
std::vector<float> ModelFilters() {
  std::ifstream in(testdata::SharedData("header-only-ggml-tiny.en.bin"), std::ios::binary);
  int32_t dims[2] = {0, 0};
  in.seekg(48);
  in.read(reinterpret_cast<char*>(dims), sizeof(dims));
  EXPECT_EQ(dims[0], 80);
  EXPECT_EQ(dims[1], 201);
  std::vector<float> f(80 * 201);
  in.read(reinterpret_cast<char*>(f.data()), f.size() * sizeof(float));
  EXPECT_TRUE(in.good());
  return f;
}

std::unique_ptr<MelSpectrogram> MakeMel(const std::vector<float>& filters, int n_threads,
                                        int64_t max_samples = 0) {
  absl::StatusOr<std::unique_ptr<MelSpectrogram>> mel =
      MelSpectrogram::Create(filters.data(), kNMels, kMelNBins, n_threads, max_samples);
  EXPECT_TRUE(mel.ok()) << mel.status();
  return mel.ok() ? std::move(*mel) : nullptr;
}

// ---- Tests. ----

TEST(MelTest, FrameCounts) {
  EXPECT_EQ(MelFrameCount(176000), 4100);  // jfk.wav: (176000 + 480000) / 160
  EXPECT_EQ(MelFrameCountOrg(176000), 1099);
  EXPECT_EQ(MelFrameCount(480000), 6000);  // 30 s
  EXPECT_EQ(MelFrameCountOrg(480000), 2999);
  EXPECT_EQ(MelFrameCount(161), 3001);
  std::unique_ptr<MelSpectrogram> mel = MakeMel(TriangularFilters(), 1);
  const std::vector<float> x = SinesPlusNoise(176000, 1);
  absl::StatusOr<MelView> view = mel->Compute(x.data(), x.size());
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->n_mels, 80);
  EXPECT_EQ(view->n_len, 4100);
  EXPECT_EQ(view->n_len_org, 1099);
}

// Float kissfft vs double DFT: the FFT's relative error (~1e-6 of a frame's energy) reaches
// 1e-4 in log10/4 units only for bands ~50 dB below their frame's peak; the noise floor keeps
// every band well above that, and values > 80 dB below the global max are clamped anyway.
// Tolerance 1e-4 on the normalized output (a 0.1% power error). Measured max: 1.1e-7 (random
// filters), 1.2e-6 (triangular), 1.3e-5 (jfk.wav with the model filters: quiet passages).
TEST(MelTest, MatchesDoubleDftRandomFilters) {
  const std::vector<float> x = SinesPlusNoise(23456, 2);
  const std::vector<float> filters = RandomFilters(3);
  std::unique_ptr<MelSpectrogram> mel = MakeMel(filters, 1);
  absl::StatusOr<MelView> view = mel->Compute(x.data(), x.size());
  ASSERT_TRUE(view.ok()) << view.status();
  const std::vector<double> ref = Normalize(ReferenceRawLogMel(x, filters, kNMels));
  ASSERT_EQ(static_cast<size_t>(view->n_mels * view->n_len), ref.size());
  EXPECT_LT(MaxAbsDiff(*view, ref), 1e-4);
}

TEST(MelTest, MatchesDoubleDftTriangularFilters) {
  const std::vector<float> x = SinesPlusNoise(16000 * 3 + 77, 4);
  const std::vector<float> filters = TriangularFilters();
  std::unique_ptr<MelSpectrogram> mel = MakeMel(filters, 2);
  absl::StatusOr<MelView> view = mel->Compute(x.data(), x.size());
  ASSERT_TRUE(view.ok()) << view.status();
  const std::vector<double> ref = Normalize(ReferenceRawLogMel(x, filters, kNMels));
  ASSERT_EQ(static_cast<size_t>(view->n_mels * view->n_len), ref.size());
  EXPECT_LT(MaxAbsDiff(*view, ref), 1e-4);
}

// Real speech with the model's own filterbank.
TEST(MelTest, JfkWithModelFiltersMatchesDoubleDft) {
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMono(testdata::SharedData("jfk.wav"));
  ASSERT_TRUE(audio.ok()) << audio.status();
  const std::vector<float> filters = ModelFilters();
  std::unique_ptr<MelSpectrogram> mel = MakeMel(filters, 2);
  absl::StatusOr<MelView> view = mel->Compute(audio->data(), audio->size());
  ASSERT_TRUE(view.ok()) << view.status();
  const std::vector<double> ref = Normalize(ReferenceRawLogMel(*audio, filters, kNMels));
  EXPECT_LT(MaxAbsDiff(*view, ref), 1e-4);
}

// Filters that pick single bins: mel m = power of bin m (for m < 80).
std::vector<float> BinPickFilters() {
  std::vector<float> f(kNMels * kMelNBins, 0.0f);
  for (int m = 0; m < kNMels; ++m) f[m * kMelNBins + m] = 1.0f;
  return f;
}

double Hann(int j) { return 0.5 - 0.5 * std::cos(2.0 * M_PI * j / 400.0); }

// A unit impulse at audio index 1000 is padded index 1200: it lies in frame 6 at window
// position 240 and frame 7 at position 80 only (frame 5 ends at 1199, frame 8 starts at 1280).
// Its spectrum there is flat with power hann[pos]^2, so every mel of frame 6 is
// log10(hann[240]^2), of frame 7 log10(hann[80]^2), and every other frame is silence, clamped
// to max - 8. A wrong hop, front padding or window (e.g. symmetric Hann) moves these values.
TEST(MelTest, ImpulseChecksWindowHopAndPadding) {
  std::vector<float> x(4000, 0.0f);
  x[1000] = 1.0f;
  std::unique_ptr<MelSpectrogram> mel = MakeMel(BinPickFilters(), 1);
  absl::StatusOr<MelView> view = mel->Compute(x.data(), x.size());
  ASSERT_TRUE(view.ok()) << view.status();
  const double v6 = std::log10(Hann(240) * Hann(240));
  const double v7 = std::log10(Hann(80) * Hann(80));
  const double floor = v6 - 8.0;  // v6 is the global max
  for (int m = 0; m < kNMels; ++m) {
    for (int64_t i = 0; i < view->n_len; ++i) {
      const double raw = i == 6 ? v6 : i == 7 ? v7 : -10.0;
      const double want = (std::max(raw, floor) + 4.0) / 4.0;
      ASSERT_NEAR(view->at(m, i), want, 1e-6) << "mel " << m << " frame " << i;
    }
  }
}

// An impulse at audio index 50 is reflected to padded index 150 and also sits at 250: frame 0
// sees two impulses with equal weight hann[150] = hann[250] = h, 100 samples apart, so its
// power is 2 h^2 (1 + cos(pi k / 2)): 4h^2, 2h^2, 0, 2h^2, 4h^2, ... by bin k. Frame 1 sees
// only index 250 at position 90. Zero (not reflect) padding would make frame 0 flat.
TEST(MelTest, ImpulseChecksFrontReflection) {
  std::vector<float> x(4000, 0.0f);
  x[50] = 1.0f;
  std::unique_ptr<MelSpectrogram> mel = MakeMel(BinPickFilters(), 1);
  absl::StatusOr<MelView> view = mel->Compute(x.data(), x.size());
  ASSERT_TRUE(view.ok()) << view.status();
  const double h2 = Hann(150) * Hann(150);
  ASSERT_NEAR(Hann(150), Hann(250), 1e-12);
  const double max_raw = std::log10(4 * h2);
  const double floor = max_raw - 8.0;
  auto norm = [&](double raw) { return (std::max(raw, floor) + 4.0) / 4.0; };
  for (int k = 0; k < kNMels; ++k) {
    const double p = 2 * h2 * (1 + std::cos(M_PI * k / 2));
    // Bins with p = 0 come out of the float FFT as ~1e-14: below the max - 8 clamp either way.
    ASSERT_NEAR(view->at(k, 0), norm(std::log10(std::max(p, 1e-10))), 1e-5) << "bin " << k;
    ASSERT_NEAR(view->at(k, 1), norm(std::log10(Hann(90) * Hann(90))), 1e-6) << "bin " << k;
    ASSERT_NEAR(view->at(k, 2), norm(-10.0), 1e-6) << "bin " << k;
  }
}

TEST(MelTest, ThreadCountInvariance) {
  const std::vector<float> x = SinesPlusNoise(16000 * 31 + 123, 5);
  const std::vector<float> filters = ModelFilters();
  std::unique_ptr<MelSpectrogram> mel1 = MakeMel(filters, 1);
  absl::StatusOr<MelView> v1 = mel1->Compute(x.data(), x.size());
  ASSERT_TRUE(v1.ok()) << v1.status();
  for (int n_threads : {2, 3}) {
    std::unique_ptr<MelSpectrogram> meln = MakeMel(filters, n_threads);
    absl::StatusOr<MelView> vn = meln->Compute(x.data(), x.size());
    ASSERT_TRUE(vn.ok()) << vn.status();
    ASSERT_EQ(vn->n_len, v1->n_len);
    EXPECT_EQ(std::memcmp(v1->data, vn->data, sizeof(float) * kNMels * v1->n_len), 0)
        << n_threads << " threads";
  }
}

// A long input, then a shorter one, on the same object must equal a fresh computation of the
// short one (no stale frames or maximum), and stay within the reserved capacity.
TEST(MelTest, ReuseAcrossCallsAndGrowth) {
  const std::vector<float> filters = ModelFilters();
  const std::vector<float> long_x = SinesPlusNoise(16000 * 20, 6);
  std::vector<float> short_x = SinesPlusNoise(16000 * 4 + 9, 7);
  for (float& v : short_x) v *= 0.01f;  // a different global max than long_x

  std::unique_ptr<MelSpectrogram> fresh = MakeMel(filters, 3);
  absl::StatusOr<MelView> expected = fresh->Compute(short_x.data(), short_x.size());
  ASSERT_TRUE(expected.ok());
  const std::vector<float> expected_data(expected->data, expected->data + kNMels * expected->n_len);

  std::unique_ptr<MelSpectrogram> mel = MakeMel(filters, 3, /*max_samples=*/0);
  EXPECT_EQ(mel->capacity_samples(), 0);
  ASSERT_TRUE(mel->Compute(long_x.data(), long_x.size()).ok());
  EXPECT_EQ(mel->capacity_samples(), static_cast<int64_t>(long_x.size()));
  absl::StatusOr<MelView> again = mel->Compute(short_x.data(), short_x.size());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(mel->capacity_samples(), static_cast<int64_t>(long_x.size()));
  ASSERT_EQ(again->n_len, expected->n_len);
  EXPECT_EQ(std::memcmp(again->data, expected_data.data(), sizeof(float) * expected_data.size()),
            0);
}

TEST(MelTest, CreateErrors) {
  const std::vector<float> filters = TriangularFilters();
  EXPECT_FALSE(MelSpectrogram::Create(nullptr, 80, 201, 1, 0).ok());
  EXPECT_FALSE(MelSpectrogram::Create(filters.data(), 0, 201, 1, 0).ok());
  EXPECT_FALSE(MelSpectrogram::Create(filters.data(), 80, 201, 0, 0).ok());
  EXPECT_FALSE(MelSpectrogram::Create(filters.data(), 80, 201, 1, -1).ok());
  absl::StatusOr<std::unique_ptr<MelSpectrogram>> bins =
      MelSpectrogram::Create(filters.data(), 80, 200, 1, 0);
  ASSERT_FALSE(bins.ok());
  EXPECT_THAT(bins.status().message(), HasSubstr("n_fft = 200 bins, expected 201"));
  std::vector<float> bad = filters;
  bad[3 * 201 + 7] = NAN;
  absl::StatusOr<std::unique_ptr<MelSpectrogram>> nan =
      MelSpectrogram::Create(bad.data(), 80, 201, 1, 0);
  ASSERT_FALSE(nan.ok());
  EXPECT_THAT(nan.status().message(), HasSubstr("[mel 3][bin 7]"));
}

TEST(MelTest, ComputeErrors) {
  std::unique_ptr<MelSpectrogram> mel = MakeMel(TriangularFilters(), 2);
  EXPECT_FALSE(mel->Compute(nullptr, 1000).ok());
  std::vector<float> x(200, 0.5f);
  absl::StatusOr<MelView> too_short = mel->Compute(x.data(), x.size());
  ASSERT_FALSE(too_short.ok());
  EXPECT_THAT(too_short.status().message(), HasSubstr("at least 201"));
  x.push_back(0.5f);
  EXPECT_TRUE(mel->Compute(x.data(), x.size()).ok());
}

}  // namespace
}  // namespace whisper
