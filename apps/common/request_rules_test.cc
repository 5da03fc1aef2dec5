#include "apps/common/request_rules.h"

#include "gtest/gtest.h"

namespace whisper {
namespace {

using Level = LanguageDecision::Level;

// faster-whisper 1.2.1, faster_whisper/transcribe.py (WhisperModel.transcribe):
//   "The current model is English-only but the language parameter is set to '%s'; "
//   "using 'en' instead." % language
std::string FasterWhisperLanguageWarning(const std::string& language) {
  return "The current model is English-only but the language parameter is set to '" + language +
         "'; using 'en' instead.";
}

TEST(DecideLanguageTest, MultilingualModelKeepsTheRequest) {
  for (const char* lang : {"de", "auto", "en", "zh"}) {
    for (bool tr : {false, true}) {
      const LanguageDecision d = DecideLanguage(/*multilingual=*/true, lang, tr);
      EXPECT_EQ(d.language, lang);
      EXPECT_EQ(d.translate, tr);
      EXPECT_TRUE(d.notes.empty());
    }
  }
}

TEST(DecideLanguageTest, EnglishOnlyModelEnglishIsSilent) {
  for (const char* lang : {"en", "english"}) {
    const LanguageDecision d = DecideLanguage(false, lang, false);
    EXPECT_EQ(d.language, "en");
    EXPECT_FALSE(d.translate);
    EXPECT_TRUE(d.notes.empty()) << lang;
  }
}

TEST(DecideLanguageTest, EnglishOnlyModelOtherLanguageWarnsAsFasterWhisper) {
  for (const char* lang : {"de", "zh", "german"}) {
    const LanguageDecision d = DecideLanguage(false, lang, false);
    EXPECT_EQ(d.language, "en");
    EXPECT_FALSE(d.translate);
    ASSERT_EQ(d.notes.size(), 1u);
    EXPECT_EQ(d.notes[0].level, Level::kWarning);
    EXPECT_EQ(d.notes[0].message, FasterWhisperLanguageWarning(lang));
  }
}

TEST(DecideLanguageTest, EnglishOnlyModelTranslateWarnsAndTranscribes) {
  const LanguageDecision d = DecideLanguage(false, "en", true);
  EXPECT_EQ(d.language, "en");
  EXPECT_FALSE(d.translate);
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_EQ(d.notes[0].level, Level::kWarning);
  EXPECT_EQ(d.notes[0].message,
            "The current model is English-only but the task parameter is set to 'translate'; using 'transcribe' "
            "instead.");

  const LanguageDecision both = DecideLanguage(false, "de", true);
  ASSERT_EQ(both.notes.size(), 2u);
  EXPECT_EQ(both.notes[0].message, FasterWhisperLanguageWarning("de"));
  EXPECT_EQ(both.notes[1].message, d.notes[0].message);
}

TEST(DecideLanguageTest, EnglishOnlyModelAutoIsInformational) {
  const LanguageDecision d = DecideLanguage(false, "auto", false);
  EXPECT_EQ(d.language, "en");
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_EQ(d.notes[0].level, Level::kInfo);
  EXPECT_EQ(d.notes[0].message, "the model is English-only: transcribing in English ('en') without language detection");
}

}  // namespace
}  // namespace whisper
