// Word error rate for the streaming tests and benchmark: (substitutions + deletions + insertions)
// / reference words, over words normalised as OpenAI's basic English comparison does it
// (lowercase ASCII, every character that is not a letter, digit or apostrophe is a separator).
#ifndef GGML_WHISPER_APPS_STREAM_WER_H_
#define GGML_WHISPER_APPS_STREAM_WER_H_

#include <string>
#include <vector>

namespace whisper::stream {

std::vector<std::string> NormalizedWords(const std::string& text);

// Levenshtein distance over words / reference word count (0 for an empty reference and
// hypothesis, 1 per word for an empty reference otherwise).
double WordErrorRate(const std::string& reference, const std::string& hypothesis);

}  // namespace whisper::stream

#endif  // GGML_WHISPER_APPS_STREAM_WER_H_
