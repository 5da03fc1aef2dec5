// Transcript writers in whisper-cli's formats (examples/cli/cli.cpp output_txt/vtt/srt/lrc/csv/
// json): the same layout, timestamps and escaping, so scripts written for whisper.cpp's files read
// ours.
#ifndef GGML_WHISPER_APPS_COMMON_OUTPUT_H_
#define GGML_WHISPER_APPS_COMMON_OUTPUT_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "apps/common/transcript.h"
#include "whisper/whisper.h"

namespace whisper {

// Centiseconds as milliseconds, saturating: negative times are 0, and times past INT64_MAX / 10
// cs stay at the largest representable (a library caller's segment times are not trusted).
int64_t CsToMs(int64_t cs);

// Centiseconds as "HH:MM:SS.mmm" (whisper.cpp to_timestamp), saturating as CsToMs; comma = true
// gives SRT's "HH:MM:SS,mmm". The library's whisper_ggml_format_timestamp, as a string.
std::string FormatTimestamp(int64_t cs, bool comma = false);

// Model and run facts the JSON writer records.
struct JsonInfo {
  std::string system_info;
  std::string model_path;
  std::string model_type;  // "tiny", "base", ...
  bool multilingual = false;
  int n_vocab = 0, n_audio_ctx = 0, n_audio_state = 0, n_audio_head = 0, n_audio_layer = 0;
  int n_text_ctx = 0, n_text_state = 0, n_text_head = 0, n_text_layer = 0, n_mels = 0, ftype = 0;
  // "result": the language decoded in (whisper_full_lang_id); "params": the language asked for
  // after the English-only rule ("auto" stays "auto"), as whisper-cli 1.8.5's output_json writes
  // params.language.
  std::string language = "en";
  std::string params_language = "en";
  bool translate = false;
  // whisper-cli -tdrz: every segment ends with "speaker_turn_next" (TranscriptSegment::speaker_turn_next).
  bool tinydiarize = false;
  // --multilingual (faster-whisper's multilingual=True): every segment names its window's language
  // after its text ("language": "de"; TranscriptSegment::lang_id). whisper-cli has no such field.
  bool segment_languages = false;
  whisper_token eot = 0;  // whisper_token_eot: word lists (-ojf with -dtw) end their text there
};


// whisper-cli -di (estimate_diarization_speaker): which of two channels carries the segment
// [t0, t1) (centiseconds). Sums |x| over samples [i0, i1) of each channel, with i = t * 16000 /
// 100 clamped to [0, n - 1] (so the last sample never counts, as in whisper-cli); "0" when
// channel 0's sum exceeds 1.1 times channel 1's, "1" for the converse, else "?". Channels of
// different lengths or empty ones give "?".
std::string EstimateSpeaker(const std::vector<float>& ch0, const std::vector<float>& ch1, int64_t t0, int64_t t1);

// Sets every segment's speaker to EstimateSpeaker over its [t0, t1), as whisper-cli and
// whisper-server 1.8.5 label each segment under -di / `diarize`. `stereo` holds channels 0 and 1
// (AudioOptions::stereo); with any other number of channels the segments are left unlabelled, as
// both programs label only when pcmf32s.size() == 2.
void LabelSpeakers(const std::vector<std::vector<float>>& stereo, std::vector<TranscriptSegment>* segments);

// "(speaker X)" for a segment with a speaker (the label txt, srt and lrc put before its text,
// whisper.cpp 1.8.5's estimate_diarization_speaker without id_only); "" without one.
std::string SpeakerPrefix(const TranscriptSegment& s);

// Each returns the whole file's contents. A segment with a speaker (TranscriptSegment::speaker, -di) is
// labelled as whisper-cli 1.8.5 labels it: "(speaker 0)" before the text in txt, srt and lrc,
// "<v Speaker0>" in vtt, a "speaker" field last in each JSON segment, and a speaker column in
// csv when `speaker_column` (whisper-cli's header "start,end,speaker,text").
std::string FormatTxt(const std::vector<TranscriptSegment>& segments);
std::string FormatVtt(const std::vector<TranscriptSegment>& segments);
std::string FormatSrt(const std::vector<TranscriptSegment>& segments, int offset_n = 0);
std::string FormatLrc(const std::vector<TranscriptSegment>& segments);
std::string FormatCsv(const std::vector<TranscriptSegment>& segments, bool speaker_column = false);
// whisper-cli -owts (its output_wts): a bash script that has ffmpeg render `input` as a karaoke
// video (`input`.mp4, 1200x120 at 25 fps, `duration_s` long): per segment, its text in gray from
// t0 to t1, and per text token (id < eot, with token times: whisper_full_params.token_timestamps)
// the text again with that token kept and the others blanked, in light green, and an underline
// of it, from the token's t0 to t1. Times are printed as std::ostream prints doubles (t / 100.0).
// As whisper-cli: ' becomes U+2019 and " becomes \" in the text; a segment with a speaker
// starts with "(speaker N)". The token times are the tokens' own (whisper/token_timestamps.h,
// which reads the signal energy at absolute positions where whisper.cpp 1.8.5 reads
// segment-relative ones, so after a window's first segment they differ from whisper-cli's).
// Differences, for a script that runs and a file that is valid UTF-8: `input` is single-quoted for the shell when it holds anything but [A-Za-z0-9_./+-]
// (whisper-cli writes it bare); in the text and the font path, '\', '$' and '`' are escaped
// with '\' (and '"' in the font path), which the shell interprets inside the double-quoted -vf
// argument (whisper-cli writes them bare: a transcribed "$(rm ...)" ran when the script was
// sourced); tokens that split a UTF-8 character are highlighted as one piece (whisper-cli
// highlights each token's bytes).
struct WtsOptions {
  std::string font;    // -fp: the fontfile of every drawtext (as given but for the escapes above)
  std::string input;   // the audio file, as named on the command line
  float duration_s = 0.0f;  // whisper-cli: (n_samples + 1000) / 16000
  whisper_token eot = 0;       // tokens >= eot are not text
};
std::string FormatWts(const std::vector<TranscriptSegment>& segments, const std::function<const std::string&(whisper_token)>& token_text,
                      const WtsOptions& options);

// whisper-cli -ls (its output_score): one line per token of every segment, special tokens
// included: the token's bytes, a tab, its probability as std::ostream prints a float (%g, 6
// significant digits). Bytes of a UTF-8 character split across tokens move whole to the later
// token's line, so the file is valid UTF-8 (whisper-cli writes the halves as they are).
std::string FormatScore(const std::vector<TranscriptSegment>& segments, const std::function<const std::string&(whisper_token)>& token_text);
// With token_text (whisper-cli -ojf), each segment also lists its tokens as whisper-cli's full
// JSON does: [{"text", "timestamps" and "offsets" (when token times are set), "id", "p",
// "t_dtw"}, ...], adjacent tokens merged while they split a UTF-8 character; a segment with word
// times (TranscriptSegment::word_begin, from -dtw) also lists "words": [{"text", "timestamps", "offsets",
// "p" (SegmentWords' probability)}, ...] (an extension: whisper-cli has no word list).
// One word of a segment with word times (TranscriptSegment::word_begin, from -dtw): from a word-start
// token to the next one, its text tokens' (id < eot) bytes, UTF-8 repaired (a leading space
// included, as faster-whisper's Word.word), the first token's t0 and the last one's t1
// (centiseconds), and its probability: TranscriptSegment::word_probability (faster-whisper's
// Word.probability, from the alignment pass) when set, else the mean of its tokens' p.
struct Word {
  std::string text;
  int64_t t0 = 0, t1 = 0;
  double probability = 0.0;
};
// The words of `s` in order; empty when it has no word times.
std::vector<Word> SegmentWords(const TranscriptSegment& s, whisper_token eot,
                               const std::function<const std::string&(whisper_token)>& token_text);

std::string FormatJson(const std::vector<TranscriptSegment>& segments, const JsonInfo& info,
                       const std::function<const std::string&(whisper_token)>& token_text = nullptr);

// Tokens grouped into whole UTF-8 characters, as whisper-cli 1.8.5's -ojf groups a segment's
// tokens (examples/cli/cli.cpp, utf8_trailing_bytes_needed; whisper.cpp issue #1798): a token
// whose bytes end inside a character takes the next tokens until the character is whole (or the
// tokens run out, or the tail is malformed: a stray continuation byte or an F8..FF lead).
// `tokens[first, end)` is one group; `text` its bytes, UTF-8 repaired (RepairUtf8: bytes that
// never complete become U+FFFD); `t1` the last token's t1 that is > -1 (else tokens[first].t1);
// the group keeps tokens[first]'s id, t0, p and t_dtw. Used by -ojf and the server's
// verbose_json words. Errors: none.
struct TokenGroup {
  size_t first = 0, end = 0;
  std::string text;
  int64_t t1 = -1;
};
std::vector<TokenGroup> GroupTokensByCharacter(const std::vector<whisper_token_data>& tokens,
                                               const std::function<const std::string&(whisper_token)>& token_text);

// Writes `contents` to `path` through a temporary file and a rename, so a failed write leaves no
// partial file. Errors name the path and the system's reason.
absl::Status WriteFileAtomically(const std::string& path, const std::string& contents);

}  // namespace whisper

#endif  // GGML_WHISPER_APPS_COMMON_OUTPUT_H_
