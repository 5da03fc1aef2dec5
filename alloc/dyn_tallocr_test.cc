#include "alloc/dyn_tallocr.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "ggml/ggml.h"
#include "gtest/gtest.h"

namespace {

using Blocks = std::vector<std::pair<size_t, size_t>>;  // (offset, size), the last one excluded

Blocks FreeBlocks(const ggml_dyn_tallocr* a) {
  Blocks blocks;
  for (int i = 0; i + 1 < ggml_dyn_tallocr_n_free_blocks(a); ++i) {
    size_t offset, size;
    ggml_dyn_tallocr_get_free_block(a, i, &offset, &size);
    blocks.emplace_back(offset, size);
  }
  return blocks;
}

size_t LastBlockOffset(const ggml_dyn_tallocr* a) {
  size_t offset;
  ggml_dyn_tallocr_get_free_block(a, ggml_dyn_tallocr_n_free_blocks(a) - 1, &offset, nullptr);
  return offset;
}

size_t Alloc(ggml_dyn_tallocr* a, size_t size) {
  size_t offset = SIZE_MAX;
  EXPECT_TRUE(ggml_dyn_tallocr_alloc(a, size, nullptr, &offset)) << ggml_last_error();
  return offset;
}

class DynTallocrTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ggml_log_set(nullptr, nullptr);
    a_ = ggml_dyn_tallocr_new(64);
    ASSERT_NE(a_, nullptr);
  }
  void TearDown() override { ggml_dyn_tallocr_free(a_); }
  ggml_dyn_tallocr* a_ = nullptr;
};

TEST(DynTallocrNewTest, AlignmentMustBePowerOfTwo) {
  ggml_log_set(nullptr, nullptr);
  for (size_t bad : {size_t{0}, size_t{3}, size_t{48}, size_t{100}}) {
    EXPECT_EQ(ggml_dyn_tallocr_new(bad), nullptr) << bad;
    EXPECT_NE(std::string(ggml_last_error()).find("power of two"), std::string::npos);
  }
  for (size_t good : {size_t{1}, size_t{16}, size_t{4096}}) {
    ggml_dyn_tallocr* a = ggml_dyn_tallocr_new(good);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(ggml_dyn_tallocr_get_alignment(a), good);
    EXPECT_EQ(ggml_dyn_tallocr_n_free_blocks(a), 1);
    ggml_dyn_tallocr_free(a);
  }
  ggml_dyn_tallocr_free(nullptr);
}

TEST_F(DynTallocrTest, SequentialOffsetsArePaddedToAlignment) {
  EXPECT_EQ(Alloc(a_, 1), 0u);
  EXPECT_EQ(Alloc(a_, 64), 64u);
  EXPECT_EQ(Alloc(a_, 65), 128u);
  EXPECT_EQ(Alloc(a_, 0), 256u);  // 0 bytes: one alignment unit
  EXPECT_EQ(Alloc(a_, 1000), 320u);
  EXPECT_EQ(ggml_dyn_tallocr_max_size(a_), 320u + 1024);
  EXPECT_EQ(LastBlockOffset(a_), 1344u);
  EXPECT_TRUE(FreeBlocks(a_).empty());
}

TEST_F(DynTallocrTest, FreeThenReuseAndHighWaterMark) {
  const size_t x = Alloc(a_, 1000);  // [0, 1024)
  const size_t y = Alloc(a_, 100);   // [1024, 1152)
  EXPECT_EQ(ggml_dyn_tallocr_max_size(a_), 1152u);
  ASSERT_TRUE(ggml_dyn_tallocr_free_tensor(a_, x, 1000, nullptr));
  EXPECT_EQ(FreeBlocks(a_), (Blocks{{0, 1024}}));
  EXPECT_EQ(ggml_dyn_tallocr_max_size(a_), 1152u);  // free never lowers it
  EXPECT_EQ(Alloc(a_, 512), 0u);                     // from the freed block's front
  EXPECT_EQ(FreeBlocks(a_), (Blocks{{512, 512}}));
  EXPECT_EQ(Alloc(a_, 512), 512u);                   // empties it: removed
  EXPECT_TRUE(FreeBlocks(a_).empty());
  EXPECT_EQ(Alloc(a_, 64), 1152u);                   // only the last block is left
  EXPECT_EQ(ggml_dyn_tallocr_max_size(a_), 1216u);
  ASSERT_TRUE(ggml_dyn_tallocr_free_tensor(a_, y, 100, nullptr));
  ggml_dyn_tallocr_reset(a_);
  EXPECT_EQ(ggml_dyn_tallocr_max_size(a_), 0u);
  EXPECT_EQ(ggml_dyn_tallocr_n_free_blocks(a_), 1);
  EXPECT_EQ(Alloc(a_, 64), 0u);
}

TEST_F(DynTallocrTest, BestFitTakesSmallestSufficientBlockLowestOffsetOnTies) {
  // Holes of 256, 128, 512, 128 bytes separated by live 64-byte allocations.
  const size_t sizes[] = {256, 64, 128, 64, 512, 64, 128, 64};
  size_t off[8];
  for (int i = 0; i < 8; ++i) off[i] = Alloc(a_, sizes[i]);
  for (int i : {0, 2, 4, 6}) ASSERT_TRUE(ggml_dyn_tallocr_free_tensor(a_, off[i], sizes[i], nullptr));
  EXPECT_EQ(FreeBlocks(a_), (Blocks{{0, 256}, {320, 128}, {512, 512}, {1088, 128}}));
  EXPECT_EQ(Alloc(a_, 100), 320u);  // smallest fit (128); ties -> lowest offset
  EXPECT_EQ(Alloc(a_, 128), 1088u);
  EXPECT_EQ(Alloc(a_, 200), 0u);    // 256 beats 512
  EXPECT_EQ(Alloc(a_, 300), 512u);
  EXPECT_EQ(FreeBlocks(a_), (Blocks{{832, 192}}));
  // Nothing but the last block fits 1000 bytes: the high-water mark grows.
  EXPECT_EQ(Alloc(a_, 1000), 1280u);
  EXPECT_EQ(ggml_dyn_tallocr_max_size(a_), 2304u);
}

TEST_F(DynTallocrTest, NeverPrefersLastBlockOverAFittingHole) {
  const size_t a = Alloc(a_, 640);
  Alloc(a_, 64);
  ASSERT_TRUE(ggml_dyn_tallocr_free_tensor(a_, a, 640, nullptr));
  EXPECT_EQ(Alloc(a_, 640), 0u);  // exact fit in the hole, no growth
  EXPECT_EQ(ggml_dyn_tallocr_max_size(a_), 704u);
}

TEST_F(DynTallocrTest, AdjacentFreesMergeInEveryOrder) {
  // Three adjacent allocations A B C followed by a live guard D: every order of freeing A, B, C
  // ends with one block [0, 192) (and freeing D then merges everything into the last block).
  int orders[3] = {0, 1, 2};
  do {
    ggml_dyn_tallocr_reset(a_);
    size_t off[4];
    for (int i = 0; i < 4; ++i) off[i] = Alloc(a_, 64);
    for (int k = 0; k < 3; ++k) {
      ASSERT_TRUE(ggml_dyn_tallocr_free_tensor(a_, off[orders[k]], 64, nullptr));
    }
    EXPECT_EQ(FreeBlocks(a_), (Blocks{{0, 192}})) << orders[0] << orders[1] << orders[2];
    ASSERT_TRUE(ggml_dyn_tallocr_free_tensor(a_, off[3], 64, nullptr));
    EXPECT_EQ(ggml_dyn_tallocr_n_free_blocks(a_), 1);
    EXPECT_EQ(LastBlockOffset(a_), 0u);
  } while (std::next_permutation(orders, orders + 3));
}

TEST_F(DynTallocrTest, RandomAllocFreeKeepsBlocksDisjointAndMerged) {
  // Reference model: a byte map of the live ranges. After every step the free list must equal
  // the maximal free runs below the last block, and no live ranges may overlap.
  uint64_t rng = 12345;
  auto next = [&rng] {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<size_t>(rng >> 33);
  };
  std::vector<std::pair<size_t, size_t>> live;  // (offset, padded size)
  for (int step = 0; step < 4000; ++step) {
    if (live.empty() || next() % 100 < 55) {
      const size_t size = 1 + next() % 700;
      size_t off;
      ASSERT_TRUE(ggml_dyn_tallocr_alloc(a_, size, nullptr, &off));
      ASSERT_EQ(off % 64, 0u);
      live.emplace_back(off, (size + 63) / 64 * 64);
    } else {
      const size_t i = next() % live.size();
      ASSERT_TRUE(ggml_dyn_tallocr_free_tensor(a_, live[i].first, live[i].second, nullptr)) << ggml_last_error();
      live.erase(live.begin() + static_cast<long>(i));
    }
    std::vector<std::pair<size_t, size_t>> sorted = live;
    std::sort(sorted.begin(), sorted.end());
    size_t high = 0;
    for (size_t i = 0; i < sorted.size(); ++i) {
      if (i > 0) ASSERT_LE(sorted[i - 1].first + sorted[i - 1].second, sorted[i].first);
      high = std::max(high, sorted[i].first + sorted[i].second);
    }
    Blocks expected;  // gaps between live ranges below the last block
    size_t cursor = 0;
    for (const auto& r : sorted) {
      if (r.first > cursor) expected.emplace_back(cursor, r.first - cursor);
      cursor = r.first + r.second;
    }
    ASSERT_EQ(FreeBlocks(a_), expected) << "step " << step;
    ASSERT_EQ(LastBlockOffset(a_), high);
    ASSERT_GE(ggml_dyn_tallocr_max_size(a_), high);
  }
}

TEST_F(DynTallocrTest, FreeBlockBoundIsAnError) {
  // 600 live blocks, then free every other one: each free makes an isolated block. With the last
  // block, the list holds 256 blocks after 255 frees; the 256th isolated free must fail.
  size_t off[600];
  for (int i = 0; i < 600; ++i) off[i] = Alloc(a_, 64);
  for (int k = 0; k < GGML_DYN_TALLOCR_MAX_FREE_BLOCKS - 1; ++k) {
    ASSERT_TRUE(ggml_dyn_tallocr_free_tensor(a_, off[2 * k], 64, nullptr)) << k;
  }
  EXPECT_EQ(ggml_dyn_tallocr_n_free_blocks(a_), GGML_DYN_TALLOCR_MAX_FREE_BLOCKS);
  ggml_tensor named = {};
  snprintf(named.name, sizeof(named.name), "t510");
  EXPECT_FALSE(ggml_dyn_tallocr_free_tensor(a_, off[510], 64, &named));
  const std::string msg = ggml_last_error();
  EXPECT_NE(msg.find("out of free blocks"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'t510'"), std::string::npos) << msg;
  EXPECT_EQ(ggml_dyn_tallocr_n_free_blocks(a_), GGML_DYN_TALLOCR_MAX_FREE_BLOCKS);  // unchanged
  // A free that merges still works at the bound: off[1] joins the blocks of off[0] and off[2].
  ASSERT_TRUE(ggml_dyn_tallocr_free_tensor(a_, off[1], 64, nullptr));
  EXPECT_EQ(ggml_dyn_tallocr_n_free_blocks(a_), GGML_DYN_TALLOCR_MAX_FREE_BLOCKS - 1);
  EXPECT_EQ(FreeBlocks(a_)[0], (std::pair<size_t, size_t>{0, 192}));
}

TEST_F(DynTallocrTest, DoubleFreeAndBadRangesAreErrors) {
  const size_t x = Alloc(a_, 128);
  const size_t y = Alloc(a_, 128);
  (void)y;
  ASSERT_TRUE(ggml_dyn_tallocr_free_tensor(a_, x, 128, nullptr));
  EXPECT_FALSE(ggml_dyn_tallocr_free_tensor(a_, x, 128, nullptr));  // double free
  EXPECT_NE(std::string(ggml_last_error()).find("overlaps the free block [0, 128)"), std::string::npos)
      << ggml_last_error();
  EXPECT_FALSE(ggml_dyn_tallocr_free_tensor(a_, 256, 64, nullptr));  // never allocated: past the mark
  EXPECT_FALSE(ggml_dyn_tallocr_free_tensor(a_, 100, 64, nullptr));  // misaligned
  EXPECT_FALSE(ggml_dyn_tallocr_free_tensor(a_, 64, 128, nullptr));  // overlaps [0, 128)
  EXPECT_EQ(FreeBlocks(a_), (Blocks{{0, 128}}));
  EXPECT_EQ(LastBlockOffset(a_), 256u);
}

TEST_F(DynTallocrTest, OutOfOffsetSpaceIsAnError) {
  size_t off = 7;
  ggml_tensor named = {};
  snprintf(named.name, sizeof(named.name), "huge");
  EXPECT_FALSE(ggml_dyn_tallocr_alloc(a_, SIZE_MAX, &named, &off));
  EXPECT_NE(std::string(ggml_last_error()).find("'huge'"), std::string::npos);
  EXPECT_EQ(off, 7u);
  const size_t space = GGML_DYN_TALLOCR_MAX_OFFSET / 64 * 64;
  EXPECT_EQ(Alloc(a_, space - 64), 0u);  // fits exactly, leaving 64 bytes
  EXPECT_FALSE(ggml_dyn_tallocr_alloc(a_, 128, nullptr, &off));
  EXPECT_NE(std::string(ggml_last_error()).find("64 bytes left"), std::string::npos) << ggml_last_error();
  EXPECT_EQ(Alloc(a_, 64), space - 64);
  EXPECT_EQ(ggml_dyn_tallocr_max_size(a_), space);
  EXPECT_FALSE(ggml_dyn_tallocr_alloc(nullptr, 64, nullptr, &off));
  EXPECT_FALSE(ggml_dyn_tallocr_alloc(a_, 64, nullptr, nullptr));
}

}  // namespace
