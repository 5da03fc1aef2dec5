#include "apps/common/utf8.h"

#include <random>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "testing/utf8_check.h"

namespace whisper {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

using ::ggml_testing::IsValidUtf8;

TEST(Utf8Test, ValidTextPassesUnchanged) {
  const std::string s = " And so my fellow Americans, h\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x98\x80";
  EXPECT_EQ(RepairUtf8(s), s);
}

TEST(Utf8Test, CharacterSplitAcrossPiecesIsHeldBack) {
  Utf8Carry c;
  EXPECT_EQ(c.Push("a\xC3"), "a");
  EXPECT_FALSE(c.empty());
  EXPECT_EQ(c.Push("\xA9"
                   "b"),
            "\xC3\xA9"
            "b");
  EXPECT_TRUE(c.empty());
  // U+1F600 in three pieces.
  EXPECT_EQ(c.Push("\xF0\x9F"), "");
  EXPECT_EQ(c.Push("\x98"), "");
  EXPECT_EQ(c.Push("\x80!"), "\xF0\x9F\x98\x80!");
  EXPECT_EQ(c.Finish(), "");
}

TEST(Utf8Test, IncompleteTailAtTheEndBecomesOneReplacement) {
  Utf8Carry c;
  EXPECT_EQ(c.Push("x\xE2\x82"), "x");
  EXPECT_EQ(c.Finish(), kFffd);
  EXPECT_TRUE(c.empty());
}

// Expected values follow Unicode 15 section 3.9's maximal-subpart rule (table 3-8), which is
// also what Python's bytes.decode("utf-8", "replace") returns for each input.
TEST(Utf8Test, IllFormedSequencesFollowTheMaximalSubpartRule) {
  const struct {
    const char* in;
    std::string out;
  } cases[] = {
      {"\x80", kFffd},                                    // stray continuation
      {"\xC0\xAF", kFffd + kFffd},                         // overlong lead, then a stray byte
      {"\xE0\x80\x80", kFffd + kFffd + kFffd},             // E0 needs A0..BF next
      {"\xED\xA0\x80", kFffd + kFffd + kFffd},             // surrogate U+D800
      {"\xF4\x90\x80\x80", kFffd + kFffd + kFffd + kFffd},  // past U+10FFFF
      {"\xF5\x80", kFffd + kFffd},                         // F5..FF never lead
      {"\xE2\x82" "A", kFffd + "A"},                        // truncated 3-byte form: one U+FFFD
      {"\xF0\x9F\x98" "A", kFffd + "A"},                    // truncated 4-byte form: one U+FFFD
      {"a\xFF" "b", "a" + kFffd + "b"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(RepairUtf8(c.in), c.out) << c.in;
  }
}

TEST(Utf8Test, SegmentsCarryTheSplitCharacterForward) {
  std::vector<TranscriptSegment> segs(3);
  segs[0].text = " a\xE2\x82";  // U+20AC's first two bytes ...
  segs[1].text = "\xAC b";      // ... and its last
  segs[2].text = " c\xF0\x9F";  // incomplete at the very end
  segs[0].t0 = 0;
  segs[0].t1 = 100;
  RepairSegmentTexts(&segs);
  EXPECT_EQ(segs[0].text, " a");
  EXPECT_EQ(segs[1].text, "\xE2\x82\xAC b");
  EXPECT_EQ(segs[2].text, " c" + kFffd);
  EXPECT_EQ(segs[0].t1, 100);
}

// Any bytes cut into any pieces: the output is valid UTF-8 and does not depend on the cuts.
TEST(Utf8Test, RandomBytesAndCutsGiveValidOutputIndependentOfCuts) {
  std::mt19937 rng(7);
  for (int iter = 0; iter < 2000; ++iter) {
    std::string bytes(rng() % 40, '\0');
    for (char& b : bytes) {
      const uint32_t r = rng();
      // Bias toward the interesting bytes: leads, continuations, ASCII.
      const unsigned char pool[] = {0x41, 0x80, 0xBF, 0xA0, 0x9F, 0x8F, 0x90, 0xC2, 0xDF, 0xC0,
                                    0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF, 0x00};
      b = static_cast<char>(r % 3 == 0 ? r >> 8 : pool[(r >> 8) % sizeof(pool)]);
    }
    const std::string whole = RepairUtf8(bytes);
    ASSERT_TRUE(IsValidUtf8(whole)) << iter;
    Utf8Carry c;
    std::string pieced;
    for (size_t i = 0; i < bytes.size();) {
      const size_t n = std::min<size_t>(bytes.size() - i, rng() % 4);
      pieced += c.Push(absl::string_view(bytes).substr(i, n));
      i += n;
    }
    pieced += c.Finish();
    ASSERT_EQ(pieced, whole) << iter;
  }
}

}  // namespace
}  // namespace whisper
