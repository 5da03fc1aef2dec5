#include "apps/common/utf8.h"

#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
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

// Prompt strings: hand-written cases (offsets counted by hand), then random bytes against
// testing/utf8_check's independent validator: a problem exactly when the bytes have a NUL or are
// not UTF-8.
TEST(PromptTextProblemTest, NamesTheFirstBadByteAndWhatItIs) {
  EXPECT_EQ(PromptTextProblem(""), "");
  EXPECT_EQ(PromptTextProblem("Ask not \xC3\xA9t\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80 \x01\x7F"), "");
  EXPECT_THAT(PromptTextProblem(std::string("ab\0cd", 5)), ::testing::StartsWith("has a NUL byte at offset 2:"));
  EXPECT_EQ(PromptTextProblem("ok \xED\xA0\x80 x"),
            "has '\\xED\\xA0\\x80' at offset 3, a UTF-16 surrogate (CESU-8), not UTF-8: expected UTF-8 text");
  EXPECT_EQ(PromptTextProblem("\xED\xBF\xBF"),
            "has '\\xED\\xBF\\xBF' at offset 0, a UTF-16 surrogate (CESU-8), not UTF-8: expected UTF-8 text");
  EXPECT_EQ(PromptTextProblem("a\xFF"), "has '\\xFF' at offset 1, not UTF-8: expected UTF-8 text");
  EXPECT_EQ(PromptTextProblem("a\x80"), "has '\\x80' at offset 1, not UTF-8: expected UTF-8 text");
  EXPECT_EQ(PromptTextProblem("\xC0\xAF"), "has '\\xC0' at offset 0, not UTF-8: expected UTF-8 text");  // overlong
  EXPECT_EQ(PromptTextProblem("\xF4\x90\x80\x80"), "has '\\xF4' at offset 0, not UTF-8: expected UTF-8 text");
  EXPECT_EQ(PromptTextProblem("xy\xE4\xB8"),
            "has '\\xE4\\xB8' at offset 2, not UTF-8 (the text ends inside the character): expected UTF-8 text");
  EXPECT_EQ(PromptTextProblem("\xE4\xB8z"), "has '\\xE4\\xB8' at offset 0, not UTF-8: expected UTF-8 text");
}

TEST(PromptTextProblemTest, AgreesWithAnIndependentValidator) {
  std::mt19937 rng(11);
  for (int iter = 0; iter < 5000; ++iter) {
    std::string bytes(rng() % 12, '\0');
    for (char& b : bytes) {
      const uint32_t r = rng();
      const unsigned char pool[] = {0x41, 0x80, 0xBF, 0xA0, 0x9F, 0x8F, 0x90, 0xC2, 0xDF, 0xC0,
                                    0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF, 0x00};
      b = static_cast<char>(r % 3 == 0 ? r >> 8 : pool[(r >> 8) % sizeof(pool)]);
    }
    size_t bad = 0;
    const bool valid = IsValidUtf8(bytes, &bad);
    const size_t nul = bytes.find('\0');
    const std::string problem = PromptTextProblem(bytes);
    ASSERT_EQ(problem.empty(), valid && nul == std::string::npos) << absl::CHexEscape(bytes);
    if (!valid && (nul == std::string::npos || bad < nul)) {  // the first problem is the bad sequence
      EXPECT_THAT(problem, ::testing::HasSubstr(absl::StrCat("' at offset ", bad, ", "))) << absl::CHexEscape(bytes);
    }
  }
}

}  // namespace
}  // namespace whisper
