#include "whisper/transcribe.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace whisper {
namespace {

// whisper.cpp stops when less than 1 s (100 frames) of audio is left.
constexpr int kMinFramesLeft = 100;
// whisper.cpp clears the past prompt when less than 5 s (500 frames) remain.
constexpr int kClearPastFrames = 500;

}  // namespace

absl::Status Transcribe(ModelBackend& backend, const SpecialTokens& special, int n_text_ctx,
                        const std::function<const std::string&(Token)>& token_text, const float* mel,
                        int n_frames_mel, int n_frames_audio, const TranscribeParams& params,
                        std::vector<Segment>* segments, TranscribeStats* stats) {
  if (params.offset_ms < 0 || params.duration_ms < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("transcribe: offset ", params.offset_ms, " ms and duration ", params.duration_ms,
                     " ms must not be negative"));
  }
  const int seek_start = params.offset_ms / 10;
  int seek_end = n_frames_audio;
  if (params.duration_ms > 0) seek_end = std::min(seek_end, seek_start + params.duration_ms / 10);
  if (seek_start > n_frames_audio) {
    return absl::InvalidArgumentError(absl::StrCat("transcribe: offset ", params.offset_ms,
                                                   " ms is past the end of the audio (", n_frames_audio * 10,
                                                   " ms)"));
  }

  WindowDecoder decoder(special, n_text_ctx, params.decoding);
  WindowResult result;
  std::vector<Token> past(params.initial_prompt);
  std::vector<Token> prompt;
  const size_t max_past = static_cast<size_t>(n_text_ctx / 2 - 1);
  prompt.reserve(n_text_ctx);
  past.reserve(n_text_ctx + max_past);
  *stats = TranscribeStats();

  int seek = seek_start;
  while (seek + kMinFramesLeft < seek_end) {
    if (params.progress) {
      params.progress(static_cast<int>(100LL * (seek - seek_start) / std::max(1, seek_end - seek_start)));
    }
    // Frames past seek_end (the audio's end, or the end of -d) are 0.0 in the window, so
    // nothing after the requested clip is heard (OpenAI's clip_timestamps cut the mel the same way).
    absl::Status st = backend.Encode(mel, n_frames_mel, seek, params.audio_ctx, seek_end);
    if (!st.ok()) return st;

    if (seek_end - seek < kClearPastFrames) past.clear();
    prompt.clear();
    if (!past.empty()) {
      prompt.push_back(special.prev);
      const size_t n = std::min(past.size(), max_past);
      prompt.insert(prompt.end(), past.end() - n, past.end());
    }
    prompt.push_back(special.sot);
    if (special.multilingual) {
      prompt.push_back(special.Language(params.language_id));
      prompt.push_back(params.translate ? special.translate : special.transcribe);
    }
    if (params.decoding.filter.no_timestamps) prompt.push_back(special.not_);

    st = decoder.Run(backend, prompt, seek, seek_end, &result);
    if (!st.ok()) return st;
    stats->n_windows++;
    stats->n_fallbacks += result.n_fallbacks;

    const int advance = SeekAdvance(special, result.tokens, result.seek_delta, seek_end - seek);
    const bool no_speech = result.no_speech_prob > params.decoding.no_speech_thold &&
                           result.avg_logprob < params.decoding.logprob_thold;
    if (no_speech) {
      stats->n_no_speech++;
    } else {
      const size_t before = segments->size();
      AppendSegments(special, result.tokens, seek, result.seek_delta, token_text, segments);
      // Clamp to the audio: a timestamp may name a time past the end of short audio.
      int64_t end_cs = params.audio_duration_cs > 0 ? params.audio_duration_cs : seek_end;
      if (params.duration_ms > 0) end_cs = std::min<int64_t>(end_cs, seek_end);
      for (size_t i = before; i < segments->size(); ++i) {
        Segment& s = (*segments)[i];
        s.t1 = std::min<int64_t>(s.t1, end_cs);
        s.t0 = std::min<int64_t>(s.t0, s.t1);
        if (params.on_segment) params.on_segment(s);
      }
      if (params.condition_on_previous_text && result.temperature < 0.5f) {
        past.insert(past.end(), result.tokens.begin(), result.tokens.end());
        if (past.size() > max_past) past.erase(past.begin(), past.end() - max_past);
      } else {
        past.clear();
      }
    }
    seek += advance;
  }
  if (params.progress) params.progress(100);
  return absl::OkStatus();
}

absl::StatusOr<int> DetectLanguage(ModelBackend& backend, const SpecialTokens& special, const float* mel,
                                   int n_frames_mel, int n_frames_audio) {
  if (!special.multilingual || special.num_languages <= 0) {
    return absl::FailedPreconditionError("language detection needs a multilingual model");
  }
  absl::Status st = backend.Encode(mel, n_frames_mel, 0, 0, n_frames_audio);
  if (!st.ok()) return st;
  st = backend.Decode(0, &special.sot, 1, 0);
  if (!st.ok()) return st;
  const float* logits = backend.logits(0);
  int best = 0;
  for (int i = 1; i < std::min(special.num_languages, kMaxLanguages); ++i) {
    if (logits[special.Language(i)] > logits[special.Language(best)]) best = i;
  }
  return best;
}

}  // namespace whisper
