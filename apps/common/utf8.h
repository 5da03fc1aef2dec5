// UTF-8 repair for transcript text. Whisper's tokens are byte-level BPE pieces (GPT-2's
// byte-to-unicode table), so one character can be split across tokens, and a timestamp can fall
// between its bytes, splitting it across segments; a sampled sequence can also produce bytes that
// are not UTF-8 at all. whisper.cpp writes such bytes as they are; the output files here are
// always valid UTF-8 (RFC 3629).
#ifndef GGML_WHISPER_APPS_COMMON_UTF8_H_
#define GGML_WHISPER_APPS_COMMON_UTF8_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "apps/common/transcript.h"

namespace whisper {

// Turns a stream of byte pieces into valid UTF-8, piece by piece. An incomplete character at the
// end of a piece (a lead byte and fewer continuation bytes than it announces, all valid so far)
// is held back and completed by the next piece. Every ill-formed subsequence becomes one U+FFFD
// (the "maximal subpart" rule of Unicode 15 section 3.9, U+FFFD substitution, as Python's
// bytes.decode(errors="replace") and ICU do): stray continuation bytes, C0/C1/F5..FF leads,
// overlong forms, surrogates (ED A0..BF) and code points past U+10FFFF.
class Utf8Carry {
 public:
  // The valid UTF-8 of (held-back bytes + piece), less a new incomplete tail, which is held.
  std::string Push(absl::string_view piece);
  // The held-back tail as U+FFFD ("" when nothing is held); the carry is empty afterwards.
  std::string Finish();
  // True when no bytes are held back.
  bool empty() const { return pending_.empty(); }

 private:
  std::string pending_;
};

// Valid UTF-8 of `bytes` as a whole (Utf8Carry Push then Finish).
std::string RepairUtf8(absl::string_view bytes);

// Makes every segment's text valid UTF-8 in order: a character split across segments moves whole
// into the later one (its first bytes leave the earlier text), ill-formed bytes become U+FFFD, and
// an incomplete character at the end of the last segment becomes U+FFFD. Times and tokens are
// unchanged.
void RepairSegmentTexts(std::vector<TranscriptSegment>* segments);

// Why `text` cannot be passed on as one of whisper_full_params' prompt strings (initial_prompt,
// ggml_prefix, ggml_hotwords: NUL-terminated UTF-8), or "" when it can. The first of:
//  - a NUL byte: the C string would end there and drop the rest without a word;
//  - bytes that are not UTF-8 (RFC 3629; Unicode 15 table 3-7): a stray continuation byte, an
//    overlong form, a UTF-16 surrogate written as three bytes (ED A0..BF xx, CESU-8 style), a code
//    point past U+10FFFF, a character cut short at the end.
// The Python package refuses the same strings with ValueError (its _check_text: a NUL character,
// or a lone surrogate, the only way a str has no UTF-8 form). The reason reads after a field or
// flag name: "has a NUL byte at offset 3: ..." / "has '\xED\xA0\x80' at offset 5, a UTF-16
// surrogate (CESU-8), not UTF-8: expected UTF-8 text". Offsets count bytes from 0.
std::string PromptTextProblem(absl::string_view text);

}  // namespace whisper

#endif  // GGML_WHISPER_APPS_COMMON_UTF8_H_
