// Runs the //whisper:stream binary on audio fed to its stdin at real-time pace (or as fast as it
// reads), recording when each piece of its stdout arrived: for the end-to-end tests and the
// latency benchmark.
#ifndef GGML_WHISPER_APPS_STREAM_STREAM_HARNESS_H_
#define GGML_WHISPER_APPS_STREAM_STREAM_HARNESS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace whisper::stream {

struct StdoutPiece {
  double t = 0;  // seconds since the first audio byte was written
  std::string bytes;
};

struct PacedRun {
  std::vector<StdoutPiece> out;
  int exit_code = -1;
  double wall_s = 0;  // from the first audio byte to the exit
  double input_done_s = 0;  // from the first audio byte to the last one written (stdin closed)
};

// Starts `binary` with `args`, writes `audio` (16 kHz mono, ne = [n]) to its stdin as s16le in
// 20 ms chunks at `speed` x real time (1 = real time; <= 0: no pacing, each chunk as soon as the
// pipe takes it), closes stdin, and collects stdout until the process exits. stderr goes to
// `stderr_path` ("" = discarded).
// Errors: Internal when the process cannot be started or waited for.
absl::StatusOr<PacedRun> RunPaced(const std::string& binary, const std::vector<std::string>& args,
                                  const std::vector<float>& audio, double speed, const std::string& stderr_path);

// The program's last stderr line, "audio: N samples (S s) read, N processed, N dropped (M ms)".
struct AudioCounts {
  long long read = -1, processed = -1, dropped = -1;  // samples
};
// Errors: NotFound when `stderr_text` has no such line.
absl::StatusOr<AudioCounts> ParseAudioCounts(const std::string& stderr_text);

// What a terminal shows after `pieces`, as text: committed lines, then the running line (the text
// after the last "\r" of the unfinished line). Escape sequences "\33[2K" are removed.
std::string VisibleText(const std::vector<StdoutPiece>& pieces, size_t n_pieces);

}  // namespace whisper::stream

#endif  // GGML_WHISPER_APPS_STREAM_STREAM_HARNESS_H_
