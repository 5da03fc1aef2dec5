#include "apps/common/output.h"

#include <algorithm>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "apps/common/utf8.h"

namespace whisper {
namespace {

// The segments with valid UTF-8 texts (RepairSegmentTexts): every writer's file is valid UTF-8
// whatever bytes the tokens held.
std::vector<TranscriptSegment> Repaired(const std::vector<TranscriptSegment>& segments) {
  std::vector<TranscriptSegment> out = segments;
  RepairSegmentTexts(&out);
  return out;
}

// Bytes still missing from the last UTF-8 character of `s`: 0 when it ends on a boundary, or when
// its tail is malformed (only continuation bytes, or an F8..FF lead), as whisper-cli 1.8.5's
// utf8_trailing_bytes_needed.
int Utf8TrailingBytesNeeded(const std::string& s) {
  int i = static_cast<int>(s.size()) - 1;
  while (i >= 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
  if (i < 0) return 0;
  const unsigned char lead = static_cast<unsigned char>(s[i]);
  const int len = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : lead < 0xF8 ? 4 : 0;
  const int have = static_cast<int>(s.size()) - i;
  return have >= len ? 0 : len - have;
}

}  // namespace

int64_t CsToMs(int64_t cs) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 10;
  return cs < 0 ? 0 : cs > kMax ? kMax * 10 : cs * 10;
}

std::string FormatTimestamp(int64_t cs, bool comma) {
  char buf[32];
  return whisper_ggml_format_timestamp(cs, comma ? 1 : 0, buf, sizeof(buf));
}

std::string EstimateSpeaker(const std::vector<float>& ch0, const std::vector<float>& ch1, int64_t t0, int64_t t1) {
  if (ch0.empty() || ch0.size() != ch1.size()) return "?";
  const int64_t n = static_cast<int64_t>(ch0.size());
  auto sample = [n](int64_t t) {
    // whisper-cli's timestamp_to_sample, without its int overflow: t * 16000 / 100, in [0, n - 1].
    const int64_t i = t > INT64_MAX / 160 ? INT64_MAX : (t < INT64_MIN / 160 ? INT64_MIN : t * 160);
    return std::max<int64_t>(0, std::min<int64_t>(n - 1, i));
  };
  double e0 = 0.0, e1 = 0.0;
  for (int64_t i = sample(t0), end = sample(t1); i < end; ++i) {
    e0 += std::fabs(ch0[static_cast<size_t>(i)]);
    e1 += std::fabs(ch1[static_cast<size_t>(i)]);
  }
  return e0 > 1.1 * e1 ? "0" : (e1 > 1.1 * e0 ? "1" : "?");
}

void LabelSpeakers(const std::vector<std::vector<float>>& stereo, std::vector<TranscriptSegment>* segments) {
  if (stereo.size() != 2) return;
  for (TranscriptSegment& s : *segments) s.speaker = EstimateSpeaker(stereo[0], stereo[1], s.t0, s.t1);
}

std::string SpeakerPrefix(const TranscriptSegment& s) { return s.speaker.empty() ? "" : "(speaker " + s.speaker + ")"; }

std::string FormatTxt(const std::vector<TranscriptSegment>& raw) {
  const std::vector<TranscriptSegment> segments = Repaired(raw);
  std::string out;
  // whisper-cli 1.8.5 output_txt: each segment's text as decoded (leading space kept), one per line.
  for (const TranscriptSegment& s : segments) absl::StrAppend(&out, SpeakerPrefix(s), s.text, "\n");
  return out;
}

std::string FormatVtt(const std::vector<TranscriptSegment>& raw) {
  const std::vector<TranscriptSegment> segments = Repaired(raw);
  std::string out = "WEBVTT\n\n";
  for (const TranscriptSegment& s : segments) {
    const std::string voice = s.speaker.empty() ? "" : "<v Speaker" + s.speaker + ">";
    absl::StrAppend(&out, FormatTimestamp(s.t0), " --> ", FormatTimestamp(s.t1), "\n", voice, s.text, "\n\n");
  }
  return out;
}

std::string FormatSrt(const std::vector<TranscriptSegment>& raw, int offset_n) {
  const std::vector<TranscriptSegment> segments = Repaired(raw);
  std::string out;
  for (size_t i = 0; i < segments.size(); ++i) {
    const TranscriptSegment& s = segments[i];
    absl::StrAppend(&out, i + 1 + offset_n, "\n", FormatTimestamp(s.t0, true), " --> ", FormatTimestamp(s.t1, true),
                    "\n", SpeakerPrefix(s), s.text, "\n\n");
  }
  return out;
}

std::string FormatLrc(const std::vector<TranscriptSegment>& raw) {
  const std::vector<TranscriptSegment> segments = Repaired(raw);
  std::string out = "[by:whisper.cpp]\n";
  for (const TranscriptSegment& s : segments) {
    const int64_t min = s.t0 / 6000, sec = (s.t0 / 100) % 60, cs = s.t0 % 100;
    absl::StrAppend(&out, absl::StrFormat("[%02d:%02d.%02d]", min, sec, cs), SpeakerPrefix(s), s.text, "\n");
  }
  return out;
}

std::string FormatScore(const std::vector<TranscriptSegment>& segments, const std::function<const std::string&(whisper_token)>& token_text) {
  std::string out;
  Utf8Carry carry;
  size_t n_left = 0;
  for (const TranscriptSegment& s : segments) n_left += s.tokens.size();
  for (const TranscriptSegment& s : segments) {
    for (const whisper_token_data& t : s.tokens) {
      std::string text = carry.Push(token_text(t.id));
      if (--n_left == 0) text += carry.Finish();  // an unfinished character at the very end: U+FFFD
      absl::StrAppend(&out, text, "\t", absl::StrFormat("%g", t.p), "\n");
    }
  }
  return out;
}

std::string FormatCsv(const std::vector<TranscriptSegment>& raw, bool speaker_column) {
  const std::vector<TranscriptSegment> segments = Repaired(raw);
  std::string out = speaker_column ? "start,end,speaker,text\n" : "start,end,text\n";
  for (const TranscriptSegment& s : segments) {
    std::string text;
    for (char c : s.text) {
      if (c == '"') text += '"';  // RFC 4180 (and whisper-cli): a quote inside a quoted field is doubled
      // A CSV field has no escape for control characters: each becomes a space, so every row is
      // one line and NUL-free. A backslash is not special in RFC 4180 and stays.
      const unsigned char u = static_cast<unsigned char>(c);
      text += u < 0x20 || u == 0x7F ? ' ' : c;
    }
    absl::StrAppend(&out, CsToMs(s.t0), ",", CsToMs(s.t1), ",", speaker_column ? s.speaker + "," : "", "\"", text,
                    "\"\n");
  }
  return out;
}

namespace {

std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

// A word the shell reads back as `s`: bare when it is only [A-Za-z0-9_./+-], else single-quoted.
std::string ShellWord(const std::string& s) {
  bool bare = !s.empty();
  for (char c : s) bare = bare && (std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_./+-", c) != nullptr);
  return bare ? s : "'" + ReplaceAll(s, "'", "'\\''") + "'";
}

// `s` inside a double-quoted shell string.
std::string ShellDoubleQuoted(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\' || c == '$' || c == '`') out += '\\';
    out += c;
  }
  return out;
}

// Token text inside the script's double-quoted -vf argument: '\', '$' and '`' escaped, which the
// shell would otherwise interpret (whisper-cli 1.8.5 writes them bare, so a transcribed "$(...)"
// or backquote ran as a command when the script was sourced). '"' and '\'' are FormatWts's
// whole-text replacements, as whisper-cli's.
std::string ShellTextInDoubleQuotes(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '$' || c == '`') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string FormatWts(const std::vector<TranscriptSegment>& segments, const std::function<const std::string&(whisper_token)>& token_text,
                      const WtsOptions& o) {
  std::ostringstream out;  // whisper-cli streams its doubles: the same digits
  const std::string font = ShellDoubleQuoted(o.font);  // as given but for a quote, backslash, $ or backquote
  const std::string input = ShellWord(o.input);
  out << "#!/bin/bash\n\nffmpeg -i " << input << " -f lavfi -i color=size=1200x120:duration=" << o.duration_s
      << ":rate=25:color=black -vf \"";
  struct Piece {
    std::string text;
    int64_t t0, t1;
  };
  std::vector<Piece> pieces;
  for (size_t i = 0; i < segments.size(); ++i) {
    const TranscriptSegment& s = segments[i];
    // The text tokens, adjacent ones merged while their bytes end inside a UTF-8 character.
    pieces.clear();
    for (size_t k = 0; k < s.tokens.size(); ++k) {
      const whisper_token_data& d = s.tokens[k];
      if (d.id >= o.eot) continue;
      if (!pieces.empty() && Utf8TrailingBytesNeeded(pieces.back().text) > 0 && s.tokens[k - 1].id < o.eot) {
        pieces.back().text += token_text(d.id);
        pieces.back().t1 = d.t1;
        continue;
      }
      pieces.push_back({token_text(d.id), d.t0, d.t1});
    }
    for (Piece& p : pieces) p.text = RepairUtf8(p.text);
    if (i > 0) out << ",";
    out << "drawtext=fontfile='" << font << "':fontsize=24:fontcolor=gray:x=(w-text_w)/2:y=h/2:text='':enable='between(t,"
        << s.t0 / 100.0 << "," << s.t0 / 100.0 << ")'";
    const std::string speaker = SpeakerPrefix(s);
    for (size_t j = 0; j < pieces.size(); ++j) {
      std::string bg = speaker, fg = speaker, ul;
      if (!speaker.empty()) {
        for (int n = 0; n < 11; ++n) ul += "\\ ";
      }
      bg += "> ";
      fg += "> ";
      ul += "\\ \\ ";
      for (size_t k = 0; k < pieces.size(); ++k) {
        const std::string& txt = pieces[k].text;
        bg += ShellTextInDoubleQuotes(txt);
        if (k == j) fg += ShellTextInDoubleQuotes(txt);
        for (size_t l = 0; l < txt.size(); ++l) {
          if (k != j) fg += "\\ ";
          ul += k == j ? "_" : "\\ ";
        }
        if (k == j) fg += "|";
      }
      bg = ReplaceAll(ReplaceAll(bg, "'", "\u2019"), "\"", "\\\"");
      fg = ReplaceAll(ReplaceAll(fg, "'", "\u2019"), "\"", "\\\"");
      if (j == 0) {
        out << ",drawtext=fontfile='" << font << "':fontsize=24:fontcolor=gray:x=(w-text_w)/2:y=h/2:text='" << bg
            << "':enable='between(t," << s.t0 / 100.0 << "," << s.t1 / 100.0 << ")'";
      }
      const Piece& p = pieces[j];
      out << ",drawtext=fontfile='" << font << "':fontsize=24:fontcolor=lightgreen:x=(w-text_w)/2+8:y=h/2:text='" << fg
          << "':enable='between(t," << p.t0 / 100.0 << "," << p.t1 / 100.0 << ")'";
      out << ",drawtext=fontfile='" << font << "':fontsize=24:fontcolor=lightgreen:x=(w-text_w)/2+8:y=h/2+16:text='"
          << ul << "':enable='between(t," << p.t0 / 100.0 << "," << p.t1 / 100.0 << ")'";
    }
  }
  const std::string shown = ShellDoubleQuoted(o.input);
  out << "\" -c:v libx264 -pix_fmt yuv420p -y " << input << ".mp4\n\n\necho \"Your video has been saved to " << shown
      << ".mp4\"\n\necho \"  ffplay " << shown << ".mp4\"\n\n";
  return out.str();
}

std::vector<Word> SegmentWords(const TranscriptSegment& s, whisper_token eot,
                               const std::function<const std::string&(whisper_token)>& token_text) {
  std::vector<Word> words;
  if (s.word_begin.size() != s.tokens.size()) return words;
  for (size_t k = 0; k < s.tokens.size();) {
    if (!s.word_begin[k] || s.tokens[k].id >= eot || s.tokens[k].t0 < 0) {
      ++k;
      continue;
    }
    Word w;
    int n = 0;
    const size_t first = k;
    w.t0 = s.tokens[k].t0;
    w.t1 = s.tokens[k].t1;
    do {
      const whisper_token_data& d = s.tokens[k];
      if (d.id < eot) {
        w.text += token_text(d.id);
        w.probability += d.p;
        ++n;
        w.t1 = std::max(w.t1, d.t1);
      }
      ++k;
    } while (k < s.tokens.size() && !s.word_begin[k]);
    w.text = RepairUtf8(w.text);
    w.probability /= n;
    // The alignment pass's (faster-whisper's), when the library gives it.
    if (s.word_probability.size() == s.tokens.size() && s.word_probability[first] >= 0.0f) {
      w.probability = s.word_probability[first];
    }
    words.push_back(std::move(w));
  }
  return words;
}

// "words" of whisper-cli's full JSON extended (FormatJson).
static nlohmann::ordered_json WordsJson(const TranscriptSegment& s, whisper_token eot,
                                        const std::function<const std::string&(whisper_token)>& token_text) {
  nlohmann::ordered_json words = nlohmann::ordered_json::array();
  for (const Word& w : SegmentWords(s, eot, token_text)) {
    words.push_back({{"text", w.text},
                     {"timestamps", {{"from", FormatTimestamp(w.t0, true)}, {"to", FormatTimestamp(w.t1, true)}}},
                     {"offsets", {{"from", CsToMs(w.t0)}, {"to", CsToMs(w.t1)}}},
                     {"p", w.probability}});
  }
  return words;
}

std::string FormatJson(const std::vector<TranscriptSegment>& raw, const JsonInfo& info,
                       const std::function<const std::string&(whisper_token)>& token_text) {
  const std::vector<TranscriptSegment> segments = Repaired(raw);
  using json = nlohmann::ordered_json;
  json j;
  j["systeminfo"] = info.system_info;
  j["model"] = {{"type", info.model_type},
                {"multilingual", info.multilingual},
                {"vocab", info.n_vocab},
                {"audio", {{"ctx", info.n_audio_ctx}, {"state", info.n_audio_state}, {"head", info.n_audio_head},
                           {"layer", info.n_audio_layer}}},
                {"text", {{"ctx", info.n_text_ctx}, {"state", info.n_text_state}, {"head", info.n_text_head},
                          {"layer", info.n_text_layer}}},
                {"mels", info.n_mels},
                {"ftype", info.ftype}};
  j["params"] = {{"model", info.model_path}, {"language", info.params_language}, {"translate", info.translate}};
  j["result"] = {{"language", info.language}};
  json list = json::array();
  for (const TranscriptSegment& s : segments) {
    list.push_back({{"timestamps", {{"from", FormatTimestamp(s.t0, true)}, {"to", FormatTimestamp(s.t1, true)}}},
                    {"offsets", {{"from", CsToMs(s.t0)}, {"to", CsToMs(s.t1)}}},
                    {"text", s.text}});
    if (info.segment_languages && s.lang_id >= 0) list.back()["language"] = whisper_lang_str(s.lang_id);
    if (token_text) {
      // whisper-cli's full JSON: every token of the segment (timestamps included), with adjacent
      // tokens merged while their bytes end inside a UTF-8 character (whisper.cpp #1798).
      json tokens = json::array();
      for (const TokenGroup& g : GroupTokensByCharacter(s.tokens, token_text)) {
        const whisper_token_data& d = s.tokens[g.first];
        const int64_t t1 = g.t1;
        json tok = {{"text", g.text}};
        if (d.t0 > -1 && t1 > -1) {
          tok["timestamps"] = {{"from", FormatTimestamp(d.t0, true)}, {"to", FormatTimestamp(t1, true)}};
          tok["offsets"] = {{"from", CsToMs(d.t0)}, {"to", CsToMs(t1)}};
        }
        tok["id"] = d.id;
        tok["p"] = d.p;
        tok["t_dtw"] = d.t_dtw;
        tokens.push_back(std::move(tok));
      }
      list.back()["tokens"] = std::move(tokens);
      if (s.word_begin.size() == s.tokens.size()) {
        list.back()["words"] = WordsJson(s, info.eot, token_text);
      }
    }
    if (!s.speaker.empty()) list.back()["speaker"] = s.speaker;  // whisper-cli -di: the last field
    if (info.tinydiarize) list.back()["speaker_turn_next"] = s.speaker_turn_next;  // -tdrz: the last field
  }
  j["transcription"] = std::move(list);
  // Every string is valid UTF-8 by now (RepairUtf8); `replace` keeps dump() from throwing anyway.
  // nlohmann escapes '"', '\\' and every control character (\u0000-\u001f as \n, \t, \u0001...).
  return j.dump(1, '\t', false, json::error_handler_t::replace) + "\n";
}

std::vector<TokenGroup> GroupTokensByCharacter(const std::vector<whisper_token_data>& tokens,
                                               const std::function<const std::string&(whisper_token)>& token_text) {
  std::vector<TokenGroup> groups;
  for (size_t k = 0; k < tokens.size();) {
    TokenGroup g;
    g.first = k;
    g.t1 = tokens[k].t1;
    std::string bytes = token_text(tokens[k].id);
    for (++k; k < tokens.size() && Utf8TrailingBytesNeeded(bytes) > 0; ++k) {
      bytes += token_text(tokens[k].id);
      if (tokens[k].t1 > -1) g.t1 = tokens[k].t1;
    }
    g.end = k;
    g.text = RepairUtf8(bytes);
    groups.push_back(std::move(g));
  }
  return groups;
}

absl::Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot write '", path, "': ", std::strerror(errno)));
  }
  const bool ok = std::fwrite(contents.data(), 1, contents.size(), f) == contents.size();
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed) {
    const int err = errno;
    std::remove(tmp.c_str());
    return absl::UnavailableError(absl::StrCat("cannot write '", path, "': ", std::strerror(err)));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    return absl::UnavailableError(absl::StrCat("cannot rename '", tmp, "' to '", path, "': ", std::strerror(err)));
  }
  return absl::OkStatus();
}

}  // namespace whisper
