// The segments of the last whisper_full (whisper.h) as the output writers take them
// (whisper/segments.h Segment, with every token's whisper_token_data).
#ifndef GGML_WHISPER_WHISPER_API_SEGMENTS_H_
#define GGML_WHISPER_WHISPER_API_SEGMENTS_H_

#include <vector>

#include "whisper/segments.h"
#include "whisper/whisper.h"

namespace whisper {

// From `state`, or from the context's default state (whisper_full, whisper_full_parallel) when
// `state` is null. Texts are the library's bytes as they are (see RepairSegmentTexts).
std::vector<Segment> CollectSegments(whisper_context* ctx, whisper_state* state);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_API_SEGMENTS_H_
