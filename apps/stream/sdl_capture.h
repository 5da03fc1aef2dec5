// Microphone input for //whisper:stream through SDL2 (whisper-stream's capture, examples/
// common-sdl.cpp audio_async): built only with `--define=stream_sdl2=1` and Debian's
// libsdl2-dev installed. SDL converts the device's format and rate to 16 kHz mono float and calls
// back on its audio thread, which pushes the samples into an AudioBuffer.
#ifndef GGML_WHISPER_APPS_STREAM_SDL_CAPTURE_H_
#define GGML_WHISPER_APPS_STREAM_SDL_CAPTURE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "apps/stream/audio_buffer.h"

namespace whisper::stream {

class SdlCapture {
 public:
  // Opens capture device `capture_id` (an index of SDL_GetAudioDeviceName(i, SDL_TRUE); -1 = the
  // default device), lists the devices on stderr, and starts capturing into `out`, which must
  // outlive the capture. Errors: Unavailable with SDL's message when SDL cannot start or the
  // device cannot be opened; InvalidArgument for a capture_id past the device count.
  static absl::StatusOr<std::unique_ptr<SdlCapture>> Open(int capture_id, AudioBuffer* out);
  ~SdlCapture();

 private:
  SdlCapture() = default;
  unsigned device_ = 0;
};

}  // namespace whisper::stream

#endif  // GGML_WHISPER_APPS_STREAM_SDL_CAPTURE_H_
