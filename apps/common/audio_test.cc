#include "apps/common/audio.h"

#include <sndfile.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testdata/paths.h"

namespace whisper {
namespace {

using ::testing::HasSubstr;
using ::testdata::ReadBytes;
using ::testdata::TmpPath;

// Independent WAV reader for the reference: walks the RIFF chunks by hand and converts the
// 16-bit little-endian PCM "data" chunk with x / 32768.
std::vector<float> ParsePcm16Wav(const std::vector<unsigned char>& bytes) {
  auto u32 = [&](size_t at) {
    return uint32_t{bytes[at]} | uint32_t{bytes[at + 1]} << 8 | uint32_t{bytes[at + 2]} << 16 |
           uint32_t{bytes[at + 3]} << 24;
  };
  std::vector<float> out;
  size_t at = 12;  // "RIFF" size "WAVE"
  while (at + 8 <= bytes.size()) {
    const uint32_t size = u32(at + 4);
    if (std::memcmp(&bytes[at], "data", 4) == 0) {
      for (size_t i = 0; i + 1 < size && at + 8 + i + 1 < bytes.size(); i += 2) {
        const int16_t v = static_cast<int16_t>(bytes[at + 8 + i] | bytes[at + 8 + i + 1] << 8);
        out.push_back(static_cast<float>(v) / 32768.0f);
      }
      return out;
    }
    at += 8 + size + (size & 1);
  }
  return out;
}

// Writes `frames` interleaved frames with libsndfile; returns false on failure.
bool WriteFile(const std::string& path, int format, int rate, int channels,
               const std::vector<float>& interleaved) {
  SF_INFO info{};
  info.samplerate = rate;
  info.channels = channels;
  info.format = format;
  SNDFILE* f = sf_open(path.c_str(), SFM_WRITE, &info);
  if (f == nullptr) {
    ADD_FAILURE() << "sf_open(" << path << "): " << sf_strerror(nullptr);
    return false;
  }
  const sf_count_t frames = static_cast<sf_count_t>(interleaved.size()) / channels;
  const sf_count_t written = sf_writef_float(f, interleaved.data(), frames);
  sf_close(f);
  return written == frames;
}

// 10*log10(signal power / error power) of `test` against `ref` over the common length.
double SnrDb(const std::vector<float>& ref, const std::vector<float>& test) {
  double signal = 0, noise = 0;
  for (size_t i = 0; i < std::min(ref.size(), test.size()); ++i) {
    signal += double{ref[i]} * ref[i];
    noise += (double{ref[i]} - test[i]) * (double{ref[i]} - test[i]);
  }
  return 10.0 * std::log10(signal / noise);
}

TEST(LoadAudioTest, JfkWavIsExact16kPcm) {
  const std::string path = testdata::SharedData("jfk.wav");
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMono(path);
  ASSERT_TRUE(audio.ok()) << audio.status();
  ASSERT_EQ(audio->size(), 176000u);  // 11.0 s at 16 kHz
  const std::vector<float> ref = ParsePcm16Wav(ReadBytes(path));
  ASSERT_EQ(ref.size(), 176000u);
  for (size_t i = 0; i < ref.size(); ++i) ASSERT_EQ((*audio)[i], ref[i]) << "sample " << i;
}

TEST(LoadAudioTest, InMemoryMatchesFile) {
  const std::string path = testdata::SharedData("jfk.wav");
  const std::vector<unsigned char> bytes = ReadBytes(path);
  absl::StatusOr<std::vector<float>> from_file = LoadAudio16kMono(path);
  absl::StatusOr<std::vector<float>> from_memory =
      LoadAudio16kMonoFromMemory(bytes.data(), bytes.size(), "stdin");
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  ASSERT_TRUE(from_memory.ok()) << from_memory.status();
  EXPECT_EQ(*from_file, *from_memory);
}

// jfk.mp3 is MPEG-2 Layer III, 16 kHz mono, 64 kbit/s. mpg123 removes the encoder delay and
// padding recorded in the LAME tag, and this build decodes exactly 176000 samples; the bound
// allows one Layer III frame (576 samples at 16 kHz) for decoders without gapless support.
// 64 kbit/s coding noise: measured SNR against jfk.wav is ~41 dB; require 30 dB at zero lag.
TEST(LoadAudioTest, JfkMp3MatchesWav) {
  absl::StatusOr<std::vector<float>> mp3 = LoadAudio16kMono(testdata::SharedData("jfk.mp3"));
  absl::StatusOr<std::vector<float>> wav = LoadAudio16kMono(testdata::SharedData("jfk.wav"));
  ASSERT_TRUE(mp3.ok()) << mp3.status();
  ASSERT_TRUE(wav.ok()) << wav.status();
  EXPECT_NEAR(static_cast<double>(mp3->size()), 176000.0, 576.0);
  EXPECT_GT(SnrDb(*wav, *mp3), 30.0);
}

// Each format stores the same 16 kHz mono signal; decoding must return it within the format's
// quantization. libsndfile writes float x as round(x * (2^(b-1) - 1)) and reads integer q as
// q / 2^(b-1), so the error bound is half a step for rounding plus |x| * 2^-(b-1) for the
// scale mismatch: 1.5 * 2^-(b-1) for |x| <= 1, plus half a float ulp at 1.0 (6e-8) for the
// float arithmetic of the conversion itself. Measured: exactly at the bound for 24-bit.
struct FormatCase {
  const char* name;
  int format;
  double tolerance;
};

class LosslessFormatTest : public ::testing::TestWithParam<FormatCase> {};

TEST_P(LosslessFormatTest, DecodesWithinQuantization) {
  const FormatCase& c = GetParam();
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> noise(-0.3f, 0.3f);
  std::vector<float> signal(12345);
  for (size_t i = 0; i < signal.size(); ++i) {
    signal[i] = 0.6f * std::sin(2.0 * M_PI * 523.0 * i / kSampleRate) + noise(rng);
  }
  const std::string path = TmpPath(std::string("format_") + c.name);
  ASSERT_TRUE(WriteFile(path, c.format, kSampleRate, 1, signal));
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMono(path);
  ASSERT_TRUE(audio.ok()) << audio.status();
  ASSERT_EQ(audio->size(), signal.size());
  double max_err = 0;
  for (size_t i = 0; i < signal.size(); ++i) {
    max_err = std::max(max_err, std::fabs(double{(*audio)[i]} - signal[i]));
  }
  EXPECT_LE(max_err, c.tolerance) << c.name;
  // The error must also be consistent with real quantization (not a silent zero output).
  EXPECT_GT(SnrDb(signal, *audio), 40.0) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Formats, LosslessFormatTest,
    ::testing::Values(
        FormatCase{"wav_u8", SF_FORMAT_WAV | SF_FORMAT_PCM_U8, 1.5 / 128 + 6e-8},
        FormatCase{"wav_s16", SF_FORMAT_WAV | SF_FORMAT_PCM_16, 1.5 / 32768 + 6e-8},
        FormatCase{"wav_s24", SF_FORMAT_WAV | SF_FORMAT_PCM_24, 1.5 / 8388608 + 6e-8},
        // 32-bit PCM holds more bits than a float mantissa: the float conversion dominates.
        FormatCase{"wav_s32", SF_FORMAT_WAV | SF_FORMAT_PCM_32, 1e-7},
        FormatCase{"wav_f32", SF_FORMAT_WAV | SF_FORMAT_FLOAT, 0.0},
        FormatCase{"wav_f64", SF_FORMAT_WAV | SF_FORMAT_DOUBLE, 0.0},
        FormatCase{"flac_s16", SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 1.5 / 32768 + 6e-8},
        FormatCase{"flac_s24", SF_FORMAT_FLAC | SF_FORMAT_PCM_24, 1.5 / 8388608 + 6e-8}),
    [](const ::testing::TestParamInfo<FormatCase>& info) { return info.param.name; });

// Ogg/Vorbis is lossy: same length (granule positions are exact), SNR bound instead.
TEST(LoadAudioTest, OggVorbisDecodes) {
  std::vector<float> signal(32000);
  for (size_t i = 0; i < signal.size(); ++i) {
    signal[i] = 0.5f * std::sin(2.0 * M_PI * 440.0 * i / kSampleRate) +
                0.2f * std::sin(2.0 * M_PI * 1234.0 * i / kSampleRate);
  }
  const std::string path = TmpPath("vorbis.ogg");
  ASSERT_TRUE(WriteFile(path, SF_FORMAT_OGG | SF_FORMAT_VORBIS, kSampleRate, 1, signal));
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMono(path);
  ASSERT_TRUE(audio.ok()) << audio.status();
  EXPECT_EQ(audio->size(), signal.size());
  EXPECT_GT(SnrDb(signal, *audio), 20.0);
}

// A stereo file at another rate: left 0.6*sin(440 Hz), right 0.2*sin(1000 Hz). The output
// must be 16 kHz mono (L+R)/2 = 0.3*sin(440) + 0.1*sin(1000) sample for sample: that checks
// the downmix weights, the length, the frequency (a 1% rate error would shift the 1 kHz phase
// by 10 cycles over the file) and that libsamplerate's group delay is compensated. Away from
// the first/last 20 ms (filter edge effects) the error must be < 1e-5 (measured: < 1e-7 for
// kBest, 5e-7 for kMedium; both filters are flat far below 7 kHz).
struct RateCase {
  int rate;
  ResampleQuality quality;
};

class ResampleTest : public ::testing::TestWithParam<RateCase> {};

TEST_P(ResampleTest, StereoSineBecomes16kMono) {
  const RateCase& c = GetParam();
  const int frames = c.rate * 2 + 7;  // 2 s plus a few frames: exercises the length rounding
  std::vector<float> stereo(2 * static_cast<size_t>(frames));
  for (int i = 0; i < frames; ++i) {
    const double t = static_cast<double>(i) / c.rate;
    stereo[2 * i + 0] = static_cast<float>(0.6 * std::sin(2.0 * M_PI * 440.0 * t));
    stereo[2 * i + 1] = static_cast<float>(0.2 * std::sin(2.0 * M_PI * 1000.0 * t));
  }
  const std::string path = TmpPath("stereo_" + std::to_string(c.rate) + ".wav");
  ASSERT_TRUE(WriteFile(path, SF_FORMAT_WAV | SF_FORMAT_FLOAT, c.rate, 2, stereo));
  AudioOptions options;
  options.quality = c.quality;
  std::vector<std::vector<float>> split;  // -di's channels, resampled the same way
  options.stereo = &split;
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMono(path, options);
  ASSERT_TRUE(audio.ok()) << audio.status();
  const int64_t expected_len = std::llround(static_cast<double>(frames) * kSampleRate / c.rate);
  ASSERT_EQ(static_cast<int64_t>(audio->size()), expected_len);
  ASSERT_EQ(split.size(), 2u);
  ASSERT_EQ(static_cast<int64_t>(split[0].size()), expected_len);
  ASSERT_EQ(static_cast<int64_t>(split[1].size()), expected_len);

  double max_err = 0, max_err0 = 0, max_err1 = 0;
  const int64_t edge = kSampleRate / 50;
  for (int64_t i = edge; i < expected_len - edge; ++i) {
    const double t = static_cast<double>(i) / kSampleRate;
    const double left = 0.6 * std::sin(2.0 * M_PI * 440.0 * t), right = 0.2 * std::sin(2.0 * M_PI * 1000.0 * t);
    max_err = std::max(max_err, std::fabs((*audio)[i] - 0.5 * (left + right)));
    max_err0 = std::max(max_err0, std::fabs(split[0][i] - left));
    max_err1 = std::max(max_err1, std::fabs(split[1][i] - right));
  }
  EXPECT_LT(max_err, 1e-5);
  EXPECT_LT(max_err0, 1e-5);
  EXPECT_LT(max_err1, 1e-5);
}

// The -di split at 16 kHz is the file's channels 0 and 1 bit for bit (a mono file: its channel
// twice, as miniaudio's upmix), and asking for it leaves the mix unchanged.
TEST(LoadAudioTest, StereoSplitIsChannelsZeroAndOne) {
  const int frames = 2000;
  std::vector<float> three(3 * static_cast<size_t>(frames)), one(frames);
  for (int i = 0; i < frames; ++i) {
    for (int c = 0; c < 3; ++c) three[3 * i + c] = static_cast<float>((i * (c + 3)) % 97) / 97.0f - 0.5f;
    one[i] = three[3 * i + 1];
  }
  const std::string path3 = TmpPath("split3.wav"), path1 = TmpPath("split1.wav");
  ASSERT_TRUE(WriteFile(path3, SF_FORMAT_WAV | SF_FORMAT_FLOAT, kSampleRate, 3, three));
  ASSERT_TRUE(WriteFile(path1, SF_FORMAT_WAV | SF_FORMAT_FLOAT, kSampleRate, 1, one));
  for (const std::string& path : {path3, path1}) {
    std::vector<std::vector<float>> split = {{1.0f}};  // replaced, not appended to
    AudioOptions options;
    options.stereo = &split;
    absl::StatusOr<std::vector<float>> with = LoadAudio16kMono(path, options);
    absl::StatusOr<std::vector<float>> without = LoadAudio16kMono(path);
    ASSERT_TRUE(with.ok()) << with.status();
    ASSERT_TRUE(without.ok()) << without.status();
    EXPECT_EQ(*with, *without) << path;
    ASSERT_EQ(split.size(), 2u);
    ASSERT_EQ(split[0].size(), static_cast<size_t>(frames));
    ASSERT_EQ(split[1].size(), static_cast<size_t>(frames));
    for (int i = 0; i < frames; ++i) {
      if (path == path3) {
        ASSERT_EQ(split[0][i], three[3 * i]) << i;
        ASSERT_EQ(split[1][i], three[3 * i + 1]) << i;
        ASSERT_FLOAT_EQ((*with)[i], (three[3 * i] + three[3 * i + 1] + three[3 * i + 2]) / 3.0f) << i;
      } else {
        ASSERT_EQ(split[0][i], one[i]) << i;
        ASSERT_EQ(split[1][i], one[i]) << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Rates, ResampleTest,
                         ::testing::Values(RateCase{44100, ResampleQuality::kBest},
                                           RateCase{44100, ResampleQuality::kMedium},
                                           RateCase{48000, ResampleQuality::kBest},
                                           RateCase{22050, ResampleQuality::kBest},
                                           RateCase{8000, ResampleQuality::kBest}),
                         [](const ::testing::TestParamInfo<RateCase>& info) {
                           return std::to_string(info.param.rate) +
                                  (info.param.quality == ResampleQuality::kBest ? "_best"
                                                                                : "_medium");
                         });

TEST(LoadAudioErrorTest, MissingFile) {
  const std::string path = TmpPath("does_not_exist.wav");
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMono(path);
  ASSERT_FALSE(audio.ok());
  EXPECT_EQ(audio.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(audio.status().message(), HasSubstr(path));
}

TEST(LoadAudioErrorTest, TextFile) {
  const std::string path = TmpPath("not_audio.wav");
  std::ofstream(path) << "this is a text file, not a RIFF/WAVE file\n";
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMono(path);
  ASSERT_FALSE(audio.ok());
  EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(audio.status().message(), HasSubstr(path));
  EXPECT_THAT(audio.status().message(), HasSubstr("not a readable audio file"));
}

TEST(LoadAudioErrorTest, EmptyWav) {
  const std::string path = TmpPath("empty.wav");
  ASSERT_TRUE(WriteFile(path, SF_FORMAT_WAV | SF_FORMAT_PCM_16, kSampleRate, 1, {}));
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMono(path);
  ASSERT_FALSE(audio.ok());
  EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(audio.status().message(), HasSubstr(path));
  EXPECT_THAT(audio.status().message(), HasSubstr("0 frames"));
}

TEST(LoadAudioErrorTest, NonFiniteFloatSamples) {
  const std::string path = TmpPath("nan.wav");
  std::vector<float> frames(2 * 3200, 0.25f);  // stereo
  frames[2 * 1000 + 1] = std::numeric_limits<float>::quiet_NaN();
  ASSERT_TRUE(WriteFile(path, SF_FORMAT_WAV | SF_FORMAT_FLOAT, kSampleRate, 2, frames));
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMono(path);
  ASSERT_FALSE(audio.ok());
  EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(audio.status().message(), HasSubstr(path));
  EXPECT_THAT(audio.status().message(), HasSubstr("sample 1000 (channel 1) is not a finite number"));
  frames[2 * 1000 + 1] = 0.0f;
  frames[7] = std::numeric_limits<float>::infinity();
  ASSERT_TRUE(WriteFile(path, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 44100, 2, frames));
  audio = LoadAudio16kMono(path);
  ASSERT_FALSE(audio.ok());
  EXPECT_THAT(audio.status().message(), HasSubstr("sample 3 (channel 1)"));
}

TEST(LoadAudioErrorTest, FloatSamplesFarBeyondFullScale) {
  const std::string path = TmpPath("loud.wav");
  std::vector<float> frames(3200, 0.25f);
  frames[1234] = 2e4f;  // kMaxFloatSample is 1e4: +80 dB over full scale
  ASSERT_TRUE(WriteFile(path, SF_FORMAT_WAV | SF_FORMAT_FLOAT, kSampleRate, 1, frames));
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMono(path);
  ASSERT_FALSE(audio.ok());
  EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(audio.status().message(), HasSubstr("sample 1234 (channel 0) is 20000, expected a magnitude of at most 10000"));
  frames[1234] = -1e4f;  // the bound itself is accepted
  ASSERT_TRUE(WriteFile(path, SF_FORMAT_WAV | SF_FORMAT_FLOAT, kSampleRate, 1, frames));
  EXPECT_TRUE(LoadAudio16kMono(path).ok());
}

// A 16-bit mono WAV header (44 bytes, hand-laid-out: RIFF, fmt  of 16 bytes, data) declaring
// `rate`, followed by `n` zero samples.
std::vector<unsigned char> Pcm16WavBytes(uint32_t rate, int n) {
  std::vector<unsigned char> b;
  auto put = [&b](uint32_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) b.push_back(static_cast<unsigned char>(v >> (8 * i)));
  };
  auto tag = [&b](const char* t) { b.insert(b.end(), t, t + 4); };
  tag("RIFF");
  put(36 + 2 * n, 4);
  tag("WAVE");
  tag("fmt ");
  put(16, 4);
  put(1, 2);  // PCM
  put(1, 2);  // channels
  put(rate, 4);
  put(rate * 2, 4);  // byte rate
  put(2, 2);         // block align
  put(16, 2);        // bits
  tag("data");
  put(2 * n, 4);
  b.resize(b.size() + 2 * n, 0);
  return b;
}

// Rates outside [1000, 4096000] Hz are refused from the header, before the output (16000 / rate
// samples per input frame) is allocated; the bounds themselves decode.
TEST(LoadAudioErrorTest, SampleRateOutsideTheSupportedRange) {
  for (uint32_t rate : {0u, 1u, 999u, 4096001u, 2000000000u, 0xFFFFFFFFu}) {
    const std::vector<unsigned char> wav = Pcm16WavBytes(rate, 32000);
    absl::StatusOr<std::vector<float>> audio = LoadAudio16kMonoFromMemory(wav.data(), wav.size(), "rate.wav");
    ASSERT_FALSE(audio.ok()) << rate;
    EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(audio.status().message(),
                HasSubstr(absl::StrCat("rate.wav: sample rate ", rate, " Hz in the header, expected 1000 to 4096000 Hz")));
  }
  for (uint32_t rate : {1000u, 4096000u}) {
    const std::vector<unsigned char> wav = Pcm16WavBytes(rate, 8192);
    absl::StatusOr<std::vector<float>> audio = LoadAudio16kMonoFromMemory(wav.data(), wav.size(), "rate.wav");
    ASSERT_TRUE(audio.ok()) << rate << ": " << audio.status();
    EXPECT_EQ(audio->size(), static_cast<size_t>(std::llround(8192.0 * 16000 / rate))) << rate;
  }
}

// A PCM fmt chunk whose bits_per_sample contradicts block_align (bytes 34-35 and 32-33 of the
// 44-byte header) is refused with the fields named, from memory and from a file; libsndfile alone
// decoded bits 7 / block_align 2 as 8-bit samples (twice the duration, noise).
TEST(LoadAudioErrorTest, ContradictoryWavLayout) {
  struct Case {
    uint16_t bits, block_align;
  };
  for (const Case c : {Case{7, 2}, Case{12, 2}, Case{16, 4}, Case{16, 1}, Case{8, 2}}) {
    std::vector<unsigned char> wav = Pcm16WavBytes(16000, 3200);
    wav[32] = static_cast<unsigned char>(c.block_align);
    wav[33] = 0;
    wav[34] = static_cast<unsigned char>(c.bits);
    wav[35] = 0;
    const std::string want = absl::StrCat("WAV fmt chunk: bits_per_sample ", c.bits, ", channels 1, block_align ",
                                          c.block_align);
    absl::StatusOr<std::vector<float>> audio = LoadAudio16kMonoFromMemory(wav.data(), wav.size(), "bad.wav");
    ASSERT_FALSE(audio.ok()) << c.bits << "/" << c.block_align;
    EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(audio.status().message(), HasSubstr("bad.wav: " + want));
    const std::string path = TmpPath("bad_layout.wav");
    {
      std::ofstream out(path, std::ios::binary);
      out.write(reinterpret_cast<const char*>(wav.data()), static_cast<std::streamsize>(wav.size()));
    }
    audio = LoadAudio16kMono(path);
    ASSERT_FALSE(audio.ok()) << c.bits << "/" << c.block_align;
    EXPECT_THAT(audio.status().message(), HasSubstr(path + ": " + want));
  }
  // The consistent header decodes (3200 samples at 16 kHz).
  const std::vector<unsigned char> good = Pcm16WavBytes(16000, 3200);
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMonoFromMemory(good.data(), good.size(), "good.wav");
  ASSERT_TRUE(audio.ok()) << audio.status();
  EXPECT_EQ(audio->size(), 3200u);
}

// A FLAC file cut in half decodes what is there, and the report shows the short decode against
// STREAMINFO's exact total (the CLI warns on it); a whole file's report shows both equal.
TEST(LoadAudioTest, ReportShowsAShortDecode) {
  const std::string path = TmpPath("cut.flac");
  std::vector<float> frames(48000);
  for (size_t i = 0; i < frames.size(); ++i) frames[i] = 0.5f * std::sin(0.01f * static_cast<float>(i));
  ASSERT_TRUE(WriteFile(path, SF_FORMAT_FLAC | SF_FORMAT_PCM_16, kSampleRate, 1, frames));
  AudioReport report;
  AudioOptions options;
  options.report = &report;
  ASSERT_TRUE(LoadAudio16kMono(path, options).ok());
  EXPECT_EQ(report.frames_announced, 48000);
  EXPECT_EQ(report.frames_decoded, 48000);
  EXPECT_TRUE(report.announced_is_exact);
  std::vector<unsigned char> bytes = ReadBytes(path);
  bytes.resize(bytes.size() / 2);
  report = AudioReport();
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMonoFromMemory(bytes.data(), bytes.size(), "cut.flac", options);
  ASSERT_TRUE(audio.ok()) << audio.status();
  EXPECT_EQ(report.frames_announced, 48000);
  EXPECT_GT(report.frames_decoded, 0);
  EXPECT_LT(report.frames_decoded, 48000);
  EXPECT_EQ(audio->size(), static_cast<size_t>(report.frames_decoded));
}

// A WAV cut short: libsndfile sizes SF_INFO.frames from the bytes present, so the report takes the
// 'data' chunk's declared size (hand-laid-out header: 16000 frames of 2 bytes) as the frames
// announced; 44 header bytes + 2 * 6000 data bytes leave 6000 frames decoded. The whole file's
// report shows both equal.
TEST(LoadAudioTest, ReportShowsATruncatedWav) {
  std::vector<unsigned char> wav = Pcm16WavBytes(16000, 16000);
  AudioReport report;
  AudioOptions options;
  options.report = &report;
  ASSERT_TRUE(LoadAudio16kMonoFromMemory(wav.data(), wav.size(), "whole.wav", options).ok());
  EXPECT_EQ(report.frames_announced, 16000);
  EXPECT_EQ(report.frames_decoded, 16000);
  wav.resize(44 + 2 * 6000);
  report = AudioReport();
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMonoFromMemory(wav.data(), wav.size(), "cut.wav", options);
  ASSERT_TRUE(audio.ok()) << audio.status();
  EXPECT_EQ(report.frames_announced, 16000);
  EXPECT_EQ(report.frames_decoded, 6000);
  EXPECT_TRUE(report.announced_is_exact);
  EXPECT_EQ(audio->size(), 6000u);
  EXPECT_EQ(TruncationWarning(report, "cut.wav"),
            "cut.wav: decoding stopped after 6000 of the 16000 frames the header announces (corrupt or truncated "
            "data): transcribing the 0.38 s decoded");
  // A 'data' size of 0xFFFFFFFF (ffmpeg's WAV to a pipe, which cannot seek back to fill it in) is
  // a stream of unknown length, not 2^31 frames announced: no warning.
  wav = Pcm16WavBytes(16000, 16000);
  for (int i = 40; i < 44; ++i) wav[i] = 0xFF;
  ASSERT_TRUE(LoadAudio16kMonoFromMemory(wav.data(), wav.size(), "pipe.wav", options).ok());
  EXPECT_EQ(report.frames_announced, 16000);
  EXPECT_EQ(TruncationWarning(report, "pipe.wav"), "");
}

TEST(LoadAudioErrorTest, Directory) {
  const std::string path = TmpPath("");
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMono(path);
  ASSERT_FALSE(audio.ok());
  EXPECT_THAT(audio.status().message(), HasSubstr("directory"));
}

// ---------------------------------------------------------------------------------------------
// The same bytes from a file, from memory, and from a stream (a pipe fed by a thread, stdin,
// fmemopen) decode to identical samples: every source ends in the same libsndfile decoder and
// the same downmix/resample code.

// Feeds `bytes` into a pipe from a writer thread and decodes the read end with
// LoadAudio16kMonoFromStream. The writer stops on EPIPE if the reader gives up early.
absl::StatusOr<std::vector<float>> LoadThroughPipe(const std::vector<unsigned char>& bytes,
                                                   const std::string& name = kStdinName,
                                                   const AudioOptions& options = {}) {
  std::signal(SIGPIPE, SIG_IGN);
  int fds[2];
  if (pipe(fds) != 0) return absl::InternalError(std::strerror(errno));
  std::thread writer([&bytes, fd = fds[1]] {
    size_t off = 0;
    while (off < bytes.size()) {
      const ssize_t n = write(fd, bytes.data() + off, bytes.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    close(fd);
  });
  FILE* in = fdopen(fds[0], "rb");
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMonoFromStream(in, name, options);
  std::fclose(in);
  writer.join();
  return audio;
}

// LoadAudio16kMono("-") with the pipe's read end as file descriptor 0 for the call.
absl::StatusOr<std::vector<float>> LoadThroughStdin(const std::vector<unsigned char>& bytes) {
  int fds[2];
  if (pipe(fds) != 0) return absl::InternalError(std::strerror(errno));
  std::thread writer([&bytes, fd = fds[1]] {
    size_t off = 0;
    while (off < bytes.size()) {
      const ssize_t n = write(fd, bytes.data() + off, bytes.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    close(fd);
  });
  const int saved = dup(0);
  dup2(fds[0], 0);
  close(fds[0]);
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMono("-");
  dup2(saved, 0);
  close(saved);
  std::clearerr(stdin);
  writer.join();
  return audio;
}

absl::StatusOr<std::vector<float>> LoadThroughFmemopen(const std::vector<unsigned char>& bytes,
                                                       const AudioOptions& options = {}) {
  FILE* in = fmemopen(const_cast<unsigned char*>(bytes.data()), bytes.size(), "rb");
  if (in == nullptr) return absl::InternalError(std::strerror(errno));
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMonoFromStream(in, "memstream", options);
  std::fclose(in);
  return audio;
}

// Bit-exact comparison with the first differing sample in the failure message.
void ExpectSameSamples(const std::vector<float>& want, const std::vector<float>& got,
                       const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(float)), 0)
        << what << ": sample " << i << " is " << got[i] << ", file gave " << want[i];
  }
}

struct SourceCase {
  const char* name;
  // Writes the test file and returns its path ("" on failure).
  std::string (*make)();
};

std::string MakeJfkWav() { return testdata::SharedData("jfk.wav"); }
std::string MakeJfkMp3() { return testdata::SharedData("jfk.mp3"); }

std::vector<float> Chirp(int rate, int channels, int frames) {
  std::vector<float> out(static_cast<size_t>(frames) * channels);
  for (int i = 0; i < frames; ++i) {
    const double t = static_cast<double>(i) / rate;
    for (int c = 0; c < channels; ++c) {
      out[static_cast<size_t>(i) * channels + c] =
          static_cast<float>((0.4 - 0.1 * c) * std::sin(2.0 * M_PI * (300.0 + 400.0 * t + 50 * c) * t));
    }
  }
  return out;
}

template <int kFormat, int kRate, int kChannels>
std::string MakeWritten() {
  const std::string path = TmpPath("source_" + std::to_string(kFormat) + "_" +
                                   std::to_string(kRate) + "_" + std::to_string(kChannels));
  return WriteFile(path, kFormat, kRate, kChannels, Chirp(kRate, kChannels, kRate + 123)) ? path : "";
}

// Headerless u-law that libsndfile recognises only by the ".au" extension.
std::string MakeRawUlawAu() {
  const std::string path = TmpPath("headerless.au");
  std::ofstream out(path, std::ios::binary);
  for (int i = 0; i < 8000; ++i) out.put(static_cast<char>((i * 37) & 0xff));
  return out.good() ? path : "";
}

class SourceTest : public ::testing::TestWithParam<SourceCase> {};

TEST_P(SourceTest, FileMemoryPipeStdinAndFmemopenAgree) {
  const std::string path = GetParam().make();
  ASSERT_FALSE(path.empty());
  absl::StatusOr<std::vector<float>> from_file = LoadAudio16kMono(path);
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  ASSERT_FALSE(from_file->empty());
  const std::vector<unsigned char> bytes = ReadBytes(path);
  ASSERT_FALSE(bytes.empty());

  // `path` as the name: the extension fallback applies as it does for the file.
  absl::StatusOr<std::vector<float>> from_memory =
      LoadAudio16kMonoFromMemory(bytes.data(), bytes.size(), path);
  ASSERT_TRUE(from_memory.ok()) << from_memory.status();
  ExpectSameSamples(*from_file, *from_memory, "memory");

  absl::StatusOr<std::vector<float>> from_pipe = LoadThroughPipe(bytes, path);
  ASSERT_TRUE(from_pipe.ok()) << from_pipe.status();
  ExpectSameSamples(*from_file, *from_pipe, "pipe");

  if (std::string(GetParam().name) == "raw_ulaw_au") return;  // "-" has no extension
  absl::StatusOr<std::vector<float>> from_stdin = LoadThroughStdin(bytes);
  ASSERT_TRUE(from_stdin.ok()) << from_stdin.status();
  ExpectSameSamples(*from_file, *from_stdin, "stdin");

  absl::StatusOr<std::vector<float>> from_fmemopen = LoadThroughFmemopen(bytes);
  ASSERT_TRUE(from_fmemopen.ok()) << from_fmemopen.status();
  ExpectSameSamples(*from_file, *from_fmemopen, "fmemopen");
}

INSTANTIATE_TEST_SUITE_P(
    Sources, SourceTest,
    ::testing::Values(
        SourceCase{"jfk_wav", MakeJfkWav}, SourceCase{"jfk_mp3", MakeJfkMp3},
        SourceCase{"wav_u8_8k", MakeWritten<SF_FORMAT_WAV | SF_FORMAT_PCM_U8, 8000, 1>},
        SourceCase{"wav_f32_44k_stereo", MakeWritten<SF_FORMAT_WAV | SF_FORMAT_FLOAT, 44100, 2>},
        SourceCase{"wav_ulaw_16k", MakeWritten<SF_FORMAT_WAV | SF_FORMAT_ULAW, 16000, 1>},
        SourceCase{"aiff_s24_48k_stereo", MakeWritten<SF_FORMAT_AIFF | SF_FORMAT_PCM_24, 48000, 2>},
        SourceCase{"flac_s16_22k", MakeWritten<SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 22050, 1>},
        SourceCase{"ogg_vorbis_16k", MakeWritten<SF_FORMAT_OGG | SF_FORMAT_VORBIS, 16000, 1>},
        SourceCase{"ogg_opus_48k", MakeWritten<SF_FORMAT_OGG | SF_FORMAT_OPUS, 48000, 1>},
        SourceCase{"raw_ulaw_au", MakeRawUlawAu}),
    [](const ::testing::TestParamInfo<SourceCase>& info) { return info.param.name; });

// Headerless u-law: libsndfile's own extension fallback for files starts after the 12 bytes it
// read to guess the type (7988 frames); the file path reopens with the format forced, so file and
// memory both decode all 8000 frames from byte 0.
TEST(LoadAudioFromMemoryTest, ExtensionFallbackNeedsTheName) {
  const std::string path = MakeRawUlawAu();
  absl::StatusOr<std::vector<float>> from_file = LoadAudio16kMono(path);
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  EXPECT_EQ(from_file->size(), 16000u);
  const std::vector<unsigned char> bytes = ReadBytes(path);
  absl::StatusOr<std::vector<float>> named = LoadAudio16kMonoFromMemory(bytes.data(), bytes.size(), "x.AU");
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_EQ(named->size(), 16000u);  // 8000 frames at 8 kHz
  absl::StatusOr<std::vector<float>> unnamed = LoadAudio16kMonoFromMemory(bytes.data(), bytes.size(), kStdinName);
  ASSERT_FALSE(unnamed.ok());
  EXPECT_EQ(unnamed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unnamed.status().message(), HasSubstr("<stdin>: not a readable audio stream (8000 bytes)"));
}

// The documented difference: libsndfile forces its MPEG decoder for a *.mp3 file it cannot
// identify (here: 100 zero bytes before the ID3 tag); virtual I/O cannot ask for that.
TEST(LoadAudioFromMemoryTest, UnidentifiedMp3DecodesOnlyFromAFile) {
  std::vector<unsigned char> bytes(100, 0);
  const std::vector<unsigned char> mp3 = ReadBytes(testdata::SharedData("jfk.mp3"));
  bytes.insert(bytes.end(), mp3.begin(), mp3.end());
  const std::string path = TmpPath("junk_prefix.mp3");
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  absl::StatusOr<std::vector<float>> from_file = LoadAudio16kMono(path);
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  absl::StatusOr<std::vector<float>> from_memory = LoadAudio16kMonoFromMemory(bytes.data(), bytes.size(), path);
  ASSERT_FALSE(from_memory.ok());
  EXPECT_THAT(from_memory.status().message(), HasSubstr("Format not recognised"));
}

TEST(LoadAudioErrorTest, EmptyInput) {
  absl::StatusOr<std::vector<float>> memory = LoadAudio16kMonoFromMemory(nullptr, 0, "<stdin>");
  ASSERT_FALSE(memory.ok());
  EXPECT_EQ(memory.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(memory.status().message(), HasSubstr("<stdin>: empty file (0 bytes), expected audio"));

  absl::StatusOr<std::vector<float>> pipe = LoadThroughPipe({});
  ASSERT_FALSE(pipe.ok());
  EXPECT_EQ(pipe.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(pipe.status().message(), HasSubstr("<stdin>: empty file (0 bytes), expected audio"));

  absl::StatusOr<std::vector<float>> stdin_audio = LoadThroughStdin({});
  ASSERT_FALSE(stdin_audio.ok());
  EXPECT_THAT(stdin_audio.status().message(), HasSubstr("<stdin>: empty file (0 bytes)"));

  // A 0-byte file says the same as 0 bytes on stdin (libsndfile's "Format not recognised" did).
  const std::string path = TmpPath("zero_bytes.wav");
  std::ofstream(path, std::ios::binary).flush();
  absl::StatusOr<std::vector<float>> file = LoadAudio16kMono(path);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(file.status().message(), path + ": empty file (0 bytes), expected audio (WAV, FLAC, MP3, Ogg, ...)");
  EXPECT_EQ(memory.status().message(), "<stdin>: empty file (0 bytes), expected audio (WAV, FLAC, MP3, Ogg, ...)");
}

TEST(LoadAudioErrorTest, GarbageBytesNameTheSource) {
  const char kJunk[] = "RIFF\x10\x00\x00\x00WAVEjunkjunkjunk";
  const std::string junk(kJunk, sizeof(kJunk) - 1);
  absl::StatusOr<std::vector<float>> memory =
      LoadAudio16kMonoFromMemory(junk.data(), junk.size(), "upload.wav");
  ASSERT_FALSE(memory.ok());
  EXPECT_EQ(memory.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(memory.status().message(), HasSubstr("upload.wav: not a readable audio stream (24 bytes)"));

  std::vector<unsigned char> text(5000);
  for (size_t i = 0; i < text.size(); ++i) text[i] = static_cast<unsigned char>("hello, world\n"[i % 13]);
  absl::StatusOr<std::vector<float>> pipe = LoadThroughPipe(text);
  ASSERT_FALSE(pipe.ok());
  EXPECT_EQ(pipe.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(pipe.status().message(), HasSubstr("<stdin>: not a readable audio stream (5000 bytes)"));
  EXPECT_THAT(pipe.status().message(), HasSubstr("Format not recognised"));
}

TEST(LoadAudioErrorTest, ReadFailureNamesTheSource) {
  // A stream opened for writing only: fread fails with EBADF.
  FILE* out = std::fopen(TmpPath("write_only").c_str(), "wb");
  ASSERT_NE(out, nullptr);
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMonoFromStream(out, kStdinName);
  std::fclose(out);
  ASSERT_FALSE(audio.ok());
  EXPECT_EQ(audio.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(audio.status().message(), HasSubstr("<stdin>: read failed after 0 bytes: "));
  EXPECT_THAT(audio.status().message(), HasSubstr(std::strerror(EBADF)));

  absl::StatusOr<std::vector<float>> null_stream = LoadAudio16kMonoFromStream(nullptr, kStdinName);
  ASSERT_FALSE(null_stream.ok());
  EXPECT_THAT(null_stream.status().message(), HasSubstr("<stdin>"));
}

TEST(LoadAudioErrorTest, StreamSizeLimit) {
  const std::vector<unsigned char> bytes = ReadBytes(testdata::SharedData("jfk.wav"));
  AudioOptions options;
  options.max_stream_bytes = bytes.size() - 1;
  absl::StatusOr<std::vector<float>> over = LoadThroughFmemopen(bytes, options);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(over.status().message(),
              HasSubstr(absl::StrCat("memstream: input is larger than ", bytes.size() - 1, " bytes")));
  // Through a pipe too: the reader gives up early and the writer sees EPIPE.
  options.max_stream_bytes = 100000;
  absl::StatusOr<std::vector<float>> piped = LoadThroughPipe(bytes, kStdinName, options);
  ASSERT_FALSE(piped.ok());
  EXPECT_EQ(piped.status().code(), absl::StatusCode::kResourceExhausted);
  // Exactly at the limit is fine.
  options.max_stream_bytes = bytes.size();
  absl::StatusOr<std::vector<float>> at = LoadThroughFmemopen(bytes, options);
  ASSERT_TRUE(at.ok()) << at.status();
  EXPECT_EQ(at->size(), 176000u);
}

TEST(SampleRangeTest, OffsetAndDuration) {
  // 11 s of audio.
  absl::StatusOr<SampleRange> all = SampleRangeFromMs(176000, 0, 0);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->begin, 0);
  EXPECT_EQ(all->end, 176000);

  absl::StatusOr<SampleRange> mid = SampleRangeFromMs(176000, 1500, 2000);
  ASSERT_TRUE(mid.ok());
  EXPECT_EQ(mid->begin, 24000);
  EXPECT_EQ(mid->end, 56000);
  EXPECT_EQ(mid->size(), 32000);

  // Duration past the end is clipped.
  absl::StatusOr<SampleRange> tail = SampleRangeFromMs(176000, 10000, 5000);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(tail->begin, 160000);
  EXPECT_EQ(tail->end, 176000);
  absl::StatusOr<SampleRange> huge = SampleRangeFromMs(176000, 10, INT64_MAX / 2);
  ASSERT_TRUE(huge.ok());
  EXPECT_EQ(huge->end, 176000);
}

TEST(SampleRangeTest, Errors) {
  EXPECT_FALSE(SampleRangeFromMs(176000, -1, 0).ok());
  EXPECT_FALSE(SampleRangeFromMs(176000, 0, -5).ok());
  absl::StatusOr<SampleRange> past = SampleRangeFromMs(176000, 11000, 0);
  ASSERT_FALSE(past.ok());
  EXPECT_THAT(past.status().message(), HasSubstr("11000 ms"));
  EXPECT_FALSE(SampleRangeFromMs(176000, INT64_MAX, 0).ok());
}

}  // namespace
}  // namespace whisper
