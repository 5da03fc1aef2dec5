// whisper-stream's model of work (whisper.cpp 1.8.5 examples/stream/stream.cpp) over the C API,
// as a loop a program drives one step at a time.
//
// Sliding-window mode (--step > 0): each step waits for --step ms of new audio, transcribes it
// together with the audio of the open window (up to --length + --keep ms) as one segment
// (whisper-stream's single_segment: one decoder pass per step), and reprints the running line
// ("\33[2K\r" + text). The segment's timestamp tokens split its text into pieces. Every
// max(1, length / step - 1) steps the window closes: its pieces but the last (which the next audio
// may still change) are committed (a newline, and the line appended to -f FILE), the audio from
// the last committed piece's end opens the next window (--keep ms when all of it is committed),
// and with -kc the committed tokens prompt the next one.
// Energy-VAD mode (--step <= 0): every 2 s of audio, the last 2 s are checked with whisper.cpp's
// vad_simple; when the last second is quiet against them (speech ended), the audio since the last
// transcription (at most --length ms) is transcribed with timestamps and printed between
// "### Transcription N START | t0 = .. ms | t1 = .. ms" and "### Transcription N END" lines.
//
// Input: a live source (an AudioBuffer that drops, Overflow::kDropOldest) is taken as it
// arrives: each step takes all the audio that arrived since the last one. A source that waits
// (Overflow::kBlock: a pipe or a file, read with back-pressure) is taken in steps of exactly
// --step ms (2 s in the VAD mode), what a live run on a machine that keeps up takes: the same
// input then gives the same text at any feeding speed and on any machine, and nothing is dropped.
//
// Differences from whisper-stream: times are stream time (samples consumed), not wall-clock time;
// audio that arrives while a step runs is kept (up to --length ms; past it, the oldest is dropped
// with a warning) where whisper-stream keeps only the newest --step ms; the VAD mode transcribes
// only audio it has not transcribed before; the high-pass filter of the VAD is a first-order RC
// filter (whisper.cpp's in-place loop reduces to a constant gain, which the energy ratio cancels);
// at the end of the input the open window is transcribed and committed.
//
// After the first steps (warm-up: the state's buffers and the stdio buffers), Step makes no heap
// allocation.
#ifndef GGML_WHISPER_APPS_STREAM_STREAM_TRANSCRIBER_H_
#define GGML_WHISPER_APPS_STREAM_STREAM_TRANSCRIBER_H_

#include <cstdint>
#include <cstdio>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "apps/stream/audio_buffer.h"
#include "apps/stream/stream_params.h"
#include "whisper/whisper.h"

namespace whisper::stream {

// whisper.cpp's vad_simple (examples/common.cpp): true when the mean |x| of the last `last_ms`
// of `pcm` is below vad_thold x the mean |x| of all of it (speech has ended), after a
// first-order high-pass filter at freq_thold Hz (none when freq_thold <= 0). False when `pcm` is
// not longer than last_ms. Filters `pcm` in place. `pcm`: ne = [n] samples at sample_rate Hz.
bool VadSimple(float* pcm, int n, int sample_rate, int last_ms, float vad_thold, float freq_thold);

// Buffer sizes (samples) for a StreamParams: the capture ring the transcriber takes from.
int CaptureCapacity(const StreamParams& p);

class StreamTranscriber {
 public:
  // `ctx` and `in` must outlive the transcriber; `out` receives the printed text (stdout in the
  // program); `text_file` (may be null) receives committed lines. p.n_threads must be >= 1.
  StreamTranscriber(whisper_context* ctx, whisper_state* state, const StreamParams& p, AudioBuffer* in, FILE* out,
              FILE* text_file);

  // One step (see the top of this file). Returns true while there is more to do, false once the
  // input is closed and its audio transcribed and committed.
  // Errors: Internal with the library's message when whisper_full fails (for a real model it
  // does not); the caller may stop or go on.
  absl::StatusOr<bool> Step();

  int64_t dropped_samples() const { return dropped_; }
  int64_t consumed_samples() const { return consumed_; }  // taken from the input (not dropped)
  int steps() const { return n_iter_; }
  int commits() const { return n_commits_; }
  // Of those, commits made because a late step brought more audio than the window had room for.
  int overflow_commits() const { return n_overflow_commits_; }

 private:
  // True when the input waits for us (see the top of this file): fixed-size steps.
  bool Paced() const { return in_->overflow() == AudioBuffer::Overflow::kBlock; }
  absl::Status Transcribe(const float* x, int n, bool vad_mode);
  absl::StatusOr<bool> SlidingStep();
  absl::StatusOr<bool> VadStep();
  // Prints pieces [n_committed_, n_pieces) of the last transcription as a committed line, opens
  // the next window with the window's samples from carry_from on, and leaves the rest of the
  // transcription's text on screen as the running line.
  void Commit(int n_pieces, int carry_from);
  // Splits the last sliding-mode transcription (one segment per window) into pieces at its
  // timestamp tokens, as whisper.cpp splits segments without single_segment: each piece is the
  // text before a timestamp, with that timestamp as its end; text after the last timestamp (cut
  // off by the window's end) is a last piece ending at the segment's end.
  void SplitPieces();
  // Prints the text tokens of pieces [begin, end).
  void PrintPieces(int begin, int end, FILE* f);
  void ClearLine();

  whisper_context* ctx_;
  whisper_state* state_;
  StreamParams p_;
  AudioBuffer* in_;
  FILE* out_;
  FILE* text_file_;
  int n_step_, n_len_, n_keep_, n_new_line_;
  std::vector<float> new_;     // samples of this step
  std::vector<float> window_;  // the open window: kept + new audio
  int window_n_ = 0;
  std::vector<float> old_;     // audio carried into the next step
  int old_n_ = 0;
  std::vector<float> scratch_;  // VAD: the filtered copy
  std::vector<whisper_token> prompt_;
  struct Piece {
    int seg;                // segment of the last transcription
    int tok_begin, tok_end;  // its tokens [tok_begin, tok_end)
    int64_t t1;             // end, samples from the window's start
  };
  std::vector<Piece> pieces_;  // of the last transcription; capacity n_text_ctx, set once
  int64_t consumed_ = 0;  // samples taken from the input (stream time)
  int64_t dropped_ = 0;
  int n_iter_ = 0;
  int n_commits_ = 0;
  int n_overflow_commits_ = 0;  // commits forced by a late step's audio overflowing the window
  bool line_open_ = false;  // a running line was printed and not committed
  int n_current_ = 0;       // pieces of this step's transcription (0: none this step)
  int n_committed_ = 0;     // of those, committed
};

}  // namespace whisper::stream

#endif  // GGML_WHISPER_APPS_STREAM_STREAM_TRANSCRIBER_H_
