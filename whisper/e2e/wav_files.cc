#include "whisper/e2e/wav_files.h"

#include <sndfile.h>

#include "gtest/gtest.h"

namespace whisper_e2e {

std::vector<int16_t> ReadPcm16Mono16k(const std::string& path) {
  SF_INFO info = {};
  SNDFILE* f = sf_open(path.c_str(), SFM_READ, &info);
  if (f == nullptr) {
    ADD_FAILURE() << path << ": " << sf_strerror(nullptr);
    return {};
  }
  std::vector<int16_t> samples;
  if (info.samplerate != 16000 || info.channels != 1) {
    ADD_FAILURE() << path << ": " << info.samplerate << " Hz, " << info.channels << " channels; expected 16 kHz mono";
  } else {
    samples.resize(static_cast<size_t>(info.frames));
    const sf_count_t n = sf_readf_short(f, samples.data(), info.frames);
    if (n != info.frames) ADD_FAILURE() << path << ": read " << n << " of " << info.frames << " frames";
  }
  sf_close(f);
  return samples;
}

void WritePcm16Wav(const std::string& path, const std::vector<int16_t>& samples, int rate, int channels) {
  SF_INFO info = {};
  info.samplerate = rate;
  info.channels = channels;
  info.format = SF_FORMAT_WAV | SF_FORMAT_PCM_16;
  SNDFILE* f = sf_open(path.c_str(), SFM_WRITE, &info);
  if (f == nullptr) {
    ADD_FAILURE() << path << ": " << sf_strerror(nullptr);
    return;
  }
  const sf_count_t frames = static_cast<sf_count_t>(samples.size() / channels);
  const sf_count_t n = frames > 0 ? sf_writef_short(f, samples.data(), frames) : 0;
  if (n != frames) ADD_FAILURE() << path << ": wrote " << n << " of " << frames << " frames";
  if (sf_close(f) != 0) ADD_FAILURE() << path << ": close failed";
}

}  // namespace whisper_e2e
