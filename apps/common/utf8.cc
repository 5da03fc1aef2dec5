#include "apps/common/utf8.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace whisper {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

// For a lead byte: the sequence length (0 if it cannot start one) and the range allowed for the
// second byte (Unicode 15 table 3-7, well-formed UTF-8 byte sequences).
struct Lead {
  int len;
  unsigned char lo, hi;
};

Lead LeadOf(unsigned char b) {
  if (b < 0x80) return {1, 0, 0};
  if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};  // no surrogates
  if (b >= 0xE1 && b <= 0xEF) return {3, 0x80, 0xBF};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};  // at most U+10FFFF
  return {0, 0, 0};  // 80..C1 (continuation or overlong lead), F5..FF
}

}  // namespace

std::string Utf8Carry::Push(absl::string_view piece) {
  std::string in = std::move(pending_);
  in.append(piece.data(), piece.size());
  pending_.clear();
  std::string out;
  out.reserve(in.size());
  size_t i = 0;
  while (i < in.size()) {
    const unsigned char b = static_cast<unsigned char>(in[i]);
    const Lead lead = LeadOf(b);
    if (lead.len == 1) {
      out += in[i++];
      continue;
    }
    if (lead.len == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    // Walk the continuation bytes: the second has its own range, the rest 80..BF.
    size_t k = 1;
    bool ill_formed = false;
    for (; k < static_cast<size_t>(lead.len) && i + k < in.size(); ++k) {
      const unsigned char c = static_cast<unsigned char>(in[i + k]);
      const unsigned char lo = k == 1 ? lead.lo : 0x80, hi = k == 1 ? lead.hi : 0xBF;
      if (c < lo || c > hi) {
        ill_formed = true;
        break;
      }
    }
    if (ill_formed) {  // the maximal subpart [i, i + k) becomes one U+FFFD; in[i + k] is re-read
      out += kReplacement;
      i += k;
      continue;
    }
    if (k < static_cast<size_t>(lead.len)) {  // ran out of input with a valid prefix: hold it
      pending_.assign(in, i, std::string::npos);
      break;
    }
    out.append(in, i, k);
    i += k;
  }
  return out;
}

std::string Utf8Carry::Finish() {
  const bool held = !pending_.empty();
  pending_.clear();
  return held ? kReplacement : "";
}

std::string RepairUtf8(absl::string_view bytes) {
  Utf8Carry carry;
  std::string out = carry.Push(bytes);
  out += carry.Finish();
  return out;
}

void RepairSegmentTexts(std::vector<TranscriptSegment>* segments) {
  Utf8Carry carry;
  for (TranscriptSegment& s : *segments) s.text = carry.Push(s.text);
  if (!segments->empty()) segments->back().text += carry.Finish();
}

std::string PromptTextProblem(absl::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char b = static_cast<unsigned char>(text[i]);
    if (b == 0) {
      return absl::StrCat("has a NUL byte at offset ", i,
                          ": whisper_full takes NUL-terminated text, so the rest would be dropped; remove it");
    }
    const Lead lead = LeadOf(b);
    size_t k = 1;  // the well-formed sequence, or the maximal ill-formed subpart, starting at i
    bool ill_formed = lead.len == 0;
    for (; !ill_formed && k < static_cast<size_t>(lead.len); ++k) {
      if (i + k >= text.size()) break;  // cut short: ill-formed below
      const unsigned char c = static_cast<unsigned char>(text[i + k]);
      if (c < (k == 1 ? lead.lo : 0x80) || c > (k == 1 ? lead.hi : 0xBF)) break;
    }
    ill_formed = ill_formed || k < static_cast<size_t>(lead.len);
    if (!ill_formed) {
      i += k;
      continue;
    }
    const unsigned char second = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    const bool surrogate = b == 0xED && second >= 0xA0 && second <= 0xBF;
    const char* what = surrogate ? "a UTF-16 surrogate (CESU-8), not UTF-8"
                       : lead.len > 1 && i + k >= text.size() ? "not UTF-8 (the text ends inside the character)"
                                              : "not UTF-8";
    // A surrogate's three bytes are shown whole (its second byte is what makes it ill-formed).
    const size_t shown = std::min(text.size() - i, surrogate ? size_t{3} : k);
    std::string bytes;
    for (size_t j = 0; j < shown; ++j) {
      absl::StrAppendFormat(&bytes, "\\x%02X", static_cast<unsigned char>(text[i + j]));
    }
    return absl::StrCat("has '", bytes, "' at offset ", i, ", ", what, ": expected UTF-8 text");
  }
  return "";
}

}  // namespace whisper
