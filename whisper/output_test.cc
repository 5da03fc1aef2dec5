#include "whisper/output.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace whisper {
namespace {

std::vector<Segment> TwoSegments() {
  Segment a;
  a.t0 = 0;
  a.t1 = 1100;
  a.text = " And so, \"my\" fellow";
  Segment b;
  b.t0 = 366012;  // 1 h 1 min 0.12 s
  b.t1 = 366150;
  b.text = " Americans.";
  return {a, b};
}

TEST(Output, Timestamps) {
  EXPECT_EQ(FormatTimestamp(0), "00:00:00.000");
  EXPECT_EQ(FormatTimestamp(1100), "00:00:11.000");
  EXPECT_EQ(FormatTimestamp(366012, true), "01:01:00,120");
}

TEST(Output, TxtVttSrtLrcCsv) {
  const auto segs = TwoSegments();
  EXPECT_EQ(FormatTxt(segs), "And so, \"my\" fellow\nAmericans.\n");
  EXPECT_EQ(FormatVtt(segs),
            "WEBVTT\n\n00:00:00.000 --> 00:00:11.000\n And so, \"my\" fellow\n\n"
            "01:01:00.120 --> 01:01:01.500\n Americans.\n\n");
  EXPECT_EQ(FormatSrt(segs),
            "1\n00:00:00,000 --> 00:00:11,000\n And so, \"my\" fellow\n\n"
            "2\n01:01:00,120 --> 01:01:01,500\n Americans.\n\n");
  EXPECT_EQ(FormatLrc(segs), "[by:whisper.cpp]\n[00:00.00] And so, \"my\" fellow\n[61:00.12] Americans.\n");
  EXPECT_EQ(FormatCsv(segs),
            "start,end,text\n0,11000,\" And so, \"\"my\"\" fellow\"\n3660120,3661500,\" Americans.\"\n");
}

TEST(Output, JsonLayout) {
  JsonInfo info;
  info.model_type = "tiny";
  info.n_vocab = 51864;
  const std::string j = FormatJson(TwoSegments(), info);
  EXPECT_NE(j.find("\t\"transcription\": [\n\t\t{\n\t\t\t\"timestamps\": {\n\t\t\t\t\"from\": \"00:00:00,000\","),
            std::string::npos)
      << j;
  EXPECT_NE(j.find("\"text\": \" And so, \\\"my\\\" fellow\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"offsets\": {\n\t\t\t\t\"from\": 3660120,\n\t\t\t\t\"to\": 3661500\n"), std::string::npos) << j;
  EXPECT_LT(j.find("\"systeminfo\""), j.find("\"model\""));  // whisper-cli's key order
}

TEST(Output, JsonFullListsEachSegmentsTokens) {
  std::vector<Segment> segs = TwoSegments();
  segs[0].tokens = {843, 523};
  segs[1].tokens = {3399};
  const std::vector<std::string> vocab_text = {" And", " so", " Americans"};
  auto token_text = [&](Token t) -> const std::string& {
    return vocab_text[t == 843 ? 0 : t == 523 ? 1 : 2];
  };
  const std::string j = FormatJson(segs, JsonInfo(), token_text);
  EXPECT_NE(j.find("\"tokens\": [\n\t\t\t\t{\n\t\t\t\t\t\"text\": \" And\",\n\t\t\t\t\t\"id\": 843\n\t\t\t\t},\n"
                   "\t\t\t\t{\n\t\t\t\t\t\"text\": \" so\",\n\t\t\t\t\t\"id\": 523\n\t\t\t\t}\n\t\t\t]"),
            std::string::npos)
      << j;
  EXPECT_NE(j.find("\"text\": \" Americans\",\n\t\t\t\t\t\"id\": 3399"), std::string::npos) << j;
  // Without token_text the layout is -oj's: no "tokens" key.
  EXPECT_EQ(FormatJson(segs, JsonInfo()).find("\"tokens\""), std::string::npos);
  // The full file is the plain one plus the token lists.
  EXPECT_GT(j.size(), FormatJson(segs, JsonInfo()).size());
}

TEST(Output, AtomicWriteAndErrors) {
  const std::string dir = ::testing::TempDir();
  const std::string path = dir + "/out.txt";
  ASSERT_TRUE(WriteFileAtomically(path, "hello\n").ok());
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), "hello\n");
  const absl::Status st = WriteFileAtomically("/nonexistent-dir/x.txt", "x");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("/nonexistent-dir/x.txt"), std::string::npos);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace whisper
