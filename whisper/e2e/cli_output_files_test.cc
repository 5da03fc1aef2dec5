// End-to-end: the output files of `whisper:cli -otxt -ovtt -osrt -olrc -ocsv -oj` for jfk.wav
// (tiny.en, default beam search) equal the golden files in testdata/golden byte for byte, and the
// golden files hold faster-whisper's beam-5 segments (checked here a second way, from
// testdata/jfk_faster_whisper_beam5.json).
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testdata/paths.h"
#include "whisper/e2e/cli_runner.h"
#include "whisper/e2e/reference.h"

namespace whisper_e2e {
namespace {

const char* const kExtensions[] = {"txt", "vtt", "srt", "lrc", "csv", "json"};

// "HH:MM:SS.mmm" (sep '.') or "HH:MM:SS,mmm" (sep ',').
std::string Clock(int64_t ms, char sep) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%02lld:%02lld:%02lld%c%03lld", static_cast<long long>(ms / 3600000),
                static_cast<long long>(ms / 60000 % 60), static_cast<long long>(ms / 1000 % 60), sep,
                static_cast<long long>(ms % 1000));
  return buf;
}

// The value of the JSON's "systeminfo" line replaced by a placeholder, after checking its form:
// whisper_print_system_info(): "WHISPER : COREML = 0 | OPENVINO = 0 | CPU : <Highway target> = 1 |
// HIGHWAY = 1 | " (whisper-cli writes that function's string).
std::string NormalizeSystemInfo(const std::string& json) {
  static const std::regex line(
      R"re(\t"systeminfo": "WHISPER : COREML = 0 \| OPENVINO = 0 \| CPU : [A-Z0-9_]+ = 1 \| HIGHWAY = 1 \| ",\n)re");
  std::smatch m;
  if (!std::regex_search(json, m, line)) {
    ADD_FAILURE() << "no systeminfo line of the expected form in:\n" << json.substr(0, 200);
    return json;
  }
  return m.prefix().str() + "\t\"systeminfo\": \"<systeminfo>\",\n" + m.suffix().str();
}

std::string Golden(const std::string& ext) { return ReadFileOrFail("testdata/golden/jfk." + ext); }

TEST(CliOutputFilesTest, EqualGoldenFilesByteForByte) {
  ASSERT_TRUE(ModelAvailable());
  const std::string dir = MakeModelWorkDir("output_files");
  const CliRun run = RunCli({"-m", "models/ggml-tiny.en.bin", "-f", testdata::SharedData("jfk.wav"), "-t", "2", "-np",
                             "-otxt", "-ovtt", "-osrt", "-olrc", "-ocsv", "-oj", "-of", "jfk"},
                            dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  for (const char* ext : kExtensions) {
    std::string ours = ReadFileOrFail(dir + "/jfk." + ext);
    std::string golden = Golden(ext);
    if (std::string(ext) == "json") {
      ours = NormalizeSystemInfo(ours);
      golden = NormalizeSystemInfo(golden);
    }
    EXPECT_EQ(ours, golden) << "jfk." << ext;
  }
  // No partial or temporary files next to the outputs.
  for (const char* ext : kExtensions) {
    struct stat st;
    const std::string tmp = dir + "/jfk." + ext + ".tmp";
    EXPECT_NE(stat(tmp.c_str(), &st), 0) << tmp << " was left behind";
  }
}

// A write to standard output that fails (`> /dev/full`: ENOSPC) is exit 1 with a message naming
// standard output and the error, both for the transcript's lines and for `-otxt -of -`; it was
// exit 0 with the transcript lost. Run through the shell, as a user's redirect is.
TEST(CliOutputFilesTest, FailedWriteToStdoutIsExit1) {
  ASSERT_TRUE(ModelAvailable());
  const std::string dir = MakeModelWorkDir("stdout_full");
  const std::string cli = CliPath();
  for (const char* extra : {"", "-otxt -of -"}) {
    const std::string cmd = "cd '" + dir + "' && '" + cli + "' -m models/ggml-tiny.en.bin -f '" +
                            testdata::SharedData("jfk.wav") + "' -t 2 -np " + extra + " > /dev/full 2> err.txt";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << extra;
    EXPECT_EQ(WEXITSTATUS(status), 1) << extra;
    EXPECT_NE(ReadFileOrFail(dir + "/err.txt").find("error: writing to standard output failed (the transcript there is "
                                                    "incomplete): No space left on device"),
              std::string::npos)
        << extra << ": " << ReadFileOrFail(dir + "/err.txt");
  }
}

// The golden files against faster-whisper's beam-5 segments, formatted here independently.
TEST(CliOutputFilesTest, GoldenFilesHoldFasterWhisperSegments) {
  const std::vector<ReferenceSegment> ref = LoadReference("testdata/jfk_faster_whisper_beam5.json");
  ASSERT_EQ(ref.size(), 2u);
  std::string txt, vtt = "WEBVTT\n\n", srt, lrc = "[by:whisper.cpp]\n", csv = "start,end,text\n";
  for (size_t i = 0; i < ref.size(); ++i) {
    const ReferenceSegment& s = ref[i];
    ASSERT_EQ(s.text[0], ' ');
    txt += s.text + "\n";  // whisper-cli 1.8.5 output_txt keeps the leading space
    vtt += Clock(s.t0_ms, '.') + " --> " + Clock(s.t1_ms, '.') + "\n" + s.text + "\n\n";
    srt += std::to_string(i + 1) + "\n" + Clock(s.t0_ms, ',') + " --> " + Clock(s.t1_ms, ',') + "\n" + s.text + "\n\n";
    char stamp[16];
    std::snprintf(stamp, sizeof(stamp), "[%02lld:%02lld.%02lld]", static_cast<long long>(s.t0_ms / 60000),
                  static_cast<long long>(s.t0_ms / 1000 % 60), static_cast<long long>(s.t0_ms / 10 % 100));
    lrc += stamp + s.text + "\n";
    csv += std::to_string(s.t0_ms) + "," + std::to_string(s.t1_ms) + ",\"" + s.text + "\"\n";  // no quotes inside
  }
  EXPECT_EQ(Golden("txt"), txt);
  EXPECT_EQ(Golden("vtt"), vtt);
  EXPECT_EQ(Golden("srt"), srt);
  EXPECT_EQ(Golden("lrc"), lrc);
  EXPECT_EQ(Golden("csv"), csv);

  const nlohmann::json j = nlohmann::json::parse(Golden("json"), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["params"]["model"], "models/ggml-tiny.en.bin");
  EXPECT_EQ(j["model"]["vocab"], 51864);
  ASSERT_EQ(j["transcription"].size(), ref.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    const nlohmann::json& s = j["transcription"][i];
    EXPECT_EQ(s["text"], ref[i].text);
    EXPECT_EQ(s["offsets"]["from"], ref[i].t0_ms);
    EXPECT_EQ(s["offsets"]["to"], ref[i].t1_ms);
    EXPECT_EQ(s["timestamps"]["from"], Clock(ref[i].t0_ms, ','));
    EXPECT_EQ(s["timestamps"]["to"], Clock(ref[i].t1_ms, ','));
  }
}

}  // namespace
}  // namespace whisper_e2e
