#include "apps/server/inference.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "apps/common/audio.h"
#include "apps/common/output.h"
#include "apps/common/request_rules.h"
#include "apps/common/transcript.h"
#include "apps/server/log_capture.h"
#include "apps/common/utf8.h"

namespace whisper::server {
namespace {

using json = nlohmann::json;

// Form fields whose value is a whisper-cli flag's value: checked and applied by ParseCliParams.
struct FlagField {
  const char* name;
  const char* flag;
};
constexpr FlagField kFlagFields[] = {
    {"offset_t", "-ot"},         {"offset_n", "-on"},       {"duration", "-d"},
    {"max_context", "-mc"},      {"max_len", "-ml"},        {"best_of", "-bo"},
    {"beam_size", "-bs"},        {"audio_ctx", "-ac"},      {"word_thold", "-wt"},
    {"entropy_thold", "-et"},    {"logprob_thold", "-lpt"}, {"no_speech_thold", "-nth"},
    {"temperature", "-tp"},      {"temperature_inc", "-tpi"}, {"language", "-l"},
    {"prompt", "--prompt"},
    // faster-whisper 1.2.1's (this server's word timestamps: timestamp_granularities[]=word).
    {"prepend_punctuations", "--prepend-punctuations"}, {"append_punctuations", "--append-punctuations"},
};

// Boolean form fields that set a CliParams switch either way.
struct BoolField {
  const char* name;
  bool CliParams::*field;
};
constexpr BoolField kBoolFields[] = {
    {"translate", &CliParams::translate},
    {"no_timestamps", &CliParams::no_timestamps},
    {"split_on_word", &CliParams::split_on_word},
    {"suppress_nst", &CliParams::suppress_nst},
    {"suppress_non_speech", &CliParams::suppress_nst},
    {"carry_initial_prompt", &CliParams::carry_initial_prompt},
    {"detect_language", &CliParams::detect_language},
    {"debug_mode", &CliParams::debug_mode},
    {"vad", &CliParams::vad},
    // whisper-server 1.8.5 reads both per request, with no check that they exclude each other
    // (only its -di -tdrz flags do).
    {"diarize", &CliParams::diarize},
    {"tinydiarize", &CliParams::tinydiarize},
};

absl::Status FieldError(const std::string& name, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("field '", name, "' ", what));
}

// whisper-server's parse_str_to_bool accepts true/1/yes/y and takes anything else as false; here
// anything else is an error, so a typo is not silently false.
absl::StatusOr<bool> ParseBool(const std::string& name, const std::string& value) {
  const std::string v = absl::AsciiStrToLower(value);
  if (v == "true" || v == "1" || v == "yes" || v == "y" || v == "on") return true;
  if (v == "false" || v == "0" || v == "no" || v == "n" || v == "off") return false;
  return FieldError(name, absl::StrCat("expects a boolean (true/false, 1/0, yes/no), got '", value, "'"));
}

bool IsKnownField(const std::string& name) {
  for (const FlagField& f : kFlagFields) if (name == f.name) return true;
  for (const BoolField& f : kBoolFields) if (name == f.name) return true;
  return name == "file" || name == "response_format" || name == "model" || name == "token_timestamps" ||
         name == "no_language_probabilities" || name == "timestamp_granularities[]" ||
         name == "timestamp_granularities";
}

const std::string* Single(const Form& form, const std::string& name, absl::Status* error) {
  const size_t n = form.count(name);
  if (n == 0) return nullptr;
  if (n > 1) {
    *error = FieldError(name, absl::StrCat("is given ", n, " times; expected once"));
    return nullptr;
  }
  return &form.find(name)->second.content;
}

std::string DisplayName(const FormValue& file) {
  return file.filename.empty() ? std::string("<file field>") : file.filename;
}

std::string Trimmed(const std::string& s) { return std::string(absl::StripAsciiWhitespace(s)); }

json Rounded(double v) { return std::round(v * 1e6) / 1e6; }

Reply Ok(std::string content_type, std::string body) {
  Reply r;
  r.content_type = std::move(content_type);
  r.body = std::move(body);
  return r;
}

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

Reply FormatWhisperServer(const RequestOptions& o, const std::vector<TranscriptSegment>& segments, whisper_context* ctx,
                          whisper_state* state, double duration_s) {
  // whisper-server's output_str: each segment's "(speaker N)" (diarize) and text, and a newline.
  const std::string text = FormatTxt(segments);
  const std::string& f = o.response_format;
  if (f == "text") return Ok("text/plain; charset=utf-8", text);
  if (f == "srt") return Ok("application/x-subrip", FormatSrt(segments, o.decode.offset_n));
  if (f == "vtt") return Ok("text/vtt", FormatVtt(segments));
  if (f == "json") return Ok("application/json", Dump(json{{"text", text}}));
  // verbose_json: whisper-server's attempt at openai/whisper's result dictionary.
  const int lang = whisper_full_lang_id_from_state(state);
  json j = {{"task", o.decode.translate ? "translate" : "transcribe"},
            {"language", whisper_lang_str_full(std::max(0, lang))},
            {"duration", duration_s},
            {"text", text},
            {"segments", json::array()}};
  if (o.language_probabilities && whisper_is_multilingual(ctx)) {
    std::vector<float> probs(static_cast<size_t>(whisper_lang_max_id() + 1), 0.0f);
    const int id = whisper_lang_auto_detect_with_state(ctx, state, 0, std::max(1, o.decode.n_threads), probs.data());
    if (id >= 0) {
      j["detected_language"] = whisper_lang_str_full(id);
      j["detected_language_probability"] = Rounded(probs[id]);
      json all = json::object();
      for (int i = 0; i <= whisper_lang_max_id(); ++i) {
        if (probs[i] > 0.001f) all[whisper_lang_str(i)] = Rounded(probs[i]);
      }
      j["language_probabilities"] = all;
    }
  }
  const whisper_token eot = whisper_token_eot(ctx);
  std::string piece;  // GroupTokensByCharacter copies each piece before asking for the next
  auto token_text = [ctx, &piece](whisper_token id) -> const std::string& {
    piece = whisper_token_to_str(ctx, id);
    return piece;
  };
  for (size_t i = 0; i < segments.size(); ++i) {
    const TranscriptSegment& s = segments[i];
    json seg = {{"id", i}, {"text", s.text}};
    if (!o.decode.no_timestamps) {
      seg["start"] = Rounded(s.t0 * 0.01);
      seg["end"] = Rounded(s.t1 * 0.01);
    }
    if (!s.speaker.empty()) seg["speaker"] = s.speaker;  // diarize: "0", "1" or "?"
    json tokens = json::array(), words = json::array();
    std::vector<whisper_token_data> text_tokens;
    for (const whisper_token_data& t : s.tokens) {
      if (t.id >= eot) continue;
      tokens.push_back(t.id);
      text_tokens.push_back(t);
    }
    // whisper-server 1.8.5 writes one "word" per token, a token ending inside a character as
    // U+FFFD; these are grouped into whole characters as whisper-cli 1.8.5's -ojf groups them
    // (the group's first token's p and t_dtw, its last token's end).
    for (const TokenGroup& g : GroupTokensByCharacter(text_tokens, token_text)) {
      const whisper_token_data& t = text_tokens[g.first];
      json w = {{"word", g.text}};
      if (!o.decode.no_timestamps && o.token_timestamps) {
        w["start"] = Rounded(t.t0 * 0.01);
        w["end"] = Rounded(g.t1 * 0.01);
        w["t_dtw"] = t.t_dtw;
      }
      w["probability"] = Rounded(t.p);
      words.push_back(std::move(w));
    }
    seg["tokens"] = std::move(tokens);
    seg["words"] = std::move(words);
    seg["temperature"] = o.decode.temperature;
    seg["avg_logprob"] = Rounded(whisper_ggml_full_get_segment_avg_logprob_from_state(state, static_cast<int>(i)));
    seg["compression_ratio"] =
        Rounded(whisper_ggml_full_get_segment_compression_ratio_from_state(state, static_cast<int>(i)));
    seg["no_speech_prob"] = Rounded(s.no_speech_prob);
    j["segments"].push_back(std::move(seg));
  }
  return Ok("application/json", Dump(j));
}

Reply FormatOpenAi(const RequestOptions& o, const std::vector<TranscriptSegment>& segments, whisper_context* ctx,
                   whisper_state* state, double duration_s) {
  std::string joined;  // with diarize, each segment's text follows its "(speaker N)"
  for (const TranscriptSegment& s : segments) {
    const std::string label = SpeakerPrefix(s);  // a space before and after it, as /inference's
    if (!label.empty()) absl::StrAppend(&joined, joined.empty() ? "" : " ", label, " ", Trimmed(s.text));
    if (label.empty()) absl::StrAppend(&joined, s.text);
  }
  const std::string text = Trimmed(joined);
  const std::string& f = o.response_format;
  // OpenAI's subtitle writers (openai/whisper utils.py) strip each segment's text; a speaker label
  // keeps one space before it ("(speaker 0) And", "<v Speaker0> And").
  std::vector<TranscriptSegment> stripped = segments;
  for (TranscriptSegment& s : stripped) s.text = (SpeakerPrefix(s).empty() ? "" : " ") + Trimmed(s.text);
  if (f == "text") return Ok("text/plain; charset=utf-8", text + "\n");
  if (f == "srt") return Ok("text/plain; charset=utf-8", FormatSrt(stripped));
  if (f == "vtt") return Ok("text/plain; charset=utf-8", FormatVtt(stripped));
  const json usage = {{"type", "duration"}, {"seconds", static_cast<int64_t>(std::ceil(duration_s))}};
  if (f == "json") return Ok("application/json", Dump(json{{"text", text}, {"usage", usage}}));
  const whisper_token eot = whisper_token_eot(ctx);
  const whisper_token beg = whisper_token_beg(ctx);
  const int lang = whisper_full_lang_id_from_state(state);
  json j = {{"task", o.task_translate ? "translate" : "transcribe"},
            {"language", whisper_lang_str_full(std::max(0, lang))},
            {"duration", duration_s},
            {"text", text},
            {"usage", usage}};
  if (o.granularity_word) {
    // OpenAI's TranscriptionWord: {"word", "start", "end"} (seconds), the word without its
    // leading space.
    json words = json::array();
    std::string piece;  // SegmentWords appends each piece before asking for the next
    auto token_text = [ctx, &piece](whisper_token id) -> const std::string& {
      piece = whisper_token_to_str(ctx, id);
      return piece;
    };
    for (const TranscriptSegment& s : segments) {
      for (const Word& w : SegmentWords(s, eot, token_text)) {
        words.push_back({{"word", Trimmed(w.text)}, {"start", Rounded(w.t0 * 0.01)}, {"end", Rounded(w.t1 * 0.01)}});
      }
    }
    j["words"] = std::move(words);
  }
  if (!o.granularity_segment) return Ok("application/json", Dump(j));
  j["segments"] = json::array();
  for (size_t i = 0; i < segments.size(); ++i) {
    const TranscriptSegment& s = segments[i];
    json tokens = json::array();
    for (const whisper_token_data& t : s.tokens) {
      // Text and timestamp tokens, as whisper.cpp keeps them: the opening timestamp of a segment
      // that follows another in its window is that one's closing token.
      if (t.id < eot || t.id >= beg) tokens.push_back(t.id);
    }
    j["segments"].push_back({{"id", i},
                             {"seek", s.t0},  // centiseconds = mel frames; see the README
                             {"start", Rounded(s.t0 * 0.01)},
                             {"end", Rounded(s.t1 * 0.01)},
                             {"text", s.text},
                             {"tokens", std::move(tokens)},
                             {"temperature", o.decode.temperature},
                             {"avg_logprob", Rounded(whisper_ggml_full_get_segment_avg_logprob_from_state(
                                                 state, static_cast<int>(i)))},
                             {"compression_ratio", Rounded(whisper_ggml_full_get_segment_compression_ratio_from_state(
                                                       state, static_cast<int>(i)))},
                             {"no_speech_prob", Rounded(s.no_speech_prob)}});
    if (!s.speaker.empty()) j["segments"].back()["speaker"] = s.speaker;  // diarize, as /inference's
  }
  return Ok("application/json", Dump(j));
}

// Puts `warnings` in the reply: its `warnings` (headers, routes.cc) and, for a JSON body, a
// "warnings" array after the other keys.
void AddWarnings(std::vector<std::string> warnings, Reply* reply) {
  if (warnings.empty()) return;
  if (reply->content_type == "application/json") {
    json j = json::parse(reply->body, nullptr, /*allow_exceptions=*/false);
    if (j.is_object()) {
      j["warnings"] = warnings;
      reply->body = Dump(j);
    }
  }
  reply->warnings = std::move(warnings);
}

// A field other than timestamp_granularities given more than once: the error naming the first
// such known field (in the form's order), or OK.
absl::Status CheckRepeatedFields(const Form& form) {
  for (const auto& entry : form) {
    const std::string& name = entry.first;
    if (IsKnownField(name) && name != "timestamp_granularities[]" && name != "timestamp_granularities" &&
        form.count(name) > 1) {
      return FieldError(name, absl::StrCat("is given ", form.count(name), " times; expected once"));
    }
  }
  return absl::OkStatus();
}

// Appends the fields that carry a whisper-cli flag's value (kFlagFields) to `args` as flag and
// value, each checked alone first (ParseCliParams) so that an error names the field.
absl::Status AppendFlagFields(const Form& form, std::vector<std::string>* args) {
  absl::Status error;
  for (const FlagField& f : kFlagFields) {
    const std::string* v = Single(form, f.name, &error);
    if (!error.ok()) return error;
    if (v == nullptr) continue;
    std::string value = *v;
    // A NUL would end the C string below and the rest of the value would go unseen: refused, for
    // every field (a prompt is the one that takes free text; the others would fail their check).
    if (value.find('\0') != std::string::npos) return FieldError(f.name, PromptTextProblem(value));
    // whisper-server's beam_size default is -1, and any beam_size <= 1 decodes greedily there.
    if (std::string(f.name) == "beam_size" && (value == "-1" || value == "0")) value = "1";
    const char* one[] = {"server", f.flag, value.c_str()};
    absl::StatusOr<CliParams> check = ParseCliParams(3, one);
    if (!check.ok()) {
      std::string m(check.status().message());
      const std::string prefix = absl::StrCat(f.flag, " ");
      if (m.rfind(prefix, 0) == 0) m = m.substr(prefix.size());
      return FieldError(f.name, m);
    }
    if (std::string(f.name) == "language" && check->language != "auto" &&
        whisper_lang_id(check->language.c_str()) < 0) {
      return FieldError(f.name, absl::StrCat("names no language Whisper knows: '", value,
                                             "' (expected an ISO 639-1 code such as 'en', or 'auto')"));
    }
    args->push_back(f.flag);
    args->push_back(value);
  }
  return absl::OkStatus();
}

// The boolean fields: kBoolFields into o->decode, token_timestamps and no_language_probabilities.
absl::Status ApplyBoolFields(const Form& form, RequestOptions* o) {
  absl::Status error;
  for (const BoolField& f : kBoolFields) {
    const std::string* v = Single(form, f.name, &error);
    if (!error.ok()) return error;
    if (v == nullptr) continue;
    absl::StatusOr<bool> b = ParseBool(f.name, *v);
    if (!b.ok()) return b.status();
    o->decode.*(f.field) = *b;
  }
  for (const auto& [name, field] : {std::pair<const char*, bool*>{"token_timestamps", &o->token_timestamps}}) {
    const std::string* v = Single(form, name, &error);
    if (!error.ok()) return error;
    if (v == nullptr) continue;
    absl::StatusOr<bool> b = ParseBool(name, *v);
    if (!b.ok()) return b.status();
    *field = *b;
  }
  if (const std::string* v = Single(form, "no_language_probabilities", &error); v != nullptr) {
    absl::StatusOr<bool> b = ParseBool("no_language_probabilities", *v);
    if (!b.ok()) return b.status();
    o->language_probabilities = !*b;
  }
  return error;
}

// response_format (json, text, srt, vtt or verbose_json) into o->response_format, then OpenAI's
// timestamp_granularities[] (ignored on whisper-server's route; segments unless only words are
// asked for).
absl::Status ApplyResponseFields(Api api, const Form& form, RequestOptions* o) {
  absl::Status error;
  if (const std::string* v = Single(form, "response_format", &error); v != nullptr) {
    o->response_format = *v;
  }
  if (!error.ok()) return error;
  const std::string& f = o->response_format;
  if (f != "json" && f != "text" && f != "srt" && f != "vtt" && f != "verbose_json") {
    return FieldError("response_format", absl::StrCat("must be one of json, text, srt, vtt, verbose_json; got '", f, "'"));
  }
  // whisper-server has no timestamp_granularities: /inference accepts and ignores it.
  for (const char* name : {"timestamp_granularities[]", "timestamp_granularities"}) {
    if (api == Api::kWhisperServer) break;
    auto [begin, end] = form.equal_range(name);
    for (auto it = begin; it != end; ++it) {
      const std::string& g = it->second.content;
      if (g == "segment") {
        o->granularity_segment = true;
      } else if (g == "word") {
        o->granularity_word = true;
      } else {
        return FieldError(name, absl::StrCat("must be 'segment' or 'word'; got '", g, "'"));
      }
      // OpenAI's API reference: "response_format must be set verbose_json to use timestamp
      // granularities".
      if (f != "verbose_json") {
        return FieldError(name, absl::StrCat("needs response_format 'verbose_json'; got '", f, "'"));
      }
    }
  }
  if (!o->granularity_word) o->granularity_segment = true;  // OpenAI's default: segments
  return absl::OkStatus();
}

}  // namespace

Reply ErrorReply(Api api, int status, const std::string& message, const std::string& param) {
  Reply r;
  r.status = status;
  r.content_type = "application/json";
  if (api == Api::kWhisperServer) {
    r.body = Dump(json{{"error", message}});
  } else {
    r.body = Dump(json{{"error",
                        {{"message", message},
                         {"type", status >= 500 ? "server_error" : "invalid_request_error"},
                         {"param", param.empty() ? json(nullptr) : json(param)},
                         {"code", nullptr}}}});
  }
  return r;
}

namespace {

// offset_t/duration (ms) against the audio (n_samples at 16 kHz): a selection starting at or past
// the audio's end, or shorter than the 100 ms whisper.cpp transcribes, transcribes nothing. As
// whisper-server 1.8.5 (whisper_full: "input is too short", a 200 with empty text) the reply stays
// a 200 (a client stepping offset_t through a file meets the end this way), with a warning naming
// the field, its value and the audio's duration so the empty text is not taken for silence. The
// CLI makes -ot past the end an error (exit 1): a user typing a flag wants to hear of it at once.
// The warning, or "" when the selection is transcribed.
std::string OffsetWarning(const Form& form, const CliParams& d, size_t n_samples) {
  if (d.offset_t_ms == 0 && d.duration_ms == 0) return "";
  const std::string offset = form.count("offset_t") ? "field 'offset_t' " : "the server's -ot ";
  const double audio_s = static_cast<double>(n_samples) / kSampleRate;
  absl::StatusOr<SampleRange> r = SampleRangeFromMs(static_cast<int64_t>(n_samples), d.offset_t_ms, d.duration_ms);
  if (!r.ok()) {
    return absl::StrFormat("%s%d ms is at or past the end of the audio (%.3f s): nothing was transcribed", offset,
                           d.offset_t_ms, audio_s);
  }
  if (r->size() >= 1600) return "";
  return absl::StrFormat("%s%d ms with duration %d ms selects %d ms of the %.3f s audio, less than the 100 ms "
                         "whisper.cpp transcribes: nothing was transcribed",
                         offset, d.offset_t_ms, d.duration_ms, r->size() / 16, audio_s);
}

// Whether the server's arguments name a language (-l/--language).
bool NamesLanguage(const std::vector<std::string>& args) {
  return std::find(args.begin(), args.end(), "-l") != args.end() ||
         std::find(args.begin(), args.end(), "--language") != args.end();
}

}  // namespace

absl::StatusOr<RequestOptions> ParseRequest(Api api, const Form& form, const std::vector<std::string>& default_args) {
  ErrorCapture quiet;  // whisper_lang_id logs unknown codes; the reply names them instead
  RequestOptions o;
  o.task_translate = api == Api::kOpenAiTranslation;
  if (absl::Status st = CheckRepeatedFields(form); !st.ok()) return st;
  std::vector<std::string> args = default_args;
  if (absl::Status st = AppendFlagFields(form, &args); !st.ok()) return st;
  std::vector<const char*> argv = {"server"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  absl::StatusOr<CliParams> parsed = ParseCliParams(static_cast<int>(argv.size()), argv.data());
  if (!parsed.ok()) return parsed.status();
  o.decode = *std::move(parsed);
  if (absl::Status st = ApplyBoolFields(form, &o); !st.ok()) return st;
  if (o.task_translate) o.decode.translate = true;
  if (o.decode.detect_language) o.decode.language = "auto";  // whisper-server: detect, then transcribe
  // OpenAI's audio API detects the language when a request names none (its `language` field is
  // optional), unless the operator started the server with -l; /inference keeps the server's
  // language (default en), as whisper-server does.
  if (api != Api::kWhisperServer && form.count("language") == 0 && !NamesLanguage(default_args)) {
    o.decode.language = "auto";
  }
  o.decode.detect_language = false;
  if (absl::Status st = ApplyResponseFields(api, form, &o); !st.ok()) return st;
  return o;
}

namespace {

// The upload `file` decoded into `audio` (16 kHz mono; `stereo` too with `diarize`) with its
// `report`, or the error reply: 400 for audio that cannot be decoded or is under 100 ms, 413 for
// audio over `max_audio_seconds` (from its header, before decoding) or too large for memory.
std::optional<Reply> DecodeUpload(Api api, const FormValue& file, const std::string& name, bool diarize,
                                  int max_audio_seconds, std::vector<float>* audio,
                                  std::vector<std::vector<float>>* stereo, AudioReport* report) {
  AudioOptions options;
  options.report = report;
  options.max_seconds = max_audio_seconds;
  if (diarize) options.stereo = stereo;
  absl::StatusOr<std::vector<float>> decoded =
      LoadAudio16kMonoFromMemory(file.content.data(), file.content.size(), name, options);
  if (!decoded.ok()) {
    std::string message(decoded.status().message());
    // audio.h's message for the limit ends "expected at most N s": name the flag that set it.
    if (decoded.status().code() == absl::StatusCode::kResourceExhausted &&
        message.find("): expected at most ") != std::string::npos) {
      message += " (the server's --max-audio-seconds)";
    }
    const int status = decoded.status().code() == absl::StatusCode::kResourceExhausted ? 413 : 400;
    return ErrorReply(api, status, message, "file");
  }
  *audio = *std::move(decoded);
  if (audio->size() < 1600) {  // whisper.cpp rejects input under 100 ms, as the CLI does
    return ErrorReply(api, 400, absl::StrCat("'", name, "': ", audio->size(), " samples is shorter than 100 ms"), "file");
  }
  if (audio->size() > static_cast<size_t>(INT32_MAX)) {
    return ErrorReply(api, 413, absl::StrCat("'", name, "': ", audio->size(), " samples is more than whisper_full takes"), "file");
  }
  return std::nullopt;
}

}  // namespace

Reply HandleTranscription(Api api, const Form& form, const std::vector<std::string>& default_args,
                          LoadedModel& model, int max_audio_seconds) {
  absl::StatusOr<RequestOptions> parsed = ParseRequest(api, form, default_args);
  if (!parsed.ok()) {
    // OpenAI's error names the field in `param`: FieldError's messages start "field 'NAME' ".
    const std::string m(parsed.status().message());
    const size_t end = m.rfind("field '", 0) == 0 ? m.find('\'', 7) : std::string::npos;
    return ErrorReply(api, 400, m, end == std::string::npos ? "" : m.substr(7, end - 7));
  }
  RequestOptions& o = *parsed;
  const auto file = form.find("file");
  if (file == form.end()) return ErrorReply(api, 400, "no 'file' field in the request", "file");
  if (form.count("file") > 1) return ErrorReply(api, 400, "field 'file' is given more than once; expected one audio file", "file");
  const std::string name = DisplayName(file->second);
  whisper_context* ctx = model.ctx();
  if (o.decode.audio_ctx > whisper_n_audio_ctx(ctx)) {
    return ErrorReply(api, 400, absl::StrCat("field 'audio_ctx' ", o.decode.audio_ctx, " is larger than the model's n_audio_ctx ",
                                             whisper_n_audio_ctx(ctx)));
  }
  if (o.granularity_word && !model.words_available()) {
    return ErrorReply(api, 400,
                      absl::StrCat("field 'timestamp_granularities[]' 'word': the model's shape matches no released "
                                   "Whisper checkpoint, so it has no alignment heads; start the server with -dtw PRESET"),
                      "timestamp_granularities[]");
  }
  // Admission before the upload is decoded: a busy server answers 503 without decoding it.
  absl::StatusOr<LoadedModel::Lease> lease = model.Acquire();
  if (!lease.ok()) return ErrorReply(api, 503, std::string(lease.status().message()));
  whisper_state* state = lease->state();

  ErrorCapture errors;
  // diarize: channels 0 and 1 too, as whisper-server 1.8.5 decodes the upload as stereo
  // (read_audio_data with stereo; a mono file gives its channel twice, so every label is "?").
  std::vector<float> audio;
  std::vector<std::vector<float>> stereo;
  AudioReport report;
  if (std::optional<Reply> bad = DecodeUpload(api, file->second, name, o.decode.diarize, max_audio_seconds, &audio,
                                              &stereo, &report)) {
    return *bad;
  }
  // faster-whisper's rule for English-only models, as the CLI and the Python package apply it.
  const LanguageDecision language =
      DecideLanguage(whisper_is_multilingual(ctx) != 0, o.decode.language, o.decode.translate);
  o.decode.language = language.language;
  o.decode.translate = language.translate;
  o.task_translate = o.task_translate && language.translate;
  std::vector<std::string> warnings;
  for (const LanguageDecision::Note& note : language.notes) {
    if (note.level == LanguageDecision::Level::kWarning) warnings.push_back(note.message);
  }
  for (std::string w : {TruncationWarning(report, name), OffsetWarning(form, o.decode, audio.size())}) {
    if (!w.empty()) warnings.push_back(std::move(w));
  }
  whisper_ggml_state_set_dtw(state, model.dtw_every_request() || o.granularity_word ? 1 : 0);
  CliParams& d = o.decode;
  whisper_full_params w = ToWhisperFullParams(d);
  w.print_progress = false;
  w.print_timestamps = false;
  w.token_timestamps = o.token_timestamps || d.max_len > 0;
  const int rc = whisper_full_with_state(ctx, state, w, audio.data(), static_cast<int>(audio.size()));
  if (rc != 0) {
    return ErrorReply(api, 500, errors.FirstOr(absl::StrCat("'", name, "': transcription failed (", rc, ")")));
  }
  std::vector<TranscriptSegment> segments = CollectSegments(ctx, state);
  RepairSegmentTexts(&segments);
  if (o.decode.diarize) LabelSpeakers(stereo, &segments);
  const double duration_s = static_cast<double>(audio.size()) / kSampleRate;
  Reply reply = api == Api::kWhisperServer ? FormatWhisperServer(o, segments, ctx, state, duration_s)
                                           : FormatOpenAi(o, segments, ctx, state, duration_s);
  AddWarnings(std::move(warnings), &reply);
  return reply;
}

}  // namespace whisper::server
