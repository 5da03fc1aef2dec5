// roofline.h: the encoder FLOP count against the hand-derived sums, and the FMA peak's shape.
#include "tools/bench/roofline.h"

#include "gtest/gtest.h"

namespace whisper::bench {
namespace {

WhisperHparams Dims(int n_audio_state, int n_audio_layer, int n_mels) {
  WhisperHparams hp;
  hp.n_audio_ctx = 1500;
  hp.n_audio_state = n_audio_state;
  hp.n_audio_layer = n_audio_layer;
  hp.n_mels = n_mels;
  return hp;
}

TEST(RooflineTest, EncoderFlopsOfTinyAndBase) {
  // tiny: conv1 6*80*384*3000 = 552,960,000; conv2 6*384*384*1500 = 1,327,104,000; per layer
  // 24*1500*384^2 + 4*1500^2*384 = 5,308,416,000 + 3,456,000,000; 4 layers.
  EXPECT_DOUBLE_EQ(EncoderFlops(Dims(384, 4, 80), 1500), 36937728000.0);
  // base: d 512, 6 layers: conv 737,280,000 + 2,359,296,000; layer 9,437,184,000 + 4,608,000,000.
  EXPECT_DOUBLE_EQ(EncoderFlops(Dims(512, 6, 80), 1500), 87367680000.0);
  // A shorter window (-ac 750) scales the attention part quadratically.
  EXPECT_DOUBLE_EQ(EncoderFlops(Dims(384, 4, 80), 750),
                   6.0 * 80 * 384 * 1500 + 6.0 * 384 * 384 * 750 + 4 * (24.0 * 750 * 384 * 384 + 4.0 * 750 * 750 * 384));
}

TEST(RooflineTest, FmaPeakIsPositiveAndPerLane) {
  const FmaPeak p = MeasureFmaPeak(1, 0.02);
  EXPECT_GT(p.gflops, 0.0);
  EXPECT_GE(p.lanes, 1);
  EXPECT_STRNE(p.target, "");
}

}  // namespace
}  // namespace whisper::bench
