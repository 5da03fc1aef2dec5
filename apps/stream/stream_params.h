// Command-line flags of //whisper:stream, whisper.cpp's whisper-stream (examples/stream/stream.cpp
// 1.8.5, whisper_params and whisper_params_parse): the same spellings, defaults and meanings,
// with values checked (whisper-stream's std::stoi accepts "3s" and exits 0 on an unknown flag).
#ifndef GGML_WHISPER_APPS_STREAM_STREAM_PARAMS_H_
#define GGML_WHISPER_APPS_STREAM_STREAM_PARAMS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace whisper::stream {

struct StreamParams {
  int n_threads = 0;       // -t: 0 = min(4, hardware threads), whisper-stream's default
  int step_ms = 3000;      // --step: audio per step, ms; <= 0 selects the energy-VAD mode
  int length_ms = 10000;   // --length: longest window transcribed, ms (at least step, at most 30 s)
  int keep_ms = 200;       // --keep: audio of a closed window carried into the next, ms (<= step)
  int capture_id = -1;     // -c: SDL2 capture device (builds with SDL2 only); -1 = default device
  int max_tokens = 0;      // -mt: tokens per window, 0 = no limit (whisper-stream resets its 32 to 0)
  int audio_ctx = 0;       // -ac: encoder positions, 0 = the model's n_audio_ctx
  int beam_size = -1;      // -bs: > 1 beam search, else greedy
  float vad_thold = 0.6f;  // -vth: VAD mode: the last second is silence below this x mean energy
  float freq_thold = 100.0f;  // -fth: VAD mode: high-pass cut-off, Hz
  bool translate = false;     // -tr
  bool no_fallback = false;   // -nf: no temperature fallback
  bool print_special = false; // -ps
  bool keep_context = false;  // -kc: a closed window's tokens prompt the next one
  bool save_audio = false;    // -sa: also write the input to YYYYmmddHHMMSS.wav
  bool flash_attn = true;     // -fa / -nfa: fused attention in the encoder (whisper-stream's default)
  // -rt: real-time input on stdin too: when transcription falls behind, the oldest audio is
  // dropped (as from a microphone) instead of the reading waiting (see ReadsLossless).
  bool real_time = false;
  std::string language = "en";  // -l
  std::string model = "models/ggml-tiny.en.bin";  // -m
  std::string fname_out;        // -f: append each committed line to this text file
  // --compute-type: faster-whisper's compute_type (the CLI's flag: whisper_ggml_set_compute_type;
  // int8* -> Q8_0 weights converted at load, float16, float32, default/auto: as stored). Checked
  // by the parser.
  std::string compute_type = "default";
  // --input: "-" (raw 16 kHz mono s16le PCM on stdin; the default) or "sdl" (the microphone,
  // in builds with SDL2: bazel build --define=stream_sdl2=1 //whisper:stream).
  std::string input = "-";
  bool help = false;
  std::vector<std::string> ignored_flags;  // -ng: the GPU flag, accepted with a notice
};

// Parses argv[1..argc). Errors (InvalidArgument naming the flag): unknown flag, missing or
// malformed value, out of range (--length (0, 30000] and >= --step when --step > 0, --keep
// [0, step], -vth [0, 1], -fth >= 0, -bs <= 8, -mt >= 0, -ac >= 0, -t [1, 512]), -tdrz (not
// implemented), --input other than "-" or "sdl", --compute-type not one of
// whisper_ggml_set_compute_type's names (its message).
absl::StatusOr<StreamParams> ParseStreamParams(int argc, const char* const* argv);

// How the input is read, from the flags and fstat(0)'s st_mode (`stdin_mode`):
// - true (lossless): stdin that is a pipe (S_ISFIFO) or a regular file (S_ISREG), without -rt.
//   It is read with back-pressure: when the transcriber is behind, the reader waits (and so does
//   the pipe's writer); nothing is dropped, and the audio is transcribed in steps of --step ms
//   whatever the feeding speed.
// - false (real time): the microphone (--input sdl), -rt, or stdin of another kind (a socket, a
//   character device). When the transcriber falls behind by more than --length ms, the oldest
//   audio is dropped with a warning (whisper-stream's behaviour: a live source cannot wait).
bool ReadsLossless(const StreamParams& p, unsigned stdin_mode);

std::string StreamUsage(const char* argv0);

}  // namespace whisper::stream

#endif  // GGML_WHISPER_APPS_STREAM_STREAM_PARAMS_H_
