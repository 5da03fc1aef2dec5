// WithKind / KindOf and whisper_full_with_state's return codes. The expected codes are
// whisper.cpp 1.8.5's (src/whisper.cpp, whisper_full_with_state: -2 log-mel, -3 language
// detection, -4 too many decoders, -5 audio_ctx, -6 whisper_encode_internal, -8 the prompt's
// whisper_decode_internal, -9 a later step's).
#include "whisper/status_codes.h"

#include "absl/strings/cord.h"
#include "gtest/gtest.h"

namespace whisper {
namespace {

TEST(StatusCodesTest, KindIsCarriedAsDataAndTheMessageIsUnchanged) {
  const absl::Status st = WithKind(absl::InternalError("Encode: placing the graph"), ErrorKind::kEncode);
  EXPECT_EQ(KindOf(st), ErrorKind::kEncode);
  EXPECT_EQ(st.message(), "Encode: placing the graph");
  EXPECT_EQ(st.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(KindOf(WithKind(st, ErrorKind::kTokenDecode)), ErrorKind::kTokenDecode);  // replaced
  EXPECT_EQ(KindOf(WithKind(st, ErrorKind::kNone)), ErrorKind::kNone);                // erased
  EXPECT_TRUE(WithKind(absl::OkStatus(), ErrorKind::kEncode).ok());
  EXPECT_EQ(KindOf(absl::OkStatus()), ErrorKind::kNone);
  EXPECT_EQ(KindOf(absl::CancelledError("x")), ErrorKind::kNone);
  absl::Status junk = absl::InternalError("x");
  junk.SetPayload(kErrorKindUrl, absl::Cord("99"));
  EXPECT_EQ(KindOf(junk), ErrorKind::kNone);
}

TEST(StatusCodesTest, EncoderFailureIsMinusSixWhateverItsMessage) {
  EXPECT_EQ(WhisperFullReturnCode(WithKind(absl::CancelledError("aborted by abort_callback before the encoder"),
                                           ErrorKind::kEncode)),
            -6);
  EXPECT_EQ(WhisperFullReturnCode(WithKind(absl::ResourceExhaustedError("out of memory"), ErrorKind::kEncode)), -6);
}

TEST(StatusCodesTest, TheWordEncoderInAnotherFailureIsNotMinusSix) {
  EXPECT_EQ(WhisperFullReturnCode(WithKind(absl::InternalError("cross-attention: encoder output not computed"),
                                           ErrorKind::kPromptDecode)),
            -8);
  EXPECT_EQ(WhisperFullReturnCode(absl::InvalidArgumentError("initial prompt names the encoder")), -1);
  EXPECT_EQ(WhisperFullReturnCode(absl::InternalError("word timestamps: encoder frames 0")), -8);
}

TEST(StatusCodesTest, EveryKindHasWhisperCppsCode) {
  const absl::Status e = absl::InternalError("failed");
  EXPECT_EQ(WhisperFullReturnCode(absl::OkStatus()), 0);
  EXPECT_EQ(WhisperFullReturnCode(WithKind(e, ErrorKind::kSetup)), -1);
  EXPECT_EQ(WhisperFullReturnCode(WithKind(e, ErrorKind::kMel)), -2);
  EXPECT_EQ(WhisperFullReturnCode(WithKind(e, ErrorKind::kLanguage)), -3);
  EXPECT_EQ(WhisperFullReturnCode(WithKind(e, ErrorKind::kTooManyDecoders)), -4);
  EXPECT_EQ(WhisperFullReturnCode(WithKind(e, ErrorKind::kAudioCtx)), -5);
  EXPECT_EQ(WhisperFullReturnCode(WithKind(e, ErrorKind::kPromptDecode)), -8);
  EXPECT_EQ(WhisperFullReturnCode(WithKind(e, ErrorKind::kTokenDecode)), -9);
  EXPECT_EQ(WhisperFullReturnCode(absl::InvalidArgumentError("bad")), -1);
  EXPECT_EQ(WhisperFullReturnCode(e), -8);
}

}  // namespace
}  // namespace whisper
