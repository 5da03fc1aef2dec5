#include "whisper/dtw.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace whisper {
namespace {

// Hand-derived: x = [[0, 5, 5], [5, 0, 0]]. Costs (1-based cells): C11 = 0, C21 = 5, C12 = 5,
// C22 = 0 (diagonal from C11), C13 = 10, C23 = min(C12 5, C13 10, C22 0) + 0 = 0 (from the
// left). Back from (2, 3): (2, 2) left, then (1, 1) diagonal: row 0 entered at column 0, row 1
// at column 1.
TEST(DtwPathTest, HandDerivedPath) {
  const float x[] = {0, 5, 5, 5, 0, 0};
  std::vector<double> cost(3 * 4);
  std::vector<int8_t> trace(3 * 4);
  int entry[2] = {-1, -1};
  DtwPath(x, 2, 3, cost.data(), trace.data(), entry);
  EXPECT_EQ(entry[0], 0);
  EXPECT_EQ(entry[1], 1);
  EXPECT_EQ(cost[2 * 4 + 3], 0.0);
}

// All-zero 2 x 2: at cell (2, 2) the three predecessors tie (all 0); timing.py then steps left,
// to (2, 1), so the path is (0, 0) -> (1, 0) -> (1, 1) and row 1 is entered at column 0 (a
// diagonal-first rule would give 1).
TEST(DtwPathTest, TiesGoLeftAsTimingPy) {
  const float x[] = {0, 0, 0, 0};
  std::vector<double> cost(3 * 3);
  std::vector<int8_t> trace(3 * 3);
  int entry[2] = {-1, -1};
  DtwPath(x, 2, 2, cost.data(), trace.data(), entry);
  EXPECT_EQ(entry[0], 0);
  EXPECT_EQ(entry[1], 0);
}

// qk for n_heads identical heads of T rows x F frames: row r has logit 10 on frames
// [lo[r], hi[r]) and 0 elsewhere (lo = hi: a flat row).
std::vector<float> BlockLogits(int n_heads, int F, const std::vector<int>& lo, const std::vector<int>& hi) {
  const int T = static_cast<int>(lo.size());
  std::vector<float> qk(static_cast<size_t>(n_heads) * T * F, 0.0f);
  for (int h = 0; h < n_heads; ++h) {
    for (int r = 0; r < T; ++r) {
      for (int f = lo[r]; f < hi[r]; ++f) qk[(static_cast<size_t>(h) * T + r) * F + f] = 10.0f;
    }
  }
  return qk;
}

// Rows: sot, <|notimestamps|>, 3 text tokens, eot (flat). The aligned rows attend to frames
// [0, 8), [8, 16), [16, 24), [24, 32): after softmax and standardisation over the 6 rows each
// block is its row's maximum (about +2.0 against -0.4 elsewhere), the median filter (width 7)
// keeps blocks of 8, and the cheapest path through -matrix enters row k at frame 8 k.
TEST(DtwAlignerTest, BlockDiagonalAttention) {
  const int F = 32;
  std::vector<float> qk = BlockLogits(2, F, {0, 0, 8, 16, 24, 0}, {0, 8, 16, 24, 32, 0});
  DtwAligner aligner(16, 64);
  int jumps[4] = {-1, -1, -1, -1};
  ASSERT_TRUE(aligner.Align(qk.data(), 2, 6, F, F, 1, DtwAligner::kMedianFilterWidth, jumps).ok());
  EXPECT_EQ(jumps[0], 0);
  EXPECT_EQ(jumps[1], 8);
  EXPECT_EQ(jumps[2], 16);
  EXPECT_EQ(jumps[3], 24);
}

// Only the first n_frames positions count: with the last block beyond them, the last text row
// is entered at the first frame left after the others.
TEST(DtwAlignerTest, UsesFirstNFramesOfLongerRows) {
  const int stride = 48;
  std::vector<float> qk = BlockLogits(1, stride, {0, 0, 8, 16, 40, 0}, {0, 8, 16, 24, 48, 0});
  DtwAligner aligner(16, 64);
  int jumps[4];
  ASSERT_TRUE(aligner.Align(qk.data(), 1, 6, stride, 32, 1, 7, jumps).ok());
  EXPECT_EQ(jumps[0], 0);
  EXPECT_EQ(jumps[1], 8);
  EXPECT_EQ(jumps[2], 16);
  EXPECT_GE(jumps[3], 24);
  EXPECT_LT(jumps[3], 32);
}

TEST(DtwAlignerTest, Errors) {
  DtwAligner aligner(8, 16);
  std::vector<float> qk(8 * 16, 0.0f);
  int jumps[8];
  EXPECT_FALSE(aligner.Align(nullptr, 1, 4, 16, 16, 1, 7, jumps).ok());
  EXPECT_FALSE(aligner.Align(qk.data(), 1, 3, 16, 16, 1, 7, jumps).ok());   // no text token
  EXPECT_FALSE(aligner.Align(qk.data(), 1, 9, 16, 16, 1, 7, jumps).ok());   // > max_tokens
  EXPECT_FALSE(aligner.Align(qk.data(), 1, 4, 16, 17, 1, 7, jumps).ok());   // frames > stride
  EXPECT_FALSE(aligner.Align(qk.data(), 1, 4, 16, 16, 1, 6, jumps).ok());   // even width
  qk[5] = std::nanf("");
  const absl::Status st = aligner.Align(qk.data(), 1, 4, 16, 16, 1, 7, jumps);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("not finite"), absl::string_view::npos) << st;
}

// tiny.en's heads equal models/faster-whisper-tiny.en/config.json "alignment_heads" (the
// CTranslate2 conversion): [[1,0],[2,0],[2,5],[3,0],[3,1],[3,2],[3,3],[3,4]].
TEST(AlignmentHeadsTest, PresetsAndErrors) {
  absl::StatusOr<std::vector<AlignmentHead>> h = AlignmentHeadsFor(AheadsPreset::kTinyEn, 0, nullptr, 0, 4, 6);
  ASSERT_TRUE(h.ok()) << h.status();
  const int want[8][2] = {{1, 0}, {2, 0}, {2, 5}, {3, 0}, {3, 1}, {3, 2}, {3, 3}, {3, 4}};
  ASSERT_EQ(h->size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ((*h)[i].layer, want[i][0]);
    EXPECT_EQ((*h)[i].head, want[i][1]);
  }
  EXPECT_EQ(AlignmentHeadsPresetByName("tiny.en"), AheadsPreset::kTinyEn);
  EXPECT_EQ(AlignmentHeadsPresetByName("large.v3.turbo"), AheadsPreset::kLargeV3Turbo);
  EXPECT_EQ(AlignmentHeadsPresetByName("tiny.EN"), AheadsPreset::kNone);
  // Shapes of OpenAI's released checkpoints (their ModelDimensions).
  EXPECT_EQ(AlignmentHeadsPresetForDims(51864, 4, 4), AheadsPreset::kTinyEn);
  EXPECT_EQ(AlignmentHeadsPresetForDims(51865, 12, 12), AheadsPreset::kSmall);
  EXPECT_EQ(AlignmentHeadsPresetForDims(51865, 32, 32), AheadsPreset::kLargeV2);
  EXPECT_EQ(AlignmentHeadsPresetForDims(51866, 32, 4), AheadsPreset::kLargeV3Turbo);
  EXPECT_EQ(AlignmentHeadsPresetForDims(51866, 32, 32), AheadsPreset::kLargeV3);
  EXPECT_EQ(AlignmentHeadsPresetForDims(51864, 4, 2), AheadsPreset::kNone);
  EXPECT_EQ(AlignmentHeadsPresetForDims(100, 4, 4), AheadsPreset::kNone);

  h = AlignmentHeadsFor(AheadsPreset::kNTopMost, 2, nullptr, 0, 4, 6);
  ASSERT_TRUE(h.ok());
  ASSERT_EQ(h->size(), 12u);
  EXPECT_EQ(h->front().layer, 2);
  EXPECT_EQ(h->back().layer, 3);
  EXPECT_EQ(h->back().head, 5);

  const AlignmentHead custom[] = {{3, 1}, {0, 2}};
  h = AlignmentHeadsFor(AheadsPreset::kCustom, 0, custom, 2, 4, 6);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ((*h)[0].layer, 0);  // sorted by layer
  EXPECT_EQ((*h)[1].layer, 3);

  EXPECT_FALSE(AlignmentHeadsFor(AheadsPreset::kNone, 0, nullptr, 0, 4, 6).ok());
  EXPECT_FALSE(AlignmentHeadsFor(AheadsPreset::kNTopMost, 5, nullptr, 0, 4, 6).ok());
  EXPECT_FALSE(AlignmentHeadsFor(AheadsPreset::kCustom, 0, nullptr, 0, 4, 6).ok());
  // base.en's heads reach layer 5: not on a 4-layer model.
  h = AlignmentHeadsFor(AheadsPreset::kBaseEn, 0, nullptr, 0, 4, 6);
  EXPECT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("4 text layers"), absl::string_view::npos) << h.status();
}

}  // namespace
}  // namespace whisper
