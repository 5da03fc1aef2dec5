#include "whisper/status_codes.h"

#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"

namespace whisper {

absl::Status WithKind(absl::Status st, ErrorKind kind) {
  if (st.ok()) return st;
  if (kind == ErrorKind::kNone) {
    st.ErasePayload(kErrorKindUrl);
  } else {
    st.SetPayload(kErrorKindUrl, absl::Cord(std::to_string(static_cast<int>(kind))));
  }
  return st;
}

ErrorKind KindOf(const absl::Status& st) {
  if (st.ok()) return ErrorKind::kNone;
  const absl::optional<absl::Cord> p = st.GetPayload(kErrorKindUrl);
  int v = 0;
  if (!p.has_value() || !absl::SimpleAtoi(std::string(*p), &v)) return ErrorKind::kNone;
  if (v < static_cast<int>(ErrorKind::kNone) || v > static_cast<int>(ErrorKind::kSetup)) return ErrorKind::kNone;
  return static_cast<ErrorKind>(v);
}

int WhisperFullReturnCode(const absl::Status& st) {
  if (st.ok()) return 0;
  switch (KindOf(st)) {
    case ErrorKind::kSetup: return -1;
    case ErrorKind::kMel: return -2;
    case ErrorKind::kLanguage: return -3;
    case ErrorKind::kTooManyDecoders: return -4;
    case ErrorKind::kAudioCtx: return -5;
    case ErrorKind::kEncode: return -6;
    case ErrorKind::kPromptDecode: return -8;
    case ErrorKind::kTokenDecode: return -9;
    case ErrorKind::kNone: break;
  }
  return st.code() == absl::StatusCode::kInvalidArgument ? -1 : -8;
}

}  // namespace whisper
