#include "whisper/model_kind.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testdata/paths.h"

namespace whisper {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const uint8_t* U8(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

ModelFileKind Sniff(const std::string& bytes) { return SniffModelFile(U8(bytes), bytes.size()); }

absl::Status Check(const std::string& bytes, ModelFileKind expected,
                   ModelFileDetail detail = ModelFileDetail::kKindOnly, const std::string& file = "f.bin") {
  return CheckModelFileKind(file, U8(bytes), bytes.size(), expected, detail);
}

std::string Le32(uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }
std::string Le16(uint16_t v) { return std::string(reinterpret_cast<const char*>(&v), 2); }
std::string Le64(uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); }

// GGUF (ggml/docs/gguf.md): "GGUF", uint32 version 3, uint64 tensor count, uint64 metadata count.
std::string GgufHeader() { return "GGUF" + Le32(3) + Le64(0) + Le64(0); }

// CTranslate2 model.bin (ctranslate2_whisper_facts.md): uint32 binary version 6, uint16 length
// with the NUL, "WhisperSpec\0", uint32 spec revision 3, uint32 variable count.
std::string Ct2Header(uint32_t version = 6, const std::string& spec = "WhisperSpec") {
  return Le32(version) + Le16(static_cast<uint16_t>(spec.size() + 1)) + spec + std::string(1, '\0') + Le32(3) +
         Le32(148);
}

// The first `n` bytes of a file.
std::string Head(const std::string& path, size_t n = kModelSniffBytes) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << testdata::MissingModelHint(path);
  std::string s(n, '\0');
  f.read(&s[0], static_cast<std::streamsize>(n));
  s.resize(static_cast<size_t>(f.gcount()));
  return s;
}

TEST(SniffModelFileTest, HandBuiltHeaders) {
  EXPECT_EQ(Sniff(""), ModelFileKind::kEmpty);
  EXPECT_EQ(Sniff("lmg"), ModelFileKind::kTooShort);
  EXPECT_EQ(Sniff(GgufHeader()), ModelFileKind::kGguf);
  EXPECT_EQ(Sniff("GGUF"), ModelFileKind::kGguf);
  EXPECT_EQ(Sniff(Ct2Header()), ModelFileKind::kCTranslate2);
  EXPECT_EQ(Sniff(Ct2Header(5, "TransformerSpec")), ModelFileKind::kCTranslate2);
  // Silero: magic, int32 10, "silero-16k" (tools/convert/convert_vad.py).
  EXPECT_EQ(Sniff(Le32(0x67676d6c) + Le32(10) + "silero-16k" + Le32(6)), ModelFileKind::kSileroVad);
  // Whisper: magic, n_vocab 51864, ... (model_file.h).
  EXPECT_EQ(Sniff(Le32(0x67676d6c) + Le32(51864) + Le32(1500) + Le32(384)), ModelFileKind::kWhisperGgml);
  EXPECT_EQ(Sniff("lmgg"), ModelFileKind::kWhisperGgml);  // the magic alone: the parser says "truncated"
  EXPECT_EQ(Sniff("RIFF" + Le32(36) + "WAVE"), ModelFileKind::kUnknown);
  // Near misses of the CTranslate2 layout.
  EXPECT_EQ(Sniff(Ct2Header(0)), ModelFileKind::kUnknown);             // version 0
  EXPECT_EQ(Sniff(Ct2Header(17)), ModelFileKind::kUnknown);            // version past 16
  EXPECT_EQ(Sniff(Ct2Header(6, "WhisperSpek")), ModelFileKind::kUnknown);  // not "...Spec"
  std::string no_nul = Ct2Header();
  no_nul[6 + 11] = 'X';
  EXPECT_EQ(Sniff(no_nul), ModelFileKind::kUnknown);
}

TEST(SniffModelFileTest, RealFiles) {
  EXPECT_EQ(Sniff(Head(testdata::ModelPath("ggml-tiny.en.bin"))), ModelFileKind::kWhisperGgml);
  EXPECT_EQ(Sniff(Head(testdata::ModelPath("ggml-silero-v6.bin"))), ModelFileKind::kSileroVad);
  EXPECT_EQ(Sniff(Head(testdata::ModelPath("faster-whisper-tiny.en/model.bin"))), ModelFileKind::kCTranslate2);
}

TEST(CheckModelFileKindTest, RightKindAndTooShortAreOk) {
  EXPECT_TRUE(Check(Le32(0x67676d6c) + Le32(51864), ModelFileKind::kWhisperGgml).ok());
  EXPECT_TRUE(Check(Le32(0x67676d6c) + Le32(10) + "silero-16k", ModelFileKind::kSileroVad).ok());
  EXPECT_TRUE(Check("xy", ModelFileKind::kWhisperGgml).ok());
}

TEST(CheckModelFileKindTest, EmptyFile) {
  const absl::Status s = Check("", ModelFileKind::kWhisperGgml);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("f.bin: empty file (0 bytes), expected a whisper.cpp ggml Whisper model"));
  EXPECT_THAT(Check("", ModelFileKind::kSileroVad).message(),
              HasSubstr("f.bin: empty file (0 bytes), expected a Silero VAD model"));
}

TEST(CheckModelFileKindTest, VadAsWhisperAndWhisperAsVad) {
  const std::string vad = Head(testdata::ModelPath("ggml-silero-v6.bin"));
  const absl::Status a = Check(vad, ModelFileKind::kWhisperGgml);
  EXPECT_EQ(a.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(a.message(), HasSubstr("f.bin: a Silero VAD model"));
  EXPECT_THAT(a.message(), HasSubstr("pass it as -vm with --vad"));
  EXPECT_THAT(a.message(), HasSubstr("expected a whisper.cpp ggml Whisper model"));
  const absl::Status b = Check(Head(testdata::ModelPath("ggml-tiny.en.bin")), ModelFileKind::kSileroVad);
  EXPECT_EQ(b.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(b.message(), HasSubstr("f.bin: a whisper.cpp ggml Whisper model, not a Silero VAD model: pass it as -m"));
  EXPECT_THAT(b.message(), HasSubstr("expected a Silero VAD model"));
}

TEST(CheckModelFileKindTest, Gguf) {
  for (ModelFileKind expected : {ModelFileKind::kWhisperGgml, ModelFileKind::kSileroVad}) {
    const absl::Status s = Check(GgufHeader(), expected);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("f.bin: a GGUF file"));
    EXPECT_THAT(s.message(), HasSubstr("which this loader does not read"));
    EXPECT_THAT(s.message(), HasSubstr("magic 0x67676d6c \"ggml\""));
  }
}

TEST(CheckModelFileKindTest, CTranslate2GivesTheConvertCommand) {
  const absl::Status kind_only = Check(Ct2Header(), ModelFileKind::kWhisperGgml, ModelFileDetail::kKindOnly,
                                       "models/faster-whisper-base/model.bin");
  EXPECT_THAT(kind_only.message(), HasSubstr("models/faster-whisper-base/model.bin: a CTranslate2 model"));
  EXPECT_THAT(kind_only.message(), HasSubstr("bazel run -c opt //tools:convert -- --model_dir=/ABS/CT2_DIR"));
  // The file as given is the only path a kKindOnly message shows.
  EXPECT_THAT(kind_only.message(), Not(HasSubstr(std::filesystem::current_path().string())));

  const absl::Status full = Check(Ct2Header(), ModelFileKind::kWhisperGgml, ModelFileDetail::kWithBytes,
                                  "/m/faster-whisper-base/model.bin");
  EXPECT_THAT(full.message(), HasSubstr("--model_dir=/m/faster-whisper-base --mel_filters=/m/mel_filters.npz "
                                        "--out=/m/ggml-base.bin"));
  const std::string rel = std::filesystem::current_path().string() + "/ct2";
  EXPECT_THAT(Check(Ct2Header(), ModelFileKind::kWhisperGgml, ModelFileDetail::kWithBytes, "ct2/model.bin").message(),
              HasSubstr("--model_dir=" + rel + " "));
  // As a VAD model: no conversion offered (//tools:convert makes Whisper models).
  const absl::Status vad = Check(Ct2Header(), ModelFileKind::kSileroVad);
  EXPECT_THAT(vad.message(), HasSubstr("a CTranslate2 model"));
  EXPECT_THAT(vad.message(), Not(HasSubstr("//tools:convert")));
}

TEST(CheckModelFileKindTest, UnknownMagicShowsBytesOnlyWhenAsked) {
  const std::string wav = "RIFF" + Le32(36) + "WAVE";
  const absl::Status full = Check(wav, ModelFileKind::kWhisperGgml, ModelFileDetail::kWithBytes);
  EXPECT_EQ(full.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(full.message(), HasSubstr("f.bin: bad magic 0x46464952 (\"RIFF\") at offset 0, expected 0x67676d6c"));
  const std::string elf = "\x7f" "ELF" + Le32(0x00010102);
  EXPECT_THAT(Check(elf, ModelFileKind::kWhisperGgml, ModelFileDetail::kWithBytes).message(),
              HasSubstr("bad magic 0x464c457f at offset 0"));  // not printable: hex only
  // /etc/passwd's "root": a server's message says what was expected, never what was read.
  const absl::Status kind_only = Check("root:x:0:0:root:/root:/bin/bash\n", ModelFileKind::kWhisperGgml);
  EXPECT_THAT(kind_only.message(), HasSubstr("f.bin: bad magic at offset 0, expected 0x67676d6c"));
  EXPECT_THAT(kind_only.message(), Not(HasSubstr("root")));
  EXPECT_THAT(kind_only.message(), Not(HasSubstr("746f6f72")));
}

TEST(CheckModelFileKindAtTest, ReadsTheHeadOrLeavesErrorsToTheLoader) {
  const std::string dir = ::testing::TempDir();
  const std::string gguf = dir + "/x.gguf";
  std::ofstream(gguf, std::ios::binary) << GgufHeader() << std::string(1000, 'z');
  EXPECT_THAT(CheckModelFileKindAt(gguf, ModelFileKind::kWhisperGgml, ModelFileDetail::kKindOnly).message(),
              HasSubstr(gguf + ": a GGUF file"));
  const std::string empty = dir + "/empty.bin";
  std::ofstream(empty, std::ios::binary).flush();
  EXPECT_EQ(CheckModelFileKindAt(empty, ModelFileKind::kSileroVad, ModelFileDetail::kKindOnly).code(),
            absl::StatusCode::kDataLoss);
  EXPECT_TRUE(CheckModelFileKindAt(dir + "/missing.bin", ModelFileKind::kWhisperGgml, ModelFileDetail::kKindOnly).ok());
  EXPECT_TRUE(CheckModelFileKindAt(dir, ModelFileKind::kWhisperGgml, ModelFileDetail::kKindOnly).ok());
  EXPECT_TRUE(CheckModelFileKindAt(testdata::ModelPath("ggml-tiny.en.bin"), ModelFileKind::kWhisperGgml,
                                   ModelFileDetail::kWithBytes)
                  .ok());
}

}  // namespace
}  // namespace whisper
