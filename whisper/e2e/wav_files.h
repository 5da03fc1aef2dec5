// Reading and writing 16-bit PCM WAV files with libsndfile, for building test clips (jfk.wav with
// silence appended, silence, a short cut) under $TEST_TMPDIR at test time.
#ifndef GGML_WHISPER_WHISPER_E2E_WAV_FILES_H_
#define GGML_WHISPER_WHISPER_E2E_WAV_FILES_H_

#include <cstdint>
#include <string>
#include <vector>

namespace whisper_e2e {

// The samples of a 16 kHz mono file as int16 (ne = [n_frames]), read by libsndfile without
// conversion. Fails the test (and returns {}) when the file cannot be read or is not 16 kHz mono.
std::vector<int16_t> ReadPcm16Mono16k(const std::string& path);

// Writes a 16-bit PCM WAV: `samples` interleaved, n_frames = samples.size() / channels, at `rate`
// Hz. Fails the test when the file cannot be written.
void WritePcm16Wav(const std::string& path, const std::vector<int16_t>& samples, int rate = 16000,
                   int channels = 1);

}  // namespace whisper_e2e

#endif  // GGML_WHISPER_WHISPER_E2E_WAV_FILES_H_
