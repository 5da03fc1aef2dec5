// The MPEG frame scan (mpeg_frames.h) on jfk.mp3 (written by FFmpeg's Lavf 59: an ID3v2 tag, a
// "Xing" frame, then MPEG-2 layer III frames at 16 kHz) and on 20 copies of it joined end
// to end, which libmpg123 decoded as the first copy alone. References: the file's bytes read by
// hand (the tag "Xing" at byte 0x44 after the 0x37-byte ID3 tag, 4-byte header and 9 bytes of
// mono MPEG-2 side information; its frame count 00 00 01 34 = 308), FFmpeg (PyAV 18) demuxing 308
// audio packets and decoding 176000 samples from the single file, and 576 samples per MPEG-2
// layer III frame (ISO/IEC 13818-3).
#include "apps/common/mpeg_frames.h"

#include <cstdio>
#include <string>
#include <vector>

#include "apps/common/audio.h"
#include "gtest/gtest.h"
#include "testdata/paths.h"

namespace whisper {
namespace {

std::vector<unsigned char> Joined(const std::vector<unsigned char>& one, int copies) {
  std::vector<unsigned char> out;
  for (int i = 0; i < copies; ++i) out.insert(out.end(), one.begin(), one.end());
  return out;
}

TEST(ScanMpegFrames, JfkMp3AndTwentyCopies) {
  const std::vector<unsigned char> one = testdata::ReadBytes(testdata::SharedData("jfk.mp3"));
  ASSERT_EQ(one.size(), 76447u);
  const MpegScan s = ScanMpegFrames(one.data(), one.size());
  EXPECT_EQ(s.xing_frames, 308);
  EXPECT_EQ(s.xing_tag_offset, 0x44u);
  EXPECT_EQ(s.frames, 309);  // FFmpeg's 308 audio packets and the Xing frame
  EXPECT_EQ(s.sample_rate, 16000);
  EXPECT_EQ(s.samples_per_frame, 576);
  EXPECT_FALSE(XingCountsTooFewFrames(s));
  const std::vector<unsigned char> twenty = Joined(one, 20);
  const MpegScan t = ScanMpegFrames(twenty.data(), twenty.size());
  EXPECT_EQ(t.xing_frames, 308);
  EXPECT_EQ(t.frames, 20 * 309);
  EXPECT_TRUE(XingCountsTooFewFrames(t));
  ASSERT_EQ(t.info_tag_offsets.size(), 20u);  // each copy's Xing frame
  EXPECT_EQ(t.info_tag_offsets[19], 19 * one.size() + 0x44);
  // Any prefix, and bytes that are not MPEG: no read past the end (ASan), counts that only grow.
  int64_t last = 0;
  for (size_t n = 0; n <= one.size(); n += 97) {
    const MpegScan p = ScanMpegFrames(one.data(), n);
    EXPECT_GE(p.frames, last) << n;
    last = p.frames;
  }
  const std::vector<unsigned char> junk(5000, 0xFF);
  EXPECT_EQ(ScanMpegFrames(junk.data(), junk.size()).frames, 0);
  EXPECT_EQ(ScanMpegFrames(nullptr, 0).frames, 0);
}

// Decoded whole, from a path and from memory: every frame, 576 samples each, at 16 kHz (no
// resampling; the later copies' Xing frames decode as silence), with the warning naming both
// counts. Before, 176000 samples (the first copy) and no warning. The single file is unchanged:
// FFmpeg's 176000 samples.
TEST(LoadAudio16kMono, JoinedMp3IsDecodedWholeWithAWarning) {
  const std::vector<unsigned char> one = testdata::ReadBytes(testdata::SharedData("jfk.mp3"));
  ASSERT_FALSE(one.empty());
  AudioReport single;
  AudioOptions so;
  so.report = &single;
  absl::StatusOr<std::vector<float>> a = LoadAudio16kMono(testdata::SharedData("jfk.mp3"), so);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->size(), 176000u);
  EXPECT_EQ(TruncationWarning(single, "jfk.mp3"), "");

  const std::vector<unsigned char> twenty = Joined(one, 20);
  const std::string path = testdata::TmpPath("jfk_x20.mp3");
  {
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr) << path;
    ASSERT_EQ(std::fwrite(twenty.data(), 1, twenty.size(), f), twenty.size());
    std::fclose(f);
  }
  AudioReport report;
  AudioOptions o;
  o.report = &report;
  absl::StatusOr<std::vector<float>> b = LoadAudio16kMono(path, o);
  ASSERT_TRUE(b.ok()) << b.status();
  // 20 x 309 frames less the first Xing frame, 576 samples each, less the first file's encoder
  // delay and padding (its LAME tag; 308 x 576 - 176000 = 1408, from FFmpeg's count above).
  EXPECT_EQ(b->size(), (20u * 309 - 1) * 576 - (308 * 576 - 176000));
  EXPECT_EQ(report.mpeg_header_frames, 308);
  EXPECT_EQ(report.mpeg_stream_frames, 20 * 309);
  EXPECT_EQ(TruncationWarning(report, "c.mp3"),
            "c.mp3: the MP3's Xing/Info header announces 308 frames but the stream holds 6180 (files joined end to "
            "end?): decoded all of them, 222.36 s");
  absl::StatusOr<std::vector<float>> m = LoadAudio16kMonoFromMemory(twenty.data(), twenty.size(), "c.mp3");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(*m, *b);
}

}  // namespace
}  // namespace whisper
