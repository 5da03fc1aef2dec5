// End-to-end: hostile audio files given to `whisper:cli`, from a file and from stdin (`-f -`).
// Each ends in a transcript (exit 0) or in one "error:" line naming the input (exit 1); never a
// signal. The WAV files are laid out byte by byte here (RIFF/WAVE: "RIFF" size "WAVE", then
// chunks of a 4-byte id, a 32-bit little-endian size and the data, padded to even length;
// "fmt " = format tag, channels, rate, byte rate, block align, bits [, cbSize, extension]).
// Lossless re-encodings of the same samples must give the same transcript as 16-bit PCM.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "testing/utf8_check.h"
#include "whisper/e2e/cli_runner.h"
#include "whisper/e2e/wav_files.h"

namespace whisper_e2e {
namespace {

void Put(std::string* b, uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) b->push_back(static_cast<char>(v >> (8 * i)));
}

struct Fmt {
  uint16_t tag = 1;  // 1 PCM, 3 IEEE float, 6 A-law, 0xFFFE WAVE_FORMAT_EXTENSIBLE
  uint16_t channels = 1;
  uint32_t rate = 16000;
  uint16_t bits = 16;
  std::string extension;  // after the 16 bytes (cbSize included)
};

std::string FmtChunk(const Fmt& f) {
  std::string c = "fmt ";
  const uint16_t align = static_cast<uint16_t>(f.channels * ((f.bits + 7) / 8));
  Put(&c, 16 + f.extension.size(), 4);
  Put(&c, f.tag, 2);
  Put(&c, f.channels, 2);
  Put(&c, f.rate, 4);
  Put(&c, f.rate * align, 4);
  Put(&c, align, 2);
  Put(&c, f.bits, 2);
  c += f.extension;
  if (c.size() % 2) c.push_back('\0');
  return c;
}

// A "data" chunk holding `payload`; `claimed` overrides the size field (the payload is still all
// written, and padded only when the size is honest).
std::string DataChunk(const std::string& payload, int64_t claimed = -1) {
  std::string c = "data";
  Put(&c, claimed >= 0 ? static_cast<uint32_t>(claimed) : static_cast<uint32_t>(payload.size()), 4);
  c += payload;
  if (claimed < 0 && payload.size() % 2) c.push_back('\0');
  return c;
}

std::string Riff(const std::vector<std::string>& chunks, int64_t claimed = -1) {
  std::string body = "WAVE";
  for (const std::string& c : chunks) body += c;
  std::string out = "RIFF";
  Put(&out, claimed >= 0 ? static_cast<uint32_t>(claimed) : static_cast<uint32_t>(body.size()), 4);
  return out + body;
}

std::string Pcm16(const std::vector<int16_t>& s) {
  std::string b;
  for (int16_t v : s) Put(&b, static_cast<uint16_t>(v), 2);
  return b;
}

// G.711 A-law of a 16-bit sample (ITU-T G.711 table 1a, the segment encoder).
uint8_t ALaw(int16_t pcm) {
  int x = pcm >> 3;  // 13-bit
  const uint8_t sign = x >= 0 ? 0x80 : 0x00;
  if (x < 0) x = -x - 1;
  int seg = 0;
  while (seg < 7 && x >= (32 << seg)) ++seg;
  const int mant = seg == 0 ? (x >> 1) & 0x0F : (x >> seg) & 0x0F;
  return static_cast<uint8_t>((sign | (seg << 4) | mant) ^ 0x55);
}

enum class Expect {
  kSameAsPcm16,  // exit 0, the segments of the 16-bit PCM file with the same samples
  kSameAsJfk,    // exit 0, the segments of jfk.wav itself
  kTranscribes,  // exit 0 (lossy re-encodings), valid output
  kError,        // exit 1, one error line naming the input and `error`
};

struct Case {
  std::string name;
  std::string bytes;
  Expect expect;
  std::string error;  // kError: a substring of the message
};

class CliHostileAudioTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    jfk_ = ReadPcm16Mono16k(testdata::SharedData("jfk.wav"));
    cut_.assign(jfk_.begin(), jfk_.begin() + 2 * 16000);  // "And so my fellow American..."
  }

  CliRun Run(const std::string& path, bool from_stdin) {
    std::vector<std::string> args = {"-m", "models/ggml-tiny.en.bin", "-bs", "1", "-np", "-t", "2"};
    args.insert(args.end(), {"-f", from_stdin ? "-" : path});
    // `-f -` alone names the output "-" (stdout) and prints no segments, as whisper-cli: name a
    // file instead, so the segments are printed.
    if (from_stdin) args.insert(args.end(), {"-of", path + ".stdin"});
    return RunCli(args, dir_, {}, from_stdin ? path : "");
  }

  // Runs `c` from a file and from stdin; checks the outcome against `pcm16` / `jfk` (transcripts
  // of the reference files) and the invariants of every run.
  void Check(const Case& c, const std::vector<CliSegment>& pcm16, const std::vector<CliSegment>& jfk,
             int64_t duration_ms) {
    const std::string path = dir_ + "/" + c.name + ".wav";
    WriteFileOrFail(path, c.bytes);
    for (const bool from_stdin : {false, true}) {
      SCOPED_TRACE(c.name + (from_stdin ? " from stdin" : " from a file"));
      const CliRun run = Run(path, from_stdin);
      ASSERT_LT(run.exit_code, 128) << "killed by signal " << run.exit_code - 128 << "\n" << run.err;
      EXPECT_TRUE(ggml_testing::IsValidUtf8(run.out)) << run.out;
      if (c.expect == Expect::kError) {
        EXPECT_EQ(run.exit_code, 1) << run.err;
        EXPECT_EQ(run.out, "");
        const std::vector<std::string> lines = Lines(run.err);
        ASSERT_EQ(lines.size(), 1u) << run.err;
        EXPECT_EQ(lines[0].rfind("error: ", 0), 0u) << lines[0];
        EXPECT_NE(lines[0].find(from_stdin ? "<stdin>" : path), std::string::npos) << lines[0];
        EXPECT_NE(lines[0].find(c.error), std::string::npos) << lines[0] << " lacks " << c.error;
        continue;
      }
      ASSERT_EQ(run.exit_code, 0) << run.err;
      const std::vector<CliSegment> segs = ParseSegments(run.out);
      for (const CliSegment& s : segs) {
        EXPECT_LE(0, s.t0_ms);
        EXPECT_LE(s.t0_ms, s.t1_ms);
        EXPECT_LE(s.t1_ms, duration_ms + 10) << s.text;
      }
      const std::vector<CliSegment>* want =
          c.expect == Expect::kSameAsPcm16 ? &pcm16 : c.expect == Expect::kSameAsJfk ? &jfk : nullptr;
      if (want == nullptr) continue;
      ASSERT_EQ(segs.size(), want->size()) << run.out;
      for (size_t i = 0; i < segs.size(); ++i) {
        EXPECT_EQ(segs[i].text, (*want)[i].text);
        EXPECT_EQ(segs[i].t0_ms, (*want)[i].t0_ms);
        EXPECT_EQ(segs[i].t1_ms, (*want)[i].t1_ms);
      }
    }
  }

  void SetUp() override {
    ASSERT_TRUE(ModelAvailable());
    dir_ = MakeModelWorkDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }

  std::vector<CliSegment> Reference(const std::string& name, const std::string& bytes) {
    const std::string path = dir_ + "/" + name;
    WriteFileOrFail(path, bytes);
    const CliRun run = Run(path, false);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return ParseSegments(run.out);
  }

  // Checks the cases of `all` named in `names` (each must exist), in that order.
  void CheckNamed(const std::vector<Case>& all, const std::vector<std::string>& names,
                  const std::vector<CliSegment>& pcm16, const std::vector<CliSegment>& jfk,
                  const std::function<int64_t(const Case&)>& duration_ms) {
    for (const std::string& n : names) {
      auto it = std::find_if(all.begin(), all.end(), [&n](const Case& c) { return c.name == n; });
      ASSERT_NE(it, all.end()) << n;
      Check(*it, pcm16, jfk, duration_ms(*it));
    }
  }
  void CheckSizeCases(const std::vector<std::string>& names);
  void CheckFormatCases(const std::vector<std::string>& names);

  static std::vector<int16_t> jfk_, cut_;
  std::string dir_;
};

std::vector<int16_t> CliHostileAudioTest::jfk_;
std::vector<int16_t> CliHostileAudioTest::cut_;

// Sizes that lie: placeholders left by streaming writers (0xFFFFFFFF, 0), chunks longer or
// shorter than the file, a trailing half sample. Full jfk.wav, so the transcript is known. The
// cases are split over two tests so that shards stay short under ASan.
std::vector<Case> SizeCases(const std::string& pcm) {
  const std::string fmt = FmtChunk({});
  return {
      {"riff_and_data_ffffffff", Riff({fmt, DataChunk(pcm, 0xFFFFFFFF)}, 0xFFFFFFFF), Expect::kSameAsJfk},
      {"data_ffffffff", Riff({fmt, DataChunk(pcm, 0xFFFFFFFF)}), Expect::kSameAsJfk},
      {"riff_0", Riff({fmt, DataChunk(pcm)}, 0), Expect::kSameAsJfk},
      {"data_longer_than_file", Riff({fmt, DataChunk(pcm, 3 * pcm.size())}), Expect::kSameAsJfk},
      {"half_sample_at_end", Riff({fmt, DataChunk(pcm + "\x01")}), Expect::kSameAsJfk},
      {"data_0", Riff({fmt, DataChunk(pcm, 0)}, 0), Expect::kError, "contains no audio"},
      {"data_shorter_than_file", Riff({fmt, DataChunk(pcm, pcm.size() / 2)}), Expect::kTranscribes},
  };
}

void CliHostileAudioTest::CheckSizeCases(const std::vector<std::string>& names) {
  ASSERT_EQ(jfk_.size(), 176000u);
  const std::string pcm = Pcm16(jfk_);
  const std::vector<CliSegment> jfk = Reference("jfk_ref.wav", Riff({FmtChunk({}), DataChunk(pcm)}));
  ASSERT_FALSE(jfk.empty());
  EXPECT_EQ(jfk[0].text.find(" And so my fellow Americans"), 0u) << jfk[0].text;
  CheckNamed(SizeCases(pcm), names, {}, jfk, [](const Case&) { return 11000; });
}

const std::vector<std::vector<std::string>> kSizeGroups = {
    {"riff_and_data_ffffffff", "data_ffffffff", "riff_0"},
    {"data_longer_than_file", "half_sample_at_end", "data_0", "data_shorter_than_file"},
};

TEST_F(CliHostileAudioTest, PlaceholderSizes) { CheckSizeCases(kSizeGroups[0]); }
TEST_F(CliHostileAudioTest, ChunksThatDisagreeWithTheFile) { CheckSizeCases(kSizeGroups[1]); }

// The same 2 s of speech in every sample format WAV carries, plus hostile headers; split over
// four tests (as the size cases) so that shards stay short under ASan.
std::vector<Case> FormatCases(const std::vector<int16_t>& cut) {
  const std::string pcm = Pcm16(cut);
  std::string u8, s24, s32, f32, f64, alaw, ch8;
  for (int16_t v : cut) {
    u8.push_back(static_cast<char>((v >> 8) + 128));
    Put(&s24, static_cast<uint32_t>(v) << 8, 3);
    Put(&s32, static_cast<uint32_t>(v) << 16, 4);
    float f = v / 32768.0f;
    uint32_t fb;
    std::memcpy(&fb, &f, 4);
    Put(&f32, fb, 4);
    double d = v / 32768.0;
    uint64_t db;
    std::memcpy(&db, &d, 8);
    Put(&f64, static_cast<uint32_t>(db), 4);
    Put(&f64, static_cast<uint32_t>(db >> 32), 4);
    alaw.push_back(static_cast<char>(ALaw(v)));
    for (int c = 0; c < 8; ++c) Put(&ch8, static_cast<uint16_t>(v), 2);
  }
  // WAVE_FORMAT_EXTENSIBLE: cbSize 22, valid bits 16, channel mask 4 (front centre), and the
  // KSDATAFORMAT_SUBTYPE_PCM GUID 00000001-0000-0010-8000-00aa00389b71.
  std::string ext;
  Put(&ext, 22, 2);
  Put(&ext, 16, 2);
  Put(&ext, 4, 4);
  Put(&ext, 1, 4);
  Put(&ext, 0, 2);
  Put(&ext, 0x10, 2);
  ext += std::string("\x80\x00\x00\xaa\x00\x38\x9b\x71", 8);
  std::string nan_f32;
  for (int i = 0; i < 3200; ++i) {
    const uint32_t bits = i == 1000 ? 0x7FC00000u : i == 2000 ? 0x7F800000u : 0u;  // NaN, +Inf
    Put(&nan_f32, bits, 4);
  }
  const std::string list_odd = std::string("LIST") + std::string("\x05\x00\x00\x00", 4) + "abcde" + '\0';
  return {
      {"s24", Riff({FmtChunk({1, 1, 16000, 24}), DataChunk(s24)}), Expect::kSameAsPcm16},
      {"s32", Riff({FmtChunk({1, 1, 16000, 32}), DataChunk(s32)}), Expect::kSameAsPcm16},
      {"f32", Riff({FmtChunk({3, 1, 16000, 32}), DataChunk(f32)}), Expect::kSameAsPcm16},
      {"f64", Riff({FmtChunk({3, 1, 16000, 64}), DataChunk(f64)}), Expect::kSameAsPcm16},
      {"extensible", Riff({FmtChunk({0xFFFE, 1, 16000, 16, ext}), DataChunk(pcm)}), Expect::kSameAsPcm16},
      {"odd_chunk_with_pad", Riff({FmtChunk({}), list_odd, DataChunk(pcm)}), Expect::kSameAsPcm16},
      {"channels_8", Riff({FmtChunk({1, 8, 16000, 16}), DataChunk(ch8)}), Expect::kSameAsPcm16},
      {"u8", Riff({FmtChunk({1, 1, 16000, 8}), DataChunk(u8)}), Expect::kTranscribes},
      {"alaw", Riff({FmtChunk({6, 1, 16000, 8}), DataChunk(alaw)}), Expect::kTranscribes},
      {"rate_8000", Riff({FmtChunk({1, 1, 8000, 16}), DataChunk(pcm)}), Expect::kTranscribes},
      {"rate_192000", Riff({FmtChunk({1, 1, 192000, 16}), DataChunk(pcm)}), Expect::kTranscribes},
      {"nan_inf_f32", Riff({FmtChunk({3, 1, 16000, 32}), DataChunk(nan_f32)}), Expect::kError,
       "sample 1000 (channel 0) is not a finite number"},
      {"rate_1", Riff({FmtChunk({1, 1, 1, 16}), DataChunk(pcm)}), Expect::kError,
       "sample rate 1 Hz in the header, expected 1000 to 4096000 Hz"},
      {"rate_0", Riff({FmtChunk({1, 1, 0, 16}), DataChunk(pcm)}), Expect::kError,
       "sample rate 0 Hz in the header, expected 1000 to 4096000 Hz"},
      {"channels_0", Riff({FmtChunk({1, 0, 16000, 16}), DataChunk(pcm)}), Expect::kError, "Channel count is zero"},
      {"channels_65535", Riff({FmtChunk({1, 65535, 16000, 16}), DataChunk(pcm)}), Expect::kError, "libsndfile"},
      {"bits_0", Riff({FmtChunk({1, 1, 16000, 0}), DataChunk(pcm)}), Expect::kError, "libsndfile"},
      {"no_data_chunk", Riff({FmtChunk({})}), Expect::kError, "libsndfile"},
      {"no_fmt_chunk", Riff({DataChunk(pcm)}), Expect::kError, "libsndfile"},
      {"header_only", Riff({FmtChunk({}), DataChunk("")}), Expect::kError, "contains no audio"},
      {"truncated_in_fmt", Riff({FmtChunk({}), DataChunk(pcm)}).substr(0, 20), Expect::kError, "libsndfile"},
      {"samples_0", Riff({FmtChunk({}), DataChunk("")}), Expect::kError, "contains no audio"},
      {"samples_1", Riff({FmtChunk({}), DataChunk(pcm.substr(0, 2))}), Expect::kError, "shorter than 100 ms"},
      {"samples_160", Riff({FmtChunk({}), DataChunk(pcm.substr(0, 320))}), Expect::kError, "shorter than 100 ms"},
      {"samples_399", Riff({FmtChunk({}), DataChunk(pcm.substr(0, 798))}), Expect::kError, "shorter than 100 ms"},
  };
}

void CliHostileAudioTest::CheckFormatCases(const std::vector<std::string>& names) {
  const std::string pcm = Pcm16(cut_);
  const std::vector<CliSegment> ref = Reference("cut_ref.wav", Riff({FmtChunk({}), DataChunk(pcm)}));
  ASSERT_FALSE(ref.empty());
  CheckNamed(FormatCases(cut_), names, ref, {}, [](const Case& c) { return c.name == "rate_8000" ? 4000 : 2000; });
}

const std::vector<std::vector<std::string>> kFormatGroups = {
    {"s24", "s32", "f32", "f64"},
    {"extensible", "odd_chunk_with_pad", "channels_8"},
    {"u8", "alaw", "rate_8000", "rate_192000"},
    {"nan_inf_f32", "rate_1", "rate_0", "channels_0", "channels_65535", "bits_0", "no_data_chunk", "no_fmt_chunk",
     "header_only", "truncated_in_fmt", "samples_0", "samples_1", "samples_160", "samples_399"},
};

TEST_F(CliHostileAudioTest, IntegerAndFloatSamples) { CheckFormatCases(kFormatGroups[0]); }
TEST_F(CliHostileAudioTest, ExtensibleOddChunksAndChannels) { CheckFormatCases(kFormatGroups[1]); }
TEST_F(CliHostileAudioTest, LossyAndResampledSamples) { CheckFormatCases(kFormatGroups[2]); }
TEST_F(CliHostileAudioTest, HostileHeadersAndTooFewSamples) { CheckFormatCases(kFormatGroups[3]); }

// Compressed containers cut short: a FLAC that stops at half decodes what is there with a warning
// that names the file and both frame counts; an MP3 cut inside its first frames is one error line
// that does not claim the file is missing.
TEST_F(CliHostileAudioTest, TruncatedCompressedFiles) {
  const std::string mp3 = ReadFileOrFail(testdata::SharedData("jfk.mp3"));
  ASSERT_GT(mp3.size(), 1000u);
  const std::string path = dir_ + "/cut.mp3";
  WriteFileOrFail(path, mp3.substr(0, 200));
  CliRun run = Run(path, false);
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find("error: " + path + ": not a readable audio file: no decodable header"), std::string::npos)
      << run.err;
  // long_speech.flac (3366452 frames in STREAMINFO) cut after 100000 bytes: about 5 s decode.
  const std::string flac = ReadFileOrFail(testdata::SharedData("long_speech.flac"));
  ASSERT_GT(flac.size(), 100000u);
  const std::string cut_flac = dir_ + "/cut.flac";
  WriteFileOrFail(cut_flac, flac.substr(0, 100000));
  run = RunCli({"-m", "models/ggml-tiny.en.bin", "-f", cut_flac, "-np", "-bs", "1"}, dir_);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("warning: " + cut_flac + ": decoding stopped after "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(" of the 3366452 frames the header announces"), std::string::npos) << run.err;
  EXPECT_FALSE(ParseSegments(run.out).empty()) << run.out;
}

// A named FIFO as -f (as bash's <(...) or /dev/fd/N, a path that cannot seek) is read to its end:
// the file's transcript and no "decoding stopped" warning (opened twice, a pipe lost 2048 of
// jfk.wav's frames). The writer opens without blocking, retrying for up to 60 s while the
// CLI has not opened the FIFO, so a CLI that never does fails the test instead of hanging it.
TEST_F(CliHostileAudioTest, FifoPathIsReadToItsEnd) {
  const std::string wav = ReadFileOrFail(testdata::SharedData("jfk.wav"));
  const std::string fifo = dir_ + "/jfk_fifo.wav";
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  std::signal(SIGPIPE, SIG_IGN);
  std::thread writer([&wav, &fifo] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    int fd = -1;
    while ((fd = open(fifo.c_str(), O_WRONLY | O_NONBLOCK)) < 0 && errno == ENXIO &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (fd < 0) return;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    for (size_t off = 0; off < wav.size();) {
      const ssize_t n = write(fd, wav.data() + off, wav.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    close(fd);
  });
  const CliRun piped = Run(fifo, false);
  writer.join();
  const CliRun file = Run(testdata::SharedData("jfk.wav"), false);
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  ASSERT_EQ(file.exit_code, 0) << file.err;
  EXPECT_EQ(piped.err.find("decoding stopped"), std::string::npos) << piped.err;
  ASSERT_FALSE(ParseSegments(file.out).empty()) << file.out;
  EXPECT_EQ(piped.out, file.out);
}

// Identical transcripts and timestamps whatever the thread count (oversubscribed 64 included).
TEST_F(CliHostileAudioTest, ThreadCountsGiveIdenticalTranscripts) {
  std::string first;
  for (const char* t : {"1", "2", "3", "7", "64"}) {
    const CliRun run = RunCli({"-m", "models/ggml-tiny.en.bin", "-f", testdata::SharedData("jfk.wav"), "-np", "-t", t},
                              dir_);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    ASSERT_FALSE(run.out.empty());
    if (first.empty()) first = run.out;
    EXPECT_EQ(run.out, first) << "-t " << t;
  }
}

// Every case is in exactly one group (no model needed).
TEST(CliHostileAudioCases, EachCaseRunsInExactlyOneTest) {
  const std::vector<int16_t> cut(32000, 100);
  const std::string pcm = Pcm16(cut);
  for (const auto& [cases, groups] : {std::make_pair(SizeCases(pcm), kSizeGroups),
                                      std::make_pair(FormatCases(cut), kFormatGroups)}) {
    std::multiset<std::string> grouped, all;
    for (const auto& g : groups) grouped.insert(g.begin(), g.end());
    for (const Case& c : cases) all.insert(c.name);
    EXPECT_EQ(grouped, all);
    EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), all.size());
  }
}

}  // namespace
}  // namespace whisper_e2e
