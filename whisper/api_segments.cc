#include "whisper/api_segments.h"

#include <algorithm>

namespace whisper {

std::vector<Segment> CollectSegments(whisper_context* ctx, whisper_state* state) {
  const int n = state != nullptr ? whisper_full_n_segments_from_state(state) : whisper_full_n_segments(ctx);
  std::vector<Segment> out(static_cast<size_t>(std::max(0, n)));
  for (int i = 0; i < static_cast<int>(out.size()); ++i) {
    Segment& s = out[i];
    s.t0 = state != nullptr ? whisper_full_get_segment_t0_from_state(state, i) : whisper_full_get_segment_t0(ctx, i);
    s.t1 = state != nullptr ? whisper_full_get_segment_t1_from_state(state, i) : whisper_full_get_segment_t1(ctx, i);
    s.text = state != nullptr ? whisper_full_get_segment_text_from_state(state, i) : whisper_full_get_segment_text(ctx, i);
    s.no_speech_prob = state != nullptr ? whisper_full_get_segment_no_speech_prob_from_state(state, i)
                                        : whisper_full_get_segment_no_speech_prob(ctx, i);
    const int n_tokens = state != nullptr ? whisper_full_n_tokens_from_state(state, i) : whisper_full_n_tokens(ctx, i);
    s.tokens.reserve(static_cast<size_t>(std::max(0, n_tokens)));
    for (int j = 0; j < n_tokens; ++j) {
      const whisper_token_data d =
          state != nullptr ? whisper_full_get_token_data_from_state(state, i, j) : whisper_full_get_token_data(ctx, i, j);
      TokenData t;
      t.id = d.id;
      t.tid = d.tid;
      t.p = d.p;
      t.plog = d.plog;
      t.pt = d.pt;
      t.ptsum = d.ptsum;
      t.t0 = d.t0;
      t.t1 = d.t1;
      t.t_dtw = d.t_dtw;
      t.vlen = d.vlen;
      s.tokens.push_back(t);
    }
  }
  return out;
}

}  // namespace whisper
