// Fuzz target: the audio decoder (apps/common/audio.h LoadAudio16kMonoFromMemory: libsndfile virtual
// I/O, downmix, libsamplerate). The first input byte picks the file name, whose extension is
// libsndfile's fallback for headerless data, the converter and whether the channels are split
// too (-di); the rest is the file image.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "apps/common/audio.h"

namespace {
constexpr const char* kNames[] = {"x.wav", "x.flac", "x.ogg", "x.opus", "x.mp3", "x.aiff",
                                  "x.au",  "x.snd",  "x.raw", "x.vox",  "x.gsm", "x"};
constexpr size_t kNumNames = sizeof(kNames) / sizeof(kNames[0]);
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string name = kNames[data[0] % kNumNames];
  whisper::AudioOptions options;
  // The medium converter when the second-lowest bit of the selector byte is set (both paths).
  if ((data[0] / kNumNames) & 1) options.quality = whisper::ResampleQuality::kMedium;
  // The third-lowest bit: also the -di channel split, which must leave the mix unchanged and
  // be as long as it.
  const bool split = ((data[0] / kNumNames) & 2) != 0;
  std::vector<std::vector<float>> stereo;
  if (split) options.stereo = &stereo;
  absl::StatusOr<std::vector<float>> samples = whisper::LoadAudio16kMonoFromMemory(data + 1, size - 1, name, options);
  if (!samples.ok()) return 0;
  if (split) {
    options.stereo = nullptr;
    absl::StatusOr<std::vector<float>> mix = whisper::LoadAudio16kMonoFromMemory(data + 1, size - 1, name, options);
    if (!mix.ok() || *mix != *samples || stereo.size() != 2 || stereo[0].size() != samples->size() ||
        stereo[1].size() != samples->size()) {
      fprintf(stderr, "audio_fuzzer: the channel split changed the mix or has another length\n");
      abort();
    }
  }
  // No check that samples is non-empty: a few frames at a high rate (30 frames at 2.38 MHz)
  // round to 0 samples at 16 kHz, which the header allows (round(frames * 16000 / rate)).
  // Every sample finite (NaN/inf input samples are refused).
  for (float s : *samples) {
    if (!std::isfinite(s)) {
      fprintf(stderr, "audio_fuzzer: non-finite sample\n");
      abort();
    }
  }
  return 0;
}
