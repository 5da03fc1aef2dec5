// End-to-end: language and task requests on an English-only model (tiny.en) follow faster-whisper
// 1.2.1's rule (apps/common/request_rules.h): the run goes on in English, exit 0, with faster-whisper's
// warning on stderr; -l auto is a note, not a warning. The transcript is the one -l en gives.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "whisper/e2e/cli_runner.h"

namespace whisper_e2e {
namespace {

// faster-whisper 1.2.1 faster_whisper/transcribe.py (WhisperModel.transcribe), the warning its
// logger prints for language="de" on an English-only model.
std::string FasterWhisperWarning(const std::string& language) {
  return "The current model is English-only but the language parameter is set to '" + language +
         "'; using 'en' instead.";
}
const char kTranslateWarning[] =
    "The current model is English-only but the task parameter is set to 'translate'; using 'transcribe' instead.";

class CliLanguageTest : public ::testing::Test {
 protected:
  CliRun Run(const std::string& audio, const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"-m", testdata::ModelPath("ggml-tiny.en.bin"), "-f", audio, "-t", "2", "-np",
                                     "-bs", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunCli(args);
  }
};

TEST_F(CliLanguageTest, EnglishOnlyModelWarnsAndTranscribesInEnglish) {
  ASSERT_TRUE(ModelAvailable());
  const std::string jfk = testdata::SharedData("jfk.wav");
  const CliRun en = Run(jfk, {"-l", "en"});
  ASSERT_EQ(en.exit_code, 0) << en.err;
  EXPECT_EQ(en.err, "");
  EXPECT_NE(en.out.find("ask not what your country can do for you"), std::string::npos) << en.out;

  struct Case {
    std::vector<std::string> flags;
    std::string err;
  };
  const Case cases[] = {
      {{"-l", "de"}, "warning: " + FasterWhisperWarning("de") + "\n"},
      {{"-l", "german"}, "warning: " + FasterWhisperWarning("german") + "\n"},
      {{"-tr"}, std::string("warning: ") + kTranslateWarning + "\n"},
      {{"-l", "de", "-tr"},
       "warning: " + FasterWhisperWarning("de") + "\nwarning: " + kTranslateWarning + "\n"},
      // Informational, and silent under -np like the CLI's other notes.
      {{"-l", "auto"}, ""},
  };
  for (const Case& c : cases) {
    const CliRun run = Run(jfk, c.flags);
    EXPECT_EQ(run.exit_code, 0) << c.flags[0] << ": " << run.err;
    EXPECT_EQ(run.err, c.err) << c.flags[0];
    EXPECT_EQ(run.out, en.out) << c.flags[0];
  }
}

TEST_F(CliLanguageTest, AutoIsANoteNotAWarning) {
  ASSERT_TRUE(ModelAvailable());
  const CliRun run = RunCli({"-m", testdata::ModelPath("ggml-tiny.en.bin"), "-f", testdata::SharedData("jfk.wav"),
                             "-t", "2", "-bs", "1", "-l", "auto", "-d", "3000"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("note: the model is English-only: transcribing in English ('en') without language "
                         "detection\n"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(run.err.find("warning"), std::string::npos) << run.err;
}

// A Mandarin clip with -l zh: the same warning naming 'zh', and the same transcript as -l en
// (tiny.en hears it as English; the check is that zh changes nothing but the warning).
TEST_F(CliLanguageTest, ChineseClipWarnsAndDecodesAsEnglish) {
  ASSERT_TRUE(ModelAvailable());
  const std::string zh = testdata::SharedData("zh_aishell_BAC009S0764W0121.wav");
  const CliRun en = Run(zh, {"-l", "en"});
  ASSERT_EQ(en.exit_code, 0) << en.err;
  const CliRun run = Run(zh, {"-l", "zh"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "warning: " + FasterWhisperWarning("zh") + "\n");
  EXPECT_EQ(run.out, en.out);
}

// One thread bound for the CLI and Python (request_rules.h kMaxThreads = 512).
TEST_F(CliLanguageTest, ThreadBound) {
  const CliRun run = Run(testdata::SharedData("jfk.wav"), {"-t", "100000"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("512"), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "");
}

}  // namespace
}  // namespace whisper_e2e
