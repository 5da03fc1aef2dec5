// OpenAI Whisper's compression ratio of a window's text (openai/whisper whisper/utils.py
// compression_ratio; faster-whisper transcribe.py get_compression_ratio):
//   len(text_bytes) / len(zlib.compress(text_bytes))
// with zlib's defaults as Python's zlib.compress uses them: level Z_DEFAULT_COMPRESSION (6),
// deflate, windowBits 15 (the zlib container: 2-byte header, 4-byte Adler-32), memLevel 8,
// Z_DEFAULT_STRATEGY. A text stuck in a repetition loop compresses well: OpenAI's transcribe and
// faster-whisper fall back to the next temperature above 2.4.
#ifndef GGML_WHISPER_WHISPER_COMPRESSION_RATIO_H_
#define GGML_WHISPER_WHISPER_COMPRESSION_RATIO_H_

#include <zlib.h>

#include <cstddef>
#include <memory>

#include "absl/strings/string_view.h"

namespace whisper {

class CompressionRatio {
 public:
  // Sets up one deflate stream whose state (about 270 KB) lives in an arena allocated here, so
  // Of() makes no heap allocation: the stream is reset, not re-created, per call.
  CompressionRatio();
  ~CompressionRatio();
  CompressionRatio(const CompressionRatio&) = delete;
  CompressionRatio& operator=(const CompressionRatio&) = delete;

  // len(text) / len(zlib.compress(text)): 0 for empty text (Python: 0 / 8). Returns -1 if zlib
  // reports an error (it does not for in-memory input once set up).
  double Of(absl::string_view text);

 private:
  static void* Alloc(void* opaque, unsigned items, unsigned size);
  static void Free(void* opaque, void* address);

  std::unique_ptr<unsigned char[]> arena_;
  size_t arena_used_ = 0;
  z_stream stream_{};
  bool ready_ = false;
};

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_COMPRESSION_RATIO_H_
