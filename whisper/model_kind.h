// What kind of model file a file is, from its first bytes, and the error for the wrong kind: the
// one classification behind the Whisper model loader (model_file.h), the Silero VAD loader
// (silero_vad.h), the CLI's early check of -m and -vm, and the server's /load.
//
// Kinds and the bytes that tell them apart (little-endian):
//   whisper.cpp ggml Whisper model: uint32 magic 0x67676d6c ("lmgg" in the file), then the
//       hparams (model_file.h; n_vocab first, 51864 or more).
//   Silero VAD model (ggml): the same magic, then int32 model-type length (1..64) and a model type
//       starting "silero" ("silero-16k": tools/convert/convert_vad.py, whisper.cpp's
//       models/convert-silero-vad-to-ggml.py).
//   GGUF: the 4 bytes "GGUF" (ggml's newer container, ggml/docs/gguf.md; whisper.cpp 1.8.5 reads
//       neither Whisper nor VAD models in it).
//   CTranslate2 model.bin (faster-whisper's weights): uint32 binary version 1..6, uint16 length
//       (including the NUL) of the spec name, the name ending "Spec" and a NUL
//       (../shared/reference/ctranslate2_whisper_facts.md; e.g. "WhisperSpec").
//   Empty: 0 bytes.
//
// Messages name the file, the kind found, the kind expected and how to get or convert the right
// one. What else they may show is chosen by ModelFileDetail: a server answering clients about
// files they name uses kKindOnly, which never shows the file's bytes or other paths.
#ifndef GGML_WHISPER_WHISPER_MODEL_KIND_H_
#define GGML_WHISPER_WHISPER_MODEL_KIND_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace whisper {

enum class ModelFileKind {
  kEmpty,        // 0 bytes
  kTooShort,     // 1..3 bytes: no magic to read
  kWhisperGgml,  // whisper.cpp's legacy ggml Whisper model
  kSileroVad,    // a Silero VAD model in the same legacy ggml layout
  kGguf,         // a GGUF file
  kCTranslate2,  // a CTranslate2 model.bin
  kUnknown,      // none of these
};

// Bytes SniffModelFile reads at most (a longer prefix is ignored).
inline constexpr size_t kModelSniffBytes = 64;

// The kind of the file whose first min(size, kModelSniffBytes) bytes are data[0 .. size).
// `size` is the file's size (or any larger prefix); only its being 0 or under 4 matters beyond
// the bytes read. Never fails.
ModelFileKind SniffModelFile(const uint8_t* data, size_t size);

enum class ModelFileDetail {
  kKindOnly,  // the kind and the expected format; `file` as given is the only path shown
  kWithBytes, // also the first 4 bytes (hex, and ASCII when printable) of an unrecognised file,
              // and absolute paths in the CTranslate2 conversion command (the CLI's choice)
};

// OK when the file (data[0 .. size), size its full size or at least kModelSniffBytes of it) is
// of kind `expected` (kWhisperGgml or kSileroVad), or has 1..3 bytes (too few to tell: the
// parser's truncation error names the field). Otherwise an error naming `file`, what it is and
// what was expected: DataLoss for an empty file, InvalidArgument for the other kinds, e.g.
//   "m.bin: a GGUF file (magic "GGUF", ggml's newer format), which this loader does not read:
//    expected a whisper.cpp ggml Whisper model (legacy format, magic 0x67676d6c "ggml") ...".
// An unrecognised file is "bad magic [0x...] at offset 0, expected 0x67676d6c ("ggml")".
absl::Status CheckModelFileKind(absl::string_view file, const uint8_t* data, size_t size,
                                ModelFileKind expected, ModelFileDetail detail);

// CheckModelFileKind on the first kModelSniffBytes bytes of the file at `path`. A file that
// cannot be opened or read, or is not a regular file, is OK here: the loader reports that.
absl::Status CheckModelFileKindAt(const std::string& path, ModelFileKind expected,
                                  ModelFileDetail detail);

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_MODEL_KIND_H_
