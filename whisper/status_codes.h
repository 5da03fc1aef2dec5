// The failing kind of a whisper library error, carried as data on absl::Status (a payload under
// kErrorKindUrl), and the one place that turns it into whisper.cpp's return values.
//
// The library's functions return absl::Status; where the failure has a meaning for a caller of
// the C API (whisper.cpp 1.8.5's whisper_full_with_state returns -2 .. -9 by the step that
// failed: src/whisper.cpp), the code that knows the step attaches the kind with WithKind. The
// message is never parsed: a message that happens to say "encoder" is not an encoder failure.
#ifndef GGML_WHISPER_WHISPER_STATUS_CODES_H_
#define GGML_WHISPER_WHISPER_STATUS_CODES_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace whisper {

// What failed, as whisper.cpp's whisper_full_with_state tells it apart. kNone: no kind attached.
enum class ErrorKind : int {
  kNone = 0,
  kSetup = 8,           // the call's setup before the first window: arguments, VAD, buffers (-1)
  kMel = 1,             // computing the log-mel spectrogram (whisper.cpp -2)
  kLanguage = 2,        // language auto-detection (-3)
  kTooManyDecoders = 3, // more beams / best-of candidates than WHISPER_MAX_DECODERS (-4)
  kAudioCtx = 4,        // audio_ctx out of range (-5)
  kEncode = 5,          // the encoder pass, or an abort before it (-6)
  kPromptDecode = 6,    // the decoder pass over a window's prompt, or an abort before it (-8)
  kTokenDecode = 7,     // a decoder step after the prompt, or an abort before it (-9)
};

// The payload's type URL (absl::Status::SetPayload); its value is the kind's decimal number.
inline constexpr absl::string_view kErrorKindUrl = "type.googleapis.com/ggml_whisper.ErrorKind";

// `st` with `kind` attached (replacing any kind it had). An OK status stays OK (no payload).
absl::Status WithKind(absl::Status st, ErrorKind kind);

// The kind attached to `st` by WithKind; kNone for OK, for a status without one, and for a
// payload that is not a kind's number.
ErrorKind KindOf(const absl::Status& st);

// whisper_full_with_state's return value for `st` (whisper.cpp 1.8.5's codes): 0 for OK; by kind
// -1 (kSetup), -2 (kMel), -3, -4, -5, -6 (kEncode), -8 (kPromptDecode), -9 (kTokenDecode); without a kind -1
// for kInvalidArgument and -8 for any other failure (a failure inside the decoding loop).
int WhisperFullReturnCode(const absl::Status& st);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_STATUS_CODES_H_
