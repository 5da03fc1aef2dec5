#include "whisper/batched_transcribe.h"

#include <algorithm>
#include <mutex>
#include <utility>

#include "absl/strings/str_format.h"

namespace whisper {

std::vector<FrameRange> PlanChunks(const std::vector<int>& cuts, int n_frames, int max_frames) {
  std::vector<FrameRange> chunks;
  if (n_frames <= 0) return chunks;
  size_t k = 0;  // the first cut after the chunk's start
  int start = 0;
  while (start < n_frames) {
    while (k < cuts.size() && cuts[k] <= start) ++k;
    // faster-whisper merge_segments: as many stretches as fit in max_frames (greedy); here the
    // last cut within reach, or when none is, the first one after it (the window loop seeks on).
    size_t best = k;
    while (best + 1 < cuts.size() && cuts[best + 1] - start <= max_frames) ++best;
    int end = n_frames;
    if (n_frames - start > max_frames && best < cuts.size() && cuts[best] < n_frames) end = cuts[best];
    chunks.push_back(FrameRange{start, end});
    start = end;
  }
  return chunks;
}

std::vector<FrameRange> ClipChunks(const int* clip_frames, int n_clips, int n_frames, int min_frames) {
  std::vector<FrameRange> chunks;
  for (int k = 0; k < n_clips && clip_frames != nullptr; ++k) {
    const int start = clip_frames[2 * k];
    const int end = std::min(clip_frames[2 * k + 1], n_frames);
    if (start < 0 || end - start < std::max(1, min_frames)) continue;
    chunks.push_back(FrameRange{start, end, end});
  }
  return chunks;
}

BatchedTranscriber::BatchedTranscriber(const SpecialTokens& special, int n_text_ctx,
                                       std::function<const std::string&(Token)> token_text, int n_slots,
                                       int max_align_tokens, int n_audio_ctx) {
  slots_.resize(std::max(1, n_slots));
  for (Slot& s : slots_) {
    s.transcriber = std::make_unique<Transcriber>(special, n_text_ctx, token_text);
    s.word_timestamps = std::make_unique<WordTimestamps>(max_align_tokens, n_audio_ctx);
  }
}

namespace {

// The caller's encoder_begin, one call at a time (the chunks' windows run on several threads).
struct EncoderBeginGate {
  std::mutex mu;
  const TranscribeHooks* hooks = nullptr;
  bool stopped = false;
};

bool GatedEncoderBegin(void* user) {
  auto* g = static_cast<EncoderBeginGate*>(user);
  std::lock_guard<std::mutex> lock(g->mu);
  if (g->stopped) return false;
  if (g->hooks->encoder_begin != nullptr && !g->hooks->encoder_begin(g->hooks->user)) g->stopped = true;
  return !g->stopped;
}

struct RunArgs {
  BatchedTranscriber* self;
  EncoderBeginGate* gate;
};

}  // namespace

absl::Status BatchedTranscriber::Run(DecodeScheduler& sched, const float* mel, int n_frames_mel, int n_frames_audio,
                                     const TranscribeParams& params, const FrameRange* chunks, int n_chunks,
                                     ChunkFn on_chunk, void* user, TranscribeStats* stats) {
  if (sched.n_slots() != static_cast<int>(slots_.size())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "batched transcription: the scheduler has %d slots, the transcriber %d", sched.n_slots(), slots_.size()));
  }
  if (params.n_clips > 0 || params.offset_ms != 0 || params.duration_ms != 0) {
    return absl::InvalidArgumentError(
        "batched transcription: clip timestamps, offset and duration are not supported (the chunks are the clips)");
  }
  if (n_chunks < 0 || (chunks == nullptr && n_chunks > 0)) {
    return absl::InvalidArgumentError(absl::StrFormat("batched transcription: %d chunks", n_chunks));
  }
  for (int c = 0; c < n_chunks; ++c) {
    if (chunks[c].start < 0 || chunks[c].end <= chunks[c].start || chunks[c].end > n_frames_audio) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "batched transcription: chunk %d is frames [%d, %d): need 0 <= start < end <= %d (the audio's frames)", c,
          chunks[c].start, chunks[c].end, n_frames_audio));
    }
  }
  mel_ = mel;
  n_frames_mel_ = n_frames_mel;
  n_frames_audio_ = n_frames_audio;
  params_ = &params;
  chunks_ = chunks;
  n_chunks_ = n_chunks;
  if (results_.size() < static_cast<size_t>(n_chunks)) results_.resize(n_chunks);
  done_.assign(n_chunks, 0);
  next_report_ = 0;
  on_chunk_ = on_chunk;
  user_ = user;
  stats_ = TranscribeStats();
  for (Slot& s : slots_) s.stats = TranscribeStats();
  EncoderBeginGate gate;
  gate.hooks = &params.hooks;
  RunArgs args{this, &gate};
  if (params.hooks.progress != nullptr) params.hooks.progress(params.hooks.user, 0);
  absl::Status st = sched.Run(n_chunks, RunChunk, &args, ChunkDone);
  for (const Slot& s : slots_) {
    stats_.n_windows += s.stats.n_windows;
    stats_.n_fallbacks += s.stats.n_fallbacks;
    stats_.n_no_speech += s.stats.n_no_speech;
  }
  if (stats != nullptr) *stats = stats_;
  if (st.ok() && params.hooks.progress != nullptr) params.hooks.progress(params.hooks.user, 100);
  return st;
}

absl::Status BatchedTranscriber::RunChunk(void* arg, int job, SlotBackend& backend) {
  const RunArgs& a = *static_cast<RunArgs*>(arg);
  BatchedTranscriber& self = *a.self;
  Slot& slot = self.slots_[backend.slot()];
  const TranscribeParams& base = *self.params_;
  TranscribeParams tp = base;
  const int clip[2] = {self.chunks_[job].start, self.chunks_[job].end};
  tp.clip_frames = clip;
  tp.n_clips = 1;
  tp.hear_only_clip = true;
  // No chunk hears another chunk's text (faster-whisper's batched pipeline: each chunk is
  // prompted with the initial prompt only); a chunk's later windows hear its earlier ones' as the
  // sequential loop's do (condition_on_previous_text as asked).
  tp.keep_past = false;
  // One window per chunk of at most a window (faster-whisper's batched pipeline encodes each chunk
  // once); its text after the last timestamp is kept as a segment to the chunk's end.
  tp.one_window_per_clip = true;
  const int window = base.chunk_frames > 0 ? std::min(base.chunk_frames, 3000) : 3000;
  tp.decoding.keep_unclosed_tail = clip[1] - clip[0] <= window;
  // Whisper often ends a full window's decoding seconds before its speech does (leaving it to the
  // next window); with one window per chunk that text would be lost, so eot waits until the last
  // timestamp is within kEotMarginFrames of the speech's end (VAD's, padded 0.4 s).
  constexpr int kEotMarginFrames = 100;
  const int speech_end = std::min(self.chunks_[job].speech_end, clip[1]);
  if (tp.decoding.keep_unclosed_tail && speech_end - kEotMarginFrames > clip[0]) {
    tp.decoding.filter.eot_before_frame = speech_end - kEotMarginFrames - clip[0];
  }
  tp.hooks = TranscribeHooks();
  tp.hooks.user = a.gate;
  tp.hooks.encoder_begin = GatedEncoderBegin;
  if (base.token_timestamps != nullptr) {
    slot.token_timestamps = *base.token_timestamps;  // the energy of the audio, times reset
    tp.token_timestamps = &slot.token_timestamps;
  }
  if (base.word_timestamps != nullptr) {
    slot.word_timestamps->Begin(base.word_timestamps->prepended(), base.word_timestamps->appended());
    tp.word_timestamps = slot.word_timestamps.get();
  }
  TranscribeStats stats;
  SegmentList& out = self.results_[job];
  absl::Status st = slot.transcriber->Run(backend, self.mel_, self.n_frames_mel_, self.n_frames_audio_, tp, &out,
                                          &stats);
  slot.stats.n_windows += stats.n_windows;
  slot.stats.n_fallbacks += stats.n_fallbacks;
  slot.stats.n_no_speech += stats.n_no_speech;
  if (!st.ok()) {
    return absl::Status(st.code(), absl::StrFormat("chunk %d (frames %d .. %d): %s", job, clip[0], clip[1],
                                                   std::string(st.message())));
  }
  return st;
}

void BatchedTranscriber::ChunkDone(void* arg, int job, const absl::Status& status) {
  BatchedTranscriber& self = *static_cast<RunArgs*>(arg)->self;
  if (!status.ok()) return;  // Run returns the failure; later chunks are not reported
  self.done_[job] = 1;
  while (self.next_report_ < self.n_chunks_ && self.done_[self.next_report_]) {
    const int c = self.next_report_++;
    if (self.on_chunk_ != nullptr) self.on_chunk_(self.user_, c, self.results_[c]);
    const TranscribeHooks& h = self.params_->hooks;
    if (h.progress != nullptr) h.progress(h.user, static_cast<int>(100LL * (c + 1) / std::max(1, self.n_chunks_)));
  }
}

}  // namespace whisper
