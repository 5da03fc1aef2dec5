#include "apps/stream/sdl_capture.h"

#include <SDL.h>

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace whisper::stream {

absl::StatusOr<std::unique_ptr<SdlCapture>> SdlCapture::Open(int capture_id, AudioBuffer* out) {
  if (SDL_Init(SDL_INIT_AUDIO) < 0) return absl::UnavailableError(absl::StrCat("SDL_Init: ", SDL_GetError()));
  SDL_SetHintWithPriority(SDL_HINT_AUDIO_RESAMPLING_MODE, "medium", SDL_HINT_OVERRIDE);
  const int n = SDL_GetNumAudioDevices(SDL_TRUE);
  std::fprintf(stderr, "found %d capture devices:\n", n);
  for (int i = 0; i < n; ++i) std::fprintf(stderr, "  - capture device #%d: '%s'\n", i, SDL_GetAudioDeviceName(i, SDL_TRUE));
  if (capture_id >= n) {
    return absl::InvalidArgumentError(absl::StrCat("-c ", capture_id, ": there are ", n, " capture devices"));
  }
  SDL_AudioSpec want, got;
  SDL_zero(want);
  SDL_zero(got);
  want.freq = 16000;
  want.format = AUDIO_F32;
  want.channels = 1;
  want.samples = 1024;
  want.userdata = out;
  want.callback = [](void* user, Uint8* stream, int len) {
    static_cast<AudioBuffer*>(user)->Push(reinterpret_cast<const float*>(stream), len / static_cast<int>(sizeof(float)));
  };
  const char* name = capture_id >= 0 ? SDL_GetAudioDeviceName(capture_id, SDL_TRUE) : nullptr;
  // No allowed changes: SDL converts whatever the device gives to 16 kHz mono float.
  const SDL_AudioDeviceID dev = SDL_OpenAudioDevice(name, SDL_TRUE, &want, &got, 0);
  if (dev == 0) return absl::UnavailableError(absl::StrCat("SDL_OpenAudioDevice: ", SDL_GetError()));
  std::unique_ptr<SdlCapture> c(new SdlCapture());
  c->device_ = dev;
  SDL_PauseAudioDevice(dev, 0);
  return c;
}

SdlCapture::~SdlCapture() {
  if (device_ != 0) SDL_CloseAudioDevice(device_);
  SDL_Quit();
}

}  // namespace whisper::stream
