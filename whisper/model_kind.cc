#include "whisper/model_kind.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace whisper {
namespace {

constexpr uint32_t kGgmlMagic = 0x67676d6c;  // "ggml" as a little-endian uint32 (model_file.h)
constexpr uint32_t kMaxCt2Version = 16;      // CTranslate2 writes 6; older files say less

uint32_t U32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);  // little-endian hosts only, as every reader here
  return v;
}

bool Printable(uint8_t c) { return c >= 0x20 && c < 0x7f; }

// uint32 version, uint16 length with the NUL, printable name ending "Spec", NUL.
bool LooksLikeCTranslate2(const uint8_t* data, size_t n) {
  if (n < 6) return false;
  const uint32_t version = U32(data);
  uint16_t len;
  std::memcpy(&len, data + 4, 2);
  if (version < 1 || version > kMaxCt2Version || len < 5 || 6 + static_cast<size_t>(len) > n) return false;
  const uint8_t* name = data + 6;
  for (int i = 0; i + 1 < len; ++i) {
    if (!Printable(name[i])) return false;
  }
  return name[len - 1] == 0 && std::memcmp(name + len - 5, "Spec", 4) == 0;
}

const char* Expected(ModelFileKind expected) {
  return expected == ModelFileKind::kSileroVad
             ? "a Silero VAD model (legacy ggml format: magic 0x67676d6c \"ggml\", model type \"silero-16k\"; "
               "tools/get_vad_model.sh makes models/ggml-silero-v6.bin)"
             : "a whisper.cpp ggml Whisper model (legacy format, magic 0x67676d6c \"ggml\"; tools/get_model.sh "
               "makes models/ggml-tiny.en.bin, and whisper.cpp's ggml-*.bin files load as they are)";
}

// The //tools:convert command for the CTranslate2 directory holding `file`: absolute paths
// derived from it with kWithBytes (the mel filters next to that directory, where
// tools/get_model.sh puts them), placeholders otherwise.
std::string ConvertCommand(absl::string_view file, ModelFileDetail detail) {
  std::string dir = "/ABS/CT2_DIR", mel = "/ABS/mel_filters.npz", out = "/ABS/ggml-model.bin";
  if (detail == ModelFileDetail::kWithBytes) {
    std::error_code ec;
    const std::filesystem::path abs = std::filesystem::absolute(std::string(file), ec).lexically_normal();
    if (!ec && abs.has_parent_path()) {
      const std::filesystem::path d = abs.parent_path(), parent = d.parent_path();
      std::string base = d.filename().string();
      if (base.rfind("faster-whisper-", 0) == 0) base = base.substr(15);
      dir = d.string();
      mel = (parent / "mel_filters.npz").string();
      out = (parent / ("ggml-" + (base.empty() ? std::string("model") : base) + ".bin")).string();
    }
  }
  return absl::StrCat("bazel run -c opt //tools:convert -- --model_dir=", dir, " --mel_filters=", mel,
                      " --out=", out, " (absolute paths; tools/get_model.sh fetches mel_filters.npz)");
}

}  // namespace

ModelFileKind SniffModelFile(const uint8_t* data, size_t size) {
  if (size == 0) return ModelFileKind::kEmpty;
  if (size < 4) return ModelFileKind::kTooShort;
  const size_t n = size < kModelSniffBytes ? size : kModelSniffBytes;
  if (std::memcmp(data, "GGUF", 4) == 0) return ModelFileKind::kGguf;
  if (U32(data) == kGgmlMagic) {
    // Silero: int32 type length, then the type. A Whisper file has n_vocab (>= 51864) there.
    if (n >= 14) {
      const uint32_t len = U32(data + 4);
      if (len >= 6 && len <= 64 && std::memcmp(data + 8, "silero", 6) == 0) return ModelFileKind::kSileroVad;
    }
    return ModelFileKind::kWhisperGgml;
  }
  if (LooksLikeCTranslate2(data, n)) return ModelFileKind::kCTranslate2;
  return ModelFileKind::kUnknown;
}

absl::Status CheckModelFileKind(absl::string_view file, const uint8_t* data, size_t size, ModelFileKind expected,
                                ModelFileDetail detail) {
  const ModelFileKind kind = SniffModelFile(data, size);
  if (kind == expected || kind == ModelFileKind::kTooShort) return absl::OkStatus();
  const bool want_vad = expected == ModelFileKind::kSileroVad;
  switch (kind) {
    case ModelFileKind::kEmpty:
      return absl::DataLossError(absl::StrCat(file, ": empty file (0 bytes), expected ", Expected(expected)));
    case ModelFileKind::kSileroVad:
      return absl::InvalidArgumentError(absl::StrCat(
          file, ": a Silero VAD model (ggml, model type \"silero...\"), not a Whisper model: pass it as -vm "
                "with --vad (whisper_full_params.vad_model_path); expected ",
          Expected(expected)));
    case ModelFileKind::kWhisperGgml:
      return absl::InvalidArgumentError(absl::StrCat(
          file, ": a whisper.cpp ggml Whisper model, not a Silero VAD model: pass it as -m; expected ",
          Expected(expected)));
    case ModelFileKind::kGguf:
      return absl::InvalidArgumentError(absl::StrCat(
          file, ": a GGUF file (magic \"GGUF\", ggml's newer format), which this loader does not read (nor does "
                "whisper.cpp 1.8.5): expected ",
          Expected(expected)));
    case ModelFileKind::kCTranslate2:
      return absl::InvalidArgumentError(absl::StrCat(
          file, ": a CTranslate2 model (faster-whisper's model.bin), which this loader does not read: expected ",
          Expected(expected),
          want_vad ? std::string()
                   : absl::StrCat("; pass its directory instead (the CLI's -m and the Python WhisperModel convert a "
                                  "CTranslate2 folder in memory), or convert it with: ",
                                  ConvertCommand(file, detail))));
    default:
      break;
  }
  std::string read;
  if (detail == ModelFileDetail::kWithBytes) {
    read = absl::StrFormat(" 0x%08x", U32(data));
    if (Printable(data[0]) && Printable(data[1]) && Printable(data[2]) && Printable(data[3])) {
      absl::StrAppend(&read, " (\"", absl::string_view(reinterpret_cast<const char*>(data), 4), "\")");
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      file, ": bad magic", read, " at offset 0, expected 0x67676d6c (\"ggml\"): not ", Expected(expected),
      ", nor a GGUF file or a CTranslate2 model"));
}

absl::Status CheckModelFileKindAt(const std::string& path, ModelFileKind expected, ModelFileDetail detail) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return absl::OkStatus();
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return absl::OkStatus();
  uint8_t head[kModelSniffBytes];
  const size_t n = std::fread(head, 1, sizeof(head), f);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return absl::OkStatus();
  return CheckModelFileKind(path, head, n, expected, detail);
}

}  // namespace whisper
