// whisper_full's results as the programs read them: one snapshot through the C API (whisper.h's
// whisper_full_* getters and the word-start extension), taken once after whisper_full returns.
// The CLI's writers, the server's replies and the stream tool all read this; none of them
// re-derives times, scores or tokens. Times are already in the input audio's time base (the
// library maps VAD-filtered times back when whisper_full finishes).
#ifndef GGML_WHISPER_APPS_COMMON_TRANSCRIPT_H_
#define GGML_WHISPER_APPS_COMMON_TRANSCRIPT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "whisper/whisper.h"

namespace whisper {

// One segment of the result: whisper_full_get_segment_* and its tokens' whisper_token_data.
struct TranscriptSegment {
  int64_t t0 = 0;  // centiseconds from the start of the audio
  int64_t t1 = 0;  // centiseconds
  std::string text;  // the library's bytes as they are (RepairSegmentTexts in apps/common/utf8.h)
  // Every token of the segment, timestamps and special tokens included, as
  // whisper_full_get_token_data gives them.
  std::vector<whisper_token_data> tokens;
  float no_speech_prob = 0.0f;     // of the window the segment came from
  bool speaker_turn_next = false;  // tinydiarize (-tdrz): a speaker turn follows the segment
  // whisper_ggml_full_get_segment_lang_id: the language (whisper.cpp id) its window was decoded in
  // (per window with whisper_full_params.ggml_multilingual); -1 when unknown.
  int lang_id = -1;
  // whisper-cli -di: "0", "1" or "?" (EstimateSpeaker in apps/common/output.h), set by the CLI;
  // empty when not diarized. The writers label the segment with it.
  std::string speaker;
  // Word starts (whisper_ggml_full_get_token_word_start): 1 at each token that starts a word, 0
  // elsewhere, as long as `tokens`; empty when the library computed no word times.
  std::vector<uint8_t> word_begin;
  // With word_begin: each token's word probability (whisper_ggml_full_get_token_word_probability,
  // faster-whisper's Word.probability; -1 at timestamps), as long as `tokens`.
  std::vector<float> word_probability;
};

// The segments of the last whisper_full on `state`, or on the context's default state (whisper_full,
// whisper_full_parallel) when `state` is null. Empty when there are none. Errors: none (the
// getters return their defaults for a context without results).
std::vector<TranscriptSegment> CollectSegments(whisper_context* ctx, whisper_state* state);

}  // namespace whisper

#endif  // GGML_WHISPER_APPS_COMMON_TRANSCRIPT_H_
