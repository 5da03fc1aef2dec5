#include "apps/common/audio.h"

#include <samplerate.h>
#include <sndfile.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "apps/common/mpeg_frames.h"

namespace whisper {
namespace {

// Frames decoded per sf_readf_float call: 64 KiB of mono floats, small enough to stream
// hour-long files without holding the decoded multichannel input in memory.
constexpr sf_count_t kBlockFrames = 16384;

// At most this many output samples are reserved from the header's frame count (30 minutes at
// 16 kHz, 115 MB); longer audio grows the buffer geometrically as it decodes. A header's count
// is a claim, not a fact (a FLAC STREAMINFO may promise 2^36 frames in a 100-byte file).
constexpr size_t kMaxReservedSamples = size_t{16000} * 60 * 30;

struct SndfileCloser {
  void operator()(SNDFILE* f) const { sf_close(f); }
};
using SndfilePtr = std::unique_ptr<SNDFILE, SndfileCloser>;

struct SrcStateDeleter {
  void operator()(SRC_STATE* s) const { src_delete(s); }
};
using SrcStatePtr = std::unique_ptr<SRC_STATE, SrcStateDeleter>;

// Averages `channels` interleaved channels of `frames` frames into `mono`.
void Downmix(const float* interleaved, sf_count_t frames, int channels, float* mono) {
  if (channels == 1) {
    std::copy(interleaved, interleaved + frames, mono);
    return;
  }
  const float scale = 1.0f / static_cast<float>(channels);
  for (sf_count_t i = 0; i < frames; ++i) {
    const float* frame = interleaved + i * channels;
    float sum = 0.0f;
    for (int c = 0; c < channels; ++c) sum += frame[c];
    mono[i] = sum * scale;
  }
}

// Runs libsamplerate on `in` (empty with end_of_input to drain) and appends the output to `out`.
absl::Status Resample(SRC_STATE* state, double ratio, const float* in, long n_in, bool end_of_input,
                      const std::string& name, std::vector<float>* out) {
  SRC_DATA d{};
  d.src_ratio = ratio;
  d.end_of_input = end_of_input ? 1 : 0;
  // Each pass emits at most ~ratio * input + the filter's pending tail; loop until the input
  // is consumed (and, when draining, until no more output arrives).
  for (;;) {
    const long capacity = static_cast<long>(std::ceil(n_in * ratio)) + 4096;
    const size_t old_size = out->size();
    out->resize(old_size + capacity);
    d.data_in = in;
    d.input_frames = n_in;
    d.data_out = out->data() + old_size;
    d.output_frames = capacity;
    const int err = src_process(state, &d);
    out->resize(old_size + d.output_frames_gen);
    if (err != 0) {
      return absl::InternalError(
          absl::StrCat("resampling ", name, " failed: libsamplerate: ", src_strerror(err)));
    }
    if (d.input_frames_used == 0 && d.output_frames_gen == 0 && !end_of_input) {
      return absl::InternalError(
          absl::StrCat("resampling ", name, ": libsamplerate made no progress"));
    }
    in += d.input_frames_used;
    n_in -= d.input_frames_used;
    if (n_in == 0 && (!end_of_input || d.output_frames_gen == 0)) return absl::OkStatus();
  }
}

// The header's sample rate and channel count: an error naming `name` unless both are positive
// and the rate is within kMinSampleRate..kMaxSampleRate.
absl::Status CheckHeader(const SF_INFO& info, const std::string& name) {
  if (info.samplerate <= 0 || info.channels <= 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: invalid header: sample rate %d Hz, %d channels (both must be > 0)",
                        name, info.samplerate, info.channels));
  }
  // Checked before anything is allocated: a 1 Hz header would turn each input frame into 16000
  // output samples (a 1 MB file into 64 GB).
  if (info.samplerate < kMinSampleRate || info.samplerate > kMaxSampleRate) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: sample rate %d Hz in the header, expected %d to %d Hz", name, info.samplerate,
        kMinSampleRate, kMaxSampleRate));
  }
  return absl::OkStatus();
}

// Makes src[0..n_streams) (mono libsamplerate converters of options.quality).
absl::Status MakeConverters(int n_streams, const AudioOptions& options, const std::string& name,
                            SrcStatePtr* src) {
  for (int k = 0; k < n_streams; ++k) {
    int err = 0;
    const int converter =
        options.quality == ResampleQuality::kBest ? SRC_SINC_BEST_QUALITY : SRC_SINC_MEDIUM_QUALITY;
    src[k].reset(src_new(converter, /*channels=*/1, &err));
    if (src[k] == nullptr) {
      return absl::InternalError(
          absl::StrCat("resampling ", name, ": src_new failed: ", src_strerror(err)));
    }
  }
  return absl::OkStatus();
}

// Checks the n frames of `channels` interleaved samples that follow frame first_frame: an error
// naming the first sample that is not finite or past kMaxFloatSample in magnitude.
absl::Status CheckSamples(const float* interleaved, sf_count_t n, int channels, int64_t first_frame,
                          const std::string& name) {
  // NaN or infinity in a float file would poison the whole log-mel (its global maximum): reject
  // it with the position of the first bad sample.
  // A magnitude past kMaxFloatSample would overflow the float power spectrum to infinity.
  for (sf_count_t i = 0; i < n * channels; ++i) {
    const float x = interleaved[static_cast<size_t>(i)];
    if (!std::isfinite(x)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: sample %d (channel %d) is not a finite number", name,
          first_frame + i / channels, static_cast<int>(i % channels)));
    }
    if (std::fabs(x) > kMaxFloatSample) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: sample %d (channel %d) is %g, expected a magnitude of at most %g (full scale is "
          "1.0)",
          name, first_frame + i / channels, static_cast<int>(i % channels), x,
          kMaxFloatSample));
    }
  }
  return absl::OkStatus();
}

// The output streams of one decode and their converters: the mix (`out`), then with
// options.stereo channels 0 and 1 (into *options.stereo).
struct DecodeStreams {
  int n = 1;
  bool resample = false;
  double ratio = 1.0;  // kSampleRate / the input's rate
  SrcStatePtr src[3];
  std::vector<float> out;
  std::vector<std::vector<float>>* stereo = nullptr;

  std::vector<float>* dst(int k) { return k == 0 ? &out : &(*stereo)[k - 1]; }
};

// Appends a block of n frames of info.channels interleaved samples to every stream of `s`: the
// mix (Downmix) or its channel, resampled unless the input is at 16 kHz. `mono` holds n floats.
absl::Status AppendBlock(const float* interleaved, sf_count_t n, const SF_INFO& info,
                         const std::string& name, std::vector<float>* mono, DecodeStreams* s) {
  for (int k = 0; k < s->n; ++k) {
    std::vector<float>* dst = s->dst(k);
    if (k == 0) {
      Downmix(interleaved, n, info.channels, mono->data());
    } else {
      const int c = std::min(k - 1, info.channels - 1);
      for (sf_count_t i = 0; i < n; ++i) (*mono)[i] = interleaved[static_cast<size_t>(i * info.channels + c)];
    }
    if (!s->resample) {
      dst->insert(dst->end(), mono->begin(), mono->begin() + n);
      continue;
    }
    absl::Status st = Resample(s->src[k].get(), s->ratio, mono->data(), static_cast<long>(n),
                               /*end_of_input=*/false, name, dst);
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

// Drains every converter of `s` after total_frames input frames and fixes each stream's length
// to total_frames * ratio.
absl::Status DrainStreams(int64_t total_frames, const std::string& name, DecodeStreams* s) {
  for (int k = 0; s->resample && k < s->n; ++k) {
    std::vector<float>* dst = s->dst(k);
    absl::Status st = Resample(s->src[k].get(), s->ratio, nullptr, 0, /*end_of_input=*/true, name, dst);
    if (!st.ok()) return st;
    // libsamplerate's drained output can differ from frames * ratio by a sample or two; fix the
    // length so timestamps do not depend on the converter: pad with silence or drop the tail.
    const int64_t expected = std::llround(static_cast<double>(total_frames) * s->ratio);
    dst->resize(static_cast<size_t>(expected), 0.0f);
  }
  return absl::OkStatus();
}

// The frames a WAV's 'data' chunk header announces when the file is shorter than that, else -1.
// libsndfile sizes SF_INFO.frames from the bytes present, so a truncated WAV looks complete; its
// parse log (SFC_GET_LOG_INFO, wav.c) records "data : <header bytes> (should be <bytes present>)"
// and "Block Align : <bytes per frame>". A size of 0xFFFFFFFF is no announcement: it is what a
// writer that cannot seek back leaves (ffmpeg's WAV to a pipe), a stream of unknown length.
int64_t TruncatedWavFrames(SNDFILE* file, const SF_INFO& info) {
  const int major = info.format & SF_FORMAT_TYPEMASK;
  if (major != SF_FORMAT_WAV && major != SF_FORMAT_WAVEX) return -1;
  char log[8192] = {0};
  sf_command(file, SFC_GET_LOG_INFO, log, sizeof(log) - 1);
  const char* data = std::strstr(log, "\ndata : ");
  const char* align = std::strstr(log, "Block Align");
  long long header_bytes = 0, present_bytes = 0, block_align = 0;
  if (data == nullptr || align == nullptr ||
      std::sscanf(data, "\ndata : %lld (should be %lld)", &header_bytes, &present_bytes) != 2 ||
      std::sscanf(align, "Block Align : %lld", &block_align) != 1 || block_align <= 0 ||
      header_bytes <= present_bytes || header_bytes == 0xFFFFFFFFLL) {
    return -1;
  }
  return header_bytes / block_align;
}

// Whether info.frames is the header's length. libsndfile reports a FLAC STREAMINFO total_samples
// of 0 ("unknown" in the FLAC format) as SF_COUNT_MAX (seen with libsndfile 1.2).
bool LengthIsKnown(const SF_INFO& info) { return info.frames >= 0 && info.frames != SF_COUNT_MAX; }

// Fills options.report (when set) from the header and the frames decoded.
void FillReport(SNDFILE* file, const SF_INFO& info, int64_t total_frames, const AudioOptions& options) {
  if (options.report == nullptr) return;
  const int64_t wav_frames = TruncatedWavFrames(file, info);
  const int64_t header_frames = LengthIsKnown(info) ? info.frames : 0;
  options.report->frames_announced = wav_frames > header_frames ? wav_frames : header_frames;
  options.report->frames_decoded = total_frames;
  options.report->announced_is_exact = (info.format & SF_FORMAT_TYPEMASK) != SF_FORMAT_MPEG;
  options.report->sample_rate = info.samplerate;
  options.report->channels = info.channels;
}

// The error for audio longer than AudioOptions::max_seconds: `frames` at info.samplerate, as
// `source` tells.
absl::Status TooLong(int64_t frames, const SF_INFO& info, const std::string& name, double max_seconds,
                     const char* source) {
  return absl::ResourceExhaustedError(absl::StrFormat(
      "%s: the audio is %.3f s long (%d frames at %d Hz, from %s): expected at most %g s", name,
      static_cast<double>(frames) / info.samplerate, frames, info.samplerate, source, max_seconds));
}

// Decodes an opened stream: downmix, resample to 16 kHz, fix the length.
absl::StatusOr<std::vector<float>> DecodeOpenedOrThrow(SNDFILE* file, const SF_INFO& info,
                                                       const std::string& name,
                                                       const AudioOptions& options) {
  if (absl::Status st = CheckHeader(info, name); !st.ok()) return st;
  // The frames options.max_seconds allows at the file's rate (no limit: the largest count).
  const int64_t max_frames = options.max_seconds > 0 && options.max_seconds * info.samplerate < 9e18
                                 ? static_cast<int64_t>(std::floor(options.max_seconds * info.samplerate))
                                 : std::numeric_limits<int64_t>::max();
  if (LengthIsKnown(info) && info.frames > max_frames) return TooLong(info.frames, info, name, options.max_seconds, "its header");
  DecodeStreams s;
  s.resample = info.samplerate != kSampleRate;
  s.ratio = static_cast<double>(kSampleRate) / info.samplerate;
  s.n = options.stereo != nullptr ? 3 : 1;
  s.stereo = options.stereo;
  if (s.resample) {
    if (absl::Status st = MakeConverters(s.n, options, name, s.src); !st.ok()) return st;
  }
  if (options.stereo != nullptr) {
    options.stereo->assign(2, std::vector<float>());
  }
  // info.frames is exact for PCM/FLAC and an estimate (or unknown) for some compressed streams.
  if (LengthIsKnown(info) && info.frames > 0) {
    const double claimed = std::ceil(static_cast<double>(info.frames) * s.ratio) + 4096;
    s.out.reserve(claimed < kMaxReservedSamples ? static_cast<size_t>(claimed) : kMaxReservedSamples);
  }
  std::vector<float> interleaved(static_cast<size_t>(kBlockFrames) * info.channels);
  std::vector<float> mono(kBlockFrames);
  int64_t total_frames = 0;
  for (;;) {
    const sf_count_t n = sf_readf_float(file, interleaved.data(), kBlockFrames);
    if (n <= 0) break;
    if (absl::Status st = CheckSamples(interleaved.data(), n, info.channels, total_frames, name); !st.ok()) {
      return st;
    }
    total_frames += n;
    if (total_frames > max_frames) {
      return TooLong(total_frames, info, name, options.max_seconds, "the frames decoded so far");
    }
    if (absl::Status st = AppendBlock(interleaved.data(), n, info, name, &mono, &s); !st.ok()) return st;
  }
  if (sf_error(file) != SF_ERR_NO_ERROR) {
    return absl::DataLossError(absl::StrFormat("%s: decoding failed after %d frames: %s", name,
                                               total_frames, sf_strerror(file)));
  }
  FillReport(file, info, total_frames, options);
  if (total_frames == 0) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": contains no audio (0 frames decoded)"));
  }
  if (absl::Status st = DrainStreams(total_frames, name, &s); !st.ok()) return st;
  return std::move(s.out);
}

// DecodeOpenedOrThrow with an allocation failure (a header's frame count, audio longer than
// memory) reported as ResourceExhausted instead of escaping as std::bad_alloc.
absl::StatusOr<std::vector<float>> DecodeOpened(SNDFILE* file, const SF_INFO& info,
                                                const std::string& name,
                                                const AudioOptions& options) {
  try {
    return DecodeOpenedOrThrow(file, info, name, options);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat(name, ": out of memory while decoding the audio (", info.frames,
                     " frames at ", info.samplerate, " Hz, ", info.channels, " channels)"));
  }
}

// SF_VIRTUAL_IO over a read-only byte buffer.
struct MemoryFile {
  const unsigned char* data;
  sf_count_t size;
  sf_count_t pos;
};

sf_count_t MemGetLength(void* user) { return static_cast<MemoryFile*>(user)->size; }

sf_count_t MemSeek(sf_count_t offset, int whence, void* user) {
  MemoryFile* m = static_cast<MemoryFile*>(user);
  sf_count_t base = 0;
  if (whence == SEEK_CUR) base = m->pos;
  if (whence == SEEK_END) base = m->size;
  const sf_count_t target = base + offset;
  if (target < 0 || target > m->size) return -1;
  m->pos = target;
  return m->pos;
}

sf_count_t MemRead(void* ptr, sf_count_t count, void* user) {
  MemoryFile* m = static_cast<MemoryFile*>(user);
  const sf_count_t n = std::max<sf_count_t>(0, std::min(count, m->size - m->pos));
  std::memcpy(ptr, m->data + m->pos, static_cast<size_t>(n));
  m->pos += n;
  return n;
}

sf_count_t MemWrite(const void*, sf_count_t, void*) { return 0; }

sf_count_t MemTell(void* user) { return static_cast<MemoryFile*>(user)->pos; }

// An MP3 whose Xing/Info header counts fewer frames than the stream holds (XingCountsTooFewFrames:
// files joined end to end; libmpg123 stops at the count), decoded whole from a copy of the bytes
// whose header counts every frame (WithXingCountOfTheWholeStream).
// options.report gets both counts (TruncationWarning names them). nullopt for other data, and
// when the copy does not open (the caller's decode then runs as before).
std::optional<absl::StatusOr<std::vector<float>>> DecodeWholeMpeg(const unsigned char* data, size_t size,
                                                                  const std::string& name,
                                                                  const AudioOptions& options) {
  const MpegScan scan = ScanMpegFrames(data, size);
  if (!XingCountsTooFewFrames(scan)) return std::nullopt;
  std::vector<unsigned char> copy = WithXingCountOfTheWholeStream(data, size, scan);
  MemoryFile mem{copy.data(), static_cast<sf_count_t>(size), 0};
  SF_VIRTUAL_IO vio{MemGetLength, MemSeek, MemRead, MemWrite, MemTell};
  SF_INFO info{};
  SndfilePtr file(sf_open_virtual(&vio, SFM_READ, &info, &mem));
  if (file == nullptr || (info.format & SF_FORMAT_TYPEMASK) != SF_FORMAT_MPEG) return std::nullopt;
  absl::StatusOr<std::vector<float>> audio = DecodeOpened(file.get(), info, name, options);
  if (options.report != nullptr) {
    options.report->mpeg_header_frames = scan.xing_frames;
    options.report->mpeg_stream_frames = scan.frames;
  }
  return audio;
}

// libsndfile's fallback for data whose header it does not recognise (sndfile.c
// format_from_extension, libsndfile 1.2): headerless formats named by the path's extension. A
// virtual-I/O stream has no path, so the memory path applies the same table to `name`, and the
// file path reopens with it (see LoadAudio16kMono). RAW is the only container a caller may force
// when opening for reading, so the table's last entry (.mp3 -> the MPEG decoder) cannot be
// reproduced. Fills `info` and returns true for a listed extension (case-insensitive).
bool RawFormatFromExtension(const std::string& name, SF_INFO* info) {
  const size_t slash = name.find_last_of("/\\");
  const std::string base = slash == std::string::npos ? name : name.substr(slash + 1);
  const size_t dot = base.rfind('.');
  if (dot == std::string::npos || base.size() - dot - 1 > 15) return false;
  std::string ext = base.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  int format = 0, rate = 8000;
  if (ext == "au" || ext == "snd") {
    format = SF_FORMAT_RAW | SF_FORMAT_ULAW;
  } else if (ext == "vox" || ext == "vox8") {
    format = SF_FORMAT_RAW | SF_FORMAT_VOX_ADPCM;
  } else if (ext == "vox6") {
    format = SF_FORMAT_RAW | SF_FORMAT_VOX_ADPCM;
    rate = 6000;
  } else if (ext == "gsm") {
    format = SF_FORMAT_RAW | SF_FORMAT_GSM610;
  } else {
    return false;
  }
  *info = SF_INFO{};
  info->format = format;
  info->samplerate = rate;
  info->channels = 1;
  return true;
}

// Standard input is read in chunks of at least this size.
constexpr size_t kStreamChunkBytes = size_t{64} << 10;

// Reads `f` to EOF into `bytes`, doubling the buffer (at least kStreamChunkBytes at a time) up to
// max_bytes.
absl::Status ReadStream(FILE* f, const std::string& name, size_t max_bytes,
                        std::vector<unsigned char>* bytes) {
  const size_t limit = std::min(max_bytes, std::numeric_limits<size_t>::max() - 1);
  size_t size = 0;
  bytes->clear();
  for (;;) {
    if (size == bytes->size()) {
      // One byte past the limit, so that a stream of exactly `limit` bytes is told apart from a
      // longer one.
      const size_t grow = std::max(kStreamChunkBytes, bytes->size());
      try {
        bytes->resize(size + std::min(grow, limit + 1 - size));
      } catch (const std::bad_alloc&) {
        bytes->clear();
        bytes->shrink_to_fit();
        return absl::ResourceExhaustedError(
            absl::StrFormat("%s: out of memory after reading %d bytes", name, size));
      }
    }
    const size_t want = bytes->size() - size;
    errno = 0;
    const size_t got = std::fread(bytes->data() + size, 1, want, f);
    const int err = errno;
    size += got;
    if (size > limit) {
      bytes->clear();
      return absl::ResourceExhaustedError(absl::StrFormat(
          "%s: input is larger than %d bytes (AudioOptions::max_stream_bytes)", name, limit));
    }
    if (got == want) continue;
    if (std::ferror(f)) {
      if (err == EINTR) {  // a signal interrupted read(2): nothing was lost, try again
        std::clearerr(f);
        continue;
      }
      bytes->clear();
      return absl::DataLossError(absl::StrFormat("%s: read failed after %d bytes: %s", name, size,
                                                 err != 0 ? std::strerror(err) : "I/O error"));
    }
    break;  // a short count without an error is the end of the stream
  }
  bytes->resize(size);
  return absl::OkStatus();
}

// The offset of a RIFF/WAVE file's "fmt " chunk data in its first `n` bytes, or 0 when they are
// not RIFF/WAVE or hold no complete 16-byte fmt chunk. RIFF WAVE: "RIFF", size, "WAVE", then chunks
// of 4-byte id, little-endian 4-byte size, data padded to even length; "fmt " is WAVEFORMATEX:
// format tag, channels, sample rate (32 bits), byte rate, block_align, bits_per_sample.
size_t WavFmtOffset(const unsigned char* head, size_t n) {
  auto u32 = [&](size_t at) {
    return static_cast<uint32_t>(head[at]) | static_cast<uint32_t>(head[at + 1]) << 8 |
           static_cast<uint32_t>(head[at + 2]) << 16 | static_cast<uint32_t>(head[at + 3]) << 24;
  };
  if (n < 12 || memcmp(head, "RIFF", 4) != 0 || memcmp(head + 8, "WAVE", 4) != 0) return 0;
  size_t at = 12;
  while (at + 8 <= n) {
    const uint32_t size = u32(at + 4);
    if (memcmp(head + at, "fmt ", 4) == 0) return size < 16 || at + 8 + 16 > n ? 0 : at + 8;
    at += 8 + static_cast<size_t>(size) + (size & 1);
  }
  return 0;
}

// The little-endian unsigned integer of `bytes` (at most 4) bytes at p.
uint32_t Le(const unsigned char* p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

// A WAV header's sample rate outside kMinSampleRate .. kMaxSampleRate (any format tag): the
// message CheckHeader gives. libsndfile refuses a rate of 0 or one past INT_MAX itself with
// "SF_INFO struct incomplete", which names neither the field nor the value. Other data: OK.
absl::Status CheckWavRate(const unsigned char* head, size_t n, const std::string& name) {
  const size_t f = WavFmtOffset(head, n);
  if (f == 0) return absl::OkStatus();
  const uint32_t rate = Le(head + f + 4, 4);
  if (rate < static_cast<uint32_t>(kMinSampleRate) || rate > static_cast<uint32_t>(kMaxSampleRate)) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: sample rate %u Hz in the header, expected %d to %d Hz",
                                                      name, rate, kMinSampleRate, kMaxSampleRate));
  }
  return absl::OkStatus();
}

// The WAV "fmt " chunk's sample layout (WavFmtOffset). For PCM (tag 1), IEEE float (3) and
// WAVE_FORMAT_EXTENSIBLE (0xFFFE), bits_per_sample must be 8, 16, 24, 32 or 64 and block_align =
// channels x bits / 8: libsndfile reads a contradictory header (bits 7 with block_align 2, say)
// with a guessed layout and decodes noise without an error. Other tags, other containers and a
// fmt chunk past `n` bytes are left to libsndfile.
absl::Status CheckWavLayout(const unsigned char* head, size_t n, const std::string& name) {
  const size_t f = WavFmtOffset(head, n);
  if (f == 0) return absl::OkStatus();
  const uint32_t tag = Le(head + f, 2), channels = Le(head + f + 2, 2), block_align = Le(head + f + 12, 2),
                 bits = Le(head + f + 14, 2);
  if (tag != 1 && tag != 3 && tag != 0xFFFE) return absl::OkStatus();
  const bool bits_ok = bits == 8 || bits == 16 || bits == 24 || bits == 32 || bits == 64;
  if (!bits_ok || channels == 0 || block_align != channels * bits / 8) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: WAV fmt chunk: bits_per_sample %u, channels %u, block_align %u (expected bits_per_sample 8, 16, "
        "24, 32 or 64 and block_align = channels x bits_per_sample / 8)",
        name, bits, channels, block_align));
  }
  return absl::OkStatus();
}

// The one message for 0 bytes of audio, from a path, stdin or the server's upload.
absl::Status EmptyAudioError(const std::string& name) {
  return absl::InvalidArgumentError(
      absl::StrCat(name, ": empty file (0 bytes), expected audio (WAV, FLAC, MP3, Ogg, ...)"));
}

bool IsWav(const SF_INFO& info) {
  const int major = info.format & SF_FORMAT_TYPEMASK;
  return major == SF_FORMAT_WAV || major == SF_FORMAT_WAVEX;
}

// A path that is not a regular file: a pipe (bash's <(...), /dev/fd/N, /dev/stdin), a FIFO, a
// socket or a character device, read to its end once, as standard input is. Opening it twice
// loses data: the second open for the WAV header check read the 4096 bytes after the ones
// libsndfile had taken (jfk.wav through <(cat ...) lost 2048 of its 176000 frames), and libsndfile
// cannot seek in it (a FLAC from a pipe lost sync).
absl::StatusOr<std::vector<float>> LoadNonSeekable(const std::string& path, const AudioOptions& options) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot open audio file: ", std::strerror(errno)));
  }
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMonoFromStream(f, path, options);
  std::fclose(f);
  return audio;
}

}  // namespace

absl::StatusOr<std::vector<float>> LoadAudio16kMono(const std::string& path,
                                                    const AudioOptions& options) {
  if (path == "-") return LoadAudio16kMonoFromStream(stdin, kStdinName, options);
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      return absl::NotFoundError(absl::StrCat(path, ": audio file not found"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": cannot access audio file: ", std::strerror(err)));
  }
  if (S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory, not an audio file"));
  }
  if (!S_ISREG(st.st_mode)) return LoadNonSeekable(path, options);
  if (st.st_size == 0) return EmptyAudioError(path);
  // The first bytes, for CheckWavLayout, and for CheckWavRate when libsndfile refuses the header.
  unsigned char head[4096];
  size_t n_head = 0;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    n_head = std::fread(head, 1, sizeof(head), f);
    std::fclose(f);
  }
  SF_INFO info{};
  SndfilePtr file(sf_open(path.c_str(), SFM_READ, &info));
  if (file == nullptr) {
    const std::string error = sf_strerror(nullptr);
    if (absl::Status rate = CheckWavRate(head, n_head, path); !rate.ok()) return rate;
    // libsndfile says this when its MPEG fallback for a *.mp3 name fails; the file exists (it was
    // just stat'ed), so say what that means.
    const bool misleading = error.find("File does not exist") != std::string::npos;
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": not a readable audio file: ", misleading ? "no decodable header (truncated or corrupt?); " : "",
        "libsndfile: ", error));
  }
  // RAW is never requested here, so libsndfile chose it from the extension. Its own fallback
  // starts the data after the 12 bytes it read to guess the type (libsndfile 1.2 drops them);
  // reopen with the format forced, which reads from byte 0 as the memory path does.
  if ((info.format & SF_FORMAT_TYPEMASK) == SF_FORMAT_RAW && RawFormatFromExtension(path, &info)) {
    file.reset(sf_open(path.c_str(), SFM_READ, &info));
    if (file == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": not a readable audio file: libsndfile: ", sf_strerror(nullptr)));
    }
  }
  if (IsWav(info)) {
    absl::Status layout = CheckWavLayout(head, n_head, path);
    if (!layout.ok()) return layout;
  }
  if ((info.format & SF_FORMAT_TYPEMASK) == SF_FORMAT_MPEG) {  // compressed: the whole file is read to scan it
    std::vector<unsigned char> bytes;
    if (FILE* f = std::fopen(path.c_str(), "rb")) {
      const absl::Status read = ReadStream(f, path, options.max_stream_bytes, &bytes);
      std::fclose(f);
      if (read.ok()) {
        auto whole = DecodeWholeMpeg(bytes.data(), bytes.size(), path, options);
        if (whole.has_value()) return *std::move(whole);
      }
    }
  }
  return DecodeOpened(file.get(), info, path, options);
}

absl::StatusOr<std::vector<float>> LoadAudio16kMonoFromMemory(const void* data, size_t size,
                                                              const std::string& name,
                                                              const AudioOptions& options) {
  if (data == nullptr || size == 0) return EmptyAudioError(name);
  MemoryFile mem{static_cast<const unsigned char*>(data), static_cast<sf_count_t>(size), 0};
  SF_VIRTUAL_IO vio{MemGetLength, MemSeek, MemRead, MemWrite, MemTell};
  SF_INFO info{};
  SndfilePtr file(sf_open_virtual(&vio, SFM_READ, &info, &mem));
  if (file == nullptr) {
    // Copy the message now: a second open overwrites libsndfile's static error string.
    const std::string error = sf_strerror(nullptr);
    const int code = sf_error(nullptr);
    if (absl::Status rate = CheckWavRate(static_cast<const unsigned char*>(data), size, name); !rate.ok()) {
      return rate;
    }
    if (code == SF_ERR_UNRECOGNISED_FORMAT && RawFormatFromExtension(name, &info)) {
      mem.pos = 0;
      file.reset(sf_open_virtual(&vio, SFM_READ, &info, &mem));
    }
    if (file == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": not a readable audio stream (", size, " bytes): libsndfile: ", error));
    }
  }
  if (IsWav(info)) {
    absl::Status layout = CheckWavLayout(static_cast<const unsigned char*>(data), size, name);
    if (!layout.ok()) return layout;
  }
  if ((info.format & SF_FORMAT_TYPEMASK) == SF_FORMAT_MPEG) {
    auto whole = DecodeWholeMpeg(static_cast<const unsigned char*>(data), size, name, options);
    if (whole.has_value()) return *std::move(whole);
  }
  return DecodeOpened(file.get(), info, name, options);
}

absl::StatusOr<std::vector<float>> LoadAudio16kMonoFromStream(FILE* f, const std::string& name,
                                                              const AudioOptions& options) {
  if (f == nullptr) return absl::InvalidArgumentError(absl::StrCat(name, ": no stream (null FILE*)"));
  std::vector<unsigned char> bytes;
  absl::Status read = ReadStream(f, name, options.max_stream_bytes, &bytes);
  if (!read.ok()) return read;
  return LoadAudio16kMonoFromMemory(bytes.data(), bytes.size(), name, options);
}

std::string TruncationWarning(const AudioReport& report, const std::string& name) {
  if (report.mpeg_header_frames >= 0 && report.sample_rate > 0) {
    return absl::StrFormat("%s: the MP3's Xing/Info header announces %d frames but the stream holds %d (files joined "
                           "end to end?): decoded all of them, %.2f s",
                           name, report.mpeg_header_frames, report.mpeg_stream_frames,
                           static_cast<double>(report.frames_decoded) / report.sample_rate);
  }
  if (!report.announced_is_exact || report.frames_decoded >= report.frames_announced || report.sample_rate <= 0) {
    return "";
  }
  return absl::StrFormat("%s: decoding stopped after %d of the %d frames the header announces (corrupt or "
                         "truncated data): transcribing the %.2f s decoded",
                         name, report.frames_decoded, report.frames_announced,
                         static_cast<double>(report.frames_decoded) / report.sample_rate);
}

absl::StatusOr<SampleRange> SampleRangeFromMs(int64_t n_samples, int64_t offset_ms,
                                              int64_t duration_ms) {
  constexpr int64_t kSamplesPerMs = kSampleRate / 1000;
  if (offset_ms < 0 || duration_ms < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "offset (%d ms) and duration (%d ms) must be >= 0", offset_ms, duration_ms));
  }
  const int64_t audio_ms = n_samples / kSamplesPerMs;
  // Reject before multiplying so huge values cannot overflow.
  if (offset_ms >= audio_ms + 1 || offset_ms * kSamplesPerMs >= n_samples) {
    return absl::InvalidArgumentError(
        absl::StrFormat("offset %d ms is at or past the end of the audio (%d samples = %.3f s)",
                        offset_ms, n_samples, static_cast<double>(n_samples) / kSampleRate));
  }
  SampleRange r;
  r.begin = offset_ms * kSamplesPerMs;
  r.end = n_samples;
  if (duration_ms > 0 && duration_ms < (n_samples - r.begin) / kSamplesPerMs + 1) {
    r.end = std::min(n_samples, r.begin + duration_ms * kSamplesPerMs);
  }
  return r;
}

}  // namespace whisper
