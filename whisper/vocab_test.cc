#include "whisper/vocab.h"

#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "whisper/model_file.h"

namespace whisper {
namespace {

std::vector<std::string> StoredTokens(const std::string& name) {
  const std::string path = testdata::SharedData(name);
  std::ifstream f(path, std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), {});
  absl::StatusOr<ModelFileHeader> h = ParseModelFileHeader(bytes.data(), bytes.size(), path);
  EXPECT_TRUE(h.ok()) << h.status();
  return h.ok() ? h->tokens : std::vector<std::string>();
}

TEST(VocabTest, EnglishOnlyTinyEn) {
  const WhisperVocab v(StoredTokens("header-only-ggml-tiny.en.bin"), 51864);
  EXPECT_EQ(v.n_vocab(), 51864);
  EXPECT_EQ(v.n_stored(), 50257);
  EXPECT_FALSE(v.is_multilingual());
  const SpecialTokens& s = v.special();
  EXPECT_EQ(s.eot, 50256);
  EXPECT_EQ(s.sot, 50257);
  EXPECT_EQ(s.beg, 50363);
  EXPECT_EQ(v.token(50256), "<|endoftext|>");  // stored in the .en file
  EXPECT_EQ(v.token(50257), "[_SOT_]");
  EXPECT_EQ(v.token(50258), "[_extra_token_50258]");  // no language tokens in .en
  EXPECT_EQ(v.token(50357), "[_TRANSLATE_]");
  EXPECT_EQ(v.token(50358), "[_TRANSCRIBE_]");
  EXPECT_EQ(v.token(50359), "[_SOLM_]");
  EXPECT_EQ(v.token(50360), "[_PREV_]");
  EXPECT_EQ(v.token(50361), "[_NOSP_]");
  EXPECT_EQ(v.token(50362), "[_NOT_]");
  EXPECT_EQ(v.token(50363), "[_BEG_]");
  EXPECT_EQ(v.token(50364), "[_TT_1]");
  EXPECT_EQ(v.token(51863), "[_TT_1500]");  // 30.00 s
  EXPECT_EQ(v.token(51864), "");
  EXPECT_EQ(v.token(-1), "");
  // GPT-2 byte-level tokens: " the" is 262, "Hello" 15496.
  EXPECT_EQ(v.token(262), " the");
  EXPECT_EQ(v.id(" the"), 262);
  EXPECT_EQ(v.id("Hello"), 15496);
  EXPECT_EQ(v.id("<|endoftext|>"), 50256);
  EXPECT_EQ(v.id("no such token text"), -1);
  EXPECT_EQ(v.id("[_SOT_]"), -1);  // synthesized names are not token text (as in whisper.cpp)
}

// Every stored text maps to the id whisper.cpp's token_to_id gives it: filled in file order, so
// the last id of a repeated text wins (tiny.en stores 7 texts more than once, e.g. U+FFFD 255
// times, from the converter's lossy decoding). The oracle is that fill, in a std::map.
TEST(VocabTest, IdOfEveryStoredTextIsItsLastOccurrence) {
  const std::vector<std::string> stored = StoredTokens("header-only-ggml-tiny.en.bin");
  ASSERT_EQ(stored.size(), 50257u);
  std::map<std::string, Token> last;
  for (size_t i = 0; i < stored.size(); ++i) last[stored[i]] = static_cast<Token>(i);
  EXPECT_EQ(last.size(), 50257u - 254 - 42 - 30 - 4 - 1 - 1 - 1) << "tiny.en's repeated texts changed";
  const WhisperVocab v(stored, 51864);
  for (const auto& [text, id] : last) ASSERT_EQ(v.id(text), id) << "'" << text << "'";
  EXPECT_EQ(v.id(""), -1);
  EXPECT_EQ(v.id(std::string(" the") + '\0'), -1);  // a longer text with a stored prefix
  EXPECT_EQ(v.id(" th"), 294);                         // a stored prefix of a stored text
}

// LongestPrefix equals trying every length from the longest down against the std::map oracle
// (whisper.cpp's whisper_tokenize loop), on every suffix of a text mixing words, digits,
// punctuation, UTF-8 (including U+FFFD, stored 255 times) and bytes no token starts with.
TEST(VocabTest, LongestPrefixIsTheLongestStoredPrefix) {
  const std::vector<std::string> stored = StoredTokens("header-only-ggml-tiny.en.bin");
  std::map<std::string, Token> last;
  for (size_t i = 0; i < stored.size(); ++i) last[stored[i]] = static_cast<Token>(i);
  const WhisperVocab v(stored, 51864);
  const std::string text = std::string(" And so, my fellow Americans: ask not 1234567 \xef\xbf\xbd\xef\xbf\xbd caf\xc3\xa9 ") +
                           "\x01\xff\xfe !!! <|endoftext|>thereby beauty's rose";
  int matched = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const std::string s = text.substr(i);
    Token want = -1;
    size_t want_len = 0;
    for (size_t j = s.size(); j > 0 && want < 0; --j) {
      auto it = last.find(s.substr(0, j));
      if (it != last.end()) want = it->second, want_len = j;
    }
    size_t len = 99;
    EXPECT_EQ(v.LongestPrefix(s, &len), want) << "at byte " << i;
    EXPECT_EQ(len, want_len) << "at byte " << i;
    matched += want >= 0;
  }
  EXPECT_GT(matched, 50);                                  // both cases were exercised:
  EXPECT_LT(matched, static_cast<int>(text.size()));       // bytes no token starts with too
  size_t len = 99;
  EXPECT_EQ(v.LongestPrefix("", &len), -1);
  EXPECT_EQ(len, 0u);
  EXPECT_EQ(v.LongestPrefix("<|endoftext|>x", &len), 50256);
  EXPECT_EQ(len, 13u);
}

TEST(VocabTest, MultilingualTiny) {
  const WhisperVocab v(StoredTokens("header-only-ggml-tiny.bin"), 51865);
  EXPECT_TRUE(v.is_multilingual());
  const SpecialTokens& s = v.special();
  EXPECT_EQ(s.eot, 50257);
  EXPECT_EQ(s.sot, 50258);
  EXPECT_EQ(v.token(50256), "");  // the multilingual file stores an empty token there
  EXPECT_EQ(v.token(50257), "[_EOT_]");
  EXPECT_EQ(v.token(50258), "[_SOT_]");
  EXPECT_EQ(v.token(50259), "[_LANG_en]");
  EXPECT_EQ(v.token(50260), "[_LANG_zh]");
  EXPECT_EQ(v.token(50357), "[_LANG_su]");  // id 98, the last of 99 languages
  EXPECT_EQ(v.token(50358), "[_TRANSLATE_]");
  EXPECT_EQ(v.token(50364), "[_BEG_]");
}

TEST(VocabTest, LargeV3HasYue) {
  const WhisperVocab v(std::vector<std::string>{"a", "b"}, 51866);
  EXPECT_EQ(v.special().num_languages, 100);
  EXPECT_EQ(v.token(50358), "[_LANG_yue]");
  EXPECT_EQ(v.token(50359), "[_TRANSLATE_]");
  EXPECT_EQ(v.token(50365), "[_BEG_]");
  EXPECT_EQ(v.token(2), "[_extra_token_2]");
}

TEST(VocabTest, LanguageTable) {
  EXPECT_STREQ(LanguageCode(0), "en");
  EXPECT_STREQ(LanguageCode(6), "fr");
  EXPECT_STREQ(LanguageCode(98), "su");
  EXPECT_STREQ(LanguageCode(99), "yue");
  EXPECT_EQ(LanguageCode(100), nullptr);
  EXPECT_EQ(LanguageCode(-1), nullptr);
  for (int i = 0; i < kMaxLanguages; ++i) EXPECT_EQ(LanguageId(LanguageCode(i)), i);
  EXPECT_EQ(LanguageId("xx"), -1);
  EXPECT_EQ(LanguageId(""), -1);
}

// faster-whisper 1.2.1 tokenizer.py split_to_word_tokens: {"zh", "ja", "th", "lo", "my", "yue"}.
TEST(VocabTest, LanguagesWrittenWithoutSpaces) {
  int n = 0;
  for (int i = 0; i < kMaxLanguages; ++i) n += SplitsWordsOnUnicode(i);
  EXPECT_EQ(n, 6);
  for (const char* code : {"zh", "ja", "th", "lo", "my", "yue"}) EXPECT_TRUE(SplitsWordsOnUnicode(LanguageId(code))) << code;
  EXPECT_EQ(LanguageId("zh"), 1);  // whisper.cpp's ids, by hand from g_lang
  EXPECT_EQ(LanguageId("ja"), 7);
  EXPECT_EQ(LanguageId("th"), 30);
  EXPECT_EQ(LanguageId("lo"), 77);
  EXPECT_EQ(LanguageId("my"), 87);
  EXPECT_FALSE(SplitsWordsOnUnicode(LanguageId("ko")));  // Korean separates words with spaces
  EXPECT_FALSE(SplitsWordsOnUnicode(0));
  EXPECT_FALSE(SplitsWordsOnUnicode(-1));
  EXPECT_FALSE(SplitsWordsOnUnicode(kMaxLanguages));
}

}  // namespace
}  // namespace whisper
