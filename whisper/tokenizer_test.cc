#include "whisper/tokenizer.h"

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace whisper {
namespace {

TEST(Tokenizer, GreedyLongestPrefixPerPiece) {
  const std::vector<std::string> vocab = {"H", "e", "l", "o", "Hel", "lo", " w", " wor", "ld", ",", " ", "!", "'s"};
  Tokenizer tok(vocab);
  auto ids = tok.Encode("Hello world's!");
  ASSERT_TRUE(ids.ok()) << ids.status();
  // "Hello" -> Hel + lo; " world" -> " wor" + "ld"; "'s"; "!"
  EXPECT_EQ(*ids, (std::vector<Token>{4, 5, 7, 8, 12, 11}));
}

TEST(Tokenizer, UnknownBytesAreSkippedAsWhisperCppDoes) {
  Tokenizer tok({"a", " a"});
  int skipped = -1;
  EXPECT_EQ(tok.EncodeSkipping("ab a", &skipped), (std::vector<Token>{0, 1}));
  EXPECT_EQ(skipped, 1);
  auto ids = tok.Encode("ab");
  ASSERT_FALSE(ids.ok());
  EXPECT_NE(ids.status().message().find("1 byte(s)"), std::string::npos) << ids.status();
}

// whisper.cpp fills token_to_id in file order: of two ids with the same text the later wins.
TEST(Tokenizer, RepeatedTextGivesTheLastId) {
  Tokenizer tok({"x", "y", "x", "xy"});
  EXPECT_EQ(tok.Find("x"), 2);
  EXPECT_EQ(tok.Find("xy"), 3);
  EXPECT_EQ(tok.Find("z"), -1);
  EXPECT_EQ(tok.Find(""), -1);
  EXPECT_EQ(tok.EncodeSkipping("xxyx", nullptr), (std::vector<Token>{2, 3, 2}));
}

// A tokenizer over a WhisperVocab (no copy of the texts) encodes as one over the same texts, and
// never returns a special id (their synthesized names are not token text).
TEST(Tokenizer, OverAVocabEqualsOverItsTexts) {
  const std::vector<std::string> texts = {"H", "e", "l", "o", "Hel", "lo", " w", " wor", "ld", ",", " ", "!", "l"};
  const WhisperVocab vocab(texts, 51864);
  const Tokenizer by_vocab(vocab);
  const Tokenizer by_texts(texts);
  const std::string text = "Hello, world! lol";
  EXPECT_EQ(by_vocab.EncodeSkipping(text, nullptr), by_texts.EncodeSkipping(text, nullptr));
  EXPECT_EQ(by_vocab.Find("l"), 12);
  EXPECT_EQ(by_vocab.Find("[_SOT_]"), -1);
}

// The split equals std::regex's with whisper.cpp's pattern (the implementation it replaces, used
// here as the oracle on short texts) for text mixing every class, contractions, runs of spaces and
// tabs before a word, newlines, trailing spaces and UTF-8.
TEST(Tokenizer, SplitMatchesTheRegexPattern) {
  static const std::regex kPattern(
      R"('s|'t|'re|'ve|'m|'ll|'d| ?[[:alpha:]]+| ?[[:digit:]]+| ?[^\s[:alpha:][:digit:]]+|\s+(?!\S)|\s+)");
  const std::vector<std::string> texts = {
      "Hello world's  it'll 42x  \tgo!! ...  end\n\nnew \xc3\xa9t\xc3\xa9 'Re '  7 d'x   ",
      " And so, my fellow Americans",
      "   leading",
      "a\tb\n c  \r\n",
      "don't WE'LL 'll'''s",
      "1,000,000.50$ 3.14",
      "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xf0\x9f\x99\x82!",
      "",
      " ",
      "x",
  };
  for (const std::string& text : texts) {
    std::vector<std::string> want;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kPattern); it != std::sregex_iterator(); ++it) {
      want.push_back(it->str());
    }
    EXPECT_EQ(Tokenizer::Split(text), want) << "'" << text << "'";
  }
}

TEST(Tokenizer, LongTextIsSafe) {
  Tokenizer tok({"a", "aaaa", " "});
  const std::vector<Token> ids = tok.EncodeSkipping(std::string(200000, 'a'), nullptr);
  EXPECT_EQ(ids.size(), 50000u);  // 200000 / 4, longest prefix "aaaa" each time
}

TEST(Tokenizer, NonSpeechTokensAreSingleTokenSymbols) {
  Tokenizer tok({"a", "\"", " (", "♪", " -", "xyz"});
  EXPECT_EQ(tok.NonSpeechTokens(), (std::vector<Token>{1, 2, 3, 4}));
}

// OpenAI's list adds the first token of the music signs' encodings: E2 99 (the first two bytes
// of U+2669..U+266F) alone and after a space. "♫" (E2 99 AB) is a whole token here, so it is in
// both lists; the lone byte E2 is a shorter prefix and is not chosen.
TEST(Tokenizer, OpenAiNonSpeechTokensAddTheMusicSignsFirstToken) {
  Tokenizer tok({"a", "\"", "\xE2\x99", " \xE2\x99", "\xE2\x99\xAB", "\xE2"});
  EXPECT_EQ(tok.NonSpeechTokens(), (std::vector<Token>{1, 4}));
  EXPECT_EQ(tok.OpenAiNonSpeechTokens(), (std::vector<Token>{1, 4, 2, 3}));
  // Without partial-character tokens (a vocabulary whose such tokens were replaced by U+FFFD)
  // there is nothing to add: not " ", the longest prefix of " ♪" there.
  Tokenizer replaced({"a", "\"", "\xEF\xBF\xBD", " \xEF\xBF\xBD", " "});
  EXPECT_EQ(replaced.OpenAiNonSpeechTokens(), replaced.NonSpeechTokens());
}

}  // namespace
}  // namespace whisper
