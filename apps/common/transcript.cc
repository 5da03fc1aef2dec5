#include "apps/common/transcript.h"

#include <algorithm>

namespace whisper {

std::vector<TranscriptSegment> CollectSegments(whisper_context* ctx, whisper_state* state) {
  const int n = state != nullptr ? whisper_full_n_segments_from_state(state) : whisper_full_n_segments(ctx);
  std::vector<TranscriptSegment> out(static_cast<size_t>(std::max(0, n)));
  for (int i = 0; i < static_cast<int>(out.size()); ++i) {
    TranscriptSegment& s = out[i];
    s.t0 = state != nullptr ? whisper_full_get_segment_t0_from_state(state, i) : whisper_full_get_segment_t0(ctx, i);
    s.t1 = state != nullptr ? whisper_full_get_segment_t1_from_state(state, i) : whisper_full_get_segment_t1(ctx, i);
    s.text = state != nullptr ? whisper_full_get_segment_text_from_state(state, i) : whisper_full_get_segment_text(ctx, i);
    s.speaker_turn_next = state != nullptr ? whisper_full_get_segment_speaker_turn_next_from_state(state, i)
                                           : whisper_full_get_segment_speaker_turn_next(ctx, i);
    s.lang_id = state != nullptr ? whisper_ggml_full_get_segment_lang_id_from_state(state, i)
                                 : whisper_ggml_full_get_segment_lang_id(ctx, i);
    s.no_speech_prob = state != nullptr ? whisper_full_get_segment_no_speech_prob_from_state(state, i)
                                        : whisper_full_get_segment_no_speech_prob(ctx, i);
    const int n_tokens = state != nullptr ? whisper_full_n_tokens_from_state(state, i) : whisper_full_n_tokens(ctx, i);
    s.tokens.reserve(static_cast<size_t>(std::max(0, n_tokens)));
    for (int j = 0; j < n_tokens; ++j) {
      const whisper_token_data d =
          state != nullptr ? whisper_full_get_token_data_from_state(state, i, j) : whisper_full_get_token_data(ctx, i, j);
      s.tokens.push_back(d);
    }
    // Word starts, when whisper_full computed word times (DTW with OpenAI's rules).
    for (int j = 0; j < n_tokens; ++j) {
      const int w = state != nullptr ? whisper_ggml_full_get_token_word_start_from_state(state, i, j)
                                     : whisper_ggml_full_get_token_word_start(ctx, i, j);
      if (w < 0) {
        s.word_begin.clear();
        s.word_probability.clear();
        break;
      }
      s.word_begin.push_back(static_cast<uint8_t>(w));
      s.word_probability.push_back(state != nullptr
                                       ? whisper_ggml_full_get_token_word_probability_from_state(state, i, j)
                                       : whisper_ggml_full_get_token_word_probability(ctx, i, j));
    }
  }
  return out;
}

}  // namespace whisper
