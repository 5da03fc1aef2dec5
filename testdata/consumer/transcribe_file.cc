// A consumer's C++ program: audio from a file through @ggml_whisper//apps/common:audio (any format
// libsndfile reads, resampled to 16 kHz mono), then whisper.cpp's C API from
// @ggml_whisper//whisper. Greedy decoding with whisper.cpp's defaults, language "en", printed as
// compat.c prints segments (times in 10 ms units), so tools/test_consumer.sh compares them with
// whisper.cpp 1.8.5's output on the same file.
// Usage: transcribe_file MODEL AUDIO
#include <cstdio>
#include <vector>

#include "whisper.h"
#include "apps/common/audio.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s MODEL AUDIO\n", argv[0]);
    return 2;
  }
  // Samples: float in [-1, 1], 16 kHz mono; an error names the file and the field at fault.
  absl::StatusOr<std::vector<float>> pcm = whisper::LoadAudio16kMono(argv[2]);
  if (!pcm.ok()) {
    std::fprintf(stderr, "transcribe_file: %s\n", pcm.status().ToString().c_str());
    return 1;
  }
  whisper_context* ctx = whisper_init_from_file_with_params(argv[1], whisper_context_default_params());
  if (ctx == nullptr) return 1;  // the log callback (stderr by default) said why
  whisper_full_params p = whisper_full_default_params(WHISPER_SAMPLING_GREEDY);
  p.language = "en";
  p.no_context = true;
  p.print_progress = false;
  p.print_timestamps = false;
  int rc = whisper_full(ctx, p, pcm->data(), static_cast<int>(pcm->size()));
  for (int i = 0; rc == 0 && i < whisper_full_n_segments(ctx); ++i) {
    std::printf("segment %d t0 %lld t1 %lld text \"%s\"\n", i,
                static_cast<long long>(whisper_full_get_segment_t0(ctx, i)),
                static_cast<long long>(whisper_full_get_segment_t1(ctx, i)), whisper_full_get_segment_text(ctx, i));
  }
  whisper_free(ctx);
  return rc == 0 ? 0 : 1;
}
