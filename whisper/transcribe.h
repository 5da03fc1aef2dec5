// The window loop of a transcription: encode the 30 s window at `seek`, decode it with fallback,
// cut segments, move `seek` on, and carry the text as the next window's prompt (whisper.cpp
// whisper_full_with_state; OpenAI transcribe.py for condition_on_previous_text).
#ifndef GGML_WHISPER_WHISPER_TRANSCRIBE_H_
#define GGML_WHISPER_WHISPER_TRANSCRIBE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "whisper/decoding.h"
#include "whisper/segments.h"
#include "whisper/tokens.h"

namespace whisper {

// The model as the window loop sees it: an encoder plus the per-decoder KV caches.
class ModelBackend : public DecoderBackend {
 public:
  // Encodes the 3000-frame window of `mel` ([n_mels][n_frames] floats, ne = [n_frames, n_mels])
  // starting at frame `seek`; window frames at or past n_frames_valid are 0.0 (OpenAI's
  // pad_or_trim). audio_ctx 0 = the model's n_audio_ctx.
  virtual absl::Status Encode(const float* mel, int n_frames, int seek, int audio_ctx, int n_frames_valid) = 0;
};

struct TranscribeParams {
  DecodingParams decoding;
  int offset_ms = 0;                     // start of the audio to transcribe
  int duration_ms = 0;                   // 0 = to the end
  int audio_ctx = 0;                     // 0 = n_audio_ctx
  bool condition_on_previous_text = true;
  int language_id = 0;                   // whisper.cpp id (0 = en); multilingual models only
  bool translate = false;                // multilingual models only
  std::vector<Token> initial_prompt;     // --prompt, tokenized
  // Segment ends are clamped to this many centiseconds (the audio's duration; a timestamp token
  // may name a time past the end of short audio). 0: clamp to the decoding end frame.
  int64_t audio_duration_cs = 0;
  // Called after each window with the progress in percent; may be empty.
  std::function<void(int)> progress;
  // Called for each new segment as it is produced; may be empty.
  std::function<void(const Segment&)> on_segment;
};

struct TranscribeStats {
  int n_windows = 0;
  int n_fallbacks = 0;
  int n_no_speech = 0;  // windows skipped as silence
};

// Transcribes frames [offset, offset + duration) of `mel` (n_frames_audio frames of real audio,
// possibly followed by padding up to n_frames_mel; use n_samples / 160, OpenAI's content_frames). Segments' times are centiseconds from the
// start of the audio. Errors: an invalid offset/duration, or the backend's.
absl::Status Transcribe(ModelBackend& backend, const SpecialTokens& special, int n_text_ctx,
                        const std::function<const std::string&(Token)>& token_text, const float* mel,
                        int n_frames_mel, int n_frames_audio, const TranscribeParams& params,
                        std::vector<Segment>* segments, TranscribeStats* stats);

// Language detection (whisper.cpp whisper_lang_auto_detect, L4047-4120): encodes the window at
// frame 0, decodes [sot] on decoder 0 and returns the whisper.cpp language id (0 = en) whose
// token has the largest logit among the model's num_languages. Errors: FailedPrecondition for an
// English-only model; the backend's errors.
absl::StatusOr<int> DetectLanguage(ModelBackend& backend, const SpecialTokens& special, const float* mel,
                                   int n_frames_mel, int n_frames_audio);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_TRANSCRIBE_H_
