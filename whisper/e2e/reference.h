// faster-whisper reference transcripts (testdata/*faster_whisper*.json, written by
// tools/reference/faster_whisper_tiny_en.py and tools/compare/compare_faster_whisper.py --write_reference).
#ifndef GGML_WHISPER_WHISPER_E2E_REFERENCE_H_
#define GGML_WHISPER_WHISPER_E2E_REFERENCE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace whisper_e2e {

struct ReferenceSegment {
  int64_t t0_ms = 0;  // "start" in seconds, as milliseconds (a multiple of 20 ms: a timestamp token)
  int64_t t1_ms = 0;
  std::vector<int> text_tokens;  // "tokens" without the timestamp tokens (ids >= 50257 dropped)
  std::string text;              // as faster-whisper prints it (leading space kept)
};

// The "segments" of the reference file at `path` (relative to the test's runfiles directory,
// e.g. "testdata/jfk_faster_whisper_beam5.json"). Fails the test and returns {} when the file is
// missing or malformed.
std::vector<ReferenceSegment> LoadReference(const std::string& path);

// The segments of run `run` ("runs"[i] whose "name" is `run`) of a reference file holding several
// (testdata/fw_clip_hallucination.json): its `list` ("segments", or "baseline": the same audio
// without the option). Fails the test and returns {} when absent.
std::vector<ReferenceSegment> LoadReferenceRun(const std::string& path, const std::string& run,
                                               const std::string& list = "segments");

// The raw token ids of each decoding window ("windows"[i]["tokens"]: timestamps included, eot
// excluded, as CTranslate2 returns them). Fails the test and returns {} on a malformed file.
std::vector<std::vector<int>> LoadReferenceWindows(const std::string& path);

}  // namespace whisper_e2e

#endif  // GGML_WHISPER_WHISPER_E2E_REFERENCE_H_
