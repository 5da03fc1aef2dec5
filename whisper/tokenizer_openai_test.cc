// Tokenizer::EncodeOpenAi and SplitOpenAi: hand-built vocabularies for the merge order and the
// Unicode split, and the real vocabularies of tiny.en and base against faster-whisper 1.2.1's
// tokenizer.json on texts in several scripts (testdata/fw_tokenize.json,
// tools/reference/fw_tokenize.py).
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testdata/paths.h"
#include "whisper/model_file.h"
#include "whisper/tokenizer.h"

namespace whisper {
namespace {

// The lowest id of an adjacent pair merges first, whatever its place; the leftmost among equals;
// merges stop when no adjacent pair is a token ("abc" with "ab" < "bc": ab + c, the greedy
// longest match too; with "bc" < "ab": a + bc, where greedy takes ab + c).
TEST(TokenizerOpenAi, MergesByRankNotLength) {
  EXPECT_EQ(Tokenizer({"a", "b", "c", "ab", "bc"}).EncodeOpenAi("abc", nullptr), (std::vector<Token>{3, 2}));
  const Tokenizer tok({"a", "b", "c", "bc", "ab"});
  EXPECT_EQ(tok.EncodeOpenAi("abc", nullptr), (std::vector<Token>{0, 3}));
  EXPECT_EQ(tok.EncodeSkipping("abc", nullptr), (std::vector<Token>{4, 2}));  // whisper.cpp's greedy match
  // "aaa": the leftmost "aa" first, then "aa" + "a" is no token.
  EXPECT_EQ(Tokenizer({"a", "aa"}).EncodeOpenAi("aaa", nullptr), (std::vector<Token>{1, 0}));
  // A merge makes a new pair with its left neighbour: "abcd" -> a (bc) d -> (abc) d.
  EXPECT_EQ(Tokenizer({"a", "b", "c", "d", "bc", "abc"}).EncodeOpenAi("abcd", nullptr),
            (std::vector<Token>{5, 3}));
}

TEST(TokenizerOpenAi, LoneBytesWithoutATokenAreSkipped) {
  int skipped = -1;
  EXPECT_EQ(Tokenizer({"a", "b"}).EncodeOpenAi("axb", &skipped), (std::vector<Token>{0, 1}));
  EXPECT_EQ(skipped, 1);
}

// GPT-2's pattern over Unicode classes: CJK text is letters (split at its punctuation), other
// scripts' digits are numbers, U+3000 and U+00A0 are spaces; whisper.cpp's ASCII classes keep a
// CJK sentence in one piece.
TEST(TokenizerOpenAi, SplitsOnUnicodeClasses) {
  using V = std::vector<std::string>;
  EXPECT_EQ(Tokenizer::SplitOpenAi(" 以下是普通话的句子，使用。"), (V{" 以下是普通话的句子", "，", "使用", "。"}));
  EXPECT_EQ(Tokenizer::Split(" 以下是普通话的句子，使用。"), (V{" 以下是普通话的句子，使用。"}));
  EXPECT_EQ(Tokenizer::SplitOpenAi("ab٣٤x"), (V{"ab", "٣٤", "x"}));
  // " ?" is U+0020 alone: U+3000 before a letter is a piece of its own.
  EXPECT_EQ(Tokenizer::SplitOpenAi("a\u3000\u3000b"), (V{"a", "\u3000", "\u3000", "b"}));
  EXPECT_EQ(Tokenizer::SplitOpenAi("it's  x \n"), (V{"it", "'s", " ", " x", " \n"}));
  EXPECT_EQ(Tokenizer::SplitOpenAi("Größe!?"), (V{"Größe", "!?"}));
  // Ill-formed UTF-8: each stray byte is a character of class "other".
  EXPECT_EQ(Tokenizer::SplitOpenAi("a\xff\xfe b"), (V{"a", "\xff\xfe", " b"}));
}

TEST(TokenizerOpenAi, LongPieceIsSafe) {
  const std::string text(1 << 18, 'a');  // one letter piece of 256 KiB: O(n log n) merges
  const std::vector<Token> ids = Tokenizer({"a", "aa", "aaaa"}).EncodeOpenAi(text, nullptr);
  EXPECT_EQ(ids, std::vector<Token>((1 << 18) / 4, 2));
}

std::vector<std::string> StoredTokens(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> head(4 << 20);  // the header, mel filters and vocabulary come first
  in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  absl::StatusOr<ModelFileHeader> header = ParseModelFileHeader(head.data(), head.size(), path);
  EXPECT_TRUE(header.ok()) << header.status() << " " << testdata::MissingModelHint(path);
  return header.ok() ? header->tokens : std::vector<std::string>();
}

void ExpectFasterWhisperIds(const std::string& model, const std::string& file) {
  std::ifstream in(testdata::RepoRoot() + "/testdata/fw_tokenize.json");
  ASSERT_TRUE(in) << "testdata/fw_tokenize.json";
  const nlohmann::json ref = nlohmann::json::parse(in);
  const std::vector<std::string> stored = StoredTokens(testdata::ModelPath(file));
  ASSERT_FALSE(stored.empty());
  const Tokenizer tok(stored);
  ASSERT_GE(ref["models"][model].size(), 10u);
  for (const nlohmann::json& c : ref["models"][model]) {
    const std::string text = c["text"];
    int skipped = -1;
    EXPECT_EQ(tok.EncodeOpenAi(text, &skipped), c["ids"].get<std::vector<Token>>()) << model << ": " << text;
    EXPECT_EQ(skipped, 0);
  }
}

TEST(TokenizerOpenAi, TinyEnEqualsFasterWhisper) { ExpectFasterWhisperIds("tiny.en", "ggml-tiny.en.bin"); }
TEST(TokenizerOpenAi, BaseEqualsFasterWhisper) { ExpectFasterWhisperIds("base", "ggml-base.bin"); }

}  // namespace
}  // namespace whisper
