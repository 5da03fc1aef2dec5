#include "whisper/tokenizer.h"

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

TEST(Tokenizer, UnknownPieceIsAnError) {
  Tokenizer tok({"a"});
  auto ids = tok.Encode("ab");
  ASSERT_FALSE(ids.ok());
  EXPECT_NE(ids.status().message().find("'b'"), std::string::npos);
}

TEST(Tokenizer, NonSpeechTokensAreSingleTokenSymbols) {
  Tokenizer tok({"a", "\"", " (", "♪", " -", "xyz"});
  EXPECT_EQ(tok.NonSpeechTokens(), (std::vector<Token>{1, 2, 3, 4}));
}

}  // namespace
}  // namespace whisper
