// PlanChunks: chunk boundaries derived by hand from its rules (greedy furthest cut within
// max_frames; a chunk runs past max_frames only when no cut lies within it; all frames covered);
// ClipChunks: each clip a chunk, in the order given, capped to the audio, short ones skipped.
#include <vector>

#include "gtest/gtest.h"
#include "whisper/batched_transcribe.h"

namespace whisper {
namespace {

std::vector<std::pair<int, int>> Plan(const std::vector<int>& cuts, int n, int max) {
  std::vector<std::pair<int, int>> out;
  for (const FrameRange& r : PlanChunks(cuts, n, max)) out.emplace_back(r.start, r.end);
  return out;
}

using V = std::vector<std::pair<int, int>>;

TEST(PlanChunksTest, ShortAudioIsOneChunk) {
  EXPECT_EQ(Plan({}, 1000, 3000), (V{{0, 1000}}));
  EXPECT_EQ(Plan({400, 800}, 1000, 3000), (V{{0, 1000}}));
  EXPECT_EQ(Plan({}, 3000, 3000), (V{{0, 3000}}));
}

TEST(PlanChunksTest, GreedyFurthestCutInReach) {
  // From 0 the cuts in reach are 1000 and 2500: 2500. From 2500: 3500 and 5000 (<= 5500): 5000.
  // From 5000 the 2000 frames left fit.
  EXPECT_EQ(Plan({1000, 2500, 3500, 5000}, 7000, 3000), (V{{0, 2500}, {2500, 5000}, {5000, 7000}}));
  // A cut exactly max_frames away is in reach.
  EXPECT_EQ(Plan({3000, 6000}, 8000, 3000), (V{{0, 3000}, {3000, 6000}, {6000, 8000}}));
}

TEST(PlanChunksTest, NoCutInReachRunsToTheNextCut) {
  // No pause within 30 s: the chunk runs to the first cut after (the window loop seeks on).
  EXPECT_EQ(Plan({4000}, 9000, 3000), (V{{0, 4000}, {4000, 9000}}));
  EXPECT_EQ(Plan({}, 9000, 3000), (V{{0, 9000}}));
}

TEST(PlanChunksTest, CutsOutsideTheAudioAreIgnored) {
  EXPECT_EQ(Plan({0, -5, 2000, 20000}, 5000, 3000), (V{{0, 2000}, {2000, 5000}}));
  EXPECT_TRUE(Plan({100}, 0, 3000).empty());
  EXPECT_TRUE(Plan({}, -1, 3000).empty());
}

TEST(ClipChunksTest, EachClipIsAChunkInOrder) {
  // Unsorted and overlapping clips stay as given; a 40 s clip stays whole; speech_end is the end.
  const int clips[] = {5000, 7000, 100, 4100, 6000, 6500};
  const std::vector<FrameRange> c = ClipChunks(clips, 3, 20000, 1);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ((V{{c[0].start, c[0].end}, {c[1].start, c[1].end}, {c[2].start, c[2].end}}),
            (V{{5000, 7000}, {100, 4100}, {6000, 6500}}));
  EXPECT_EQ(c[0].speech_end, 7000);
  EXPECT_EQ(c[1].speech_end, 4100);
}

TEST(ClipChunksTest, CappedToTheAudioAndShortClipsSkipped) {
  // Ends past the audio (2000 frames) are its end; a clip at or past it, empty, reversed or under
  // min_frames (10: whisper.cpp's rules) is skipped; a negative start is skipped too.
  const int clips[] = {1500, 1000000, 2000, 2500, 300, 300, 800, 700, 100, 109, 100, 110, -5, 50};
  const std::vector<FrameRange> c = ClipChunks(clips, 7, 2000, 10);
  std::vector<std::pair<int, int>> got;
  for (const FrameRange& r : c) got.emplace_back(r.start, r.end);
  EXPECT_EQ(got, (V{{1500, 2000}, {100, 110}}));
  EXPECT_EQ(ClipChunks(clips, 7, 2000, 1).size(), 3u);  // and [100, 109)
  EXPECT_TRUE(ClipChunks(nullptr, 3, 2000, 1).empty());
  EXPECT_TRUE(ClipChunks(clips, 0, 2000, 1).empty());
}

}  // namespace
}  // namespace whisper
