// LoadAudio16kMono on paths that are not regular files (audio.h): a named FIFO and /dev/fd/N of a
// pipe decode to the same samples as the regular file, every frame of it (opened twice, such a
// path lost 2048 of jfk.wav's 176000 frames, 4096 bytes read by the second open). And
// a WAV header's sample rate of 0 or 0xFFFFFFFF gets the message that names the rate (libsndfile
// alone says "SF_INFO struct incomplete").
#include <fcntl.h>
#include <sndfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "apps/common/audio.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testdata/paths.h"

namespace whisper {
namespace {

using ::testing::HasSubstr;
using ::testdata::ReadBytes;
using ::testdata::TmpPath;

// Writes all of `bytes` to `fd`, then closes it; stops early when the reader is gone.
void WriteAllAndClose(int fd, const std::vector<unsigned char>& bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + off, bytes.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  close(fd);
}

// Decodes `bytes` written into a new FIFO at TEST_TMPDIR/`name` by a writer thread. The writer
// opens without blocking (retrying for up to 30 s while no reader has opened), so a loader that
// never opens the FIFO fails the test instead of hanging it.
absl::StatusOr<std::vector<float>> LoadThroughFifo(const std::vector<unsigned char>& bytes, const std::string& name,
                                                   AudioReport* report) {
  std::signal(SIGPIPE, SIG_IGN);
  const std::string path = TmpPath(name);
  unlink(path.c_str());
  if (mkfifo(path.c_str(), 0600) != 0) return absl::InternalError(std::strerror(errno));
  std::thread writer([&bytes, path] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    int fd = -1;
    while ((fd = open(path.c_str(), O_WRONLY | O_NONBLOCK)) < 0 && errno == ENXIO &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (fd < 0) return;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    WriteAllAndClose(fd, bytes);
  });
  AudioOptions options;
  options.report = report;
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMono(path, options);
  writer.join();
  unlink(path.c_str());
  return audio;
}

// jfk.wav as FLAC (16-bit, 16 kHz; libsndfile writes it to a temporary file).
std::string JfkFlac() {
  absl::StatusOr<std::vector<float>> jfk = LoadAudio16kMono(testdata::SharedData("jfk.wav"));
  if (!jfk.ok()) return "";
  const std::string path = TmpPath("jfk.flac");
  SF_INFO info{};
  info.samplerate = kSampleRate;
  info.channels = 1;
  info.format = SF_FORMAT_FLAC | SF_FORMAT_PCM_16;
  SNDFILE* f = sf_open(path.c_str(), SFM_WRITE, &info);
  if (f == nullptr) return "";
  const sf_count_t n = static_cast<sf_count_t>(jfk->size());
  const bool ok = sf_writef_float(f, jfk->data(), n) == n;
  sf_close(f);
  return ok ? path : "";
}

// jfk.wav's data chunk holds 352000 bytes of 16-bit mono PCM (its header, read by hand):
// 176000 frames, all of which come through the FIFO, bit-identical to the file's decode.
TEST(LoadAudioPathTest, FifoDecodesEveryFrame) {
  const std::string wav = testdata::SharedData("jfk.wav");
  absl::StatusOr<std::vector<float>> want = LoadAudio16kMono(wav);
  ASSERT_TRUE(want.ok()) << want.status();
  const std::string flac = JfkFlac();
  ASSERT_FALSE(flac.empty());
  absl::StatusOr<std::vector<float>> want_flac = LoadAudio16kMono(flac);
  ASSERT_TRUE(want_flac.ok()) << want_flac.status();
  struct Case {
    std::string file, fifo;
    const std::vector<float>* want;
  };
  for (const Case& c : {Case{wav, "jfk_fifo.wav", &*want}, Case{flac, "jfk_fifo.flac", &*want_flac}}) {
    AudioReport report;
    absl::StatusOr<std::vector<float>> got = LoadThroughFifo(ReadBytes(c.file), c.fifo, &report);
    ASSERT_TRUE(got.ok()) << c.fifo << ": " << got.status();
    EXPECT_EQ(report.frames_decoded, 176000) << c.fifo;
    EXPECT_EQ(report.frames_announced, 176000) << c.fifo;
    EXPECT_EQ(TruncationWarning(report, c.fifo), "") << c.fifo;
    ASSERT_EQ(got->size(), c.want->size()) << c.fifo;
    EXPECT_TRUE(*got == *c.want) << c.fifo << ": samples differ from the file's";
  }
}

// /dev/fd/N of a pipe (what bash's <(...) passes): the same samples as the file.
TEST(LoadAudioPathTest, DevFdOfAPipeDecodesEveryFrame) {
  const std::string wav = testdata::SharedData("jfk.wav");
  absl::StatusOr<std::vector<float>> want = LoadAudio16kMono(wav);
  ASSERT_TRUE(want.ok()) << want.status();
  const std::vector<unsigned char> bytes = ReadBytes(wav);
  std::signal(SIGPIPE, SIG_IGN);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::thread writer([&bytes, fd = fds[1]] { WriteAllAndClose(fd, bytes); });
  absl::StatusOr<std::vector<float>> got = LoadAudio16kMono(absl::StrCat("/dev/fd/", fds[0]));
  close(fds[0]);
  writer.join();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->size(), 176000u);
  EXPECT_TRUE(*got == *want) << "samples differ from the file's";
}

// A 44-byte 16-bit mono PCM WAV header (RIFF, fmt of 16 bytes, data) declaring `rate`, and 8000
// zero samples.
std::vector<unsigned char> Pcm16Wav(uint32_t rate) {
  std::vector<unsigned char> b;
  auto put = [&b](uint32_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) b.push_back(static_cast<unsigned char>(v >> (8 * i)));
  };
  auto tag = [&b](const char* t) { b.insert(b.end(), t, t + 4); };
  tag("RIFF");
  put(36 + 16000, 4);
  tag("WAVE");
  tag("fmt ");
  put(16, 4);
  put(1, 2);  // PCM
  put(1, 2);  // channels
  put(rate, 4);
  put(rate * 2, 4);  // byte rate (wraps for 0xFFFFFFFF, as a hostile header may)
  put(2, 2);         // block align
  put(16, 2);        // bits
  tag("data");
  put(16000, 4);
  b.resize(b.size() + 16000, 0);
  return b;
}

TEST(LoadAudioPathTest, SampleRateZeroOrAllOnesIsNamed) {
  for (uint32_t rate : {0u, 0xFFFFFFFFu}) {
    const std::vector<unsigned char> bytes = Pcm16Wav(rate);
    const std::string want = absl::StrCat("sample rate ", rate, " Hz in the header, expected 1000 to 4096000 Hz");
    absl::StatusOr<std::vector<float>> audio = LoadAudio16kMonoFromMemory(bytes.data(), bytes.size(), "rate.wav");
    EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument) << rate;
    EXPECT_THAT(audio.status().message(), HasSubstr(absl::StrCat("rate.wav: ", want))) << rate;
    const std::string path = TmpPath(absl::StrCat("rate_", rate, ".wav"));
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    audio = LoadAudio16kMono(path);
    EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument) << rate;
    EXPECT_THAT(audio.status().message(), HasSubstr(absl::StrCat(path, ": ", want))) << rate;
  }
}

}  // namespace
}  // namespace whisper
