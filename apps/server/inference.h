// The server's transcription requests, independent of the HTTP library: a parsed form in, an HTTP
// status, content type and body out. Two request shapes are served:
//
//  - whisper-server's `POST /inference` (whisper.cpp 1.8.5 examples/server/server.cpp): form
//    fields file, offset_t, offset_n, duration, max_context, max_len, best_of, beam_size,
//    audio_ctx, word_thold, entropy_thold, logprob_thold, no_speech_thold, temperature,
//    temperature_inc, language, prompt, translate, no_timestamps, token_timestamps,
//    split_on_word, suppress_nst (or suppress_non_speech), carry_initial_prompt,
//    detect_language, no_language_probabilities, debug_mode, diarize, tinydiarize,
//    response_format = json | text | srt | vtt | verbose_json; errors are {"error": "<message>"}.
//    diarize (or the server's -di) decodes the file's first two channels too and labels each
//    segment with the louder one, as whisper-server 1.8.5 does (EstimateSpeaker in
//    apps/common/output.h): "(speaker 0)" before its text in text, json's "text", srt and
//    verbose_json's "text", "<v Speaker0>" in vtt, "speaker": "0" in each verbose_json segment;
//    "1" or "?" likewise. tinydiarize (or -tdrz) sets whisper_full_params.tdrz_enable and, as in
//    whisper-server 1.8.5, shows in no reply (speaker_turn_next is not written).
//  - OpenAI's `POST /v1/audio/transcriptions` and `/v1/audio/translations` (the API reference of
//    platform.openai.com, "Create transcription"): file, model (accepted, any value), language,
//    prompt, response_format = json | text | srt | verbose_json | vtt, temperature,
//    timestamp_granularities[] = segment and/or word; replies in OpenAI's JSON shapes
//    (Transcription {"text"}, TranscriptionVerbose {"task", "language", "duration", "text",
//    "segments" and/or "words": [{"word", "start", "end"}]}: faster-whisper's word times), and
//    errors as {"error": {"message", "type", "param", "code"}}, so the `openai` SDK reads them.
//    diarize and tinydiarize (not OpenAI's fields) act as on /inference: "(speaker N)" before each
//    segment's text in text, json, srt, verbose_json's "text", "<v SpeakerN>" in vtt, and
//    "speaker" in verbose_json's segments.
//
// Form values are checked with the CLI's ranges (apps/common/cli_params.h): a bad value is a 400 that
// names the field, the value and what was expected. Audio is decoded by the CLI's code
// (LoadAudio16kMonoFromMemory), so a file the CLI reads the server reads, with the same errors.
#ifndef GGML_WHISPER_APPS_SERVER_INFERENCE_H_
#define GGML_WHISPER_APPS_SERVER_INFERENCE_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "apps/common/cli_params.h"
#include "apps/server/state_pool.h"

namespace whisper::server {

enum class Api {
  kWhisperServer,        // POST /inference
  kOpenAiTranscription,  // POST /v1/audio/transcriptions
  kOpenAiTranslation,    // POST /v1/audio/translations
};

// One form value: a multipart/form-data part (with its filename when it is a file) or a
// urlencoded parameter.
struct FormValue {
  std::string content;
  std::string filename;
  bool is_file = false;
};
// Field name -> values in request order (a field may repeat: timestamp_granularities[]).
using Form = std::multimap<std::string, FormValue>;

struct Reply {
  int status = 200;
  std::string content_type;
  std::string body;
  // What the server changed in the request (apps/common/request_rules.h: another language or a
  // translation asked of an English-only model), one sentence each. Sent as HTTP "Warning: 299"
  // headers and, in JSON replies, as a "warnings" array.
  std::vector<std::string> warnings;
};

// What one request asks for.
struct RequestOptions {
  CliParams decode;                     // the server's defaults with the form's values applied
  std::string response_format = "json";
  bool token_timestamps = true;         // whisper-server's default; words in verbose_json
  bool language_probabilities = true;   // verbose_json of /inference on a multilingual model
  bool task_translate = false;          // /v1/audio/translations
  // OpenAI's timestamp_granularities[] (verbose_json only): "segments" (the default) and "words".
  // Words turn DTW on for the request (apps/server/state_pool.h).
  bool granularity_segment = false;
  bool granularity_word = false;
};

// Applies `form` to the server's decoding arguments `defaults_args` (whisper-cli flags, as the
// server was started with; see ServerParams) and checks every value.
// Errors: InvalidArgument naming the field: a value that is not a number or boolean where one is
// expected, out of the CLI's range, an unknown language or response_format, a timestamp granularity other than segment or word or with a response_format
// other than verbose_json, or a field given twice. vad = true uses the server's -vm model.
absl::StatusOr<RequestOptions> ParseRequest(Api api, const Form& form, const std::vector<std::string>& default_args);

// Serves one transcription request: parses and checks the form's fields (400 before anything
// else), leases a state of `model` (503 at once when the states and queue are full, else waits),
// then decodes the "file" field: admission comes first, so a busy server never decodes an upload
// and the decoded audio in memory is bounded by the states. Audio longer than
// `max_audio_seconds` (0: no limit; the server's --max-audio-seconds) is refused from its header's
// frame count before decoding (413 naming the duration and the limit). Then
// whisper_full_with_state and the reply's format. On an English-only model, a language other than
// English or a translation is done as an English transcription with faster-whisper's warning in
// Reply::warnings (request_rules.h DecideLanguage). Statuses: 200; 400 for bad fields, a missing
// file field, unreadable, empty or too short (< 100 ms) audio; 413 for audio over the limit or
// that does not fit in memory; 503 when the model's states and queue are full; 500 when the
// transcription itself fails (the library's message).
Reply HandleTranscription(Api api, const Form& form, const std::vector<std::string>& default_args,
                          LoadedModel& model, int max_audio_seconds = 0);

// An error reply in the shape of `api`: {"error": message} for whisper-server's routes,
// {"error": {"message", "type", "param", "code"}} for OpenAI's; type is "invalid_request_error"
// for 4xx and "server_error" for 5xx.
Reply ErrorReply(Api api, int status, const std::string& message, const std::string& param = "");

}  // namespace whisper::server

#endif  // GGML_WHISPER_APPS_SERVER_INFERENCE_H_
