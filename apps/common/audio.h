// Audio input for Whisper: decode a file (or bytes) to 16 kHz mono float samples.
//
// Whisper's front end (OpenAI `whisper.audio.load_audio`, which shells out to ffmpeg, and
// whisper.cpp's examples/common-whisper.cpp, which uses miniaudio) takes f32 mono 16 kHz in
// [-1, 1]. Here libsndfile decodes the container/codec and libsamplerate converts the rate:
//
//   - Formats: whatever the system libsndfile reads; Debian bookworm's 1.2 has WAV (8/16/24/32-bit
//     PCM, 32/64-bit float, u-law/A-law), FLAC, OGG/Vorbis, OGG/Opus, AIFF and MP3 (via mpg123,
//     gapless: encoder delay and padding from the LAME tag are removed).
//   - Sample values: integer PCM is scaled by 1/2^(bits-1) (16-bit: x/32768, as miniaudio and
//     ffmpeg do); float files are passed through unchanged (no clipping).
//   - Channels: averaged with equal weight (ffmpeg's `-ac 1` downmix does the same for stereo).
//   - Rate: 16 kHz input is copied bit-exactly. Any other rate is converted with libsamplerate
//     after the downmix; see ResampleQuality for the filter choice.
#ifndef GGML_WHISPER_APPS_COMMON_AUDIO_H_
#define GGML_WHISPER_APPS_COMMON_AUDIO_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace whisper {

// Whisper's sample rate in Hz (whisper.cpp WHISPER_SAMPLE_RATE).
inline constexpr int kSampleRate = 16000;

// libsamplerate converter used when the input rate is not 16 kHz.
enum class ResampleQuality {
  // SRC_SINC_BEST_QUALITY: passband flat to ~96% of the 8 kHz output Nyquist. Measured for
  // 44.1 kHz -> 16 kHz: 0.0 dB at 7.4 kHz, -0.3 dB at 7.6 kHz, -16.5 dB at 7.8 kHz. This is
  // closest to ffmpeg's default swr filter (cutoff 0.97), which produced the audio Whisper was
  // trained on, and leaves mel channels 78 (7.16-7.68 kHz) and 79 (7.44-7.96 kHz) of the
  // 80-channel filterbank intact. Cost: ~18 ms per second of 44.1 kHz audio on one core.
  kBest,
  // SRC_SINC_MEDIUM_QUALITY: ~3.7x faster, but already -2.1 dB at 7.2 kHz and -19.9 dB at
  // 7.6 kHz, so it dims the top two mel channels relative to training data.
  kMedium,
};

// What a decode found, for callers that report it (the CLI warns on a short decode).
struct AudioReport {
  // Frames the header announces (libsndfile's SF_INFO.frames: exact for WAV/AIFF/FLAC/OGG, an
  // estimate for MP3; 0 when the header gives no length, a FLAC STREAMINFO total_samples of 0,
  // which libsndfile reports as SF_COUNT_MAX) and frames actually decoded. A decode that stops early without an error
  // (libsndfile's FLAC decoder does so on a corrupt frame) has frames_decoded < frames_announced.
  int64_t frames_announced = 0;
  int64_t frames_decoded = 0;
  bool announced_is_exact = false;  // false for MP3, whose count is an estimate
  int sample_rate = 0;              // of the file, Hz
  int channels = 0;
  // An MP3 whose Xing/Info header announces fewer frames than the stream holds (files joined end
  // to end; apps/common/mpeg_frames.h), decoded whole: the header's count and the frames found.
  // -1 otherwise.
  int64_t mpeg_header_frames = -1;
  int64_t mpeg_stream_frames = -1;
};

struct AudioOptions {
  ResampleQuality quality = ResampleQuality::kBest;
  // Filled when non-null, also when decoding fails after the header was read.
  AudioReport* report = nullptr;
  // LoadAudio16kMonoFromStream (and LoadAudio16kMono("-")) stop with ResourceExhausted once a
  // stream holds more than this many bytes: the whole stream is held in memory before decoding.
  // 4 GiB is the largest RIFF/WAVE file (an hour of 48 kHz stereo 16-bit PCM is 0.7 GB).
  size_t max_stream_bytes = size_t{4} << 30;
  // When non-null, also receives the first two channels, each at 16 kHz (resampled as the mix
  // is) and as long as the mix: whisper-cli's stereo split for -di (read_audio_data with
  // stereo). A mono file gives its one channel twice, as miniaudio's mono-to-stereo conversion
  // does; channels past the second are left out (miniaudio would fold them in). The mix itself
  // does not change (whisper-cli's -di mix is L + R, not their mean). Resized to 2.
  std::vector<std::vector<float>>* stereo = nullptr;
  // Longest audio decoded, in seconds of the file (0: no limit). Past it: ResourceExhausted,
  // before any sample is decoded when the header's frame count (SF_INFO.frames / rate) says so
  // (not when it is unknown: a FLAC total_samples of 0), else as soon as the frames decoded pass it (an MP3's count is an estimate). The message
  // names the file, its duration, frames and rate, and the limit.
  double max_seconds = 0;
};

// Sample rates a file may declare, in Hz: libsamplerate converts by ratios within [1/256, 256],
// and below 1 kHz there is no speech band left to transcribe.
inline constexpr int kMinSampleRate = 1000;
inline constexpr int kMaxSampleRate = 256 * kSampleRate;

// Largest float sample magnitude accepted (full scale is 1.0): 10^4 is +80 dB over full scale,
// far from any real recording and far from overflowing the float power spectrum of the log-mel.
inline constexpr float kMaxFloatSample = 1e4f;

// Name used in error messages for standard input.
inline constexpr char kStdinName[] = "<stdin>";

// Decodes the audio file at `path` to mono float samples at 16 kHz. `path` "-" reads the file's
// bytes from standard input instead (whisper-cli's `-f -`; see LoadAudio16kMonoFromStream); a
// file named "-" is reachable as "./-". A path that is not a regular file (a pipe such as bash's
// <(...) or /dev/fd/N, a FIFO, a character device) is read to its end the same way, bytes held up
// to options.max_stream_bytes: it can be read only once, and libsndfile cannot seek in it.
//
// Returns `round(frames * 16000 / rate)` samples (exactly `frames` when the file is 16 kHz),
// i.e. ne = [n_samples], in the file's amplitude units (PCM full scale = 1.0).
// Errors (each message names `path`, or "<stdin>"):
//   NotFound          - the file does not exist.
//   InvalidArgument   - the file is empty ("<path>: empty file (0 bytes), expected audio ...", the
//                       message of LoadAudio16kMonoFromMemory and ...FromStream for 0 bytes);
//                       libsndfile cannot open it as audio (its message is included), the
//                       header reports a non-positive channel count or a rate outside
//                       [kMinSampleRate, kMaxSampleRate], a PCM/float WAV's fmt chunk is
//                       contradictory (bits_per_sample not 8/16/24/32/64, or block_align !=
//                       channels x bits_per_sample / 8), it holds 0 frames, or a sample is NaN,
//                       infinite or larger in magnitude than kMaxFloatSample (float files).
//   DataLoss          - decoding stopped with an error partway through the stream.
//   ResourceExhausted - the decoded audio does not fit in memory, or is longer than
//                       options.max_seconds.
//   Internal          - libsamplerate reported an error.
absl::StatusOr<std::vector<float>> LoadAudio16kMono(const std::string& path,
                                                    const AudioOptions& options = {});

// Decodes an in-memory image of an audio file (the bytes a file would hold) exactly as
// LoadAudio16kMono decodes that file: libsndfile reads it through virtual I/O (sf_open_virtual)
// and the samples go through the same downmix/resample code, so the result is bit-identical.
// `data` must stay valid during the call. `name` names the source in error messages and, as
// libsndfile does with a path, its extension is the fallback for headerless data that libsndfile
// recognises only by extension (.au/.snd raw u-law, .vox/.vox8/.vox6 OKI ADPCM, .gsm GSM 6.10).
// One difference remains: libsndfile's last resort for a file named *.mp3 whose first bytes are
// neither an ID3 tag nor an MPEG frame (e.g. leading junk) is to force its MPEG decoder, which
// virtual I/O cannot request; such data is an InvalidArgument error here.
// Errors: InvalidArgument "<name>: empty file (0 bytes), ..." for 0 bytes (or null data), else as
// LoadAudio16kMono.
absl::StatusOr<std::vector<float>> LoadAudio16kMonoFromMemory(const void* data, size_t size,
                                                              const std::string& name,
                                                              const AudioOptions& options = {});

// Reads `f` to its end (e.g. stdin or a pipe; it need not be seekable) and decodes the bytes
// with LoadAudio16kMonoFromMemory. The buffer grows geometrically up to
// options.max_stream_bytes. Does not close `f`. `name` as for LoadAudio16kMonoFromMemory.
// Errors (naming `name`): InvalidArgument for a null `f` or empty input (0 bytes); DataLoss when
// a read fails (with the byte count read so far and strerror); ResourceExhausted past
// options.max_stream_bytes; else as LoadAudio16kMonoFromMemory.
absl::StatusOr<std::vector<float>> LoadAudio16kMonoFromStream(FILE* f, const std::string& name,
                                                              const AudioOptions& options = {});

// The warning for a decode that stopped before the frames its header announces (a truncated WAV,
// a corrupt FLAC frame; not MP3, whose count is an estimate), naming `name`, both frame counts and
// the seconds decoded, which the CLI, the server and the Python package all transcribe; for an MP3
// decoded past its Xing/Info header's frame count (AudioReport::mpeg_header_frames), both counts
// and the seconds decoded; "" when the decode is complete.
std::string TruncationWarning(const AudioReport& report, const std::string& name);

// Half-open range [begin, end) of sample indices.
struct SampleRange {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
};

// Maps whisper-cli's `-ot/--offset-t` and `-d/--duration` (milliseconds; duration 0 = to the
// end, as in whisper_full_params) to sample indices of a 16 kHz signal of `n_samples` samples:
// begin = offset_ms * 16, end = min(n_samples, begin + duration_ms * 16).
// Errors: InvalidArgument if either value is negative, or if offset_ms is at or beyond the end
// of the audio (the message gives both times in ms).
absl::StatusOr<SampleRange> SampleRangeFromMs(int64_t n_samples, int64_t offset_ms,
                                              int64_t duration_ms);

}  // namespace whisper

#endif  // GGML_WHISPER_APPS_COMMON_AUDIO_H_
