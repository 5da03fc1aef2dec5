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
