// Our 128-bin log-mel (large-v3's front end) against faster-whisper 1.2.1's FeatureExtractor on
// jfk.wav: testdata/jfk_mel128_faster_whisper.npz, written by
// tools/reference/mel128_faster_whisper.py from the same float samples. Ours uses OpenAI's mel_128
// filterbank (models/mel_filters.npz, as a large-v3 model file stores it); faster-whisper computes
// its own (librosa's Slaney formula, float64 rounded to float32) and uses NumPy's FFT in float64
// on float32 frames, so the two agree to float rounding, not bit for bit.
#include <cstdio>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "tools/convert/npz.h"
#include "apps/common/audio.h"
#include "whisper/mel.h"

namespace whisper {
namespace {

using ggml_whisper::convert::NpyArrayF32;
using ggml_whisper::convert::ReadNpzF32;

constexpr int kNMels = 128;

struct Slice {
  const char* key;  // member of the reference .npz
  int first_frame;
};

// The largest |ours - reference| over a [128, 100] slice of frames starting at `first_frame`,
// and where it is.
struct Diff {
  double max = 0.0;
  int mel = -1;
  int64_t frame = -1;
};

Diff Compare(const MelView& ours, const NpyArrayF32& ref, int first_frame) {
  Diff d;
  const int64_t n = ref.shape[1];
  for (int m = 0; m < kNMels; ++m) {
    for (int64_t i = 0; i < n; ++i) {
      const double e = std::fabs(static_cast<double>(ours.at(m, first_frame + i)) - ref.data[m * n + i]);
      if (e > d.max || std::isnan(e)) d = {e, m, first_frame + i};
    }
  }
  return d;
}

// Measured max differences: 1.3e-5 (frames 0..99, mel 108 at frame 79) and 1.8e-6 (frames
// 1000..1099). The front reflect padding is not visible here (jfk.wav starts near silence, clamped
// to max - 8); //whisper:mel_test checks it with an impulse.
TEST(MelFasterWhisperTest, Jfk128BinsWithin1e4) {
  const std::string npz = testdata::ModelPath("mel_filters.npz");
  absl::StatusOr<NpyArrayF32> filters = ReadNpzF32(npz, "mel_128");
  ASSERT_TRUE(filters.ok()) << filters.status() << "\n" << testdata::MissingModelHint(npz);
  ASSERT_EQ(filters->shape, std::vector<int64_t>({kNMels, kMelNBins}));

  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMono(testdata::SharedData("jfk.wav"));
  ASSERT_TRUE(audio.ok()) << audio.status();
  ASSERT_EQ(audio->size(), 176000u);
  absl::StatusOr<std::unique_ptr<MelSpectrogram>> mel =
      MelSpectrogram::Create(filters->data.data(), kNMels, kMelNBins, 2, 0);
  ASSERT_TRUE(mel.ok()) << mel.status();
  absl::StatusOr<MelView> view = (*mel)->Compute(audio->data(), audio->size());
  ASSERT_TRUE(view.ok()) << view.status();
  ASSERT_EQ(view->n_mels, kNMels);
  ASSERT_EQ(view->n_len_org, 1099);

  const std::string ref_path = testdata::RepoRoot() + "/testdata/jfk_mel128_faster_whisper.npz";
  for (const Slice& s : {Slice{"frames_0_100", 0}, Slice{"frames_1000_1100", 1000}}) {
    absl::StatusOr<NpyArrayF32> ref = ReadNpzF32(ref_path, s.key);
    ASSERT_TRUE(ref.ok()) << ref.status();
    ASSERT_EQ(ref->shape, std::vector<int64_t>({kNMels, 100})) << s.key;
    const Diff d = Compare(*view, *ref, s.first_frame);
    EXPECT_LT(d.max, 1e-4) << s.key << ": mel " << d.mel << ", frame " << d.frame;
    std::printf("%s: max |ours - faster-whisper| = %.3g (mel %d, frame %lld)\n", s.key, d.max, d.mel,
                static_cast<long long>(d.frame));
  }
}

}  // namespace
}  // namespace whisper
