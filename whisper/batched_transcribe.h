// Long audio transcribed in batches (issue 38 part 2), as faster-whisper 1.2.1's
// BatchedInferencePipeline batches it: the audio is cut into chunks of at most 30 s at speech
// boundaries (VAD), and the chunks are decoded B at a time without conditioning on each other's
// text (DecodeScheduler: B windows share every decoder step). Each chunk is transcribed by the
// window loop (Transcriber over the chunk as one clip) with one_window_per_clip: a chunk of at most
// one window is encoded and decoded once, as faster-whisper's pipeline does, but with timestamps,
// so segments are cut at timestamp tokens, last at most 30 s and end by the chunk's end (a
// timestamp past it is cut there: the next chunk starts there); the text after the last timestamp
// is kept (keep_unclosed_tail) and <|endoftext|> waits until the timestamps reach 1 s before the
// chunk's speech_end (filter.eot_before_frame), so no tail is left for a second window. A longer
// chunk seeks through its windows as the sequential loop does. Word timestamps (DTW) and token
// timestamps work per window.
#ifndef GGML_WHISPER_WHISPER_BATCHED_TRANSCRIBE_H_
#define GGML_WHISPER_WHISPER_BATCHED_TRANSCRIBE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "whisper/decode_scheduler.h"
#include "whisper/segments.h"
#include "whisper/token_timestamps.h"
#include "whisper/tokens.h"
#include "whisper/transcribe.h"
#include "whisper/word_timestamps.h"

namespace whisper {

// Frames [start, end) of a mel (10 ms each).
struct FrameRange {
  int start = 0;
  int end = 0;
  // Where the last stretch VAD called speech in [start, end) ends (frames; 0: unknown). A chunk
  // decoded as one window is not ended (eot) before its timestamps reach 1 s before this.
  int speech_end = 0;
};

// Chunks that cover frames [0, n_frames) in order, cut only at `cuts` (frames, increasing: the
// pauses VAD found), each at most max_frames long, as faster-whisper 1.2.1's merge_segments
// (vad.py) merges speech stretches while they fit chunk_length (greedy: the furthest cut in
// reach). Where no cut lies within max_frames of a chunk's start, the chunk runs to the first cut
// after that (or the end): the window loop then seeks through it as the sequential one does,
// instead of cutting speech mid-word. Unlike faster-whisper, nothing is dropped: audio VAD did not
// call speech is transcribed too (Silero misses the last 27 s of speech of long_speech.flac).
// Cuts outside (0, n_frames) are ignored. Empty for n_frames <= 0.
std::vector<FrameRange> PlanChunks(const std::vector<int>& cuts, int n_frames, int max_frames);

// The chunks of faster-whisper 1.2.1's batched pipeline given clip_timestamps (transcribe.py
// BatchedInferencePipeline.transcribe: each clip is one chunk, in the order given, overlapping or
// not): clip k is frames [clip_frames[2k], clip_frames[2k + 1]) with its end capped to n_frames;
// a clip shorter than min_frames after that (past the audio's end, empty, or ending before it
// starts) is skipped, as the sequential loop skips it. Each chunk's speech_end is its end (the
// caller said the clip is speech). A clip longer than max_frames stays whole (faster-whisper
// keeps its first 30 s only): BatchedTranscriber seeks through its windows.
std::vector<FrameRange> ClipChunks(const int* clip_frames, int n_clips, int n_frames, int min_frames);

class BatchedTranscriber {
 public:
  // n_slots: the scheduler's slots (one Transcriber, token- and word-timestamp state each);
  // max_align_tokens and n_audio_ctx size the word timestamps (InferenceState::MaxAlignTokens).
  // token_text must outlive the object.
  BatchedTranscriber(const SpecialTokens& special, int n_text_ctx, std::function<const std::string&(Token)> token_text,
                     int n_slots, int max_align_tokens, int n_audio_ctx);

  // Called on Run's thread for each chunk in order (chunk 0 first), once its segments and those of
  // every chunk before it are done: the chunk's segments (times in frames of `mel`).
  using ChunkFn = void (*)(void* user, int chunk, const SegmentList& segments);

  // Transcribes chunks[0, n_chunks) of `mel` ([n_mels][n_frames_mel], frames [0, n_frames_audio)
  // real audio) on `sched` (whose n_slots must be this object's), each chunk as one clip of
  // `params` (whose clips, offset and duration must be unset; keep_past is ignored: no chunk hears
  // another chunk's text, while a longer chunk's windows are conditioned on each other's as
  // condition_on_previous_text says) with one window per chunk of at most a window, and
  // hands each chunk's segments to `on_chunk` in order. params.token_timestamps and
  // params.word_timestamps, when set, are the templates (Begin done on the audio) each chunk's
  // own copies start from. Hooks: none are called but progress (per chunk, 0..100) and
  // encoder_begin (before each chunk: false stops, no error). Errors: InvalidArgument for a chunk
  // outside [0, n_frames_audio], clips in params, or a scheduler of another size; the first
  // failing chunk's (the chunks after it are not started).
  absl::Status Run(DecodeScheduler& sched, const float* mel, int n_frames_mel, int n_frames_audio,
                   const TranscribeParams& params, const FrameRange* chunks, int n_chunks, ChunkFn on_chunk,
                   void* user, TranscribeStats* stats);

 private:
  struct Slot {
    std::unique_ptr<Transcriber> transcriber;
    TokenTimestamps token_timestamps;
    std::unique_ptr<WordTimestamps> word_timestamps;
    TranscribeStats stats;
  };
  static absl::Status RunChunk(void* arg, int job, SlotBackend& backend);
  static void ChunkDone(void* arg, int job, const absl::Status& status);

  std::vector<Slot> slots_;
  // The current Run.
  const float* mel_ = nullptr;
  int n_frames_mel_ = 0, n_frames_audio_ = 0;
  const TranscribeParams* params_ = nullptr;
  const FrameRange* chunks_ = nullptr;
  std::vector<SegmentList> results_;  // [n_chunks]
  std::vector<uint8_t> done_;
  int next_report_ = 0;
  int n_chunks_ = 0;
  bool stopped_ = false;
  ChunkFn on_chunk_ = nullptr;
  void* user_ = nullptr;
  TranscribeStats stats_;
};

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_BATCHED_TRANSCRIBE_H_
