#include "apps/common/output.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "gtest/gtest.h"

namespace whisper {
namespace {

// A token as whisper_full_get_token_data gives it before times are computed: tid, t0, t1 and
// t_dtw -1 (whisper_token_data is a C struct: no member defaults).
constexpr whisper_token_data kUnsetToken = {0, -1, 0.0f, 0.0f, 0.0f, 0.0f, -1, -1, -1, 0.0f};

std::vector<TranscriptSegment> TwoSegments() {
  TranscriptSegment a;
  a.t0 = 0;
  a.t1 = 1100;
  a.text = " And so, \"my\" fellow";
  TranscriptSegment b;
  b.t0 = 366012;  // 1 h 1 min 0.12 s
  b.t1 = 366150;
  b.text = " Americans.";
  return {a, b};
}

TEST(Output, Timestamps) {
  EXPECT_EQ(FormatTimestamp(0), "00:00:00.000");
  EXPECT_EQ(FormatTimestamp(1100), "00:00:11.000");
  EXPECT_EQ(FormatTimestamp(366012, true), "01:01:00,120");
}

// Found by //apps/common:output_fuzzer (UBSan: -9223372036854775808 * 10 overflows): times saturate.
TEST(Output, ExtremeTimesSaturate) {
  EXPECT_EQ(CsToMs(std::numeric_limits<int64_t>::min()), 0);
  EXPECT_EQ(CsToMs(-5), 0);
  EXPECT_EQ(CsToMs(123), 1230);
  EXPECT_EQ(CsToMs(std::numeric_limits<int64_t>::max()), std::numeric_limits<int64_t>::max() / 10 * 10);
  EXPECT_EQ(FormatTimestamp(-1), "00:00:00.000");
  std::vector<TranscriptSegment> segs(1);
  segs[0].t0 = std::numeric_limits<int64_t>::min();
  segs[0].t1 = std::numeric_limits<int64_t>::max();
  segs[0].text = " x";
  EXPECT_EQ(FormatCsv(segs), "start,end,text\n0,9223372036854775800,\" x\"\n");
  EXPECT_NE(FormatSrt(segs).find("00:00:00,000 --> 2562047788015:12:55,800"), std::string::npos) << FormatSrt(segs);
}

TEST(Output, TxtVttSrtLrcCsv) {
  const auto segs = TwoSegments();
  EXPECT_EQ(FormatTxt(segs), " And so, \"my\" fellow\n Americans.\n");
  EXPECT_EQ(FormatVtt(segs),
            "WEBVTT\n\n00:00:00.000 --> 00:00:11.000\n And so, \"my\" fellow\n\n"
            "01:01:00.120 --> 01:01:01.500\n Americans.\n\n");
  EXPECT_EQ(FormatSrt(segs),
            "1\n00:00:00,000 --> 00:00:11,000\n And so, \"my\" fellow\n\n"
            "2\n01:01:00,120 --> 01:01:01,500\n Americans.\n\n");
  EXPECT_EQ(FormatLrc(segs), "[by:whisper.cpp]\n[00:00.00] And so, \"my\" fellow\n[61:00.12] Americans.\n");
  EXPECT_EQ(FormatCsv(segs),
            "start,end,text\n0,11000,\" And so, \"\"my\"\" fellow\"\n3660120,3661500,\" Americans.\"\n");
}

// whisper-cli -di's labels, hand-derived from its output_* functions (examples/cli/cli.cpp 1.8.5).
TEST(Output, SpeakerLabels) {
  auto segs = TwoSegments();
  segs[0].speaker = "0";
  segs[1].speaker = "?";
  EXPECT_EQ(FormatTxt(segs), "(speaker 0) And so, \"my\" fellow\n(speaker ?) Americans.\n");
  EXPECT_EQ(FormatVtt(segs),
            "WEBVTT\n\n00:00:00.000 --> 00:00:11.000\n<v Speaker0> And so, \"my\" fellow\n\n"
            "01:01:00.120 --> 01:01:01.500\n<v Speaker?> Americans.\n\n");
  EXPECT_EQ(FormatSrt(segs),
            "1\n00:00:00,000 --> 00:00:11,000\n(speaker 0) And so, \"my\" fellow\n\n"
            "2\n01:01:00,120 --> 01:01:01,500\n(speaker ?) Americans.\n\n");
  EXPECT_EQ(FormatLrc(segs),
            "[by:whisper.cpp]\n[00:00.00](speaker 0) And so, \"my\" fellow\n[61:00.12](speaker ?) Americans.\n");
  EXPECT_EQ(FormatCsv(segs, true), "start,end,speaker,text\n0,11000,0,\" And so, \"\"my\"\" fellow\"\n"
                                   "3660120,3661500,?,\" Americans.\"\n");
  EXPECT_EQ(FormatCsv({}, true), "start,end,speaker,text\n");
  JsonInfo info;
  info.n_vocab = 51864;
  info.eot = 50256;  // <|endoftext|> of the English-only vocabulary (GPT-2's 50256 tokens, then eot)
  const std::string j = FormatJson(segs, info);
  EXPECT_NE(j.find("\"text\": \" Americans.\",\n\t\t\t\"speaker\": \"?\"\n\t\t}"), std::string::npos) << j;
}

// whisper-cli's output_wts, hand-derived for one segment of two text tokens between timestamps.
TEST(Output, WtsKaraokeScript) {
  TranscriptSegment seg;
  seg.t0 = 0;
  seg.t1 = 150;
  auto tok = [](whisper_token id, int64_t t0, int64_t t1) {
    whisper_token_data d = kUnsetToken;
    d.id = id;
    d.t0 = t0;
    d.t1 = t1;
    return d;
  };
  seg.tokens = {tok(50363, 0, 0), tok(1, 0, 50), tok(2, 50, 150), tok(50438, 150, 150)};
  const std::map<whisper_token, std::string> texts = {{1, " Hi"}, {2, "'s"}};
  auto text = [&](whisper_token t) -> const std::string& { return texts.at(t); };
  WtsOptions o;
  o.font = "f.ttf";
  o.input = "in.wav";
  o.duration_s = 1.5625f;
  o.eot = 50256;
  const std::string head = "drawtext=fontfile='f.ttf':fontsize=24:fontcolor=";
  EXPECT_EQ(FormatWts({seg}, text, o),
            "#!/bin/bash\n\nffmpeg -i in.wav -f lavfi -i color=size=1200x120:duration=1.5625:rate=25:color=black -vf \"" +
                head + "gray:x=(w-text_w)/2:y=h/2:text='':enable='between(t,0,0)'," +
                head + "gray:x=(w-text_w)/2:y=h/2:text='>  Hi\u2019s':enable='between(t,0,1.5)'," +
                head + "lightgreen:x=(w-text_w)/2+8:y=h/2:text='>  Hi|\\ \\ ':enable='between(t,0,0.5)'," +
                head + "lightgreen:x=(w-text_w)/2+8:y=h/2+16:text='\\ \\ ___\\ \\ ':enable='between(t,0,0.5)'," +
                head + "lightgreen:x=(w-text_w)/2+8:y=h/2:text='> \\ \\ \\ \u2019s|':enable='between(t,0.5,1.5)'," +
                head + "lightgreen:x=(w-text_w)/2+8:y=h/2+16:text='\\ \\ \\ \\ \\ __':enable='between(t,0.5,1.5)'" +
                "\" -c:v libx264 -pix_fmt yuv420p -y in.wav.mp4\n\n\necho \"Your video has been saved to in.wav.mp4\"\n\n"
                "echo \"  ffplay in.wav.mp4\"\n\n");
  // A path the shell would split is quoted (whisper-cli writes it bare); a speaker leads the text.
  o.input = "my \"clip\".wav";
  seg.speaker = "1";
  const std::string w = FormatWts({seg}, text, o);
  EXPECT_NE(w.find("ffmpeg -i 'my \"clip\".wav' -f lavfi"), std::string::npos) << w;
  EXPECT_NE(w.find("-y 'my \"clip\".wav'.mp4\n"), std::string::npos) << w;
  EXPECT_NE(w.find("echo \"  ffplay my \\\"clip\\\".wav.mp4\"\n"), std::string::npos) << w;
  EXPECT_NE(w.find("text='(speaker 1)>  Hi\u2019s'"), std::string::npos) << w;
  EXPECT_NE(w.find("text='\\ \\ \\ \\ \\ \\ \\ \\ \\ \\ \\ \\ \\ ___\\ \\ '"), std::string::npos) << w;
}

// Transcribed text (and a font path) holding what the shell interprets inside the double-quoted -vf
// argument: the script, sourced by bash with `ffmpeg` a function that writes its arguments, runs
// no command and hands ffmpeg the text as transcribed ('"' as whisper-cli escapes it, ' as U+2019).
// whisper-cli 1.8.5 wrote "$(...)" and backquotes bare: sourcing the script ran them.
TEST(Output, WtsScriptRunsNoTranscribedCommand) {
  const char* env = std::getenv("TEST_TMPDIR");
  const std::string dir = env != nullptr ? env : "/tmp";
  TranscriptSegment seg;
  seg.t0 = 0;
  seg.t1 = 100;
  whisper_token_data d = kUnsetToken;
  d.id = 1;
  d.t1 = 100;
  seg.tokens = {d};
  const std::string said = " $(touch " + dir + "/ran1) `touch " + dir + "/ran2` \\$HOME \"x\" it's";
  auto text = [&](whisper_token) -> const std::string& { return said; };
  WtsOptions o;
  o.font = dir + "/f$HOME`x`.ttf";
  o.input = "in.wav";
  o.eot = 50256;
  const std::string script = dir + "/karaoke.wts", args = dir + "/args";
  {
    std::ofstream f(script);
    f << FormatWts({seg}, text, o);
  }
  const std::string cmd = "bash -c 'ffmpeg() { printf \"%s\\n\" \"$@\" > " + args + "; }; source " + script +
                          "' > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream ran1(dir + "/ran1"), ran2(dir + "/ran2");
  EXPECT_FALSE(ran1.good());
  EXPECT_FALSE(ran2.good());
  std::ifstream in(args);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string vf = ss.str();
  // The text reaches ffmpeg as transcribed: backslashes, $ and backquotes literal.
  const std::string want_text = "text='> " + said.substr(0, said.find('\'')) + "\u2019s'";
  EXPECT_NE(vf.find(want_text), std::string::npos) << vf;
  EXPECT_NE(vf.find("fontfile='" + o.font + "'"), std::string::npos) << vf;
}

// whisper-cli -tdrz: "speaker_turn_next" closes every JSON segment.
TEST(Output, JsonSpeakerTurns) {
  auto segs = TwoSegments();
  segs[0].speaker_turn_next = true;
  JsonInfo info;
  info.n_vocab = 51864;
  info.eot = 50256;  // <|endoftext|> of the English-only vocabulary (GPT-2's 50256 tokens, then eot)
  EXPECT_EQ(FormatJson(segs, info).find("speaker_turn_next"), std::string::npos);
  info.tinydiarize = true;
  const std::string j = FormatJson(segs, info);
  EXPECT_NE(j.find("fellow\",\n\t\t\t\"speaker_turn_next\": true\n\t\t}"), std::string::npos) << j;
  EXPECT_NE(j.find("Americans.\",\n\t\t\t\"speaker_turn_next\": false\n\t\t}"), std::string::npos) << j;
}

// --multilingual: "language" (the window's code, whisper.cpp's table: 0 en, 2 de) after each
// segment's text; absent without it, and for a segment whose language is unknown (-1).
TEST(Output, JsonSegmentLanguages) {
  auto segs = TwoSegments();
  segs[0].lang_id = 0;
  segs[1].lang_id = 2;
  JsonInfo info;
  info.n_vocab = 51865;
  info.eot = 50257;
  EXPECT_EQ(FormatJson(segs, info).find("\"language\": \"de\""), std::string::npos);
  info.segment_languages = true;
  std::string j = FormatJson(segs, info);
  EXPECT_NE(j.find("fellow\",\n\t\t\t\"language\": \"en\"\n\t\t}"), std::string::npos) << j;
  EXPECT_NE(j.find("Americans.\",\n\t\t\t\"language\": \"de\"\n\t\t}"), std::string::npos) << j;
  segs[1].lang_id = -1;
  j = FormatJson(segs, info);
  EXPECT_EQ(j.find("\"language\": \"de\""), std::string::npos) << j;
}

// Sums of |x| per channel over samples [t0 * 160, t1 * 160) clamped to [0, n - 1], against 1.1
// times the other's.
TEST(Output, EstimateSpeaker) {
  std::vector<float> a(1000, 0.0f), b(1000, 0.0f);
  for (int i = 0; i < 160; ++i) a[i] = (i % 2 != 0) ? 0.5f : -0.5f;  // [0, 1) cs: 80 vs 0
  for (int i = 160; i < 320; ++i) b[i] = 1.0f;                       // [1, 2) cs: 0 vs 160
  for (int i = 320; i < 480; ++i) {                                  // [2, 3) cs: 168 vs 160
    a[i] = 1.05f;
    b[i] = 1.0f;
  }
  for (int i = 480; i < 640; ++i) {  // [3, 4) cs: 192 vs 160
    a[i] = -1.2f;
    b[i] = 1.0f;
  }
  b[999] = 100.0f;  // the last sample never counts
  EXPECT_EQ(EstimateSpeaker(a, b, 0, 1), "0");
  EXPECT_EQ(EstimateSpeaker(a, b, 1, 2), "1");
  EXPECT_EQ(EstimateSpeaker(a, b, 0, 2), "1");  // 80 vs 160
  EXPECT_EQ(EstimateSpeaker(a, b, 2, 3), "?");  // within 1.1x either way
  EXPECT_EQ(EstimateSpeaker(a, b, 3, 4), "0");
  EXPECT_EQ(EstimateSpeaker(a, b, 6, std::numeric_limits<int64_t>::max()), "?");  // [960, 999): silence
  EXPECT_EQ(EstimateSpeaker(a, b, 7, -100), "?");                                 // an empty range
  EXPECT_EQ(EstimateSpeaker(a, {}, 0, 1), "?");  // not two channels of one length
  // Everything but the last sample: 440 vs 480, within 1.1x.
  EXPECT_EQ(EstimateSpeaker(a, b, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()), "?");
}

// LabelSpeakers: EstimateSpeaker per segment over two channels, nothing with another count.
TEST(Output, LabelSpeakersAndSpeakerPrefix) {
  std::vector<std::vector<float>> stereo(2, std::vector<float>(1000, 0.0f));
  for (int i = 0; i < 160; ++i) stereo[0][i] = 1.0f;        // [0, 1) cs: channel 0
  for (int i = 160; i < 320; ++i) stereo[1][i] = 1.0f;      // [1, 2) cs: channel 1
  std::vector<TranscriptSegment> segs(3);
  segs[0].t0 = 0, segs[0].t1 = 1;
  segs[1].t0 = 1, segs[1].t1 = 2;
  segs[2].t0 = 3, segs[2].t1 = 4;  // silence
  LabelSpeakers(stereo, &segs);
  EXPECT_EQ(segs[0].speaker, "0");
  EXPECT_EQ(segs[1].speaker, "1");
  EXPECT_EQ(segs[2].speaker, "?");
  EXPECT_EQ(SpeakerPrefix(segs[1]), "(speaker 1)");
  std::vector<TranscriptSegment> none(1);
  LabelSpeakers({stereo[0]}, &none);  // one channel: unlabelled, as whisper-cli's pcmf32s.size() == 2 check
  EXPECT_EQ(none[0].speaker, "");
  EXPECT_EQ(SpeakerPrefix(none[0]), "");
}

// A character split across two segments (a timestamp between its bytes) and stray bytes: every
// writer's file is valid UTF-8, the character whole in the later segment.
TEST(Output, SplitCharacterMovesToTheLaterSegment) {
  std::vector<TranscriptSegment> segs(2);
  segs[0].t0 = 0;
  segs[0].t1 = 100;
  segs[0].text = " caf\xC3";
  segs[1].t0 = 100;
  segs[1].t1 = 200;
  segs[1].text = "\xA9 ok\xFF";
  EXPECT_EQ(FormatTxt(segs), " caf\n\xC3\xA9 ok\xEF\xBF\xBD\n");
  EXPECT_EQ(FormatSrt(segs), "1\n00:00:00,000 --> 00:00:01,000\n caf\n\n2\n00:00:01,000 --> 00:00:02,000\n\xC3\xA9 ok\xEF\xBF\xBD\n\n");
  EXPECT_EQ(FormatCsv(segs), "start,end,text\n0,1000,\" caf\"\n1000,2000,\"\xC3\xA9 ok\xEF\xBF\xBD\"\n");
  const std::string j = FormatJson(segs, JsonInfo{});
  EXPECT_NE(j.find("\"text\": \" caf\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"text\": \"\xC3\xA9 ok\xEF\xBF\xBD\""), std::string::npos) << j;
}

// JSON escapes quotes, backslashes and every control character (RFC 8259 section 7); CSV doubles
// quotes (RFC 4180) and turns control characters into spaces (one row per line, no NUL).
TEST(Output, JsonAndCsvEscaping) {
  std::vector<TranscriptSegment> segs(1);
  segs[0].t1 = 50;
  segs[0].text = std::string(" a\"b\\c\nd\te\x01\x1F\x7F", 13) + std::string(1, '\0') + "z";
  const std::string j = FormatJson(segs, JsonInfo{});
  EXPECT_NE(j.find("\"text\": \" a\\\"b\\\\c\\nd\\te\\u0001\\u001f\x7F\\u0000z\""), std::string::npos) << j;
  EXPECT_EQ(FormatCsv(segs), "start,end,text\n0,500,\" a\"\"b\\c d e    z\"\n");
}

TEST(Output, JsonLayout) {
  JsonInfo info;
  info.model_type = "tiny";
  info.n_vocab = 51864;
  info.eot = 50256;  // <|endoftext|> of the English-only vocabulary (GPT-2's 50256 tokens, then eot)
  const std::string j = FormatJson(TwoSegments(), info);
  EXPECT_NE(j.find("\t\"transcription\": [\n\t\t{\n\t\t\t\"timestamps\": {\n\t\t\t\t\"from\": \"00:00:00,000\","),
            std::string::npos)
      << j;
  EXPECT_NE(j.find("\"text\": \" And so, \\\"my\\\" fellow\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"offsets\": {\n\t\t\t\t\"from\": 3660120,\n\t\t\t\t\"to\": 3661500\n"), std::string::npos) << j;
  EXPECT_LT(j.find("\"systeminfo\""), j.find("\"model\""));  // whisper-cli's key order
}

TEST(Output, JsonFullListsEachSegmentsTokens) {
  std::vector<TranscriptSegment> segs = TwoSegments();
  auto tok = [](whisper_token id, float p, int64_t t0, int64_t t1) {
    whisper_token_data d = kUnsetToken;
    d.id = id;
    d.p = p;
    d.t0 = t0;
    d.t1 = t1;
    return d;
  };
  segs[0].tokens = {tok(843, 0.5f, 0, 20), tok(523, 0.25f, 20, 30)};
  segs[1].tokens = {tok(3399, 0.75f, -1, -1)};
  const std::vector<std::string> vocab_text = {" And", " so", " Americans"};
  auto token_text = [&](whisper_token t) -> const std::string& {
    return vocab_text[t == 843 ? 0 : t == 523 ? 1 : 2];
  };
  const std::string j = FormatJson(segs, JsonInfo(), token_text);
  // whisper-cli's full JSON per token: text, timestamps and offsets when times are set (0-20 cs =
  // 0-200 ms), id, p, t_dtw.
  EXPECT_NE(j.find("\"tokens\": [\n\t\t\t\t{\n\t\t\t\t\t\"text\": \" And\",\n\t\t\t\t\t\"timestamps\": {\n"
                   "\t\t\t\t\t\t\"from\": \"00:00:00,000\",\n\t\t\t\t\t\t\"to\": \"00:00:00,200\"\n\t\t\t\t\t},\n"
                   "\t\t\t\t\t\"offsets\": {\n\t\t\t\t\t\t\"from\": 0,\n\t\t\t\t\t\t\"to\": 200\n\t\t\t\t\t},\n"
                   "\t\t\t\t\t\"id\": 843,\n\t\t\t\t\t\"p\": 0.5,\n\t\t\t\t\t\"t_dtw\": -1\n\t\t\t\t},"),
            std::string::npos)
      << j;
  // No token times: no timestamps/offsets keys.
  EXPECT_NE(j.find("\"text\": \" Americans\",\n\t\t\t\t\t\"id\": 3399,\n\t\t\t\t\t\"p\": 0.75"), std::string::npos)
      << j;
  // Without token_text the layout is -oj's: no "tokens" key.
  EXPECT_EQ(FormatJson(segs, JsonInfo()).find("\"tokens\""), std::string::npos);
}

TEST(Output, JsonFullMergesTokensThatSplitAUtf8Character) {
  std::vector<TranscriptSegment> segs(1);
  segs[0].t1 = 100;
  segs[0].text = " \xc3\xa9";
  segs[0].tokens.resize(2, kUnsetToken);
  segs[0].tokens[0].id = 1;  // " \xc3": an incomplete 2-byte character
  segs[0].tokens[1].id = 2;  // "\xa9"
  const std::vector<std::string> vocab_text = {"", " \xc3", "\xa9"};
  auto token_text = [&](whisper_token t) -> const std::string& { return vocab_text[t]; };
  const std::string j = FormatJson(segs, JsonInfo(), token_text);
  EXPECT_NE(j.find("\"text\": \" \xc3\xa9\",\n\t\t\t\t\t\"id\": 1,"), std::string::npos) << j;
  EXPECT_EQ(j.find("\"id\": 2"), std::string::npos) << j;
}

// whisper-cli 1.8.5's grouping (utf8_trailing_bytes_needed): 几 (E5 87 A0) as E5 87 + A0 is one
// group with the first token's place and the last token's t1; a complete token stays alone; an
// F8 lead or a stray continuation byte stops merging (malformed: U+FFFD); a character the tokens
// never complete becomes U+FFFD at the end.
TEST(Output, GroupTokensByCharacterFollowsWhisperCli) {
  const std::vector<std::string> vocab = {"\xe5\x87", "\xa0", "\xe7\x94\x9a", "\xf8", "\x80", "\xe4"};
  auto token_text = [&](whisper_token t) -> const std::string& { return vocab[t]; };
  std::vector<whisper_token_data> tokens(7, kUnsetToken);
  const whisper_token ids[] = {2, 0, 1, 3, 4, 2, 5};
  for (size_t i = 0; i < tokens.size(); ++i) {
    tokens[i].id = ids[i];
    tokens[i].t0 = static_cast<int64_t>(i) * 10;
    tokens[i].t1 = static_cast<int64_t>(i) * 10 + 9;
  }
  tokens[2].t1 = -1;  // the merged group keeps the last t1 that is set: token 1's
  const std::vector<TokenGroup> g = GroupTokensByCharacter(tokens, token_text);
  ASSERT_EQ(g.size(), 6u);
  EXPECT_EQ(g[0].text, "\xe7\x94\x9a");
  EXPECT_EQ(std::make_pair(g[1].first, g[1].end), std::make_pair(size_t{1}, size_t{3}));
  EXPECT_EQ(g[1].text, "\xe5\x87\xa0");
  EXPECT_EQ(g[1].t1, 19);
  EXPECT_EQ(g[2].text, "\xef\xbf\xbd");  // F8: malformed lead, alone
  EXPECT_EQ(g[3].text, "\xef\xbf\xbd");  // a stray continuation byte, alone
  EXPECT_EQ(g[4].text, "\xe7\x94\x9a");
  EXPECT_EQ(std::make_pair(g[5].first, g[5].end), std::make_pair(size_t{6}, size_t{7}));
  EXPECT_EQ(g[5].text, "\xef\xbf\xbd");  // E4 never completed
}

// whisper-cli -ls: "<token bytes>\t<p as std::ostream prints a float>\n" per token, specials
// included; "é" (C3 A9) split over two tokens lands whole on the second token's line.
TEST(Output, ScoreLinesPerToken) {
  const std::map<whisper_token, std::string> text = {{50363, "[_BEG_]"}, {1, " caf"}, {2, "\xC3"}, {3, "\xA9"}, {4, "\xE2\x82"}};
  auto token_text = [&text](whisper_token t) -> const std::string& { return text.at(t); };
  std::vector<TranscriptSegment> segs(2);
  auto tok = [](whisper_token id, float p) {
    whisper_token_data d = kUnsetToken;
    d.id = id;
    d.p = p;
    return d;
  };
  segs[0].tokens = {tok(50363, 0.825862f), tok(1, 0.5f), tok(2, 1.0f)};
  segs[1].tokens = {tok(3, 0.0450098f), tok(4, 1e-7f)};
  // std::ostream << float: 6 significant digits, shortest of fixed and exponent ("%g").
  EXPECT_EQ(FormatScore(segs, token_text),
            "[_BEG_]\t0.825862\n caf\t0.5\n\t1\n\xC3\xA9\t0.0450098\n\xEF\xBF\xBD\t1e-07\n");
  EXPECT_EQ(FormatScore({}, token_text), "");
}

TEST(Output, AtomicWriteAndErrors) {
  const std::string dir = ::testing::TempDir();
  const std::string path = dir + "/out.txt";
  ASSERT_TRUE(WriteFileAtomically(path, "hello\n").ok());
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), "hello\n");
  const absl::Status st = WriteFileAtomically("/nonexistent-dir/x.txt", "x");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("/nonexistent-dir/x.txt"), std::string::npos);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace whisper
