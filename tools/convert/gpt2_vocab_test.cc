#include "tools/convert/gpt2_vocab.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ggml_whisper::convert {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

template <typename T>
std::string Msg(const absl::StatusOr<T>& s) {
  return std::string(s.status().message());
}

// Values from GPT-2's published bytes_to_unicode table.
TEST(Gpt2VocabTest, ByteToCodepointKnownValues) {
  EXPECT_EQ(Gpt2ByteToCodepoint('!'), 0x21u);
  EXPECT_EQ(Gpt2ByteToCodepoint('~'), 0x7Eu);
  EXPECT_EQ(Gpt2ByteToCodepoint(0xA1), 0xA1u);  // '¡'
  EXPECT_EQ(Gpt2ByteToCodepoint(0xFF), 0xFFu);
  EXPECT_EQ(Gpt2ByteToCodepoint(0x00), 0x100u);  // 'Ā'
  EXPECT_EQ(Gpt2ByteToCodepoint('\n'), 0x10Au);  // 'Ċ'
  EXPECT_EQ(Gpt2ByteToCodepoint(' '), 0x120u);   // 'Ġ'
  EXPECT_EQ(Gpt2ByteToCodepoint(0x7F), 0x121u);  // 'ġ'
  EXPECT_EQ(Gpt2ByteToCodepoint(0xA0), 0x142u);  // 'ł'
  EXPECT_EQ(Gpt2ByteToCodepoint(0xAD), 0x143u);  // 'Ń', the last one
}

TEST(Gpt2VocabTest, ByteToCodepointIsABijectionOntoItsAlphabet) {
  std::set<uint32_t> seen;
  for (int b = 0; b < 256; ++b) seen.insert(Gpt2ByteToCodepoint(static_cast<uint8_t>(b)));
  EXPECT_EQ(seen.size(), 256u);
  EXPECT_EQ(*seen.rbegin(), 0x143u);
}

// Encodes a code point as UTF-8 (test-side, for round trips).
std::string Utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

TEST(Gpt2VocabTest, TokenToBytes) {
  EXPECT_EQ(*Gpt2TokenToBytes("\xC4\xA0the"), " the");       // "Ġthe"
  EXPECT_EQ(*Gpt2TokenToBytes("\xC4\x8A\xC4\x8A"), "\n\n");  // "ĊĊ"
  EXPECT_EQ(*Gpt2TokenToBytes("<|endoftext|>"), "<|endoftext|>");
  EXPECT_EQ(*Gpt2TokenToBytes("\xC2\xA1"), "\xA1");  // '¡' is the raw byte 0xA1
  EXPECT_EQ(*Gpt2TokenToBytes("\xC3\xA2\xC4\xA4\xC2\xAC"), "\xE2\x82\xAC");  // "âĤ¬" = €
  EXPECT_EQ(*Gpt2TokenToBytes(""), "");
  std::string all_bytes, all_token;
  for (int b = 0; b < 256; ++b) {
    all_bytes += static_cast<char>(b);
    all_token += Utf8(Gpt2ByteToCodepoint(static_cast<uint8_t>(b)));
  }
  EXPECT_EQ(*Gpt2TokenToBytes(all_token), all_bytes);
}

TEST(Gpt2VocabTest, TokenToBytesErrors) {
  EXPECT_THAT(Msg(Gpt2TokenToBytes("a\xC5\x84")),  // U+0144, one past the alphabet
              HasSubstr("has U+0144, which is not in GPT-2's byte-level alphabet"));
  EXPECT_THAT(Msg(Gpt2TokenToBytes(" x")),  // a raw space is not in the alphabet
              HasSubstr("has U+0020"));
  EXPECT_THAT(Msg(Gpt2TokenToBytes("ab\xC4")), HasSubstr("is not valid UTF-8 at byte 2"));
}

TEST(Gpt2VocabTest, ParseVocabularyTxt) {
  EXPECT_THAT(ParseVocabularyTxt("!\n\xC4\xA0the\n<|endoftext|>\n"),
              ElementsAre("!", "\xC4\xA0the", "<|endoftext|>"));
  EXPECT_THAT(ParseVocabularyTxt("a\r\nb"), ElementsAre("a", "b"));
  EXPECT_THAT(ParseVocabularyTxt("a\n\nb\n"), ElementsAre("a", "", "b"));
  EXPECT_TRUE(ParseVocabularyTxt("").empty());
}

TEST(Gpt2VocabTest, ParseVocabularyJson) {
  absl::StatusOr<std::vector<std::string>> v =
      ParseVocabularyJson(R"(["!", "\u0120the", "<|endoftext|>"])", "v.json");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_THAT(*v, ElementsAre("!", "\xC4\xA0the", "<|endoftext|>"));
  EXPECT_THAT(Msg(ParseVocabularyJson("[\"a\", ", "v.json")), HasSubstr("v.json: not valid JSON"));
  EXPECT_THAT(Msg(ParseVocabularyJson("{\"a\": 1}", "v.json")),
              HasSubstr("v.json: expected a JSON list of token strings, found a object"));
  EXPECT_THAT(Msg(ParseVocabularyJson("[\"a\", 3]", "v.json")),
              HasSubstr("v.json: element 1 is a number, expected a string"));
}

TEST(Gpt2VocabTest, GgmlVocabFromTokens) {
  // "Ġa", "¡" (the byte A1 alone), "çļ" (E7 9A: the first two bytes of U+7684 '的', hand-derived
  // in convert_test.cc), "<|endoftext|>": the bytes are kept raw, valid UTF-8 or not.
  const std::vector<std::string> tokens = {"\xC4\xA0\x61", "\xC2\xA1", "\xC3\xA7\xC4\xBC",
                                           "<|endoftext|>", "<|x|>"};
  absl::StatusOr<std::vector<std::string>> raw = GgmlVocabFromTokens(tokens, 4);
  ASSERT_TRUE(raw.ok()) << raw.status();
  EXPECT_THAT(*raw, ElementsAre(" a", "\xA1", "\xE7\x9A", "<|endoftext|>"));
  EXPECT_THAT(Msg(GgmlVocabFromTokens(tokens, 6)),
              HasSubstr("the vocabulary has 5 tokens, the ggml file stores 6"));
  EXPECT_THAT(Msg(GgmlVocabFromTokens({"a", "b c"}, 2)),
              HasSubstr("vocabulary id 1: token 'b c' has U+0020"));
}

void WriteFile(const std::string& path, const std::string& text) {
  FILE* f = fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  fwrite(text.data(), 1, text.size(), f);
  fclose(f);
}

TEST(Gpt2VocabTest, ReadCt2VocabularyPrefersJson) {
  const char* tmp = getenv("TEST_TMPDIR");
  const std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/gpt2_vocab_test";
  mkdir(dir.c_str(), 0755);
  remove((dir + "/vocabulary.json").c_str());
  remove((dir + "/vocabulary.txt").c_str());
  EXPECT_THAT(Msg(ReadCt2Vocabulary(dir)),
              HasSubstr("neither " + dir + "/vocabulary.json nor " + dir + "/vocabulary.txt"));
  WriteFile(dir + "/vocabulary.txt", "a\nb\n");
  EXPECT_THAT(*ReadCt2Vocabulary(dir), ElementsAre("a", "b"));
  WriteFile(dir + "/vocabulary.json", "[\"x\"]");
  EXPECT_THAT(*ReadCt2Vocabulary(dir), ElementsAre("x"));
  WriteFile(dir + "/vocabulary.json", "[1]");
  EXPECT_THAT(Msg(ReadCt2Vocabulary(dir)), HasSubstr(dir + "/vocabulary.json: element 0"));
}

}  // namespace
}  // namespace ggml_whisper::convert
