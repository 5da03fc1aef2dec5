// Speech stretches from Silero VAD probabilities (one per 512-sample window): silero-vad's
// get_speech_timestamps as faster-whisper 1.2.1 (faster_whisper/vad.py) and whisper.cpp 1.8.5
// (whisper_vad_segments_from_probs) implement it. A window at or above `threshold` starts speech;
// speech ends once the probability has stayed below neg_threshold (threshold - 0.15, at least
// 0.01, unless given) for min_silence_duration_ms; stretches longer than max_speech_duration_s
// split at the last silence of over 98 ms (or hard); stretches not longer than
// min_speech_duration_ms are dropped; then each is padded by speech_pad_ms (half the gap when two
// are closer than twice that). The two rule sets differ only in:
//   - whisper.cpp: the audio ends at n_probs * 512 samples (faster-whisper: the real length);
//     stretches less than 200 ms apart merge after the scan, and stretches shorter than
//     min_speech_duration_ms are dropped again after merging; neg_threshold is always derived.
#ifndef GGML_WHISPER_WHISPER_VAD_SEGMENTS_H_
#define GGML_WHISPER_WHISPER_VAD_SEGMENTS_H_

#include <cstdint>
#include <vector>

namespace whisper {

struct VadParams {
  float threshold = 0.5f;
  float neg_threshold = -1.0f;  // < 0: max(threshold - 0.15, 0.01)
  int min_speech_duration_ms = 0;
  float max_speech_duration_s = 1e30f;  // no limit
  int min_silence_duration_ms = 2000;
  int speech_pad_ms = 400;
};
// faster-whisper's VadOptions() defaults are VadParams{}; whisper.cpp's whisper_vad_default_params
// (threshold 0.5, min speech 250 ms, min silence 100 ms, no max, pad 30 ms):
VadParams WhisperCppVadParams();

enum class VadRules { kFasterWhisper, kWhisperCpp };

struct SpeechSpan {
  int64_t start = 0;  // samples (16 kHz)
  int64_t end = 0;
};

// The speech stretches of audio of n_samples samples whose windows have probabilities
// probs[0 .. n_probs) (window i covers samples [512 i, 512 i + 512)), in order, into *out
// (cleared first; its capacity is reused: no allocation once it has held as many).
void SpeechTimestamps(const float* probs, int n_probs, int64_t n_samples, const VadParams& params, VadRules rules,
                      std::vector<SpeechSpan>* out);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_VAD_SEGMENTS_H_
