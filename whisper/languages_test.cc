#include "whisper/languages.h"

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace whisper {
namespace {

TEST(Languages, IdsMatchWhisperCppTable) {
  EXPECT_EQ(LanguageId("en"), 0);
  EXPECT_EQ(LanguageId("zh"), 1);
  EXPECT_EQ(LanguageId("de"), 2);
  EXPECT_EQ(LanguageId("ja"), 7);
  EXPECT_EQ(LanguageId("su"), 98);
  EXPECT_EQ(LanguageId("yue"), 99);
  EXPECT_EQ(LanguageId("xx"), -1);
  EXPECT_STREQ(LanguageCode(6), "fr");
  EXPECT_STREQ(LanguageCode(100), "");
  std::set<std::string> unique;
  for (int i = 0; i < kNumLanguageIds; ++i) unique.insert(LanguageCode(i));
  EXPECT_EQ(unique.size(), 100u);
}

}  // namespace
}  // namespace whisper
